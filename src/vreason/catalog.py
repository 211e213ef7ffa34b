"""Lazy declarations of every built-in registry entry (imports nothing heavy)."""

from __future__ import annotations

from vreason.core.registry import benchmarks, generators, judges, scorers

benchmarks.declare("synth", "vreason.protocols.synth:SynthProtocol",
                   summary="Built-in procedurally generated, verifiable suite (offline)")
benchmarks.declare("rise", "vreason.protocols.rise:RiseProtocol",
                   summary="RISE-Video: RA/TC/PR/VQ judged metrics, maze & symmetry verifiers")
benchmarks.declare("ruler", "vreason.protocols.ruler:RulerProtocol",
                   summary="RULER-Bench: checklist judged Good/Medium/Poor over four metrics")
benchmarks.declare("mmecof", "vreason.protocols.mmecof:MmeCofProtocol",
                   summary="MME-CoF-Pro: per-step Reasoning Score under hint settings")
benchmarks.declare("pai-g", "vreason.protocols.pai_g:PaiGProtocol",
                   summary="PAI-Bench-G: VBench quality dimensions + yes/no domain questions (judge)")
benchmarks.declare("pai-u", "vreason.protocols.pai_u:PaiUProtocol",
                   summary="PAI-Bench-U: multiple-choice video understanding; the model under test is --judge")
benchmarks.declare("pai-c", "vreason.protocols.pai_c:PaiCProtocol",
                   summary="PAI-Bench-C: conditional generation fidelity, quality and diversity")
benchmarks.declare("tivibench", "vreason.protocols.tivibench:TiviBenchProtocol",
                   summary="TiViBench: 24 task types, programmatic checks + VLM QA, Pass@1 / Pass@5")

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
judges.declare("suite", "vreason.judge.suite_answerer:SuiteAnswerer",
               summary="the built-in suite's QA answerer: scripted questions answered by their predicates")

for _name, _target, _what in (
    ("synth-verifier", "vreason.synth.scorer:SynthVerifierScorer", "synth: the family's programmatic verifier"),
    ("rise_ra", "vreason.protocols.rise_scorers:RiseReasoningJudge", "RISE: Reasoning Alignment (judge)"),
    ("rise_puzzle", "vreason.protocols.rise_scorers:RisePuzzleVerifier", "RISE: maze / symmetry verifier"),
    ("rise_tc", "vreason.protocols.rise_scorers:RiseTemporalConsistency", "RISE: Temporal Consistency 1–5"),
    ("rise_pr", "vreason.protocols.rise_scorers:RisePhysicalRationality", "RISE: Physical Rationality 1–5"),
    ("rise_vq", "vreason.protocols.rise_scorers:RiseVisualQuality", "RISE: Visual Quality 1–3"),
    ("ruler_checklist", "vreason.protocols.ruler:RulerChecklistScorer", "RULER: checklist Good/Medium/Poor"),
    ("mmecof_rs", "vreason.protocols.mmecof:MmeCofStepScorer", "MME-CoF-Pro: per-step Reasoning Score"),
    ("mmecof_gq", "vreason.protocols.mmecof:MmeCofQualityScorer", "MME-CoF-Pro: generation quality"),
    ("pai_g_quality", "vreason.protocols.pai_g_measure:PaiGQualityScorer", "PAI-Bench-G: quality dimensions"),
    ("pai_g_domain", "vreason.protocols.pai_g:PaiGDomainScorer", "PAI-Bench-G: yes/no domain questions (judge)"),
    ("pai_u_mcq", "vreason.protocols.pai_u:PaiUMcqScorer", "PAI-Bench-U: multiple-choice answer (model = judge)"),
    ("pai_c_fidelity", "vreason.protocols.pai_c_scorers:PaiCFidelityScorer", "PAI-C: blur SSIM, Canny F1"),
    ("pai_c_depth", "vreason.protocols.pai_c_scorers:PaiCDepthScorer", "PAI-C: depth si-RMSE"),
    ("pai_c_seg", "vreason.protocols.pai_c_scorers:PaiCSegScorer", "PAI-C: segmentation mIoU / recall"),
    ("pai_c_dover", "vreason.protocols.pai_c_scorers:PaiCDoverScorer", "PAI-C: DOVER technical score"),
    ("pai_c_diversity", "vreason.protocols.pai_c_scorers:PaiCDiversityScorer", "PAI-C: Diversity-LPIPS"),
    ("tivibench_check", "vreason.protocols.tivibench_scorers:TiviCheckScorer",
     "TiViBench: the metric family's programmatic check"),
    ("tivibench_qa", "vreason.protocols.tivibench_scorers:TiviQaScorer", "TiViBench: VLM QA, all answers right"),
):
    scorers.declare(_name, _target, summary=_what)


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
