"""PAI-Bench-U: loader, options, the multiple-choice scorer (the model under test is the judge), template."""
