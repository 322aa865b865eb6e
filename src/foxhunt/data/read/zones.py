"""Zones of naive timestamps: IANA names, fixed UTC offsets, and an IANA zone shifted by hours.

A zone is an IANA name (``America/New_York``, ``Etc/GMT+5``) or a fixed offset from UTC,
written ``-05:00``, ``+0530``, ``UTC-5``, ``GMT+05:30`` or ``UTC`` (some vendors stamp bars
in a fixed EST, UTC-05:00 all year, which no city zone is). Fixed offsets are
applied by arithmetic (polars parses only some offset spellings as zones), named canonically
``UTC-05:00``. An IANA name followed by an offset, ``America/New_York+07:00`` (or ``+7``), is
that zone's wall clock moved by the offset: the server clock of most FX brokers (MetaTrader's
"GMT+2, GMT+3 in US summer time", New York's 17:00 close at midnight), which no IANA zone and
no fixed offset is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

from foxhunt.errors import DataError

_OFFSET = re.compile(r"^(?:(?:UTC|GMT)\s*)?([+-])(\d{1,2})(?::?(\d{2}))?$", re.IGNORECASE)
_SHIFTED = re.compile(r"(?<=[A-Za-z_])([+-])(\d{1,2})(?::?(\d{2}))?$")
"""The offset after an IANA name's last letter: ``America/New_York+07:00`` (``Etc/GMT+5``'s
digits follow no offset: it is an IANA name, tried first)."""


def _minutes(sign: str, hours: str, minutes: str | None, text: str) -> int:
    value = int(hours) * 60 + int(minutes or 0)
    value = -value if sign == "-" else value
    if not -12 * 60 <= value <= 14 * 60 or int(minutes or 0) >= 60:
        raise DataError(f"time zone {text!r}: offsets run from -12:00 to +14:00")
    return value


@dataclass(frozen=True)
class Zone:
    """A parsed zone.

    Attributes:
        name: the canonical name: the IANA name, or ``UTC-05:00`` for a fixed offset.
        offset_minutes: the fixed offset east of UTC in minutes, or None for an IANA zone.
    """

    name: str
    offset_minutes: int | None = None
    shift_minutes: int = 0
    """For an IANA zone moved by an offset (``America/New_York+07:00``): the offset, its wall
    clock ahead of the base zone's by this many minutes."""

    @property
    def base(self) -> str:
        """The IANA zone of a shifted zone (the name without its offset), else the name."""
        return _SHIFTED.sub("", self.name) if self.shift_minutes else self.name


def fixed_offset_name(minutes: int) -> str:
    """``-300`` -> ``UTC-05:00``; ``0`` -> ``UTC``."""
    if minutes == 0:
        return "UTC"
    sign = "+" if minutes > 0 else "-"
    h, m = divmod(abs(minutes), 60)
    return f"UTC{sign}{h:02d}:{m:02d}"


def parse_zone(text: str) -> Zone:
    """An IANA name or a fixed offset (see the module docstring).

    Raises:
        DataError: neither, or an offset beyond -12..+14 hours.
    """
    t = text.strip()
    if t.upper() in ("UTC", "GMT", "Z"):
        return Zone("UTC", 0)
    m = _OFFSET.match(t)
    if m:
        minutes = _minutes(m.group(1), m.group(2), m.group(3), text)
        return Zone(fixed_offset_name(minutes), minutes)
    if _iana(t):
        return Zone(t)
    shifted = _SHIFTED.search(t)
    if shifted and _iana(base := t[: shifted.start()]):
        minutes = _minutes(shifted.group(1), shifted.group(2), shifted.group(3), text)
        if minutes == 0:
            return Zone(base)
        return Zone(base + fixed_offset_name(minutes).removeprefix("UTC"), None, minutes)
    raise DataError(
        f"unknown time zone {text!r} (use an IANA name such as America/Chicago, a fixed offset "
        "such as -05:00 or UTC-5, or a zone moved by hours: America/New_York+07:00)"
    )


def _iana(name: str) -> bool:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def local_to_utc(c: pl.Expr, tz: str, *, second: bool = False) -> pl.Expr:
    """Naive wall-clock datetimes in ``tz`` -> UTC (a repeated DST hour reads as its first
    occurrence, or with ``second`` its second, :mod:`~foxhunt.data.read.repeated_hour`; a
    skipped one becomes null, reported as unparsable)."""
    zone = parse_zone(tz)
    if zone.offset_minutes is not None:
        return c.dt.replace_time_zone("UTC") - pl.duration(minutes=zone.offset_minutes)
    if zone.shift_minutes:  # the base zone's wall clock, then as an IANA zone
        c = c - pl.duration(minutes=zone.shift_minutes)
    which = "latest" if second else "earliest"
    local = c.dt.replace_time_zone(zone.base, ambiguous=which, non_existent="null")
    return local.dt.convert_time_zone("UTC")


def utc_to_local(c: pl.Expr, tz: str) -> pl.Expr:
    """UTC datetimes -> naive wall-clock datetimes in ``tz`` (the inverse of
    :func:`local_to_utc`)."""
    zone = parse_zone(tz)
    utc = c.dt.convert_time_zone("UTC")
    if zone.offset_minutes is not None:
        return (utc + pl.duration(minutes=zone.offset_minutes)).dt.replace_time_zone(None)
    wall = utc.dt.convert_time_zone(zone.base).dt.replace_time_zone(None)
    return wall + pl.duration(minutes=zone.shift_minutes) if zone.shift_minutes else wall
