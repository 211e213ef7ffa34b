"""RULER-Bench (see README.md here): loader, options, the checklist judge, tables, tools, its templates and
its released video layout."""

from vreason.core.human import GOOD_MEDIUM_POOR, MetricLink
from vreason.core.registry import PackageDeclaration

FRAME_PRESETS = {"ruler": "fps:2+max_side=512"}  # official-code.md §7.2

DECLARES = PackageDeclaration(
    benchmarks={
        "ruler": ("vreason.protocols.ruler.protocol:RulerProtocol",
                 "RULER-Bench: checklist judged Good/Medium/Poor over four metrics"),
    },
    scorers={
        "ruler_checklist": ("vreason.protocols.ruler.protocol:RulerChecklistScorer",
                            "RULER: checklist Good/Medium/Poor"),
    },
    layouts={"ruler": "vreason.protocols.ruler.layout:LAYOUT"},
    frame_presets=FRAME_PRESETS,
    mock_replies=("vreason.protocols.ruler.mock:MOCK_REPLIES", "ruler_judge, ruler_checklist, ruler_enhance"),
    templates=("vreason.protocols.ruler",),
    # RULER-Bench Table 3: ACC / KRCC / SRCC / PLCC per checklist question (Good/Medium/Poor → 2/1/0);
    metric_links=tuple(
        # the annotation app labels a question under its metric code (``ruler:IF`` …), ``checklist`` takes them all
        MetricLink(f"ruler:{code}", ("ruler_checklist",), "*" if code == "checklist" else code, 0.0, 2.0,
                   (0.0, 1.0, 2.0), "question_labels", f"RULER Table 3 (per question, {code})",
                   label_scale=GOOD_MEDIUM_POOR)
        for code in ("checklist", "IF", "VC", "VF", "RC")
    ),
)

from vreason._moved import forward_attrs  # noqa: E402

__getattr__ = forward_attrs(__name__, f"{__name__}.protocol")  # the old module vreason.protocols.ruler
