"""Times marked UTC that are a local clock (``--tz ZONE --force-tz``).

Some exports mark an exchange's wall clock as UTC: pandas' ``tz_localize("UTC")`` of local
times writes ``2024-03-04 09:30:00+00:00``, a script appends ``Z`` to New York's clock, a
parquet column is typed UTC, MetaTrader 5's ``copy_rates`` counts epoch seconds on its server's
clock. Read as marked, a New York session lands 4-5 hours early, in pre-market hours.

``--tz`` names the zone of naive times; times marked UTC are not naive, and keep UTC. With
``--force-tz`` the clock such a time shows in UTC is read as wall-clock time in ``--tz``'s zone,
as a naive time is (daylight saving, nonexistent and repeated hours alike); the file then counts
as naive in that zone for every later check. Times written with another offset are refused:
their offset says which clock they keep. Without ``--force-tz``, ``--tz`` given for marked or
offset times is not applied, and the reader says so (:func:`with_user_zone`); the time-axis
checks name ``--tz ZONE --force-tz`` where a zone's clock keeps the calendar that the marked
times do not (:mod:`foxhunt.data.read.time_axis`).
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from foxhunt.data.market.calendar import closed_time
from foxhunt.data.read.clock_fit import session_edges
from foxhunt.data.read.zones import local_to_utc
from foxhunt.errors import DataError

if TYPE_CHECKING:
    from foxhunt.data.read.options import ReadOptions
    from foxhunt.data.read.timestamps import Times

log = logging.getLogger(__name__)

FORCE_FLAG = "--force-tz"
UTC_MARK = re.compile(r"(?:\d[zZ]|[+-]00:?00|\d ?(?:UTC|GMT|utc|gmt))$")
"""The end of a time marked UTC: ``...30Z``, ``+00:00``, ``+0000``, ``-00:00``, `` UTC``."""
UTC_NAMES = frozenset(
    ("UTC", "Etc/UTC", "Etc/UCT", "UCT", "GMT", "Etc/GMT", "Zulu", "Etc/Zulu", "+00:00")
)
"""A typed column's zones that are UTC."""
_HEAD = 64


def marked_utc(lf: pl.LazyFrame, schema: pl.Schema, column: str, times: Times) -> bool:
    """Whether ``times`` (read from ``column``) were marked UTC: epoch counts, a column typed in
    UTC, or text whose first values all end in a UTC mark (:data:`UTC_MARK`). False for naive
    times, dates, and a date and a time column read together."""
    if times.naive or times.format == "dates":
        return False
    if (times.format or "").startswith("epoch"):
        return True
    dtype = schema.get(column)
    if isinstance(dtype, pl.Datetime):
        return dtype.time_zone in UTC_NAMES
    if dtype != pl.String:
        return False
    text = pl.col(column).str.strip_chars().drop_nulls()
    head = lf.select(text.head(_HEAD)).collect().to_series()
    written = [v for v in head if v]
    return bool(written) and all(UTC_MARK.search(v) for v in written)


_CLOCK = re.compile(r"%[-_0^#]?[.\d:]*[HIklMSfpPzZs]|epoch|with its| in ")
"""What a format with a time of day, an offset or a zone holds (``%H``, ``%z``, ``epoch-ms``,
``... with its UTC offset``, ``... in US/Eastern``)."""


def _dates_only(format_: str | None) -> bool:
    """A format of dates alone (``%m/%d/%Y``, ``yyyymmdd``, ``dates``): each read as its
    midnight in the zone of ``--tz`` (until session 59 ``--tz`` was said not to apply to
    them but for yfinance's ``dates``, where it does)."""
    return bool(format_) and not _CLOCK.search(format_ or "")


def with_user_zone(
    times: Times, marked: bool, path: Path, column: str, opts: ReadOptions, zone: str
) -> Times:
    """``times`` with the user's ``--tz`` where it applies: naive times were read in it already;
    times marked UTC are read on its clock with ``--force-tz`` (else kept, with a warning);
    times with another offset keep it (a warning; refused with ``--force-tz``).

    Raises:
        DataError: ``--force-tz`` for times with their own offset.
    """
    if opts.tz is None or times.naive:
        return times
    if (times.dated or _dates_only(times.format)) and not opts.force_tz:
        return times  # each date its midnight in --tz's zone: applied, nothing to warn of
    if marked and opts.force_tz:
        wall = times.expr.dt.replace_time_zone(None)  # the clock the mark calls UTC's
        return replace(times, expr=local_to_utc(wall, zone), naive=True)
    epoch = (times.format or "").startswith("epoch")
    what = "epoch times, counted in UTC" if epoch else "times marked UTC"
    if marked:
        log.warning(
            "%s: --tz %s not applied: column '%s' holds %s; --tz %s %s reads the clock they "
            "show in UTC as %s's (a file or feed that marks local times as UTC; MetaTrader 5's "
            "copy_rates counts its server's clock)",
            path,
            opts.tz,
            column,
            what,
            opts.tz,
            FORCE_FLAG,
            opts.tz,
        )
        return times
    if opts.force_tz:
        raise DataError(
            f"{path}: {FORCE_FLAG}: column '{column}' holds times with their own UTC offset, "
            "not marked UTC: the offset says which clock they keep; drop --force-tz"
        )
    log.warning(
        "%s: --tz %s not applied: column '%s' holds times with their own zone or UTC offset",
        path,
        opts.tz,
        column,
    )
    return times


EDGES_KEPT = 0.5
"""Share of a file's session edges that must meet the calendar's open or close, read in the
zone that fits, before a UTC mark is called wrong (:func:`edges_kept`)."""


def edges_kept(ts: pl.Series, interval: timedelta, zone: str, calendar: str) -> bool:
    """Whether times marked UTC, their clock read in ``zone``, open and close sessions where
    ``calendar`` does: at least :data:`EDGES_KEPT` of the bars after a pause open one a bar
    after closed time, and of the bars before a pause close one a bar before closed time.

    A mark is usually right: a zone that merely puts fewer bars in closed hours (one day of
    pre-market bars read as New York's session) is no proof. A clock that is New York's puts
    every day's first bar at 09:30 and its last at 15:55, and a file too short to have a pause
    proves nothing.
    """
    wall = ts.dt.replace_time_zone(None)
    t = pl.DataFrame({"w": wall}).select(local_to_utc(pl.col("w"), zone)).to_series().drop_nulls()
    edges = session_edges(t, interval)
    if edges.height < 2:
        return False
    step = pl.duration(microseconds=int(interval.total_seconds() * 1e6))
    beside = pl.when(pl.col("open")).then(pl.col("t") - step).otherwise(pl.col("t") + step)
    kept = edges.select(
        (closed_time(beside, calendar) & ~closed_time(pl.col("t"), calendar)).mean()
    ).item()
    return float(kept or 0.0) >= EDGES_KEPT
