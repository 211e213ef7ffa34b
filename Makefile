# Every target does its own set-up on a fresh machine (venv + uv/pip install).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
DEMO_STAMP := $(VENV)/.installed-demo
TEST_STAMP := $(VENV)/.installed-test

.PHONY: setup demo test test-all bench lint clean

# uv installs the packages (parallel downloads, no byte-compiling: ≈ 4× faster than pip here); pip installs only the
# pinned torch first, because pip also finds a local CPU wheel where the machine provides one (PIP_FIND_LINKS or
# pip.conf) and uv would not look there. uv then keeps that torch (it satisfies the pin).
UV := $(BIN)/uv pip install -q --python $(BIN)/python
TORCH_PIN := $(shell grep -o 'torch==[0-9.]*' pyproject.toml | head -1)

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q uv

$(STAMP): $(BIN)/python pyproject.toml
	$(UV) -e ".[dev]"
	touch $(STAMP)

# tests also exercise the local-checkpoint judge on a tiny random model: torch is pinned (CPU wheel)
# browser tests drive Debian's chromium through playwright (never `playwright install`); the viewer needs [web]
# One resolution for everything (it includes [dev], so it makes the dev stamp too). apt (chromium when missing, then
# Debian's opencv-doc for the real-media tests) runs beside the Python installs; its log is shown if it fails.
$(TEST_STAMP): $(BIN)/python pyproject.toml
	@( if [ ! -x /usr/bin/chromium ]; then apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; fi \
	   && tests/fetch_opencv_doc.sh ) > $(VENV)/apt.log 2>&1 & apt=$$!; \
	$(BIN)/pip install -q --no-compile $(TORCH_PIN) && $(UV) -e ".[dev,deep,gen,web,ray,ocr]"; rc=$$?; \
	wait $$apt || { cat $(VENV)/apt.log; exit 1; }; exit $$rc
	touch $(STAMP) $(TEST_STAMP)

# the built-in suite reads written digits and answers with OCR (rapidocr: its models ship inside the wheel)
$(DEMO_STAMP): $(BIN)/python pyproject.toml
	$(UV) -e ".[dev,ocr]"
	touch $(STAMP) $(DEMO_STAMP)

setup: $(STAMP)

# the report is written even when the run finished with errors (exit 3); make then exits with the run's code
demo: $(DEMO_STAMP)
	@rc=0; $(BIN)/vreason run synth --name demo --models oracle,static,shortcut,random,noise,reversed --per-task 4 \
	    --force-new --no-report || rc=$$?; \
	if [ $$rc -ne 0 ] && [ $$rc -ne 3 ]; then exit $$rc; fi; \
	$(BIN)/vreason report runs/demo || exit $$?; \
	echo "Report written to runs/demo/report/ (open runs/demo/report/index.html in a browser, or report.md)"; \
	exit $$rc

# `make test`: all but the tests marked slow (each has a default test of the same kind), the adversarial matrix
# sampled; `make test-all` and `make bench` run the slow tests and the full matrix too.
# Bytecode is written (__pycache__, git-ignored) even if PYTHONDONTWRITEBYTECODE is set in the shell: else every
# xdist worker and CLI subprocess recompiles the package and re-rewrites the test modules' asserts (≈ 8 s CPU per
# worker). worksteal: each worker starts on one contiguous half of the tests (a module's fixtures are built once,
# not once per worker) and steals from the other half when it runs out.
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q -p no:cacheprovider -n auto --dist worksteal --durations=15

test: $(TEST_STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/lint-imports
	$(PYTEST) --timeout=600 -m "not slow"

test-all: $(TEST_STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/lint-imports
	$(PYTEST) --timeout=900 --adv-full

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) runs build *.egg-info src/*.egg-info
