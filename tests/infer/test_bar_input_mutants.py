"""Live bars checked before the streaming state, message by message: a symbol not served, a
duplicate or late bar within an update and against the bars held (each naming row, symbol and
time), groups in order of first sight with their rows, and each symbol's trading date on its
own calendar."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import polars as pl
import pytest

from foxhunt.errors import DataError
from foxhunt.infer import bar_input
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


def _raw(**changes: list[object]) -> pl.DataFrame:
    """Two ES bars and one NQ bar in the normalised layout, with columns replaced."""
    columns: dict[str, list[object]] = {
        "ts": [T0, T0 + timedelta(minutes=1), T0 + timedelta(minutes=2)],
        "symbol": ["ES", "NQ", "ES"],
        "open": [100.0, 200.0, 100.5],
        "high": [101.0, 201.0, 101.5],
        "low": [99.0, 199.0, 99.5],
        "close": [100.5, 200.5, 101.0],
        "volume": [10.0, 0.0, 12.0],
    }
    columns.update(changes)
    frame = pl.DataFrame(columns)
    if not isinstance(frame.schema["ts"], pl.Datetime):
        return frame
    return frame.with_columns(pl.col("ts").dt.cast_time_unit("us"))


def test_missing_columns_are_named_first_in_the_readers_order_with_the_columns_there() -> None:
    with pytest.raises(DataError) as caught:
        normalise(_raw().drop("close", "volume"))
    assert str(caught.value) == (
        "Forecaster.update: missing column 'close' (columns: ts, symbol, open, high, low)"
    )


def test_a_ts_column_that_is_not_a_datetime_is_named_with_its_type() -> None:
    with pytest.raises(DataError) as caught:
        normalise(_raw(ts=[1, 2, 3]))
    assert str(caught.value) == "Forecaster.update: column 'ts' must be a datetime, got Int64"


def test_values_polars_cannot_read_name_the_first_line_of_its_error() -> None:
    with pytest.raises(DataError) as caught:
        normalise(_raw(open=["100", "x", "100.5"]))
    message = str(caught.value)
    assert message.startswith("Forecaster.update: cannot read the bars (")
    assert "\n" not in message and "str" in message and "f64" in message


def test_what_is_not_a_frame_is_refused_in_the_updates_name() -> None:
    with pytest.raises(DataError) as caught:
        normalise({"ts": [T0]})
    assert str(caught.value) == (
        "Forecaster.update: bars must be a polars or pandas DataFrame, got dict"
    )


def test_times_in_another_zone_or_naive_become_utc_microseconds() -> None:
    london = _raw().with_columns(pl.col("ts").dt.convert_time_zone("Europe/London"))
    naive = _raw().with_columns(pl.col("ts").dt.replace_time_zone(None).dt.cast_time_unit("ms"))
    for frame in (london, naive):
        got = normalise(frame)
        assert got.schema["ts"] == pl.Datetime("us", "UTC")
        assert got["ts"].to_list() == _raw()["ts"].to_list()


@pytest.mark.parametrize(
    "changes",
    [{"symbol": ["ES", None, "ES"]}, {"ts": [T0, None, T0 + timedelta(minutes=2)]}],
    ids=["null_symbol", "null_ts"],
)
def test_a_null_key_is_refused_by_the_validator(changes: dict[str, list[object]]) -> None:
    frame = _raw(**changes)
    assert not bar_input._keys_present(frame)
    assert bar_input.fast_arrays(frame) is None
    with pytest.raises(DataError, match="^Forecaster.update"):
        normalise(frame)


def test_a_zero_price_is_refused_and_prices_below_one_are_plainly_valid() -> None:
    with pytest.raises(DataError, match="^Forecaster.update"):
        normalise(_raw(low=[0.0, 199.0, 99.5]))
    fx = _raw(  # AUDUSD-like prices, high equal to close: the fast path takes them as they are
        open=[0.65, 0.66, 0.65], high=[0.66, 0.66, 0.66], low=[0.64, 0.65, 0.64],
        close=[0.66, 0.66, 0.655], volume=[0.0, 0.0, 0.0],
    )  # fmt: skip
    fast = bar_input.fast_arrays(fx)
    assert fast is not None
    assert fast.values[:, 3].tolist() == [0.66, 0.66, 0.655]


def test_the_latest_plausible_bar_is_a_day_after_now_in_microseconds() -> None:
    before = (datetime.now(UTC) + timedelta(days=1)).timestamp() * 1_000_000
    got = bar_input._latest_plausible_us()
    after = (datetime.now(UTC) + timedelta(days=1)).timestamp() * 1_000_000
    assert before <= got <= after


def test_a_bar_at_the_latest_plausible_time_passes_and_one_after_it_does_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    chunk = _chunk([("ES", 0), ("ES", 1), ("ES", 2)])
    monkeypatch.setattr(bar_input, "_latest_plausible_us", lambda: _us(0))
    assert bar_input.group_rows(bar_input.bar_arrays(chunk), {}.get, None) is None
    assert _refused(chunk).startswith(
        "Forecaster.update: row 1, symbol 'ES', ts 2024-01-03 15:01:00+00:00: bar after tomorrow"
    )  # the first of the two bars after it
    monkeypatch.setattr(bar_input, "_latest_plausible_us", lambda: _us(2))
    assert set(check_order(chunk, {}.get, None)) == {"ES"}
    assert bar_input.group_rows(bar_input.bar_arrays(chunk), {}.get, None) is not None


def test_the_first_of_several_bad_rows_is_named() -> None:
    chunk = _chunk([("ES", 5), ("ES", 3), ("NQ", 1), ("ES", 2)])
    assert _refused(chunk).startswith("Forecaster.update: row 1, symbol 'ES'")


def test_the_first_symbol_not_served_in_the_update_is_named() -> None:
    names = [f"S{i:02d}" for i in range(40, 0, -1)]  # 40 symbols, none served
    chunk = _chunk([(s, i) for i, s in enumerate(names)])
    assert _refused(chunk, allowed=frozenset({"ES"})).startswith(
        "Forecaster.update: symbol 'S40' is not one"
    )


def _groups(rows: list[tuple[str, int]], held: dict[str, int] | None = None, allowed=None):  # type: ignore[no-untyped-def]  # noqa: ANN202
    chunk = bar_input.bar_arrays(_chunk(rows))
    return bar_input.group_rows(chunk, (held or {}).get, allowed)


def test_group_rows_finds_each_symbols_rows_in_order_of_first_sight() -> None:
    groups = _groups([("NQ", 0), ("ES", 0), ("NQ", 1), ("CL", 0), ("ES", 2)])
    assert groups is not None
    assert {k: v.tolist() for k, v in groups.items()} == {"NQ": [0, 2], "ES": [1, 4], "CL": [3]}
    assert list(groups) == ["NQ", "ES", "CL"]


@pytest.mark.parametrize(
    ("rows", "held", "allowed"),
    [
        ([("ES", 0), ("NQ", 0), ("ES", 0)], None, None),  # a duplicate within the update
        ([("ES", 0), ("ES", 3), ("ES", 2)], None, None),  # out of order after the first bar
        ([("ES", 0), ("ES", 1)], {"ES": _us(0)}, None),  # the first bar is the last one held
        ([("ES", 0), ("ES", 1)], {"ES": _us(5)}, None),  # before it
        ([("CL", 0)], None, frozenset({"ES"})),  # not served, nothing held
    ],
    ids=["duplicate", "late", "held_duplicate", "held_late", "not_served"],
)
def test_group_rows_leaves_every_refusal_to_check_order(rows, held, allowed) -> None:  # type: ignore[no-untyped-def]
    assert _groups(rows, held, allowed) is None
    with pytest.raises(DataError):
        check_order(_chunk(rows), (held or {}).get, allowed)


def test_group_rows_passes_bars_after_the_ones_held() -> None:
    groups = _groups([("ES", 1), ("NQ", 0)], {"ES": _us(0), "NQ": _us(-1)}, frozenset({"ES", "NQ"}))
    assert groups is not None and list(groups) == ["ES", "NQ"]
