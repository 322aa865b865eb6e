"""Databento's CSV downloads: spreads between contracts beside the outright contracts (its
parent symbology, ``ZN.FUT``, lists ``ZNH4-ZNM4`` with ``ZNH4``) left out with a warning, and
prices in its fixed point (without ``pretty_px``) read as their value."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from foxhunt.data.market.contracts import is_spread
from foxhunt.data.read.bars import read_bars
from foxhunt.errors import DataError

_HEADER = "ts_event,rtype,publisher_id,instrument_id,open,high,low,close,volume,symbol\n"


def _glbx(path: Path, spread: str, price: str) -> Path:
    rows = []
    for m in range(3):
        ns = (1704295800 + 60 * m) * 1_000_000_000
        rows.append(f"{ns},33,1,1,111.15,111.19,111.14,111.16,1261,ZNH4\n")
        rows.append(f"{ns},33,1,3,{price},0.5,{price},0.25,5,{spread}\n")
    path.write_text(_HEADER + "".join(rows))
    return path


@pytest.mark.parametrize(
    ("symbol", "spread"),
    [
        ("ZNH4-ZNM4", True),
        ("ESH24-ESM24", True),
        ("6EH4-6EM4", True),
        ("UD:1V: VT 0410", True),  # a user-defined spread
        ("BTC-USD", False),
        ("BRK-B", False),
        ("GC-SI", False),  # roots, no contracts
        ("ESH4-SPY", False),  # one leg a contract, the other not
        ("ESH4", False),
    ],
)
def test_what_is_a_spread(symbol: str, spread: bool) -> None:
    assert is_spread(symbol) is spread


def test_spreads_beside_outrights_are_left_out_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Until session 53 a spread's price at or below zero refused the whole file as a
    back-adjusted continuous future's."""
    path = _glbx(tmp_path / "glbx-mdp3-20240103.ohlcv-1m.csv", "ZNH4-ZNM4", "-0.25")
    with caplog.at_level(logging.WARNING):
        df = read_bars(path, min_bars=1)
    assert df["symbol"].unique().to_list() == ["ZNH4"]
    assert df.height == 3
    assert any(
        "3 bars of spreads between contracts left out (ZNH4-ZNM4)" in m for m in caplog.messages
    )


def test_a_file_of_spreads_alone_is_read_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "spreads.csv"
    path.write_text(
        "ts_event,open,high,low,close,volume,symbol\n"
        + "".join(f"2024-01-03T15:3{m}:00Z,-0.25,0.5,-0.5,0.25,5,ZNH4-ZNM4\n" for m in range(3))
    )
    with pytest.raises(DataError, match="non-positive price open -0.25"):
        read_bars(path, min_bars=1)


def test_databentos_fixed_point_prices_read_as_their_value(tmp_path: Path) -> None:
    """A Databento CSV written without ``pretty_px``: prices in units of 1e-9 (ES at
    4790000000000), until session 53 read as written (4.79e12, verdict valid)."""
    fixed = tmp_path / "glbx-mdp3-20240107.ohlcv-1m.csv"
    rows = "".join(
        f"{(1704668400 + 60 * m) * 1_000_000_000},33,1,5002,4790000000000,4791000000000,"
        f"4787250000000,4788000000000,{m + 1},ESH4\n"
        for m in range(3)
    )
    fixed.write_text(_HEADER + rows)
    df = read_bars(fixed, min_bars=1)
    assert df.row(0)[2:] == (4790.0, 4791.0, 4787.25, 4788.0, 1.0)
    pretty = tmp_path / "pretty" / fixed.name
    pretty.parent.mkdir()
    pretty.write_text(
        _HEADER
        + rows.replace("4790000000000", "4790.000000000").replace("4791000000000", "4791.0")
        .replace("4787250000000", "4787.25").replace("4788000000000", "4788.0")
    )  # fmt: skip
    assert read_bars(pretty, min_bars=1).equals(df)
