"""``foxhunt features``, ``predict``, ``backtest`` and ``quantize``, in process with their heavy
work replaced by recorders: what each passes on, prints and refuses. Their real runs are tested
as ``slow`` subprocess or demo-run tests, which ``make mutate`` leaves out; the work itself is
tested where it lives."""

from __future__ import annotations

import argparse
import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from tests.commands.conftest import ESCAPE

from foxhunt.cli import build_parser
from foxhunt.commands import backtest as backtest_cmd
from foxhunt.commands import features as features_cmd
from foxhunt.commands import predict as predict_cmd
from foxhunt.commands import quantize as quantize_cmd
from foxhunt.data.read.options import ReadOptions
from foxhunt.errors import InputError
from foxhunt.memory.preparation import preparation_peak


def _args(argv: list[str]) -> argparse.Namespace:
    return build_parser().parse_args(argv)


@pytest.fixture
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    """rich's consoles as wide as any line the tests print (one line each)."""
    monkeypatch.setenv("COLUMNS", "400")


def _spec(**extra: Any) -> types.SimpleNamespace:
    return types.SimpleNamespace(
        historical=["h"] * 210, known=["k"] * 10, static=["s"] * 5, targets=["t"] * 7, **extra
    )


# --- foxhunt features -------------------------------------------------------------------------


def test_features_writes_one_file_with_the_flags_it_was_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], wide: None
) -> None:
    calls: list[tuple[Any, ...]] = []

    def write_features(bars: Path, out: Path, **kw: Any) -> tuple[int, Any]:
        calls.append((bars, out, kw))
        return 12_345, _spec(warmup=99)

    monkeypatch.setattr("foxhunt.data.features.table.write_features", write_features)
    out = tmp_path / "f.parquet"
    a = _args(
        ["features", "--bars", str(tmp_path / "b.csv"), "--out", str(out), "--horizon", "7"]
        + ["--symbol", "ES", "--tz", "America/Chicago", "--allow-outliers"]
        + ["--instruments", str(tmp_path / "i.toml")]
    )
    assert a.func is features_cmd.run
    a.func(a)
    before = calls[0][2].pop("before")  # the memory check, with this run's horizon
    assert before(1_000, 1) == preparation_peak(1_000, 225, 7)
    assert calls == [
        (
            tmp_path / "b.csv",
            out,
            {
                "horizon": 7,
                "options": ReadOptions(symbol="ES", tz="America/Chicago"),
                "instruments": tmp_path / "i.toml",
                "allow_outliers": True,
            },
        )
    ]
    assert capsys.readouterr().out == (
        f"wrote 12,345 rows x (210 observed + 10 known + 5 static features, 7 targets) to {out} "
        "(99 warm-up rows and the last 7 rows of each symbol dropped)\n"
    )


def test_features_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wide: None) -> None:
    seen: dict[str, Any] = {}

    def write_features(bars: Path, out: Path, **kw: Any) -> tuple[int, Any]:
        seen.update(kw)
        return 1, _spec(warmup=0)

    monkeypatch.setattr("foxhunt.data.features.table.write_features", write_features)
    a = _args(["features", "--bars", str(tmp_path / "b.csv"), "--out", str(tmp_path / "f.pq")])
    a.func(a)
    assert callable(seen.pop("before"))
    assert seen == {
        "horizon": 10,
        "options": ReadOptions(),
        "instruments": None,
        "allow_outliers": False,
    }


def test_features_shards_write_a_store_and_count_what_was_computed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], wide: None
) -> None:
    calls: list[tuple[Any, ...]] = []

    def write_feature_store(bars: Path, out: Path, **kw: Any) -> tuple[Any, int]:
        calls.append((bars, out, kw))
        shards = [types.SimpleNamespace(rows=n) for n in (1_000, 2_500, 40)]
        return types.SimpleNamespace(spec=_spec(), shards=shards), 2

    monkeypatch.setattr("foxhunt.data.store.write.write_feature_store", write_feature_store)
    monkeypatch.setattr(
        "foxhunt.data.features.table.write_features",
        lambda *a, **k: pytest.fail("--shards writes a store, not one file"),
    )
    out = tmp_path / "store"
    a = _args(
        ["features", "--bars", str(tmp_path / "b"), "--out", str(out), "--shards"]
        + ["--horizon", "3", "--bar-minutes", "5", "--instruments", str(tmp_path / "i.csv")]
    )
    a.func(a)
    assert calls == [
        (
            tmp_path / "b",
            out,
            {
                "horizon": 3,
                "allow_outliers": False,
                "options": ReadOptions(bar_minutes=5),
                "instruments": tmp_path / "i.csv",
            },
        )
    ]
    assert capsys.readouterr().out == (
        f"wrote {out / 'manifest.json'}: 3 symbols (2 computed, 1 unchanged), 3,540 rows x "
        "(210 observed + 10 known + 5 static features, 7 targets)\n"
    )


