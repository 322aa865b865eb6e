"""Which clock keeps a calendar: the zones a file's wall-clock times are tried in.

A file's times may be written on another clock than the one they were read in (local time read
as UTC, EST all year for New York's clock, an FX broker's server clock). :func:`zone_fits` reads
the wall clock behind one symbol's bar times in each candidate zone (:func:`candidate_zones`: the
zone they were read in, the calendar's own, the cities of :data:`CITY_ZONES`, the brokers' clocks
of :data:`BROKER_ZONES` and the fixed offsets UTC-12..UTC+14) and scores the share of bars each
puts in the calendar's closed hours; :class:`ZoneFit` says whether another zone fits clearly
better (:mod:`foxhunt.data.read.time_axis`'s ``zone`` rule).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import polars as pl

from foxhunt.data.market.calendar import closed_time
from foxhunt.data.market.calendar_fit import BROKER_CLOCKS
from foxhunt.data.market.calendars import calendar_spec
from foxhunt.data.read.clock_fit import CLOSED_DAYS_SHARE, MIN_EDGES
from foxhunt.data.read.zones import fixed_offset_name, local_to_utc, utc_to_local

CITY_ZONES = (
    "UTC",
    "America/Chicago",
    "America/New_York",
    "Europe/London",
    "Europe/Berlin",
    "Asia/Tokyo",
)
"""IANA zones tried beside the fixed offsets (where bar files are usually written)."""
BROKER_ZONES = tuple(BROKER_CLOCKS)
"""Clocks of no IANA zone tried by the zone rule: the FX brokers' server time (MetaTrader's
GMT+2, GMT+3 while New York keeps summer time: New York's 17:00 close is midnight). A fixed
offset fits such a file's summer or its winter, never both."""
ZONE_SAMPLE = 20_000
"""Bars per symbol the zone search looks at (evenly spaced): the shares are what matters."""
ZONE_MARGIN = 0.002
"""Another zone fits clearly better when it puts at least this share fewer bars in closed
hours and at most a quarter as many (a clock one hour off in summer only, EST read for New York
time, moves 0.5 % of FX bars into the weekend)."""


@dataclass(frozen=True)
class ZoneFit:
    """How naive timestamps fit a calendar in the zone they were read in and in the best one.

    Attributes:
        read_in: the zone they were read in.
        share: share of bars in closed hours read in ``read_in``.
        best: the zone putting the fewest bars in closed hours (``read_in`` on a tie).
        best_share: that share.
    """

    read_in: str
    share: float
    best: str
    best_share: float
    closed_days: int | None = field(default=None, compare=False)
    days: int | None = field(default=None, compare=False)
    ties: tuple[str, ...] = field(default=(), compare=False)
    """The other named zones (:data:`CITY_ZONES`, :data:`BROKER_ZONES`) that fit as well as
    ``best``: New York and Chicago on an FX week's Sunday open, which both keep open."""

    @property
    def best_named(self) -> str:
        """``best``, or ``best`` and its ties: ``America/Chicago or America/New_York``."""
        return " or ".join((self.best, *self.ties))

    @property
    def best_flags(self) -> str:
        """The ``--tz`` flag of ``best`` and of each tie."""
        return self.flags()

    def flags(self, extra: str = "") -> str:
        """:attr:`best_flags`, each followed by ``extra`` (`` --force-tz``)."""
        return " or ".join(f"--tz {flag_for_zone(z)}{extra}" for z in (self.best, *self.ties))

    @property
    def clearly_better(self) -> bool:
        """Another zone puts clearly fewer bars in closed hours (see :data:`ZONE_MARGIN`), and
        the bars closed read in ``read_in`` are spread over the file (:attr:`spread`)."""
        return (
            self.best != self.read_in
            and self.share - self.best_share >= ZONE_MARGIN
            and self.best_share <= 0.25 * self.share
            and self.spread
        )

    @property
    def spread(self) -> bool:
        """The closed bars fall on :data:`CLOSED_DAYS_SHARE` of the file's days or more: a clock
        off by hours closes bars every day (Globex's halt) or every weekend (FX: one day in six;
        EST read for New York time, summer weekends only: about one in nine); sessions on days the
        calendar calls holidays are a few days a year (a Good Friday in three months: one in 63),
        and no zone is a better clock for them."""
        if self.closed_days is None or self.days is None:
            return True
        return self.closed_days >= CLOSED_DAYS_SHARE * self.days


