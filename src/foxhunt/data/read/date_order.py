"""Which order of a date's fields the bars' span decides: day-first against month-first
(``02/01/2024``), a two-digit year first against last (``24/01/03``).

Bars are contiguous in time: the reading that keeps them together wins where the other spreads
them over at least :data:`SPAN_RATIO` times as long (:mod:`foxhunt.data.read.timestamps` asks
where every value fits both).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import polars as pl

from foxhunt.errors import DataError

log = logging.getLogger(__name__)


SPAN_RATIO = 2.0
"""How many times longer the other reading's span must be for the shorter to decide day-first
against month-first (or year first against year last): bars are contiguous in time, and reading
``02/01`` (2 January) as 1 February spreads a 12-day file over 11 months."""


def _strict_parse(text: pl.Expr, fmt: str) -> pl.Expr:
    return text.str.to_datetime(fmt, time_unit="us", strict=False)


def year_place(
    lf: pl.LazyFrame,
    text: pl.Expr,
    fits: list[str],
    sample: str,
    where: str,
    parse: Callable[[pl.Expr, str], pl.Expr] = _strict_parse,
) -> tuple[list[str], str | None]:
    """The formats of ``fits`` with the year where the dates put it: a two-digit year first
    (``24/01/03 .. 24/01/16``: 3-16 January 2024) where that reading spans at most
    1/:data:`SPAN_RATIO` of each year-last one's time (24 January 2003 .. 2016), year last where
    one of those spans that little against it, else year last with a warning (and the
    year-first format, for the caller's doubt). ``parse`` reads ``text`` with a format (the
    caller's, which reads the dates written alone among times too)."""
    first = [f for f in fits if f.startswith("%y")]
    last = [f for f in fits if not f.startswith("%y")]
    if not last:
        return fits, None
    spans = [
        (parsed.max() - parsed.min()).dt.total_seconds().alias(str(i))
        for i, f in enumerate((first[0], *last))
        for parsed in (parse(text, f),)
    ]
    year_first, *year_last = (s or 0 for s in lf.select(spans).collect().row(0))
    if min(year_last) >= SPAN_RATIO * max(year_first, 1):
        log.info("dates in %s read with a two-digit year first (%r)", where, first[0])
        return first, None
    if year_first >= SPAN_RATIO * max(min(year_last), 1):
        return last, None
    log.warning(
        "dates in %s fit a two-digit year first and last (e.g. %r) and span the same time "
        "either way: read the year last; --ts-format '%s' reads it first",
        where,
        sample,
        first[0],
    )
    return last, first[0]


def order_by_span(
    lf: pl.LazyFrame,
    text: pl.Expr,
    fits: list[str],
    where: str = "the file",
    parse: Callable[[pl.Expr, str], pl.Expr] = _strict_parse,
) -> bool | None:
    """Day-first (True) or month-first (False) when one reading spans at most 1/SPAN_RATIO of the
    other's time (first to last bar); None when the spans are alike (one date, or no signal).

    Raises:
        DataError: one reading is a day of each month (monthly bars) and the other the days of
            one month (daily bars): ``1/1/2012`` ... ``9/1/2012`` (the shorter span was taken:
            nine months read as nine days).
    """
    spans: dict[bool, float] = {}
    shapes: dict[bool, tuple[int, bool, str]] = {}  # months, one day of each month in a row, fmt
    formats = {first: next(f for f in fits if f[:2] == first) for first in ("%d", "%m")}
    readings = lf.select(  # each reading parsed once, then asked five questions
        parse(text, f).alias(first) for first, f in formats.items()
    ).collect()
    for first, f in formats.items():
        parsed = pl.col(first)
        month = parsed.dt.year().cast(pl.Int64) * 12 + parsed.dt.month().cast(pl.Int64)
        span, months, days, n, run = readings.select(
            (parsed.max() - parsed.min()).dt.total_seconds().alias("span"),
            month.drop_nulls().n_unique().alias("months"),
            parsed.dt.day().drop_nulls().n_unique().alias("days"),
            parsed.drop_nulls().n_unique().alias("dates"),
            (month.max() - month.min() + 1).alias("run"),
        ).row(0)
        spans[first == "%d"] = span or 0
        shapes[first == "%d"] = (months, days == 1 and months == n == run and n >= 3, f)
    monthly = [d for d, shape in shapes.items() if shape[1]]
    if monthly and shapes[not monthly[0]][0] == 1:  # months one way, days of one month the other
        months_way = "day-first" if monthly[0] else "month-first"
        days_way = "month-first" if monthly[0] else "day-first"
        raise DataError(
            f"{where}: its {shapes[monthly[0]][0]} dates read as days of one month ({days_way}) "
            f"or as one day in each of {shapes[monthly[0]][0]} months in a row ({months_way}): "
            f"daily or monthly bars, the dates cannot tell; --ts-format '{shapes[True][2]}' or "
            f"'{shapes[False][2]}' says which"
        )
    short, long = min(spans.values()), max(spans.values())
    if long == 0 or long < SPAN_RATIO * max(short, 1):
        return None
    day = spans[True] < spans[False]
    log.info(
        "dates fit both day-first and month-first: read %s (the bars span %.0f days that way, "
        "%.0f the other)",
        "day-first" if day else "month-first",
        short / 86400,
        long / 86400,
    )
    return day
