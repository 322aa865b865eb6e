"""Zones of naive timestamps: IANA names and fixed UTC offsets.

A zone is an IANA name (``America/New_York``, ``Etc/GMT+5``) or a fixed offset from UTC,
written ``-05:00``, ``+0530``, ``UTC-5``, ``GMT+05:30`` or ``UTC`` (some vendors stamp bars
in a fixed EST, UTC-05:00 all year, which no city zone is). Fixed offsets are
applied by arithmetic (polars parses only some offset spellings as zones), named canonically
``UTC-05:00``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

from foxhunt.errors import DataError

_OFFSET = re.compile(r"^(?:(?:UTC|GMT)\s*)?([+-])(\d{1,2})(?::?(\d{2}))?$", re.IGNORECASE)


@dataclass(frozen=True)
class Zone:
    """A parsed zone.

    Attributes:
        name: the canonical name: the IANA name, or ``UTC-05:00`` for a fixed offset.
        offset_minutes: the fixed offset east of UTC in minutes, or None for an IANA zone.
    """

    name: str
    offset_minutes: int | None = None


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
        minutes = int(m.group(2)) * 60 + int(m.group(3) or 0)
        minutes = -minutes if m.group(1) == "-" else minutes
        if not -12 * 60 <= minutes <= 14 * 60 or int(m.group(3) or 0) >= 60:
            raise DataError(f"time zone {text!r}: offsets run from -12:00 to +14:00")
        return Zone(fixed_offset_name(minutes), minutes)
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(t)
    except (ZoneInfoNotFoundError, ValueError) as e:
        raise DataError(
            f"unknown time zone {text!r} (use an IANA name such as America/Chicago, or a fixed "
            "offset such as -05:00 or UTC-5)"
        ) from e
    return Zone(t)


def local_to_utc(c: pl.Expr, tz: str) -> pl.Expr:
    """Naive wall-clock datetimes in ``tz`` -> UTC (a repeated DST hour reads as its first
    occurrence; a skipped one becomes null, reported as unparsable)."""
    zone = parse_zone(tz)
    if zone.offset_minutes is not None:
        return c.dt.replace_time_zone("UTC") - pl.duration(minutes=zone.offset_minutes)
    local = c.dt.replace_time_zone(zone.name, ambiguous="earliest", non_existent="null")
    return local.dt.convert_time_zone("UTC")


def utc_to_local(c: pl.Expr, tz: str) -> pl.Expr:
    """UTC datetimes -> naive wall-clock datetimes in ``tz`` (the inverse of
    :func:`local_to_utc`)."""
    zone = parse_zone(tz)
    utc = c.dt.convert_time_zone("UTC")
    if zone.offset_minutes is not None:
        return (utc + pl.duration(minutes=zone.offset_minutes)).dt.replace_time_zone(None)
    return utc.dt.convert_time_zone(zone.name).dt.replace_time_zone(None)