@pytest.mark.parametrize("shards", [False, True])
def test_features_on_a_terminal_shows_its_work_on_stderr_and_one_plain_line_on_stdout(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    terminal: None,
    shards: bool,
) -> None:
    store = types.SimpleNamespace(spec=_spec(), shards=[types.SimpleNamespace(rows=5)])
    monkeypatch.setattr("foxhunt.data.store.write.write_feature_store", lambda *a, **k: (store, 1))
    monkeypatch.setattr(
        "foxhunt.data.features.table.write_features", lambda *a, **k: (5, _spec(warmup=3))
    )
    monkeypatch.chdir(tmp_path)  # short paths: the status line fits the terminal
    bars, out = Path("bars.csv"), Path("out")
    a = _args(["features", "--bars", str(bars), "--out", str(out)] + ["--shards"] * shards)
    a.func(a)
    captured = capsys.readouterr()
    status = f"writing the feature store {out}" if shards else f"computing features of {bars}"
    assert status in captured.err and ESCAPE.search(captured.err)
    # the summary: one line however narrow the terminal, no colour
    assert captured.out.count("\n") == 1 and len(captured.out) > 80
    assert not ESCAPE.search(captured.out)
    assert captured.out.startswith(
        f"wrote {out / 'manifest.json'}: 1 symbols" if shards else "wrote 5 rows"
    )


def test_features_refuses_an_out_over_its_bars(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bars = tmp_path / "b.csv"
    bars.write_text("x\n")
    for name in ("data.features.table.write_features", "data.store.write.write_feature_store"):
        monkeypatch.setattr(f"foxhunt.{name}", lambda *a, **k: pytest.fail("ran"))
    a = _args(["features", "--bars", str(bars), "--out", str(bars)])
    with pytest.raises(InputError, match=f"^--out {bars} is the input --bars {bars};"):
        a.func(a)
    # a store's folder holding the bars clashes too
    a = _args(["features", "--bars", str(bars), "--out", str(tmp_path), "--shards"])
    with pytest.raises(InputError, match=f"^--out {tmp_path} holds the input --bars {bars};"):
        a.func(a)


# --- foxhunt predict --------------------------------------------------------------------------


def test_predict_passes_its_flags_and_counts_the_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], wide: None
) -> None:
    calls: list[tuple[Any, ...]] = []

    def predict_to_file(model: Path, bars: Path, out: Path, **kw: Any) -> tuple[int, int, int]:
        assert kw.pop("progress") is not None
        calls.append((model, bars, out, kw))
        return 1_200, 120, 10

    monkeypatch.setattr("foxhunt.infer.predict.predict_to_file", predict_to_file)
    a = _args(
        ["predict", "--model", str(tmp_path / "run"), "--bars", str(tmp_path / "b.csv")]
        + ["--out", str(tmp_path / "p.parquet"), "--batch-size", "64", "--device", "cuda:1"]
        + ["--instruments", str(tmp_path / "i.csv"), "--strict", "--allow-outliers"]
        + ["--tz", "Europe/London"]
    )
    assert a.func is predict_cmd.run
    a.func(a)
    assert calls == [
        (
            tmp_path / "run",
            tmp_path / "b.csv",
            tmp_path / "p.parquet",
            {
                "batch_size": 64,
                "device": "cuda:1",
                "instruments": tmp_path / "i.csv",
                "strict": True,
                "allow_outliers": True,
                "long": False,
                "read": {"tz": "Europe/London"},
            },
        )
    ]
    # the progress bar is transient: it leaves only the summary line
    assert capsys.readouterr().err.strip() == (
        f"wrote 1,200 rows (120 origins x 10 horizons, a column per quantile) to "
        f"{tmp_path / 'p.parquet'}"
    )


