"""Aggregate: per-protocol tables, bootstrap intervals, Pass@k."""
