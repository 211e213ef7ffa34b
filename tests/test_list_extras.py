"""`vreason list` states each protocol's extras truthfully (issue 21 item 1): what it shows comes from the
protocols' declarations (``Protocol.requires``, ``Protocol.judge_roles``), and the declarations match what
the code does — the suite families that read text with OCR are exactly the ones declared to need `ocr`."""

import os
import subprocess
import sys

import pytest

from conftest import one_case
from vreason.catalog import protocol_judges, protocol_needs
from vreason.core.registry import benchmarks, load_builtins
from vreason.verify import ocr as ocrmod


def _protocol(name):
    load_builtins()
    return benchmarks.get(name)


def _oracle_result(family: str, monkeypatch, with_ocr: bool):
    from vreason.synth.base import RenderConfig
    from vreason.synth.suite import make_instance

    if not with_ocr:  # the `ocr` extra missing: get_ocr returns None
        monkeypatch.setattr(ocrmod, "get_ocr", lambda: None)
    cfg = RenderConfig()
    inst = make_instance(family, "easy", 0, 0, cfg)
    from vreason.synth.suite import get_family

    return get_family(family).verify(inst.solution, inst.state, cfg)


def test_the_suite_families_declared_to_need_ocr_are_unscored_without_it(monkeypatch):
    from vreason.protocols.synth.protocol import OCR_FAMILIES
    from vreason.synth.suite import default_families

    assert set(OCR_FAMILIES) <= set(default_families())
    for fam in OCR_FAMILIES:
        assert _oracle_result(fam, monkeypatch, with_ocr=False).evidence.get("unscored") == ocrmod.NO_OCR, fam
    text = protocol_needs(_protocol("synth"))
    assert text.startswith("core; ocr for families ") and all(f in text for f in OCR_FAMILIES)


def _families_without_ocr() -> list[str]:
    from vreason.protocols.synth.protocol import OCR_FAMILIES
    from vreason.synth.suite import default_families

    return [f for f in default_families() if f not in OCR_FAMILIES]


@pytest.mark.parametrize("family", one_case(_families_without_ocr(), salt="no-ocr"))
def test_a_family_not_declared_to_need_ocr_verifies_its_oracle_without_it(family, monkeypatch):
    """The other side of the declaration: a family not in ``OCR_FAMILIES`` scores its own solution with no OCR
    (one family drawn by the run's seed in ``make test``, every one in ``make test-all``)."""
    res = _oracle_result(family, monkeypatch, with_ocr=False)
    assert res.passed and not res.evidence.get("unscored"), (family, res.evidence)


def test_the_ocr_families_pass_with_the_extra_installed(monkeypatch):
    pytest.importorskip("rapidocr")
    from vreason.protocols.synth.protocol import OCR_FAMILIES

    for fam in OCR_FAMILIES:
        assert _oracle_result(fam, monkeypatch, with_ocr=True).passed, fam


def test_tivibench_names_every_check_that_needs_ocr():
    from vreason.verify.checks import load_checks

    ocr_checks = sorted(f for f, e in load_checks().items() if "ocr" in e.needs)
    assert ocr_checks == ["math", "mcq", "sequence", "sudoku"]
    text = protocol_needs(_protocol("tivibench"))
    assert "ocr for the sudoku, math, sequence and text-mcq checks" in text
    assert "deep + local weights" in text and "(optional)" in text


def test_protocols_without_declared_extras_score_on_the_core_install():
    """rise, ruler, mmecof and pai-u declare nothing beyond core: none of their modules imports an extra."""
    code = ("import sys; from vreason.core.registry import benchmarks, load_builtins; load_builtins()\n"
            "for n in ('rise', 'ruler', 'mmecof', 'pai-u'):\n"
            "    c = benchmarks.get(n); c(); [s for s in c().scorers()]\n"
            "print(sorted(m for m in ('torch', 'transformers', 'rapidocr', 'onnxruntime') if m in sys.modules))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"
    for n in ("rise", "ruler", "mmecof", "pai-u"):
        assert protocol_needs(_protocol(n)) == "core"


@pytest.mark.parametrize("name, needs, judge", [
    ("pai-g", "deep + local weights for the learned quality dimensions", "default (--judge)"),
    ("pai-c", "deep + local weights for depth, segmentation, DOVER quality and Diversity-LPIPS", "none"),
    ("rise", "core", "default, vq (--judge)"),
    ("synth", "ocr for families", "none"),
    ("tivibench", "ocr", "none; default (--judge) once the data holds VLM-QA samples"),
])
def test_declarations_shown(name, needs, judge):
    cls = _protocol(name)
    assert needs in protocol_needs(cls)
    assert protocol_judges(cls) == judge


def test_vreason_list_shows_the_declarations():
    env = {**os.environ, "COLUMNS": "400"}
    res = subprocess.run([sys.executable, "-m", "vreason.cli.main", "list"], capture_output=True, text=True,
                         env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    rows: dict[str, str] = {}  # the benchmarks table comes first (the layouts table repeats some names)
    for ln in res.stdout.splitlines():
        if ln.count("│") >= 4:
            rows.setdefault(ln.split("│")[1].strip(), ln)
    assert "ocr for families sudoku, arithmetic, numseq" in rows["synth"]
    assert "deep + local weights" in rows["pai-g"] and "default (--judge)" in rows["pai-g"]
    assert "core" in rows["rise"] and "default, vq (--judge)" in rows["rise"]
    assert "│ none" in rows["pai-c"]
