# foxhunt — two commands from a fresh machine: `make demo` and `make test`.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
PIP     := $(BIN)/python -m pip install --quiet --constraint constraints.txt
DEMO    := runs/demo
DEMO_BARS ?= 20000
DEMO_TRAIN_ARGS ?=

.PHONY: install demo test test-fast test-fp32 test-avx2 lint bench mutate clean

# Python's byte-code caches on, whatever the shell says: with PYTHONDONTWRITEBYTECODE set (as on
# our CI machines) pytest rewrote the asserts of every test file again in each worker of each
# run, 10 s of the 90 s of `make test-fast` (docs/testing.md, session 42).
unexport PYTHONDONTWRITEBYTECODE

$(BIN)/python:
	$(PY) -m venv $(VENV)

# Reinstall when the dependency pins change.
$(STAMP): $(BIN)/python pyproject.toml constraints.txt
	$(PIP) --upgrade pip
	$(PIP) torch==2.13.0
	$(PIP) -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# Bars -> train (demo preset) -> evaluate on the test split -> forecast the latest bars -> report.
demo: $(STAMP)
	rm -rf $(DEMO) && mkdir -p $(DEMO)
	$(BIN)/foxhunt data demo --bars $(DEMO_BARS) --seed 0 --out $(DEMO)/ES_FUT_demo.parquet
	$(BIN)/foxhunt data inspect $(DEMO)/ES_FUT_demo.parquet
	$(BIN)/foxhunt features --bars $(DEMO)/ES_FUT_demo.parquet --out $(DEMO)/features.parquet
	$(BIN)/foxhunt train --preset demo --bars $(DEMO)/ES_FUT_demo.parquet --out $(DEMO) $(DEMO_TRAIN_ARGS)
	$(BIN)/foxhunt evaluate --model $(DEMO) --bars $(DEMO)/ES_FUT_demo.parquet
	$(BIN)/foxhunt data demo --bars 600 --seed 1 --start 2024-06-03 --out $(DEMO)/ES_FUT_latest.parquet
	$(BIN)/foxhunt predict --model $(DEMO) --bars $(DEMO)/ES_FUT_latest.parquet --out $(DEMO)/forecast.parquet
	@echo "demo done: $(DEMO)/report.md, $(DEMO)/forecast.parquet, $(DEMO)/evaluation.json"

# Tests run in pytest-xdist workers, one per core (at most 8), each on one torch thread
# (tests/conftest.py); TEST_WORKERS=0 runs them in one process. docs/testing.md.
TEST_WORKERS ?= auto
XDIST   := -n $(TEST_WORKERS) --maxprocesses 8 --dist loadscope

# Every test (what CI runs). Tiers and markers: docs/testing.md.
test: $(STAMP)
	$(BIN)/python -m pytest -q $(XDIST)

# The unit tier, what a developer runs after each change: no slow, subprocess or gpu test.
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q $(XDIST) -m "not slow and not subprocess and not gpu"

# The whole suite as a CPU without native bf16 runs it: precision auto resolves to fp32.
test-fp32: $(STAMP)
	FOXHUNT_FORCE_FP32=1 $(BIN)/python -m pytest -q $(XDIST)

# The whole suite as an AVX2-only CPU (AMD Zen 3) runs it, on a CPU with AVX-512: oneDNN, ATen's
# kernels and MKL capped at AVX2, so precision auto is fp32, oneDNN refuses bf16 and the memory
# estimates take the AVX2 process overhead (foxhunt.runtime reads the cap).
AVX2_ENV := ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2
test-avx2: $(STAMP)
	$(AVX2_ENV) $(BIN)/python -m pytest -q $(XDIST)

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

# Mutation testing of the core modules (docs/testing.md): minutes, not part of `make test`.
# MUTATE_MODULES=quantile vsn runs some of them; the per-module and overall score print at the end.
MUTATE_MODULES ?=
mutate: $(STAMP)
	nice -n 10 $(BIN)/python mutation/mutate.py $(MUTATE_MODULES)

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) runs .pytest_cache
