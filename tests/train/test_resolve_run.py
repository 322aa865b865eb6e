"""What ``foxhunt train`` may do with a run directory (train/resolve.py: ``run_root`` and
``resolve_run``): a fresh run in an empty one, ``--resume`` of an unfinished one with its own
config and bars, ``--overwrite`` of a finished one; every other case stops with a message that
says what to pass instead."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from foxhunt.artifacts.rundir import RunDir
from foxhunt.config import preset
from foxhunt.errors import InputError, ModelDirError
from foxhunt.train.resolve import resolve_run, run_root


def test_the_run_root_is_resume_then_out_then_runs_preset() -> None:
    cfg = preset("demo")
    assert run_root(cfg, Path("o"), Path("r")) == Path("r")
    assert run_root(cfg, Path("o"), None) == Path("o")
    assert run_root(cfg, None, None) == Path("runs") / "demo"
    assert isinstance(run_root(cfg, "o", None), Path)  # type: ignore[arg-type]
    assert isinstance(run_root(cfg, None, "r"), Path)  # type: ignore[arg-type]


def _epochs(root: Path, n: int, final: bool = False) -> None:
    """Checkpoint sidecars of ``n`` complete epochs (and the final weights with theirs)."""
    ckpts = RunDir(root).checkpoints
    ckpts.mkdir(parents=True, exist_ok=True)
    for epoch in range(1, n + 1):
        (ckpts / f"tft_epoch_{epoch}.json").write_text("{}")
    if final:
        (ckpts / f"tft_final_epoch{n}.safetensors").write_bytes(b"")
        (ckpts / f"tft_final_epoch{n}.json").write_text("{}")


def _trained(root: Path, bars: Path | None, epochs: int = 2, final: bool = False) -> None:
    """A run directory as training leaves it: config.json, run.json naming its bars, epochs."""
    root.mkdir(parents=True, exist_ok=True)
    cfg = preset("fast")
    cfg.save(RunDir(root).config)
    info = {"bars": str(bars)} if bars is not None else {}
    RunDir(root).run_info.write_text(json.dumps(info))
    _epochs(root, epochs, final)


def test_a_fresh_run_goes_into_an_empty_or_new_directory(tmp_path: Path) -> None:
    cfg = preset("demo")
    for root in (tmp_path / "new", tmp_path):
        run, got, bars = resolve_run(cfg, Path("b.csv"), root, resume=False, overwrite=False)
        assert (run.root, got, bars) == (root, cfg, Path("b.csv"))
    _epochs(tmp_path / "died", 0)  # a checkpoints folder but no complete epoch: nothing to keep
    run, _, _ = resolve_run(cfg, Path("b.csv"), tmp_path / "died", resume=False, overwrite=False)
    assert run.root == tmp_path / "died"


def test_a_fresh_run_needs_bars(tmp_path: Path) -> None:
    with pytest.raises(
        InputError, match=r"^foxhunt train: --bars FILE is required \(or --resume RUN_DIR\)$"
    ):
        resolve_run(preset("demo"), None, tmp_path, resume=False, overwrite=False)
    with pytest.raises(InputError, match=r"^foxhunt train: --bars FILE is required"):
        resolve_run(preset("demo"), None, tmp_path, resume=False, overwrite=True)


def test_a_trained_or_finished_run_is_not_replaced_without_overwrite(tmp_path: Path) -> None:
    cfg = preset("demo")
    _trained(tmp_path / "part", Path("b.csv"), epochs=1)
    part = re.escape(str(tmp_path / "part"))
    with pytest.raises(
        InputError,
        match=rf"^{part} already holds a trained run; continue it with --resume {part}, "
        r"start over with --overwrite, or choose another --out$",
    ):
        resolve_run(cfg, Path("b.csv"), tmp_path / "part", resume=False, overwrite=False)
    _trained(tmp_path / "done", Path("b.csv"), epochs=2, final=True)
    done = re.escape(str(tmp_path / "done"))
    with pytest.raises(
        InputError,
        match=rf"^{done} already holds a finished run; replace it with --overwrite or choose "
        r"another --out$",
    ):
        resolve_run(cfg, Path("b.csv"), tmp_path / "done", resume=False, overwrite=False)
    for name in ("part", "done"):  # --overwrite: this run's config and bars
        run, got, bars = resolve_run(cfg, "x.csv", tmp_path / name, resume=False, overwrite=True)  # type: ignore[arg-type]
        assert (run.root, got, bars) == (tmp_path / name, cfg, Path("x.csv"))


def test_resume_takes_the_runs_own_config_and_recorded_bars(tmp_path: Path) -> None:
    bars = tmp_path / "ES.csv"
    bars.write_text("x")
    root = tmp_path / "run"
    _trained(root, bars)
    run, cfg, got = resolve_run(preset("demo"), None, root, resume=True, overwrite=False)
    assert run.root == root and cfg == preset("fast") and got == bars
    run, cfg, got = resolve_run(preset("demo"), "o.csv", root, resume=True, overwrite=False)  # type: ignore[arg-type]
    assert cfg == preset("fast") and got == Path("o.csv")  # --bars given: those


def test_resume_finds_recorded_bars_given_as_a_glob(tmp_path: Path) -> None:
    (tmp_path / "ES_1.csv").write_text("x")
    _trained(tmp_path / "run", tmp_path / "ES_*.csv")
    _, _, got = resolve_run(preset("demo"), None, tmp_path / "run", resume=True, overwrite=False)
    assert got == tmp_path / "ES_*.csv"


def test_resume_refuses_what_it_cannot_continue(tmp_path: Path) -> None:
    cfg = preset("demo")
    with pytest.raises(
        InputError, match=r"^--overwrite starts a new run; it cannot be used with --resume$"
    ):
        resolve_run(cfg, None, tmp_path, resume=True, overwrite=True)
    empty = re.escape(str(tmp_path))
    with pytest.raises(ModelDirError, match=rf"^{empty}: not a run directory"):
        resolve_run(cfg, None, tmp_path, resume=True, overwrite=False)

    _trained(tmp_path / "done", tmp_path / "b.csv", final=True)
    done = re.escape(str(tmp_path / "done"))
    with pytest.raises(
        InputError,
        match=rf"^{done}: this run already finished \(a final checkpoint exists\); nothing to "
        r"resume$",
    ):
        resolve_run(cfg, tmp_path / "b.csv", tmp_path / "done", resume=True, overwrite=False)

    _trained(tmp_path / "nobars", None)
    info = re.escape(str(RunDir(tmp_path / "nobars").run_info))
    with pytest.raises(ModelDirError, match=rf"^{info}: no bars path recorded; pass --bars FILE$"):
        resolve_run(cfg, None, tmp_path / "nobars", resume=True, overwrite=False)
    RunDir(tmp_path / "nobars").run_info.write_text("[1]")  # not a dict
    with pytest.raises(ModelDirError, match=rf"^{info}: no bars path recorded"):
        resolve_run(cfg, None, tmp_path / "nobars", resume=True, overwrite=False)

    _trained(tmp_path / "gone", tmp_path / "gone.csv")
    gone, path = re.escape(str(tmp_path / "gone")), re.escape(str(tmp_path / "gone.csv"))
    with pytest.raises(
        ModelDirError,
        match=rf"^{gone}: the bars it was trained on, {path}, are gone; pass them with "
        r"--bars FILE \(the same bars: resume checks their fingerprint\)$",
    ):
        resolve_run(cfg, None, tmp_path / "gone", resume=True, overwrite=False)


def test_resume_names_a_corrupt_run_json(tmp_path: Path) -> None:
    _trained(tmp_path / "run", tmp_path / "b.csv")
    info = RunDir(tmp_path / "run").run_info
    info.write_text("{not json")
    where = re.escape(str(info))
    with pytest.raises(ModelDirError, match=rf"^{where}: run.json is corrupt \(not valid JSON\)$"):
        resolve_run(preset("demo"), None, tmp_path / "run", resume=True, overwrite=False)
