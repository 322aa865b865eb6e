"""An open or close a tick outside the high-low range (a vendor's rounding) is mended with one
warning per file; a larger slip is refused as before."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.errors import DataError

HEAD = "ts,open,high,low,close,volume\n"


def _file(tmp_path: Path, slipped: str) -> Path:
    """Ten ES bars on the 0.25 grid, bar 5 replaced by ``slipped`` (open,high,low,close)."""
    start = datetime(2024, 1, 2, 15, tzinfo=UTC)
    rows = [f"{start + timedelta(minutes=i):%Y-%m-%dT%H:%M}Z,4700.25,4701,4699.5,4700.5,5\n"
            for i in range(10)]  # fmt: skip
    rows[5] = f"{start + timedelta(minutes=5):%Y-%m-%dT%H:%M}Z,{slipped},5\n"
    path = tmp_path / "ES.csv"
    path.write_text(HEAD + "".join(rows))
    return path


def test_a_close_a_tick_above_the_high_is_mended_once_per_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _file(tmp_path, "4700.25,4701,4699.5,4701.25")  # close a tick (0.25) over the high
    with caplog.at_level(logging.WARNING, logger="foxhunt.data.read.tick_slips"):
        bars = read_bars(path, min_bars=1)
    assert (bars["high"][5], bars["low"][5], bars["close"][5]) == (4701.25, 4699.5, 4701.25)
    assert [r.getMessage() for r in caplog.records] == [
        f"1 bar of {path} has an open or close at most a tick outside the high-low range (a "
        "vendor's rounding; first: row 5): the high and low widened to hold them"
    ]
    low = _file(tmp_path, "4699.25,4701,4699.5,4700.5")  # open a tick under the low
    assert read_bars(low, min_bars=1)["low"][5] == 4699.25


def test_a_slip_of_two_ticks_is_a_bad_bar(tmp_path: Path) -> None:
    path = _file(tmp_path, "4700.25,4701,4699.5,4701.5")
    with pytest.raises(DataError, match=r"row 5 .*high 4701.0 < max\(open, close\) 4701.5"):
        read_bars(path, min_bars=1)


def test_float_noise_of_an_adjusted_price_is_mended(tmp_path: Path) -> None:
    """Adjusted prices (every price times a factor) on no grid: a slip of a millionth."""
    path = _file(tmp_path, "4700.25,4701,4699.5,4701.0047")  # 1e-6 of the price over the high
    assert read_bars(path, min_bars=1)["high"][5] == 4701.0047
