"""``data_end`` in ``run.json``: each symbol's last training bar, written as ISO UTC and read
back as aware UTC instants; runs without it read as None, a damaged one is named."""

from __future__ import annotations

import datetime as dt
import json
import re
import time

import polars as pl
import pytest

from foxhunt.artifacts.data_end import data_end, data_start, read_data_end
from foxhunt.artifacts.rundir import RunDir
from foxhunt.errors import ModelDirError


def _closes(tz: str | None) -> pl.DataFrame:
    ts = [dt.datetime(2024, 1, 2, h) for h in (9, 11, 10, 8)]
    frame = pl.DataFrame({"symbol": ["NQ", "NQ", "ES", "ES"], "ts": ts, "close": [1.0] * 4})
    return frame.with_columns(pl.col("ts").dt.replace_time_zone(tz)) if tz else frame


@pytest.mark.parametrize("tz", [None, "UTC", "America/Chicago"])
def test_each_symbols_last_bar_in_utc_sorted_by_symbol(tz: str | None) -> None:
    """Naive times are UTC; zoned ones are converted, not relabelled."""
    hours = {None: (10, 11), "UTC": (10, 11), "America/Chicago": (16, 17)}[tz]
    got = data_end(_closes(tz))
    assert list(got) == ["ES", "NQ"]
    assert got == {
        "ES": f"2024-01-02T{hours[0]}:00:00+00:00",
        "NQ": f"2024-01-02T{hours[1]}:00:00+00:00",
    }


def test_each_symbols_first_bar_in_utc_for_the_training_period() -> None:
    assert data_start(_closes("America/Chicago")) == {
        "ES": "2024-01-02T14:00:00+00:00",
        "NQ": "2024-01-02T15:00:00+00:00",
    }


def _run(tmp_path, info: object) -> RunDir:
    run = RunDir(tmp_path)
    run.run_info.write_text(json.dumps(info), encoding="utf-8")
    return run


def test_read_back_as_aware_utc_instants(tmp_path) -> None:
    run = _run(
        tmp_path,
        {"data_end": {"ES": "2024-01-02T10:00:00+00:00", "NQ": "2024-01-02T05:00:00-06:00"}},
    )
    got = read_data_end(run)
    assert got == {
        "ES": dt.datetime(2024, 1, 2, 10, tzinfo=dt.UTC),
        "NQ": dt.datetime(2024, 1, 2, 11, tzinfo=dt.UTC),
    }
    assert all(t.tzinfo is dt.UTC for t in got.values())
    naive = read_data_end(_run(tmp_path, {"data_end": {"ES": "2024-01-02T10:00:00"}}))
    assert naive == {"ES": dt.datetime(2024, 1, 2, 10, tzinfo=dt.UTC)}


def test_a_round_trip_through_run_json_gives_the_last_bars(tmp_path) -> None:
    closes = _closes("America/Chicago")
    got = read_data_end(_run(tmp_path, {"data_end": data_end(closes)}))
    last = closes.group_by("symbol").agg(pl.col("ts").max())
    want = {s: t.astimezone(dt.UTC) for s, t in zip(last["symbol"], last["ts"], strict=True)}
    assert got == want


def test_no_run_json_or_no_data_end_is_none(tmp_path) -> None:
    assert read_data_end(RunDir(tmp_path)) is None
    assert read_data_end(_run(tmp_path, {"epochs": 3})) is None
    assert read_data_end(_run(tmp_path, [1, 2])) is None  # not a dict: nothing recorded


@pytest.mark.parametrize("raw", [["ES"], {"ES": "yesterday"}, {"ES": 5}])
def test_a_damaged_data_end_names_the_file(tmp_path, raw: object) -> None:
    run = _run(tmp_path, {"data_end": raw})
    where = re.escape(f"{run.run_info}: data_end is not symbol -> ISO time (")
    with pytest.raises(ModelDirError, match=rf"^{where}.+\)$"):
        read_data_end(run)


@pytest.fixture
def chicago_clock(monkeypatch):
    """The process's local zone set to Chicago (naive times must still read as UTC)."""
    monkeypatch.setenv("TZ", "America/Chicago")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_naive_times_are_utc_whatever_the_machines_zone(chicago_clock, tmp_path) -> None:
    assert data_end(_closes(None))["ES"] == "2024-01-02T10:00:00+00:00"
    got = read_data_end(_run(tmp_path, {"data_end": {"ES": "2024-01-02T10:00:00"}}))
    assert got == {"ES": dt.datetime(2024, 1, 2, 10, tzinfo=dt.UTC)}


def test_a_corrupt_run_json_is_named(tmp_path) -> None:
    run = RunDir(tmp_path)
    run.run_info.write_text("{not json")
    where = re.escape(str(run.run_info))
    with pytest.raises(ModelDirError, match=rf"^{where}: run.json is corrupt \(not valid JSON\)$"):
        read_data_end(run)
