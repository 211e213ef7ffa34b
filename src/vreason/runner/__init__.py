"""The runner: import-or-generate → score → aggregate, resumable."""
