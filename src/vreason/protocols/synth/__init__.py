"""The built-in suite as a protocol (see README.md here): options, the verifier scorer binding and the
suite tables. The suite itself (families, checks, adversaries) is :mod:`vreason.synth`."""

from vreason.core.registry import PackageDeclaration

DECLARES = PackageDeclaration(
    benchmarks={"synth": ("vreason.protocols.synth.protocol:SynthProtocol",
                          "Built-in procedurally generated, verifiable suite (offline)")},
    scorers={"synth-verifier": ("vreason.synth.scorer:SynthVerifierScorer",
                                "synth: the family's programmatic verifier")},
)

from vreason._moved import forward_attrs  # noqa: E402

__getattr__ = forward_attrs(__name__, f"{__name__}.protocol")  # the old module vreason.protocols.synth
