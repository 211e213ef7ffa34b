"""The built-in, procedurally generated, verifiable suite."""
