"""TiViBench (see README.md here): loader and schema, options, the programmatic checks and VLM QA scorers,
Pass@1 / Pass@5 tables, its QA template and its released video layout."""

from vreason.core.registry import PackageDeclaration

DECLARES = PackageDeclaration(
    benchmarks={
        "tivibench": ("vreason.protocols.tivibench.protocol:TiviBenchProtocol",
                 "TiViBench: 24 task types, programmatic checks + VLM QA, Pass@1 / Pass@5"),
    },
    scorers={
        "tivibench_check": ("vreason.protocols.tivibench.scorers:TiviCheckScorer",
                            "TiViBench: the metric family's programmatic check"),
        "tivibench_qa": ("vreason.protocols.tivibench.scorers:TiviQaScorer", "TiViBench: VLM QA, all answers right"),
    },
    layouts={"tivibench": "vreason.protocols.tivibench.layout:LAYOUT"},
    mock_replies=("vreason.protocols.tivibench.mock:MOCK_REPLIES", "tivibench_qa"),
    templates=("vreason.protocols.tivibench",),
)

from vreason._moved import forward_attrs  # noqa: E402

__getattr__ = forward_attrs(__name__, f"{__name__}.protocol")  # the old module vreason.protocols.tivibench
