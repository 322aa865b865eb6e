"""Timestamp columns -> ``Datetime("us", "UTC")`` expressions.

Accepted: datetimes (any zone, converted; naive ones are wall-clock times in ``tz``), dates,
integer/float epochs (unit from the magnitude: s, ms, us, ns; always UTC) and text:

* ISO 8601 with or without offset (``2024-01-02 09:30:00``, ``2012-02-01 00:00:00+00:00``),
  an offset of whole hours too (``2024-01-02 09:30:00-05``: PostgreSQL's ``timestamptz`` text);
* epoch digits (``1640995200000``, crypto ``open_time``);
* vendor spellings, the format chosen by trying a short list on the data:
  ``2024.01.02 09:30`` (MetaTrader), ``20240102 093000`` (NinjaTrader), ``01/02/2024 09:30``
  (Kibot, TradeStation), ``01.02.2012 00:00:00.000`` (Dukascopy), with or without seconds,
  12-hour clocks (``01/02/2024 02:30 PM``), month names (``Dec 31, 2018``, ``31-Dec-2018``),
  two-digit years (``01/04/10``: 2010); any of these followed by its UTC offset
  (``31.12.2021 23:01:00.000 GMT+0100``, Dukascopy's ``Local time``), applied row by row.

Day-first or month-first is decided by the data: ``13/01/2024`` only parses day-first, and when
every value fits both, the reading whose bars span the shorter time (first to last) wins if the
other spans at least twice as long (bars are contiguous: ``01/01``-``12/01`` 1-minute bars read
month-first would cover eleven months). Otherwise (one date, no signal) slash dates are read
month-first (US vendors) and dotted or dashed dates day-first (European vendors), with a warning
naming the ``--ts-format`` that reads them the other way; ``dayfirst=`` forces it.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

import polars as pl

from foxhunt.data.read.digit_dates import cyymmdd_days
from foxhunt.data.read.lean import day_millis
from foxhunt.data.read.text_formats import HEAD as _HEAD
from foxhunt.data.read.text_formats import text_format, timed_sample
from foxhunt.data.read.zones import local_to_utc, utc_to_local
from foxhunt.errors import DataError

__all__ = ["Times", "local_to_utc", "text_timestamp_expr", "timestamp_expr"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Times:
    """A timestamp expression and how it was read.

    Attributes:
        expr: ``Datetime("us", "UTC")`` expression; unparsable values are null.
        naive: the values were wall-clock times without a zone (read in the given ``tz``).
        format: the format guessed for text or numbers (``%Y%m%d``), None when the values
            were typed or the format was given.
    """

    expr: pl.Expr
    naive: bool
    format: str | None = None
    other: str | None = None
    """The other date order's format where both read every date and nothing decided between
    them (a file of one day of ``05/03/2018``): a guess the user should see."""
    dated: bool = False  # dates alone (2024-01-02, a date column): each its midnight in tz


def _epoch_unit(value: float) -> str:
    v = abs(value)
    if v >= 1e17:
        return "ns"
    if v >= 1e14:
        return "us"
    if v >= 1e11:
        return "ms"
    return "s"


EPOCH_FORMATS = ("epoch-s", "epoch-ms", "epoch-us", "epoch-ns")
"""``--ts-format`` values for integer epochs (else ``yyyymmdd`` or a strftime format)."""
_YYYYMMDD = re.compile(r"^(19|20)\d{2}(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])$")
_YYMMDD = re.compile(r"^\d{2}(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])$")


def _epoch_expr(c: pl.Expr, first: float | None, unit: str | None = None) -> pl.Expr:
    unit = unit or (_epoch_unit(first) if first is not None else "s")
    scale = {"s": 1_000_000, "ms": 1_000, "us": 1}.get(unit)
    # seconds through a float (fractions of a second); nan, inf or 1e30 become null, named by
    # their row, not a failed read of the whole file
    seconds = c.cast(pl.Float64).round(0).cast(pl.Int64, strict=False)
    whole = seconds if scale == 1_000_000 else c.cast(pl.Int64)
    micros = whole * scale if scale else whole // 1_000
    return micros.cast(pl.Datetime("us")).dt.replace_time_zone("UTC")


_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?")
_OFFSET = re.compile(r"(Z|[+-]\d{2}:?\d{2})$")
_DIGIT = re.compile(r"\d")
_SPACED_OFFSET = r"(\d)\s+([+-]\d{2}:?\d{2}|Z)$"
HOURS_OFFSET = r"(\d:\d{2}(?::\d{2}(?:\.\d+)?)?\s*(?:GMT|UTC)?\s*[+-]\d{2})$"
"""A clock followed by an offset of whole hours (``10:30:00-05``, ``10:30:00.5+00``: PostgreSQL
writes ``timestamptz`` so), read as ``-05:00``; the clock before it keeps a date's day
(``2024-01-03``) from being taken for one."""
_NT8_TICKS = r"^(\d{8} \d{6}) (\d{7})$"
_CJK_WEEKDAY = r"(\d),\s*[一二三四五六日]$"
"""East Money's date with its weekday after a comma, ``2024-01-03,三``: the weekday dropped."""
"""NinjaTrader 8's export of a time with the seven digits of its 100-ns ticks after a space."""
_ZONE_SUFFIX = re.compile(r"\d\s+([A-Za-z][A-Za-z_]*(/[A-Za-z][A-Za-z0-9_+\-]*)+|UTC|GMT)$")
"""A time followed by an IANA zone name (``... 09:30:00 US/Eastern``, as IB writes bars) or by
``UTC``/``GMT`` (BigQuery's ``2024-01-02 09:30:00 UTC``). Abbreviations such as ``EST`` are not
taken: vendors use them for New York time with daylight saving, the zone database for UTC-5."""


