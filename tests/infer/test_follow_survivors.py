"""The follower's behaviours that survived mutation testing (docs/testing.md, ``follow``): its
defaults, the restart against an output or a record that is ahead, a record left alone by an
idle poll, the foreign-file refusal's edges, ``--strict`` on a row the forecaster refuses,
feeds stamped at the bar's end, bars before 1970, and the device and engine flags.

Most run ``follow_path`` whole with the fake forecaster of ``test_follow_audit.py`` (no model,
no training); the engine check loads the shared demo run."""

from __future__ import annotations

import json
import logging
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pytest

from demo_run import DemoRun
from foxhunt.artifacts.rundir import RunDir
from foxhunt.config import RunConfig
from foxhunt.errors import DataError, InputError
from foxhunt.infer import follow as follow_module
from foxhunt.infer.feed import BarFileReader
from foxhunt.infer.follow import follow, follow_path
from foxhunt.infer.follow_state import sidecar_path
from foxhunt.infer.sink import ForecastSink
from infer.test_follow_audit import T0, FakeForecaster, Feed, _bar


def _origins(out: Path) -> list[datetime]:
    """The ``origin_ts`` of every row of a CSV output, in file order."""
    origins = pl.read_csv(out, schema_overrides={"origin_ts": pl.String})["origin_ts"]
    return origins.str.to_datetime(time_unit="us", time_zone="UTC").to_list()


def _record(out: Path) -> dict:
    return json.loads(sidecar_path(out).read_text())


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> None:
    """``follow_path`` loads the fake forecaster instead of a model."""
    monkeypatch.setattr(follow_module, "Forecaster", FakeForecaster)


def _once(tmp_path: Path, feed: Feed, out: Path, **kwargs: object) -> int:
    """One ``follow_path`` process of one poll."""
    return follow_path(tmp_path / "model", feed.path, out, poll_seconds=0, max_polls=1, **kwargs)


# --- defaults and waits ------------------------------------------------------------------------


def test_follow_skips_bad_lines_and_waits_five_seconds_by_default(tmp_path: Path) -> None:
    """Called as a library, ``follow`` is not strict and waits 5 s between polls (none after
    the last)."""
    feed, out = Feed(tmp_path / "ES_live.csv"), tmp_path / "fc.csv"
    feed.append(_bar(0) + "hello world\n" + _bar(1))
    waits: list[float] = []
    written = follow(
        FakeForecaster(),  # type: ignore[arg-type]
        BarFileReader(feed.path),
        ForecastSink(out),
        max_polls=2,
        sleep=waits.append,
    )
    assert written == 1 and _origins(out) == [T0 + timedelta(minutes=1)]
    assert waits == [5.0]


def test_follow_path_waits_poll_seconds_between_polls(fake: None, tmp_path: Path) -> None:
    feed = Feed(tmp_path / "ES_live.csv")
    feed.append(_bar(0))
    waits: list[float] = []
    follow_path(tmp_path / "model", feed.path, tmp_path / "a.csv", max_polls=2, sleep=waits.append)
    assert waits == [5.0]  # the default
    waits.clear()
    follow_path(
        tmp_path / "model",
        feed.path,
        tmp_path / "b.csv",
        poll_seconds=0.25,
        max_polls=3,
        sleep=waits.append,
    )
    assert waits == [0.25, 0.25]


# --- polls and the record ----------------------------------------------------------------------


class Racing(FakeForecaster):
    """Its producer appends the next bar while the first forecast is computed."""

    feed: Feed
    raced = False

    def forecast(self, symbols: list[str]) -> pl.DataFrame:
        if symbols and not Racing.raced:
            Racing.raced = True
            Racing.feed.append(_bar(5))
        return super().forecast(symbols)


