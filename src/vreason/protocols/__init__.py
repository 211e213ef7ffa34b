"""Protocols: one module per benchmark, binding a loader, its scorers and its aggregator."""