_TRAILING_OFFSET = r"(\d:\d{2}(?::\d{2}(?:\.\d+)?)?)\s*(?:GMT|UTC)?\s*([+-])(\d{2}):?(\d{2})$"
"""A clock followed by its UTC offset, written the way ISO 8601 does not have it:
``31.12.2021 23:01:00.000 GMT+0100`` (Dukascopy's ``Local time``), ``01/02/2024 09:30 -05:00``.
Each row's own offset is applied (a local clock's offset changes with daylight saving)."""


US_ZONES = {"EST": -300, "EDT": -240, "CST": -360, "CDT": -300, "MST": -420, "MDT": -360,
            "PST": -480, "PDT": -420}  # fmt: skip
"""A US zone's abbreviation after a time (``2024-03-08 09:30:00 EST``, ``... EDT`` after the
change): its offset in minutes east of UTC, read so only where the column holds both of a
zone's abbreviations (many vendors write ``EST`` all year for New York's clock, and ``CST``
alone may be China's)."""
_US_ZONE = r"(\d)\s+([ECMP][SD]T)$"


def _us_zones(lf: pl.LazyFrame, text: pl.Expr) -> bool:
    """Whether the column's times end in the abbreviations of :data:`US_ZONES`, both the
    standard and the daylight one of a zone among them (``EST`` and ``EDT``)."""
    found = set(
        lf.select(text.str.extract(_US_ZONE, 2).unique()).collect().to_series().drop_nulls()
    )
    return found <= set(US_ZONES) and any({f"{z}ST", f"{z}DT"} <= found for z in "ECMP")


def _offset_minutes(text: pl.Expr) -> pl.Expr:
    """Each row's trailing offset (:data:`_TRAILING_OFFSET`) in minutes east of UTC; null
    where a row has none."""
    parts = text.str.extract_groups(_TRAILING_OFFSET)
    hours = parts.struct.field("3").cast(pl.Int64, strict=False)
    minutes = hours * 60 + parts.struct.field("4").cast(pl.Int64, strict=False)
    return pl.when(parts.struct.field("2") == "-").then(-minutes).otherwise(minutes)


