"""The format of a text timestamp column written in a vendor's spelling, chosen by trying a short
list on the data (:func:`text_format`, for :mod:`foxhunt.data.read.timestamps`).

Midnight written as the date alone among timed rows (``1/2/2024``, ``1/2/2024 0:05``, ...: what
Excel writes when it saves a sheet of times as CSV, and some pandas and R exports) is read as
that day's 00:00: the format is chosen on a timed value (:func:`timed_sample`) and the dates
alone are read by its date part. Until session 61 such a file was read on its first value, the
date alone: no format of the list read the timed rows, polars' own parser took the slash dates
day-first, and a US file's three January days became 1 February, 1 March and 1 April.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

import polars as pl

from foxhunt.data.read.date_order import order_by_span, year_place

__all__ = ["HEAD", "text_format", "timed_sample"]

log = logging.getLogger("foxhunt.data.read.timestamps")  # its warnings are the timestamps'

HEAD = 200
"""Values tried against every candidate format before the survivors see the whole column."""
_HEAD_MISSES = 2
"""Values of the head a format may fail and still be chosen (a vendor's footer, a junk line)."""
_TIMED = re.compile(r"\d[ T]\d")
"""A date followed by a time of day (``2024-01-02 09:30``, ``20240102T0930``)."""


def timed_sample(values: Sequence[str], sample: str | None) -> str | None:
    """A value with a time of day to judge the column's spelling on, where ``sample`` (its
    first value with a digit) is the date alone and at least half of ``values`` (the head) have
    a time: midnight written as the date alone. None otherwise (dates alone, or times)."""
    if sample is None or _TIMED.search(sample):
        return None
    timed = [v for v in values if _TIMED.search(v)]
    return timed[0] if 2 * len(timed) >= len(values) else None


_MONTH_FIRST = ("%m/%d/%Y", "%m/%d/%y", "%m.%d.%Y", "%m.%d.%y", "%m-%d-%Y", "%m-%d-%y")
_DAY_FIRST = ("%d/%m/%Y", "%d/%m/%y", "%d.%m.%Y", "%d.%m.%y", "%d-%m-%Y", "%d-%m-%y")
_YEAR_FIRST = ("%Y.%m.%d", "%Y/%m/%d", "%Y%m%d", "%y%m%d", "%Y年%m月%d日", "%Y년 %m월 %d일")
"""Year first, the Chinese and Japanese ``2024年01月03日`` and the Korean ``2024년 01월 03일``
too."""
_SHORT_YEAR_FIRST = ("%y/%m/%d", "%y-%m-%d", "%y.%m.%d")
"""A two-digit year first (``24/01/03``: 3 January 2024, as Korean, Japanese, Chinese and
Hungarian exports write it): a date that also reads year last (24 January 2003) is told by the
span of its bars (:func:`foxhunt.data.read.date_order.year_place`)."""
_NAMED_MONTH = (
    "%b %d, %Y",
    "%d-%b-%Y",
    "%d-%b-%y",
    "%d %b %Y",
    "%B %d, %Y",
    "%d-%B-%Y",
    "%d %B %Y",
    "%Y-%b-%d",
    "%Y-%B-%d",
)
"""``Dec 31, 2018`` (Investing.com), ``31-Dec-2018`` and ``31 Dec 2018`` (spreadsheets), the month
spelt out (``02-January-2018``, BSE India; ``January 2, 2018``), the year first
(``2018-Jan-02``, Boost's and Excel's ``yyyy-mmm-dd``: refused as unparsable until session 59)."""
_TIMES = (
    "",
    " %H:%M",
    " %H:%M:%S",
    " %H:%M:%S%.f",
    " %H%M%S",
    " %H%M%S%.f",  # NinjaTrader 8's ticks of a second, "20240102 093000 0000000" joined to it
    " %H%M%S%3f",  # histdata's ticks: "20240103 103000291", milliseconds after the seconds
    " %H%M",
    "T%H:%M:%S",
    "T%H:%M:%S%.f",
    "T%H%M%S",  # ISO 8601's basic format, 20240102T093000
    "T%H%M",
    " %I:%M %p",
    " %I:%M:%S %p",
)


_LITERALS = re.compile(r"%[-_0^#]?[.\d:]*[A-Za-z+]")
"""A strftime directive (``%Y``, ``%.f``, ``%3f``, ``%::z``): what is left of a format without
them is its fixed characters."""


def _convention(sample: str) -> bool:
    """Day-first when a date fits both ways: yes for ``.``/``-`` dates, no for ``/`` dates."""
    return "/" not in sample


def _parse(col: pl.Expr, fmt: str, dates: dict[str, str]) -> pl.Expr:
    """``col`` read with ``fmt``; where ``dates`` names its date part, the values that are the
    date alone are read by it, as their day's 00:00."""
    timed = col.str.to_datetime(fmt, time_unit="us", strict=False)
    date = dates.get(fmt, fmt)
    if date == fmt:
        return timed
    return pl.coalesce(timed, col.str.to_datetime(date, time_unit="us", strict=False))


def _parsed_counts(head: pl.Series, formats: list[str], dates: dict[str, str]) -> dict[str, int]:
    """Values of ``head`` that each format reads, in one polars query over all the formats (one
    query per format cost 2-4 times as long: docs/data.md, "Cost of a file"); a four-digit year (``%Y``) must be one:
    polars reads ``01/04/10`` with ``%Y/%m/%d`` as the year 1, which is the two-digit year 2001
    or 2010 of another format, not a date of the year 1."""
    counts = []
    for i, fmt in enumerate(formats):
        parsed = _parse(pl.col("t"), fmt, dates)
        count = (parsed.dt.year() >= 1000).sum() if "%Y" in fmt else parsed.count()
        counts.append(count.alias(str(i)))
    return dict(zip(formats, head.to_frame("t").select(counts).row(0), strict=True))


def text_format(
    lf: pl.LazyFrame,
    text: pl.Expr,
    sample: str,
    dayfirst: bool | None,
    where: str,
    *,
    bare_dates: bool = False,
) -> tuple[pl.Expr, str, str | None] | None:
    """The candidate format parsing the most values, and the other date order's format where
    both fit and nothing decided; None when none parses any of the head. ``bare_dates``: the
    column has times of day, so a value that is the date alone is read by the date part of the
    format the others take, as its midnight (the date order told with it counted)."""
    dates = (*_YEAR_FIRST, *_MONTH_FIRST, *_DAY_FIRST, *_SHORT_YEAR_FIRST, *_NAMED_MONTH)
    # a format whose fixed characters (separators, "T") are not all in the sample cannot read
    # it: not tried (each format tried costs a column of the query below)
    seen = set(sample)
    formats = [d + t for d in dates for t in _TIMES if set(_LITERALS.sub("", d + t)) <= seen]
    date_of = {d + t: d for d in dates for t in _TIMES} if bare_dates else {}

    def parse(col: pl.Expr, fmt: str) -> pl.Expr:
        return _parse(col, fmt, date_of)

    head = lf.select(text).head(HEAD).collect().to_series()
    # the formats parsing the most of the head (a vendor's footer line in a short file is no
    # reason to give up the guess; the unparsed rows are named later, or dropped as empty rows)
    parsed_head = _parsed_counts(head, formats, date_of)
    most = max(parsed_head.values())
    if most == 0 or most < head.len() - head.null_count() - _HEAD_MISSES:
        return None  # no format of the list reads this column: polars' own parser tries
    fits = [f for f in formats if parsed_head[f] == most]
    rows, col = lf, text  # the questions below ask the whole column: its text built once
    if len(fits) > 1:
        rows, col = lf.select(text.alias("t")).collect().lazy(), pl.col("t")
        parsed = [_parse(col, f, date_of) for f in fits]
        nulls = rows.select([p.null_count().alias(str(i)) for i, p in enumerate(parsed)]).collect()
        best = min(nulls.row(0))
        fits = [f for f, n in zip(fits, nulls.row(0), strict=True) if n == best]
    if any("%y" in f for f in fits):  # "01/04/10" fits %Y too, as the year 10
        fits = [f for f in fits if f.replace("%Y", "%y") == f or f.replace("%Y", "%y") not in fits]
    other = None
    if len(fits) > 1 and any(f.startswith("%y") for f in fits):
        fits, other = year_place(rows, col, fits, sample, where, parse)
    if len(fits) > 1:
        day = _convention(sample) if dayfirst is None else dayfirst
        if dayfirst is None and {f[:2] for f in fits} >= {"%d", "%m"}:
            by_span = order_by_span(rows, col, fits, where, parse)
            if by_span is not None:
                day = by_span
            elif fits[0][2] != ".":  # 02.01.2020 (Dukascopy, Europe): day-first, no doubt
                other = next(f for f in fits if (f[:2] == "%d") != day)
                log.warning(
                    "dates in %s fit both day-first and month-first (e.g. %r) and span the same "
                    "time either way: read %s; --ts-format '%s' reads them the other way",
                    where,
                    sample,
                    "day-first" if day else "month-first",
                    other,
                )
        fits = [f for f in fits if (f[:2] == "%d") == day] or fits
    log.debug("timestamps in %s read with format %r", where, fits[0])
    return _parse(text, fits[0], date_of), fits[0], other
