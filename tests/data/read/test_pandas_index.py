"""pandas' index written by ``df.to_csv()`` after a filter, a sort or a concat (``30000, 30001,
30003``; counting down; each frame from 0) is row numbers beside the ``Date`` column, not the
time: it was read as epoch seconds (refused as 1970, naming ``--ts-format``) or, in 20,000 to
80,000, as Excel serial days (minute bars read as daily bars from 1982, verdict valid)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from foxhunt.data.read.bars import read_bars

START = datetime(2024, 1, 3, 15, 30, tzinfo=UTC)


def _write(path: Path, index: list[int]) -> Path:
    rows = "".join(
        f"{i},{START + timedelta(minutes=n):%Y-%m-%d %H:%M:%S},185.5,186,185,185.75,{n * 7 % 13 + 1}\n"
        for n, i in enumerate(index)
    )
    path.write_text(",Date,Open,High,Low,Close,Volume\n" + rows)
    return path


@pytest.mark.parametrize(
    "index",
    [
        [0, 1, 2, 4, 5, 9, 10, 11],
        [30000, 30001, 30003, 30004, 30007, 30008, 30010, 30011],
        [11, 10, 9, 7, 6, 5, 2, 0],
        [0, 1, 2, 3, 0, 1, 2, 3],
    ],
    ids=["filtered", "in-excel-serial-range", "sorted-down", "concatenated"],
)
def test_pandas_row_numbers_beside_a_date_column_are_no_time(
    tmp_path: Path, index: list[int]
) -> None:
    bars = read_bars(_write(tmp_path / "AAPL.csv", index), min_bars=1)
    assert bars["ts"].to_list() == [START + timedelta(minutes=n) for n in range(8)]


def test_an_unnamed_first_column_of_epoch_seconds_is_the_time(tmp_path: Path) -> None:
    """Ten digits (a time since 2001) are no row numbers: the index is the time."""
    epoch = int(START.timestamp())
    rows = "".join(f"{epoch + 60 * n},185.5,186,185,185.75,{n + 3}\n" for n in range(6))
    path = tmp_path / "AAPL.csv"
    path.write_text(",Open,High,Low,Close,Volume\n" + rows)
    assert read_bars(path, min_bars=1)["ts"][0] == START


def test_an_unnamed_first_column_of_dates_is_the_time(tmp_path: Path) -> None:
    """``20240103``: a date as eight digits (pandas' index of int dates), no row number."""
    rows = "".join(f"202401{d:02d},185.5,186,185,185.75,{d}\n" for d in (8, 9, 10, 11, 12))
    path = tmp_path / "AAPL.csv"
    path.write_text(",Open,High,Low,Close,Volume\n" + rows)
    assert read_bars(path, min_bars=1)["ts"][0] == datetime(2024, 1, 8, tzinfo=UTC)
