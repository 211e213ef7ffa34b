"""Lazy declarations of every built-in registry entry (imports nothing heavy)."""

from __future__ import annotations

from vreason.core.registry import benchmarks, declare_package, generators, judges

# one line per benchmark package: its protocols, scorers, video layout, frame presets and judge templates
# (declared in the package's ``__init__``, see docs/new_protocol.md)
for _package in ("synth", "rise", "ruler", "mmecof", "pai", "tivibench"):
    declare_package(f"vreason.protocols.{_package}")

for _name in ("oracle", "static", "shortcut", "random", "noise", "reversed"):
    generators.declare(_name, "vreason.synth.models:BUILTIN_MODELS",
                       summary="built-in suite model (synth only)")
generators.declare("diffusers", "vreason.generate.diffusers_gen:DiffusersGenerator", extra="gen",
                   summary="kind: a local diffusers pipeline folder (diffusers:/models/Wan2.2-TI2V-5B-Diffusers)")
generators.declare("cmd", "vreason.generate.cmd_gen:CmdGenerator",
                   summary="kind: any executable given a JSON request file (cmd:./my_model.sh)")
generators.declare("sora", "vreason.generate.sora:SoraGenerator",
                   summary="OpenAI videos API (Sora 2): sora:sora-2; key OPENAI_API_KEY")
generators.declare("veo", "vreason.generate.veo:VeoGenerator",
                   summary="Google Veo via the Gemini API: veo:veo-3.1-generate-preview; key GEMINI_API_KEY")
generators.declare("http", "vreason.generate.http_job:HttpJobGenerator",
                   summary="any create → poll → download HTTP job API, configured by a YAML file: http:api.yaml")

judges.declare("openai", "vreason.judge.openai_backend:OpenAIJudge",
               summary="any OpenAI-compatible chat-completions endpoint (OpenAI, Gemini, vLLM, Ollama…)")
judges.declare("transformers", "vreason.judge.hf_backend:TransformersJudge", extra="deep",
               summary="a local Qwen2-VL / Qwen2.5-VL checkpoint folder")
judges.declare("scripted", "vreason.judge.scripted:ScriptedJudge",
               summary="replies from a file or list (tests, dry runs)")
judges.declare("mock", "vreason.judge.mock:MockJudge",
               summary="offline made-up replies in every template's format: mock or mock:quality=Q,seed=N")
judges.declare("suite", "vreason.synth.answerer:SuiteAnswerer",
               summary="the built-in suite's QA answerer: scripted questions answered by their predicates")

def protocol_needs(cls: object) -> str:
    """What a protocol needs beyond the core install, from its declarations (``Protocol.requires``):
    ``core`` when nothing, else ``core; ocr for …; deep + local weights for …``."""
    reqs = getattr(cls, "requires", ()) or ()
    parts = [r.describe() + (" (optional)" if r.optional else "") for r in reqs]
    return "; ".join(["core", *parts])


def protocol_judges(cls: object) -> str:
    """The judge roles a run with the default options needs (``Protocol.judge_roles``), for ``vreason list``."""
    roles_of = getattr(cls, "judge_roles", None)
    model = getattr(cls, "options_model", None)
    if not callable(roles_of):
        return "–"
    try:
        roles = roles_of(model() if model is not None else None)
    except Exception:  # noqa: BLE001 - an options model that needs values: the roles depend on them
        return "depends on options"
    text = ", ".join(dict.fromkeys(roles)) + " (--judge)" if roles else "none"
    note = getattr(cls, "judge_note", "")
    return f"{text}; {note}" if note else text


def benchmarks_table():
    """The ``vreason list`` table of protocols: what each needs beyond the core install (its declared
    extras and weights) and the judge roles its default options need."""
    from rich.markup import escape
    from rich.table import Table

    t = Table(title="benchmarks (extras: pip install 'vreason[EXTRA]')")
    for col in ("name", "needs", "judge", "what"):
        t.add_column(col, overflow="fold")
    for e in benchmarks.entries():
        cls = benchmarks.get(e.name)
        t.add_row(e.name, escape(protocol_needs(cls)), escape(protocol_judges(cls)), escape(e.summary))
    return t