def candidate_zones(read_in: str, own: str = "UTC") -> tuple[str, ...]:
    """``read_in`` first, then ``own`` (the calendar's exchange zone: Asia/Kolkata's +05:30 is
    no whole hour), the cities of :data:`CITY_ZONES`, :data:`BROKER_ZONES` and
    UTC-12..UTC+14."""
    fixed = tuple(fixed_offset_name(h * 60) for h in range(-12, 15))
    return tuple(dict.fromkeys((read_in, own, *CITY_ZONES, *BROKER_ZONES, *fixed)))


def zone_fits(ts: pl.Series, read_in: str, calendar: str) -> ZoneFit:
    """Shares of bars in ``calendar``'s closed hours when the wall-clock times behind ``ts``
    (UTC, read from naive times in ``read_in``) are read in each candidate zone.

    Args:
        ts: one symbol's bar times (UTC).
        read_in: the zone the naive times were read in.
        calendar: the symbol's calendar name.
    """
    step = max(1, ts.len() // ZONE_SAMPLE)
    frame = pl.DataFrame({"t": ts.gather_every(step)}).with_columns(
        utc_to_local(pl.col("t"), read_in).alias("w")
    )
    own = calendar_spec(calendar).tz
    zones = candidate_zones(read_in, own)
    shares = frame.select(
        [closed_time(local_to_utc(pl.col("w"), z), calendar).mean().alias(z) for z in zones]
    ).row(0, named=True)
    best = min(zones, key=lambda z: shares[z] if shares[z] is not None else 1.0)
    named = tuple(dict.fromkeys((own, *CITY_ZONES, *BROKER_ZONES)))
    ties = tuple(z for z in named if z not in (best, read_in) and shares[z] == shares[best])
    day = pl.col("w").dt.date()
    days, closed_days = frame.select(
        day.n_unique().alias("days"),
        day.filter(closed_time(pl.col("t"), calendar)).n_unique().alias("closed_days"),
    ).row(0)
    return ZoneFit(
        read_in,
        float(shares[read_in] or 0.0),
        best,
        float(shares[best] or 0.0),
        closed_days=closed_days,
        days=days,
        ties=ties if best in named else (),
    )


def flag_for_zone(zone: str) -> str:
    """The zone as ``--tz`` takes it (``UTC-5`` as ``-5``, a name as it is)."""
    return zone.removeprefix("UTC") if zone.startswith("UTC") and zone != "UTC" else zone


_MT5_ONLY = frozenset({"<TICKVOL>", "<SPREAD>"})
"""Columns of MetaTrader 5's export that Finam's ``<TICKER>,<PER>,<DATE>,<TIME>`` (Moscow
time, not a broker's clock) lacks."""


def metatrader_sign(guesses: tuple[str, ...], columns: Iterable[str]) -> str | None:
    """What says a file is MetaTrader's, whose times are a broker's server clock: its History
    Center name (``EURUSD240.csv``, as ``guesses`` say) or MetaTrader 5's columns among
    ``columns`` (``<TICKVOL>``, ``<SPREAD>``); None for another file."""
    if any("MetaTrader" in g for g in guesses):
        return "its name is MetaTrader's"
    if any(name.strip().upper() in _MT5_ONLY for name in columns):
        return "its <DATE> <TIME> columns are MetaTrader 5's"
    return None


def server_clock_line(where: str, sign: str, edges: int) -> str:
    """The warning for a MetaTrader file (``sign``: :func:`metatrader_sign`) read as UTC whose
    ``edges`` session edges, fewer than :data:`~foxhunt.data.read.clock_fit.MIN_EDGES`, cannot
    tell the broker's clock from UTC. (Five weeks of 4-hour bars on New York + 7 h read 2-3
    hours late, valid.)"""
    broker = next(iter(BROKER_CLOCKS))
    return (
        f"{where}: naive times read as UTC, but {sign}, whose times are its broker's server "
        f"clock (often {broker}: UTC+2, UTC+3 in New York's summer); {edges} session edges are "
        f"too few to tell the clock ({MIN_EDGES} decide): --tz {broker} reads them on that "
        "clock, --tz UTC as they are read"
    )
