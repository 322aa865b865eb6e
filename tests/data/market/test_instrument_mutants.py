"""Instrument's validation, pinned where `make mutate` found it loose: the exact refusals for an
unknown asset class or calendar (the known names joined by ', '), and the session_hours bounds
(24 is a full day and accepted; just above 24, infinities and NaN are refused)."""

from __future__ import annotations

import math

import pytest

from foxhunt.data.market.calendars import CALENDARS
from foxhunt.data.market.instrument import Instrument
from foxhunt.errors import DataError


def _es(**kw: object) -> Instrument:
    fields: dict[str, object] = {
        "root": "ES",
        "tick_size": 0.25,
        "point_value": 50.0,
        "currency": "USD",
        "asset_class": "equity_index",
        "calendar": "cme_equity",
    }
    fields.update(kw)
    return Instrument(**fields)  # type: ignore[arg-type]


def test_unknown_asset_class_message_lists_the_classes_in_code_order() -> None:
    with pytest.raises(DataError) as excinfo:
        _es(asset_class="bond")
    assert str(excinfo.value) == (
        "instrument 'ES': unknown asset_class 'bond' (one of equity_index, energy, metals, rates, "
        "currency, agriculture, volatility, crypto_future, stock, etf, spot_fx, crypto, "
        "cash_index, unknown)"
    )


def test_unknown_calendar_message_lists_the_calendars_sorted() -> None:
    with pytest.raises(DataError) as excinfo:
        _es(calendar="moon")
    known = ", ".join(sorted(CALENDARS))
    assert str(excinfo.value) == f"instrument 'ES': calendar 'moon' is unknown (one of {known})"


@pytest.mark.parametrize("hours", [0.0, 6.5, 23.0, 24.0])
def test_session_hours_from_zero_to_a_full_day_are_accepted(hours: float) -> None:
    assert _es(session_hours=hours).session_hours == hours


def test_a_full_24_hour_session_is_its_own_hours() -> None:
    assert _es(calendar="24x7", session_hours=24.0).hours == 24.0


@pytest.mark.parametrize(
    ("hours", "shown"),
    [
        (24.01, "24.01"),
        (24.5, "24.5"),
        (25.0, "25.0"),
        (-0.5, "-0.5"),
        (math.inf, "inf"),
        (-math.inf, "-inf"),
        (math.nan, "nan"),
    ],
)
def test_session_hours_outside_zero_to_24_are_refused(hours: float, shown: str) -> None:
    with pytest.raises(DataError) as excinfo:
        _es(session_hours=hours)
    assert str(excinfo.value) == (f"instrument 'ES': session_hours must be in [0, 24], got {shown}")
