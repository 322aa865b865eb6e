"""Deterministic synthetic futures bars that look like the real thing (``foxhunt data demo``).

The generator is a random walk with stochastic volatility — nothing predictable is planted in
the returns, only in their scale, which is what quantile forecasts can learn:

* Globex calendar: 5-minute bars from 17:00 CT to 16:00 CT, Monday..Friday sessions (the
  Monday session opens Sunday evening), the daily 16:00-17:00 halt and weekends closed.
* volatility: GARCH(1,1) on Student-t(5) shocks (clustering, fat tails), times an intraday
  profile — quiet Asia, a bump at the European open, a U-shape over US hours (high at the
  08:30 CT open, low at midday, rising into 15:00), quiet after the cash close.
* occasional jumps (about one in 500 bars) and gaps at session opens that grow with the time
  the market was closed (a weekend gap is larger than the daily-halt gap).
* OHLC from a Brownian bridge inside each bar, every price rounded to the contract's tick
  (0.25 for ES), so open/high/low/close are consistent by construction; close of one bar is
  the open of the next within a session.
* volume: integers >= 1, U-shaped like volatility, higher when the bar moves more.
"""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl

from foxhunt.data.features.static import contract_spec_of
from foxhunt.data.market.calendar import EXCHANGE_TZ, SESSION_MINUTES, SESSION_OPEN
from foxhunt.data.read.bars import BAR_COLUMNS
from foxhunt.data.read.files import write_table
from foxhunt.errors import InputError

log = logging.getLogger(__name__)

BAR_MINUTES = 5
"""Bar length of the demo data."""
DAILY_VOL = 0.009
"""Typical daily volatility of log returns (ES-like, about 14% a year)."""
GARCH = (0.004, 0.03, 0.966)
"""GARCH(1,1) (omega, alpha, beta) of the unit-variance shock scale; persistence 0.996."""
JUMP_PROB = 0.002
"""Chance of a jump in any bar."""
JUMP_SCALE = 6.0
"""Jump standard deviation in units of the base per-bar volatility."""
SUBSTEPS = 12
"""Brownian-bridge points inside each bar (for high and low)."""
BASE_VOLUME = 5500.0
"""Mean contracts per bar before the intraday profile (about 1.5M a session)."""


def _session_starts(start: date, n_sessions: int) -> np.ndarray:
    """UTC open times (int64 microseconds) of the next ``n_sessions`` Mon..Fri sessions."""
    ct = ZoneInfo(EXCHANGE_TZ)
    out = []
    day = start
    while len(out) < n_sessions:
        if day.weekday() < 5:
            open_ct = datetime.combine(day - timedelta(days=1), SESSION_OPEN, tzinfo=ct)
            out.append(int(open_ct.astimezone(UTC).timestamp()) * 1_000_000)
        day += timedelta(days=1)
    return np.asarray(out, dtype=np.int64)


def _raw_profile(session_minute: np.ndarray) -> np.ndarray:
    clock = (SESSION_OPEN.hour * 60 + session_minute) % 1440  # CT minutes since midnight
    u = np.full(session_minute.shape, 0.45)
    u += 0.35 * np.exp(-session_minute / 20.0)  # Globex open
    eu = (clock >= 120) & (clock < 510)
    u[eu] += 0.3 * np.exp(-(clock[eu] - 120) / 60.0)  # European open, 02:00 CT
    pre = (clock >= 450) & (clock < 510)
    u[pre] += 0.5 * np.exp(-(clock[pre] - 450) / 10.0)  # 07:30 CT data releases
    us = (clock >= 510) & (clock < 900)
    c = clock[us]
    u[us] = 1.0 + 1.6 * np.exp(-(c - 510) / 25.0) + 0.7 * np.exp(-(895 - c) / 30.0)  # U-shape
    u[(clock >= 900) & (clock < 960)] = 0.6  # after the cash close
    return u


