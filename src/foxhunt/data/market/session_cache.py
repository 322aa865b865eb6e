"""A disk cache of the library calendars' sessions, so a command does not rebuild them.

``pandas_market_calendars`` takes about 1.4 s per process to import and to build one
calendar's schedule over :data:`foxhunt.data.market.calendars.SPAN` (0.75 s + 0.66 s on the
development machine, session 17) — paid by every ``inspect``, ``train``, ``evaluate`` and
``predict`` of a symbol on a library calendar. The sessions are a pure function of the
calendar, the span and the library's version, so the first process writes them to
``$FOXHUNT_CACHE_DIR`` (default ``$XDG_CACHE_HOME/foxhunt``, else ``~/.cache/foxhunt``) as
``.npz`` and later ones load them in about a millisecond without importing the library.

The file name carries the source, the span and the library's version: a new version computes
afresh. Writes go to a temporary file renamed into place, so concurrent processes never read
half a file; a cache that cannot be read or written is skipped (computed, not failed), and
only well-formed sessions are written.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

_FIELDS = ("opens", "closes", "day", "day_open", "day_close")


def cache_dir() -> Path:
    """Where foxhunt caches derived data (``FOXHUNT_CACHE_DIR``, then the XDG default)."""
    if os.environ.get("FOXHUNT_CACHE_DIR"):
        return Path(os.environ["FOXHUNT_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "foxhunt"


def cache_path(source: str, span: tuple[str, str]) -> Path:
    """The cache file of one library calendar over ``span``."""
    try:
        version = metadata.version("pandas_market_calendars")
    except metadata.PackageNotFoundError:
        version = "none"
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{source}_{span[0]}_{span[1]}_pmc{version}")
    return cache_dir() / "calendars" / f"{name}.npz"


def cached_sessions(
    source: str, span: tuple[str, str], compute: Callable[[], tuple[np.ndarray, ...]]
) -> tuple[np.ndarray, ...]:
    """The sessions' five arrays of ``source`` over ``span``: from the cache, else computed
    by ``compute()`` and written to it.

    Args:
        source: The ``pandas_market_calendars`` name.
        span: First and last day.
        compute: Builds the five arrays (opens, closes, day, day_open, day_close).
    """
    path = cache_path(source, span)
    try:
        with np.load(path) as z:
            cached = tuple(z[f] for f in _FIELDS)
        if _well_formed(cached):
            return cached
        log.debug("calendar cache %s is not a calendar's sessions: recomputing", path)
    except FileNotFoundError:
        pass
    except Exception as e:  # noqa: BLE001 - a bad cache file is recomputed, never fatal
        log.debug("calendar cache %s unreadable (%s): recomputing", path, e)
    arrays = compute()
    if len(arrays) != len(_FIELDS):
        raise ValueError(f"a calendar's sessions are {len(_FIELDS)} arrays, not {len(arrays)}")
    if not _well_formed(arrays):  # answered as computed, never cached: the next call retries
        log.debug("calendar %s over %s computed no well-formed sessions: not cached", source, span)
        return arrays
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npz.tmp")
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **dict(zip(_FIELDS, arrays, strict=True)))
        os.replace(tmp, path)
        tmp = None
    except OSError as e:
        log.debug("calendar cache %s not written (%s)", path, e)
    finally:  # a write that failed (a full disk) leaves no temp file behind
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
    return arrays


def _well_formed(arrays: tuple[np.ndarray, ...]) -> bool:
    """Whether five cached arrays are sessions as :class:`~foxhunt.data.market.calendars.Sessions`
    holds them: 1-D int64 of one non-zero length, each interval opening before it closes and
    before the next one opens (a file written by another program, or by hand, is recomputed
    rather than trusted)."""
    if len(arrays) != len(_FIELDS):
        return False
    n = arrays[0].shape
    if len(n) != 1 or n[0] == 0 or any(a.shape != n or a.dtype != np.int64 for a in arrays):
        return False
    opens, closes = arrays[0], arrays[1]
    return bool((opens < closes).all() and (closes[:-1] <= opens[1:]).all())
