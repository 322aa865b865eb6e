"""A 12-hour clock written without AM/PM: ``03/05/2018 12:59`` then ``01:00`` (1 pm).

Read on a 24-hour clock, the afternoon's bars land in the small hours of the same day, sorted
into place without a word (a regular-hours file stays inside its calendar's hours either way).
The bars give it away: every hour is 1-12, and in file order the time goes back within a day
(12:59 -> 01:00) on most days while it goes forward everywhere else. A file written newest
first goes back all the time, and forward only between days: no such mix.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from foxhunt.data.read.validate import ROW_COLUMN as _ROW
from foxhunt.data.read.zones import utc_to_local
from foxhunt.errors import DataError

MIN_DAYS_SHARE = 0.5
"""Share of the file's days (with two bars or more) on which the time goes back once or twice
while going forward on the other bars."""


def check_twelve_hour(df: pl.DataFrame, path: Path, column: str, zone: str) -> None:
    """Refuse bars whose naive times read like a 12-hour clock without AM/PM (module docstring).

    Args:
        df: one file's bars in file order (``ts`` UTC, ``symbol``, the row column).
        path: the file, for the message.
        column: the file's time column(s), for the message.
        zone: the zone the naive times were read in.

    Raises:
        DataError: naming the file, the column and a row where the time goes back.
    """
    wall = utc_to_local(pl.col("ts"), zone)
    frame = df.select(pl.col("symbol"), pl.col(_ROW), wall.alias("w")).drop_nulls("w")
    if frame.height < 4:
        return
    hours = frame["w"].dt.hour()
    if hours.min() < 1 or hours.max() > 12:  # type: ignore[operator]
        return
    frame = frame.sort("symbol", _ROW, maintain_order=True).with_columns(
        day=pl.col("w").dt.date(),
        step=(pl.col("w") - pl.col("w").shift(1)).over("symbol"),
        same=(pl.col("w").dt.date() == pl.col("w").dt.date().shift(1)).over("symbol"),
    )
    per_day = frame.group_by("symbol", "day").agg(
        back=(pl.col("same") & (pl.col("step") < pl.duration())).sum(),
        forward=(pl.col("same") & (pl.col("step") > pl.duration())).sum(),
        bars=pl.len(),
    ).filter(pl.col("bars") >= 2)  # fmt: skip
    if per_day.height == 0:
        return
    turns = per_day.filter(
        (pl.col("back").is_between(1, 2)) & (pl.col("forward") > 2 * pl.col("back"))
    )
    if turns.height < max(1, MIN_DAYS_SHARE * per_day.height):
        return
    at = frame.filter(pl.col("same") & (pl.col("step") < pl.duration())).row(0, named=True)
    raise DataError(
        f"{path}: column '{column}', row {at[_ROW]}: the time goes back to "
        f"{at['w']:%H:%M} within the day on {turns.height} of {per_day.height} days, and every "
        "hour is 1-12: a 12-hour clock written without AM/PM; write the times with AM/PM or on "
        "a 24-hour clock"
    )