def test_predict_long_counts_the_quantiles_and_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], wide: None
) -> None:
    seen: dict[str, Any] = {}

    def predict_to_file(model: Path, bars: Path, out: Path, **kw: Any) -> tuple[int, int, int]:
        seen.update(kw)
        return 3 * 4 * 9, 3, 4

    monkeypatch.setattr("foxhunt.infer.predict.predict_to_file", predict_to_file)
    out = tmp_path / "p.parquet"
    a = _args(
        ["predict", "--model", str(tmp_path / "run"), "--bars", str(tmp_path / "b.csv")]
        + ["--out", str(out), "--long"]
    )
    a.func(a)
    assert {k: seen[k] for k in ("batch_size", "device", "strict", "allow_outliers", "long")} == {
        "batch_size": 256,
        "device": "cpu",
        "strict": False,
        "allow_outliers": False,
        "long": True,
    }
    assert seen["instruments"] is None and seen["read"] == {}
    assert capsys.readouterr().err.strip() == (
        f"wrote 108 rows (3 origins x 4 horizons x 9 quantiles) to {out}"
    )


def test_predict_on_a_terminal_draws_its_progress_on_stderr_and_erases_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    terminal: None,
) -> None:
    def predict_to_file(model: Path, bars: Path, out: Path, **kw: Any) -> tuple[int, int, int]:
        task = kw["progress"].add_task("forecasting windows", total=3)
        kw["progress"].advance(task, 3)
        return 30, 3, 10

    monkeypatch.setattr("foxhunt.infer.predict.predict_to_file", predict_to_file)
    monkeypatch.chdir(tmp_path)
    a = _args(["predict", "--model", "run", "--bars", "b.csv", "--out", "p.parquet"])
    a.func(a)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "forecasting windows" in captured.err
    # transient: the finished bar is erased (cursor up, erase line) before the summary
    assert "\x1b[1A\x1b[2Kwrote" in captured.err
    assert captured.err.endswith("p.parquet\n")


def test_predict_follow_passes_its_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, ...]] = []

    def follow_path(model: Path, follow: Path, out: Path, **kw: Any) -> None:
        calls.append((model, follow, out, kw))

    monkeypatch.setattr("foxhunt.infer.follow.follow_path", follow_path)
    monkeypatch.setattr(
        "foxhunt.infer.predict.predict_to_file", lambda *a, **k: pytest.fail("--follow ran predict")
    )
    a = _args(
        ["predict", "--model", str(tmp_path / "run"), "--follow", str(tmp_path / "live.csv")]
        + ["--out", str(tmp_path / "f.csv"), "--poll-seconds", "0.5", "--max-polls", "3"]
        + ["--strict", "--device", "cuda", "--engine", "onnx", "--symbol", "NQ"]
    )
    a.func(a)
    assert calls == [
        (
            tmp_path / "run",
            tmp_path / "live.csv",
            tmp_path / "f.csv",
            {
                "poll_seconds": 0.5,
                "max_polls": 3,
                "strict": True,
                "device": "cuda",
                "read": {"symbol": "NQ"},
                "engine": "onnx",
            },
        )
    ]
    calls.clear()
    a = _args(
        ["predict", "--model", str(tmp_path / "run"), "--follow", str(tmp_path / "live.csv")]
        + ["--out", str(tmp_path / "f.csv")]
    )
    a.func(a)
    assert calls[0][3] == {
        "poll_seconds": 5.0,
        "max_polls": None,
        "strict": False,
        "device": "cpu",
        "read": {},
        "engine": a.engine,
    }


