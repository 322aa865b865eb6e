"""The finite-window observed features of one new bar, from each symbol's ring buffer.

``ring`` is (k, series, RING) float64: for each symbol the last ``RING`` values of each base
series (:data:`SERIES`), oldest first, the new bar's last. Every feature here reads a window
of at most 121 values, so one bar costs O(features x window) with the window bounded (<= 120):
sums and moments are taken fresh over the window rather than carried, which keeps them free of
the drift a carried sum accumulates, and ranks, maxima and minima could not be carried in O(1)
anyway. The formulas are docs/features.md's; the TA-Lib ones (stochastics, Williams %R, CCI,
MFI, linear-regression slope) follow TA-Lib's C code.

Divisions by zero here are expected and cleaned up as the batch pipeline does: the engine's
``step`` runs this module and ``smoothers`` under one ``np.errstate`` that silences them.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from foxhunt.data.features import observed as o
from foxhunt.infer.incremental import smoothers as sm

RING = 128
"""Values kept per series: the longest read is 121 (a 120-bar return, a lag-1 autocorrelation)."""

SERIES = (
    "open",
    "high",
    "low",
    "close",
    "volume",
    "lc",  # log close
    "r1",  # one-bar log return (NaN at a symbol's first bar)
    "hl",  # log(high / low)
    "co",  # log(close / open)
    "rs",  # Rogers-Satchell term
    "lv",  # log(1 + volume)
    "tp",  # typical price (h + l + c) / 3
    "gk",  # Garman-Klass term
    "signed",  # sign(r1) * volume
    "tpv",  # tp * volume
    "absr1",  # |r1|
    "rv20",  # rv_cc_20 (for its percentile)
    "pk10",  # 10-bar Parkinson volatility (for its percentile)
    "mf_pos",  # MFI's positive money flow
    "mf_neg",  # MFI's negative money flow
    *(f"fastk{k}" for k, _, _ in o.STOCH_PARAMS),
    *(f"slowk{k}" for k, _, _ in o.STOCH_PARAMS),
)
IX = {name: i for i, name in enumerate(SERIES)}
DERIVED = [IX[n] for n in SERIES if n in ("rv20", "pk10") or n.startswith(("fastk", "slowk"))]
"""Series computed from windows of the others (skipped for fast-forwarded bars)."""

_LN2 = math.log(2.0)
_EPS = 1e-12


def _ix(values: tuple[int, ...] | list[int]) -> np.ndarray:
    return np.asarray(values, np.int64)


def lag(ring: np.ndarray, name: str, k: int | np.ndarray) -> np.ndarray:
    """Series ``name`` ``k`` bars back: (k_symbols,) for an int, (k_symbols, m) for an array."""
    return ring[:, IX[name], RING - 1 - k]


def last(ring: np.ndarray, name: str, n: int) -> np.ndarray:
    """(k, n) the last ``n`` values of series ``name``, oldest first."""
    return ring[:, IX[name], RING - n :]


def mean_last(x: np.ndarray) -> np.ndarray:
    """``np.mean(x, axis=-1)`` as numpy computes it (sum, then / count), minus its dispatch."""
    return x.sum(axis=-1) / x.shape[-1]


def div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a / b, 0 where b is 0 or the ratio is not finite (the batch pipeline's ``_div``)."""
    out = np.where(b != 0.0, a / b, 0.0)
    return clean(out)


def clean(x: np.ndarray) -> np.ndarray:
    """x where finite, else 0 (the batch pipeline's ``_clean``)."""
    return np.where(np.isfinite(x), x, 0.0)


def rv(ring: np.ndarray, n: int) -> np.ndarray:
    """Close-to-close volatility over ``n`` bars (sample std of the one-bar returns)."""
    return np.sqrt(np.clip(np.var(last(ring, "r1", n), axis=-1, ddof=1), 0.0, None))


def pk(ring: np.ndarray, n: int) -> np.ndarray:
    """Parkinson volatility over ``n`` bars."""
    mean = np.clip(mean_last(last(ring, "hl", n) ** 2), 0.0, None)
    return np.sqrt(mean / (4.0 * _LN2))


