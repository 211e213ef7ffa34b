"""PAI-Bench-C: loader and masks, options, fidelity / depth / segmentation / DOVER / diversity scorers, the
released metrics (CPU, and torch on a GPU), tables."""
