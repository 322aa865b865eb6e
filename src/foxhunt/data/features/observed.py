"""The 210 observed (historical) features: causal polars expressions over one symbol's bars.

Every expression here reads the current and earlier bars only. They are written for a single
symbol's series; :func:`foxhunt.data.features.table.compute_features` evaluates each one
``.over("symbol")`` so a panel never leaks across symbols. TA-Lib indicators come from
``polars-talib``; the rest are rolling polars expressions. All features are scale-free (log
returns, ratios, oscillators rescaled to about [-1, 1], z-scores), so one model works across
price levels. ``docs/features.md`` lists every family with its formula and windows.

Base columns (added by :func:`base_columns` before the features are evaluated):
``_lc`` log close, ``_r1`` one-bar log return, ``_hl`` log(high/low), ``_co`` log(close/open),
``_rs`` the Rogers-Satchell term, ``_lv`` log(1 + volume), ``_tp`` typical price, ``_session``
the trading-session date.
"""

from __future__ import annotations

import math

import polars as pl
import polars_talib as plta

from foxhunt.data.market.calendar import trading_date

SYMBOL = "symbol"

RET_LAGS = tuple(range(20))
RET_HORIZONS = (2, 3, 5, 8, 10, 15, 20, 30, 40, 60, 80, 100, 120)
ZRET_HORIZONS = (1, 5, 10, 20, 40, 80)
VOL_WINDOWS = (5, 10, 20, 40, 80, 120)
VOL_RATIOS = (("rv", 5, 40), ("rv", 10, 80), ("rv", 20, 120), ("pk", 5, 40))
MOMENT_WINDOWS = (20, 40, 80, 120)
RSI_PERIODS = (3, 6, 9, 14, 21, 28)
MACD_PARAMS = ((12, 26, 9), (5, 35, 5), (8, 17, 9))
BB_WINDOWS = (10, 20, 40, 80)
ATR_PERIODS = (7, 14, 21, 28)
ADX_PERIODS = (7, 14, 28)
STOCH_PARAMS = ((5, 3, 3), (14, 3, 3), (21, 5, 5))
OSC_PERIODS = (14, 28)
VOLZ_WINDOWS = (10, 20, 40, 80, 120)
VOLRATIO_WINDOWS = (5, 40, 120)
IMBALANCE_WINDOWS = (5, 10, 20, 40)
VWAP_WINDOWS = (5, 10, 20, 40, 80, 120)
SHAPE_LAGS = tuple(range(5))
RANK_SPECS = (
    ("rv", 20, 40),
    ("rv", 20, 80),
    ("rv", 20, 120),
    ("pk", 10, 40),
    ("pk", 10, 80),
    ("pk", 10, 120),
)
SMA_WINDOWS = (5, 10, 20, 40, 80, 120)
EMA_SPANS = (5, 10, 20, 40, 60, 80)
TREND_WINDOWS = (10, 20, 40, 80, 120)
ER_WINDOWS = (10, 20, 40, 80)
DONCHIAN_WINDOWS = (5, 10, 20, 40, 80, 120)
AUTOCORR_WINDOWS = (20, 40, 80, 120)

MAX_LOOKBACK = 140
"""Longest look-back of any observed feature in bars (volatility rank: 20-bar vol over 120)."""
WARMUP = 200
"""Rows dropped at the start of each symbol: MAX_LOOKBACK plus 60 bars for the recursive
smoothers (RSI/ATR/ADX/EMA/MACD) to forget their start-up values."""

_LN2 = math.log(2.0)
_EPS = 1e-12


def base_columns(session: pl.Expr | None = None) -> list[pl.Expr]:
    """The helper columns every feature reads (evaluated per symbol where needed).

    Args:
        session: the bar's trading day (resets the session VWAP); the Globex trading date of
            ``ts`` when None.
    """
    h, lo, o, c = pl.col("high"), pl.col("low"), pl.col("open"), pl.col("close")
    return [
        c.log().alias("_lc"),
        c.log().diff().over(SYMBOL).alias("_r1"),
        (h / lo).log().alias("_hl"),
        (c / o).log().alias("_co"),
        ((h / c).log() * (h / o).log() + (lo / c).log() * (lo / o).log()).alias("_rs"),
        pl.col("volume").log1p().alias("_lv"),
        ((h + lo + c) / 3.0).alias("_tp"),
        (trading_date(pl.col("ts")) if session is None else session).alias("_session"),
    ]


def _clean(e: pl.Expr) -> pl.Expr:
    """``e`` where finite, else 0: for ratios, moments and oscillators whose denominator can
    vanish on valid bars (flat runs, zero volume). Never applied to logs of prices, so bad
    prices (<= 0) still surface as a non-finite feature."""
    return pl.when(e.is_finite()).then(e).otherwise(0.0)


