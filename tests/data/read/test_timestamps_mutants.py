"""How a file's time column(s) become UTC timestamps (data/read/timestamps.py), at the edges its
mutation run left untested: the exact instant of every documented spelling, the epoch-unit
boundaries (1e11, 1e14, 1e17: each the same instant 1973-03-03 09:46:40 in ms, us and ns),
float and nanosecond epochs read exactly, ``--ts-format`` (epoch units, ``yyyymmdd``,
strftime with and without ``%z``, which formats are wall-clock times), typed columns (dates,
naive and zoned datetimes, YYYYMMDD integers), the head a format is chosen from (misses,
nulls, rows past the first 200), day-first against month-first (a span exactly twice as
long), and the messages (an empty ``--ts-format``, a column of the wrong type, the warning
naming the file and the other format).

Every parsed column is checked to be ``Datetime("us", "UTC")``, as :class:`Times` promises.
Frames are built inside the tests (never at import: mutmut's forked workers hang on it).
"""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.read.timestamps import (
    EPOCH_FORMATS,
    Times,
    formatted_expr,
    text_timestamp_expr,
    timestamp_expr,
)
from foxhunt.errors import DataError

_LOGGER = "foxhunt.data.read.timestamps"
_PATH = Path("bars.csv")


def _utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def _collect(lf: pl.LazyFrame, times: Times) -> list[datetime | None]:
    out = lf.select(times.expr.alias("ts")).collect().to_series()
    assert out.dtype == pl.Datetime("us", "UTC")
    return out.to_list()


def _text(values: list[str | None], **kw: object) -> tuple[Times, list[datetime | None]]:
    """``text_timestamp_expr`` on a text column ``t`` holding ``values``."""
    lf = pl.LazyFrame({"t": values}, schema={"t": pl.String})
    times = text_timestamp_expr(lf, pl.col("t"), **kw)
    return times, _collect(lf, times)


def _typed(series: pl.Series, **kw: object) -> tuple[Times, list[datetime | None]]:
    """``timestamp_expr`` on column ``ts`` of ``bars.csv`` holding ``series``."""
    lf = pl.LazyFrame({"ts": series})
    times = timestamp_expr(lf, _PATH, "ts", series.dtype, **kw)
    return times, _collect(lf, times)


def _formatted(values: list[str | None], fmt: str, tz: str = "UTC") -> tuple[Times, list]:
    lf = pl.LazyFrame({"t": values}, schema={"t": pl.String})
    times = formatted_expr(pl.col("t"), fmt, tz)
    return times, _collect(lf, times)


# ---------------------------------------------------------------------------- text spellings


