"""Hostile and careless use of inference outputs (issue 17): an ``--out`` that is an input, bars
of symbols the model never saw, and where evaluation results go."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from demo_run import DemoRun
from foxhunt.artifacts.rundir import RunDir
from foxhunt.cli import main
from foxhunt.data.sources.demo import write_demo_bars
from foxhunt.train.reporting.report import write_report


@pytest.fixture
def run(demo_run: DemoRun, tmp_path: Path) -> Path:
    """A private copy of the shared tiny run (evaluate writes into its model directory)."""
    path = tmp_path / "run"
    shutil.copytree(demo_run.run, path)
    for left in path.glob("evaluation*.json"):  # what other tests' evaluate wrote into the share
        left.unlink()
    return path


@pytest.fixture(scope="module")
def nq_bars(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("nq") / "NQ.parquet"
    write_demo_bars(path, n_bars=600, seed=5, symbol="NQ")
    return path


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str], *words: str) -> None:
    capsys.readouterr()
    assert main(argv) == 2, argv
    err = capsys.readouterr().err.strip()
    assert err.startswith("foxhunt: error:") and len(err.splitlines()) == 1, err
    for w in words:
        assert w in err, err


@pytest.mark.slow
def test_out_equal_to_an_input_is_refused_and_the_input_kept(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bars = tmp_path / "ES.parquet"
    write_demo_bars(bars, n_bars=400, seed=1)
    link = tmp_path / "link.parquet"
    link.symlink_to(bars)
    feed = tmp_path / "feed.csv"
    feed.write_text("ts,symbol,open,high,low,close,volume\n")
    weights = next((run / "checkpoints").glob("tft_final_*.safetensors"))
    inputs = {p: p.read_bytes() for p in (bars, feed, weights, run / "config.json")}
    m, b = str(run), str(bars)
    cases = [
        (["features", "--bars", b, "--out", b], "is the input --bars"),
        (["features", "--bars", b, "--out", str(tmp_path), "--shards"], "holds the input --bars"),
        (["predict", "--model", m, "--bars", b, "--out", str(link)], "is the input --bars"),
        (["predict", "--model", m, "--follow", str(feed), "--out", str(feed)], "--follow"),
        (["export", "--model", m, "--out", str(weights)], "is the input --model"),
        (["quantize", "--model", m, "--out", m], "is the input --model"),
        (["evaluate", "--model", m, "--bars", b, "--out", b], "is the input --bars"),
        (["evaluate", "--model", m, "--bars", b, "--out", str(run / "config.json")], "--model"),
    ]
    for argv, words in cases:
        _refused(argv, capsys, words)
    assert {p: p.read_bytes() for p in inputs} == inputs
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["ES.parquet", "link.parquet", "feed.csv", "run"]
    )


@pytest.mark.slow
def test_untrained_symbols_warn_or_refuse_with_strict(
    run: Path,
    nq_bars: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    out = tmp_path / "f.parquet"
    predict = ["predict", "--model", str(run), "--bars", str(nq_bars), "--out", str(out)]
    with caplog.at_level(logging.WARNING):
        assert main(predict) == 0
    warned = [r.getMessage() for r in caplog.records if "not trained on" in r.getMessage()]
    assert len(warned) == 1 and "NQ (trained on ES)" in warned[0] and "--strict" in warned[0]
    # and the trained symbol the bars lack is named too
    assert any(
        "no bars of ES to score or forecast (1 of the 1 symbols" in r.getMessage()
        for r in caplog.records
    )
    out.unlink()
    _refused([*predict, "--strict"], capsys, "not trained on NQ", "--strict")
    assert not out.exists()

    caplog.clear()
    ev = tmp_path / "ev.json"
    # NQ's bars span the training years: by the run's last training end, none is new (an
    # unseen symbol over the training years is not out of time); --windows all scores them
    evaluate = ["evaluate", "--model", str(run), "--bars", str(nq_bars)]
    _refused(evaluate, capsys, "nothing new to score; --windows all scores them")
    evaluate += ["--windows", "all"]
    with caplog.at_level(logging.WARNING):
        assert main([*evaluate, "--out", str(ev)]) == 0
    assert sum("not trained on NQ" in r.getMessage() for r in caplog.records) == 1
    assert json.loads(ev.read_text())["untrained_symbols"] == ["NQ"]
    _refused([*evaluate, "--strict"], capsys, "not trained on NQ")
    assert not list(run.glob("evaluation*.json"))


@pytest.mark.slow
def test_trained_symbols_pass_silently(
    run: Path, demo_run: DemoRun, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "f.parquet"
    with caplog.at_level(logging.WARNING):
        argv = ["predict", "--model", str(run), "--bars", str(demo_run.bars), "--out", str(out)]
        assert main([*argv, "--strict"]) == 0
    assert not any("not trained on" in r.getMessage() for r in caplog.records)


@pytest.mark.slow
def test_evaluation_goes_where_out_says_else_beside_the_last(
    run: Path, demo_run: DemoRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evaluate = ["evaluate", "--model", str(run), "--bars", str(demo_run.bars), "--json"]
    report = (run / "report.md").read_text()
    out = tmp_path / "mine.json"
    capsys.readouterr()
    assert main([*evaluate, "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)  # --json still prints the result
    assert json.loads(out.read_text()) == printed
    assert not list(run.glob("evaluation*.json")) and (run / "report.md").read_text() == report
    _refused([*evaluate, "--out", str(tmp_path / "no" / "such.json")], capsys, "does not exist")

    for _ in range(3):
        assert main(evaluate) == 0
    assert sorted(p.name for p in run.glob("evaluation*.json")) == [
        "evaluation-2.json",
        "evaluation-3.json",
        "evaluation.json",
    ]
    (run / "evaluation.json").write_text(json.dumps({"first": True}))
    assert main(evaluate) == 0  # never over the first one
    assert json.loads((run / "evaluation.json").read_text()) == {"first": True}
    latest = json.loads((run / "evaluation-4.json").read_text())
    latest["bars"] = "LATEST_EVALUATION_BARS"
    (run / "evaluation-4.json").write_text(json.dumps(latest))
    write_report(RunDir(run))  # the report shows the latest
    assert "LATEST_EVALUATION_BARS" in (run / "report.md").read_text()