def test_predict_refusals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("foxhunt.infer.follow.follow_path", lambda *a, **k: pytest.fail("ran"))
    a = _args(
        ["predict", "--model", str(tmp_path / "run"), "--follow", str(tmp_path / "live.csv")]
        + ["--out", str(tmp_path / "f.csv"), "--long"]
    )
    with pytest.raises(InputError, match=r"^--long: not with --follow \(the live file keeps"):
        a.func(a)
    live = tmp_path / "live.csv"
    a = _args(
        ["predict", "--model", str(tmp_path / "run"), "--follow", str(live), "--out", str(live)]
    )
    with pytest.raises(InputError, match=f"^--out {live} is the input --follow {live};"):
        a.func(a)
    monkeypatch.setattr("foxhunt.infer.predict.predict_to_file", lambda *a, **k: pytest.fail("ran"))
    bars, run = tmp_path / "b.csv", tmp_path / "run"
    a = _args(["predict", "--model", str(run), "--bars", str(bars), "--out", str(bars)])
    with pytest.raises(InputError, match=f"^--out {bars} is the input --bars {bars};"):
        a.func(a)
    a = _args(["predict", "--model", str(run), "--bars", str(bars), "--out", str(run)])
    with pytest.raises(InputError, match=f"^--out {run} is the input --model {run};"):
        a.func(a)


# --- foxhunt backtest -------------------------------------------------------------------------


def _backtest_result(ensemble: dict[str, Any] | None = None) -> dict[str, Any]:
    score = {"mean_pinball": 0.0012345, "coverage": {"10-90": 0.8125}}
    other = {"mean_pinball": 0.002, "coverage": {}}
    result: dict[str, Any] = {
        "bars": "ES.csv",
        "refit": "once",
        "embargo": 60,
        "folds": [
            {"fold": 1, "n_windows": 1_500, "scores": {"tft": score, "naive": other}},
            {"fold": 2, "n_windows": 25, "scores": {"tft": other, "naive": score}},
        ],
        "pooled": {
            "n_windows": 1_525,
            "scores": {"tft": score, "naive": other},
            "comparisons": {
                "naive": {
                    "pooled": {"relative": -0.0375, "p_value": 0.01234, "verdict": "TFT wins"}
                }
            },
        },
    }
    if ensemble:
        result["ensemble"] = ensemble
    return result


BACKTEST_TABLE = """\
  backtest of ES.csv: 2 folds (once refit, embargo 60 bars), 1,525 windows — mean pinball (bp)
┏━━━━━━━┳━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━┓
┃ model ┃ fold 1 (1,500) ┃ fold 2 (25) ┃ pooled ┃ 10–90 cover ┃ TFT − model ┃      p ┃ verdict  ┃
┡━━━━━━━╇━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━┩
│ TFT   │         12.345 │      20.000 │ 12.345 │      81.2 % │             │        │          │
│ naive │         20.000 │      12.345 │ 20.000 │           — │     -3.75 % │ 0.0123 │ TFT wins │
└───────┴────────────────┴─────────────┴────────┴─────────────┴─────────────┴────────┴──────────┘"""
"""``_backtest_result()`` as the table prints it: numbers right-aligned, names and verdicts left,
the pooled comparison against the TFT on each baseline's row."""


def test_backtest_passes_its_config_and_prints_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], wide: None
) -> None:
    calls: list[tuple[Any, ...]] = []

    def backtest(bars: Path, cfg: Any, **kw: Any) -> dict[str, Any]:
        progress = kw.pop("progress")
        calls.append((bars, cfg, kw, progress))
        return _backtest_result()

    monkeypatch.setattr("foxhunt.infer.backtest.backtest", backtest)
    out = tmp_path / "bt"
    a = _args(
        ["backtest", "--bars", str(tmp_path / "ES.csv"), "--preset", "demo", "--folds", "2"]
        + ["--refit", "once", "--ensemble", "3", "--device", "cuda", "--out", str(out)]
        + ["--overwrite", "--epochs", "2", "--num-threads", "1"]
    )
    assert a.func is backtest_cmd.run
    a.func(a)
    [(bars, cfg, kw, progress)] = calls
    assert bars == tmp_path / "ES.csv"
    assert cfg.train.device == "cuda" and cfg.train.epochs == 2
    assert cfg.train.num_threads == 1  # the busy-CPU warning names --num-threads 1
    assert kw == {
        "folds": 2,
        "refit": "once",
        "out": out,
        "device": "cuda",
        "ensemble": 3,
        "overwrite": True,
    }
    lines = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    assert lines[:-1] == BACKTEST_TABLE.splitlines()
    assert lines[-1] == f"written: {out / 'backtest.json'}, {out / 'backtest.png'}"
    # each fold's training bar: the fold's epochs, from the epoch it starts at
    from foxhunt.commands.progress import TrainProgress

    bar = progress(4, 2)
    assert isinstance(bar, TrainProgress)
    with bar:
        pass
    drawn = capsys.readouterr().err
    assert "epochs" in drawn and "1/4" in drawn, drawn


