"""timestamps.py where `make mutate` (session 53) found it loose, outside the format guess
(``text_formats.text_format``, ``date_order.order_by_span``): Excel serial days (the range's
ends, one value, the first 200 values deciding, typed number columns, which are wall-clock
times), an offset or a zone name after the time (the minutes of an offset, ``GMT``/``UTC`` before it, ``dayfirst`` and the file's
name reaching the dates before it, how the spelling is named), six-digit dates, offsets only
polars' own parser finds, epoch digits past 64 bits, scientific epochs that lost digits, and the
strftime directives that make a ``--ts-format`` a wall-clock time.

Frames are built inside the tests (never at import: mutmut's forked workers hang on it).
"""

from __future__ import annotations

import logging
from datetime import datetime
from pathlib import Path

import polars as pl
import pytest
from tests.data.read.test_timestamps_mutants import _collect, _utc

from foxhunt.data.read.text_formats import _parsed_counts
from foxhunt.data.read.timestamps import (
    Times,
    formatted_expr,
    short_mantissa,
    text_timestamp_expr,
    timestamp_expr,
)

_LOGGER = "foxhunt.data.read.timestamps"
_NEW_YORK = "America/New_York"


def _text(values: list[str], **kw: object) -> tuple[Times, list[datetime | None]]:
    """``text_timestamp_expr`` on a text column ``t`` holding ``values``."""
    lf = pl.LazyFrame({"t": values}, schema={"t": pl.String})
    times = text_timestamp_expr(lf, pl.col("t"), **kw)  # type: ignore[arg-type]
    return times, _collect(lf, times)


def _formatted(values: list[str], fmt: str, tz: str = "UTC") -> tuple[Times, list]:
    lf = pl.LazyFrame({"t": values}, schema={"t": pl.String})
    times = formatted_expr(pl.col("t"), fmt, tz)
    return times, _collect(lf, times)


# ------------------------------------------------------------------------ Excel serial days


def test_excel_serial_days_with_a_time_are_wall_clock_times_in_tz() -> None:
    """``43164.60417`` is 2018-03-05 14:30 on the sheet's clock: read in ``tz``, naive."""
    times, got = _text(["43164.60417", "43164.625"], tz=_NEW_YORK)
    assert got == [_utc(2018, 3, 5, 19, 30), _utc(2018, 3, 5, 20)]
    assert (times.naive, times.format) == (True, "Excel serial days")


def test_whole_excel_serial_days_are_dates_not_wall_clock_times() -> None:
    times, got = _text(["43164", "43165"], tz=_NEW_YORK)
    assert got == [_utc(2018, 3, 5, 5), _utc(2018, 3, 6, 5)]  # local midnight
    assert (times.naive, times.format) == (False, "Excel serial days")


def test_one_excel_serial_day_is_enough() -> None:
    times, got = _text(["43164.60417"])
    assert got == [_utc(2018, 3, 5, 14, 30)]
    assert times.format == "Excel serial days"


@pytest.mark.parametrize(
    ("text", "expected", "fmt"),
    [
        ("20000", _utc(1954, 10, 3), "Excel serial days"),  # the range's first day
        ("80000", _utc(1970, 1, 1, 22, 13, 20), "epoch-s"),  # past its end: epoch seconds
    ],
)
def test_excel_serial_days_run_from_20000_to_before_80000(
    text: str, expected: datetime, fmt: str
) -> None:
    times, got = _text([text])
    assert got == [expected]
    assert times.format == fmt


def test_excel_serial_days_are_decided_by_the_first_200_values() -> None:
    minutes = [str(43164 + i / 1440) for i in range(200)]
    times, got = _text([*minutes, "19999.5"])  # row 201 is below the range: read as Excel still
    assert times.format == "Excel serial days"
    assert (got[0], got[1], got[-1]) == (
        _utc(2018, 3, 5),
        _utc(2018, 3, 5, 0, 1),
        _utc(1954, 10, 2, 12),
    )


