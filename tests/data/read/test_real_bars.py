"""Real 1-minute bars (spot FX without volume, a 24/7 BTC perpetual), read as found.

The fixtures are the first 6,000 bars of the files in ``../shared/data/real`` (see the README
beside them), gzipped but otherwise unchanged.
"""

from __future__ import annotations

import logging
from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.read.bars import load_bars, read_bars

REAL = Path(__file__).parents[1] / "fixtures" / "real"
FX = ("gbpusd-m1-bid-2012.csv.gz", "usdjpy-m1-bid-2013.csv.gz")
BTC = "btc-perp-20211231-20220201_1m.csv.gz"


@pytest.mark.parametrize("name,symbol", [(FX[0], "GBPUSD"), (FX[1], "USDJPY")])
def test_spot_fx_without_volume(name: str, symbol: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        df = read_bars(REAL / name)
    assert df.height == 6000
    assert df.schema["ts"] == pl.Datetime("us", "UTC")
    assert df["symbol"].unique().to_list() == [symbol]
    assert (df["volume"] == 0.0).all()
    assert f"no volume column in {REAL / name}: volume features will be constant" in caplog.text
    assert "naive" not in caplog.text  # the file's timestamps carry +00:00
    assert df["ts"][0].isoformat() == df["ts"][0].isoformat()[:10] + "T00:00:00+00:00"
    assert df["ts"].diff().drop_nulls().min().total_seconds() == 60


def test_btc_perp_fractional_volume(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        df = read_bars(REAL / BTC)
    assert df.height == 6000
    assert str(df["ts"][0]) == "2021-12-31 23:01:00+00:00"
    assert df["symbol"].unique().to_list() == ["BTC-PERP"]  # a perpetual, not the CME future BTC
    assert df["volume"][0] == pytest.approx(2300413.7295)
    assert (df["volume"] % 1 != 0).any()
    assert "naive timestamps" in caplog.text and "taken as UTC" in caplog.text
    # trades through the weekend: Saturdays are in the data
    assert (df["ts"].dt.weekday() == 6).any()


def test_real_fixtures_report_no_extra_columns() -> None:
    loaded = load_bars(REAL)
    assert len(loaded.files) == 3
    assert loaded.extra == ((), (), ())
    assert loaded.naive == (True, False, False)


def test_inspect_names_no_zone_for_a_24_7_market() -> None:
    from foxhunt.data.market.calendar import closed_time
    from foxhunt.data.read.inspection import summarize

    # Judged by the Globex clock, a 24/7 market is closed-heavy in every zone: no zone named.
    (s,) = summarize(load_bars(REAL / BTC), closed=closed_time)
    assert s["closed_time_bars"] > 1000
    assert "no other zone fits its calendar's hours better" in s["closed_hours_warning"]


def test_inspect_judges_each_market_by_its_own_calendar() -> None:
    from foxhunt.data.read.inspection import summarize

    btc, gbp, jpy = (summarize(load_bars(REAL / f))[0] for f in (BTC, *FX))
    assert (btc["calendar"], btc["closed_time_bars"], btc["closed_hours_warning"]) == (
        "24x7",
        0,
        None,
    )
    for fx in (gbp, jpy):
        assert fx["calendar"] == "fx_24x5" and fx["closed_hours_warning"] is None
