"""The raw bars a streaming forecaster keeps per symbol: a bounded tail, and how long it must be.

The observed features are causal but not all of them have a finite look-back:

* **finite windows** (returns, rolling volatility, Bollinger, stochastics, ranks, ...) read at
  most ``MAX_LOOKBACK`` bars back; the feature pipeline drops ``WARMUP`` rows per symbol for
  them, so a tail of ``WARMUP + L`` bars gives the last ``L`` rows exactly;
* **recursive smoothers** (EMA distance, MACD, and TA-Lib's Wilder-smoothed RSI/ATR/ADX) depend
  on where they started, with a weight that decays geometrically: after ``n`` bars the start
  value's weight is ``(1 - alpha)^n``. :func:`smoother_memory` is the ``n`` at which that falls
  below ``1e-13`` for the slowest smoother (EMA span 80: ``alpha = 2/81``, ``n`` = 1198), far
  below float32 resolution (``6e-8``): the features come out the same as from the whole history;
* **the session VWAP** accumulates from the first bar of the trading session (17:00 CT), so the
  tail never starts inside the session of the first encoder bar.

What remains are rounding differences: polars' rolling moments are updated incrementally, so
their last bits depend on the start row. They show up as at most one float32 ulp (about 1e-7
relative) in a few columns (``obs__trend_*``); the forecasts then agree with batch
``foxhunt predict`` to about 1e-6 relative (tests assert 1e-4).

The tail is kept as plain numpy arrays, re-allocated on every update (a few tens of kB per
symbol): what is held is exactly the rows kept, never a growing buffer.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

VALUE_COLUMNS = ("open", "high", "low", "close", "volume")
"""Raw bar values kept per row (float64)."""

ROW_BYTES = 8 + 5 * 8 + 4
"""Bytes per kept bar: timestamp (int64 µs), five float64 values, session day (int32)."""


def smoother_memory(tolerance: float = 1e-13) -> int:
    """Bars after which every recursive smoother of the observed features has forgotten its
    start value to within ``tolerance`` (relative weight of the start value).

    Reads the smoothers' periods from :mod:`foxhunt.data.features.observed`, so a new, slower EMA there
    lengthens the tail here.
    """
    from foxhunt.data.features import observed as o

    alphas = [2.0 / (n + 1.0) for n in o.EMA_SPANS]  # polars ewm_mean(span=n, adjust=False)
    alphas += [2.0 / (p + 1.0) for params in o.MACD_PARAMS for p in params]  # TA-Lib EMAs
    alphas += [1.0 / p for p in (*o.RSI_PERIODS, *o.ATR_PERIODS, *o.ADX_PERIODS)]  # Wilder
    slowest = min(alphas)
    return math.ceil(math.log(tolerance) / math.log(1.0 - slowest))


class BarTail:
    """One symbol's most recent raw bars, in time order.

    Attributes:
        ts: (n,) int64 bar open times, µs since the epoch (UTC).
        values: (n, 5) float64 open, high, low, close, volume.
        session: (n,) int32 trading-session day number (days since 1970-01-01).
    """

    def __init__(
        self,
        ts: np.ndarray | None = None,
        values: np.ndarray | None = None,
        session: np.ndarray | None = None,
    ) -> None:
        self.ts = np.empty(0, np.int64) if ts is None else ts
        self.values = np.empty((0, len(VALUE_COLUMNS)), np.float64) if values is None else values
        self.session = np.empty(0, np.int32) if session is None else session

    def __len__(self) -> int:
        return int(self.ts.shape[0])

    @property
    def last_ts(self) -> int | None:
        """The newest bar's time (µs), or None when empty."""
        return int(self.ts[-1]) if len(self) else None

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays."""
        return self.ts.nbytes + self.values.nbytes + self.session.nbytes

    def extended(
        self,
        ts: np.ndarray,
        values: np.ndarray,
        session: np.ndarray,
        *,
        keep: int,
        encoder_length: int,
    ) -> BarTail:
        """A new tail: these bars appended, minus what the next forecast no longer needs.

        Keeps the last ``keep`` bars, extended back to the first bar of the trading session of
        the first encoder bar (so the session VWAP sees its whole session).

        Args:
            ts: (k,) int64 µs, strictly increasing and after :attr:`last_ts` (checked by the
                caller).
            values: (k, 5) float64.
            session: (k,) int32 session day numbers.
            keep: Bars to keep at least (warm-up + encoder + smoother memory).
            encoder_length: L.

        Returns:
            The new tail (this one is unchanged, so a failed update can be discarded).
        """
        all_ts = np.concatenate([self.ts, ts])
        all_values = np.concatenate([self.values, values])
        all_session = np.concatenate([self.session, session])
        n = all_ts.shape[0]
        start = max(0, n - keep)
        if start > 0:
            first_encoder = max(0, n - encoder_length)
            session_start = int(
                np.searchsorted(all_session, all_session[first_encoder], side="left")
            )
            start = min(start, session_start)
        # Copies, so the arrays of the previous tail (and of the caller) can be released.
        return BarTail(all_ts[start:].copy(), all_values[start:].copy(), all_session[start:].copy())

    def frame(self, symbol: str) -> pl.DataFrame:
        """The tail as a bars frame (columns ``ts symbol open high low close volume``)."""
        return pl.DataFrame(
            {
                "ts": pl.Series(self.ts).cast(pl.Datetime("us")).dt.replace_time_zone("UTC"),
                "symbol": pl.Series([symbol] * len(self), dtype=pl.String),
                **{c: pl.Series(self.values[:, j]) for j, c in enumerate(VALUE_COLUMNS)},
            }
        )
