"""Lazy declarations of every built-in registry entry (imports nothing heavy)."""

from __future__ import annotations

from vreason.registry import aggregators, benchmarks, generators, judges

benchmarks.declare("synth", "vreason.protocols.synth:SynthProtocol",
                   summary="Built-in procedurally generated, verifiable suite (offline)")
benchmarks.declare("rise", "vreason.protocols.rise:RiseProtocol",
                   summary="RISE-Video: RA/TC/PR/VQ judged metrics, maze & symmetry verifiers")
benchmarks.declare("ruler", "vreason.protocols.ruler:RulerProtocol",
                   summary="RULER-Bench: checklist judged Good/Medium/Poor over four metrics")
benchmarks.declare("mmecof", "vreason.protocols.mmecof:MmeCofProtocol",
                   summary="MME-CoF-Pro: per-step Reasoning Score under hint settings")

for _name in ("oracle", "static", "shortcut", "random", "noise", "reversed"):
    generators.declare(_name, "vreason.synth.models:BUILTIN_MODELS",
                       summary="built-in suite model (synth only)")

judges.declare("openai", "vreason.judge.openai_backend:OpenAIJudge",
               summary="any OpenAI-compatible chat-completions endpoint (OpenAI, Gemini, vLLM, Ollama…)")
judges.declare("transformers", "vreason.judge.hf_backend:TransformersJudge", extra="deep",
               summary="a local Qwen2-VL / Qwen2.5-VL checkpoint folder")
judges.declare("scripted", "vreason.judge.scripted:ScriptedJudge",
               summary="replies from a file or list (tests, dry runs)")

aggregators.declare("synth", "vreason.aggregate.synth_tables:synth_tables",
                    summary="built-in suite tables: pass rate / score with CIs, Pass@k, charts")
