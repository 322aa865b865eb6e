"""Times counted from midnight of the day a file's name holds: QuantConnect LEAN's files.

LEAN stores a day's minute (or second) bars in ``20240102_trade.zip`` holding
``20240102_spy_minute_trade.csv``, headerless rows whose first column is the milliseconds since
midnight on the exchange's clock (``34200000`` is 09:30). Read as epoch seconds those were
dates of 1970-1972, refused (until session 59) as "no --ts-format reads it". Whole thousands
(seconds) under a day's 86,400,000 milliseconds are no epoch a vendor writes (epoch seconds of
1970, epoch milliseconds of its first day), so where the file's name, or its zip archive's,
holds a date they are that day's times: naive, on the clock ``--tz`` names (the time-axis check
asks for New York's where an equity's session says so).
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import polars as pl

DAY_MS = 86_400_000
_CLOCK_MAX = 235_959
"""The largest ``HHMMSS`` clock: a column whose values stay at or under it may be clocks of a
day (``100000`` is 10:00), not milliseconds."""
_NAMED_DATE = re.compile(r"(?<!\d)((?:19|20)\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?!\d)")


def _named_day(path: Path) -> datetime | None:
    """The date in the file's name, else in its zip archive's name (``20240102_trade.zip``)."""
    names = [path.name]
    if path.parent.name.lower().endswith(".zip"):
        names.append(path.parent.name)
    for name in names:
        if (m := _NAMED_DATE.search(name)) is not None:
            try:
                return datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)))
            except ValueError:  # 20240231: no day
                continue
    return None


def day_millis(lf: pl.LazyFrame, c: pl.Expr, path: Path) -> tuple[pl.Expr, str] | None:
    """The naive wall-clock times of an integer column of milliseconds since midnight (whole
    seconds, 0 .. 86,399,000) of the day ``path``'s name holds, and that day (``2024-01-02``);
    None for any other column or file."""
    day = _named_day(path)
    if day is None:
        return None
    whole = c.cast(pl.String).str.strip_chars().cast(pl.Int64, strict=False)  # read as text
    stats = lf.select(
        whole.min().alias("min"),
        whole.max().alias("max"),
        ((whole % 1000 != 0) | (whole.is_null() & c.is_not_null())).any().alias("odd"),
    ).collect()
    low, high, odd = stats.row(0)
    if low is None or low < 0 or high >= DAY_MS or high <= _CLOCK_MAX or odd:
        return None
    midnight = pl.lit(day).cast(pl.Datetime("us"))
    return midnight + pl.duration(milliseconds=whole), f"{day:%Y-%m-%d}"
