"""The recursive indicators, one bar at a time: TA-Lib's state machines, restated in numpy.

Each function advances the state of ``k`` symbols by one bar (arrays with a first axis of
``k``; ``t`` is each symbol's 0-based bar index) and returns the indicator at that bar. They
follow TA-Lib's C code (the library behind ``polars-talib``, which the batch pipeline calls)
operation for operation, seeding included, so a state started at a symbol's first bar gives
the batch values to the last bits, not merely after the start has been forgotten:

* EMA (MACD's three): seeded with the simple mean of the first ``period`` inputs, then
  ``prev + k (x - prev)``, ``k = 2 / (period + 1)``; MACD's fast EMA is seeded on the
  ``fast`` bars that end where the slow one's seed ends;
* Wilder averages (RSI, ATR): the mean of the first ``period`` gains/losses/true ranges, then
  ``(prev (period - 1) + x) / period``;
* Wilder sums (+DI, -DI, ADX): the sum of the first ``period - 1`` directional moves and true
  ranges, then ``prev - prev / period + x``; ADX averages the first ``period`` DX values;
* Bollinger bands: TA-Lib's running sum of the inputs (the middle band); the deviation from
  the window itself (:func:`bbands_step`).

Values before an indicator's first output are NaN (the batch pipeline drops those rows).
TA-Lib 0.8.1's zero tests, as probed through polars-talib: a sum of non-negative terms (RSI's
gain + loss, the DI's true range, DX's DI sum) and a variance count as zero only when exactly 0,
however far a flat stretch has decayed them (TA-Lib divides down to subnormals); a difference of
prices (a stochastic range, CCI's distance and deviation, MFI's typical-price move) counts as
zero within ``TA_EPS`` of its operands' magnitude (:func:`is_zero_scaled`, TA-Lib's
``TA_IS_ZERO_SCALED``). Divisions by zero here are expected and cleaned up; the engine runs
these under one ``np.errstate`` that silences them.
"""

from __future__ import annotations

import numpy as np

TA_EPS = 1e-14
"""TA-Lib's ``TA_EPSILON``: a difference within ``TA_EPS`` x its operands' magnitude is zero."""

State = dict[str, np.ndarray]


