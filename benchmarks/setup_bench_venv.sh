#!/usr/bin/env bash
# Create/refresh .venv-bench: the benchmark's own venv with pytorch-forecasting and Lightning.
#
#   bash benchmarks/setup_bench_venv.sh          (run_all.py calls it when the venv is missing
#                                                  or older than the constraint files)
#
# torch is pinned exactly as in the main venv (../constraints.txt: the CPU wheel 2.13.0), so both
# libraries run on the same torch build; pytorch-forecasting, Lightning and their dependencies are
# pinned in constraints-bench.txt. foxhunt itself is installed (editable) too, because the
# accuracy comparison feeds pytorch-forecasting the very windows foxhunt's data layer cuts.
# arch is installed without its dependencies: it is used only as the carrier of the real S&P 500
# daily bars shipped inside its wheel (arch/data/sp500/sp500.csv.gz); nothing imports it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-python3}"
VENV="${BENCH_VENV:-.venv-bench}"
CONSTRAINTS=(-c constraints.txt -c benchmarks/constraints-bench.txt)

if [ ! -x "$VENV/bin/python" ]; then
    echo "creating $VENV"
    "$PY" -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip install --quiet "${CONSTRAINTS[@]}")
"${PIP[@]}" --upgrade pip
"${PIP[@]}" torch==2.13.0
"${PIP[@]}" pytorch-forecasting==1.8.0 lightning==2.6.6 psutil rich
"${PIP[@]}" --no-deps arch==8.0.0
"${PIP[@]}" -e .
"$VENV/bin/python" - <<'EOF'
import importlib.metadata as m
for name in ("torch", "pytorch-forecasting", "lightning", "foxhunt", "arch"):
    print(f"  {name}=={m.version(name)}")
EOF
touch "$VENV/.bench-installed"
echo "$VENV ready"
