"""The measurement layer (docs/measure.md): learned and classical models from local folders.

* :mod:`vreason.measure.base` — interfaces (ImageEmbedder, TextImageEmbedder, Detector, DepthEstimator,
  Segmenter) and errors (ModelMissing, ModelSpecError);
* :mod:`vreason.measure.spec` — ``make_embedder`` / ``make_text_image`` / ``make_detector`` / ``make_depth`` /
  ``make_segmenter`` from spec strings (``transformers:<folder>``, ``classical:<name>``), cached per process;
* :mod:`vreason.measure.classical` — the ``classical:hog-hsv`` descriptor;
* :mod:`vreason.measure.embedders`, :mod:`~vreason.measure.detectors`, :mod:`~vreason.measure.depth`,
  :mod:`~vreason.measure.segment` — transformers backends (torch imported lazily);
* :mod:`vreason.measure.lpips` — LPIPS in plain torch from local weight files.
"""
