"""The human side: annotations collected in the browser (or imported), ratings from pairwise votes and
judge-vs-human agreement. Records and storage: :mod:`vreason.human.records`, :mod:`vreason.human.store`."""
