"""RISE-Video (see README.md here): loader, options, the four judged metrics, the maze and symmetry verifiers,
Tables 1–2, its judge templates (``templates/``) and its released video layout."""

from vreason.core.human import MetricLink
from vreason.core.registry import PackageDeclaration

FRAME_PRESETS = {  # the released frame sampling per metric (official-code.md §7.2)
    "rise.ra.fps2": "fps:2+linspace",
    "rise.ra.tail": "last_fraction:3/0.4",
    "rise.ra.last": "last",
    "rise.tc": "uniform:16+round+dedupe",
    "rise.pr": "uniform:16",
    "rise.pr.reverse": "uniform:16+reverse",
    "rise.vq": "uniform:6+drop_ends",
}

_LIKERT5 = (1.0, 2.0, 3.0, 4.0, 5.0)
DECLARES = PackageDeclaration(
    benchmarks={
        "rise": ("vreason.protocols.rise.protocol:RiseProtocol",
                 "RISE-Video: RA/TC/PR/VQ judged metrics, maze & symmetry verifiers"),
    },
    scorers={
        "rise_ra": ("vreason.protocols.rise.scorers:RiseReasoningJudge", "RISE: Reasoning Alignment (judge)"),
        "rise_puzzle": ("vreason.protocols.rise.scorers:RisePuzzleVerifier", "RISE: maze / symmetry verifier"),
        "rise_tc": ("vreason.protocols.rise.scorers:RiseTemporalConsistency", "RISE: Temporal Consistency 1–5"),
        "rise_pr": ("vreason.protocols.rise.scorers:RisePhysicalRationality", "RISE: Physical Rationality 1–5"),
        "rise_vq": ("vreason.protocols.rise.scorers:RiseVisualQuality", "RISE: Visual Quality 1–3"),
    },
    layouts={"rise": "vreason.protocols.rise.layout:LAYOUT"},
    frame_presets=FRAME_PRESETS,
    mock_replies=("vreason.protocols.rise.mock:MOCK_REPLIES", "rise_ra, rise_ra_ref, rise_tc, rise_pr, rise_vq"),
    templates=("vreason.protocols.rise",),
    metric_links=(  # RISE-Video Table 3: MAE / STD against the mean of the annotators, native scale per metric
        MetricLink("rise:ra", ("rise_ra", "rise_puzzle"), "ra", 0.0, 1.0, None, "value", "RISE Table 3 (RA, 0–1)"),
        MetricLink("rise:tc", ("rise_tc",), "tc", 1.0, 5.0, _LIKERT5, "value", "RISE Table 3 (TC, 1–5)"),
        MetricLink("rise:pr", ("rise_pr",), "pr", 1.0, 5.0, _LIKERT5, "value", "RISE Table 3 (PR, 1–5)"),
        MetricLink("rise:vq", ("rise_vq",), "vq", 1.0, 3.0, (1.0, 2.0, 3.0), "value", "RISE Table 3 (VQ, 1–3)"),
    ),
)

from vreason._moved import forward_attrs  # noqa: E402

__getattr__ = forward_attrs(__name__, f"{__name__}.protocol")  # the old module vreason.protocols.rise
