"""Verify: programmatic verifiers (OpenCV / numpy) with known right answers."""
