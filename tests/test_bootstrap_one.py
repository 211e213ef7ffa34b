"""Pins every bootstrap call site's output (issue 23 item 3a: one bootstrap module, numbers unchanged).

The pinned digests were recorded with the code *before* the bootstrap code was gathered into
:mod:`vreason.aggregate.bootstrap` (each site then had its own resampling loop); the refactor must
reproduce them bit for bit. Each digest is a SHA-256 over the exact ``repr`` of every float the site
returns (``repr`` round-trips a float exactly), so any change of resampling order, seed use or
quantile rule fails here.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pandas as pd
import pytest


def _flat(x) -> list[str]:
    if isinstance(x, pd.DataFrame):
        return [repr(list(x.columns))] + [r for row in x.itertuples(index=False) for v in row for r in _flat(v)]
    if isinstance(x, dict):
        return [r for k in sorted(x, key=str) for r in [repr(k), *_flat(x[k])]]
    if isinstance(x, np.ndarray):
        return [r for v in x.ravel().tolist() for r in _flat(v)]
    if isinstance(x, (tuple, list)):
        return [r for v in x for r in _flat(v)]
    if isinstance(x, (float, np.floating)):
        v = float(x)
        return ["nan" if math.isnan(v) else repr(v)]
    return [repr(x)]


def digest(x) -> str:
    return hashlib.sha256("|".join(_flat(x)).encode()).hexdigest()[:16]


RNG = np.random.default_rng(12345)
VALUES = RNG.normal(0.5, 0.3, 40)
VALUES[[3, 17]] = np.nan
CLUSTERS = np.repeat([f"s{i}" for i in range(14)], [3, 2, 4, 3, 1, 3, 2, 3, 4, 2, 3, 3, 4, 3])
BIG = RNG.uniform(0, 1, 2500)  # 2500 × 2000 resample cells > one chunk: the chunked path


def _ruler_inst() -> pd.DataFrame:
    r = np.random.default_rng(7)
    rows = []
    for model in ("m1", "m2"):
        for cat, n in (("science", 6), ("game", 5), ("vision rule", 4)):
            for i in range(n):
                v = {c: float(r.uniform(0, 100)) for c in ("IF", "VC", "VF", "RC")}
                if cat == "vision rule":
                    v["IF"] = np.nan
                if i == 2:
                    v["VF"] = np.nan
                avg = float(np.nanmean(list(v.values())))
                rows.append({"model": model, "sample_id": f"{cat}{i}", "category": cat, "task": "t",
                             "mode": ("t2v", "i2v")[i % 2], **v, "Avg": avg})
    return pd.DataFrame(rows)


def _mmecof_inst() -> pd.DataFrame:
    r = np.random.default_rng(9)
    rows = []
    for model in ("m1", "m2"):
        for cat, n in (("a", 5), ("b", 4), ("c", 3)):
            for i in range(n):
                for hint in ("none", "text", "visual"):
                    rows.append({"model": model, "sample_id": f"{cat}{i}", "category": cat, "hint": hint,
                                 "has_visual_hint": i % 2 == 0, "RS": float(r.uniform(0, 4)),
                                 "Avg": float(r.uniform(0, 4))})
    return pd.DataFrame(rows)


def _sites() -> dict:
    from vreason.aggregate.bootstrap import bootstrap_ci, paired_delta_ci, percentile_ci
    from vreason.aggregate.bootstrap import stratified_replicates as category_replicates
    from vreason.human.agreement import _bootstrap
    from vreason.human.ratings import Comparison, fit_ratings
    from vreason.protocols.mmecof.tables import hint_deltas
    from vreason.protocols.pai.g.tables import joint_boot
    from vreason.protocols.ruler.tables import bootstrap_cis, mode_split

    out: dict = {}
    out["plain_mean"] = bootstrap_ci(VALUES, n_boot=500, seed=3)
    out["plain_median"] = bootstrap_ci(VALUES, stat=np.median, n_boot=300, seed=4, level=0.9)
    out["plain_chunked"] = bootstrap_ci(BIG, n_boot=2000, seed=5)
    out["cluster_mean"] = bootstrap_ci(VALUES, n_boot=500, seed=6, clusters=CLUSTERS)
    out["cluster_stat"] = bootstrap_ci(VALUES, stat=np.median, n_boot=200, seed=7, clusters=CLUSTERS)
    out["one_value"] = bootstrap_ci([2.5, np.nan], n_boot=10)
    out["paired_delta"] = paired_delta_ci(VALUES, VALUES[::-1] * 0.9, n_boot=400, seed=8)
    groups = {"x": VALUES[:10], "y": np.c_[VALUES[10:25], VALUES[15:30]], "z": np.array([])}
    reps = category_replicates(groups, n_boot=100, seed=9)
    out["strata"] = reps
    out["strata_ci"] = [percentile_ci(reps[c][:, 0], 0.95) for c in sorted(reps)]
    inst = _ruler_inst()
    out["ruler_cis"] = bootstrap_cis(inst, n_boot=200, seed=1)
    out["ruler_modes"] = mode_split(inst, n_boot=200, seed=2)
    out["mmecof_deltas"] = hint_deltas(_mmecof_inst(), n_boot=200, seed=3, metrics=("RS", "Avg"))
    r = np.random.default_rng(11)
    dom = r.uniform(0, 1, 12)
    dom[4] = np.nan
    s, w = r.uniform(0, 3, (12, 3)), r.integers(1, 4, (12, 3)).astype(float)
    out["pai_g_joint"] = joint_boot(dom, s, w, 300, 0.95, 4)
    h, j = r.integers(1, 6, 20).astype(float), r.integers(1, 6, 20).astype(float)
    out["agreement"] = _bootstrap(lambda ix: {"mean_diff": float(np.mean(h[ix] - j[ix])),
                                              "corr": float(np.corrcoef(h[ix], j[ix])[0, 1])},
                                  20, ["mean_diff", "corr"], n_boot=300, seed=5, level=0.95)
    comps = [Comparison(a, b, float(r.choice([0.0, 0.5, 1.0])))
             for a, b in [("A", "B"), ("B", "C"), ("A", "C"), ("C", "A")] * 6]
    res = fit_ratings(comps, ["A", "B", "C"], "overall", n_boot=100, seed=6)
    out["ratings"] = (res.elo, res.bt, res.elo_ci, res.bt_ci)
    return out


PINNED: dict[str, str] = {
    'plain_mean': 'f93acabafc7a296f',
    'plain_median': 'c82158fda740719d',
    'plain_chunked': '8ff4dcfdb7dd6401',
    'cluster_mean': 'faee6a18cb2aaf6e',
    'cluster_stat': 'dcb1b9e70a423fa4',
    'one_value': '3bddba257ae436c2',
    'paired_delta': '15d0c5b599fde42d',
    'strata': 'f889b44bea72271e',
    'strata_ci': 'f4b65a627940a706',
    'ruler_cis': 'b3c081990d6d6904',
    'ruler_modes': 'edeb3d1f74894b86',
    'mmecof_deltas': 'c115dfd9ef9f9624',
    'pai_g_joint': 'f3421e67437a5e4c',
    'agreement': 'c9f98d227535fc53',
    'ratings': '2d25c892ad7e7891',
}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_site_output_unchanged(name: str) -> None:
    got = _sites()[name]
    assert digest(got) == PINNED[name]


def test_every_site_pinned() -> None:
    assert sorted(PINNED) == sorted(_sites())


if __name__ == "__main__":  # print the digests to pin (run once on the code before a change)
    for k, v in _sites().items():
        print(f"    {k!r}: {digest(v)!r},")


def test_old_import_paths_still_work() -> None:
    from vreason.aggregate import bootstrap, stats

    assert stats.bootstrap_ci is bootstrap.bootstrap_ci and stats.paired_delta_ci is bootstrap.paired_delta_ci
    import vreason.protocols.stratified as old

    with pytest.warns(DeprecationWarning, match="aggregate.bootstrap.stratified_replicates"):
        assert old.category_replicates is bootstrap.stratified_replicates
    with pytest.warns(DeprecationWarning):
        assert old.percentile_ci is bootstrap.percentile_ci
    with pytest.raises(AttributeError):
        _ = old.nothing_here


def test_resample_indices_draws_one_round_at_a_time() -> None:
    from vreason.aggregate.bootstrap import resample_indices

    rounds = list(resample_indices(5, 3, seed=2))
    rng = np.random.default_rng(2)
    assert len(rounds) == 3 and all(np.array_equal(r, rng.integers(0, 5, size=5)) for r in rounds)
