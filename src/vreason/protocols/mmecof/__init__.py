"""MME-CoF-Pro (see README.md here): loader, options, the per-step Reasoning Score and quality judges, tables
and its templates."""

from vreason.core.human import MetricLink
from vreason.core.registry import PackageDeclaration

FRAME_PRESETS = {"mmecof": "every:10"}  # official-code.md §7.2

DECLARES = PackageDeclaration(
    benchmarks={
        "mmecof": ("vreason.protocols.mmecof.protocol:MmeCofProtocol",
                 "MME-CoF-Pro: per-step Reasoning Score under hint settings"),
    },
    scorers={
        "mmecof_rs": ("vreason.protocols.mmecof.protocol:MmeCofStepScorer", "MME-CoF-Pro: per-step Reasoning Score"),
        "mmecof_gq": ("vreason.protocols.mmecof.protocol:MmeCofQualityScorer", "MME-CoF-Pro: generation quality"),
    },
    frame_presets=FRAME_PRESETS,
    mock_replies=("vreason.protocols.mmecof.mock:MOCK_REPLIES", "mmecof_step, mmecof_quality"),
    templates=("vreason.protocols.mmecof",),
    metric_links=(  # judge-human agreement per reasoning step (satisfied 1 / not 0)
        MetricLink("mmecof:RS", ("mmecof_rs",), "RS", 0.0, 1.0, (0.0, 1.0), "step_verdicts",
                   "MME-CoF-Pro step satisfied (0/1)"),
    ),
)

from vreason._moved import forward_attrs  # noqa: E402

__getattr__ = forward_attrs(__name__, f"{__name__}.protocol")  # the old module vreason.protocols.mmecof
