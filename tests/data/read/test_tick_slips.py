"""An open or close a tick outside the high-low range (a vendor's rounding) is mended with one
warning per file; a larger slip is refused as before."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
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


def test_an_open_over_the_high_and_a_close_under_the_low_widen_the_bar(tmp_path: Path) -> None:
    over = read_bars(_file(tmp_path, "4701.25,4701,4699.5,4700.5"), min_bars=1)
    assert (over["high"][5], over["low"][5]) == (4701.25, 4699.5)  # the open's tick over
    under = read_bars(_file(tmp_path, "4700.25,4701,4699.5,4699.25"), min_bars=1)
    assert (under["high"][5], under["low"][5]) == (4701.0, 4699.25)  # the close's tick under


def test_adjusted_prices_off_any_grid_are_mended_within_a_millionth(tmp_path: Path) -> None:
    """Split-adjusted daily prices carry 7 decimals (no grid); a slip of 0.00012 on about 185
    (0.65 of a millionth) is rounding, one of 0.0012 is not."""
    start = datetime(2015, 1, 2, 21, tzinfo=UTC)
    rng = np.random.default_rng(0)  # 2,000 days: price steps far under a millionth
    prices = list(185.0 + np.cumsum(rng.normal(0.0, 0.2, 2000)).round(7))
    rows = [
        f"{start + timedelta(days=i):%Y-%m-%dT%H:%M}Z,{p:.7f},{p + 0.5:.7f},{p - 0.5:.7f},{p:.7f},5\n"
        for i, p in enumerate(prices)
    ]
    good = rows.copy()
    good[5] = rows[5].replace(f",{prices[5]:.7f},5", f",{prices[5] + 0.5 + 0.00012:.7f},5")
    path = tmp_path / "BTCUSD.csv"  # every day a trading day
    path.write_text(HEAD + "".join(good))
    assert read_bars(path, min_bars=1)["high"][5] == round(prices[5] + 0.5 + 0.00012, 7)
    bad = rows.copy()
    bad[5] = rows[5].replace(f",{prices[5]:.7f},5", f",{prices[5] + 0.5 + 0.0012:.7f},5")
    path.write_text(HEAD + "".join(bad))
    with pytest.raises(DataError, match="high .* < max"):
        read_bars(path, min_bars=1)
