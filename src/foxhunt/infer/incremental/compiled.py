"""The incremental feature step compiled with numba: the numpy engine's arithmetic, one symbol
at a time in scalar loops.

:meth:`IncrementalFeatures.step <foxhunt.infer.incremental.engine.IncrementalFeatures.step>`
in numpy is a few hundred array operations per bar whatever the number of symbols, so for one
symbol (a live update) its cost is numpy's per-call overhead, about 2 ms. This module restates
``engine._step``, :mod:`~foxhunt.infer.incremental.windows` and
:mod:`~foxhunt.infer.incremental.smoothers` operation for operation as one compiled loop over
the symbols, updating the engine's arrays in place. The numpy engine stays the readable
statement and the fallback (``FOXHUNT_FEATURE_KERNEL=numpy``, or numba missing); the batch
pipeline stays the reference: ``tests/infer/incremental/test_engine.py`` runs every feature of
both kernels against it, and ``test_compiled.py`` checks the two kernels agree.

Sums of more than 8 values (``np.var``, ``np.sum``) are summed pairwise by numpy and in order
here, and the transcendental functions are LLVM's, so the kernels agree to about 1e-15
relative, not bit for bit. Division by zero follows numpy (``error_model="numpy"``) and is
cleaned up as there.

Imported only when a kernel is built (numba's import costs about 0.3 s); compiled once per
machine and cached beside this file (``cache=True``), or in numba's user cache when that is
not writable.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit

from foxhunt.infer.incremental import kernel_layout as k
from foxhunt.infer.incremental import windows as w
from foxhunt.infer.incremental.smoothers import TA_EPS

_JIT = {"cache": True, "nogil": True, "error_model": "numpy"}

# --- scalar helpers (numpy's rules for NaN and zero) --------------------------------------


@njit(**_JIT)
def _clean(x: float) -> float:
    return x if np.isfinite(x) else 0.0


@njit(**_JIT)
def _div(a: float, b: float) -> float:
    r = a / b if b != 0.0 else 0.0
    return r if np.isfinite(r) else 0.0


@njit(**_JIT)
def _clip0(x: float) -> float:
    return 0.0 if x < 0.0 else x  # NaN stays NaN, as np.clip(x, 0, None)


@njit(**_JIT)
def _is_zero_scaled(v: float, scale: float) -> bool:
    return abs(v) <= TA_EPS * scale  # smoothers.is_zero_scaled


@njit(**_JIT)
def _nanmax(a: float, b: float) -> float:  # np.maximum: NaN wins
    if a != a or b != b:
        return np.nan
    return a if a >= b else b


@njit(**_JIT)
def _nanmin(a: float, b: float) -> float:
    if a != a or b != b:
        return np.nan
    return a if a <= b else b


@njit(**_JIT)
def _mean_last(row: np.ndarray, n: int) -> float:
    s = 0.0
    for j in range(k.R - n, k.R):
        s += row[j]
    return s / n


@njit(**_JIT)
def _sum_last(row: np.ndarray, n: int) -> float:
    s = 0.0
    for j in range(k.R - n, k.R):
        s += row[j]
    return s


@njit(**_JIT)
def _ema_seeded(
    prev: float, seed: float, x: float, t: int, first: float, period: float, k: float
) -> tuple[float, float, bool]:
    if t > first - period and t <= first:
        seed = seed + x
    ema = seed / period if t == first else prev
    if t > first:
        ema = (x - ema) * k + ema
    return ema, seed, t >= first


# --- the step ---------------------------------------------------------------------------


@njit(**_JIT)
def _recursive(
    st: np.ndarray,
    t: int,
    hi: float,
    lo: float,
    c: float,
    prev_c: float,
    prev_h: float,
    prev_l: float,
    closes: np.ndarray,
    out: np.ndarray,
) -> None:
    """engine._recursive: RSI, MACD, Bollinger, NATR, DMI (state ``st`` updated in place)."""
    nan = np.nan
    d = c - prev_c
    up = d if d > 0 else 0.0
    down = -d if d < 0 else 0.0
    for j in range(k.RSI_P.shape[0]):
        p = k.RSI_P[j]
        gain, loss = st[k.O_GAIN + j], st[k.O_LOSS + j]
        if t > p:
            gain, loss = gain * (p - 1), loss * (p - 1)
        if t >= 1:
            gain, loss = gain + up, loss + down
        if t >= p:
            gain, loss = gain / p, loss / p
        st[k.O_GAIN + j], st[k.O_LOSS + j] = gain, loss
        total = gain + loss
        rsi = 0.0 if total == 0.0 else 100.0 * (gain / total)
        if not t >= p:
            rsi = nan
        out[k.COL_RSI[j]] = _clean(rsi - 50.0) / 50.0
    m = k.MACD_P.shape[0]
    for j in range(m):
        fast, slow, sig = k.MACD_P[j, 0], k.MACD_P[j, 1], k.MACD_P[j, 2]
        first = slow - 1
        f, f_sum, _ = _ema_seeded(
            st[k.O_MF + j], st[k.O_MFS + j], c, t, first, fast, 2.0 / (fast + 1.0)
        )
        sl, s_sum, ok = _ema_seeded(
            st[k.O_MS + j], st[k.O_MSS + j], c, t, first, slow, 2.0 / (slow + 1.0)
        )
        st[k.O_MF + j], st[k.O_MS + j], st[k.O_MFS + j], st[k.O_MSS + j] = f, sl, f_sum, s_sum
        macd = f - sl if ok else 0.0
        sg, g_sum, ok_sig = _ema_seeded(
            st[k.O_MG + j], st[k.O_MGS + j], macd, t, first + sig - 1, sig, 2.0 / (sig + 1.0)
        )
        st[k.O_MG + j], st[k.O_MGS + j] = sg, g_sum
        hist = macd - sg
        if not ok_sig:
            macd, sg, hist = nan, nan, nan
        out[k.COL_MACD[j]] = _div(macd, c)
        out[k.COL_MACD[m + j]] = _div(sg, c)
        out[k.COL_MACD[2 * m + j]] = _div(hist, c)
    for j in range(k.BB_W.shape[0]):
        n = k.BB_W[j]
        leaving = closes[k.R - n]
        total = st[k.O_BB + j] + c
        full = t >= n - 1
        mid = total / n
        s1 = s2 = 0.0  # smoothers.bbands_step: the window shifted by c, left to right
        for i in range(k.R - n, k.R):
            dc = closes[i] - c
            s1 += dc
            s2 += dc * dc
        var = (s2 - s1 * s1 / n) / n
        std = 0.0 if var <= 0.0 else np.sqrt(var)
        st[k.O_BB + j] = total - leaving if full else total
        if not full:
            mid, std = nan, nan
        upb, dnb = mid + std * 2.0, mid - std * 2.0
        out[k.COL_PCTB[j]] = _div(c - dnb, upb - dnb) - 0.5
        out[k.COL_WIDTH[j]] = _div(upb - dnb, mid)
    tr = hi - lo
    if abs(hi - prev_c) > tr:
        tr = abs(hi - prev_c)
    if abs(lo - prev_c) > tr:
        tr = abs(lo - prev_c)
    for j in range(k.ATR_P.shape[0]):
        p = k.ATR_P[j]
        atr = st[k.O_ATR + j]
        if t > p:
            atr = atr * (p - 1)
        if t >= 1:
            atr = atr + tr
        if t >= p:
            atr = atr / p
        st[k.O_ATR + j] = atr
        value = atr if t >= p else nan
        natr = 0.0 if c == 0.0 else (value / c) * 100.0
        out[k.COL_NATR[j]] = _clean(natr) / 100.0
    diff_p, diff_m = hi - prev_h, prev_l - lo
    dp = diff_p if (diff_p > 0 and diff_p > diff_m) else 0.0
    dm = diff_m if (diff_m > 0 and diff_p < diff_m) else 0.0
    m = k.ADX_P.shape[0]
    for j in range(m):
        p = k.ADX_P[j]
        smooth = t >= p
        plus, minus, trs = st[k.O_DMP + j], st[k.O_DMM + j], st[k.O_DMTR + j]
        if smooth:
            plus, minus, trs = plus - plus / p, minus - minus / p, trs - trs / p
        if t >= 1:
            plus, minus, trs = plus + dp, minus + dm, trs + tr
        st[k.O_DMP + j], st[k.O_DMM + j], st[k.O_DMTR + j] = plus, minus, trs
        tr_ok = trs != 0.0
        plus_di = 100.0 * (plus / trs) if tr_ok else 0.0
        minus_di = 100.0 * (minus / trs) if tr_ok else 0.0
        di_sum = minus_di + plus_di
        dx_ok = tr_ok and di_sum != 0.0
        dx = 100.0 * (abs(minus_di - plus_di) / di_sum) if dx_ok else 0.0
        adx_sum = st[k.O_ADXSUM + j]
        if smooth and t <= 2 * p - 1:
            adx_sum = adx_sum + dx
        adx = adx_sum / p if t == 2 * p - 1 else st[k.O_ADX + j]
        if t > 2 * p - 1 and dx_ok:
            adx = (adx * (p - 1) + dx) / p
        st[k.O_ADXSUM + j], st[k.O_ADX + j] = adx_sum, adx
        if not smooth:
            plus_di, minus_di = nan, nan
        if not t >= 2 * p - 1:
            adx = nan
        out[k.COL_DMI[j]] = _clean(adx) / 100.0
        out[k.COL_DMI[m + j]] = _clean(plus_di) / 100.0
        out[k.COL_DMI[2 * m + j]] = _clean(minus_di) / 100.0


@njit(**_JIT)
def _ema_vwap(
    st: np.ndarray, t: int, fresh: bool, c: float, tpv: float, v: float, out: np.ndarray
) -> None:
    """engine._ema and engine._session_vwap (``obs__vwap_dist_session`` into ``out``)."""
    for j in range(k.EMA_S.shape[0]):
        alpha = 2.0 / (k.EMA_S[j] + 1.0)
        old = 1.0 - alpha
        st[k.O_EMA + j] = c if t == 0 else (old * st[k.O_EMA + j] + alpha * c) / (old + alpha)
    s0 = 0.0 if fresh else st[k.O_VWAP]
    s1 = 0.0 if fresh else st[k.O_VWAP + 1]
    s0, s1 = s0 + tpv, s1 + v
    st[k.O_VWAP], st[k.O_VWAP + 1] = s0, s1
    vwap = s0 / s1 if s1 > 0 else c
    out[k.COL_VWAP_SESSION] = np.log(c / vwap)


@njit(**_JIT)
def _windows(rg: np.ndarray, sums: np.ndarray, highs: np.ndarray, lows: np.ndarray) -> None:
    """windows.Windows: suffix sums (newest first) of the summed series, rolling max/min."""
    lc_new = rg[k.C_LC, k.R - 1]
    r1_new, lag_new = rg[k.C_R1, k.R - 1], rg[k.C_R1, k.R - 2]  # windows.Windows' shifts
    acc = np.zeros(k.N_SUMS)
    hi_acc, lo_acc = np.inf, -np.inf
    for m in range(k.R):
        j = k.R - 1 - m  # newest first
        r1 = rg[k.C_R1, j] - r1_new
        r1lag = rg[k.C_R1, j - 1] - lag_new if j > 0 else np.nan
        r2 = r1 * r1
        lv, hl = rg[k.C_LV, j], rg[k.C_HL, j]
        dlc = rg[k.C_LC, j] - lc_new
        acc[k.S_R1] += r1
        acc[k.S_R2] += r2
        acc[k.S_R3] += r2 * r1
        acc[k.S_R4] += r2 * r2
        acc[k.S_HL2] += hl * hl
        acc[k.S_GK] += rg[k.C_GK, j]
        acc[k.S_RS] += rg[k.C_RS, j]
        acc[k.S_LV] += lv
        acc[k.S_LV2] += lv * lv
        acc[k.S_VOL] += rg[k.C_VOLUME, j]
        acc[k.S_SIGNED] += rg[k.C_SIGNED, j]
        acc[k.S_TPV] += rg[k.C_TPV, j]
        acc[k.S_TP] += rg[k.C_TP, j]
        acc[k.S_CLOSE] += rg[k.C_CLOSE, j]
        acc[k.S_ABSR1] += rg[k.C_ABSR1, j]
        acc[k.S_XY] += r1 * r1lag
        acc[k.S_LAG] += r1lag
        acc[k.S_LAG2] += r1lag * r1lag
        acc[k.S_XDLC] += (k.R - 1 - j) * dlc
        acc[k.S_DLC] += dlc
        sums[:, m] = acc
        h, lo = rg[k.C_HIGH, j], rg[k.C_LOW, j]
        hi_acc = _nanmax(hi_acc, h) if m else h
        lo_acc = _nanmin(lo_acc, lo) if m else lo
        highs[m], lows[m] = hi_acc, lo_acc


@njit(**_JIT)
def _var(sums: np.ndarray, s_row: int, s2_row: int, n: int) -> float:
    s, s2 = sums[s_row, n - 1], sums[s2_row, n - 1]
    return _clip0((s2 - s * s / n) / (n - 1))


@njit(**_JIT)
def _features(
    rg: np.ndarray,
    st: np.ndarray,
    c: float,
    sums: np.ndarray,
    highs: np.ndarray,
    lows: np.ndarray,
    out: np.ndarray,
) -> None:
    """windows.returns, oscillators, volume, shape and regime into ``out``."""
    L = k.R - 1
    lc0 = rg[k.C_LC, L]
    # returns and volatility
    for j in range(k.RET_LAGS.shape[0]):
        out[k.COL_RET1[j]] = rg[k.C_R1, L - k.RET_LAGS[j]]
    for j in range(k.RET_H.shape[0]):
        out[k.COL_RET[j]] = lc0 - rg[k.C_LC, L - k.RET_H[j]]
    nv = k.VOL_W.shape[0]
    rv, pkv = np.empty(nv), np.empty(nv)
    for j in range(nv):
        n = k.VOL_W[j]
        rv[j] = np.sqrt(_var(sums, k.S_R1, k.S_R2, n))
        pkv[j] = np.sqrt(_clip0(sums[k.S_HL2, n - 1] / n) / (4.0 * k.LN2))
        out[k.COL_RV[j]] = rv[j]
        out[k.COL_PK[j]] = pkv[j]
        out[k.COL_GK[j]] = np.sqrt(_clip0(sums[k.S_GK, n - 1] / n))
        out[k.COL_RSV[j]] = np.sqrt(_clip0(sums[k.S_RS, n - 1] / n))
    rv20 = rv[k.I_RV20]
    for j in range(k.ZRET_H.shape[0]):
        h = k.ZRET_H[j]
        out[k.COL_ZRET[j]] = _div(lc0 - rg[k.C_LC, L - h], rv20 * np.sqrt(h))
    for j in range(k.RATIO_A.shape[0]):
        vols = pkv if k.RATIO_PK[j] else rv
        va, vb = vols[k.RATIO_A[j]], vols[k.RATIO_B[j]]
        out[k.COL_RATIO[j]] = np.log((va + k.EPS) / (vb + k.EPS))
    for j in range(k.MOM_W.shape[0]):
        n = k.MOM_W[j]
        mu = sums[k.S_R1, n - 1] / n
        e2, e3, e4 = sums[k.S_R2, n - 1] / n, sums[k.S_R3, n - 1] / n, sums[k.S_R4, n - 1] / n
        m2 = e2 - mu * mu
        m3 = e3 - 3.0 * mu * e2 + 2.0 * mu**3
        m4 = e4 - 4.0 * mu * e3 + 6.0 * mu * mu * e2 - 3.0 * mu**4
        out[k.COL_SKEW[j]] = _clean(m3 / m2**1.5)
        out[k.COL_KURT[j]] = _clean(m4 / m2**2 - 3.0)
    # oscillators
    ns = k.STOCH.shape[0]
    for j in range(ns):
        out[k.COL_STOCH[j]] = _clean(_mean_last(rg[k.C_FASTK[j]], k.STOCH[j, 1]) / 100.0 - 0.5)
        out[k.COL_STOCH[ns + j]] = _clean(_mean_last(rg[k.C_SLOWK[j]], k.STOCH[j, 2]) / 100.0 - 0.5)
    tp0 = rg[k.C_TP, L]
    for j in range(k.OSC_P.shape[0]):
        n = k.OSC_P[j]
        hi, lo = highs[n - 1], lows[n - 1]
        diff = (hi - lo) / -100.0
        flat = _is_zero_scaled(hi - lo, abs(hi) + abs(lo))
        willr = 0.0 if flat else (hi - c) / diff
        out[k.COL_WILLR[j]] = _clean(willr / 100.0 + 0.5)
        avg = sums[k.S_TP, n - 1] / n
        dev = 0.0
        for i in range(k.R - n, k.R):
            dev += abs(rg[k.C_TP, i] - avg)
        dist = tp0 - avg
        mean_dev, scale = dev / n, abs(avg)  # TA-Lib: both tested against the mean's size
        flat = _is_zero_scaled(dist, scale) or _is_zero_scaled(mean_dev, scale)
        cci = 0.0 if flat else dist / (0.015 * mean_dev)
        out[k.COL_CCI[j]] = _clean(cci / 100.0)
        pos, neg = _sum_last(rg[k.C_MF_POS], n), _sum_last(rg[k.C_MF_NEG], n)
        total = pos + neg
        mfi = 100.0 * (pos / total) if total > 0.0 else 0.0  # TA-Lib 0.8: any flow divides
        out[k.COL_MFI[j]] = _clean(mfi / 100.0 - 0.5)
    # volume
    lv0 = rg[k.C_LV, L]
    for j in range(k.VOLZ_W.shape[0]):
        n = k.VOLZ_W[j]
        out[k.COL_VOLZ[j]] = _div(
            lv0 - sums[k.S_LV, n - 1] / n, np.sqrt(_var(sums, k.S_LV, k.S_LV2, n))
        )
    for j in range(k.VOLR_W.shape[0]):
        n = k.VOLR_W[j]
        out[k.COL_VOLR[j]] = lv0 - np.log1p(sums[k.S_VOL, n - 1] / n)
    for j in range(k.IMB_W.shape[0]):
        n = k.IMB_W[j]
        out[k.COL_IMB[j]] = _div(sums[k.S_SIGNED, n - 1], sums[k.S_VOL, n - 1])
    for j in range(k.VWAP_W.shape[0]):
        n = k.VWAP_W[j]
        v = sums[k.S_VOL, n - 1]
        vwap = sums[k.S_TPV, n - 1] / v if v > 0 else sums[k.S_TP, n - 1] / n
        out[k.COL_VWAP[j]] = np.log(c / vwap)
    # bar shape
    for j in range(k.SHAPE_L.shape[0]):
        at = L - k.SHAPE_L[j]
        op, hi, lo, cl = rg[k.C_OPEN, at], rg[k.C_HIGH, at], rg[k.C_LOW, at], rg[k.C_CLOSE, at]
        rng = hi - lo
        out[k.COL_BODY[j]] = _div(cl - op, rng)
        out[k.COL_UPPER[j]] = _div(hi - _nanmax(op, cl), rng)
        out[k.COL_LOWER[j]] = _div(_nanmin(op, cl) - lo, rng)
        out[k.COL_LRANGE[j]] = rg[k.C_HL, at]
        out[k.COL_GAP[j]] = np.log(op / rg[k.C_CLOSE, at - 1])
    # regime
    for j in range(k.RANK_N.shape[0]):
        row, n = rg[k.RANK_SERIES[j]], k.RANK_N[j]
        cur = row[L]
        below, equal = 0, 0
        for i in range(k.R - n, k.R):
            if row[i] < cur:
                below += 1
            elif row[i] == cur:
                equal += 1
        rank = below + (equal + 1) / 2.0
        out[k.COL_RANK[j]] = (rank - 1.0) / (n - 1.0)
    for j in range(k.SMA_W.shape[0]):
        n = k.SMA_W[j]
        out[k.COL_SMA[j]] = np.log(c / (sums[k.S_CLOSE, n - 1] / n))
    for j in range(k.EMA_S.shape[0]):
        out[k.COL_EMA[j]] = np.log(c / st[k.O_EMA + j])
    for j in range(k.TREND_W.shape[0]):
        n = k.TREND_W[j]
        nf = float(n)
        sum_x = nf * (nf - 1) * 0.5
        divisor = sum_x * sum_x - nf * (nf * (nf - 1) * (2 * nf - 1) / 6.0)
        slope = (nf * sums[k.S_XDLC, n - 1] - sum_x * sums[k.S_DLC, n - 1]) / divisor
        out[k.COL_TREND[j]] = _div(slope * np.sqrt(nf), rv[k.TREND_RV[j]])
    for j in range(k.ER_W.shape[0]):
        n = k.ER_W[j]
        out[k.COL_ER[j]] = _div(abs(lc0 - rg[k.C_LC, L - n]), sums[k.S_ABSR1, n - 1])
    for j in range(k.DON_W.shape[0]):
        n = k.DON_W[j]
        out[k.COL_DHI[j]] = np.log(c / highs[n - 1])
        out[k.COL_DLO[j]] = np.log(c / lows[n - 1])
    for j in range(k.AC_W.shape[0]):
        n = k.AC_W[j]
        sx, sy = sums[k.S_R1, n - 1], sums[k.S_LAG, n - 1]
        sxy = sums[k.S_XY, n - 1] - sx * sy / n
        sxx = sums[k.S_R2, n - 1] - sx * sx / n
        syy = sums[k.S_LAG2, n - 1] - sy * sy / n
        corr = _clean(sxy / np.sqrt(sxx * syy))
        out[k.COL_AC[j]] = min(max(corr, -1.0), 1.0)


@njit(**_JIT)
def step(
    slots: np.ndarray,
    values: np.ndarray,
    session: np.ndarray,
    count: np.ndarray,
    last_session: np.ndarray,
    ring: np.ndarray,
    state: np.ndarray,
    out: np.ndarray,
    derived: bool,
    features: bool,
) -> None:
    """Advance ``slots`` (k,) by one bar each, as ``IncrementalFeatures._step`` does.

    Args:
        values: (k, 5) float64 OHLCV; ``session``: (k,) int64 trading days.
        count, last_session, ring, state: The engine's arrays (updated in place; ``state``
            packed, :data:`k.WIDTH` columns).
        out: (k, 210) NaN on entry; the features (with ``features``).
        derived, features: As :meth:`IncrementalFeatures.step`.
    """
    sums = np.empty((k.N_SUMS, k.R))
    highs, lows = np.empty(k.R), np.empty(k.R)
    for i in range(slots.shape[0]):
        slot = slots[i]
        t = count[slot]
        rg, st, o_row = ring[slot], state[slot], out[i]
        for s in range(rg.shape[0]):  # the oldest value drops off the front
            for j in range(k.R - 1):
                rg[s, j] = rg[s, j + 1]
        op, hi, lo, c, v = values[i, 0], values[i, 1], values[i, 2], values[i, 3], values[i, 4]
        P, L = k.R - 2, k.R - 1
        prev_c, prev_h, prev_l, prev_tp = (
            rg[k.C_CLOSE, P],
            rg[k.C_HIGH, P],
            rg[k.C_LOW, P],
            rg[k.C_TP, P],
        )
        lc = np.log(c)
        r1 = np.nan if t == 0 else lc - rg[k.C_LC, P]
        hl, co = np.log(hi / lo), np.log(c / op)
        tp = (hi + lo + c) / 3.0
        rg[k.C_OPEN, L], rg[k.C_HIGH, L], rg[k.C_LOW, L] = op, hi, lo
        rg[k.C_CLOSE, L], rg[k.C_VOLUME, L] = c, v
        rg[k.C_LC, L], rg[k.C_R1, L], rg[k.C_HL, L], rg[k.C_CO, L] = lc, r1, hl, co
        rg[k.C_RS, L] = np.log(hi / c) * np.log(hi / op) + np.log(lo / c) * np.log(lo / op)
        rg[k.C_LV, L], rg[k.C_TP, L] = np.log1p(v), tp
        rg[k.C_GK, L] = 0.5 * hl * hl - (2.0 * k.LN2 - 1.0) * co * co
        rg[k.C_SIGNED, L] = np.sign(r1) * v
        rg[k.C_TPV, L], rg[k.C_ABSR1, L] = tp * v, abs(r1)
        # TA-Lib's MFI takes typical prices within 1e-14 of each other (relative) as equal
        moved = abs(tp - prev_tp) > TA_EPS * (abs(tp) + abs(prev_tp))
        rg[k.C_MF_POS, L] = tp * v if moved and tp > prev_tp else 0.0
        rg[k.C_MF_NEG, L] = tp * v if moved and tp < prev_tp else 0.0
        if derived:
            rg[k.C_RV20, L] = np.sqrt(_clip0(_sample_var(rg[k.C_R1], 20)))
            rg[k.C_PK10, L] = np.sqrt(_clip0(_mean_sq_last(rg[k.C_HL], 10)) / (4.0 * k.LN2))
            for p in range(k.STOCH.shape[0]):
                span = k.STOCH[p, 0]
                hk, lk = rg[k.C_HIGH, k.R - span], rg[k.C_LOW, k.R - span]
                for j in range(k.R - span + 1, k.R):
                    hk, lk = _nanmax(hk, rg[k.C_HIGH, j]), _nanmin(lk, rg[k.C_LOW, j])
                diff = (hk - lk) / 100.0
                flat = _is_zero_scaled(hk - lk, abs(hk) + abs(lk))
                rg[k.C_FASTK[p], L] = 0.0 if flat else (c - lk) / diff
                rg[k.C_SLOWK[p], L] = _mean_last(rg[k.C_FASTK[p]], k.STOCH[p, 1])
        else:
            for d in k.DERIVED:
                rg[d, L] = np.nan
        _recursive(st, t, hi, lo, c, prev_c, prev_h, prev_l, rg[k.C_CLOSE], o_row)
        fresh = t == 0 or session[i] != last_session[slot]
        _ema_vwap(st, t, fresh, c, tp * v, v, o_row)
        if features:
            _windows(rg, sums, highs, lows)
            _features(rg, st, c, sums, highs, lows, o_row)
        count[slot] = t + 1
        last_session[slot] = session[i]


@njit(**_JIT)
def _sample_var(row: np.ndarray, n: int) -> float:
    """np.var(last n, ddof=1)."""
    mean = _mean_last(row, n)
    s = 0.0
    for j in range(k.R - n, k.R):
        d = row[j] - mean
        s += d * d
    return s / (n - 1)


@njit(**_JIT)
def _mean_sq_last(row: np.ndarray, n: int) -> float:
    s = 0.0
    for j in range(k.R - n, k.R):
        s += row[j] * row[j]
    return s / n


@functools.cache
def warm() -> None:
    """Compile the kernel now, or load it from numba's cache: the first update of a service
    would otherwise wait for it (about 13 s the first time on a machine, well under a second
    once cached)."""
    n = len(w._positions())
    step(
        np.zeros(1, np.int64),
        np.array([[1.0, 1.0, 1.0, 1.0, 0.0]]),
        np.zeros(1, np.int64),
        np.zeros(1, np.int64),
        np.zeros(1, np.int64),
        np.full((1, len(w.SERIES), k.R), np.nan),
        np.zeros((1, k.WIDTH)),
        np.full((1, n), np.nan),
        True,
        True,
    )
