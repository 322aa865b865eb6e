"""The hour a zone repeats when daylight saving ends, told by the rows' order.

Naive wall-clock times of a market open at that hour (crypto: FX and CME are shut at 01:00 on
a Sunday) written in a zone with daylight saving hold that hour twice: New York's 01:00-01:59 on 3 November 2024
is first daylight time (05:00-05:59 UTC), then standard time (06:00-06:59 UTC). Each time alone
cannot say which; the file's order can, as pandas' ``ambiguous="infer"`` reads it: where, inside
the repeated hour, the clock steps back (01:59, then 01:00), the rows from there to the hour's
end are its second pass. :func:`second_passes` reads them so when, per file and symbol, each
of them has its wall time in the first pass too and the times then rise at every row of the
hour; otherwise the rows stay on the first reading and the duplicates are refused naming the
hour (:mod:`foxhunt.data.read.validate`), as every such file was until session 60. Told as the
files are loaded (:func:`~foxhunt.data.read.bars.load_bars`), before trades become bars.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import polars as pl

from foxhunt.data.read.zones import local_to_utc, parse_zone, utc_to_local

log = logging.getLogger(__name__)


def _repeats_an_hour(zone: str) -> bool:
    """Whether ``zone`` may keep daylight saving (a fixed offset or UTC repeats no hour)."""
    parsed = parse_zone(zone)
    return parsed.offset_minutes is None and parsed.base not in ("UTC", "Etc/UTC", "GMT")


def second_passes(
    frame: pl.DataFrame,
    files: Sequence[object],
    naive: Sequence[bool],
    zone_of: Callable[[int], str],
    file_column: str,
) -> pl.DataFrame:
    """``frame`` (rows in file order, ``ts`` read from naive times with the repeated hour's
    first reading) with the second pass of that hour read as its second, per file and symbol,
    where the order tells (see the module docstring); one log line per file moved."""
    by_zone: dict[str, list[int]] = {}
    for f, was_naive in enumerate(naive):
        if was_naive and _repeats_an_hour(zone := zone_of(f)):
            by_zone.setdefault(zone, []).append(f)
    for zone, mine in by_zone.items():
        frame = _moved(frame, mine, zone, files, file_column)
    return frame


def _moved(
    frame: pl.DataFrame, mine: list[int], zone: str, files: Sequence[object], file_column: str
) -> pl.DataFrame:
    wall = utc_to_local(pl.col("ts"), zone)
    late = local_to_utc(wall, zone, second=True)
    twice = (pl.col(file_column).is_in(mine) & (late != pl.col("ts"))).fill_null(False)
    if not frame.select(twice.any()).item():
        return frame  # no row in a repeated hour: nothing to tell
    group = [file_column, *(["symbol"] if "symbol" in frame.columns else [])]
    back = (wall < wall.shift(1)).over(group).fill_null(False)
    steps = back.cast(pl.Int64).cum_sum().over(group)
    start = pl.when(~twice).then(steps).forward_fill().over(group).fill_null(0)
    second = twice & (steps > start)  # after the clock stepped back inside the hour
    new = pl.when(second).then(late).otherwise(pl.col("ts"))
    near = twice | twice.shift(1).over(group).fill_null(False)
    rising = ((new > new.shift(1)).over(group) | ~near).fill_null(True).all().over(group)
    # each row of the second pass has its time on the first reading in the first pass too (a
    # first pass alone with a row out of order, or rows repeated after a restart, is no second)
    repeats = (~second | pl.col("ts").is_duplicated()).over(group).all().over(group)
    told = second & rising & repeats
    moved = frame.with_columns(
        pl.when(told).then(late).otherwise(pl.col("ts")).alias("ts"), told.alias("__second")
    )
    for (f,), part in moved.filter(pl.col("__second")).group_by(file_column, maintain_order=True):
        hour = utc_to_local(pl.col("ts"), zone).dt.strftime("%Y-%m-%d %H:00")
        hours = part.sort("ts").select(hour.unique(maintain_order=True)).to_series().to_list()
        named = ", ".join(hours[:3]) + (f" and {len(hours) - 3} more" if len(hours) > 3 else "")
        log.info(
            "%s: %s in %s when daylight saving ends, read in the file's order: %d bars after its"
            " clock steps back are the second pass",
            files[int(f)],  # type: ignore[call-overload]
            f"the hour {named} repeats" if len(hours) == 1 else f"the hours {named} repeat",
            zone,
            part.height,
        )
    return moved.drop("__second")
