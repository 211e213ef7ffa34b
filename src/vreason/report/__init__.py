"""Report: Markdown / CSV / JSON tables and charts for a run."""
