"""Do the sessions keep the exchange's clock? Local times read as UTC, seen at daylight saving.

The closed-hours rule (:func:`foxhunt.data.read.clock_zones.zone_fits`) cannot see a file whose
bars all fall in hours open in both zones: regular-hours ES written in New York time and read
as UTC (09:30-16:00 UTC is inside Globex), Berlin-time FDAX inside Eurex's long day. Such a file
has another tell. An exchange opens and closes at the same local clock time all year, so with
the right zone the bars that open and close its sessions (:func:`session_edges`) fall at the
same minute of the exchange's day, summer and winter; read in a zone with other daylight-saving
rules (UTC, for New York times), they move by an hour at each change.

:func:`clock_fits` counts, for the zone the naive times were read in and for each city of
:data:`~foxhunt.data.read.clock_zones.CITY_ZONES`, the share of session edges at their most
common exchange minute (opens and closes apart). Fixed offsets are not tried: they move every
bar alike, so they score as UTC does. A zone fits clearly better (:attr:`ClockFit.clearly_better`)
when it holds at least :data:`MIN_GAIN` more of the edges and :data:`MIN_MOVED` more of them.
Zones with the same daylight-saving dates (New York and Chicago) tie: the calendar's closed
hours break the tie where they can (a stock's New York times read as Chicago close an hour
late, every day), else all are named.

It says nothing when the bars do not cross a daylight-saving change of some candidate, when the
calendar's zone keeps no daylight saving or the market never closes (``24x7``), or when the
sessions have no regular open (sparse bars): each zone then scores alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import polars as pl

from foxhunt.data.market.calendar import closed_time
from foxhunt.data.market.calendars import calendar_spec
from foxhunt.data.read.zones import local_to_utc, utc_to_local

EDGE_GAP = timedelta(minutes=30)
"""A pause this long or longer (and at least two bar intervals) ends one session and opens the
next: Globex's daily hour, a night, a weekend."""
MIN_EDGES = 20
"""Session opens and closes needed before the rule says anything."""
MIN_GAIN = 0.1
"""Share of the edges another zone must hold more than the zone read in at the usual minute
(a year of US sessions read as UTC: 65 % against 100 %)."""
MIN_MOVED = 6
"""And that many edges in number: a few sessions around one change are not enough."""
MIN_HELD = 0.5
"""The better zone's share must reach this: sessions with a regular open and close."""
COARSE = timedelta(hours=1)
"""Bars longer than the daylight-saving hour: an edge bar holds the exchange's open or close
somewhere inside it, so its own minute may move by an hour where the clock does not (a 4-hour
FX grid in UTC opens the week at 20:00 in summer and winter alike, 21:00 or 22:00 inside it)."""
SPANS_KEPT = 0.9
"""Share of such a file's edges whose bars hold the calendar's open or close, as read, from
which the rule is silent."""
CLOSED_SAMPLE = 20_000
"""Bars looked at (evenly spaced) to break ties by the calendar's closed hours."""
CLOSED_DAYS_SHARE = 0.05
"""Share of the days with bars in closed hours from which those bars are the clock's doing,
not a few holidays' or early closes' (here and in the time axis's zone rule)."""


