"""The edges of a high below its low (``foxhunt.data.read.high_low``), from its mutation run's
survivors: a swapped bar whose close is its true high, the rows of one file among two, and two
bars with a range being every bar of a file."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.errors import DataError

START = datetime(2024, 3, 4, 14, 30)


def _line(i: int, o: float, h: float, lo: float, c: float) -> str:
    return f"{START + timedelta(minutes=i):%Y-%m-%d %H:%M:%S},{o},{h},{lo},{c},{100 + i}\n"


def _ordinary(n: int = 40) -> list[str]:
    return [_line(i, 1234.5, 1235.25, 1234.0, 1234.75) for i in range(n)]


def test_a_swapped_bar_that_closes_at_its_high_is_named(tmp_path: Path) -> None:
    """As written the low equals the close (the bar closed at its true high): the two, read the
    other way round, still bound the open and close, so the hint is given."""
    lines = _ordinary()
    lines[12] = _line(12, 1234.5, 1234.0, 1235.25, 1235.25)
    path = tmp_path / "ES.csv"
    path.write_text("timestamp,open,high,low,close,volume\n" + "".join(lines))
    with pytest.raises(DataError, match=r"row 12 .*written the other way round in this row\?\)$"):
        read_bars(path)


def test_every_bar_of_one_file_among_two_names_that_files_columns(tmp_path: Path) -> None:
    """ES's header names its high and low the wrong way round; NQ's beside it is right. Every
    bar of ES's file is so written, whatever NQ's bars are."""
    (tmp_path / "ES.csv").write_text("Date,Open,Low,High,Close,Volume\n" + "".join(_ordinary()))
    (tmp_path / "NQ.csv").write_text("Date,Open,High,Low,Close,Volume\n" + "".join(_ordinary()))
    with pytest.raises(DataError) as e:
        read_bars(tmp_path)
    assert "ES.csv" in str(e.value)
    assert str(e.value).endswith("--columns high=Low,low=High reads them)")


def test_two_bars_with_a_range_both_swapped_are_every_bar_of_the_file(tmp_path: Path) -> None:
    """Flat bars (high = low) cannot tell a swap: the file's other two bars, both with their
    high below their low, are all it has, and two are enough to name the columns."""
    lines = [_line(i, 1234.5, 1234.5, 1234.5, 1234.5) for i in range(40)]
    for i in (7, 21):
        lines[i] = _line(i, 1234.5, 1234.0, 1235.25, 1234.75)
    path = tmp_path / "ES.csv"
    path.write_text("Date,Open,High,Low,Close,Volume\n" + "".join(lines))
    with pytest.raises(DataError) as e:
        read_bars(path)
    assert "row 7 " in str(e.value)
    assert str(e.value).endswith("--columns high=Low,low=High reads them)")
