"""vreason: evaluate reasoning in video generation models."""

__version__ = "0.1.0"
