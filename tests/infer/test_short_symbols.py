"""A symbol of too few bars beside others: ``predict`` and ``evaluate`` forecast and score the
others and name it in one warning (they refused the whole folder before); with no symbol
long enough they still refuse."""

from __future__ import annotations

import logging
from pathlib import Path

import polars as pl
import pytest

from demo_run import DemoRun
from foxhunt.errors import DataError
from foxhunt.infer.evaluate import evaluate_model
from foxhunt.infer.predict import predict_to_file

pytestmark = pytest.mark.slow  # the shared trained demo run (built once, for the slow tier)


def _with_short_symbol(demo_run: DemoRun, folder: Path, short: int) -> Path:
    """The run's ES bars and ``short`` bars of NQ (ES's last ones at four times the price)."""
    es = pl.read_parquet(demo_run.bars)
    prices = [pl.col(c) * 4 for c in ("open", "high", "low", "close")]
    nq = es.tail(short).with_columns(*prices, pl.lit("NQ").alias("symbol"))
    folder.mkdir()
    es.write_parquet(folder / "ES.parquet")
    nq.write_parquet(folder / "NQ.parquet")
    return folder


def test_predict_and_evaluate_leave_out_a_short_symbol_and_name_it(
    demo_run: DemoRun, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bars = _with_short_symbol(demo_run, tmp_path / "bars", 30)
    out = tmp_path / "f.parquet"
    with caplog.at_level(logging.WARNING):
        rows, origins, horizon = predict_to_file(
            demo_run.run, bars, out, batch_size=64, device="cpu"
        )
    assert rows == origins * horizon > 0
    assert pl.read_parquet(out)["symbol"].unique().to_list() == ["ES"]
    left_out = [r.getMessage() for r in caplog.records if "left out" in r.getMessage()]
    assert len(left_out) == 1 and "'NQ' (30 bars); need at least" in left_out[0]
    # NQ was never reached: no "not trained on NQ" for a symbol that was not forecast
    assert not any("not trained on" in r.getMessage() for r in caplog.records)

    caplog.clear()
    with caplog.at_level(logging.WARNING):
        result = evaluate_model(
            demo_run.run,
            bars,
            batch_size=256,
            device="cpu",
            out=tmp_path / "e.json",
            scope="all",
        )
    assert list(result["per_symbol"]) == ["ES"]
    assert any("left out 1 symbol" in r.getMessage() for r in caplog.records)


def test_with_no_symbol_long_enough_predict_still_refuses(
    demo_run: DemoRun, tmp_path: Path
) -> None:
    es = pl.read_parquet(demo_run.bars).tail(30)
    es.write_parquet(tmp_path / "ES.parquet")
    out = tmp_path / "f.parquet"
    with pytest.raises(DataError, match=r"symbol 'ES' has 30 bars; need at least"):
        predict_to_file(demo_run.run, tmp_path / "ES.parquet", out, batch_size=64, device="cpu")
    assert not out.exists()
