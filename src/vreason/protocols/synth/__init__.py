"""The built-in suite as a protocol (see README.md here): options, the verifier scorer binding and the
suite tables. The suite itself (families, checks, adversaries) is :mod:`vreason.synth`."""

from vreason.core.human import MetricLink
from vreason.core.registry import PackageDeclaration

DECLARES = PackageDeclaration(
    benchmarks={"synth": ("vreason.protocols.synth.protocol:SynthProtocol",
                          "Built-in procedurally generated, verifiable suite (offline)")},
    scorers={"synth-verifier": ("vreason.synth.scorer:SynthVerifierScorer",
                                "synth: the family's programmatic verifier")},
    metric_links=(  # the verifier's score and its pass/fail
        MetricLink("synth:score", ("synth-verifier",), "score", 0.0, 1.0, None, "value", "built-in suite score"),
        MetricLink("synth:pass", ("synth-verifier",), "score", 0.0, 1.0, (0.0, 1.0), "passed",
                   "built-in suite pass/fail"),
    ),
)

from vreason._moved import forward_attrs  # noqa: E402

__getattr__ = forward_attrs(__name__, f"{__name__}.protocol")  # the old module vreason.protocols.synth
