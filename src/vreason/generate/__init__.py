"""Generate: video sources (built-in models, local pipelines, APIs)."""
