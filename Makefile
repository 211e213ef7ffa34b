# Every target does its own set-up on a fresh machine (venv + pip install).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
DEMO_STAMP := $(VENV)/.installed-demo
TEST_STAMP := $(VENV)/.installed-test

.PHONY: setup demo test bench lint clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q -U pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install -q -e ".[dev]"
	touch $(STAMP)

# tests also exercise the local-checkpoint judge on a tiny random model: torch is pinned (CPU wheel)
# browser tests drive Debian's chromium through playwright (never `playwright install`); the viewer needs [web]
$(TEST_STAMP): $(STAMP)
	$(BIN)/pip install -q -e ".[dev,deep,gen,web,ray,ocr]"
	@if [ ! -x /usr/bin/chromium ]; then apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; fi
	tests/fetch_opencv_doc.sh
	touch $(TEST_STAMP)

# the built-in suite reads written digits and answers with OCR (rapidocr: its models ship inside the wheel)
$(DEMO_STAMP): $(STAMP)
	$(BIN)/pip install -q -e ".[dev,ocr]"
	touch $(DEMO_STAMP)

setup: $(STAMP)

# the report is written even when the run finished with errors (exit 3); make then exits with the run's code
demo: $(DEMO_STAMP)
	@rc=0; $(BIN)/vreason run synth --name demo --models oracle,static,shortcut,random,noise,reversed --per-task 4 \
	    --force-new --no-report || rc=$$?; \
	if [ $$rc -ne 0 ] && [ $$rc -ne 3 ]; then exit $$rc; fi; \
	$(BIN)/vreason report runs/demo || exit $$?; \
	echo "Report written to runs/demo/report/ (open runs/demo/report/index.html in a browser, or report.md)"; \
	exit $$rc

test: $(TEST_STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/lint-imports --config .importlinter
	$(BIN)/python -m pytest -q -p no:cacheprovider --timeout=600 -n auto --durations=15

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/lint-imports --config .importlinter

clean:
	rm -rf $(VENV) runs build *.egg-info src/*.egg-info
