"""The follower, planted bugs of issue 28, with a fake forecaster (no model, no training):

* a poll of ONLY bad lines still moves the saved position past them (else every restart
  re-reads them as new, warns again and counts them again);
* on restart the output file wins over the record: a kill between writing a forecast and
  saving the record must not write that origin a second time.

``follow_path`` runs whole (reader, record, sink, restart) with ``Forecaster`` replaced."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pytest

from foxhunt.config import RunConfig
from foxhunt.errors import DataError
from foxhunt.infer import follow as follow_module
from foxhunt.infer.follow import follow_path
from foxhunt.infer.follow_state import sidecar_path

T0 = datetime(2024, 1, 2, 14, 30, tzinfo=UTC)


class FakeForecaster:
    """Holds the latest bar time per symbol; "forecasts" one row (its close) from it."""

    allowed = frozenset({"ES"})
    loaded = SimpleNamespace(config=RunConfig())  # a run that stored no read flags

    def __init__(self) -> None:
        self.last: dict[str, int] = {}
        self.close: dict[str, float] = {}

    @classmethod
    def load(cls, model_dir: Path, device: object = None, engine: str = "torch") -> FakeForecaster:
        return cls()

    @property
    def symbols(self) -> tuple[str, ...]:
        return tuple(sorted(self.last))

    def last_ts(self, symbol: str) -> int | None:
        return self.last.get(symbol)

    def ready(self, symbol: str) -> bool:
        return symbol in self.last

    def update(self, bars: pl.DataFrame, *, forecast: bool = True) -> None:
        for sym, t, c in bars.select("symbol", pl.col("ts").dt.epoch("us"), "close").iter_rows():
            self.last[sym], self.close[sym] = t, c

    def closed_bars(self, frame: pl.DataFrame) -> list[str]:
        return []  # no calendar: nothing said

    def forecast(self, symbols: list[str]) -> pl.DataFrame:
        ready = [s for s in symbols if self.ready(s)]
        return pl.DataFrame(
            {
                "symbol": ready,
                "origin_ts": [self.last[s] for s in ready],
                "horizon": [1] * len(ready),
                "close": [self.close[s] for s in ready],
            },
            schema={
                "symbol": pl.String,
                "origin_ts": pl.Int64,
                "horizon": pl.Int16,
                "close": pl.Float64,
            },
        ).with_columns(pl.col("origin_ts").cast(pl.Datetime("us", "UTC")))


def _bar(i: int) -> str:
    t = (T0 + timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"{t},ES,{100 + i},{101 + i},{99 + i},{100.5 + i},{10 + i}\n"


class Feed:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.write_text("ts,symbol,open,high,low,close,volume\n")

    def append(self, text: str) -> None:
        with open(self.path, "a") as f:
            f.write(text)


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # noqa: ANN201
    """``run(feed, out)``: one ``follow_path`` process of one poll (a restart every call)."""
    monkeypatch.setattr(follow_module, "Forecaster", FakeForecaster)

    def once(feed: Feed, out: Path) -> int:
        return follow_path(tmp_path / "model", feed.path, out, poll_seconds=0, max_polls=1)

    return once


def _skip_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().endswith("(skipped)")]


def test_a_poll_of_only_bad_lines_is_recorded_and_not_rewarned(
    run, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="foxhunt")
    feed, out = Feed(tmp_path / "ES_live.csv"), tmp_path / "fc.csv"
    feed.append("".join(_bar(i) for i in range(5)))
    assert run(feed, out) == 1
    # Only bad lines arrive: garbage and a repeat of the latest bar.
    feed.append("hello world\n" + _bar(4))
    caplog.clear()
    assert run(feed, out) == 0
    assert len(_skip_warnings(caplog)) == 2
    record = json.loads(sidecar_path(out).read_text())
    assert record["position"] == feed.path.stat().st_size  # past the bad lines
    assert (record["skipped"]["malformed"], record["skipped"]["duplicate"]) == (1, 1)
    # Restarts: the bad lines are history now, not news.
    for _ in range(2):
        caplog.clear()
        assert run(feed, out) == 0
        assert _skip_warnings(caplog) == []
    feed.append(_bar(5))
    assert run(feed, out) == 1
    record = json.loads(sidecar_path(out).read_text())
    assert (record["skipped"]["malformed"], record["skipped"]["duplicate"]) == (1, 1)
    assert record["bars"] == 6


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_kill_between_forecast_and_record_does_not_repeat_the_origin(
    run, tmp_path: Path, suffix: str
) -> None:
    feed, out = Feed(tmp_path / "ES_live.csv"), tmp_path / f"fc{suffix}"
    feed.append("".join(_bar(i) for i in range(5)))
    assert run(feed, out) == 1
    before = sidecar_path(out).read_text()  # the record as it was before the next poll
    feed.append(_bar(5))
    assert run(feed, out) == 1  # the forecast from bar 5 is written ...
    sidecar_path(out).write_text(before)  # ... and the kill came before the record was saved
    assert json.loads(before)["last_origin"]["ES"] == (T0 + timedelta(minutes=4)).isoformat()
    assert run(feed, out) == 0  # the output says bar 5 has its forecast
    feed.append(_bar(6))
    assert run(feed, out) == 1
    if suffix == ".csv":
        origins = pl.read_csv(out, schema_overrides={"origin_ts": pl.String})["origin_ts"]
        got = origins.str.to_datetime(time_unit="us", time_zone="UTC").to_list()
        assert got == [T0 + timedelta(minutes=m) for m in (4, 5, 6)]  # each origin once
    else:
        latest = pl.read_parquet(out)
        assert latest["origin_ts"].to_list() == [T0 + timedelta(minutes=6)]


class Sayer(FakeForecaster):
    """Refuses the bar whose close is 103.5 (as a check the screen does not make) and says a
    line for each bar it is asked about, as bars where the calendar is shut."""

    asked: list[list[float]] = []

    def update(self, bars: pl.DataFrame, *, forecast: bool = True) -> None:
        if (bars["close"] == 103.5).any():
            raise DataError("Forecaster.update: row 0, symbol 'ES': refused")
        super().update(bars, forecast=forecast)

    def closed_bars(self, frame: pl.DataFrame) -> list[str]:
        Sayer.asked.append(frame["close"].to_list())
        return [f"ES: {frame.height} bars in hours calendar x does not trade"]


def test_closed_bar_lines_are_of_the_bars_taken_and_name_the_feed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The closed-hours lines judge the bars the forecaster took: a bar it refused after the
    screen (skipped as invalid) is not among them; each line names the feed."""
    monkeypatch.setattr(follow_module, "Forecaster", Sayer)
    Sayer.asked = []
    feed = Feed(tmp_path / "ES_live.csv")
    feed.append("".join(_bar(i) for i in range(6)))
    caplog.set_level(logging.WARNING, logger="foxhunt")
    follow_path(tmp_path / "model", feed.path, tmp_path / "fc.csv", poll_seconds=0, max_polls=1)
    assert Sayer.asked == [[100.5, 101.5, 102.5, 104.5, 105.5]]
    said = [r.getMessage() for r in caplog.records]
    assert f"{feed.path}: ES: 5 bars in hours calendar x does not trade" in said