@pytest.mark.parametrize(
    ("values", "expected", "naive"),
    [
        ([43164.60417, 43164.625], [_utc(2018, 3, 5, 19, 30), _utc(2018, 3, 5, 20)], True),
        ([43164, 43165], [_utc(2018, 3, 5, 5), _utc(2018, 3, 6, 5)], False),  # Int64: dates
    ],
)
def test_a_number_column_of_excel_serial_days_reads_in_tz(
    values: list[float], expected: list[datetime], naive: bool
) -> None:
    lf = pl.LazyFrame({"ts": values})
    times = timestamp_expr(lf, Path("bars.csv"), "ts", lf.collect_schema()["ts"], tz=_NEW_YORK)
    assert _collect(lf, times) == expected
    assert (times.naive, times.format) == (naive, "Excel serial days")


# ---------------------------------------------------------- an offset or a zone after the time


def test_an_offset_with_minutes_is_applied_with_its_sign() -> None:
    """Dukascopy's ``Local time`` in India (+05:30) and Newfoundland (-03:30)."""
    times, got = _text(["31.12.2021 23:01:00.000 GMT+0530", "31.12.2021 23:01:00.000 GMT-0330"])
    assert got == [_utc(2021, 12, 31, 17, 31), _utc(2022, 1, 1, 2, 31)]
    assert times.naive is False
    assert times.format == "%d.%m.%Y %H:%M:%S%.f with its UTC offset"


@pytest.mark.parametrize("text", ["2024-01-02 09:30:00 GMT+0100", "2024-01-02 09:30:00 UTC+01:00"])
def test_iso_text_with_gmt_or_utc_before_its_offset_reads(text: str) -> None:
    times, got = _text([text], tz=_NEW_YORK)
    assert got == [_utc(2024, 1, 2, 8, 30)]
    assert (times.naive, times.format) == (False, "ISO 8601 with its UTC offset")


def test_dayfirst_reaches_the_dates_before_an_offset() -> None:
    times, got = _text(["05.03.2018 09:30 GMT+0100"], dayfirst=False)  # dotted: day-first else
    assert got == [_utc(2018, 5, 3, 8, 30)]
    assert times.format == "%m.%d.%Y %H:%M with its UTC offset"


@pytest.mark.parametrize(
    ("text", "expected", "fmt"),
    [
        ("20240102 09:30:00 US/Eastern", _utc(2024, 1, 2, 14, 30), "%Y%m%d %H:%M:%S in US/Eastern"),
        (
            "2024-01-02 09:30:00 America/Chicago",
            _utc(2024, 1, 2, 15, 30),
            "ISO 8601 in America/Chicago",
        ),
    ],
)
def test_a_zone_name_after_the_time_is_named_with_the_spelling(
    text: str, expected: datetime, fmt: str
) -> None:
    times, got = _text([text])
    assert got == [expected]
    assert (times.naive, times.format) == (False, fmt)


def test_dayfirst_reaches_the_dates_before_a_zone_name() -> None:
    times, got = _text(["05/03/2018 09:30:00 US/Eastern"], dayfirst=True)  # slash: month-first else
    assert got == [_utc(2018, 3, 5, 14, 30)]  # 5 March, New York winter time
    assert times.format == "%d/%m/%Y %H:%M:%S in US/Eastern"


@pytest.mark.parametrize("text", ["05/03/2018 09:30:00 US/Eastern", "05/03/2018 09:30 GMT+0100"])
def test_the_warning_on_an_ambiguous_date_before_a_zone_or_offset_names_the_file(
    caplog: pytest.LogCaptureFixture, text: str
) -> None:
    with caplog.at_level(logging.WARNING, logger=_LOGGER):
        _text([text], where="AAPL.csv 'time'")
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warned
    assert all("AAPL.csv 'time'" in message for message in warned)


# -------------------------------------------------------------------- digits and other spellings


def test_six_digit_dates_are_named_yymmdd_and_are_dates_in_tz() -> None:
    times, got = _text(["240102", "240103"], tz=_NEW_YORK)
    assert got == [_utc(2024, 1, 2, 5), _utc(2024, 1, 3, 5)]
    assert (times.naive, times.format) == (False, "%y%m%d")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-01-03T103000-05", _utc(2024, 1, 3, 15, 30)),  # ISO's basic clock and an offset
        ("2024-01-02T10:30:00z", _utc(2024, 1, 2, 10, 30)),  # a lower-case Z
    ],
)
def test_an_offset_only_polars_reads_is_an_instant_whatever_tz(
    text: str, expected: datetime
) -> None:
    times, got = _text([text], tz=_NEW_YORK)
    assert got == [expected]
    assert (times.naive, times.format) == (False, None)


