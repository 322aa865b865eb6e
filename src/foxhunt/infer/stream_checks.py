"""A live update's bars judged against the bars held before them: spacing, interval, level.

A file's bars are judged together: their interval (:mod:`foxhunt.infer.bar_interval`, 20 gaps
or more) and their plausibility (:mod:`foxhunt.data.read.plausibility`, medians of the bars
around each). A live feed (``foxhunt serve``, ``predict --follow``) hands its bars over one at a
time, where those rules have nothing to judge, so 1-minute bars fed to a 5-minute model, or one
bad tick, were taken and forecast from without a word. Each symbol's new bars are therefore
judged with the bars held before them:

* **spacing**: a bar less than half the trained interval after the bar before it (1-minute bars
  to a 5-minute model, an off-grid bar) is refused at once. Half, not the whole interval: a
  stock's first hourly bar may start at 09:30 and the next at 10:00.
* **interval**: once the symbol's gaps (held and new) number :data:`MIN_GAPS`, the file rule:
  fewer than :data:`TRAINED_SHARE` of them at the trained interval, and another most common
  one, refuse (15-minute bars to a 5-minute model, whose gaps are each a plausible pause). An
  update of more than :data:`MIN_GAPS` bars is also judged by its own gaps alone (after a long
  backlog the held gaps outweigh many new ones).
* **recent interval**: the last gaps (the held window's bars, :data:`RECENT_MIN` gaps or more,
  up to :data:`MIN_GAPS`) none at the trained interval and :data:`RECENT_SHARE` of them one
  other gap refuse: bars of another interval sent one at a time after a long backlog, which
  the all-time counts above take thousands of bars to see (until session 55 accepted). A
  quiet market's gaps vary (5, 10, 20 minutes), a feed of another interval's do not.
* **level**: a high (low) :attr:`~foxhunt.data.read.plausibility.Limits.level_factor` times
  above (below) the previous close or more, the magnitude rule of files with the previous
  close as the level: no market moves x10 in one bar; a decimal slip, a bad tick or a price of
  another unit does, and its log return would swamp every feature for a window's length
  (1e300 after 4800 made every later forecast NaN).

Every refusal is a :class:`~foxhunt.errors.DataError` (the spacing and level ones name the row
of the update, the symbol and the time; the interval one the symbol and its gaps); the caller
refuses the whole update, so nothing held changes.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import numpy as np

from foxhunt.data.market.intervals import MIN_GAPS, TRAINED_SHARE, describe_interval
from foxhunt.data.read.plausibility import LIMITS
from foxhunt.errors import DataError
from foxhunt.infer.bar_input import WHERE, iso_us
from foxhunt.infer.bartail import VALUE_COLUMNS

__all__ = ["check_new_bars"]

RECENT_MIN = 10
"""Fewest recent gaps (held and new) the recent-interval rule judges."""
RECENT_SHARE = 0.9
"""Share of the recent gaps one other interval must hold, none at the trained one."""


def _span(us: int) -> str:
    """``1 minute``, ``15 minutes``, ``3 days`` (:func:`describe_interval` as prose)."""
    count, _, unit = describe_interval(timedelta(microseconds=int(us))).rpartition("-")
    return f"{count} {unit}{'' if count == '1' else 's'}"


def check_new_bars(
    symbol: str,
    rows: np.ndarray,
    ts: np.ndarray,
    values: np.ndarray,
    *,
    last_ts: int | None,
    last_close: float | None,
    held_gaps: Counter[int],
    trained_us: int | None,
    model: object,
    level: int = 3,
    recent_ts: np.ndarray | None = None,
) -> None:
    """Refuse ``symbol``'s new bars when they break a rule of the module docstring.

    Args:
        symbol: the symbol.
        rows: (k,) the bars' rows in the update (for messages).
        ts: (k,) int64 µs, increasing and after ``last_ts`` (checked before).
        values: (k, 5) float64 open, high, low, close, volume (valid bars, checked before).
        last_ts: the time of the symbol's last bar held; None: none held.
        last_close: its close; None: none held.
        held_gaps: gap (µs) -> how many of the held bars' gaps had it.
        trained_us: the model's bar interval (µs); None: the run records none (not judged).
        model: how messages name the model (its run directory).
        level: the column of ``values`` the level rule takes each bar's reference from, the
            one ``last_close`` holds: 3, the close, or a price target's own (``--target high``:
            1).
        recent_ts: the times of the last bars held (oldest first, ending at ``last_ts``), for
            the recent-interval rule; None or too few: not judged.

    Raises:
        DataError: the first broken rule, naming row, symbol and time.
    """
    where = f"{WHERE}: row {{row}}, symbol {symbol!r}, ts {{ts}}"
    times = ts if last_ts is None else np.concatenate([[last_ts], ts])
    gaps = np.diff(times)
    held = len(times) - len(ts)  # 1: gaps[0] leads from the held bar to ts[0]
    if trained_us is not None and len(gaps):
        short = np.flatnonzero(gaps * 2 < trained_us)
        if len(short):
            i = int(short[0]) + 1 - held  # the bar after the short gap, in ts
            raise DataError(
                where.format(row=int(rows[i]), ts=iso_us(ts[i]))
                + f": {_span(gaps[short[0]])} after the bar before it; {model} was trained on "
                f"{describe_interval(timedelta(microseconds=trained_us))} bars: send bars of "
                "that interval"
            )
        _check_interval(symbol, gaps, held_gaps, trained_us, model)
        if len(ts) > MIN_GAPS:  # an update of many bars is judged alone too: after a long
            # backlog the held gaps outweighed 30 bars of another interval (until session 54)
            _check_interval(symbol, np.diff(ts), Counter(), trained_us, model)
        if recent_ts is not None and len(recent_ts):
            _check_recent(symbol, np.diff(np.concatenate([recent_ts, ts])), trained_us, model)
    ref = values[:, level]
    closes = ref if last_close is None else np.concatenate([[last_close], ref])
    prev = closes[:-1]
    mine = values[len(values) - len(prev) :]  # the bars with a close before them
    factor = LIMITS.level_factor
    bad = np.flatnonzero((mine[:, 1] >= factor * prev) | (mine[:, 2] * factor <= prev))
    if len(bad):
        j = int(bad[0])
        i = j + len(values) - len(prev)
        high = mine[j, 1] >= factor * prev[j]
        name, price = ("high", mine[j, 1]) if high else ("low", mine[j, 2])
        raise DataError(
            where.format(row=int(rows[i]), ts=iso_us(ts[i]))
            + f": {name} {price:g} is {factor:g} times or more {'above' if high else 'below'} "
            f"the {VALUE_COLUMNS[level]} before it, {prev[j]:g} (off by orders of magnitude: a "
            "bad tick, a decimal slip or another unit)"
        )


def _check_interval(
    symbol: str, gaps: np.ndarray, held: Counter[int], trained_us: int, model: object
) -> None:
    """The file rule over the symbol's held and new gaps (:data:`MIN_GAPS` of them or more)."""
    total = held.total() + len(gaps)
    at_trained = held[trained_us] + int((gaps == trained_us).sum())
    if total < MIN_GAPS or at_trained >= TRAINED_SHARE * total:
        return  # a live update's usual path: no copy of the counts
    counts = held.copy()
    counts.update(int(g) for g in gaps)
    modal, n = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if modal == trained_us:
        return
    trained = describe_interval(timedelta(microseconds=trained_us))
    raise DataError(
        f"{model} was trained on {trained} bars; the bars given for {symbol!r} are mostly "
        f"{_span(modal)} apart ({n} of their {total} gaps, {at_trained} of {trained}): "
        f"send {trained} bars, or forecast them with a model trained on such bars"
    )


def _check_recent(symbol: str, gaps: np.ndarray, trained_us: int, model: object) -> None:
    """The recent-interval rule (module docstring) over the last :data:`MIN_GAPS` gaps."""
    window = gaps[-MIN_GAPS:]
    if len(window) < RECENT_MIN or (window == trained_us).any():
        return
    values, counts = np.unique(window, return_counts=True)
    k = int(np.argmax(counts))
    if counts[k] < RECENT_SHARE * len(window):
        return
    trained = describe_interval(timedelta(microseconds=trained_us))
    raise DataError(
        f"{model} was trained on {trained} bars; the last {len(window)} gaps of {symbol!r} "
        f"hold none of {trained} and {counts[k]} of {_span(values[k])}: send {trained} bars, "
        "or forecast them with a model trained on such bars"
    )
