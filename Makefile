# Every target does its own set-up on a fresh machine (venv + pip install).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
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
	touch $(TEST_STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/vreason run synth --name demo --models oracle,static,shortcut,random,noise,reversed --per-task 4 --force-new --no-report
	$(BIN)/vreason report runs/demo
	@echo "Report written to runs/demo/report/ (open runs/demo/report/index.html in a browser, or report.md)"

test: $(TEST_STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/python -m pytest -q -p no:cacheprovider --timeout=600

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks

clean:
	rm -rf $(VENV) runs build *.egg-info src/*.egg-info