def test_max_polls_one_polls_once_and_a_bar_written_meanwhile_waits(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``--max-polls 1`` reads the file once: a bar appended while that poll forecasts is not
    read (nor its forecast written) until the next run, which takes it."""
    monkeypatch.setattr(follow_module, "Forecaster", Racing)
    feed, out = Feed(tmp_path / "ES_live.csv"), tmp_path / "fc.csv"
    feed.append("".join(_bar(i) for i in range(5)))
    Racing.feed, Racing.raced = feed, False
    assert _once(tmp_path, feed, out) == 1
    assert _origins(out) == [T0 + timedelta(minutes=4)]
    assert _record(out)["position"] < feed.path.stat().st_size
    assert _once(tmp_path, feed, out) == 1
    assert _origins(out) == [T0 + timedelta(minutes=m) for m in (4, 5)]


def test_an_idle_poll_leaves_the_record_alone(fake: None, tmp_path: Path) -> None:
    """The record is saved after a poll that changed it, not rewritten by every idle poll."""
    feed, out = Feed(tmp_path / "ES_live.csv"), tmp_path / "fc.csv"
    feed.append("".join(_bar(i) for i in range(3)))
    assert _once(tmp_path, feed, out) == 1
    record = sidecar_path(out)
    text = record.read_text()
    os.utime(record, ns=(1_000_000_000, 1_000_000_000))
    assert _once(tmp_path, feed, out) == 0  # a restart, nothing new
    assert record.stat().st_mtime_ns == 1_000_000_000 and record.read_text() == text


def test_a_restart_after_a_kill_before_the_first_record_does_not_repeat_the_origin(
    fake: None, tmp_path: Path
) -> None:
    """The first poll wrote its forecast and was killed before the record was first saved: the
    output alone says the origin has its forecast."""
    feed, out = Feed(tmp_path / "ES_live.csv"), tmp_path / "fc.csv"
    feed.append("".join(_bar(i) for i in range(5)))
    assert _once(tmp_path, feed, out) == 1
    sidecar_path(out).unlink()
    assert _once(tmp_path, feed, out) == 0
    feed.append(_bar(5))
    assert _once(tmp_path, feed, out) == 1
    assert _origins(out) == [T0 + timedelta(minutes=m) for m in (4, 5)]
    assert _record(out)["last_origin"] == {"ES": (T0 + timedelta(minutes=5)).isoformat()}


def test_a_record_ahead_of_the_output_is_not_forecast_again(fake: None, tmp_path: Path) -> None:
    """An output restored from an older copy: the record says the latest origin has its
    forecast already, and no origin the output or the record names is written again."""
    feed, out = Feed(tmp_path / "ES_live.csv"), tmp_path / "fc.csv"
    feed.append("".join(_bar(i) for i in range(5)))
    assert _once(tmp_path, feed, out) == 1
    older = out.read_bytes()
    feed.append(_bar(5))
    assert _once(tmp_path, feed, out) == 1
    out.write_bytes(older)  # the output now ends at origin 4, the record at origin 5
    assert _once(tmp_path, feed, out) == 0
    assert _record(out)["last_origin"] == {"ES": (T0 + timedelta(minutes=5)).isoformat()}
    feed.append(_bar(6))
    assert _once(tmp_path, feed, out) == 1
    assert _origins(out) == [T0 + timedelta(minutes=m) for m in (4, 6)]


def test_a_poll_logs_how_many_symbols_it_forecast_and_the_latest_origin(
    fake: None, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="foxhunt")
    feed, out = Feed(tmp_path / "ES_live.csv"), tmp_path / "fc.csv"
    feed.append("".join(_bar(i) for i in range(5)))
    assert _once(tmp_path, feed, out) == 1
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("forecast ")]
    assert said == [f"forecast 1 symbols at {T0 + timedelta(minutes=4)}"]


def _daily(day: datetime) -> str:
    return f"{day.strftime('%Y-%m-%dT%H:%M:%SZ')},ES,92.0,93.0,91.0,92.5,1000\n"


def test_bars_before_1970_and_at_its_first_instant_are_forecast_once(
    fake: None, tmp_path: Path
) -> None:
    """Daily index history from the 1960s: every origin, before the epoch or at it (time 0),
    gets its forecast, once."""
    feed, out = Feed(tmp_path / "ES_daily.csv"), tmp_path / "fc.csv"
    new_year = datetime(1970, 1, 1, tzinfo=UTC)
    feed.append("".join(_daily(new_year - timedelta(days=d)) for d in range(5, 0, -1)))
    assert _once(tmp_path, feed, out) == 1
    feed.append(_daily(new_year))
    assert _once(tmp_path, feed, out) == 1
    assert _once(tmp_path, feed, out) == 0  # nothing new
    assert _origins(out) == [new_year - timedelta(days=1), new_year]


# --- the foreign-file refusal ------------------------------------------------------------------


def _plain(i: int) -> str:
    """Bar ``i`` without a symbol column."""
    return _bar(i).replace(",ES,", ",")


def _symbol_less(path: Path, bars: range) -> Feed:
    feed = Feed(path)
    feed.path.write_text("ts,open,high,low,close,volume\n" + "".join(map(_plain, bars)))
    return feed


class TwoSymbols(FakeForecaster):
    allowed = frozenset({"NQ", "ES"})


def test_a_foreign_file_stops_naming_every_served_symbol(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(follow_module, "Forecaster", TwoSymbols)
    feed = _symbol_less(tmp_path / "live_ES.csv", range(3))
    with pytest.raises(DataError) as e:
        _once(tmp_path, feed, tmp_path / "fc.csv")
    assert str(e.value) == (
        f"{feed.path}: its rows are of symbol 'LIVE' (from the file's name), which the model "
        "does not serve (ES, NQ): --symbol NAME reads them as that symbol"
    )


def test_a_foreign_file_stops_a_reader_without_read_options(tmp_path: Path) -> None:
    """``follow`` given a reader that guesses how to read (no options) stops the same way."""
    feed = _symbol_less(tmp_path / "live_ES.csv", range(3))
    with pytest.raises(DataError, match=r"symbol 'LIVE' \(from the file's name\).*--symbol ES"):
        follow(
            FakeForecaster(),  # type: ignore[arg-type]
            BarFileReader(feed.path),
            ForecastSink(tmp_path / "fc.csv"),
            max_polls=1,
        )


def test_a_symbol_given_with_symbol_is_skipped_not_refused(
    fake: None, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``--symbol NQ`` on ``NQ_live.csv`` names the symbol itself, not the file's name: its
    lines are skipped (each with a warning) as any symbol the model does not serve."""
    feed, out = _symbol_less(tmp_path / "NQ_live.csv", range(3)), tmp_path / "fc.csv"
    caplog.set_level(logging.WARNING, logger="foxhunt")
    assert _once(tmp_path, feed, out, read={"symbol": "NQ"}) == 0
    assert _record(out)["skipped"]["unknown_symbol"] == 3
    skipped = [r.getMessage() for r in caplog.records if r.getMessage().endswith("(skipped)")]
    assert len(skipped) == 3 and "symbol 'NQ' is not one the model serves (ES)" in skipped[0]


def test_a_symbol_column_named_like_the_file_is_skipped_not_refused(
    fake: None, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``NQ.csv`` whose rows name their symbol ``NQ`` in a column: the rows say so, not the
    file's name, so they are skipped as any row of a symbol the model does not serve (it was
    refused as "(from the file's name)")."""
    feed, out = Feed(tmp_path / "NQ.csv"), tmp_path / "fc.csv"
    feed.append("".join(_bar(i).replace(",ES,", ",NQ,") for i in range(3)))
    caplog.set_level(logging.WARNING, logger="foxhunt")
    assert _once(tmp_path, feed, out) == 0
    assert _record(out)["skipped"]["unknown_symbol"] == 3
    skipped = [r.getMessage() for r in caplog.records if r.getMessage().endswith("(skipped)")]
    assert len(skipped) == 3 and "symbol 'NQ' is not one the model serves (ES)" in skipped[0]


def test_a_first_poll_of_only_malformed_lines_is_skipped_and_the_feed_followed(
    fake: None, tmp_path: Path
) -> None:
    """A feed whose first lines are garbage (no symbol to judge the file by) is no foreign
    file: they are skipped and counted, and the bars after them forecast."""
    feed, out = Feed(tmp_path / "ES_live.csv"), tmp_path / "fc.csv"
    feed.append("hello world\ngarbage\n")  # no symbol in either
    assert _once(tmp_path, feed, out) == 0
    assert _record(out)["skipped"]["malformed"] == 2
    feed.append("".join(_bar(i) for i in range(3)))
    assert _once(tmp_path, feed, out) == 1
    assert _origins(out) == [T0 + timedelta(minutes=2)]


def test_a_later_poll_of_only_the_file_names_symbol_is_skipped_not_refused(
    fake: None, tmp_path: Path
) -> None:
    """``NQ_feed.csv`` with a symbol column, of a model serving ES: once bars were taken, a
    poll whose only lines are NQ's skips them (the refusal is for a file none of whose
    lines the model serves), and the follower goes on."""
    feed, out = Feed(tmp_path / "NQ_feed.csv"), tmp_path / "fc.csv"
    feed.append("".join(_bar(i) for i in range(3)))
    assert _once(tmp_path, feed, out) == 1
    feed.append(_bar(3).replace(",ES,", ",NQ,") + _bar(4).replace(",ES,", ",NQ,"))
    assert _once(tmp_path, feed, out) == 0
    assert _record(out)["skipped"]["unknown_symbol"] == 2
    feed.append(_bar(5))
    assert _once(tmp_path, feed, out) == 1
    assert _origins(out) == [T0 + timedelta(minutes=m) for m in (2, 5)]


# --- a row the forecaster refuses after the screen ---------------------------------------------


class Refuser(FakeForecaster):
    """Refuses the bar whose close is 103.5 (a check the screen does not make)."""

    def update(self, bars: pl.DataFrame, *, forecast: bool = True) -> None:
        if (bars["close"] == 103.5).any():
            raise DataError("Forecaster.update: row 0, symbol 'ES': refused")
        super().update(bars, forecast=forecast)


def test_strict_stops_at_a_row_the_forecaster_refuses_naming_its_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(follow_module, "Forecaster", Refuser)
    feed, out = Feed(tmp_path / "ES_live.csv"), tmp_path / "fc.csv"
    feed.append("".join(_bar(i) for i in range(6)))  # bar 3 (line 5) is refused
    with pytest.raises(DataError) as e:
        _once(tmp_path, feed, out, strict=True)
    assert str(e.value) == f"{feed.path} line 5: invalid: symbol 'ES': refused"
    # without --strict it is skipped, and the record counts the bars taken
    assert _once(tmp_path, feed, out) == 1
    record = _record(out)
    assert record["bars"] == 5 and record["skipped"]["invalid"] == 1


# --- bars stamped at their end -----------------------------------------------------------------


class EndStamped(FakeForecaster):
    """A run of 1-minute bars stamped at their end (its ``run.json`` says the interval)."""

    @classmethod
    def load(cls, model_dir: Path, device: object = None, engine: str = "torch") -> EndStamped:
        run = RunDir(model_dir)
        run.root.mkdir(parents=True, exist_ok=True)
        run.run_info.write_text(json.dumps({"bar_interval_s": 60}))
        forecaster = cls()
        forecaster.loaded = SimpleNamespace(config=RunConfig(), run=run)
        return forecaster


def test_an_end_stamped_feed_is_moved_by_the_runs_interval_one_bar_at_a_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``--stamps end``: every row moves one interval earlier, the backlog's and a live bar
    that arrives alone (no interval of its own to move by); the other read flags hold."""
    monkeypatch.setattr(follow_module, "Forecaster", EndStamped)
    feed, out = _symbol_less(tmp_path / "bars_live.csv", range(1, 6)), tmp_path / "fc.csv"
    read = {"stamps": "end", "symbol": "ES"}
    assert _once(tmp_path, feed, out, read=read) == 1
    feed.append(_plain(6))
    assert _once(tmp_path, feed, out, read=read) == 1
    assert _origins(out) == [T0 + timedelta(minutes=m) for m in (4, 5)]
    assert _record(out)["skipped"] == dict.fromkeys(_record(out)["skipped"], 0)


# --- the device and the engine -----------------------------------------------------------------


def test_an_unknown_device_is_refused(fake: None, tmp_path: Path) -> None:
    feed = Feed(tmp_path / "ES_live.csv")
    feed.append(_bar(0))
    with pytest.raises(InputError, match=r"^--device 'abacus': not a torch device"):
        _once(tmp_path, feed, tmp_path / "fc.csv", device="abacus")


@pytest.mark.slow
def test_an_unknown_engine_is_refused(demo_run: DemoRun, tmp_path: Path) -> None:
    feed = Feed(tmp_path / "ES_live.csv")
    feed.append(_bar(0))
    with pytest.raises(InputError, match=r"^--engine 'abacus': choose from "):
        follow_path(demo_run.run, feed.path, tmp_path / "fc.csv", max_polls=1, engine="abacus")