def _div(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    """a / b, and 0 where b is 0 or the ratio is not finite (flat markets, zero volume)."""
    return _clean(pl.when(b != 0.0).then(a / b).otherwise(0.0))


def _rv(n: int) -> pl.Expr:
    # Rolling variance of a run of equal returns can come out a hair below zero: clip first.
    return pl.col("_r1").rolling_var(n).clip(lower_bound=0.0).sqrt()


def _pk(n: int) -> pl.Expr:
    # The rolling mean of zeros (high == low for n bars) can be a hair below zero: clip first.
    mean = pl.col("_hl").pow(2).rolling_mean(n).clip(lower_bound=0.0)
    return (mean / (4.0 * _LN2)).sqrt()


def _gk(n: int) -> pl.Expr:
    term = 0.5 * pl.col("_hl").pow(2) - (2.0 * _LN2 - 1.0) * pl.col("_co").pow(2)
    return term.rolling_mean(n).clip(lower_bound=0.0).sqrt()


def _rsv(n: int) -> pl.Expr:
    return pl.col("_rs").rolling_mean(n).clip(lower_bound=0.0).sqrt()


_VOL = {"rv": _rv, "pk": _pk}


def _lagged(expr: pl.Expr, k: int) -> pl.Expr:
    return expr.shift(k) if k else expr


def observed_features() -> list[tuple[str, pl.Expr]]:
    """The 210 observed features as (name, expression) pairs, in model input order.

    Expressions are per-symbol (evaluate them ``.over("symbol")``) and read the base columns
    of :func:`base_columns` plus ``open high low close volume``.
    """
    h, lo, o, c, v = (pl.col(x) for x in ("high", "low", "open", "close", "volume"))
    lc, r1 = pl.col("_lc"), pl.col("_r1")
    f: list[tuple[str, pl.Expr]] = []

    # Returns: one-bar returns at lags 0..19, and log returns over many horizons.
    f += [(f"obs__ret1_lag{k}", _lagged(r1, k)) for k in RET_LAGS]
    f += [(f"obs__ret_{n}", lc - lc.shift(n)) for n in RET_HORIZONS]
    f += [(f"obs__zret_{n}", _div(lc - lc.shift(n), _rv(20) * math.sqrt(n))) for n in ZRET_HORIZONS]

    # Realised volatility estimators.
    f += [(f"obs__rv_cc_{n}", _rv(n)) for n in VOL_WINDOWS]
    f += [(f"obs__rv_parkinson_{n}", _pk(n)) for n in VOL_WINDOWS]
    f += [(f"obs__rv_garman_klass_{n}", _gk(n)) for n in VOL_WINDOWS]
    f += [(f"obs__rv_rogers_satchell_{n}", _rsv(n)) for n in VOL_WINDOWS]
    f += [
        (f"obs__{k}_ratio_{a}_{b}", ((_VOL[k](a) + _EPS) / (_VOL[k](b) + _EPS)).log())
        for k, a, b in VOL_RATIOS
    ]
    f += [(f"obs__skew_{n}", _clean(r1.rolling_skew(n))) for n in MOMENT_WINDOWS]
    f += [(f"obs__kurt_{n}", _clean(r1.rolling_kurtosis(n))) for n in MOMENT_WINDOWS]

    # TA-Lib indicators (polars-talib), rescaled to be scale-free and about unit range.
    f += [(f"obs__rsi_{p}", _clean(plta.rsi(c, timeperiod=p) - 50.0) / 50.0) for p in RSI_PERIODS]
    for fast, slow, sig in MACD_PARAMS:
        m = plta.macd(c, fastperiod=fast, slowperiod=slow, signalperiod=sig)
        tag = f"{fast}_{slow}_{sig}"
        f += [
            (f"obs__macd_{tag}", _div(m.struct.field("macd"), c)),
            (f"obs__macd_signal_{tag}", _div(m.struct.field("macdsignal"), c)),
            (f"obs__macd_hist_{tag}", _div(m.struct.field("macdhist"), c)),
        ]
    for n in BB_WINDOWS:
        bb = plta.bbands(c, timeperiod=n, nbdevup=2.0, nbdevdn=2.0)
        up, mid, dn = (bb.struct.field(x) for x in ("upperband", "middleband", "lowerband"))
        f += [
            (f"obs__bb_pctb_{n}", _div(c - dn, up - dn) - 0.5),
            (f"obs__bb_width_{n}", _div(up - dn, mid)),
        ]
    f += [
        (f"obs__natr_{p}", _clean(plta.natr(h, lo, c, timeperiod=p)) / 100.0) for p in ATR_PERIODS
    ]
    for p in ADX_PERIODS:
        f += [
            (f"obs__adx_{p}", _clean(plta.adx(h, lo, c, timeperiod=p)) / 100.0),
            (f"obs__plus_di_{p}", _clean(plta.plus_di(h, lo, c, timeperiod=p)) / 100.0),
            (f"obs__minus_di_{p}", _clean(plta.minus_di(h, lo, c, timeperiod=p)) / 100.0),
        ]
    for k, sk, sd in STOCH_PARAMS:
        st = plta.stoch(h, lo, c, fastk_period=k, slowk_period=sk, slowd_period=sd)
        f += [
            (f"obs__stoch_k_{k}_{sk}_{sd}", _clean(st.struct.field("slowk") / 100.0 - 0.5)),
            (f"obs__stoch_d_{k}_{sk}_{sd}", _clean(st.struct.field("slowd") / 100.0 - 0.5)),
        ]
    f += [
        (f"obs__willr_{p}", _clean(plta.willr(h, lo, c, timeperiod=p) / 100.0 + 0.5))
        for p in OSC_PERIODS
    ]
    f += [(f"obs__cci_{p}", _clean(plta.cci(h, lo, c, timeperiod=p) / 100.0)) for p in OSC_PERIODS]
    f += [
        (f"obs__mfi_{p}", _clean(plta.mfi(h, lo, c, v, timeperiod=p) / 100.0 - 0.5))
        for p in OSC_PERIODS
    ]

    # Volume.
    lv = pl.col("_lv")
    f += [
        (f"obs__volume_z_{n}", _div(lv - lv.rolling_mean(n), lv.rolling_std(n)))
        for n in VOLZ_WINDOWS
    ]
    f += [(f"obs__volume_ratio_{n}", lv - v.rolling_mean(n).log1p()) for n in VOLRATIO_WINDOWS]
    signed = r1.sign() * v
    f += [
        (f"obs__volume_imbalance_{n}", _div(signed.rolling_sum(n), v.rolling_sum(n)))
        for n in IMBALANCE_WINDOWS
    ]

    # Distance to VWAP (rolling, and since the session open).
    tpv = pl.col("_tp") * v
    for n in VWAP_WINDOWS:
        vwap = pl.when(v.rolling_sum(n) > 0).then(tpv.rolling_sum(n) / v.rolling_sum(n))
        f.append((f"obs__vwap_dist_{n}", (c / vwap.otherwise(pl.col("_tp").rolling_mean(n))).log()))
    session_vwap = pl.when(v.cum_sum() > 0).then(tpv.cum_sum() / v.cum_sum()).otherwise(c)
    f.append(("obs__vwap_dist_session", (c / session_vwap).log()))

    # Bar shape: body and wicks as fractions of the range, log range, opening gap.
    rng = h - lo
    shape = {
        "body": _div(c - o, rng),
        "upper_wick": _div(h - pl.max_horizontal(o, c), rng),
        "lower_wick": _div(pl.min_horizontal(o, c) - lo, rng),
        "log_range": pl.col("_hl"),
    }
    for k in SHAPE_LAGS:
        f += [(f"obs__{name}_lag{k}", _lagged(e, k)) for name, e in shape.items()]
    f += [(f"obs__gap_lag{k}", _lagged((o / c.shift(1)).log(), k)) for k in SHAPE_LAGS]

    # Regime: volatility percentile, trend, range position, autocorrelation.
    f += [
        (f"obs__{k}_{w}_pctile_{n}", (_VOL[k](w).rolling_rank(n) - 1.0) / (n - 1.0))
        for k, w, n in RANK_SPECS
    ]
    f += [(f"obs__sma_dist_{n}", (c / c.rolling_mean(n)).log()) for n in SMA_WINDOWS]
    f += [(f"obs__ema_dist_{n}", (c / c.ewm_mean(span=n, adjust=False)).log()) for n in EMA_SPANS]
    f += [
        (
            f"obs__trend_{n}",
            _div(plta.linearreg_slope(lc, timeperiod=n) * math.sqrt(n), _rv(n)),
        )
        for n in TREND_WINDOWS
    ]
    f += [
        (f"obs__efficiency_{n}", _div((lc - lc.shift(n)).abs(), r1.abs().rolling_sum(n)))
        for n in ER_WINDOWS
    ]
    for n in DONCHIAN_WINDOWS:
        f += [
            (f"obs__dist_high_{n}", (c / h.rolling_max(n)).log()),
            (f"obs__dist_low_{n}", (c / lo.rolling_min(n)).log()),
        ]
    f += [
        (
            f"obs__autocorr_{n}",
            _clean(pl.rolling_corr(r1, r1.shift(1), window_size=n)).clip(-1.0, 1.0),
        )
        for n in AUTOCORR_WINDOWS
    ]
    return f


def partition_of(name: str) -> list[str]:
    """Columns an observed feature's window is evaluated over (the session VWAP resets daily)."""
    return [SYMBOL, "_session"] if name == "obs__vwap_dist_session" else [SYMBOL]