def stochastic_fastk(ring: np.ndarray, k: int) -> np.ndarray:
    """TA-Lib STOCH's fast %K over ``k`` bars (0 when the range is flat)."""
    hi = np.max(last(ring, "high", k), axis=-1)
    lo = np.min(last(ring, "low", k), axis=-1)
    diff = (hi - lo) / 100.0
    flat = sm.is_zero_scaled(hi - lo, np.abs(hi) + np.abs(lo))
    return np.where(flat, 0.0, (lag(ring, "close", 0) - lo) / diff)


_STOCH_NAMES = tuple(
    [f"obs__stoch_k_{k}_{sk}_{sd}" for k, sk, sd in o.STOCH_PARAMS]
    + [f"obs__stoch_d_{k}_{sk}_{sd}" for k, sk, sd in o.STOCH_PARAMS]
)

_CCI_NAMES = tuple(f"obs__cci_{n}" for n in o.OSC_PERIODS)

_SUMMED = (
    "r1",  # the one-bar return minus the newest one (only shift-free statistics read it)
    "r1^2",
    "r1^3",
    "r1^4",
    "hl^2",
    "gk",
    "rs",
    "lv",
    "lv^2",
    "volume",
    "signed",
    "tpv",
    "tp",
    "close",
    "absr1",
    "r1*r1lag",
    "r1lag",
    "r1lag^2",
    "x*dlc",  # bars-ago count x dlc: TA-Lib's linear regression sum of x*y
    "dlc",  # log close minus the newest log close (shift-free for the slope)
)
_S = {name: i for i, name in enumerate(_SUMMED)}


class Windows:
    """Sums, maxima and minima over the last n values of every series, for every n at once.

    ``sum(name, n)`` is the sum of the newest ``n`` values (suffix sums of the reversed
    ring, one ``cumsum`` for all series); ``high(n)``/``low(n)`` the rolling max/min.
    """

    def __init__(self, ring: np.ndarray) -> None:
        # the returns shifted by the newest one (and the lagged ones by theirs): the
        # variances, moments and correlation read from them are shift-free, and a window of
        # equal returns then sums exact zeros, as polars' rolling statistics give
        raw = ring[:, IX["r1"]]
        r1 = raw - raw[:, -1:]
        r1lag = np.concatenate([np.full((raw.shape[0], 1), np.nan), raw[:, :-1]], axis=1)
        r1lag = r1lag - r1lag[:, -1:]
        lc = ring[:, IX["lc"]]
        dlc = lc - lc[:, -1:]
        bars_ago = np.arange(RING - 1, -1, -1, dtype=np.float64)
        r2 = r1 * r1
        lv = ring[:, IX["lv"]]
        hl = ring[:, IX["hl"]]
        parts = [
            r1,
            r2,
            r2 * r1,
            r2 * r2,
            hl * hl,
            ring[:, IX["gk"]],
            ring[:, IX["rs"]],
            lv,
            lv * lv,
            ring[:, IX["volume"]],
            ring[:, IX["signed"]],
            ring[:, IX["tpv"]],
            ring[:, IX["tp"]],
            ring[:, IX["close"]],
            ring[:, IX["absr1"]],
            r1 * r1lag,
            r1lag,
            r1lag * r1lag,
            bars_ago * dlc,
            dlc,
        ]
        stacked = np.stack(parts, axis=1)[:, :, ::-1]  # (k, series, RING) newest first
        self.sums = np.cumsum(stacked, axis=2)
        self.highs = np.maximum.accumulate(ring[:, IX["high"], ::-1], axis=1)
        self.lows = np.minimum.accumulate(ring[:, IX["low"], ::-1], axis=1)

    def sum(self, name: str, n: np.ndarray) -> np.ndarray:
        """(k, len(n)) sums of the newest ``n`` values of ``name``."""
        return self.sums[:, _S[name], n - 1]

    def mean(self, name: str, n: np.ndarray) -> np.ndarray:
        """(k, len(n)) means over the newest ``n`` values."""
        return self.sum(name, n) / n

    def var(self, name: str, n: np.ndarray) -> np.ndarray:
        """(k, len(n)) sample variances (ddof 1), clipped at 0."""
        s, s2 = self.sum(name, n), self.sum(f"{name}^2", n)
        return np.clip((s2 - s * s / n) / (n - 1), 0.0, None)

    def high(self, n: np.ndarray) -> np.ndarray:
        return self.highs[:, n - 1]

    def low(self, n: np.ndarray) -> np.ndarray:
        return self.lows[:, n - 1]


