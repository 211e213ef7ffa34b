"""Judge: any vision-language model as a judge (backends, parsers, cache, templates)."""
