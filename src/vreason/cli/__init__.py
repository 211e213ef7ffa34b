"""The `vreason` command line."""
