"""The gravity family: :mod:`.family` (generation and rendering; the verifier), :mod:`.check` (the verifier's
measurements), :mod:`.adversary` (cheats and honest renderings)."""
