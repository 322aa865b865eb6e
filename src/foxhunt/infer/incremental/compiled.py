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
import math

import numpy as np
from numba import njit

from foxhunt.data.features import observed as o
from foxhunt.infer.incremental import windows as w
from foxhunt.infer.incremental.engine import _NAMES, _WIDTHS
from foxhunt.infer.incremental.smoothers import TA_EPS

# --- layout: the engine's arrays, as constants the compiler folds ------------------------

R = w.RING
_IX = w.IX
C_OPEN, C_HIGH, C_LOW, C_CLOSE, C_VOLUME = (
    _IX[n] for n in ("open", "high", "low", "close", "volume")
)
C_LC, C_R1, C_HL, C_CO, C_RS, C_LV = (_IX[n] for n in ("lc", "r1", "hl", "co", "rs", "lv"))
C_TP, C_GK, C_SIGNED, C_TPV, C_ABSR1 = (_IX[n] for n in ("tp", "gk", "signed", "tpv", "absr1"))
C_RV20, C_PK10, C_MF_POS, C_MF_NEG = (_IX[n] for n in ("rv20", "pk10", "mf_pos", "mf_neg"))
C_FASTK = np.array([_IX[f"fastk{k}"] for k, _, _ in o.STOCH_PARAMS], np.int64)
C_SLOWK = np.array([_IX[f"slowk{k}"] for k, _, _ in o.STOCH_PARAMS], np.int64)
DERIVED = np.array(w.DERIVED, np.int64)

_OFF: dict[str, int] = {}
_pos = 0
for _k, _m in _WIDTHS.items():
    _OFF[_k] = _pos
    _pos += _m
WIDTH = _pos
"""Columns of the packed recursive state (the engine's ``state`` arrays side by side)."""
O_GAIN, O_LOSS, O_ATR = _OFF["rsi_gain"], _OFF["rsi_loss"], _OFF["atr"]
O_DMP, O_DMM, O_DMTR = _OFF["dm_plus"], _OFF["dm_minus"], _OFF["dm_tr"]
O_ADX, O_ADXSUM = _OFF["adx"], _OFF["adx_sum"]
O_MF, O_MS, O_MG = _OFF["macd_fast"], _OFF["macd_slow"], _OFF["macd_sig"]
O_MFS, O_MSS, O_MGS = _OFF["macd_fast_sum"], _OFF["macd_slow_sum"], _OFF["macd_sig_sum"]
O_BB, O_BB2, O_EMA, O_VWAP = _OFF["bb_sum"], _OFF["bb_sum2"], _OFF["ema"], _OFF["vwap"]

_SUM = w._S  # the windowed sums' rows
S_R1, S_R2, S_R3, S_R4 = _SUM["r1"], _SUM["r1^2"], _SUM["r1^3"], _SUM["r1^4"]
S_HL2, S_GK, S_RS, S_LV, S_LV2 = _SUM["hl^2"], _SUM["gk"], _SUM["rs"], _SUM["lv"], _SUM["lv^2"]
S_VOL, S_SIGNED, S_TPV, S_TP = _SUM["volume"], _SUM["signed"], _SUM["tpv"], _SUM["tp"]
S_CLOSE, S_ABSR1, S_XY = _SUM["close"], _SUM["absr1"], _SUM["r1*r1lag"]
S_LAG, S_LAG2, S_XDLC, S_DLC = _SUM["r1lag"], _SUM["r1lag^2"], _SUM["x*dlc"], _SUM["dlc"]
N_SUMS = len(_SUM)

_LN2 = math.log(2.0)
_EPS = w._EPS


def _ints(values: tuple[int, ...] | list[int]) -> np.ndarray:
    return np.array(values, np.int64)


def _cols(fmt: str, values: tuple[int, ...]) -> np.ndarray:
    return np.array(w._fmt_columns(fmt, tuple(values)), np.int64)


def _named(names: tuple[str, ...] | list[str]) -> np.ndarray:
    return np.array(w._columns(tuple(names)), np.int64)


