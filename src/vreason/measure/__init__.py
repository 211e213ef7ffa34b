"""Measure: embedding and signal metrics."""
