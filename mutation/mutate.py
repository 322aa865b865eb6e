"""Mutation testing of the core modules: ``make mutate`` (docs/testing.md, issue 18).

For each core module, mutmut (pinned in the ``dev`` extra) mutates that one file and runs only
the fast test files that cover it: each module runs in its own scratch copy of ``src/`` and
``tests/`` under ``runs/mutate/<name>/`` with a generated ``[tool.mutmut]`` section, so the map
below is the whole configuration and the modules are whatever the working tree holds today.

    python mutation/mutate.py                 # every module, then the score table
    python mutation/mutate.py quantile vsn    # some modules
    python mutation/mutate.py --list          # the module -> tests map
    python mutation/mutate.py --report        # the table again, from the last runs

Score = killed / (killed + survived + no tests): timeouts and crashes count as killed (the
mutant broke the code), mutants no selected test reaches count as survivors.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "runs" / "mutate"


@dataclass(frozen=True)
class Target:
    """One module to mutate and the test files (or test ids) that must kill its mutants."""

    source: str
    tests: tuple[str, ...]


TARGETS: dict[str, Target] = {
    "features": Target(
        "src/foxhunt/data/features.py",
        ("tests/data/test_features.py", "tests/data/test_features_mutants.py"),
    ),
    "observed": Target(
        "src/foxhunt/data/observed.py",
        ("tests/data/test_features.py", "tests/data/test_features_mutants.py"),
    ),
    "windows": Target(
        "src/foxhunt/data/windows.py",
        ("tests/data/test_windows.py", "tests/data/test_windows_mutants.py"),
    ),
    "row_arrays": Target(
        "src/foxhunt/data/row_arrays.py",
        ("tests/data/test_windows.py", "tests/data/test_windows_mutants.py"),
    ),
    "splits": Target(
        "src/foxhunt/data/splits.py",
        ("tests/data/test_splits.py", "tests/data/test_splits_mutants.py"),
    ),
    "scaling": Target(
        "src/foxhunt/data/scaling.py",
        ("tests/data/test_scaling.py", "tests/data/test_scaling_mutants.py"),
    ),
    "quantile": Target(
        "src/foxhunt/model/quantile.py",
        ("tests/model/test_quantile.py", "tests/model/test_quantile_mutants.py"),
    ),
    "vsn": Target(
        "src/foxhunt/model/vsn.py",
        ("tests/model/test_vsn.py", "tests/model/test_vsn_mutants.py"),
    ),
    "checkpoints": Target(
        "src/foxhunt/artifacts/checkpoints.py",
        ("tests/artifacts/test_checkpoints.py", "tests/artifacts/test_checkpoints_mutants.py"),
    ),
    "resume": Target(
        "src/foxhunt/artifacts/resume.py",
        ("tests/artifacts/test_checkpoints.py", "tests/artifacts/test_resume_mutants.py"),
    ),
    "estimate": Target(
        "src/foxhunt/memory/estimate.py",
        ("tests/memory/test_estimate.py", "tests/memory/test_estimate_mutants.py"),
    ),
    "budget": Target(
        "src/foxhunt/memory/budget.py",
        ("tests/memory/test_budget.py", "tests/memory/test_budget_mutants.py"),
    ),
    "evaluate": Target(
        "src/foxhunt/infer/evaluate.py",
        ("tests/infer/test_evaluate.py", "tests/infer/test_evaluate_mutants.py"),
    ),
    "forecaster": Target(
        "src/foxhunt/infer/forecaster.py",
        ("tests/infer/test_forecaster.py", "tests/infer/test_forecaster_mutants.py"),
    ),
}

KILLED = {"killed", "timeout", "segfault", "caught by type check", "suspicious"}
SURVIVED = {"survived", "no tests"}
RESULT_LINE = re.compile(r"^\s+(\S+): (.+)$")


def _mutmut_section(target: Target, tests: tuple[str, ...]) -> str:
    def toml_list(items: tuple[str, ...] | list[str]) -> str:
        return "[" + ", ".join(f'"{item}"' for item in items) + "]"

    return (
        "\n[tool.mutmut]\n"
        'source_paths = ["src"]\n'
        f"only_mutate = {toml_list([target.source])}\n"
        f"pytest_add_cli_args_test_selection = {toml_list(tests)}\n"
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-q", "-m", "not slow and not gpu"]\n'
        # torch is not fork-safe once it has run: fork each mutant from a clean server.
        'process_isolation = "forkserver"\n'
        "use_git_change_detection = false\n"
        "timeout_multiplier = 10.0\n"
        "timeout_constant = 5.0\n"
    )


def _prepare(name: str, target: Target) -> Path:
    """A fresh scratch copy of the tree with the mutmut section for this one module."""
    work = WORK / name
    shutil.rmtree(work, ignore_errors=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis", "*.egg-info")
    shutil.copytree(ROOT / "src", work / "src", ignore=ignore)
    shutil.copytree(ROOT / "tests", work / "tests", ignore=ignore)
    tests = tuple(t for t in target.tests if (ROOT / t.split("::")[0]).exists())
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    pyproject = pyproject.split("\n[tool.mutmut]")[0]
    (work / "pyproject.toml").write_text(
        pyproject + _mutmut_section(target, tests), encoding="utf-8"
    )
    return work


def _mutmut(work: Path, *args: str) -> str:
    """Run one mutmut command in ``work``; return its output (also kept in mutmut.log)."""
    command = [sys.executable, "-m", "mutmut", *args]
    done = subprocess.run(command, cwd=work, text=True, capture_output=True, check=False)
    with (work / "mutmut.log").open("a", encoding="utf-8") as log:
        log.write(f"$ mutmut {' '.join(args)}\n{done.stdout}{done.stderr}\n")
    return done.stdout


def _results(work: Path) -> dict[str, str]:
    status: dict[str, str] = {}
    for line in _mutmut(work, "results", "--all", "true").splitlines():
        match = RESULT_LINE.match(line)
        if match:
            status[match.group(1)] = match.group(2).strip()
    return status


def run_one(name: str, children: int) -> dict[str, str]:
    target = TARGETS[name]
    work = _prepare(name, target)
    print(f"== {name}: {target.source} against {', '.join(target.tests)}", flush=True)
    _mutmut(work, "run", "--max-children", str(children))
    status = _results(work)
    (work / "results.txt").write_text(
        "".join(f"{key}: {value}\n" for key, value in sorted(status.items())), encoding="utf-8"
    )
    survivors = [key for key, value in sorted(status.items()) if value in SURVIVED]
    diffs = [_mutmut(work, "show", key) for key in survivors]
    (work / "survivors.diff").write_text("".join(diffs), encoding="utf-8")
    print(f"   {len(status)} mutants, {len(survivors)} survived: {work / 'survivors.diff'}")
    return status


def _load(name: str) -> dict[str, str]:
    path = WORK / name / "results.txt"
    if not path.exists():
        return {}
    pairs = (line.rsplit(": ", 1) for line in path.read_text(encoding="utf-8").splitlines())
    return {key: value for key, value in pairs}


def report(names: list[str]) -> float:
    """Print the per-module and overall score; return the overall score in percent."""
    total_killed = total_counted = 0
    print(
        f"{'module':<12} {'mutants':>7} {'killed':>7} {'survived':>8} {'no tests':>8} {'score':>7}"
    )
    for name in names:
        status = _load(name)
        if not status:
            print(f"{name:<12} {'(not run)':>7}")
            continue
        killed = sum(value in KILLED for value in status.values())
        survived = sum(value == "survived" for value in status.values())
        untested = sum(value == "no tests" for value in status.values())
        counted = killed + survived + untested
        total_killed += killed
        total_counted += counted
        score = 100.0 * killed / counted if counted else 100.0
        print(f"{name:<12} {len(status):>7} {killed:>7} {survived:>8} {untested:>8} {score:>6.1f}%")
        for key, value in sorted(status.items()):
            if value in SURVIVED:
                print(f"    {value:<9} {key}")
    overall = 100.0 * total_killed / total_counted if total_counted else 100.0
    print(f"{'overall':<12} {total_counted:>7} {total_killed:>7} {'':>8} {'':>8} {overall:>6.1f}%")
    return overall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help=f"some of: {' '.join(TARGETS)} (default all)")
    parser.add_argument("--children", type=int, default=2, help="parallel mutants (default 2)")
    parser.add_argument("--list", action="store_true", help="print the module -> tests map")
    parser.add_argument("--report", action="store_true", help="only print the last scores")
    args = parser.parse_args(argv)
    unknown = [name for name in args.modules if name not in TARGETS]
    if unknown:
        print(f"error: unknown module {unknown[0]!r}; one of: {' '.join(TARGETS)}", file=sys.stderr)
        return 2
    names = args.modules or list(TARGETS)
    if args.list:
        for name in names:
            print(f"{name:<12} {TARGETS[name].source}  <-  {' '.join(TARGETS[name].tests)}")
        return 0
    if not args.report:
        for name in names:
            run_one(name, args.children)
    report(names)
    return 0


if __name__ == "__main__":
    sys.exit(main())