def test_backtest_json_prints_the_result_and_shows_no_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: dict[str, Any] = {}

    def backtest(bars: Path, cfg: Any, **kw: Any) -> dict[str, Any]:
        seen.update(kw)
        return _backtest_result()

    monkeypatch.setattr("foxhunt.infer.backtest.backtest", backtest)
    monkeypatch.chdir(tmp_path)
    a = _args(["backtest", "--bars", "data/ES_5m.csv", "--preset", "demo", "--json"])
    a.func(a)
    assert seen == {
        "folds": 3,
        "refit": "every",
        "out": Path("runs") / "backtest-ES_5m",
        "device": "cpu",
        "progress": None,
        "ensemble": 1,
        "overwrite": False,
    }
    text = capsys.readouterr().out
    assert text.endswith("}\n") and json.loads(text) == _backtest_result()
    assert text.startswith('{\n  "bars"')


def test_backtest_prints_each_ensemble_training(
    capsys: pytest.CaptureFixture[str], wide: None
) -> None:
    from rich.console import Console

    ensemble = {
        "members": 3,
        "trainings": [
            {"fold": 1, "seconds": 12.34, "peak_rss_bytes": 512 * 2**20, "run": "bt/fold-1/run"},
            {"fold": 2, "seconds": 5.0, "peak_rss_bytes": 2**30, "run": "bt/fold-2/run"},
        ],
    }
    backtest_cmd.print_backtest(_backtest_result(ensemble), Console())
    lines = capsys.readouterr().out.splitlines()
    from foxhunt.memory.units import format_bytes

    assert lines[-2:] == [
        f"fold 1: 3 members trained one after another in 12.3 s, peak RSS "
        f"{format_bytes(512 * 2**20)} (the largest member's); bt/fold-1/run",
        f"fold 2: 3 members trained one after another in 5.0 s, peak RSS "
        f"{format_bytes(2**30)} (the largest member's); bt/fold-2/run",
    ]


def test_backtest_refuses_an_out_holding_its_bars(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("foxhunt.infer.backtest.backtest", lambda *a, **k: pytest.fail("ran"))
    bars = tmp_path / "ES.csv"
    bars.write_text("x\n")
    a = _args(["backtest", "--bars", str(bars), "--preset", "demo", "--out", str(tmp_path)])
    with pytest.raises(InputError, match=f"^--out {tmp_path} holds the input --bars {bars};"):
        a.func(a)


# --- foxhunt quantize -------------------------------------------------------------------------


def _quantized(**extra: Any) -> dict[str, Any]:
    return {
        "source": "runs/demo",
        "out": "runs/demo-int8",
        "precision": "int8",
        "mode": "dynamic",
        "disk_bytes": {"fp32": 4_000_000, "quantized": 1_000_000},
        "param_bytes": {"fp32": 3_000_000, "quantized": 0},
        **extra,
    }


def _rows(text: str) -> dict[str, list[str]]:
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if cells and cells[0]:
            rows[cells[0]] = cells[1:]
    return rows


QUANTIZE_TABLE = """\
                  runs/demo -> runs/demo-int8: int8 (static)
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┳━━━━━━━━━━┓
┃                                     ┃       fp32 ┃ int8 (static) ┃   change ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━━━┩
│ size on disk (weights file)         │    4.00 MB │       1.00 MB │  -75.0 % │
│ parameter bytes (in memory)         │    3.00 MB │           0 B │ -100.0 % │
│ inference peak RSS delta (batch 32) │    1.05 MB │        524 kB │  -50.0 % │
│ latency per forecast (batch 1)      │    2.00 ms │       1.50 ms │  -25.0 % │
│ latency per forecast (batch 32)     │    1.00 ms │       0.50 ms │  -50.0 % │
│ mean pinball loss (test split)      │ 12.0000 bp │    12.3000 bp │   +2.5 % │
└─────────────────────────────────────┴────────────┴───────────────┴──────────┘"""
"""The full comparison as ``foxhunt quantize`` prints it: row names left, numbers right, the
change relative to fp32 (per forecast: the batch's latency divided by its size)."""


def test_quantize_passes_its_flags_and_prints_the_comparison(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], wide: None
) -> None:
    calls: list[tuple[Any, ...]] = []
    inference = {
        side: {
            "peak_delta_bytes": delta,
            "latency_ms": {"1": l1, "32": l32},
            "threads": 2,
            "repeats": 7,
        }
        for side, delta, l1, l32 in (("fp32", 2**20, 2.0, 32.0), ("quantized", 2**19, 1.5, 16.0))
    }

    def quantize_run(model: Path, out: Path, **kw: Any) -> dict[str, Any]:
        calls.append((model, out, kw))
        return _quantized(
            mode="static",
            inference=inference,
            pinball={"fp32": 0.0012, "quantized": 0.00123},
            pinball_on="test split",
        )

    monkeypatch.setattr("foxhunt.quantize.recipe.quantize_run", quantize_run)
    a = _args(
        ["quantize", "--model", str(tmp_path / "run"), "--out", str(tmp_path / "q")]
        + ["--mode", "static", "--calibration-bars", str(tmp_path / "c.csv")]
        + ["--bars", str(tmp_path / "b.csv")]
    )
    assert a.func is quantize_cmd.run
    a.func(a)
    assert calls == [
        (
            tmp_path / "run",
            tmp_path / "q",
            {
                "mode": "static",
                "precision": "int8",
                "calibration_bars": tmp_path / "c.csv",
                "bars": tmp_path / "b.csv",
            },
        )
    ]
    text = capsys.readouterr().out
    lines = [line.rstrip() for line in text.splitlines()]
    assert lines[:-1] == QUANTIZE_TABLE.splitlines()
    assert text.splitlines()[-1] == (
        "memory and latency: fresh process each, 2 CPU threads, median of 7 passes; "
        "wall-clock numbers vary with machine load."
    )