def _zone_suffix(sample: str) -> str | None:
    """The IANA zone a timestamp ends with (``US/Eastern``, ``America/Chicago``), or None."""
    import zoneinfo

    match = _ZONE_SUFFIX.search(sample)
    if match is None:
        return None
    try:
        zoneinfo.ZoneInfo(match.group(1))
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return None
    return match.group(1)


def _looks_yyyymmdd(lf: pl.LazyFrame, text: pl.Expr, pattern: re.Pattern[str] = _YYYYMMDD) -> bool:
    """Eight-digit integers that are all dates 1900-2099 (``19900102``): a date, not an epoch
    (8-digit epoch seconds would be 1970-1973, and no vendor writes those); with
    :data:`_YYMMDD`, six-digit ones (``240102``: epoch seconds of 3 January 1970)."""
    head = lf.select(text.cast(pl.String).str.strip_chars()).head(_HEAD).collect().to_series()
    head = head.drop_nulls()
    return head.len() > 0 and bool(head.str.contains(pattern.pattern).all())


EXCEL_DAYS = (20_000, 80_000)
"""Excel's serial dates, days since 1899-12-30 (1954-2119): a sheet saved as CSV without its
date format writes ``43164.60417`` for 2018-03-05 14:30. As epoch seconds these would all be on
1 January 1970 (refused as before 1980, or as duplicate bars a second apart)."""


def _looks_excel(lf: pl.LazyFrame, number: pl.Expr) -> bool:
    head = lf.select(number.cast(pl.Float64, strict=False)).head(_HEAD).collect().to_series()
    head = head.drop_nulls()
    low, high = EXCEL_DAYS
    return head.len() > 0 and bool(((head >= low) & (head < high)).all())


def _excel_days(lf: pl.LazyFrame, number: pl.Expr, tz: str) -> Times:
    """Excel serial dates (:data:`EXCEL_DAYS`) as naive wall-clock times in ``tz``, to the
    nearest second (five decimals hold a time to 0.9 s); whole numbers are dates."""
    days = number.cast(pl.Float64, strict=False)
    seconds = (days * 86_400).round(0).cast(pl.Int64)
    wall = pl.lit(datetime(1899, 12, 30)).cast(pl.Datetime("us")) + pl.duration(seconds=seconds)
    timed = bool(lf.select((days != days.floor()).any()).collect().item())
    return Times(local_to_utc(wall, tz), naive=timed, format="Excel serial days")


_ZONED = ("%z", "%:z", "%::z", "%#z", "%+")
"""strftime directives of a written UTC offset: polars gives such a format a zone."""


def _whole(digits: pl.Expr) -> pl.Expr:
    """Epoch digits as Int64 (a float64 holds 15-16 digits, a nanosecond epoch 19); text with
    a fraction (``1704187800123.0``, a pandas float column) rounded to the whole unit."""
    return pl.coalesce(
        digits.cast(pl.Int64, strict=False),
        digits.cast(pl.Float64, strict=False).round(0).cast(pl.Int64, strict=False),
    )


SCIENTIFIC = r"^[+-]?(\d)\.?(\d*)[eE]\+?(\d+)$"
"""A number in scientific notation: its first digit, the digits after the point, the exponent."""
_PER_MINUTE = {"s": 60, "ms": 60_000, "us": 60_000_000, "ns": 60_000_000_000}


def short_mantissa(text: str) -> tuple[int, int] | None:
    """``(significant digits written, digits of the whole number)`` of a whole number written in
    scientific notation with fewer digits than it has (``1.64100E+12``: 6 of 13); else None."""
    m = re.match(SCIENTIFIC, text.strip())
    if m is None or len(m[1] + m[2]) >= int(m[3]) + 1:
        return None
    return len(m[1] + m[2]), int(m[3]) + 1


