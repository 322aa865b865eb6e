"""The mutation map (`mutation/mutate.py`): every module under src/foxhunt has tests to run."""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "mutation"))

import mutate  # noqa: E402


def test_every_module_with_code_is_mapped_to_test_files_that_exist():
    targets = mutate.all_targets()
    sources = {target.source for target in targets.values()}
    for path in (ROOT / "src" / "foxhunt").rglob("*.py"):
        relative = str(path.relative_to(ROOT))
        # a function for mutmut to mutate (constants and re-exports have none)
        has_code = re.search(r"^\s*(async\s+)?def ", path.read_text("utf-8"), re.M) is not None
        assert (relative in sources) == has_code, relative
    for name, target in targets.items():
        assert target.tests, name
        for test in target.tests:
            assert (ROOT / test.split("::")[0]).is_file(), (name, test)
    # one entry per module: a hand-made entry replaces the default one
    assert len(sources) == len(targets)


def test_default_map_finds_mirror_files_and_importers():
    target = mutate.default_target(ROOT / "src" / "foxhunt" / "data" / "read" / "vendors.py")
    assert target.source == "src/foxhunt/data/read/vendors.py"
    assert "tests/data/read/test_vendor_files.py" in target.tests  # imports it by name
    mirror = mutate.default_target(ROOT / "src" / "foxhunt" / "model" / "glu.py")
    assert "tests/model/test_glu.py" in mirror.tests
    # no test imports the reader's internals: its folder's tests reach them through read_bars
    scan = mutate.default_target(ROOT / "src" / "foxhunt" / "data" / "read" / "scan.py")
    assert "tests/data/read/test_bars.py" in scan.tests


def test_imports_recognises_each_spelling():
    assert mutate._imports("from foxhunt.data.read.vendors import guess\n", "data.read.vendors")
    assert mutate._imports("import foxhunt.data.read.vendors as v\n", "data.read.vendors")
    assert mutate._imports("from foxhunt.data.read import bars, vendors\n", "data.read.vendors")
    assert mutate._imports(
        "from foxhunt.data.read import (\n    bars,\n    vendors,\n)\n", "data.read.vendors"
    )
    assert not mutate._imports("from foxhunt.data.read.vendors_x import a\n", "data.read.vendors")
    assert not mutate._imports("from foxhunt.data.read import bars\n", "data.read.vendors")
    assert not mutate._imports("# foxhunt.data.read.vendors\n", "data.read.vendors")