@pytest.mark.parametrize(
    ("text", "expected", "fmt", "naive"),
    [
        # ISO 8601: polars' own parser (no format guessed), naive unless an offset is written
        ("2024-01-02 09:30:00", (2024, 1, 2, 9, 30), None, True),
        ("2024-01-02T09:30:00", (2024, 1, 2, 9, 30), None, True),
        ("2024-01-02 09:30", (2024, 1, 2, 9, 30), None, True),
        ("2024-01-02 09:30:00.123456", (2024, 1, 2, 9, 30, 0, 123456), None, True),
        ("2024-01-02T09:30:00.5", (2024, 1, 2, 9, 30, 0, 500000), None, True),
        ("2024-01-02", (2024, 1, 2), None, False),
        ("2012-02-01 00:00:00+00:00", (2012, 2, 1), None, False),
        ("2024-01-02T09:30:00Z", (2024, 1, 2, 9, 30), None, False),
        ("2024-01-02 09:30:00+01:00", (2024, 1, 2, 8, 30), None, False),
        ("2024-01-02 09:30:00-0500", (2024, 1, 2, 14, 30), None, False),
        ("2024-01-02T09:30:00.123456-05:00", (2024, 1, 2, 14, 30, 0, 123456), None, False),
        # vendor spellings: the format is guessed and named
        ("2024.01.02 09:30", (2024, 1, 2, 9, 30), "%Y.%m.%d %H:%M", True),  # MetaTrader
        ("2024.01.02 09:30:15", (2024, 1, 2, 9, 30, 15), "%Y.%m.%d %H:%M:%S", True),
        ("2024.01.02", (2024, 1, 2), "%Y.%m.%d", False),
        ("20240102 093000", (2024, 1, 2, 9, 30), "%Y%m%d %H%M%S", True),  # NinjaTrader
        ("20240102 09:30", (2024, 1, 2, 9, 30), "%Y%m%d %H:%M", True),
        ("20240102 0930", (2024, 1, 2, 9, 30), "%Y%m%d %H%M", True),
        ("2024/01/02 09:30", (2024, 1, 2, 9, 30), "%Y/%m/%d %H:%M", True),
        ("01/02/2024 09:30", (2024, 1, 2, 9, 30), "%m/%d/%Y %H:%M", True),  # Kibot: US
        ("01/02/2024", (2024, 1, 2), "%m/%d/%Y", False),
        ("13/01/2024 09:30", (2024, 1, 13, 9, 30), "%d/%m/%Y %H:%M", True),  # only day-first
        ("13-01-2024 09:30", (2024, 1, 13, 9, 30), "%d-%m-%Y %H:%M", True),
        # Dukascopy: dotted dates read day-first, fractional seconds
        ("01.02.2012 00:00:00.000", (2012, 2, 1), "%d.%m.%Y %H:%M:%S%.f", True),
        # 12-hour clocks
        ("01/02/2024 02:30 PM", (2024, 1, 2, 14, 30), "%m/%d/%Y %I:%M %p", True),
        ("01/02/2024 02:30:15 PM", (2024, 1, 2, 14, 30, 15), "%m/%d/%Y %I:%M:%S %p", True),
        ("01/02/2024 12:05 AM", (2024, 1, 2, 0, 5), "%m/%d/%Y %I:%M %p", True),
        # month names and two-digit years
        ("Dec 31, 2018", (2018, 12, 31), "%b %d, %Y", False),
        ("31-Dec-2018", (2018, 12, 31), "%d-%b-%Y", False),
        ("31-Dec-18", (2018, 12, 31), "%d-%b-%y", False),
        ("31 Dec 2018", (2018, 12, 31), "%d %b %Y", False),
        ("04-Jan-10", (2010, 1, 4), "%d-%b-%y", False),
        ("04.01.10", (2010, 1, 4), "%d.%m.%y", False),
        # digits: YYYYMMDD dates and epochs
        ("20240102", (2024, 1, 2), "yyyymmdd", False),
        ("1640995200000", (2022, 1, 1), "epoch-ms", False),
    ],
)
def test_each_documented_spelling_reads_to_its_utc_instant(
    text: str, expected: tuple[int, ...], fmt: str | None, naive: bool
) -> None:
    times, values = _text([text])  # no tz: naive values are UTC
    assert values == [_utc(*expected)]
    assert times.format == fmt
    assert times.naive is naive


def test_naive_text_is_a_wall_clock_time_in_tz_and_offsets_ignore_it() -> None:
    _, new_york = _text(["2024.01.02 09:30", "2024.07.01 09:30"], tz="America/New_York")
    assert new_york == [_utc(2024, 1, 2, 14, 30), _utc(2024, 7, 1, 13, 30)]
    _, fixed = _text(["2024.07.01 09:30"], tz="-05:00")
    assert fixed == [_utc(2024, 7, 1, 14, 30)]
    # written offsets win over tz; an unreadable value is null (named later), not an error
    times, zoned = _text(
        ["2024-01-02 09:30:00+01:00", "2024-07-01T09:30:00-04:00", "not a time"],
        tz="Asia/Tokyo",
    )
    assert zoned == [_utc(2024, 1, 2, 8, 30), _utc(2024, 7, 1, 13, 30), None]
    assert times.naive is False