def is_zero_scaled(v: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """TA-Lib's ``TA_IS_ZERO_SCALED``: ``|v| <= TA_EPS * scale`` (``scale``: the magnitude of
    the operands whose difference ``v`` is, e.g. ``|a| + |b|``)."""
    return np.abs(v) <= TA_EPS * scale


def true_range(h: np.ndarray, lo: np.ndarray, prev_c: np.ndarray) -> np.ndarray:
    """TA-Lib's ``TRUE_RANGE``: max(h - l, |h - c_prev|, |l - c_prev|)."""
    out = h - lo
    out = np.where(np.abs(h - prev_c) > out, np.abs(h - prev_c), out)
    return np.where(np.abs(lo - prev_c) > out, np.abs(lo - prev_c), out)


def rsi_step(s: State, t: np.ndarray, d: np.ndarray, periods: np.ndarray) -> np.ndarray:
    """Wilder RSI for each period (columns). ``d``: (k,) close change (unused at t = 0).

    State: ``rsi_gain``, ``rsi_loss`` (k, m).
    """
    tt = t[:, None]
    up = np.where(d > 0, d, 0.0)[:, None]  # TA-Lib: d < 0 -> loss -= d, else gain += d
    down = np.where(d < 0, -d, 0.0)[:, None]
    gain, loss = s["rsi_gain"], s["rsi_loss"]
    smoothing = tt > periods
    gain = np.where(smoothing, gain * (periods - 1), gain)
    loss = np.where(smoothing, loss * (periods - 1), loss)
    gain = np.where(tt >= 1, gain + up, gain)
    loss = np.where(tt >= 1, loss + down, loss)
    gain = np.where(tt >= periods, gain / periods, gain)
    loss = np.where(tt >= periods, loss / periods, loss)
    s["rsi_gain"], s["rsi_loss"] = gain, loss
    total = gain + loss
    out = np.where(total == 0.0, 0.0, 100.0 * (gain / total))
    return np.where(tt >= periods, out, np.nan)


def atr_step(s: State, t: np.ndarray, tr: np.ndarray, periods: np.ndarray) -> np.ndarray:
    """Wilder ATR for each period; ``tr``: (k,) true range (unused at t = 0). State ``atr``."""
    tt = t[:, None]
    atr = s["atr"]
    atr = np.where(tt > periods, atr * (periods - 1), atr)
    atr = np.where(tt >= 1, atr + tr[:, None], atr)
    atr = np.where(tt >= periods, atr / periods, atr)
    s["atr"] = atr
    return np.where(tt >= periods, atr, np.nan)


def dmi_step(
    s: State,
    t: np.ndarray,
    diff_p: np.ndarray,
    diff_m: np.ndarray,
    tr: np.ndarray,
    periods: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """+DI, -DI and ADX for each period (TA-Lib ``PLUS_DI``, ``MINUS_DI``, ``ADX``).

    Args:
        diff_p: (k,) high - previous high; ``diff_m``: previous low - low; ``tr``: true range.

    State: ``dm_plus``, ``dm_minus``, ``dm_tr``, ``adx``, ``adx_sum`` (k, m).
    """
    tt = t[:, None]
    p = periods
    dp = np.where((diff_p > 0) & (diff_p > diff_m), diff_p, 0.0)[:, None]
    dm = np.where((diff_m > 0) & (diff_p < diff_m), diff_m, 0.0)[:, None]
    smooth = tt >= p
    plus, minus, trs = s["dm_plus"], s["dm_minus"], s["dm_tr"]
    plus = np.where(smooth, plus - plus / p, plus)
    minus = np.where(smooth, minus - minus / p, minus)
    trs = np.where(smooth, trs - trs / p, trs)
    on = tt >= 1
    plus = np.where(on, plus + dp, plus)
    minus = np.where(on, minus + dm, minus)
    trs = np.where(on, trs + tr[:, None], trs)
    s["dm_plus"], s["dm_minus"], s["dm_tr"] = plus, minus, trs
    tr_ok = trs != 0.0
    plus_di = np.where(tr_ok, 100.0 * (plus / trs), 0.0)
    minus_di = np.where(tr_ok, 100.0 * (minus / trs), 0.0)
    di_sum = minus_di + plus_di
    dx_ok = tr_ok & (di_sum != 0.0)
    dx = np.where(dx_ok, 100.0 * (np.abs(minus_di - plus_di) / di_sum), 0.0)
    # ADX: the first period DX values are summed (bars p .. 2p-1), averaged at 2p - 1, then
    # Wilder-smoothed (a bar whose DX is undefined keeps the previous ADX).
    adx_sum = np.where(smooth & (tt <= 2 * p - 1), s["adx_sum"] + dx, s["adx_sum"])
    adx = np.where(tt == 2 * p - 1, adx_sum / p, s["adx"])
    adx = np.where((tt > 2 * p - 1) & dx_ok, (adx * (p - 1) + dx) / p, adx)
    s["adx_sum"], s["adx"] = adx_sum, adx
    nan = np.nan
    return (
        np.where(smooth, plus_di, nan),
        np.where(smooth, minus_di, nan),
        np.where(tt >= 2 * p - 1, adx, nan),
    )


def _ema_seeded(
    prev: np.ndarray,
    seed_sum: np.ndarray,
    x: np.ndarray,
    t: np.ndarray,
    first: np.ndarray,
    period: np.ndarray,
    k: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TA-Lib ``INT_EMA`` whose first output is at bar ``first`` (seeded with the mean of the
    ``period`` inputs ending there). Returns (ema, seed_sum, valid)."""
    seeding = (t > first - period) & (t <= first)
    seed_sum = np.where(seeding, seed_sum + x, seed_sum)
    ema = np.where(t == first, seed_sum / period, prev)
    ema = np.where(t > first, (x - ema) * k + ema, ema)
    return ema, seed_sum, t >= first


def macd_step(
    s: State, t: np.ndarray, c: np.ndarray, params: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TA-Lib MACD, signal and histogram for each (fast, slow, signal) row of ``params``.

    State: ``macd_fast``, ``macd_slow``, ``macd_sig`` and their seed sums (k, m).
    """
    tt = t[:, None]
    x = c[:, None]
    fast, slow, sig = (params[:, j].astype(np.float64) for j in range(3))
    first = slow - 1  # both EMAs start where the slow one can
    f, s["macd_fast_sum"], _ = _ema_seeded(
        s["macd_fast"], s["macd_fast_sum"], x, tt, first, fast, 2.0 / (fast + 1.0)
    )
    sl, s["macd_slow_sum"], ok = _ema_seeded(
        s["macd_slow"], s["macd_slow_sum"], x, tt, first, slow, 2.0 / (slow + 1.0)
    )
    s["macd_fast"], s["macd_slow"] = f, sl
    macd = np.where(ok, f - sl, 0.0)
    first_sig = first + sig - 1
    sg, s["macd_sig_sum"], ok_sig = _ema_seeded(
        s["macd_sig"], s["macd_sig_sum"], macd, tt, first_sig, sig, 2.0 / (sig + 1.0)
    )
    s["macd_sig"] = sg
    nan = np.nan
    return (
        np.where(ok_sig, macd, nan),
        np.where(ok_sig, sg, nan),
        np.where(ok_sig, macd - sg, nan),
    )


def bbands_step(
    s: State, t: np.ndarray, x: np.ndarray, closes: np.ndarray, windows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """TA-Lib BBANDS middle band (SMA, from its running sum) and population standard deviation
    for each window.

    The deviation is not taken from running sums of squares: on a flat window after moving
    ones their residue (~1e-14 of the price squared) would open bands TA-Lib 0.8.1 keeps
    shut. It is summed over the window's closes, shifted by the newest one, left to right
    (as the compiled kernel sums): a flat window gives exactly 0, a near-flat one its true
    deviation.

    Args:
        x: (k,) the new close; ``closes``: (k, r) the latest closes, oldest first, ending
            with ``x`` (r at least the longest window).

    State: ``bb_sum`` (k, m): sum of the last ``window - 1`` closes.
    """
    tt = t[:, None]
    n = windows
    xx = x[:, None]
    spans = windows.astype(np.int64)
    leaving = closes[:, closes.shape[1] - spans]  # (k, m): window - 1 bars back
    total = s["bb_sum"] + xx
    full = tt >= n - 1
    mid = total / n
    d = closes[:, closes.shape[1] - int(spans.max()) :] - xx
    var = np.empty_like(total)
    for j, span in enumerate(spans.tolist()):
        dw = d[:, d.shape[1] - span :]
        s1 = np.cumsum(dw, axis=1)[:, -1]  # cumsum: left to right, as the kernel adds
        s2 = np.cumsum(dw * dw, axis=1)[:, -1]
        var[:, j] = (s2 - s1 * s1 / span) / span
    std = np.where(var <= 0.0, 0.0, np.sqrt(np.where(var <= 0.0, 0.0, var)))
    s["bb_sum"] = np.where(full, total - leaving, total)
    return np.where(full, mid, np.nan), np.where(full, std, np.nan)
