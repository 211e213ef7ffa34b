"""Prompt variants in a run: generate each model's videos from another prompt (e.g. VideoTPO's) and report
the paired difference against the original prompts.

``vreason run P --models M --prompts FILE --prompt-variants default,videotpo`` reads ``FILE`` (JSONL:
``sample_id``, ``variant``, ``prompt`` — what ``vreason tpo`` writes), adds each prompt to its sample's
``prompt_variants``, and runs every model once per variant: the variant ``default`` under the model's own
name, any other as ``<model>_<variant>``. Scorers always see the sample's original prompt; only the
generator gets the variant. The report gains a table of paired differences (variant − default) over the
(sample, seed) units both have, per metric, with a 95% bootstrap interval.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from vreason.core.errors import ConfigError
from vreason.core.records import Sample, check_safe_id

DEFAULT = "default"


@dataclass(frozen=True)
class VariantModel:
    run_name: str
    base: str
    variant: str


def read_prompts(path: str) -> dict[str, dict[str, str]]:
    """``sample_id → {variant: prompt}`` from a JSONL file; a malformed line names the line."""
    table: dict[str, dict[str, str]] = {}
    try:
        fh = open(path, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"--prompts {path}: {exc.strerror or exc}") from None
    with fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                sid, variant, prompt = str(row["sample_id"]), str(row["variant"]), row["prompt"]
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise ConfigError(f"--prompts {path}:{n}: expected a JSON object with sample_id, variant, prompt "
                                  f"({type(exc).__name__}: {exc})") from None
            if not isinstance(prompt, str) or not prompt.strip():
                raise ConfigError(f"--prompts {path}:{n}: empty prompt for {sid}")
            table.setdefault(sid, {})[variant] = prompt
    return table


def apply_prompts(samples: list[Sample], table: dict[str, dict[str, str]]) -> int:
    """Add the file's prompts to the samples' ``prompt_variants``; returns how many were added."""
    added = 0
    for s in samples:
        for variant, prompt in table.get(s.id, {}).items():
            s.prompt_variants[variant] = prompt
            added += 1
    return added


def expand_models(models: list[str], variants: list[str]) -> list[VariantModel]:
    """Every model once per variant (``default`` keeps the model's name)."""
    if not variants:
        variants = [DEFAULT]
    out = []
    for m in models:
        for v in variants:
            name = m if v == DEFAULT else check_safe_id(f"{m}_{v}", "model name")
            out.append(VariantModel(name, m, v))
    names = [vm.run_name for vm in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ConfigError(f"--prompt-variants: run model names collide: {', '.join(dup)}")
    return out


def prompt_sample(sample: Sample, variant: str) -> Sample | None:
    """The sample as the generator sees it under ``variant`` (``None``: the sample has no such prompt)."""
    if variant == DEFAULT:
        return sample
    if variant not in sample.prompt_variants:
        return None
    return sample.model_copy(update={"prompt": sample.prompt_variants[variant]})


def paired_variant_table(scores: pd.DataFrame, pairs: list[dict[str, str]], *, seed: int = 0) -> pd.DataFrame:
    """Paired differences (variant − default) per base model, variant and metric over the (sample, seed)
    units scored ok under both: the mean of each side, the mean difference and its 95% bootstrap CI. The
    value compared is ``passed`` (as 0/1) when the metric has it, else ``normalized``, else ``value``."""
    from vreason.aggregate.bootstrap import paired_delta_ci

    cols = ["model", "variant", "metric", "n_pairs", "default", "with_variant", "delta", "ci_low", "ci_high"]
    if scores.empty or not pairs:
        return pd.DataFrame(columns=cols)
    ok = scores[scores["status"] == "ok"].copy()
    ok["_v"] = [float(p) if p is not None and not (isinstance(p, float) and np.isnan(p)) else
                (n if pd.notna(n) else v) for p, n, v in zip(ok["passed"], ok["normalized"], ok["value"], strict=True)]
    rows = []
    for pair in pairs:
        a = ok[ok["model"] == pair["run_name"]]
        b = ok[ok["model"] == pair["base"]]
        for metric in sorted(set(a["metric"]) & set(b["metric"])):
            ka = a[a["metric"] == metric].groupby(["sample_id", "seed"])["_v"].mean()
            kb = b[b["metric"] == metric].groupby(["sample_id", "seed"])["_v"].mean()
            both = ka.index.intersection(kb.index)
            if not len(both):
                continue
            x, y = ka.loc[both].to_numpy(float), kb.loc[both].to_numpy(float)
            mean, lo, hi = paired_delta_ci(x, y, seed=seed)
            rows.append([pair["base"], pair["variant"], metric, len(both), float(y.mean()), float(x.mean()),
                         mean, lo, hi])
    return pd.DataFrame(rows, columns=cols)