@pytest.mark.parametrize(
    ("date_col", "time_col", "expected", "fmt"),
    [
        ("20240102", "093000", (2024, 1, 2, 9, 30), "%Y%m%d %H%M%S"),  # NinjaTrader
        ("2024.01.02", "09:30", (2024, 1, 2, 9, 30), "%Y.%m.%d %H:%M"),  # MetaTrader
        ("01/02/2024", "09:30", (2024, 1, 2, 9, 30), "%m/%d/%Y %H:%M"),  # Kibot
        ("2024-01-02", "09:30:00", (2024, 1, 2, 9, 30), None),
    ],
)
def test_date_and_time_columns_read_as_one_wall_clock_time(
    date_col: str, time_col: str, expected: tuple[int, ...], fmt: str | None
) -> None:
    lf = pl.LazyFrame({"Date": [date_col], "Time": [time_col]})
    text = pl.concat_str([pl.col("Date"), pl.col("Time")], separator=" ")
    times = text_timestamp_expr(lf, text, tz="Europe/Berlin", where="f.csv 'Date'+'Time'")
    assert _collect(lf, times) == [_utc(*expected) - timedelta(hours=1)]  # CET is UTC+1
    assert times.format == fmt
    assert times.naive is True


# ------------------------------------------------------------------------------------ epochs


@pytest.mark.parametrize(
    ("value", "fmt", "expected"),
    [
        (1_704_067_200, "epoch-s", (2024, 1, 1)),
        (1_704_067_200_000, "epoch-ms", (2024, 1, 1)),
        (1_704_067_200_000_000, "epoch-us", (2024, 1, 1)),
        (1_704_067_200_000_000_000, "epoch-ns", (2024, 1, 1)),
        # each unit starts at its boundary: 1e11 ms, 1e14 us and 1e17 ns are 1e8 seconds
        (100_000_000_000, "epoch-ms", (1973, 3, 3, 9, 46, 40)),
        (100_000_000_000_000, "epoch-us", (1973, 3, 3, 9, 46, 40)),
        (100_000_000_000_000_000, "epoch-ns", (1973, 3, 3, 9, 46, 40)),
        # just below a boundary, the smaller unit (the year 5138)
        (99_999_999_999, "epoch-s", (5138, 11, 16, 9, 46, 39)),
        (99_999_999_999_999, "epoch-ms", (5138, 11, 16, 9, 46, 39, 999000)),
        (99_999_999_999_999_872, "epoch-us", (5138, 11, 16, 9, 46, 39, 999872)),
    ],
)
def test_epoch_unit_comes_from_the_magnitude(
    value: int, fmt: str, expected: tuple[int, ...]
) -> None:
    typed, typed_values = _typed(pl.Series([value, None]))
    text, text_values = _text([str(value)])
    assert typed_values == [_utc(*expected), None]
    assert text_values == [_utc(*expected)]
    for times in (typed, text):
        assert times.format == fmt  # the guess names the --ts-format that reads it
        assert times.naive is False  # epochs are UTC


def test_float_epoch_seconds_are_read_to_the_nearest_second() -> None:
    # float noise below the second (pandas writing 1704067200 as a float) reads as that second
    floats = [1_704_067_199.9999998, 1_704_067_200.4, 1_704_067_200.6]
    expected = [_utc(2024, 1, 1), _utc(2024, 1, 1), _utc(2024, 1, 1, 0, 0, 1)]
    typed, typed_values = _typed(pl.Series(floats))
    assert typed_values == expected
    assert typed.format == "epoch-s"
    text, text_values = _text([repr(f) for f in floats])
    assert text_values == expected
    assert text.format == "epoch-s"
    given, given_values = _formatted([repr(f) for f in floats], "epoch-s")
    assert given_values == expected