def test_report_scores_the_recorded_verdicts(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(mutate, "VERDICTS", tmp_path)
    (tmp_path / "a.txt").write_text(
        "m.x__mutmut_1: killed\nm.x__mutmut_2: survived\nm.x__mutmut_3: timeout\n"
        "m.x__mutmut_4: no tests\nm.x__mutmut_5: not checked\n",
        encoding="utf-8",
    )
    overall = mutate.report(["a", "b"])
    assert overall == 50.0  # 2 killed (killed, timeout) of 4 counted; "not checked" left out
    out = capsys.readouterr().out
    assert "1 of 2 modules scored; not run yet:" in out
    assert "survived  m.x__mutmut_2" in out


def test_a_module_mutmut_could_not_mutate_is_scored_with_nothing_to_count(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(mutate, "VERDICTS", tmp_path)
    (tmp_path / "a.txt").write_text("m.x__mutmut_1: killed\n", encoding="utf-8")
    (tmp_path / "d.txt").write_text(mutate.NOTHING_TO_MUTATE + "\n", encoding="utf-8")
    assert mutate._load("d") == {} and mutate._scored("d") and not mutate._scored("b")
    assert mutate.report(["a", "d", "b"]) == 100.0
    out = capsys.readouterr().out
    assert "d                  0  (mutmut generated no mutant" in out
    assert "2 of 3 modules scored; not run yet:\n    b\n" in out


def _fake_run(tmp_path, monkeypatch, says: str, results: dict[str, str]):
    """``run_one``'s scratch tree under ``tmp_path/m``: mutmut's run writes ``says`` to its log
    and ``results`` are what it then lists."""
    work = tmp_path / "m"  # runs/mutate/<module>: the verdict file takes its name
    (work / "mutants" / "src").mkdir(parents=True)
    (work / "mutants" / "src" / "m.py").write_text("def x__mutmut_1(): ...\n", encoding="utf-8")
    monkeypatch.setattr(mutate, "VERDICTS", tmp_path / "verdicts")
    monkeypatch.setattr(mutate, "_prepare", lambda name, target, fresh=True: work)

    def fake_mutmut(where, *args):
        if args[0] == "run":
            with (where / "mutmut.log").open("a", encoding="utf-8") as log:
                log.write(says + "\n")
        return ""

    monkeypatch.setattr(mutate, "_mutmut", fake_mutmut)
    monkeypatch.setattr(mutate, "_results", lambda where: results)
    return mutate.Target("src/m.py", ("tests/test_m.py",))


def test_mutants_no_test_reaches_count_as_untested(tmp_path, monkeypatch):
    """mutmut stops before running any mutant when no selected test reaches one, and lists them
    all 'not checked': the run records them as 'no tests' (a survivor), not as unscored."""
    says = f"Stopping early, because we {mutate.NO_TEST_CASE}."
    target = _fake_run(tmp_path, monkeypatch, says, {"m.x__mutmut_1": "not checked"})
    assert mutate.run_one("m", target, children=1) == {"m.x__mutmut_1": "no tests"}
    assert mutate._load("m") == {"m.x__mutmut_1": "no tests"}


def test_a_failed_stats_pass_records_nothing(tmp_path, monkeypatch, capsys):
    """When the map's tests fail on the unmutated tree, mutmut runs no mutant and its results
    are the previous run's: nothing is recorded and the run says so."""
    says = f"{mutate.STATS_FAILED}. runner returned 1"
    target = _fake_run(tmp_path, monkeypatch, says, {"m.x__mutmut_1": "killed"})
    (tmp_path / "verdicts").mkdir()
    (tmp_path / "verdicts" / "m.txt").write_text("m.x__mutmut_1: survived\n", encoding="utf-8")
    assert mutate.run_one("m", target, children=1, again=True) == {"m.x__mutmut_1": "survived"}
    assert mutate._load("m") == {"m.x__mutmut_1": "survived"}  # not the stale "killed"
    assert "NOT SCORED" in capsys.readouterr().out


def test_no_default_map_runs_the_architecture_checks():
    """They read the source text, which mutmut rewrites: train_config's clean run failed on
    the mutated file's size and nothing was scored."""
    train_config = mutate.default_target(ROOT / "src" / "foxhunt" / "train_config.py")
    assert "tests/test_config.py" in train_config.tests
    for target in mutate.all_targets().values():
        assert "tests/test_architecture.py" not in target.tests, target.source


def test_prepare_drops_mutmuts_stats_and_keeps_its_verdicts(tmp_path, monkeypatch):
    """A kept scratch tree rebuilds mutmut's test map every run (it only ever adds new tests
    to it, so a changed function ran against too few), and keeps the cached mutants."""
    monkeypatch.setattr(mutate, "WORK", tmp_path)
    kept = tmp_path / "m" / "mutants"
    (kept / "src").mkdir(parents=True)
    (kept / mutate.STATS).write_text("{}", encoding="utf-8")
    (kept / "src" / "m.py.meta").write_text("{}", encoding="utf-8")
    target = mutate.Target("src/foxhunt/errors.py", ("tests/test_errors.py",))
    work = mutate._prepare("m", target, fresh=False)
    assert work == tmp_path / "m"
    assert not (kept / mutate.STATS).exists()
    assert (kept / "src" / "m.py.meta").is_file()
    assert (work / "src" / "foxhunt" / "errors.py").is_file()
    assert 'only_mutate = ["src/foxhunt/errors.py"]' in (work / "pyproject.toml").read_text()


def test_the_heap_probes_run_only_in_the_allocators_own_map():
    config = mutate.default_target(ROOT / "src" / "foxhunt" / "config.py")
    assert "tests/memory/test_allocator.py" in config.tests
    assert set(config.skip) == set(mutate.HEAP_PROBES)
    allocator = mutate.default_target(ROOT / "src" / "foxhunt" / "memory" / "allocator.py")
    assert "tests/memory/test_allocator.py" in allocator.tests and allocator.skip == ()
    assert "--deselect" in mutate._mutmut_section(config, config.tests)


def test_a_module_reached_only_by_slow_tests_keeps_its_default_map_and_selects_them():
    targets = mutate.all_targets()
    selected = targets["infer.incremental.selected"]
    default = mutate.default_target(ROOT / "src/foxhunt/infer/incremental/selected.py")
    assert selected.tests == default.tests
    assert "tests/infer/incremental/test_selected.py" in selected.tests
    assert selected.marks == "not gpu"
    assert targets["infer.incremental.known_rows"].marks == "not slow and not gpu"


def test_a_changed_map_runs_every_mutant_again(tmp_path, monkeypatch, capsys):
    """mutmut's cached verdicts were given by the old map's tests: a changed map (here a test
    file added) drops the cache and runs every mutant, also when asked for ``--again``."""
    monkeypatch.setattr(mutate, "WORK", tmp_path)
    old = mutate.Target("src/foxhunt/errors.py", ("tests/test_errors.py",))
    mutate._prepare("m", old, fresh=True)
    assert not mutate._map_changed("m", old)
    assert not mutate._map_changed("other", old)  # never run: nothing cached
    new = mutate.Target(
        "src/foxhunt/errors.py", ("tests/test_errors.py", "tests/test_cli_smoke.py")
    )
    assert mutate._map_changed("m", new)
    assert mutate._map_changed("m", dataclasses.replace(old, marks="not gpu"))
    calls = []

    class Prepared(Exception):
        pass

    def prepare(name, target, fresh=True):
        calls.append(fresh)
        raise Prepared  # the run itself is not the point

    monkeypatch.setattr(mutate, "_prepare", prepare)
    monkeypatch.setattr(mutate, "_load", lambda name: calls.append("loaded") or {})
    with pytest.raises(Prepared):
        mutate.run_one("m", new, children=1, again=True)
    assert calls == [True]  # fresh, and the last verdicts not loaded for an --again
    assert "its map changed since the cached run: every mutant again" in capsys.readouterr().out
