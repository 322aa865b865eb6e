"""Byte sizes: parse what users type ("1GB", "512MiB", "64 kB") and format for people.

Decimal units are powers of 1000 (kB, MB, GB, TB) and binary units powers of 1024 (KiB, MiB,
GiB, TiB), as the SI/IEC standards say. So ``--memory-budget 1GB`` is 1,000,000,000 bytes, which
is the stricter reading of "under 1 GB" than 1 GiB.
"""

from __future__ import annotations

import re

from foxhunt.errors import InputError

_UNITS: dict[str, int] = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "m": 1000**2,
    "mb": 1000**2,
    "g": 1000**3,
    "gb": 1000**3,
    "t": 1000**4,
    "tb": 1000**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
}

_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-zA-Z]*)\s*$")


def parse_bytes(text: str) -> int:
    """Parse a byte size such as ``1GB``, ``512MiB``, ``1.5 GB`` or ``4096``.

    Args:
        text: a non-negative number with an optional unit (case-insensitive): B, kB, MB, GB, TB
            (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024); K/M/G/T alone are decimal.

    Returns:
        The size in bytes, rounded down to a whole byte.

    Raises:
        InputError: the text is not a size.
    """
    m = _SIZE.match(text)
    if m is None or m.group(2).lower() not in _UNITS:
        raise InputError(f"not a byte size: {text!r} (expected e.g. 1GB, 512MiB, 750MB, 4096)")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def format_bytes(n: int | float, *, binary: bool = False) -> str:
    """Format a byte count for people: ``format_bytes(1_234_567) == "1.23 MB"``.

    Args:
        n: bytes (may be negative, e.g. a delta).
        binary: use KiB/MiB/GiB (powers of 1024) instead of kB/MB/GB.

    Returns:
        A short string with about three significant digits and a unit.
    """
    base, names = (
        (1024, ("B", "KiB", "MiB", "GiB", "TiB"))
        if binary
        else (1000, ("B", "kB", "MB", "GB", "TB"))
    )
    value = float(n)
    for name in names:
        if abs(value) < base or name == names[-1]:
            if name == "B":
                return f"{int(value)} B"
            digits = 2 if abs(value) < 10 else 1 if abs(value) < 100 else 0
            return f"{value:.{digits}f} {name}"
        value /= base
    raise AssertionError("unreachable")