def test_nanosecond_epochs_keep_their_microsecond_exactly() -> None:
    # 1e18-sized integers do not fit a float: the microsecond is cut, never rounded up
    ns = [1_704_067_200_123_456_999, 1_704_067_200_999_999_999]
    expected = [_utc(2024, 1, 1, 0, 0, 0, 123456), _utc(2024, 1, 1, 0, 0, 0, 999999)]
    typed, typed_values = _typed(pl.Series(ns))
    assert typed_values == expected
    assert typed.format == "epoch-ns"
    _, given_values = _formatted([str(v) for v in ns], "epoch-ns")
    assert given_values == expected


def test_nanosecond_epochs_in_text_keep_their_microsecond_exactly() -> None:
    _, values = _text(["1704067200123456999", "1704067200999999999"])
    assert values == [_utc(2024, 1, 1, 0, 0, 0, 123456), _utc(2024, 1, 1, 0, 0, 0, 999999)]


def test_unreadable_epoch_digits_are_null_not_an_error() -> None:
    times, values = _text(["1704067200000", "n/a", "1704067260000"])
    assert values == [_utc(2024, 1, 1), None, _utc(2024, 1, 1, 0, 1)]
    assert times.format == "epoch-ms"
    for fmt in ("epoch-s", "epoch-ms"):
        scale = 1 if fmt == "epoch-s" else 1000
        _, given = _formatted([str(1_704_067_200 * scale), "n/a", " "], fmt)
        assert given == [_utc(2024, 1, 1), None, None]


def test_columns_without_a_value_read_as_null() -> None:
    # no value to take a unit from: epoch seconds, never "all dates" (an empty all())
    typed, typed_values = _typed(pl.Series([None, None], dtype=pl.Int64))
    assert typed_values == [None, None]
    assert typed.format == "epoch-s"
    assert typed.naive is False
    text, text_values = _text([None, None])
    assert text_values == [None, None]
    assert text.format is None
    assert text.naive is False


# ------------------------------------------------------------------------------- --ts-format


@pytest.mark.parametrize(
    ("fmt", "text"),
    [
        ("epoch-s", "1704067200"),
        ("epoch-ms", "1704067200000"),
        ("epoch-us", "1704067200000000"),
        ("epoch-ns", "1704067200000000000"),
    ],
)
def test_ts_format_epoch_units_read_that_unit_in_utc(fmt: str, text: str) -> None:
    assert fmt in EPOCH_FORMATS
    times, values = _formatted([f" {text} "], fmt, tz="America/New_York")  # tz ignored
    assert values == [_utc(2024, 1, 1)]
    assert times.naive is False
    assert times.format is None  # given, not guessed
    # the same through timestamp_expr, for a number column and a text column
    for series in (pl.Series([int(text)]), pl.Series([text])):
        typed, typed_values = _typed(series, fmt=fmt, tz="America/New_York")
        assert typed_values == [_utc(2024, 1, 1)]
        assert typed.naive is False


@pytest.mark.parametrize("fmt", ["", "   "])
def test_an_empty_ts_format_is_refused(fmt: str) -> None:
    with pytest.raises(DataError) as e:
        formatted_expr(pl.col("t"), fmt, "UTC")
    assert str(e.value) == (
        "--ts-format is empty (use epoch-s|ms|us|ns, yyyymmdd or a strftime format)"
    )


