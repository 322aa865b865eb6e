"""End to end through the CLI: a run with the user's covariates and a non-default encoder
length, horizon and width trains, evaluates and predicts; the forecast reads the known-future
values of the future rows; the run's files follow the chosen shape."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from foxhunt.cli import main
from foxhunt.data.read.bars import read_bars
from foxhunt.data.sources.demo import write_demo_bars
from hand_weights import input_dependent_head

SHAPE = ["--encoder-length", "8", "--horizon", "3", "--hidden", "16", "--heads", "2"]
INPUTS = ["--observed-cols", "spread", "--known-cols", "event", "--static-cols", "sector"]


def _with_covariates(src: Path, dst: Path, *, future_event: float | None = None) -> Path:
    b = pl.read_parquet(src)
    rng = np.random.default_rng(0)
    b = b.with_columns(
        pl.Series("spread", rng.random(b.height) + 0.25),
        (pl.col("ts").dt.hour() == 14).cast(pl.Float64).alias("event"),
        pl.lit(3.0).alias("sector"),
    )
    if future_event is not None:  # three future rows: empty prices, the known value filled
        step = b["ts"][-1] - b["ts"][-2]
        ahead = pl.DataFrame({"ts": [b["ts"][-1] + step * k for k in (1, 2, 3)]}).with_columns(
            symbol=pl.lit("ES"), event=pl.lit(future_event)
        )
        b = pl.concat([b, ahead], how="diagonal_relaxed")
    b.write_parquet(dst)
    return dst


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("inputs")
    raw = root / "raw.parquet"
    write_demo_bars(raw, n_bars=900, seed=3)
    bars = _with_covariates(raw, root / "ES.parquet")
    out = root / "run"
    argv = ["train", "--bars", str(bars), "--preset", "demo", "--max-steps", "2", "--epochs", "1"]
    argv += ["--num-threads", "1", "--out", str(out), *SHAPE, *INPUTS]
    assert main(argv) == 0
    return {"root": root, "raw": raw, "bars": bars, "run": out}


@pytest.mark.slow
@pytest.mark.subprocess
def test_run_stores_inputs_and_shape(run) -> None:
    cfg = json.loads((run["run"] / "config.json").read_text())
    m, d = cfg["model"], cfg["data"]
    assert (m["encoder_length"], m["horizon"], m["hidden"], m["n_heads"]) == (8, 3, 16, 2)
    assert (m["n_static"], m["n_historical"], m["n_known"]) == (6, 211, 11)
    assert (d["observed_cols"], d["known_cols"], d["static_cols"]) == (
        ["spread"],
        ["event"],
        ["sector"],
    )
    spec = json.loads((run["run"] / "features.json").read_text())["spec"]
    assert spec["targets"] == ["target__h1", "target__h2", "target__h3"]
    assert spec["historical"][-1] == "obs__user_spread" and spec["static"][-1] == (
        "static__user_sector"
    )


@pytest.mark.slow
@pytest.mark.subprocess
def test_evaluate_and_predict(run, capsys) -> None:
    assert main(["evaluate", "--model", str(run["run"]), "--bars", str(run["bars"])]) == 0
    assert "test split of the training bars" in " ".join(capsys.readouterr().out.split())
    root = run["root"]
    input_dependent_head(run["run"])
    outs = []
    for value in (0.0, 1.0):
        bars = _with_covariates(run["raw"], root / f"ES_f{value}.parquet", future_event=value)
        out = root / f"f{value}.parquet"
        argv = ["predict", "--model", str(run["run"]), "--bars", str(bars), "--out", str(out)]
        assert main(argv) == 0
        outs.append(pl.read_parquet(out))
    a, b = outs
    assert a.height == b.height and sorted(set(a["horizon"].to_list())) == [1, 2, 3]
    q = [c for c in a.columns if c.startswith("return_q")]
    assert len(q) == 9
    last = a["origin_ts"].max()
    # The last origin's decoder reads the future rows' event value; earlier origins do not.
    assert (
        not a.filter(pl.col("origin_ts") == last)
        .select(q)
        .equals(b.filter(pl.col("origin_ts") == last).select(q))
    )
    assert (
        a.filter(pl.col("origin_ts") < last - pl.duration(hours=1))
        .select(q)
        .equals(b.filter(pl.col("origin_ts") < last - pl.duration(hours=1)).select(q))
    )


@pytest.mark.slow
@pytest.mark.subprocess
def test_predict_without_future_rows_exits_2(run, capsys) -> None:
    out = run["root"] / "nofuture.parquet"
    argv = ["predict", "--model", str(run["run"]), "--bars", str(run["bars"]), "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "known-future columns event need future rows" in err and "\n" not in err


@pytest.mark.slow
@pytest.mark.subprocess
def test_missing_covariate_column_exits_2(run, capsys) -> None:
    argv = ["train", "--bars", str(run["raw"]), "--preset", "demo", "--max-steps", "1"]
    argv += ["--out", str(run["root"] / "bad"), "--observed-cols", "spread"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "column 'spread' is missing" in err and str(run["raw"]) in err and "\n" not in err


def test_memory_estimate_follows_the_inputs(capsys) -> None:
    def params(*flags: str) -> int:
        main(["memory", "--preset", "demo", "--json", *flags])
        return json.loads(capsys.readouterr().out)["components"]["parameters"]["estimated_bytes"]

    base = params()
    assert params("--observed-cols", "a,b") > base
    assert params("--features", "minimal") < base


@pytest.mark.slow
@pytest.mark.subprocess
def test_feature_file_and_target_travel_with_the_run(run, capsys, caplog) -> None:
    root = run["root"]
    feats = root / "feats.txt"
    feats.write_text("ret1_lag0\nrsi_14\nspread_z = spread * 2 - LAG(spread) OVER (ORDER BY ts)\n")
    out = root / "run_custom"
    argv = ["train", "--bars", str(run["bars"]), "--preset", "demo", "--max-steps", "1"]
    argv += ["--epochs", "1", "--num-threads", "1", "--out", str(out), *SHAPE]
    argv += ["--features", str(feats), "--target", "high"]
    assert main(argv) == 0
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["model"]["n_historical"] == 3 and cfg["data"]["target"] == "high"
    assert cfg["data"]["feature_lines"][2].startswith("spread_z = ")
    # the classical models forecast the close: a run on another target stores none of them
    assert "classical" not in json.loads((out / "baselines.json").read_text())
    feats.unlink()  # the run holds the lines: evaluate and predict do not need the file
    assert main(["evaluate", "--model", str(out), "--bars", str(run["bars"])]) == 0
    pred = root / "custom.parquet"
    argv = ["predict", "--model", str(out), "--bars", str(run["bars"]), "--out", str(pred)]
    assert main(argv) == 0 and pl.read_parquet(pred).height > 0
    # the rows' close, price_q* and realised_* are of the target (high), as return_q* are
    got = pl.read_parquet(pred).join(
        read_bars(run["bars"]).select("symbol", pl.col("ts").alias("origin_ts"), "high"),
        on=["symbol", "origin_ts"],
    )
    assert got.height > 0 and (got["close"] == got["high"]).all()
    assert "close, price_q* and realised_* are of column 'high'" in caplog.text
    # the streaming Forecaster (serve, predict --follow) anchors them on the high too
    from foxhunt.infer.forecaster import Forecaster

    high = root / "run_high"  # the built-in features: the incremental path serves it too
    argv = ["train", "--bars", str(run["bars"]), "--preset", "demo", "--max-steps", "1"]
    argv += ["--epochs", "1", "--num-threads", "1", "--out", str(high), *SHAPE]
    assert main([*argv, "--target", "high"]) == 0
    bars = read_bars(run["bars"])
    live = Forecaster.load(high, incremental=True).update(bars)
    tail = Forecaster.load(high, incremental=False).update(bars)
    last = bars.group_by("symbol").agg(pl.col("high").last())
    for rows in (live, tail):
        joined = rows.join(last, on="symbol")
        assert joined.height > 0 and (joined["close"] == joined["high"]).all()


@pytest.mark.slow
@pytest.mark.subprocess
def test_forward_looking_feature_file_exits_2(run, capsys) -> None:
    feats = run["root"] / "peek.txt"
    feats.write_text("ret1_lag0\npeek = LEAD(close, 2) OVER (ORDER BY ts)\n")
    argv = ["memory", "--preset", "demo", "--features", str(feats)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "peek.txt, line 2: feature 'peek' reads later bars" in err and "\n" not in err
