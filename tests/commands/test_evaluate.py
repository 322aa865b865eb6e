"""``foxhunt evaluate --windows``: bars that extend the training file are scored only after the
training bars' end (one warning counts what was left out); ``test`` is the training file's test
split; ``all`` scores everything with a warning. A tiny trained run, through the CLI."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import polars as pl
import pytest

from foxhunt.cli import main
from foxhunt.data.sources.demo import write_demo_bars

SHAPE = ["--encoder-length", "8", "--horizon", "3", "--hidden", "16", "--heads", "2"]
TRAIN_BARS, NEW_BARS = 700, 100


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("evaluate_windows")
    full = root / "full.parquet"  # the training file plus NEW_BARS new bars
    write_demo_bars(full, n_bars=TRAIN_BARS + NEW_BARS, seed=3)
    train = root / "train.parquet"
    pl.read_parquet(full).head(TRAIN_BARS).write_parquet(train)
    out = root / "run"
    argv = ["train", "--bars", str(train), "--preset", "demo", "--max-steps", "2", "--epochs"]
    argv += ["1", "--num-threads", "1", "--out", str(out), *SHAPE]
    assert main(argv) == 0
    return {"root": root, "train": train, "full": full, "run": out}


def _evaluate(run: dict[str, Path], bars: str, *flags: str) -> list[str]:
    out = run["root"] / "ev.json"
    out.unlink(missing_ok=True)
    argv = ["evaluate", "--model", str(run["run"]), "--bars", str(run[bars]), "--out", str(out)]
    return [*argv, "--json", *flags]


def _origins(run: dict[str, Path]) -> pl.DataFrame:
    """Every window of the full file (what ``--windows all`` scores): symbol, origin time."""
    from foxhunt.artifacts.rundir import load_model_dir
    from foxhunt.data.pipeline import prepare_inference_data

    m = load_model_dir(run["run"])
    c = m.config
    return prepare_inference_data(
        pl.read_parquet(run["full"]), m.spec, m.scaler, c.model.encoder_length, c.model.horizon,
        with_target=True, instruments=m.instruments, inputs=c.data,
    ).origins()  # fmt: skip


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.slow
@pytest.mark.subprocess
def test_run_records_where_its_training_bars_end(run) -> None:
    info = json.loads((run["run"] / "run.json").read_text())
    last = pl.read_parquet(run["train"])["ts"][-1]
    assert info["data_end"] == {"ES": last.replace(tzinfo=None).isoformat() + "+00:00"}
    first = pl.read_parquet(run["train"])["ts"][0]
    assert info["data_start"] == {"ES": first.replace(tzinfo=None).isoformat() + "+00:00"}


@pytest.mark.slow
@pytest.mark.subprocess
def test_extended_file_scores_only_the_new_windows(run, capsys, caplog) -> None:
    with caplog.at_level(logging.WARNING):
        assert main(_evaluate(run, "full", "--windows", "all")) == 0
    every = json.loads(capsys.readouterr().out)
    assert every["split"] == "all windows"
    (warned,) = [w for w in _warnings(caplog) if "--windows all" in w]
    origins = _origins(run)
    assert len(origins) == every["n_windows"]
    end = pl.read_parquet(run["train"])["ts"][-1]  # the training file's last bar
    n_new = int((origins["ts"] >= end).sum())
    assert 0 < n_new < NEW_BARS and origins["ts"].is_sorted()
    inside = every["n_windows"] - n_new
    assert f"{inside} of {every['n_windows']} windows" in warned and "flatter" in warned

    caplog.clear()
    with caplog.at_level(logging.WARNING):
        assert main(_evaluate(run, "full")) == 0  # the default: new
    new = json.loads(capsys.readouterr().out)
    assert new["split"] == "windows after the training bars"
    assert new["n_windows"] == n_new  # origins from the training file's last bar on
    (left,) = [w for w in _warnings(caplog) if "left out" in w]
    assert f"left out {inside} of {every['n_windows']} windows" in left and "--windows all" in left
    assert main(_evaluate(run, "full", "--windows", "new")) == 0
    assert json.loads(capsys.readouterr().out)["n_windows"] == new["n_windows"]


@pytest.mark.slow
@pytest.mark.subprocess
def test_training_file_itself_is_scored_on_its_test_split(run, capsys) -> None:
    assert main(_evaluate(run, "train")) == 0
    default = json.loads(capsys.readouterr().out)
    assert default["split"] == "test split of the training bars"
    assert main(_evaluate(run, "train", "--windows", "test")) == 0
    test = json.loads(capsys.readouterr().out)
    assert test["split"] == default["split"] and test["n_windows"] == default["n_windows"]
    info = json.loads((run["run"] / "run.json").read_text())
    assert test["n_windows"] == info["windows"]["test"]

    assert main(_evaluate(run, "train", "--windows", "new")) == 2  # nothing after the end
    err = capsys.readouterr().err
    assert "nothing new to score" in err and "--windows test" in err
    assert "Traceback" not in err


@pytest.mark.slow
@pytest.mark.subprocess
def test_test_split_of_other_bars_is_refused(run, capsys) -> None:
    assert main(_evaluate(run, "full", "--windows", "test")) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no test split" in err and "--windows new" in err
    assert not (run["root"] / "ev.json").exists()


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_run_without_a_recorded_end_needs_windows_all(run, tmp_path, capsys) -> None:
    import shutil

    old = tmp_path / "old_run"
    shutil.copytree(run["run"], old)
    info = json.loads((old / "run.json").read_text())
    del info["data_end"]  # as a run trained before foxhunt recorded it
    (old / "run.json").write_text(json.dumps(info))
    argv = ["evaluate", "--model", str(old), "--bars", str(run["full"]), "--json"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--windows all" in err
    assert main([*argv, "--windows", "all"]) == 0
    assert json.loads(capsys.readouterr().out)["split"] == "all windows"
    assert main(["evaluate", "--model", str(old), "--bars", str(run["train"]), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["split"] == "test split of the training bars"


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_period_where_the_price_never_moved_gives_null_not_nan(run, capsys) -> None:
    """Every outcome 0 (a halted market): q-risk (Σ|y| = 0) is undefined. The JSON is strict,
    with ``null`` there (Python's ``NaN`` token is refused by jq and JavaScript), and the
    table prints a dash."""
    bars = pl.read_parquet(run["full"])
    last = bars["close"][TRAIN_BARS - 1]
    new = pl.int_range(pl.len()) >= TRAIN_BARS
    flat = bars.with_columns(
        [
            pl.when(new).then(pl.lit(last)).otherwise(pl.col(c)).alias(c)
            for c in ("open", "high", "low", "close")
        ]
    )
    run["flat"] = run["root"] / "flat.parquet"
    flat.write_parquet(run["flat"])
    assert main(_evaluate(run, "flat")) == 0
    printed = capsys.readouterr().out
    strict = json.loads(printed, parse_constant=lambda token: pytest.fail(f"bare {token} in JSON"))
    written = (run["root"] / "ev.json").read_text()
    assert json.loads(written, parse_constant=lambda t: pytest.fail(f"{t} in ev.json")) == strict
    assert strict["n_windows"] > 0
    assert strict["scores"]["tft"]["q_risk"] == {"P50": None, "P90": None}
    assert strict["scores"]["tft"]["mean_pinball"] > 0  # the bands still cost something

    argv = _evaluate(run, "flat")
    argv.remove("--json")
    assert main(argv) == 0
    table = capsys.readouterr().out
    assert "nan" not in table.lower() and "—" in table