@pytest.mark.parametrize(
    ("fmt", "text", "expected", "naive"),
    [
        # dates: midnight in tz, not wall-clock times
        ("yyyymmdd", "20240102", (2024, 1, 2, 5), False),
        ("YYYYMMDD", "20240102", (2024, 1, 2, 5), False),
        ("%d/%m/%Y", "13/01/2024", (2024, 1, 13, 5), False),
        ("%d-%h-%Y", "31-Dec-2018", (2018, 12, 31, 5), False),  # %h: the month's name
        # a time of day, however it is spelt: a naive wall-clock time in tz
        ("%Y%m%d %H%M%S", "20240102 093000", (2024, 1, 2, 14, 30), True),
        ("%Y-%m-%d %H:%M", "2024-01-02 09:30", (2024, 1, 2, 14, 30), True),
        ("%Y-%m-%d %T", "2024-01-02 09:30:00", (2024, 1, 2, 14, 30), True),
        ("%Y-%m-%d %R", "2024-01-02 09:30", (2024, 1, 2, 14, 30), True),
        ("%m/%d/%Y %I:%M:%S %p", "01/02/2024 02:30:15 PM", (2024, 1, 2, 19, 30, 15), True),
        ("%m/%d/%Y %-I:%M %p", "1/2/2024 2:30 PM", (2024, 1, 2, 19, 30), True),
        ("%Y-%m-%d %H:%M:%S%.3f", "2024-01-02 09:30:00.250", (2024, 1, 2, 14, 30, 0, 250000), True),
    ],
)
def test_ts_format_strftime_reads_wall_clock_times_in_tz(
    fmt: str, text: str, expected: tuple[int, ...], naive: bool
) -> None:
    times, values = _formatted([text, "garbage"], fmt, tz="America/New_York")
    assert values == [_utc(*expected), None]  # an unreadable value is null, named later
    assert times.naive is naive
    # the same through timestamp_expr (a text column, the user's format)
    typed, typed_values = _typed(pl.Series([text]), fmt=fmt, tz="America/New_York")
    assert typed_values == [_utc(*expected)]
    assert typed.naive is naive


def test_ts_format_percent_r_is_a_wall_clock_time() -> None:
    times, values = _formatted(["01/02/2024 02:30:15 PM"], "%m/%d/%Y %r", "America/New_York")
    assert values == [_utc(2024, 1, 2, 19, 30, 15)]
    assert times.naive is True


def test_ts_format_with_an_offset_converts_and_ignores_tz() -> None:
    fmt = "%Y-%m-%d %H:%M:%S%.3f%z"
    times, values = _formatted(
        ["2024-01-02 09:30:00.250+01:00", "2024-07-01 09:30:00.250-0400", "junk"],
        fmt,
        tz="America/New_York",
    )
    assert values == [
        _utc(2024, 1, 2, 8, 30, 0, 250000),
        _utc(2024, 7, 1, 13, 30, 0, 250000),
        None,
    ]
    assert times.naive is False
    assert times.format is None


# ------------------------------------------------------------------------------ typed columns


def test_a_date_column_is_midnight_utc() -> None:
    times, values = _typed(pl.Series([date(2024, 1, 2), None]))
    assert values == [_utc(2024, 1, 2), None]
    assert times.naive is False
    assert times.format is None


def test_naive_datetimes_are_wall_clock_times_and_zoned_ones_are_converted() -> None:
    naive = pl.Series([datetime(2024, 1, 2, 9, 30)], dtype=pl.Datetime("ms"))
    times, values = _typed(naive)  # no tz: UTC
    assert values == [_utc(2024, 1, 2, 9, 30)]
    assert times.naive is True
    times, values = _typed(naive, tz="America/New_York")
    assert values == [_utc(2024, 1, 2, 14, 30)]
    assert times.naive is True
    zoned = (
        pl.Series([datetime(2024, 1, 2, 9, 30)], dtype=pl.Datetime("ns")).dt.replace_time_zone(
            "Asia/Tokyo"
        )  # 09:30 in Tokyo
    )
    times, values = _typed(zoned, tz="America/New_York")
    assert values == [_utc(2024, 1, 2, 0, 30)]
    assert times.naive is False
    assert times.format is None


@pytest.mark.parametrize("dtype", [pl.Int64, pl.Int32, pl.UInt32])
def test_yyyymmdd_integers_are_dates_in_tz(dtype: pl.DataType) -> None:
    times, values = _typed(pl.Series([20240102, 20240103], dtype=dtype), tz="America/New_York")
    assert values == [_utc(2024, 1, 2, 5), _utc(2024, 1, 3, 5)]
    assert times.format == "yyyymmdd"
    assert times.naive is False


def test_one_yyyymmdd_value_is_a_date_not_an_epoch() -> None:
    times, values = _typed(pl.Series([19900102]))
    assert values == [_utc(1990, 1, 2)]
    assert times.format == "yyyymmdd"
    times, values = _text(["19900102"])
    assert values == [_utc(1990, 1, 2)]
    assert times.format == "yyyymmdd"