@functools.cache
def _positions() -> dict[str, int]:
    """Each observed feature's column in the pipeline's order."""
    return {name: i for i, (name, _) in enumerate(o.observed_features())}


@functools.cache
def _columns(names: tuple[str, ...]) -> np.ndarray:
    at = _positions()
    return np.array([at[n] for n in names], np.int64)


class Out:
    """The (k, 210) observed features of one step, written block by block in the pipeline's
    column order (one numpy assignment per block, not a stack of 210 columns); a column
    never written stays NaN (the tests compare every column with the batch pipeline).

    Args:
        k: Symbols in the step.
    """

    def __init__(self, k: int) -> None:
        self.array = np.full((k, len(_positions())), np.nan)

    def __setitem__(self, name: str, column: np.ndarray) -> None:
        self.array[:, _positions()[name]] = column

    def put(self, names: Sequence[str], block: np.ndarray) -> None:
        """Column ``names[j]`` is ``block[:, j]``."""
        self.array[:, _columns(tuple(names))] = block


def put(f: Out, names: Sequence[str], block: np.ndarray) -> None:
    """``f[names[j]] = block[:, j]``."""
    f.put(names, block)


@functools.cache  # the names formatted once, not at every step
def _fmt_columns(fmt: str, values: tuple[int, ...]) -> np.ndarray:
    return _columns(tuple(fmt.format(v) for v in values))


def putf(f: Out, fmt: str, values: tuple[int, ...], block: np.ndarray) -> None:
    """``f[fmt.format(values[j])] = block[:, j]`` (the columns looked up once per format)."""
    f.array[:, _fmt_columns(fmt, values)] = block


def returns(ring: np.ndarray, win: Windows, f: Out) -> dict[str, np.ndarray]:
    """Returns, volatility estimators and moments (docs/features.md, first two tables).

    Returns the close-to-close and Parkinson volatilities by window (for trend and ratios).
    """
    lc = lag(ring, "lc", 0)[:, None]
    putf(f, "obs__ret1_lag{}", o.RET_LAGS, lag(ring, "r1", _ix(o.RET_LAGS)))
    putf(f, "obs__ret_{}", o.RET_HORIZONS, lc - lag(ring, "lc", _ix(o.RET_HORIZONS)))
    vw = _ix(o.VOL_WINDOWS)
    rv = np.sqrt(win.var("r1", vw))  # (k, 6)
    pkv = np.sqrt(np.clip(win.mean("hl^2", vw), 0.0, None) / (4.0 * _LN2))
    rv20 = rv[:, [o.VOL_WINDOWS.index(20)]]
    z = _ix(o.ZRET_HORIZONS)
    putf(f, "obs__zret_{}", o.ZRET_HORIZONS, div(lc - lag(ring, "lc", z), rv20 * np.sqrt(z)))
    putf(f, "obs__rv_cc_{}", o.VOL_WINDOWS, rv)
    putf(f, "obs__rv_parkinson_{}", o.VOL_WINDOWS, pkv)
    gk = np.sqrt(np.clip(win.mean("gk", vw), 0.0, None))
    putf(f, "obs__rv_garman_klass_{}", o.VOL_WINDOWS, gk)
    rsv = np.sqrt(np.clip(win.mean("rs", vw), 0.0, None))
    putf(f, "obs__rv_rogers_satchell_{}", o.VOL_WINDOWS, rsv)
    vols = {"rv": rv, "pk": pkv}
    at = {n: j for j, n in enumerate(o.VOL_WINDOWS)}
    for kind, a, b in o.VOL_RATIOS:
        va, vb = vols[kind][:, at[a]], vols[kind][:, at[b]]
        f[f"obs__{kind}_ratio_{a}_{b}"] = np.log((va + _EPS) / (vb + _EPS))
    m = _ix(o.MOMENT_WINDOWS)
    mu = win.mean("r1", m)
    e2, e3, e4 = win.mean("r1^2", m), win.mean("r1^3", m), win.mean("r1^4", m)
    m2 = e2 - mu * mu
    m3 = e3 - 3.0 * mu * e2 + 2.0 * mu**3
    m4 = e4 - 4.0 * mu * e3 + 6.0 * mu * mu * e2 - 3.0 * mu**4
    putf(f, "obs__skew_{}", o.MOMENT_WINDOWS, clean(m3 / m2**1.5))
    putf(f, "obs__kurt_{}", o.MOMENT_WINDOWS, clean(m4 / m2**2 - 3.0))
    return vols