def test_epoch_digits_past_64_bits_are_null_not_an_error() -> None:
    times, got = _text(["1704187800", "99999999999999999999999"])
    assert (times.format, got) == ("epoch-s", [_utc(2024, 1, 2, 9, 30), None])
    _, given = _formatted(
        ["1704187800000", "1e9999999999999999999", "99999999999999999999999"], "epoch-ms"
    )
    assert given == [_utc(2024, 1, 2, 9, 30), None, None]


# -------------------------------------------------------------- scientific notation of epochs


def test_a_scientific_epoch_with_every_digit_written_is_read_off_the_minute() -> None:
    _, got = _formatted(["1.704187830000E+12"], "epoch-ms")  # 13 digits of 13
    assert got == [_utc(2024, 1, 2, 9, 30, 30)]


def test_a_scientific_epoch_one_digit_short_and_off_the_minute_is_null() -> None:
    _, got = _formatted(["1.70418783000E+12"], "epoch-ms")  # 12 digits of 13: the last is lost
    assert got == [None]


def test_an_unreadable_scientific_value_does_not_null_the_others() -> None:
    _, got = _formatted(["1.7041878E+12", "1.5E+400"], "epoch-ms")
    assert got == [_utc(2024, 1, 2, 9, 30), None]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.704187830000E+12", None),  # every digit written
        ("1.70418783000E+12", (12, 13)),  # one short
        ("1.64100E+12", (6, 13)),
    ],
)
def test_short_mantissa_is_the_digits_written_of_those_the_number_has(
    text: str, expected: tuple[int, int] | None
) -> None:
    assert short_mantissa(text) == expected


# ---------------------------------------------------------------------------- --ts-format


@pytest.mark.parametrize(
    ("fmt", "text"),
    [("%Y-%m-%d %X", "2024-01-02 09:30:00"), ("%c", "Tue Jan  2 09:30:00 2024")],
)
def test_ts_format_locale_clocks_are_wall_clock_times(fmt: str, text: str) -> None:
    times, got = _formatted([text], fmt, tz=_NEW_YORK)
    assert got == [_utc(2024, 1, 2, 14, 30)]
    assert times.naive is True


# ------------------------------------------------------------------------------ the format guess


def test_a_four_digit_year_is_1000_or_later() -> None:
    """Year 1000 is the first four-digit year; polars' 999 from ``%Y`` is a shorter year."""
    head = pl.Series(["1000.01.02", "0999.01.02"])
    assert _parsed_counts(head, ["%Y.%m.%d"], {}) == {"%Y.%m.%d": 1}


def test_epoch_seconds_that_are_no_number_are_null_not_a_failed_read(tmp_path: Path) -> None:
    """``--ts-format epoch-s`` over a ``nan`` (and a typed Float64 column with NaN, inf or
    1e30) failed the whole read in polars' words ("conversion from f64 to i64 failed") until
    session 53: the row is named instead."""
    from foxhunt.data.read.bars import read_bars
    from foxhunt.data.read.options import ReadOptions
    from foxhunt.errors import DataError

    lf = pl.LazyFrame({"ts": [1704187800.0, float("nan"), float("inf"), 1e30]})
    times = timestamp_expr(lf, Path("bars.csv"), "ts", pl.Float64, tz="UTC")
    assert _collect(lf, times) == [_utc(2024, 1, 2, 9, 30), None, None, None]
    path = tmp_path / "BTCUSD.csv"
    path.write_text("ts,open,high,low,close\n1704187800,1,2,0.5,1.5\nnan,1,2,0.5,1.5\n")
    with pytest.raises(DataError, match=r"column 'ts', row 1: unparsable timestamp 'nan'"):
        read_bars(path, options=ReadOptions(ts_format="epoch-s"))