def test_yyyymmdd_is_decided_by_the_first_200_values() -> None:
    # a typo further down is one unparsable date, not a reason to read 1990 as epoch seconds
    days = [date(1990, 1, 2) + timedelta(days=i) for i in range(200)]
    ints = [int(d.strftime("%Y%m%d")) for d in days] + [19900732]
    times, values = _typed(pl.Series(ints))
    assert times.format == "yyyymmdd"
    assert values[0] == _utc(1990, 1, 2)
    assert values[199] == _utc(1990, 7, 20)
    assert values[200] is None


def test_a_column_of_another_type_is_refused_by_name() -> None:
    with pytest.raises(DataError) as e:
        _typed(pl.Series([True, False]))
    assert str(e.value) == "bars.csv: column 'ts' has type Boolean, which is not a timestamp"


# ---------------------------------------------------------------- choosing a format on the head


def _metatrader(n: int) -> list[str]:
    """``n`` 1-minute bars from 2024-01-02 00:00, spelt ``2024.01.02 00:00``."""
    start = datetime(2024, 1, 2)
    return [(start + timedelta(minutes=i)).strftime("%Y.%m.%d %H:%M") for i in range(n)]


@pytest.mark.parametrize("junk", [0, 1, 2])
def test_a_format_may_miss_two_values_of_the_head(junk: int) -> None:
    times, values = _text(_metatrader(5) + ["Total: 5 bars"] * junk)  # a vendor's footer
    assert times.format == "%Y.%m.%d %H:%M"
    assert values[:5] == [_utc(2024, 1, 2, 0, i) for i in range(5)]
    assert values[5:] == [None] * junk


def test_a_head_with_three_misses_gets_no_guessed_format() -> None:
    times, values = _text(_metatrader(5) + ["Total: 5 bars"] * 3)
    assert times.format is None  # polars' own parser tries; no format is claimed
    assert values[5:] == [None, None, None]


def test_empty_values_are_not_misses() -> None:
    times, values = _text(_metatrader(5) + [None, None, None])
    assert times.format == "%Y.%m.%d %H:%M"
    assert values == [_utc(2024, 1, 2, 0, i) for i in range(5)] + [None] * 3


def test_a_single_value_is_enough_to_choose_a_format() -> None:
    times, values = _text(["01/02/2024 09:30"])  # slash: month-first
    assert times.format == "%m/%d/%Y %H:%M"
    assert values == [_utc(2024, 1, 2, 9, 30)]


def test_the_format_is_chosen_on_the_first_200_values() -> None:
    # a footer of three lines past the head is three unparsable rows, not a lost guess
    times, values = _text(_metatrader(200) + ["Total", "Copyright", "End"])
    assert times.format == "%Y.%m.%d %H:%M"
    assert values[199] == _utc(2024, 1, 2, 3, 19)
    assert values[200:] == [None, None, None]


def test_a_date_past_the_head_that_fits_only_day_first_decides() -> None:
    # 1-minute bars from 12/01/2022 20:00: the first 240 (the whole 200-value head) are on 12/01,
    # either order; the last 40 on 13/01, which only day-first reads; the spans alone would not
    # tell (4.7 hours one way, 4 the other)
    start = datetime(2022, 1, 12, 20)
    bars = [(start + timedelta(minutes=i)).strftime("%d/%m/%Y %H:%M") for i in range(280)]
    times, values = _text(bars)
    assert times.format == "%d/%m/%Y %H:%M"
    assert values[0] == _utc(2022, 1, 12, 20)
    assert values[-1] == _utc(2022, 1, 13, 0, 39)
    assert None not in values


# ------------------------------------------------------------------- day-first or month-first