def intraday_profile(session_minute: np.ndarray) -> np.ndarray:
    """Relative volatility by minutes since the 17:00 CT open, normalised to mean square 1."""
    full = np.arange(SESSION_MINUTES // BAR_MINUTES) * float(BAR_MINUTES)
    return _raw_profile(session_minute) / np.sqrt(np.mean(_raw_profile(full) ** 2))


def _garch_scale(z: np.ndarray, omega: float, alpha: float, beta: float) -> np.ndarray:
    """Conditional standard deviation h_t^0.5 of a GARCH(1,1) driven by unit shocks ``z``."""
    n = z.shape[0]
    h = np.empty(n)
    ht = 1.0
    for t in range(n):
        h[t] = ht
        ht = omega + alpha * ht * z[t] * z[t] + beta * ht
        ht = min(max(ht, 0.05), 25.0)
    return np.sqrt(h)


def demo_bars(
    n_bars: int = 1000,
    seed: int = 0,
    symbol: str = "ES",
    start: str = "2024-01-02",
) -> pl.DataFrame:
    """Generate synthetic 5-minute bars.

    Args:
        n_bars: number of bars.
        seed: seed of numpy's ``Generator``; the same seed gives the same bars.
        symbol: symbol written in the ``symbol`` column; its root (see
            :func:`foxhunt.data.market.instruments.futures_root`) sets the tick size and price level.
        start: first trading day (YYYY-MM-DD); its session opens 17:00 CT the evening before.
            A weekend date starts on the next Monday.

    Returns:
        Columns ``ts`` (UTC bar open time), ``symbol``, ``open high low close`` (Float64, on the
        tick grid) and ``volume`` (Int64, >= 1).

    Raises:
        InputError: ``n_bars`` < 1 or ``start`` is not a date.
        DataError: unknown symbol root.
    """
    if n_bars < 1:
        raise InputError(f"--bars must be >= 1, got {n_bars}")
    try:
        first_day = date.fromisoformat(start)
    except ValueError as e:
        raise InputError(f"--start {start!r} is not a date (YYYY-MM-DD)") from e
    spec = contract_spec_of(symbol)
    rng = np.random.default_rng(seed)

    per_session = SESSION_MINUTES // BAR_MINUTES
    n_sessions = -(-n_bars // per_session)
    starts = _session_starts(first_day, n_sessions)
    k = np.tile(np.arange(per_session), n_sessions)[:n_bars]
    step_us = BAR_MINUTES * 60 * 1_000_000
    ts = np.repeat(starts, per_session)[:n_bars] + k * step_us
    session_minute = (k * BAR_MINUTES).astype(float)

    # Volatility: GARCH scale x intraday profile x base level.
    s0 = DAILY_VOL / np.sqrt(per_session)
    df_t = 5.0
    z = rng.standard_t(df_t, size=n_bars) / np.sqrt(df_t / (df_t - 2.0))
    sigma = s0 * _garch_scale(z, *GARCH) * intraday_profile(session_minute)
    ret = sigma * z
    jumps = rng.random(n_bars) < JUMP_PROB
    ret += jumps * rng.normal(0.0, JUMP_SCALE * s0, size=n_bars)

    # Gaps at session opens: variance grows with the hours closed.
    gap = np.zeros(n_bars)
    first = np.flatnonzero(k == 0)[1:]
    if first.size:
        closed_h = (ts[first] - (ts[first - 1] + step_us)) / 3.6e9
        gap[first] = rng.normal(0.0, 1.5 * s0, size=first.size) * np.sqrt(closed_h)

    # Log-price path: open = previous close + gap; Brownian bridge from open to close.
    close_log = np.cumsum(gap + ret)
    open_log = close_log - ret
    w = np.cumsum(rng.normal(0.0, 1.0, size=(n_bars, SUBSTEPS)), axis=1)
    w *= (sigma / np.sqrt(SUBSTEPS))[:, None]
    frac = np.arange(1, SUBSTEPS + 1) / SUBSTEPS
    bridge = w - frac[None, :] * (w[:, -1:] - ret[:, None])  # ends exactly at ret
    path = np.concatenate([open_log[:, None], open_log[:, None] + bridge], axis=1)
    tick = spec.tick_size
    prices = np.round(spec.typical_price * np.exp(path) / tick) * tick
    prices = np.round(prices, 10)  # keep decimal ticks (0.1, 0.01) free of binary noise

    # Volume: U-shaped, higher with larger moves and in volatile regimes.
    move = np.abs(ret) / np.maximum(sigma, 1e-12)
    level = BASE_VOLUME * intraday_profile(session_minute) ** 1.5
    volume = level * (0.6 + 0.4 * move) * np.exp(rng.normal(0.0, 0.35, size=n_bars))
    volume = np.maximum(np.round(volume), 1.0).astype(np.int64)

    return pl.DataFrame(
        {
            "ts": pl.Series(ts).cast(pl.Datetime("us")).dt.replace_time_zone("UTC"),
            "symbol": [symbol] * n_bars,
            "open": prices[:, 0],
            "high": prices.max(axis=1),
            "low": prices.min(axis=1),
            "close": prices[:, -1],
            "volume": volume,
        }
    ).select(BAR_COLUMNS)


def write_demo_bars(
    out: Path,
    n_bars: int = 1000,
    seed: int = 0,
    symbol: str = "ES",
    start: str = "2024-01-02",
) -> pl.DataFrame:
    """Generate demo bars (see :func:`demo_bars`), write them atomically and return them.

    Args:
        out: destination, ``.parquet`` or ``.csv``.
        n_bars: number of bars.
        seed: random seed.
        symbol: symbol (root sets tick size and price level).
        start: first trading day, YYYY-MM-DD.

    Raises:
        InputError: bad arguments or output path.
        DataError: unknown symbol root.
    """
    bars = demo_bars(n_bars, seed=seed, symbol=symbol, start=start)
    write_table(bars, Path(out))
    return bars
