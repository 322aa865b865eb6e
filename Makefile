# foxhunt — two commands from a fresh machine: `make demo` and `make test`.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
PIP     := $(BIN)/python -m pip install --quiet --constraint constraints.txt
DEMO    := runs/demo
DEMO_BARS ?= 20000

.PHONY: install demo test lint bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)

# Reinstall when the dependency pins change.
$(STAMP): $(BIN)/python pyproject.toml constraints.txt
	$(PIP) --upgrade pip
	$(PIP) torch==2.13.0
	$(PIP) -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	mkdir -p $(DEMO)
	$(BIN)/foxhunt data demo --bars $(DEMO_BARS) --seed 0 --out $(DEMO)/ES_FUT_demo.parquet
	$(BIN)/foxhunt data inspect $(DEMO)/ES_FUT_demo.parquet
	$(BIN)/foxhunt features --bars $(DEMO)/ES_FUT_demo.parquet --out $(DEMO)/features.parquet

test: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) runs .pytest_cache