def lossy_scientific(digits: pl.Expr, number: pl.Expr, unit: str) -> pl.Expr:
    """Epochs in scientific notation whose last digits are lost: written with fewer significant
    digits than the number has (``1.64100E+12``, 6 of 13: a spreadsheet's number format), in a
    column where such a value is off the whole minute (``1.64108E+12`` is 23:33:20). R writes
    exact epochs so too (``1.7041536e+12``): on whole minutes, they are read."""
    kept = 1 + digits.str.extract(SCIENTIFIC, 2).str.len_chars()
    whole = 1 + digits.str.extract(SCIENTIFIC, 3).cast(pl.Int64, strict=False)
    short = (kept < whole).fill_null(False)
    return short & (short & (number % _PER_MINUTE[unit] != 0).fill_null(False)).any()


def formatted_expr(text: pl.Expr, fmt: str, tz: str) -> Times:
    """Timestamps read with the user's ``--ts-format``: ``epoch-s|ms|us|ns`` (UTC),
    ``yyyymmdd`` or a strftime format (naive wall-clock times in ``tz`` unless it has an offset:
    ``%z``, ``%:z``, ``%#z``, ``%+``; ``%s`` is epoch seconds, UTC).

    Raises:
        DataError: an empty format.
    """
    if fmt in EPOCH_FORMATS:
        unit = fmt.removeprefix("epoch-")
        digits = text.cast(pl.String).str.strip_chars()
        number = digits.cast(pl.Float64, strict=False) if unit == "s" else _whole(digits)
        # 1.64100E+12 (a spreadsheet's format) lost its digits: unparsable, named by its row
        number = pl.when(lossy_scientific(digits, number, unit)).then(None).otherwise(number)
        return Times(_epoch_expr(number, None, unit), False)
    if not fmt.strip():
        raise DataError(
            "--ts-format is empty (use epoch-s|ms|us|ns, yyyymmdd or a strftime format)"
        )
    pattern = "%Y%m%d" if fmt.lower() == "yyyymmdd" else fmt
    t = text.cast(pl.String).str.strip_chars()
    parsed = t.str.to_datetime(pattern, time_unit="us", strict=False)
    if any(k in pattern for k in _ZONED):  # the text carries its offset: an instant
        return Times(parsed.dt.convert_time_zone("UTC"), False)
    if "%s" in pattern:  # epoch seconds: an instant, read naive by polars
        return Times(parsed.dt.replace_time_zone("UTC"), False)
    timed = any(k in pattern for k in ("%H", "%M", "%S", "%T", "%R", "%I", "%r", "%X", "%c"))
    return Times(local_to_utc(parsed, tz), naive=timed)


_END_OF_DAY = r"([ T])24(:?)00((?::?00(?:\.0*)?)?)( ?(?:Z|[+-]\d\d:?\d\d))?$"
"""A day's end written as ``24:00`` (``24:00:00``, ``2400``): the next day's 00:00."""


def text_timestamp_expr(
    lf: pl.LazyFrame,
    text: pl.Expr,
    *,
    tz: str = "UTC",
    dayfirst: bool | None = None,
    where: str = "the file",
) -> Times:
    """Parse timestamp strings (see the module docstring for the spellings); a time of
    ``24:00`` (``24:00:00``, ``2400``: the end of a day, as some daily and hourly exports write
    midnight) is the next day's ``00:00``.

    Args:
        lf: the file's lazy frame (samples are read from it to choose a unit/format).
        text: the text expression.
        tz: zone of naive wall-clock times.
        dayfirst: force day-first (True) or month-first (False) for ambiguous dates.
        where: the file (and column), for log messages.

    Returns:
        The UTC expression and whether the values were naive.
    """
    text = text.str.strip_chars()
    if _day_ends(lf, text):  # daily bars stamped at their day's last minute: their dates
        dates = _text_times(
            lf, text.str.replace(_DAY_END, ""), tz=tz, dayfirst=dayfirst, where=where
        )
        return replace(dates, format=f"{dates.format or 'ISO 8601'} dates (23:59 read past)")
    if _hours_offsets(lf, text):  # only then: a regex over every row costs a tenth of a read
        text = text.str.replace(HOURS_OFFSET, "${1}:00")
    end_of_day = text.str.contains(_END_OF_DAY)
    text = text.str.replace(_END_OF_DAY, "${1}00${2}00${3}${4}")
    times = _text_times(lf, text, tz=tz, dayfirst=dayfirst, where=where)
    if times.naive:  # the next day on the local calendar (23 or 25 hours on a DST change)
        later = local_to_utc(utc_to_local(times.expr, tz) + pl.duration(days=1), tz)
    else:
        later = times.expr + pl.duration(days=1)
    return replace(times, expr=pl.when(end_of_day).then(later).otherwise(times.expr))


