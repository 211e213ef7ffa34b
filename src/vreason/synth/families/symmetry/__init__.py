"""The symmetry family: :mod:`.family` (generation and rendering; the verifier), :mod:`.adversary` (cheats and
honest renderings)."""