@dataclass(frozen=True)
class ClockFit:
    """How well the session edges keep one exchange minute in the zone read in and the best.

    Attributes:
        read_in: the zone the naive times were read in.
        share: share of session edges at their usual exchange minute, read in ``read_in``.
        best: the zones with the highest share, in :func:`clock_fits`'s order; of tied zones,
            those putting the fewest bars in the calendar's closed hours (still tied: all).
        best_share: that share.
        edges: session opens and closes counted.
        exchange_zone: the calendar's zone, in which minutes are compared.
        usual_open: the most common open on the file's own clock (``HH:MM``), or "".
        shares: every zone tried and its share.
    """

    read_in: str
    share: float
    best: tuple[str, ...]
    best_share: float
    edges: int
    exchange_zone: str
    usual_open: str
    shares: tuple[tuple[str, float], ...] = ()

    def breaks_sessions(self, zone: str) -> bool:
        """Whether ``zone`` (one tried) holds clearly fewer edges at their usual minute than the
        zone read in: a zone the closed-hours rule prefers that would move the sessions at
        daylight saving (a file with bars on a holiday, shifted out of it by nine hours)."""
        held = dict(self.shares).get(zone)
        return (
            held is not None
            and (self.share - held) >= MIN_GAIN
            and (self.share - held) * self.edges >= MIN_MOVED
        )

    @property
    def clearly_better(self) -> bool:
        """Another zone keeps clearly more edges at their usual minute (module docstring)."""
        return (
            self.read_in not in self.best
            and self.best_share >= MIN_HELD
            and self.best_share - self.share >= MIN_GAIN
            and (self.best_share - self.share) * self.edges >= MIN_MOVED
        )


def session_edges(ts: pl.Series, interval: timedelta) -> pl.DataFrame:
    """The bars that open a session (after a pause) and close one (before a pause).

    Args:
        ts: one symbol's bar times, sorted (UTC).
        interval: the bar interval.

    Returns:
        Columns ``t`` (the bar's time) and ``open`` (True: opens a session; False: closes one).
        The file's first and last bars are neither: the file may start or end mid-session.
    """
    gap = max(EDGE_GAP, 2 * interval)
    frame = pl.DataFrame({"t": ts})
    before = pl.col("t") - pl.col("t").shift(1)
    after = pl.col("t").shift(-1) - pl.col("t")
    opens = frame.filter(before >= gap).with_columns(pl.lit(True).alias("open"))
    closes = frame.filter(after >= gap).with_columns(pl.lit(False).alias("open"))
    return pl.concat([opens, closes])


def spans_kept(edges: pl.DataFrame, interval: timedelta, calendar: str) -> float:
    """Share of ``edges`` (:func:`session_edges`, as read) whose bars hold the calendar's edge:
    an opening bar starts where the market was closed the minute before and is open by its
    last minute; a closing bar starts open and the market is closed when it ends. (MetaTrader's
    4-hour bars on New York + 7 h read as UTC open at 00:00, hours after the FX week's open:
    not kept.)"""
    if edges.height == 0:
        return 0.0
    t, minute, span = pl.col("t"), pl.duration(minutes=1), pl.lit(interval)
    opens = closed_time(t - minute, calendar) & ~closed_time(t + span - minute, calendar)
    closes = ~closed_time(t, calendar) & closed_time(t + span, calendar)
    kept = edges.select(pl.when(pl.col("open")).then(opens).otherwise(closes).mean()).item()
    return float(kept or 0.0)


def _only_read_in_holds(
    edges: pl.DataFrame, wall: pl.Expr, interval: timedelta, calendar: str, best: tuple[str, ...]
) -> bool:
    """Whether bars longer than :data:`COARSE` hold the calendar's edges as read
    (:func:`spans_kept`) and in none of the zones whose minutes fit better: a 4-hour FX grid in
    UTC, whose first bar of the week starts at 20:00 summer and winter, is New York + 7 h's by
    its minutes but holds the open only as read. London's 3-hour bars of ICE Brent read as UTC
    hold its edges too, and London's clock holds them: still judged by the minutes."""
    if spans_kept(edges, interval, calendar) < SPANS_KEPT:
        return False
    for zone in best:
        moved = edges.with_columns(local_to_utc(wall, zone).alias("t")).drop_nulls("t")
        if spans_kept(moved, interval, calendar) >= SPANS_KEPT:
            return False
    return True


def _held_share(edges: pl.DataFrame, column: str) -> float:
    """Share of edges at the most common value of ``column``, opens and closes apart."""
    if edges.height == 0:
        return 0.0
    counts = edges.group_by("open", column).len()
    held = counts.group_by("open").agg(pl.col("len").max())["len"].sum()
    return float(held) / edges.height


