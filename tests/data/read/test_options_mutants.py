"""ReadOptions: what a run's data config carries into reading, and the bounds it refuses."""

from __future__ import annotations

import pytest

from foxhunt.config import DataConfig
from foxhunt.data.read.options import ReadOptions, options_of
from foxhunt.errors import DataError

TS_FORMAT_HINT = (
    "use epoch-s, epoch-ms, epoch-us, epoch-ns, yyyymmdd "
    "or a strftime format such as '%Y%m%d %H%M%S'"
)


def test_options_of_carries_every_read_field_of_the_data_config() -> None:
    data = DataConfig(
        tz="Europe/London",
        symbol="ES",
        columns=("ts=DATE", "close=LAST"),
        ts_format="%Y-%m-%d %H:%M",
        bar_minutes=5,
        allow_odd_times=True,
    )
    got = options_of(data)
    assert got.tz == "Europe/London"
    assert got.symbol == "ES"
    assert got.columns == ("ts=DATE", "close=LAST")
    assert got.ts_format == "%Y-%m-%d %H:%M"
    assert got.bar_minutes == 5
    assert got.allow_odd_times is True
    assert got == ReadOptions(
        tz="Europe/London",
        symbol="ES",
        columns=("ts=DATE", "close=LAST"),
        ts_format="%Y-%m-%d %H:%M",
        bar_minutes=5,
        allow_odd_times=True,
    )


def test_options_of_a_default_config_keeps_allow_odd_times_a_bool() -> None:
    got = options_of(DataConfig())
    assert got == ReadOptions()
    assert got.allow_odd_times is False


@pytest.mark.parametrize("minutes", [1, 1440])
def test_bar_minutes_at_the_bounds_are_accepted(minutes: int) -> None:
    assert ReadOptions(bar_minutes=minutes).bar_minutes == minutes


@pytest.mark.parametrize("minutes", [0, 1441])
def test_bar_minutes_past_the_bounds_are_refused(minutes: int) -> None:
    with pytest.raises(DataError) as excinfo:
        ReadOptions(bar_minutes=minutes)
    assert str(excinfo.value) == f"--bar-minutes must be 1..1440, got {minutes}"


@pytest.mark.parametrize("symbol", ["", "   "])
def test_blank_symbol_is_refused(symbol: str) -> None:
    with pytest.raises(DataError) as excinfo:
        ReadOptions(symbol=symbol)
    assert str(excinfo.value) == "--symbol is empty"


def test_strftime_ts_format_is_accepted() -> None:
    assert ReadOptions(ts_format="%d/%m/%Y %H:%M").ts_format == "%d/%m/%Y %H:%M"


def test_ts_format_without_percent_is_refused_with_the_choices() -> None:
    with pytest.raises(DataError) as excinfo:
        ReadOptions(ts_format="yyyy-mm-dd")
    assert str(excinfo.value) == f"--ts-format 'yyyy-mm-dd': {TS_FORMAT_HINT}"
