"""Test helpers shipped with vreason (a loopback OpenAI-compatible server, …)."""