_DAY_END = r"[ T]23:59(?::59(?:\.9+)?|:00(?:\.0+)?)?(?: ?(?:Z|[+-]\d\d:?\d\d|UTC|GMT))?$"
"""A day's last minute or second after a date, with its offset if any (``2024-01-03 23:59``,
``2024-01-03T23:59:59-05:00``): how some daily exports stamp a day's bar."""


def _day_ends(lf: pl.LazyFrame, text: pl.Expr) -> bool:
    """Whether every time is a day's last minute (:data:`_DAY_END`): daily bars labelled by
    their date, read as dates. Read as times, 23:59 UTC is New York's evening, after its
    trading day's roll: each bar was judged and forecast as the next day's (a Friday's as a
    Saturday's, until session 57). The first rows decide before the whole column is read."""
    values = text.drop_nulls()
    try:
        first = values.head(64).str.contains(_DAY_END)
        head = lf.select(first.all() & (first.len() > 0)).collect().item()  # no value: no day
        return bool(head) and bool(lf.select(values.str.contains(_DAY_END).all()).collect().item())
    except pl.exceptions.PolarsError:
        return False


def _hours_offsets(lf: pl.LazyFrame, text: pl.Expr) -> bool:
    """Whether the first rows' times end in an offset of whole hours (:data:`HOURS_OFFSET`);
    True where they cannot be read (the rewrite then runs, as it always did)."""
    try:
        head = lf.select(text.alias("__text")).head(64).collect()["__text"]
    except pl.exceptions.PolarsError:
        return True
    return bool(head.str.contains(HOURS_OFFSET).any())


