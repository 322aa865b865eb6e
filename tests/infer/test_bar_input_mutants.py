"""Live bars checked before the streaming state, message by message: a symbol not served, a
duplicate or late bar within an update and against the bars held (each naming row, symbol and
time), groups in order of first sight with their rows, and each symbol's trading date on its
own calendar."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import polars as pl
import pytest

from foxhunt.errors import DataError
from foxhunt.infer.bar_input import check_order, normalise, session_expr

T0 = datetime(2024, 1, 3, 15, tzinfo=UTC)


def _chunk(rows: list[tuple[str, int]]) -> pl.DataFrame:
    """(symbol, minutes after T0) per row."""
    n = len(rows)
    return normalise(
        pl.DataFrame(
            {
                "ts": [T0 + timedelta(minutes=m) for _, m in rows],
                "symbol": [s for s, _ in rows],
                "open": [100.0] * n,
                "high": [101.0] * n,
                "low": [99.0] * n,
                "close": [100.5] * n,
                "volume": [10.0] * n,
            }
        )
    )


def _refused(chunk: pl.DataFrame, held: dict[str, int] | None = None, allowed=None) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(DataError) as caught:
        check_order(chunk, (held or {}).get, allowed)
    return str(caught.value)


def _us(minutes: int) -> int:
    return int((T0 + timedelta(minutes=minutes)).timestamp() * 1_000_000)


def test_a_symbol_not_served_is_named_with_the_served_ones() -> None:
    chunk = _chunk([("ES", 0), ("CL", 0)])
    assert _refused(chunk, allowed=frozenset({"NQ", "ES"})) == (
        "Forecaster.update: symbol 'CL' is not one this forecaster serves (ES, NQ)"
    )


def test_duplicates_and_late_bars_within_an_update_name_their_row() -> None:
    dup = _chunk([("ES", 0), ("NQ", 1), ("ES", 0)])
    assert _refused(dup) == (
        "Forecaster.update: row 2, symbol 'ES', ts 2024-01-03 15:00:00+00:00: duplicate bar "
        "within the update"
    )
    late = _chunk([("NQ", 0), ("ES", 5), ("ES", 3)])
    assert _refused(late) == (
        "Forecaster.update: row 2, symbol 'ES', ts 2024-01-03 15:03:00+00:00: bar out of time "
        "order within the update"
    )


def test_a_first_bar_at_or_before_the_last_one_held_is_refused() -> None:
    chunk = _chunk([("NQ", 9), ("ES", 5), ("ES", 6)])
    held_at = "2024-01-03 15:05:00+00:00"
    assert _refused(chunk, {"ES": _us(5)}) == (
        "Forecaster.update: row 1, symbol 'ES', ts 2024-01-03 15:05:00+00:00: duplicate bar "
        f"(the last bar already given for 'ES' is at {held_at})"
    )
    assert _refused(chunk, {"ES": _us(7)}) == (
        "Forecaster.update: row 1, symbol 'ES', ts 2024-01-03 15:05:00+00:00: bar out of time "
        "order (the last bar already given for 'ES' is at 2024-01-03 15:07:00+00:00)"
    )


def test_groups_in_order_of_first_sight_with_their_rows() -> None:
    chunk = _chunk([("NQ", 1), ("ES", 1), ("NQ", 2), ("ES", 3)])
    groups = check_order(chunk, {"ES": _us(0), "NQ": _us(0)}.get, frozenset({"ES", "NQ"}))
    assert list(groups) == ["NQ", "ES"]
    assert groups["NQ"]["__row"].to_list() == [0, 2]
    assert groups["ES"]["__row"].to_list() == [1, 3]
    assert groups["ES"]["ts"].to_list() == [T0 + timedelta(minutes=1), T0 + timedelta(minutes=3)]
    assert list(check_order(chunk, lambda s: None, None)) == ["NQ", "ES"]


def test_each_symbol_reads_its_trading_date_on_its_own_calendar() -> None:
    """Friday 2024-01-05 17:30 New York is past NYSE's roll (17:00 New York): the next date,
    Saturday; on Globex (roll 17:00 CT, 18:00 New York) it is still Friday."""
    ts = datetime(2024, 1, 5, 22, 30, tzinfo=UTC)
    frame = pl.DataFrame({"ts": [ts] * 3, "symbol": ["ES", "SPY", "CL"]})
    got = frame.select(session_expr({"SPY": "xnys", "CL": "globex"}).alias("d"))["d"].to_list()
    assert got == [date(2024, 1, 5), date(2024, 1, 6), date(2024, 1, 5)]
    default = frame.select(session_expr({}).alias("d"))["d"].to_list()
    assert default == [date(2024, 1, 5)] * 3
