"""PAI-Bench-G: loader, options, the VBench quality dimensions, the yes/no domain judge, tables, template."""