def _text_times(
    lf: pl.LazyFrame, text: pl.Expr, *, tz: str, dayfirst: bool | None, where: str
) -> Times:
    """:func:`text_timestamp_expr` for text without a ``24:00``."""
    # "09:30:00 +0000" / "09:30:00 Z" (a space before the offset: Go, some loggers) as ISO has it
    # the IB API's "20180305  09:30:00": runs of blanks read as one space (else polars' own
    # parser read it, not as naive, and the zone rules never saw it: bars 5 hours early)
    text = text.str.strip_chars().str.replace_all(r"\s{2,}", " ")
    text = text.str.replace(_SPACED_OFFSET, "${1}${2}")
    # NinjaTrader 8 writes the 100-ns ticks of the second after a space: "... 093000 0000000"
    text = text.str.replace(_NT8_TICKS, "${1}.${2}")
    text = text.str.replace(_CJK_WEEKDAY, "${1}")
    # the spelling is judged on the first value with a digit: a first row of junk ("n/a", a
    # banner) is then one unparsable row named later, not a wrong guess for the whole column
    head = lf.select(text.drop_nulls().head(_HEAD)).collect().to_series()
    sample = next((v for v in head if _DIGIT.search(v)), head[0] if head.len() else None)
    sample = timed_sample(head.to_list(), sample) or sample  # midnight as the date alone
    zone = _zone_suffix(sample) if sample is not None else None
    if zone is not None:  # Interactive Brokers: "20240102 09:30:00 US/Eastern"
        suffix = f" {zone}"
        bare = pl.when(text.str.ends_with(suffix)).then(text.str.strip_suffix(suffix))
        inner = _text_times(lf, bare, tz=zone, dayfirst=dayfirst, where=where)
        spelled = f"{inner.format or 'ISO 8601'} in {zone}"
        return Times(inner.expr, naive=False, format=spelled)
    offset = re.search(_TRAILING_OFFSET, sample) if sample is not None else None
    if offset is not None and (not _ISO.match(offset.string) or "GMT" in sample or "UTC" in sample):
        bare = text.str.replace(_TRAILING_OFFSET, "${1}")
        inner = _text_times(lf, bare, tz="UTC", dayfirst=dayfirst, where=where)
        expr = inner.expr - pl.duration(minutes=_offset_minutes(text))
        return Times(expr, naive=False, format=f"{inner.format or 'ISO 8601'} with its UTC offset")
    if sample is not None and re.search(_US_ZONE, sample) and _us_zones(lf, text):
        bare = text.str.replace(_US_ZONE, "${1}")
        inner = _text_times(lf, bare, tz="UTC", dayfirst=dayfirst, where=where)
        east = text.str.extract(_US_ZONE, 2).replace_strict(US_ZONES, default=None)
        expr = inner.expr - pl.duration(minutes=east.cast(pl.Int64))
        return Times(expr, naive=False, format=f"{inner.format or 'ISO 8601'} with its US zone")
    if sample is not None and re.match(SCIENTIFIC, sample):  # R's and a spreadsheet's epochs
        unit = _epoch_unit(float(sample))  # 1.704067200E+09; lost digits refused by row
        return replace(formatted_expr(text, f"epoch-{unit}", tz), format=f"epoch-{unit}")
    if sample is not None and _NUMBER.match(sample):
        if _looks_yyyymmdd(lf, text):
            return replace(formatted_expr(text, "yyyymmdd", tz), format="yyyymmdd")
        if (days := cyymmdd_days(lf, text)) is not None:  # before 2000 six digits, then seven
            return replace(formatted_expr(days, "yyyymmdd", tz), format="CYYMMDD")
        if _looks_yyyymmdd(lf, text, _YYMMDD):  # MetaStock's and CSI's old 6-digit dates
            return replace(formatted_expr(text, "%y%m%d", tz), format="%y%m%d")
        number = text.cast(pl.Float64, strict=False)
        if _looks_excel(lf, number):
            return _excel_days(lf, number, tz)
        unit = _epoch_unit(float(sample))
        expr = _epoch_expr(_whole(text), float(sample))
        return Times(expr, False, f"epoch-{unit}")
    if sample is None:
        return Times(text.str.to_datetime(time_unit="us", time_zone="UTC", strict=False), False)
    if _OFFSET.search(sample) and _ISO.match(sample):
        if _local_midnights(lf, text):  # yfinance's daily bars of Tokyo: 00:00+09:00 a day's
            day = text.str.slice(0, 10).str.to_date("%Y-%m-%d", strict=False)
            return Times(local_to_utc(day.cast(pl.Datetime("us")), tz), False, "dates")
        return Times(text.str.to_datetime(time_unit="us", time_zone="UTC", strict=False), False)
    dated_only = not re.search(r"\d[ T]\d", sample)
    # a timed column reads a date written alone as its midnight, wherever it comes (Excel)
    bare = not dated_only
    found = (
        None
        if _ISO.match(sample)
        else text_format(lf, text, sample, dayfirst, where, bare_dates=bare)
    )
    if found is None and _zoned_for_polars(sample):  # an offset polars' own parser reads
        return Times(text.str.to_datetime(time_unit="us", time_zone="UTC", strict=False), False)
    if found is None:
        parsed, fmt, other = text.str.to_datetime(time_unit="us", strict=False), None, None
    else:
        parsed, fmt, other = found
    return Times(local_to_utc(parsed, tz), not dated_only, fmt, other, dated_only)


_MIDNIGHT = r"^\d{4}-\d{2}-\d{2}[ T]00:00(:00(\.0+)?)?\+(0[0-9]|1[0-4]):?\d{2}$"


def _local_midnights(lf: pl.LazyFrame, text: pl.Expr) -> bool:
    """Every time a midnight east of UTC with its offset (``2024-01-03 00:00:00+09:00``):
    daily bars labelled by their market's date, which read as instants fall on the day before
    (a Tokyo, Sydney or Frankfurt stock's bars a day early until session 53; west of UTC the
    instant keeps the date, and is kept)."""
    if lf.select(text.str.contains(r"\+00:?00$").any()).collect().item():
        return False
    matched = lf.select(text.str.contains(_MIDNIGHT).all()).collect().item()
    return bool(matched)


