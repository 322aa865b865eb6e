"""The layout the incremental feature step reads and writes, shared by the numpy engine
(:mod:`~foxhunt.infer.incremental.engine`) and the compiled one
(:mod:`~foxhunt.infer.incremental.compiled`): the recursive states' columns (:data:`WIDTHS`)
and their features' names (:data:`NAMES`), and, for the kernel, the ring's series, the packed
state's offsets and the pipeline's feature columns as module constants numba folds in. All of
it is derived from :mod:`~foxhunt.infer.incremental.windows` and the feature definitions
(``data/features/observed.py``), never restated.
"""

from __future__ import annotations

import math

import numpy as np

from foxhunt.data.features import observed as o
from foxhunt.infer.incremental import windows as w

NAMES = {  # the recursive indicators' feature names, in the column order of their blocks
    "rsi": tuple(f"obs__rsi_{p}" for p in o.RSI_PERIODS),
    "macd": tuple(
        f"obs__{kind}_{fast}_{slow}_{g}"
        for kind in ("macd", "macd_signal", "macd_hist")
        for fast, slow, g in o.MACD_PARAMS
    ),
    "bb_pctb": tuple(f"obs__bb_pctb_{n}" for n in o.BB_WINDOWS),
    "bb_width": tuple(f"obs__bb_width_{n}" for n in o.BB_WINDOWS),
    "natr": tuple(f"obs__natr_{p}" for p in o.ATR_PERIODS),
    "dmi": tuple(
        f"obs__{kind}_{p}" for kind in ("adx", "plus_di", "minus_di") for p in o.ADX_PERIODS
    ),
}

WIDTHS = {  # recursive state arrays: name -> columns
    "rsi_gain": len(o.RSI_PERIODS),
    "rsi_loss": len(o.RSI_PERIODS),
    "atr": len(o.ATR_PERIODS),
    "dm_plus": len(o.ADX_PERIODS),
    "dm_minus": len(o.ADX_PERIODS),
    "dm_tr": len(o.ADX_PERIODS),
    "adx": len(o.ADX_PERIODS),
    "adx_sum": len(o.ADX_PERIODS),
    "macd_fast": len(o.MACD_PARAMS),
    "macd_slow": len(o.MACD_PARAMS),
    "macd_sig": len(o.MACD_PARAMS),
    "macd_fast_sum": len(o.MACD_PARAMS),
    "macd_slow_sum": len(o.MACD_PARAMS),
    "macd_sig_sum": len(o.MACD_PARAMS),
    "bb_sum": len(o.BB_WINDOWS),
    "ema": len(o.EMA_SPANS),
    "vwap": 2,  # the session's sum of tp * volume and of volume
}


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
for _k, _m in WIDTHS.items():
    _OFF[_k] = _pos
    _pos += _m
WIDTH = _pos
"""Columns of the packed recursive state (the engine's ``state`` arrays side by side)."""
O_GAIN, O_LOSS, O_ATR = _OFF["rsi_gain"], _OFF["rsi_loss"], _OFF["atr"]
O_DMP, O_DMM, O_DMTR = _OFF["dm_plus"], _OFF["dm_minus"], _OFF["dm_tr"]
O_ADX, O_ADXSUM = _OFF["adx"], _OFF["adx_sum"]
O_MF, O_MS, O_MG = _OFF["macd_fast"], _OFF["macd_slow"], _OFF["macd_sig"]
O_MFS, O_MSS, O_MGS = _OFF["macd_fast_sum"], _OFF["macd_slow_sum"], _OFF["macd_sig_sum"]
O_BB, O_EMA, O_VWAP = _OFF["bb_sum"], _OFF["ema"], _OFF["vwap"]

_SUM = w._S  # the windowed sums' rows
S_R1, S_R2, S_R3, S_R4 = _SUM["r1"], _SUM["r1^2"], _SUM["r1^3"], _SUM["r1^4"]
S_HL2, S_GK, S_RS, S_LV, S_LV2 = _SUM["hl^2"], _SUM["gk"], _SUM["rs"], _SUM["lv"], _SUM["lv^2"]
S_VOL, S_SIGNED, S_TPV, S_TP = _SUM["volume"], _SUM["signed"], _SUM["tpv"], _SUM["tp"]
S_CLOSE, S_ABSR1, S_XY = _SUM["close"], _SUM["absr1"], _SUM["r1*r1lag"]
S_LAG, S_LAG2, S_XDLC, S_DLC = _SUM["r1lag"], _SUM["r1lag^2"], _SUM["x*dlc"], _SUM["dlc"]
N_SUMS = len(_SUM)

LN2 = math.log(2.0)
EPS = w._EPS


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
COL_RSI, COL_MACD = _named(NAMES["rsi"]), _named(NAMES["macd"])
COL_PCTB, COL_WIDTH = _named(NAMES["bb_pctb"]), _named(NAMES["bb_width"])
COL_NATR, COL_DMI = _named(NAMES["natr"]), _named(NAMES["dmi"])
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
