"""The suite's task families, one package each: ``family`` (generation, rendering, the family's
registration), ``check`` (the verifier's measurements, where the family has its own module) and
``adversary`` (its cheats and honest renderings, registered with :func:`vreason.synth.adversary.variant`).
The shared machinery (base, suite, scorer, models, the adversary registry and honest variants, frame
helpers) stays in :mod:`vreason.synth`."""
