"""scid.py where `make mutate` (session 50, its first run) found it loose: every refusal word
for word, the header's bounds and a header of another size, the ends of 1970-2200 in both time
encodings, files of one record and of none, the kind that comes first in a mixed file, and the
columns' names and types. The record layout is spelled out again here (as in test_scid.py)."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from foxhunt.data.read.scid import read_scid, scid_records
from foxhunt.errors import DataError

_RECORD = np.dtype(
    [("time", "<i8"), ("open", "<f4"), ("high", "<f4"), ("low", "<f4"), ("close", "<f4"),
     ("trades", "<u4"), ("volume", "<u4"), ("bid_volume", "<u4"), ("ask_volume", "<u4")]
)  # fmt: skip
_US_PER_DAY = 86_400_000_000
SC_EPOCH_DAYS = 25_569  # 1899-12-30 -> 1970-01-01
SC_EPOCH_US = SC_EPOCH_DAYS * _US_PER_DAY
DAYS_2200 = 109_575  # 1899-12-30 -> 2200-01-01


def _scid(
    path: Path,
    times: list[int],
    opens: list[float] | None = None,
    *,
    days: bool = False,
    header: int = 56,
    record: int = 40,
) -> Path:
    """Records at ``times`` (microseconds since 1970; ``days``: the old float64 encoding) with
    a header of ``header`` bytes (its own size written in it)."""
    rec = np.zeros(len(times), _RECORD)
    sc = np.asarray(times, np.int64) + SC_EPOCH_US
    rec["time"] = (sc / _US_PER_DAY).astype("<f8").view("<i8") if days else sc
    rec["open"] = opens if opens is not None else 100.0
    rec["high"], rec["low"], rec["close"], rec["volume"] = 101.0, 99.0, 100.5, 7
    head = b"SCID" + struct.pack("<II", header, record)
    path.write_bytes(head + bytes(max(0, header - len(head))) + rec.tobytes())
    return path


def _refusal(path: Path) -> str:
    with pytest.raises(DataError) as refused:
        read_scid(path)
    return str(refused.value)


def test_each_refusal_word_for_word(tmp_path: Path) -> None:
    text = tmp_path / "a.scid"
    text.write_text("Date,Time,Open\n")
    assert _refusal(text) == (
        f"{text}: not a Sierra Chart intraday file (it does not start with 'SCID'; an "
        "exported .scid is text: name it .txt or .csv)"
    )
    wide = _scid(tmp_path / "b.scid", [0], record=44)
    assert _refusal(wide) == (
        f"{wide}: its records are 44 bytes, not the 40 of Sierra Chart's intraday format: "
        "export it from Sierra Chart as text (Edit >> Export Intraday Data)"
    )
    cut = _scid(tmp_path / "c.scid", [0, 60_000_000])
    cut.write_bytes(cut.read_bytes()[:-7])
    assert _refusal(cut) == (
        f"{cut}: the file is cut short: its last record has 33 of its 40 bytes, after 1 whole "
        "records (copied while Sierra Chart was writing it?)"
    )
    neither = _scid(tmp_path / "d.scid", [-SC_EPOCH_US])  # time 0: no date either way
    assert _refusal(neither) == (
        f"{neither} record 1: its time (0) is neither microseconds nor days since 1899-12-30 "
        "in 1970-2200: not a Sierra Chart intraday file?"
    )


def test_a_header_cut_short_and_a_header_larger_than_the_file(tmp_path: Path) -> None:
    short = tmp_path / "a.scid"
    short.write_bytes(b"SCID" + struct.pack("<I", 56))  # 8 bytes
    assert _refusal(short) == f"{short}: the file is cut short inside its header (8 bytes)"
    twelve = tmp_path / "b.scid"
    twelve.write_bytes(b"SCID" + struct.pack("<II", 56, 40))  # the fields, then nothing
    assert _refusal(twelve) == f"{twelve}: its header gives its size as 56 bytes (a file of 12)"
    small = _scid(tmp_path / "c.scid", [0], header=8)
    assert _refusal(small) == (
        f"{small}: its header gives its size as 8 bytes (a file of {small.stat().st_size})"
    )


@pytest.mark.parametrize("header", [12, 56, 96])
def test_a_header_of_any_size_from_12_bytes_is_read_and_counted(
    tmp_path: Path, header: int
) -> None:
    times = [0, 60_000_000, 120_000_000]
    path = _scid(tmp_path / "ES.scid", times, header=header)
    got = read_scid(path)
    assert got["ts"].dt.epoch("us").to_list() == times
    count = scid_records(path)
    assert count == 3 and isinstance(count, int)


def test_the_memory_plan_of_a_file_that_is_not_scid_assumes_the_published_header(
    tmp_path: Path,
) -> None:
    text = tmp_path / "ES.scid"
    text.write_bytes(b"Date" + struct.pack("<I", 4) + bytes(56 - 8 + 80))  # 136 bytes
    assert scid_records(text) == 2  # (136 - 56) // 40, not (136 - 4) // 40


def test_a_header_only_file_is_an_empty_frame_of_bars(tmp_path: Path) -> None:
    path = _scid(tmp_path / "ES.scid", [])
    got = read_scid(path)
    assert got.columns == ["ts", "open", "high", "low", "close", "volume"] and got.height == 0
    assert got.schema["ts"] == pl.Datetime("us", "UTC")
    assert scid_records(path) == 0


@pytest.mark.parametrize("days", [False, True])
def test_one_record_reads_in_either_encoding(tmp_path: Path, days: bool) -> None:
    t = 1_704_205_800_000_000  # 2024-01-02 14:30 UTC
    got = read_scid(_scid(tmp_path / "ES.scid", [t], days=days))
    assert got["ts"].dt.epoch("us").to_list() == [t]
    neither = tmp_path / "bad.scid"
    neither.write_bytes(_scid(neither, [t]).read_bytes()[:-40] + bytes(40))
    assert "record 1: its time (0) is neither" in _refusal(neither)


@pytest.mark.parametrize("days", [False, True])
def test_the_first_and_last_instants_of_1970_to_2200_are_dates(tmp_path: Path, days: bool) -> None:
    first, last = 0, (DAYS_2200 - SC_EPOCH_DAYS) * _US_PER_DAY
    for times in ([first, last], [last, first]):
        got = read_scid(_scid(tmp_path / "ES.scid", times, days=days))
        assert got["ts"].dt.epoch("us").to_list() == times


def test_microseconds_are_kept_to_the_microsecond(tmp_path: Path) -> None:
    times = [1_704_205_800_000_123, 1_704_205_800_500_001]
    assert read_scid(_scid(tmp_path / "ES.scid", times))["ts"].dt.epoch("us").to_list() == times


def test_a_mixed_file_names_the_kind_that_came_first(tmp_path: Path) -> None:
    times = [0, 60_000_000, 120_000_000]
    ticks_first = _scid(tmp_path / "a.scid", times, opens=[0.0, 0.0, 100.0])
    assert _refusal(ticks_first) == (
        f"{ticks_first} record 3: bars after 2 records of ticks (an open of 0 marks a tick: the "
        "chart's storage unit changed, or a bar opened at 0): export each part from Sierra "
        "Chart as text"
    )
    bars_first = _scid(tmp_path / "b.scid", times, opens=[100.0, 0.0, 0.0])
    assert _refusal(bars_first).startswith(f"{bars_first} record 2: ticks after 1 records of bars")


def test_columns_are_named_and_typed_as_documented(tmp_path: Path) -> None:
    times = [0, 60_000_000]
    bars = read_scid(_scid(tmp_path / "a.scid", times))
    assert bars.schema == pl.Schema(
        {"ts": pl.Datetime("us", "UTC"), "open": pl.Float64, "high": pl.Float64,
         "low": pl.Float64, "close": pl.Float64, "volume": pl.Float64}
    )  # fmt: skip
    ticks = read_scid(_scid(tmp_path / "b.scid", times, opens=[0.0, 0.0]))
    assert ticks.schema == pl.Schema(
        {"ts": pl.Datetime("us", "UTC"), "price": pl.Float64, "size": pl.Float64}
    )
