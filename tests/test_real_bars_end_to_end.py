"""Issue 12: each real 1-minute file of tests/data/fixtures/real/ (spot GBP/USD and USD/JPY
without volume, a 24/7 BTC perpetual), as found, through the whole chain a user runs:
inspect -> features (finite; a prefix's features equal the full run's) -> train --max-steps ->
evaluate -> predict -> the streaming Forecaster gives predict's forecasts."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from foxhunt.cli import main
from foxhunt.data.features.table import compute_features
from foxhunt.data.read.bars import read_bars
from foxhunt.infer.forecaster import Forecaster

REAL = Path(__file__).parent / "data" / "fixtures" / "real"


def _small_demo(path: Path) -> Path:
    """The demo preset (its features, targets, recipe and horizon 10) with a narrow network: what
    these tests check (the files read as found, finite scores, streaming == predict) does not
    depend on the width, and predict forecasts every one of the file's ~30,000 windows."""
    from foxhunt.config import demo

    small = {"hidden": 8, "n_heads": 2, "encoder_length": 16, "variable_width": 2}
    demo().replace(model=small).save(path)
    return path


FILES = {
    "gbpusd-m1-bid-2012.csv.gz": ("GBPUSD", "fx_24x5"),
    "usdjpy-m1-bid-2013.csv.gz": ("USDJPY", "fx_24x5"),
    "btc-perp-20211231-20220201_1m.csv.gz": ("BTC-PERP", "24x7"),
}


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("name", sorted(FILES))
def test_real_file_end_to_end(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bars_file = REAL / name
    symbol, calendar = FILES[name]

    assert main(["data", "inspect", str(bars_file), "--json"]) == 0
    (summary,) = json.loads(capsys.readouterr().out)["symbols"]
    assert (summary["symbol"], summary["calendar"]) == (symbol, calendar)
    assert summary["closed_hours_warning"] is None

    feats = tmp_path / "features.parquet"
    assert main(["features", "--bars", str(bars_file), "--out", str(feats)]) == 0
    full = pl.read_parquet(feats)
    values = full.drop("ts", "symbol").to_numpy()
    assert full.height > 5000 and np.isfinite(values).all()
    # Causal: the features of the first 3,000 bars are the full run's first rows.
    bars = read_bars(bars_file)
    prefix = compute_features(bars.head(3000), 10, with_targets=False, instruments={})
    cols = [c for c in prefix.columns if not c.startswith("target__")]
    np.testing.assert_allclose(
        prefix.head(2000).select(cols[2:]).to_numpy(),
        full.head(2000).select(cols[2:]).to_numpy(),
        rtol=2.5e-7,
        atol=1e-12,
    )

    run = tmp_path / "run"
    cfg = str(_small_demo(tmp_path / "demo_small.json"))
    train = ["train", "--config", cfg, "--bars", str(bars_file), "--out", str(run)]
    assert main([*train, "--epochs", "1", "--max-steps", "3", "--num-threads", "1"]) == 0
    stored = json.loads((run / "instruments.json").read_text())
    assert stored[symbol]["calendar"] == calendar

    capsys.readouterr()
    assert main(["evaluate", "--model", str(run), "--bars", str(bars_file), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["split"] == "test split of the training bars" and result["n_windows"] > 500
    assert np.isfinite(result["scores"]["tft"]["mean_pinball"])

    out = tmp_path / "forecast.parquet"
    assert main(["predict", "--model", str(run), "--bars", str(bars_file), "--out", str(out)]) == 0
    batch = pl.read_parquet(out)

    # The last 6 bars one at a time into the streaming Forecaster: predict's forecasts.
    fc = Forecaster.load(run)
    fc.update(bars.head(bars.height - 6), forecast=False)
    stream = pl.concat([fc.update(bars.slice(i, 1)) for i in range(bars.height - 6, bars.height)])
    assert stream.height == 6 * 10
    key = ["symbol", "origin_ts", "horizon"]
    joined = stream.join(batch, on=key, how="left", suffix="_batch")
    assert joined["close_batch"].null_count() == 0
    ret = [c for c in stream.columns if c.startswith("return_q")]
    np.testing.assert_allclose(
        joined.select(ret).to_numpy(),
        joined.select([f"{c}_batch" for c in ret]).to_numpy(),
        rtol=1e-4,
        atol=1e-8,
    )


def _vendor_cme_file(tmp_path: Path) -> Path:
    """ES 5-minute bars as a CME data vendor ships them: semicolon CSV, ``timestamp_utc``, an
    extra text column, the contract and bar size in the file name."""
    from foxhunt.data.sources.demo import demo_bars

    bars = demo_bars(2500, seed=4).with_columns(
        pl.col("ts").dt.strftime("%Y-%m-%dT%H:%M:%SZ").alias("timestamp_utc"),
        pl.lit("GLBX.MDP3").alias("venue"),
    )
    path = tmp_path / "ESZ4.GLBX_5min_bars_20241001_20241031.csv"
    cols = ["timestamp_utc", "open", "high", "low", "close", "volume", "venue"]
    bars.select(cols).write_csv(path, separator=";")
    return path


def _daily_equity_file(tmp_path: Path) -> Path:
    """Real S&P 500 daily bars (arch's wheel) in a file named by an ETF ticker, no symbol
    column: an equity on the NYSE calendar, never mapped onto the ES future."""
    from foxhunt.data.sources.index_daily import index_daily_bars

    spx = index_daily_bars().filter(pl.col("symbol") == "ES").drop("symbol")
    path = tmp_path / "SPY.csv"
    spx.with_columns(pl.col("ts").dt.date().alias("Date")).select(
        "Date", "open", "high", "low", "close", "volume"
    ).write_csv(path)
    return path


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize(
    "make,symbol,calendar",
    [(_vendor_cme_file, "ES", "cme_equity"), (_daily_equity_file, "SPY", "xnys")],
    ids=["vendor-cme-5min", "daily-equity-ticker"],
)
def test_vendor_files_train_and_evaluate_as_found(
    make, symbol: str, calendar: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bars_file = make(tmp_path)
    run = tmp_path / "run"
    cfg = str(_small_demo(tmp_path / "demo_small.json"))
    train = ["train", "--config", cfg, "--bars", str(bars_file), "--out", str(run)]
    assert main([*train, "--epochs", "1", "--max-steps", "3", "--num-threads", "1"]) == 0
    stored = json.loads((run / "instruments.json").read_text())
    assert list(stored) == [symbol] and stored[symbol]["calendar"] == calendar
    capsys.readouterr()
    assert main(["evaluate", "--model", str(run), "--bars", str(bars_file), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert np.isfinite(result["scores"]["tft"]["mean_pinball"]) and result["n_windows"] > 100
