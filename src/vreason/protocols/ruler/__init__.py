"""RULER-Bench (see README.md here): loader, options, the checklist judge, tables, tools, its templates and
its released video layout."""

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
)

from vreason._moved import forward_attrs  # noqa: E402

__getattr__ = forward_attrs(__name__, f"{__name__}.protocol")  # the old module vreason.protocols.ruler