def test_a_span_exactly_twice_as_long_loses(caplog: pytest.LogCaptureFixture) -> None:
    # monthly bars on the first trading days 3 Jan and 1 Feb 2022: day-first spans 29 days,
    # month-first (1 March .. 2 January) 58, exactly twice: day-first, against the slash
    # date_order's info line: its logger's parent set, not only timestamps' (which passed in a
    # worker where an earlier test had set the package's level, and failed alone)
    with caplog.at_level(logging.INFO, logger="foxhunt.data.read"):
        times, values = _text(["03/01/2022", "01/02/2022"])
    assert values == [_utc(2022, 1, 3), _utc(2022, 2, 1)]
    assert times.format == "%d/%m/%Y"
    assert "read day-first (the bars span 29 days that way, 58 the other)" in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_one_date_warns_naming_the_file_and_the_other_format(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def warning(**kw: object) -> str:
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger=_LOGGER):
            lf = pl.LazyFrame({"ts": ["01/02/2024 09:30"]})
            times = (
                timestamp_expr(lf, _PATH, "ts", pl.String)
                if not kw
                else text_timestamp_expr(lf, pl.col("ts"), **kw)
            )
            assert _collect(lf, times) == [_utc(2024, 1, 2, 9, 30)]
        (record,) = [r for r in caplog.records if r.levelno == logging.WARNING]
        return record.getMessage()

    tail = (
        " fit both day-first and month-first (e.g. '01/02/2024 09:30') and span the same time "
        "either way: read month-first; --ts-format '%d/%m/%Y %H:%M' reads them the other way"
    )
    assert warning() == "dates in bars.csv 'ts'" + tail
    assert warning(tz="UTC") == "dates in the file" + tail
    assert warning(where="f.csv 'Date'+'Time'") == "dates in f.csv 'Date'+'Time'" + tail


@pytest.mark.parametrize(
    ("texts", "kw", "expected"),
    [
        (["01/04/10"], {}, [(2010, 1, 4)]),
        (["01/04/10", "01/05/10"], {}, [(2010, 1, 4), (2010, 1, 5)]),
        (["04.01.10"], {"dayfirst": False}, [(2010, 4, 1)]),
    ],
)
def test_two_digit_years_read_month_first_are_this_century(
    texts: list[str], kw: dict[str, object], expected: list[tuple[int, ...]]
) -> None:
    _, values = _text(texts, **kw)
    assert values == [_utc(*e) for e in expected]


@pytest.mark.parametrize(
    ("fmt", "text"),
    [
        ("%Y-%m-%dT%H:%M:%S%z", "2024-01-02T09:30:00+0100"),
        ("%Y-%m-%dT%H:%M:%S%:z", "2024-01-02T09:30:00+01:00"),
        ("%Y-%m-%dT%H:%M:%S%#z", "2024-01-02T09:30:00+01:00"),
        ("%+", "2024-01-02T09:30:00+01:00"),
    ],
)
def test_a_format_with_its_offset_is_an_instant_whatever_tz(fmt: str, text: str) -> None:
    times, values = _formatted([text], fmt, "America/New_York")
    assert values == [_utc(2024, 1, 2, 8, 30)] and times.naive is False


def test_strftime_epoch_seconds_are_utc_whatever_tz() -> None:
    times, values = _formatted(["1704187800"], "%s", "America/New_York")
    assert values == [_utc(2024, 1, 2, 9, 30)] and times.naive is False


@pytest.mark.parametrize(
    ("fmt", "whole"),
    [
        ("epoch-ms", 1_704_187_800_123),
        ("epoch-us", 1_704_187_800_123_456),
        ("epoch-ns", 1_704_187_800_123_456_000),
    ],
)
def test_given_epoch_units_read_a_float_columns_text(fmt: str, whole: int) -> None:
    # pandas writes an integer column with missing values as floats: "1704187800123.0"
    _, values = _formatted([f"{whole}.0", str(whole)], fmt)
    micro = 123_000 if fmt == "epoch-ms" else 123_456
    assert values == [_utc(2024, 1, 2, 9, 30, 0, micro)] * 2