RET_LAGS, RET_H, ZRET_H = _ints(o.RET_LAGS), _ints(o.RET_HORIZONS), _ints(o.ZRET_HORIZONS)
VOL_W, MOM_W = _ints(o.VOL_WINDOWS), _ints(o.MOMENT_WINDOWS)
COL_RET1 = _cols("obs__ret1_lag{}", o.RET_LAGS)
COL_RET = _cols("obs__ret_{}", o.RET_HORIZONS)
COL_ZRET = _cols("obs__zret_{}", o.ZRET_HORIZONS)
COL_RV = _cols("obs__rv_cc_{}", o.VOL_WINDOWS)
COL_PK = _cols("obs__rv_parkinson_{}", o.VOL_WINDOWS)
COL_GK = _cols("obs__rv_garman_klass_{}", o.VOL_WINDOWS)
COL_RSV = _cols("obs__rv_rogers_satchell_{}", o.VOL_WINDOWS)
I_RV20 = o.VOL_WINDOWS.index(20)
RATIO_PK = _ints([kind == "pk" for kind, _, _ in o.VOL_RATIOS])
RATIO_A = _ints([o.VOL_WINDOWS.index(a) for _, a, _ in o.VOL_RATIOS])
RATIO_B = _ints([o.VOL_WINDOWS.index(b) for _, _, b in o.VOL_RATIOS])
COL_RATIO = _named([f"obs__{kind}_ratio_{a}_{b}" for kind, a, b in o.VOL_RATIOS])
COL_SKEW = _cols("obs__skew_{}", o.MOMENT_WINDOWS)
COL_KURT = _cols("obs__kurt_{}", o.MOMENT_WINDOWS)

RSI_P, ATR_P, ADX_P = (
    np.array(p, np.float64) for p in (o.RSI_PERIODS, o.ATR_PERIODS, o.ADX_PERIODS)
)
MACD_P = np.array(o.MACD_PARAMS, np.float64)
BB_W = _ints(o.BB_WINDOWS)
EMA_S = np.array(o.EMA_SPANS, np.float64)
COL_RSI, COL_MACD = _named(_NAMES["rsi"]), _named(_NAMES["macd"])
COL_PCTB, COL_WIDTH = _named(_NAMES["bb_pctb"]), _named(_NAMES["bb_width"])
COL_NATR, COL_DMI = _named(_NAMES["natr"]), _named(_NAMES["dmi"])
COL_VWAP_SESSION = _named(["obs__vwap_dist_session"])[0]

STOCH = _ints([list(p) for p in o.STOCH_PARAMS]).reshape(-1, 3)
COL_STOCH = _named(w._STOCH_NAMES)
OSC_P = _ints(o.OSC_PERIODS)
COL_WILLR, COL_CCI = _cols("obs__willr_{}", o.OSC_PERIODS), _named(w._CCI_NAMES)
COL_MFI = _cols("obs__mfi_{}", o.OSC_PERIODS)
VOLZ_W, VOLR_W = _ints(o.VOLZ_WINDOWS), _ints(o.VOLRATIO_WINDOWS)
IMB_W, VWAP_W = _ints(o.IMBALANCE_WINDOWS), _ints(o.VWAP_WINDOWS)
COL_VOLZ = _cols("obs__volume_z_{}", o.VOLZ_WINDOWS)
COL_VOLR = _cols("obs__volume_ratio_{}", o.VOLRATIO_WINDOWS)
COL_IMB = _cols("obs__volume_imbalance_{}", o.IMBALANCE_WINDOWS)
COL_VWAP = _cols("obs__vwap_dist_{}", o.VWAP_WINDOWS)
SHAPE_L = _ints(o.SHAPE_LAGS)
COL_BODY = _cols("obs__body_lag{}", o.SHAPE_LAGS)
COL_UPPER = _cols("obs__upper_wick_lag{}", o.SHAPE_LAGS)
COL_LOWER = _cols("obs__lower_wick_lag{}", o.SHAPE_LAGS)
COL_LRANGE = _cols("obs__log_range_lag{}", o.SHAPE_LAGS)
COL_GAP = _cols("obs__gap_lag{}", o.SHAPE_LAGS)
RANK_SERIES = _ints([C_RV20 if kind == "rv" else C_PK10 for kind, _, _ in o.RANK_SPECS])
RANK_N = _ints([n for _, _, n in o.RANK_SPECS])
COL_RANK = _named([f"obs__{kind}_{w_}_pctile_{n}" for kind, w_, n in o.RANK_SPECS])
SMA_W, TREND_W = _ints(o.SMA_WINDOWS), _ints(o.TREND_WINDOWS)
TREND_RV = _ints([o.VOL_WINDOWS.index(x) for x in o.TREND_WINDOWS])
ER_W, DON_W, AC_W = _ints(o.ER_WINDOWS), _ints(o.DONCHIAN_WINDOWS), _ints(o.AUTOCORR_WINDOWS)
COL_SMA, COL_EMA = _cols("obs__sma_dist_{}", o.SMA_WINDOWS), _cols("obs__ema_dist_{}", o.EMA_SPANS)
COL_TREND = _cols("obs__trend_{}", o.TREND_WINDOWS)
COL_ER = _cols("obs__efficiency_{}", o.ER_WINDOWS)
COL_DHI = _cols("obs__dist_high_{}", o.DONCHIAN_WINDOWS)
COL_DLO = _cols("obs__dist_low_{}", o.DONCHIAN_WINDOWS)
COL_AC = _cols("obs__autocorr_{}", o.AUTOCORR_WINDOWS)

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
def _is_zero(v: float) -> bool:
    return v > -TA_EPS and v < TA_EPS


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
    for j in range(R - n, R):
        s += row[j]
    return s / n