def test_quantize_without_inference_or_pinball(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], wide: None
) -> None:
    seen: dict[str, Any] = {}

    def quantize_run(model: Path, out: Path, **kw: Any) -> dict[str, Any]:
        seen.update(kw)
        return _quantized(precision="bf16", mode=None, pinball_on="no test windows")

    monkeypatch.setattr("foxhunt.quantize.recipe.quantize_run", quantize_run)
    a = _args(
        ["quantize", "--model", str(tmp_path / "run"), "--out", str(tmp_path / "q")]
        + ["--precision", "bf16"]
    )
    a.func(a)
    assert seen == {"mode": "dynamic", "precision": "bf16", "calibration_bars": None, "bars": None}
    text = capsys.readouterr().out
    assert text.splitlines()[0].strip() == "runs/demo -> runs/demo-int8: bf16"
    rows = _rows(text)
    assert rows["mean pinball loss"] == ["—", "—", "no test windows"]
    assert "memory and latency" not in text and len(rows) == 3
    assert quantize_cmd._change(0.0, 5.0) == "—"


def test_quantize_refuses_an_out_over_its_inputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("foxhunt.quantize.recipe.quantize_run", lambda *a, **k: pytest.fail("ran"))
    out = tmp_path / "q"
    out.mkdir()
    bars = out / "c.csv"
    bars.write_text("x\n")
    run = tmp_path / "run"
    a = _args(["quantize", "--model", str(run), "--out", str(run)])
    with pytest.raises(InputError, match=f"^--out {run} is the input --model {run};"):
        a.func(a)
    a = _args(["quantize", "--model", str(run), "--out", str(out), "--calibration-bars", str(bars)])
    with pytest.raises(
        InputError, match=f"^--out {out} holds the input --calibration-bars {bars};"
    ):
        a.func(a)
    a = _args(["quantize", "--model", str(run), "--out", str(out), "--bars", str(bars)])
    with pytest.raises(InputError, match=f"^--out {out} holds the input --bars {bars};"):
        a.func(a)


# --- python -m foxhunt.commands.measure (the measuring child) ----------------------------------