def _zoned_for_polars(sample: str) -> bool:
    """Whether polars' own parser finds a UTC offset in ``sample`` that the spellings above do
    not take (``...10:30:00z``, ``...T103000+05``, ``...10:30:00UTC``): asked to read such a
    column as naive times it fails the whole file in its own words, so it reads it zoned (a
    value it cannot read is null, named by its row)."""
    try:
        parsed = pl.Series([sample]).str.to_datetime(time_unit="us", strict=False)
    except pl.exceptions.PolarsError:  # no spelling polars knows: each value null, as lazily
        return False
    return isinstance(parsed.dtype, pl.Datetime) and parsed.dtype.time_zone is not None


def timestamp_expr(
    lf: pl.LazyFrame,
    path: Path,
    col: str,
    dtype: pl.DataType,
    *,
    tz: str = "UTC",
    dayfirst: bool | None = None,
    fmt: str | None = None,
) -> Times:
    """Expression turning column ``col`` of ``lf`` (dtype ``dtype``) into UTC microseconds.

    Args:
        lf: the file's lazy frame (small samples are read from it to choose a unit/format).
        path: the file, for messages.
        col: the timestamp column's name in the file.
        dtype: its type.
        tz: zone of naive wall-clock times (epochs and zoned values ignore it).
        dayfirst: force day-first (True) or month-first (False) for ambiguous text dates.
        fmt: the user's ``--ts-format`` (:func:`formatted_expr`) for text or number columns;
            None guesses.

    Returns:
        The ``Datetime("us", "UTC")`` expression (unparsable values null) and whether the
        values were naive.

    Raises:
        DataError: the column's type cannot hold timestamps.
    """
    c = pl.col(col)
    if fmt is not None and (dtype == pl.String or dtype.is_numeric()):
        return formatted_expr(c, fmt, tz)
    if isinstance(dtype, pl.Datetime):
        if dtype.time_zone is None:
            return Times(local_to_utc(c, tz).dt.cast_time_unit("us"), True)
        east = c.dt.date() != c.dt.convert_time_zone("UTC").dt.date()
        if lf.select(((c.dt.time() == pl.time(0)) & east).all()).collect().item():  # dates
            return Times(local_to_utc(c.dt.date().cast(pl.Datetime("us")), tz), False, "dates")
        return Times(c.dt.convert_time_zone("UTC").dt.cast_time_unit("us"), False)
    if dtype == pl.Date:  # a day's label: local midnight in tz, as text dates are read
        return Times(local_to_utc(c.cast(pl.Datetime("us")), tz), False, dated=True)
    if dtype.is_integer() and _looks_yyyymmdd(lf, c):
        return replace(formatted_expr(c, "yyyymmdd", tz), format="yyyymmdd")
    if (dtype.is_integer() or dtype.is_float()) and (days := cyymmdd_days(lf, c)) is not None:
        return replace(formatted_expr(days, "yyyymmdd", tz), format="CYYMMDD")
    if (dtype.is_integer() or dtype.is_float()) and _looks_excel(lf, c):
        return _excel_days(lf, c, tz)
    if dtype in (pl.String, pl.Int64) and (lean := day_millis(lf, c, path)) is not None:
        return Times(local_to_utc(lean[0], tz), True, f"milliseconds since midnight of {lean[1]}")
    if dtype.is_integer() or dtype.is_float():
        first = lf.select(c.drop_nulls().first()).collect().item()
        value = float(first) if first is not None else None
        unit = _epoch_unit(value) if value is not None else "s"
        return Times(_epoch_expr(c, value), False, f"epoch-{unit}")
    if dtype == pl.String:
        return text_timestamp_expr(lf, c, tz=tz, dayfirst=dayfirst, where=f"{path} '{col}'")
    raise DataError(f"{path}: column '{col}' has type {dtype}, which is not a timestamp")