@njit(**_JIT)
def _sum_last(row: np.ndarray, n: int) -> float:
    s = 0.0
    for j in range(R - n, R):
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
    leaving_row: np.ndarray,
    out: np.ndarray,
) -> None:
    """engine._recursive: RSI, MACD, Bollinger, NATR, DMI (state ``st`` updated in place)."""
    nan = np.nan
    d = c - prev_c
    up = d if d > 0 else 0.0
    down = -d if d < 0 else 0.0
    for j in range(RSI_P.shape[0]):
        p = RSI_P[j]
        gain, loss = st[O_GAIN + j], st[O_LOSS + j]
        if t > p:
            gain, loss = gain * (p - 1), loss * (p - 1)
        if t >= 1:
            gain, loss = gain + up, loss + down
        if t >= p:
            gain, loss = gain / p, loss / p
        st[O_GAIN + j], st[O_LOSS + j] = gain, loss
        total = gain + loss
        rsi = 0.0 if _is_zero(total) else 100.0 * (gain / total)
        if not t >= p:
            rsi = nan
        out[COL_RSI[j]] = _clean(rsi - 50.0) / 50.0
    m = MACD_P.shape[0]
    for j in range(m):
        fast, slow, sig = MACD_P[j, 0], MACD_P[j, 1], MACD_P[j, 2]
        first = slow - 1
        f, f_sum, _ = _ema_seeded(
            st[O_MF + j], st[O_MFS + j], c, t, first, fast, 2.0 / (fast + 1.0)
        )
        sl, s_sum, ok = _ema_seeded(
            st[O_MS + j], st[O_MSS + j], c, t, first, slow, 2.0 / (slow + 1.0)
        )
        st[O_MF + j], st[O_MS + j], st[O_MFS + j], st[O_MSS + j] = f, sl, f_sum, s_sum
        macd = f - sl if ok else 0.0
        sg, g_sum, ok_sig = _ema_seeded(
            st[O_MG + j], st[O_MGS + j], macd, t, first + sig - 1, sig, 2.0 / (sig + 1.0)
        )
        st[O_MG + j], st[O_MGS + j] = sg, g_sum
        hist = macd - sg
        if not ok_sig:
            macd, sg, hist = nan, nan, nan
        out[COL_MACD[j]] = _div(macd, c)
        out[COL_MACD[m + j]] = _div(sg, c)
        out[COL_MACD[2 * m + j]] = _div(hist, c)
    for j in range(BB_W.shape[0]):
        n = BB_W[j]
        leaving = leaving_row[R - n]
        total = st[O_BB + j] + c
        total2 = st[O_BB2 + j] + c * c
        full = t >= n - 1
        mid = total / n
        var = total2 / n - mid * mid
        std = 0.0 if var < TA_EPS else np.sqrt(var)
        st[O_BB + j] = total - leaving if full else total
        st[O_BB2 + j] = total2 - leaving * leaving if full else total2
        if not full:
            mid, std = nan, nan
        upb, dnb = mid + std * 2.0, mid - std * 2.0
        out[COL_PCTB[j]] = _div(c - dnb, upb - dnb) - 0.5
        out[COL_WIDTH[j]] = _div(upb - dnb, mid)
    tr = hi - lo
    if abs(hi - prev_c) > tr:
        tr = abs(hi - prev_c)
    if abs(lo - prev_c) > tr:
        tr = abs(lo - prev_c)
    for j in range(ATR_P.shape[0]):
        p = ATR_P[j]
        atr = st[O_ATR + j]
        if t > p:
            atr = atr * (p - 1)
        if t >= 1:
            atr = atr + tr
        if t >= p:
            atr = atr / p
        st[O_ATR + j] = atr
        value = atr if t >= p else nan
        natr = 0.0 if _is_zero(c) else (value / c) * 100.0
        out[COL_NATR[j]] = _clean(natr) / 100.0
    diff_p, diff_m = hi - prev_h, prev_l - lo
    dp = diff_p if (diff_p > 0 and diff_p > diff_m) else 0.0
    dm = diff_m if (diff_m > 0 and diff_p < diff_m) else 0.0
    m = ADX_P.shape[0]
    for j in range(m):
        p = ADX_P[j]
        smooth = t >= p
        plus, minus, trs = st[O_DMP + j], st[O_DMM + j], st[O_DMTR + j]
        if smooth:
            plus, minus, trs = plus - plus / p, minus - minus / p, trs - trs / p
        if t >= 1:
            plus, minus, trs = plus + dp, minus + dm, trs + tr
        st[O_DMP + j], st[O_DMM + j], st[O_DMTR + j] = plus, minus, trs
        tr_ok = not _is_zero(trs)
        plus_di = 100.0 * (plus / trs) if tr_ok else 0.0
        minus_di = 100.0 * (minus / trs) if tr_ok else 0.0
        di_sum = minus_di + plus_di
        dx_ok = tr_ok and not _is_zero(di_sum)
        dx = 100.0 * (abs(minus_di - plus_di) / di_sum) if dx_ok else 0.0
        adx_sum = st[O_ADXSUM + j]
        if smooth and t <= 2 * p - 1:
            adx_sum = adx_sum + dx
        adx = adx_sum / p if t == 2 * p - 1 else st[O_ADX + j]
        if t > 2 * p - 1 and dx_ok:
            adx = (adx * (p - 1) + dx) / p
        st[O_ADXSUM + j], st[O_ADX + j] = adx_sum, adx
        if not smooth:
            plus_di, minus_di = nan, nan
        if not t >= 2 * p - 1:
            adx = nan
        out[COL_DMI[j]] = _clean(adx) / 100.0
        out[COL_DMI[m + j]] = _clean(plus_di) / 100.0
        out[COL_DMI[2 * m + j]] = _clean(minus_di) / 100.0