def oscillators(ring: np.ndarray, win: Windows, f: Out) -> None:
    """The finite-window TA-Lib indicators: stochastics, Williams %R, CCI, MFI."""
    c = lag(ring, "close", 0)[:, None]
    slow = np.stack(  # (k, 2 x params): every %K, then every %D
        [mean_last(last(ring, f"fastk{k}", sk)) for k, sk, _ in o.STOCH_PARAMS]
        + [mean_last(last(ring, f"slowk{k}", sd)) for k, _, sd in o.STOCH_PARAMS],
        axis=1,
    )
    put(f, _STOCH_NAMES, clean(slow / 100.0 - 0.5))
    p = _ix(o.OSC_PERIODS)
    hi, lo = win.high(p), win.low(p)
    diff = (hi - lo) / -100.0
    willr = np.where(sm.is_zero_scaled(hi - lo, np.abs(hi) + np.abs(lo)), 0.0, (hi - c) / diff)
    putf(f, "obs__willr_{}", o.OSC_PERIODS, clean(willr / 100.0 + 0.5))
    avg = win.sum("tp", p) / p
    dev = np.stack(  # (k, periods): each window's own sum, as TA-Lib sums it
        [
            np.sum(np.abs(last(ring, "tp", n) - avg[:, j : j + 1]), axis=-1)
            for j, n in enumerate(o.OSC_PERIODS)
        ],
        axis=1,
    )
    dist = lag(ring, "tp", 0)[:, None] - avg
    mean_dev, scale = dev / p, np.abs(avg)  # TA-Lib: both tested against the mean's size
    flat = sm.is_zero_scaled(dist, scale) | sm.is_zero_scaled(mean_dev, scale)
    cci = np.where(flat, 0.0, dist / (0.015 * mean_dev))
    put(f, _CCI_NAMES, clean(cci / 100.0))
    pos = np.stack([np.sum(last(ring, "mf_pos", n), axis=-1) for n in o.OSC_PERIODS], axis=1)
    neg = np.stack([np.sum(last(ring, "mf_neg", n), axis=-1) for n in o.OSC_PERIODS], axis=1)
    total = pos + neg
    mfi = np.where(total > 0.0, 100.0 * (pos / total), 0.0)  # TA-Lib 0.8: any flow divides
    putf(f, "obs__mfi_{}", o.OSC_PERIODS, clean(mfi / 100.0 - 0.5))


def volume(ring: np.ndarray, win: Windows, f: Out) -> None:
    """Volume z-scores, ratios, imbalance and rolling VWAP distance."""
    lv, c = lag(ring, "lv", 0)[:, None], lag(ring, "close", 0)[:, None]
    n = _ix(o.VOLZ_WINDOWS)
    z = div(lv - win.mean("lv", n), np.sqrt(win.var("lv", n)))
    putf(f, "obs__volume_z_{}", o.VOLZ_WINDOWS, z)
    n = _ix(o.VOLRATIO_WINDOWS)
    putf(f, "obs__volume_ratio_{}", o.VOLRATIO_WINDOWS, lv - np.log1p(win.mean("volume", n)))
    n = _ix(o.IMBALANCE_WINDOWS)
    imb = div(win.sum("signed", n), win.sum("volume", n))
    putf(f, "obs__volume_imbalance_{}", o.IMBALANCE_WINDOWS, imb)
    n = _ix(o.VWAP_WINDOWS)
    v = win.sum("volume", n)
    vwap = np.where(v > 0, win.sum("tpv", n) / v, win.mean("tp", n))
    putf(f, "obs__vwap_dist_{}", o.VWAP_WINDOWS, np.log(c / vwap))


