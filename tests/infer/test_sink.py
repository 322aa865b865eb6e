"""ForecastSink: follow mode's output, appended to a CSV (a torn last line cut first) or the
latest forecast per symbol in parquet; the origins already written, and the refusals."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from foxhunt.errors import InputError
from foxhunt.infer.sink import ForecastSink


def _forecasts(rows: list[tuple[str, int, float]]) -> pl.DataFrame:
    """(symbol, minute of 2024-01-02 10:00 UTC, q50) rows."""
    return pl.DataFrame(
        {
            "symbol": [r[0] for r in rows],
            "origin_ts": [datetime(2024, 1, 2, 10, r[1], tzinfo=UTC) for r in rows],
            "q50": [r[2] for r in rows],
        },
        schema={"symbol": pl.String, "origin_ts": pl.Datetime("us", "UTC"), "q50": pl.Float64},
    )


def _us(minute: int) -> int:
    return int(datetime(2024, 1, 2, 10, minute, tzinfo=UTC).timestamp()) * 1_000_000


def test_csv_polls_are_appended_under_one_header(tmp_path: Path) -> None:
    out = tmp_path / "f.csv"
    sink = ForecastSink(out)
    assert sink.last_origins() == {}
    sink.write(_forecasts([("ES", 0, 1.0), ("007", 0, 2.0)]))
    sink.write(_forecasts([("ES", 5, 3.0)]))
    sink.write(_forecasts([]))  # a poll without forecasts writes nothing
    lines = out.read_text().splitlines()
    assert lines[0] == "symbol,origin_ts,q50" and len(lines) == 4
    assert lines[1:] == [
        "ES,2024-01-02T10:00:00.000000+0000,1.0",
        "007,2024-01-02T10:00:00.000000+0000,2.0",
        "ES,2024-01-02T10:05:00.000000+0000,3.0",
    ]
    # a restart reads the latest origin per symbol, the symbol as written ("007", not 7)
    assert ForecastSink(out).last_origins() == {"ES": _us(5), "007": _us(0)}


def test_an_empty_csv_gets_its_header(tmp_path: Path) -> None:
    out = tmp_path / "f.csv"
    out.write_text("")
    ForecastSink(out).write(_forecasts([("ES", 0, 1.0)]))
    assert out.read_text().splitlines()[0] == "symbol,origin_ts,q50"


def test_a_half_written_last_line_is_cut_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "f.csv"
    whole = "symbol,origin_ts,q50\nES,2024-01-02T10:00:00.000000+0000,1.0\n"
    out.write_text(whole + "ES,2024-01-02T10:0")
    with caplog.at_level(logging.WARNING):
        sink = ForecastSink(out)
    assert out.read_text() == whole
    assert [r.getMessage() for r in caplog.records] == [
        f"{out}: cut off a half-written last line (18 bytes)"
    ]
    assert sink.last_origins() == {"ES": _us(0)}
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        ForecastSink(out)  # a whole file is left as it is
    assert out.read_text() == whole and caplog.records == []


@pytest.mark.parametrize(("text", "kept"), [("x", ""), ("a\nb\nc", "a\nb\n"), ("\n", "\n")])
def test_only_the_bytes_after_the_last_newline_go(tmp_path: Path, text: str, kept: str) -> None:
    out = tmp_path / "f.csv"
    out.write_text(text)
    ForecastSink(out)
    assert out.read_text() == kept


@pytest.mark.parametrize("name", ["f.parquet", "f.pq", "f.PQ"])
def test_parquet_keeps_the_latest_forecast_of_every_symbol(tmp_path: Path, name: str) -> None:
    out = tmp_path / name
    ForecastSink(out).write(_forecasts([("NQ", 0, 1.0), ("ES", 0, 2.0), ("YM", 0, 3.0)]))
    sink = ForecastSink(out)  # a restart keeps what is there
    sink.write(_forecasts([("ES", 5, 4.0)]))
    got = pl.read_parquet(out)
    assert got.equals(_forecasts([("ES", 5, 4.0), ("NQ", 0, 1.0), ("YM", 0, 3.0)]))
    assert sink.last_origins() == {"ES": _us(5), "NQ": _us(0), "YM": _us(0)}


def test_other_outputs_are_refused_in_words(tmp_path: Path) -> None:
    with pytest.raises(InputError) as refused:
        ForecastSink(tmp_path / "f.json")
    assert str(refused.value) == (
        f"--out {tmp_path / 'f.json'}: follow mode writes .csv (appended) or .parquet (latest)"
    )
    with pytest.raises(InputError) as refused:
        ForecastSink(tmp_path / "no" / "f.csv")
    assert str(refused.value) == (
        f"--out {tmp_path / 'no' / 'f.csv'}: directory {tmp_path / 'no'} does not exist"
    )
    bad = tmp_path / "f.parquet"
    bad.write_bytes(b"not parquet")
    with pytest.raises(InputError) as refused:
        ForecastSink(bad)
    text = str(refused.value)
    assert text.startswith(f"--out {bad}: exists but cannot be read as forecasts (")
    assert text.endswith("); move it away or choose another --out") and "\n" not in text


def test_a_symbol_of_digits_only_is_read_back_as_written(tmp_path: Path) -> None:
    out = tmp_path / "f.csv"
    ForecastSink(out).write(_forecasts([("007", 0, 1.0), ("007", 5, 2.0)]))
    assert ForecastSink(out).last_origins() == {"007": _us(5)}