@njit(**_JIT)
def _ema_vwap(
    st: np.ndarray, t: int, fresh: bool, c: float, tpv: float, v: float, out: np.ndarray
) -> None:
    """engine._ema and engine._session_vwap (``obs__vwap_dist_session`` into ``out``)."""
    for j in range(EMA_S.shape[0]):
        alpha = 2.0 / (EMA_S[j] + 1.0)
        old = 1.0 - alpha
        st[O_EMA + j] = c if t == 0 else (old * st[O_EMA + j] + alpha * c) / (old + alpha)
    s0 = 0.0 if fresh else st[O_VWAP]
    s1 = 0.0 if fresh else st[O_VWAP + 1]
    s0, s1 = s0 + tpv, s1 + v
    st[O_VWAP], st[O_VWAP + 1] = s0, s1
    vwap = s0 / s1 if s1 > 0 else c
    out[COL_VWAP_SESSION] = np.log(c / vwap)


@njit(**_JIT)
def _windows(rg: np.ndarray, sums: np.ndarray, highs: np.ndarray, lows: np.ndarray) -> None:
    """windows.Windows: suffix sums (newest first) of the summed series, rolling max/min."""
    lc_new = rg[C_LC, R - 1]
    acc = np.zeros(N_SUMS)
    hi_acc, lo_acc = np.inf, -np.inf
    for m in range(R):
        j = R - 1 - m  # newest first
        r1 = rg[C_R1, j]
        r1lag = rg[C_R1, j - 1] if j > 0 else np.nan
        r2 = r1 * r1
        lv, hl = rg[C_LV, j], rg[C_HL, j]
        dlc = rg[C_LC, j] - lc_new
        acc[S_R1] += r1
        acc[S_R2] += r2
        acc[S_R3] += r2 * r1
        acc[S_R4] += r2 * r2
        acc[S_HL2] += hl * hl
        acc[S_GK] += rg[C_GK, j]
        acc[S_RS] += rg[C_RS, j]
        acc[S_LV] += lv
        acc[S_LV2] += lv * lv
        acc[S_VOL] += rg[C_VOLUME, j]
        acc[S_SIGNED] += rg[C_SIGNED, j]
        acc[S_TPV] += rg[C_TPV, j]
        acc[S_TP] += rg[C_TP, j]
        acc[S_CLOSE] += rg[C_CLOSE, j]
        acc[S_ABSR1] += rg[C_ABSR1, j]
        acc[S_XY] += r1 * r1lag
        acc[S_LAG] += r1lag
        acc[S_LAG2] += r1lag * r1lag
        acc[S_XDLC] += (R - 1 - j) * dlc
        acc[S_DLC] += dlc
        sums[:, m] = acc
        h, lo = rg[C_HIGH, j], rg[C_LOW, j]
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
    L = R - 1
    lc0 = rg[C_LC, L]
    # returns and volatility
    for j in range(RET_LAGS.shape[0]):
        out[COL_RET1[j]] = rg[C_R1, L - RET_LAGS[j]]
    for j in range(RET_H.shape[0]):
        out[COL_RET[j]] = lc0 - rg[C_LC, L - RET_H[j]]
    nv = VOL_W.shape[0]
    rv, pkv = np.empty(nv), np.empty(nv)
    for j in range(nv):
        n = VOL_W[j]
        rv[j] = np.sqrt(_var(sums, S_R1, S_R2, n))
        pkv[j] = np.sqrt(_clip0(sums[S_HL2, n - 1] / n) / (4.0 * _LN2))
        out[COL_RV[j]] = rv[j]
        out[COL_PK[j]] = pkv[j]
        out[COL_GK[j]] = np.sqrt(_clip0(sums[S_GK, n - 1] / n))
        out[COL_RSV[j]] = np.sqrt(_clip0(sums[S_RS, n - 1] / n))
    rv20 = rv[I_RV20]
    for j in range(ZRET_H.shape[0]):
        h = ZRET_H[j]
        out[COL_ZRET[j]] = _div(lc0 - rg[C_LC, L - h], rv20 * np.sqrt(h))
    for j in range(RATIO_A.shape[0]):
        vols = pkv if RATIO_PK[j] else rv
        va, vb = vols[RATIO_A[j]], vols[RATIO_B[j]]
        out[COL_RATIO[j]] = np.log((va + _EPS) / (vb + _EPS))
    for j in range(MOM_W.shape[0]):
        n = MOM_W[j]
        mu = sums[S_R1, n - 1] / n
        e2, e3, e4 = sums[S_R2, n - 1] / n, sums[S_R3, n - 1] / n, sums[S_R4, n - 1] / n
        m2 = e2 - mu * mu
        m3 = e3 - 3.0 * mu * e2 + 2.0 * mu**3
        m4 = e4 - 4.0 * mu * e3 + 6.0 * mu * mu * e2 - 3.0 * mu**4
        out[COL_SKEW[j]] = _clean(m3 / m2**1.5)
        out[COL_KURT[j]] = _clean(m4 / m2**2 - 3.0)
    # oscillators
    ns = STOCH.shape[0]
    for j in range(ns):
        out[COL_STOCH[j]] = _clean(_mean_last(rg[C_FASTK[j]], STOCH[j, 1]) / 100.0 - 0.5)
        out[COL_STOCH[ns + j]] = _clean(_mean_last(rg[C_SLOWK[j]], STOCH[j, 2]) / 100.0 - 0.5)
    tp0 = rg[C_TP, L]
    for j in range(OSC_P.shape[0]):
        n = OSC_P[j]
        hi, lo = highs[n - 1], lows[n - 1]
        diff = (hi - lo) / -100.0
        willr = (hi - c) / diff if diff != 0.0 else 0.0
        out[COL_WILLR[j]] = _clean(willr / 100.0 + 0.5)
        avg = sums[S_TP, n - 1] / n
        dev = 0.0
        for i in range(R - n, R):
            dev += abs(rg[C_TP, i] - avg)
        dist = tp0 - avg
        cci = dist / (0.015 * (dev / n)) if (dist != 0.0 and dev != 0.0) else 0.0
        out[COL_CCI[j]] = _clean(cci / 100.0)
        pos, neg = _sum_last(rg[C_MF_POS], n), _sum_last(rg[C_MF_NEG], n)
        total = pos + neg
        mfi = 0.0 if total < 1.0 else 100.0 * (pos / total)
        out[COL_MFI[j]] = _clean(mfi / 100.0 - 0.5)
    # volume
    lv0 = rg[C_LV, L]
    for j in range(VOLZ_W.shape[0]):
        n = VOLZ_W[j]
        out[COL_VOLZ[j]] = _div(lv0 - sums[S_LV, n - 1] / n, np.sqrt(_var(sums, S_LV, S_LV2, n)))
    for j in range(VOLR_W.shape[0]):
        n = VOLR_W[j]
        out[COL_VOLR[j]] = lv0 - np.log1p(sums[S_VOL, n - 1] / n)
    for j in range(IMB_W.shape[0]):
        n = IMB_W[j]
        out[COL_IMB[j]] = _div(sums[S_SIGNED, n - 1], sums[S_VOL, n - 1])
    for j in range(VWAP_W.shape[0]):
        n = VWAP_W[j]
        v = sums[S_VOL, n - 1]
        vwap = sums[S_TPV, n - 1] / v if v > 0 else sums[S_TP, n - 1] / n
        out[COL_VWAP[j]] = np.log(c / vwap)
    # bar shape
    for j in range(SHAPE_L.shape[0]):
        at = L - SHAPE_L[j]
        op, hi, lo, cl = rg[C_OPEN, at], rg[C_HIGH, at], rg[C_LOW, at], rg[C_CLOSE, at]
        rng = hi - lo
        out[COL_BODY[j]] = _div(cl - op, rng)
        out[COL_UPPER[j]] = _div(hi - _nanmax(op, cl), rng)
        out[COL_LOWER[j]] = _div(_nanmin(op, cl) - lo, rng)
        out[COL_LRANGE[j]] = rg[C_HL, at]
        out[COL_GAP[j]] = np.log(op / rg[C_CLOSE, at - 1])
    # regime
    for j in range(RANK_N.shape[0]):
        row, n = rg[RANK_SERIES[j]], RANK_N[j]
        cur = row[L]
        below, equal = 0, 0
        for i in range(R - n, R):
            if row[i] < cur:
                below += 1
            elif row[i] == cur:
                equal += 1
        rank = below + (equal + 1) / 2.0
        out[COL_RANK[j]] = (rank - 1.0) / (n - 1.0)
    for j in range(SMA_W.shape[0]):
        n = SMA_W[j]
        out[COL_SMA[j]] = np.log(c / (sums[S_CLOSE, n - 1] / n))
    for j in range(EMA_S.shape[0]):
        out[COL_EMA[j]] = np.log(c / st[O_EMA + j])
    for j in range(TREND_W.shape[0]):
        n = TREND_W[j]
        nf = float(n)
        sum_x = nf * (nf - 1) * 0.5
        divisor = sum_x * sum_x - nf * (nf * (nf - 1) * (2 * nf - 1) / 6.0)
        slope = (nf * sums[S_XDLC, n - 1] - sum_x * sums[S_DLC, n - 1]) / divisor
        out[COL_TREND[j]] = _div(slope * np.sqrt(nf), rv[TREND_RV[j]])
    for j in range(ER_W.shape[0]):
        n = ER_W[j]
        out[COL_ER[j]] = _div(abs(lc0 - rg[C_LC, L - n]), sums[S_ABSR1, n - 1])
    for j in range(DON_W.shape[0]):
        n = DON_W[j]
        out[COL_DHI[j]] = np.log(c / highs[n - 1])
        out[COL_DLO[j]] = np.log(c / lows[n - 1])
    for j in range(AC_W.shape[0]):
        n = AC_W[j]
        sx, sy = sums[S_R1, n - 1], sums[S_LAG, n - 1]
        sxy = sums[S_XY, n - 1] - sx * sy / n
        sxx = sums[S_R2, n - 1] - sx * sx / n
        syy = sums[S_LAG2, n - 1] - sy * sy / n
        corr = _clean(sxy / np.sqrt(sxx * syy))
        out[COL_AC[j]] = min(max(corr, -1.0), 1.0)


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
            packed, :data:`WIDTH` columns).
        out: (k, 210) NaN on entry; the features (with ``features``).
        derived, features: As :meth:`IncrementalFeatures.step`.
    """
    sums = np.empty((N_SUMS, R))
    highs, lows = np.empty(R), np.empty(R)
    for i in range(slots.shape[0]):
        slot = slots[i]
        t = count[slot]
        rg, st, o_row = ring[slot], state[slot], out[i]
        for s in range(rg.shape[0]):  # the oldest value drops off the front
            for j in range(R - 1):
                rg[s, j] = rg[s, j + 1]
        op, hi, lo, c, v = values[i, 0], values[i, 1], values[i, 2], values[i, 3], values[i, 4]
        P, L = R - 2, R - 1
        prev_c, prev_h, prev_l, prev_tp = rg[C_CLOSE, P], rg[C_HIGH, P], rg[C_LOW, P], rg[C_TP, P]
        lc = np.log(c)
        r1 = np.nan if t == 0 else lc - rg[C_LC, P]
        hl, co = np.log(hi / lo), np.log(c / op)
        tp = (hi + lo + c) / 3.0
        rg[C_OPEN, L], rg[C_HIGH, L], rg[C_LOW, L] = op, hi, lo
        rg[C_CLOSE, L], rg[C_VOLUME, L] = c, v
        rg[C_LC, L], rg[C_R1, L], rg[C_HL, L], rg[C_CO, L] = lc, r1, hl, co
        rg[C_RS, L] = np.log(hi / c) * np.log(hi / op) + np.log(lo / c) * np.log(lo / op)
        rg[C_LV, L], rg[C_TP, L] = np.log1p(v), tp
        rg[C_GK, L] = 0.5 * hl * hl - (2.0 * _LN2 - 1.0) * co * co
        rg[C_SIGNED, L] = np.sign(r1) * v
        rg[C_TPV, L], rg[C_ABSR1, L] = tp * v, abs(r1)
        rg[C_MF_POS, L] = tp * v if tp > prev_tp else 0.0
        rg[C_MF_NEG, L] = tp * v if tp < prev_tp else 0.0
        if derived:
            rg[C_RV20, L] = np.sqrt(_clip0(_sample_var(rg[C_R1], 20)))
            rg[C_PK10, L] = np.sqrt(_clip0(_mean_sq_last(rg[C_HL], 10)) / (4.0 * _LN2))
            for p in range(STOCH.shape[0]):
                k = STOCH[p, 0]
                hk, lk = rg[C_HIGH, R - k], rg[C_LOW, R - k]
                for j in range(R - k + 1, R):
                    hk, lk = _nanmax(hk, rg[C_HIGH, j]), _nanmin(lk, rg[C_LOW, j])
                diff = (hk - lk) / 100.0
                rg[C_FASTK[p], L] = (c - lk) / diff if diff != 0.0 else 0.0
                rg[C_SLOWK[p], L] = _mean_last(rg[C_FASTK[p]], STOCH[p, 1])
        else:
            for d in DERIVED:
                rg[d, L] = np.nan
        _recursive(st, t, hi, lo, c, prev_c, prev_h, prev_l, rg[C_CLOSE], o_row)
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
    for j in range(R - n, R):
        d = row[j] - mean
        s += d * d
    return s / (n - 1)


@njit(**_JIT)
def _mean_sq_last(row: np.ndarray, n: int) -> float:
    s = 0.0
    for j in range(R - n, R):
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
        np.full((1, len(w.SERIES), R), np.nan),
        np.zeros((1, WIDTH)),
        np.full((1, n), np.nan),
        True,
        True,
    )