def shape(ring: np.ndarray, f: Out) -> None:
    """Bar shape at lags 0..4: body, wicks, log range, opening gap."""
    k = _ix(o.SHAPE_LAGS)
    op, hi, lo, c = (lag(ring, x, k) for x in ("open", "high", "low", "close"))
    rng = hi - lo
    parts = {
        "body": div(c - op, rng),
        "upper_wick": div(hi - np.maximum(op, c), rng),
        "lower_wick": div(np.minimum(op, c) - lo, rng),
        "log_range": lag(ring, "hl", k),
    }
    for name, block in parts.items():
        putf(f, f"obs__{name}_lag{{}}", o.SHAPE_LAGS, block)
    gap = np.log(op / lag(ring, "close", k + 1))
    putf(f, "obs__gap_lag{}", o.SHAPE_LAGS, gap)


def _rank_last(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """(k, len(n)) average rank (1-based) of the newest value of ``x`` (k, max n, oldest
    first) within its newest ``n`` values."""
    cur = x[:, -1:]
    below = np.cumsum((x < cur)[:, ::-1], axis=1)[:, n - 1]
    equal = np.cumsum((x == cur)[:, ::-1], axis=1)[:, n - 1]
    return below + (equal + 1) / 2.0


def regime(
    ring: np.ndarray,
    win: Windows,
    f: Out,
    ema: np.ndarray,
    vols: dict[str, np.ndarray],
) -> None:
    """Volatility percentiles, SMA/EMA distance, trend, efficiency, range position,
    autocorrelation. ``ema``: (k, spans) the EMAs of close at this bar."""
    c, lc = lag(ring, "close", 0)[:, None], lag(ring, "lc", 0)[:, None]
    for kind, series in (("rv", "rv20"), ("pk", "pk10")):
        specs = [(w_, n) for k_, w_, n in o.RANK_SPECS if k_ == kind]
        n = _ix([n for _, n in specs])
        rank = _rank_last(last(ring, series, int(n.max())), n)
        put(f, [f"obs__{kind}_{w_}_pctile_{m}" for w_, m in specs], (rank - 1.0) / (n - 1.0))
    n = _ix(o.SMA_WINDOWS)
    putf(f, "obs__sma_dist_{}", o.SMA_WINDOWS, np.log(c / win.mean("close", n)))
    putf(f, "obs__ema_dist_{}", o.EMA_SPANS, np.log(c / ema))
    n = _ix(o.TREND_WINDOWS)
    nf = n.astype(np.float64)
    sum_x = nf * (nf - 1) * 0.5
    divisor = sum_x * sum_x - nf * (nf * (nf - 1) * (2 * nf - 1) / 6.0)
    slope = (nf * win.sum("x*dlc", n) - sum_x * win.sum("dlc", n)) / divisor
    rvn = vols["rv"][:, [o.VOL_WINDOWS.index(x) for x in o.TREND_WINDOWS]]
    putf(f, "obs__trend_{}", o.TREND_WINDOWS, div(slope * np.sqrt(nf), rvn))
    n = _ix(o.ER_WINDOWS)
    move = np.abs(lc - lag(ring, "lc", n))
    putf(f, "obs__efficiency_{}", o.ER_WINDOWS, div(move, win.sum("absr1", n)))
    n = _ix(o.DONCHIAN_WINDOWS)
    hi, lo = np.log(c / win.high(n)), np.log(c / win.low(n))
    putf(f, "obs__dist_high_{}", o.DONCHIAN_WINDOWS, hi)
    putf(f, "obs__dist_low_{}", o.DONCHIAN_WINDOWS, lo)
    n = _ix(o.AUTOCORR_WINDOWS)
    sx, sy = win.sum("r1", n), win.sum("r1lag", n)
    sxy = win.sum("r1*r1lag", n) - sx * sy / n
    sxx = win.sum("r1^2", n) - sx * sx / n
    syy = win.sum("r1lag^2", n) - sy * sy / n
    corr = sxy / np.sqrt(sxx * syy)
    putf(f, "obs__autocorr_{}", o.AUTOCORR_WINDOWS, np.clip(clean(corr), -1.0, 1.0))