def _fewest_closed(ts: pl.Series, read_in: str, calendar: str, zones: list[str]) -> tuple[str, ...]:
    """Of ``zones``, those the calendar's closed hours do not rule out: New York and Chicago
    keep the same edges, but a stock's New York times read as Chicago close an hour late, every
    day. A zone is ruled out when it puts more bars in closed hours than the best one and they
    fall on :data:`CLOSED_DAYS_SHARE` of the days or more; bars past a few early closes (a CFD
    trading on when the exchange closes at noon) rule nothing out."""
    if len(zones) == 1:
        return tuple(zones)
    step = max(1, ts.len() // CLOSED_SAMPLE)
    wall = pl.DataFrame({"t": ts.gather_every(step)}).select(utc_to_local(pl.col("t"), read_in))
    closed = wall.select(
        pl.col("t").dt.date().alias("day"),
        *(closed_time(local_to_utc(pl.col("t"), z), calendar).alias(f"c{i}")
          for i, z in enumerate(zones)),
    )  # fmt: skip
    counts = closed.select(
        pl.col("day").n_unique().alias("days"),
        *(pl.col(f"c{i}").sum().alias(f"n{i}") for i in range(len(zones))),
        *(pl.col("day").filter(pl.col(f"c{i}")).n_unique().alias(f"d{i}")
          for i in range(len(zones))),
    ).row(0, named=True)  # fmt: skip
    least = min(counts[f"n{i}"] for i in range(len(zones)))
    return tuple(
        z
        for i, z in enumerate(zones)
        if counts[f"n{i}"] == least or counts[f"d{i}"] < CLOSED_DAYS_SHARE * counts["days"]
    )


def clock_fits(
    ts: pl.Series, interval: timedelta, read_in: str, calendar: str, zones: tuple[str, ...]
) -> ClockFit | None:
    """How well each zone keeps ``ts``'s session edges at one exchange minute (module docstring).

    Args:
        ts: one symbol's bar times (UTC, sorted), read from naive times in ``read_in``.
        interval: the bar interval (intraday).
        read_in: the zone the naive times were read in.
        calendar: the symbol's calendar name.
        zones: the other zones to try (cities: fixed offsets score as UTC does).

    Returns:
        The fit, or None when it cannot say: the calendar's zone is UTC (``24x7``: no
        sessions to keep), fewer than :data:`MIN_EDGES` edges, or bars longer than
        :data:`COARSE` that hold the calendar's edges as read and in no better zone
        (:func:`_only_read_in_holds`).
    """
    exchange = calendar_spec(calendar).tz
    if exchange == "UTC":
        return None
    edges = session_edges(ts, interval)
    if edges.height < MIN_EDGES:
        return None
    candidates = tuple(dict.fromkeys((read_in, *zones)))
    wall = utc_to_local(pl.col("t"), read_in)
    minutes = {}
    for z in candidates:
        local = local_to_utc(wall, z).dt.convert_time_zone(exchange)
        minutes[z] = (local.dt.hour().cast(pl.Int32) * 60 + local.dt.minute()).alias(z)
    frame = edges.select("open", wall.alias("wall"), *minutes.values())
    shares = {z: _held_share(frame.drop_nulls(z), z) for z in candidates}
    top = max(shares.values())
    best = _fewest_closed(
        ts, read_in, calendar, [z for z in candidates if shares[z] >= top - 1e-12]
    )
    if (
        interval > COARSE
        and read_in not in best
        and _only_read_in_holds(edges, wall, interval, calendar, best)
    ):
        return None  # the bars hold the edges as read, the better zones' do not: no clock's fault
    opens = frame.filter(pl.col("open"))["wall"]
    usual = opens.dt.strftime("%H:%M").mode().sort()[0] if opens.len() else ""
    return ClockFit(
        read_in, shares[read_in], best, top, edges.height, exchange, usual, tuple(shares.items())
    )