@pytest.fixture
def measuring(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """The child's process-wide steps and its measurement, recorded."""
    from foxhunt.commands import measure

    seen: dict[str, list[Any]] = {"thp": [], "allocator": [], "measured": [], "threads": []}

    def measure_here(cfg: Any, mode: str, steps: int) -> dict[str, Any]:
        seen["measured"].append((cfg, mode, steps))
        return {"peak_bytes": 123}

    monkeypatch.setattr(measure, "enable_huge_pages", lambda: seen["thp"].append(True))
    monkeypatch.setattr(measure, "apply_cpu_allocator", seen["allocator"].append)
    monkeypatch.setattr(measure, "measure_here", measure_here)
    monkeypatch.setattr(measure.torch, "set_num_threads", seen["threads"].append)
    return seen


def test_measure_child_defaults_to_tft225_training(
    measuring: dict[str, list[Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    from foxhunt.commands.measure import main
    from foxhunt.config import preset

    assert main([]) == 0
    [(cfg, mode, steps)] = measuring["measured"]
    assert (cfg, mode, steps) == (preset("tft-225"), "train", 2)
    assert measuring["thp"] == [True] and measuring["allocator"] == [cfg]
    assert measuring["threads"] == []
    out = capsys.readouterr().out
    assert out.endswith("}\n") and out.count("\n") == 1
    assert json.loads(out) == {
        "peak_bytes": 123,
        "command": [Path(sys.executable).name, "-m", "foxhunt.commands.measure"],
    }


def test_measure_child_run_as_a_script_reads_and_records_its_arguments(
    measuring: dict[str, list[Any]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from foxhunt.commands.measure import main

    monkeypatch.setattr(sys, "argv", ["measure.py", "--steps", "3"])
    assert main() == 0
    assert measuring["measured"][0][2] == 3
    assert json.loads(capsys.readouterr().out)["command"][1:] == [
        "-m", "foxhunt.commands.measure", "--steps", "3"
    ]  # fmt: skip


def test_measure_child_applies_each_override(
    measuring: dict[str, list[Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    from foxhunt.commands.measure import main
    from foxhunt.config import preset

    argv = ["--preset", "demo", "--batch-size", "4", "--precision", "bf16", "--checkpointing"]
    argv += ["--mode", "infer", "--steps", "5", "--num-threads", "3", "--cpu-allocator", "lean"]
    assert main(argv) == 0
    [(cfg, mode, steps)] = measuring["measured"]
    assert (mode, steps) == ("infer", 5) and measuring["threads"] == [3]
    demo = preset("demo")
    assert cfg == demo.replace(
        train={
            "batch_size": 4,
            "micro_batch_size": None,
            "precision": "bf16",
            "checkpointing": True,
            "cpu_allocator": "lean",
        }
    )
    assert measuring["allocator"] == [cfg]
    assert json.loads(capsys.readouterr().out)["command"][1:] == [
        "-m",
        "foxhunt.commands.measure",
        *argv,
    ]


def test_measure_child_default_allocator_and_a_config(
    tmp_path: Path, measuring: dict[str, list[Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    from foxhunt.commands.measure import main
    from foxhunt.config import preset

    demo = preset("demo")
    assert main(["--config-json", json.dumps(demo.to_dict()), "--default-allocator"]) == 0
    assert measuring["measured"][-1][0] == demo.replace(train={"cpu_allocator": "glibc"})
    path = tmp_path / "c.json"
    demo.replace(train={"batch_size": 8, "micro_batch_size": 2}).save(path)
    assert main(["--config", str(path), "--cpu-allocator", "balanced"]) == 0
    cfg = measuring["measured"][-1][0]
    assert (cfg.train.batch_size, cfg.train.micro_batch_size) == (8, 2)
    assert cfg.train.cpu_allocator == "balanced"
    # a batch size given replaces the config's micro-batches too
    assert main(["--config", str(path), "--batch-size", "6"]) == 0
    cfg = measuring["measured"][-1][0]
    assert (cfg.train.batch_size, cfg.train.micro_batch_size) == (6, None)
    capsys.readouterr()


@pytest.mark.parametrize(
    "argv",
    [["--config-json", "{not json"], ["--config-json", '{"model": 3}'], ["--preset", "nope"]],
)
def test_measure_child_refuses_a_bad_config_in_one_line(
    argv: list[str], measuring: dict[str, list[Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    from foxhunt.commands.measure import main

    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert measuring["measured"] == [] and measuring["allocator"] == []
