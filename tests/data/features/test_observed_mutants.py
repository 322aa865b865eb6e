"""Every observed feature against its formula in docs/features.md, worked out independently.

The reference below recomputes all 210 ``obs__`` columns with numpy from the bars alone (TA-Lib
indicators through TA-Lib's own numpy API, everything else by hand: windows, ddof, ranks,
EWMA recursion, least-squares slope), at the windows the docs list, and compares every
column on every row (warm-up rows included: lookback rows are null or cleaned to 0 as the
docs say). The bars are built to reach every guard: a zero-volume stretch (with one bar of
volume 1, so a 5-bar volume sum is exactly 1), a flat stretch (high = low, no returns), and
a session roll at 17:00 CT whose first bar has no volume. The last tests hit the numerical
guards (square roots of rolling means that come out a hair below zero, correlations a hair
beyond ±1) and the default session of ``base_columns``. Written for mutation testing
(``mutation/mutate.py observed``, docs/testing.md).
"""

from __future__ import annotations

import functools
import math
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl
import pytest
import talib
from numpy.lib.stride_tricks import sliding_window_view

from foxhunt.data.features.observed import base_columns, observed_features
from foxhunt.data.features.sets import selected_features

N = 400
START = datetime(2024, 3, 5, 18, 0, tzinfo=UTC)  # 12:00 CT (CST); 17:00 CT is row 300
ZERO_VOLUME = slice(150, 180)  # prices move, no volume (bar 165 trades 1 lot)
FLAT = slice(200, 260)  # o = h = l = c, volume still trades
ROLL = 300


@functools.cache
def _bars() -> pl.DataFrame:
    """Built on first use, not at import: mutmut forks each mutant's tests from a process that
    imported this file, and polars started there would leave its thread pool locked."""
    rng = np.random.default_rng(18)
    close = 100.0 * np.exp(np.cumsum(rng.normal(0.0, 0.003, N)))
    close[FLAT] = close[FLAT.start - 1]
    open_ = np.empty(N)
    open_[0] = 100.0
    open_[1:] = close[:-1] * np.exp(rng.normal(0.0, 0.0005, N - 1))
    open_[FLAT] = close[FLAT.start - 1]
    high = np.maximum(open_, close) * np.exp(np.abs(rng.normal(0.0, 0.001, N)))
    low = np.minimum(open_, close) * np.exp(-np.abs(rng.normal(0.0, 0.001, N)))
    high[FLAT] = low[FLAT] = close[FLAT]
    volume = rng.integers(0, 40, N).astype(np.float64)
    volume[ZERO_VOLUME] = 0.0
    volume[165] = 1.0
    volume[ROLL], volume[ROLL + 1] = 0.0, 1.0
    return pl.DataFrame(
        {
            "ts": [START + timedelta(minutes=i) for i in range(N)],
            "symbol": ["ES"] * N,
            "open": open_,
            "high": high,
            "low": low,
            "close": close,
            "volume": volume,
        }
    ).with_columns(pl.col("ts").dt.cast_time_unit("us"))


def _foxhunt_features() -> dict[str, np.ndarray]:
    frame = _bars().with_columns(base_columns())
    out = frame.select(e.alias(n) for n, e in selected_features((), "default"))
    return {name: out[name].to_numpy().astype(np.float64) for name in out.columns}


# -- the reference: plain numpy, NaN where a window is not full yet ----------------------------


def _shift(x: np.ndarray, k: int) -> np.ndarray:
    out = np.full(x.shape, np.nan)
    out[k:] = x[: len(x) - k] if k else x
    return out


def _rolling(x: np.ndarray, n: int, fn) -> np.ndarray:  # type: ignore[no-untyped-def]
    out = np.full(x.shape, np.nan)
    windows = sliding_window_view(x, n)
    full = np.isfinite(windows).all(axis=1)
    out[n - 1 :][full] = [fn(w) for w in windows[full]]
    return out


def _safe(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = a / b
    return np.where((b != 0.0) & np.isfinite(ratio), ratio, 0.0)


def _clean(x: np.ndarray) -> np.ndarray:
    return np.where(np.isfinite(x), x, 0.0)


def _moments(w: np.ndarray) -> tuple[float, float, float]:
    d = w - w.mean()
    return (d**2).mean(), (d**3).mean(), (d**4).mean()


def _skew(w: np.ndarray) -> float:
    m2, m3, _ = _moments(w)
    return m3 / m2**1.5 if m2 > 0 else math.nan


def _kurt(w: np.ndarray) -> float:  # excess kurtosis, population moments
    m2, _, m4 = _moments(w)
    return m4 / m2**2 - 3.0 if m2 > 0 else math.nan


def _rank_pct(w: np.ndarray) -> float:
    """(average rank of the last value in its window - 1) / (n - 1)."""
    x = w[-1]
    rank = (w < x).sum() + ((w == x).sum() + 1) / 2.0
    return (rank - 1.0) / (len(w) - 1.0)


def _slope(w: np.ndarray) -> float:
    t = np.arange(len(w), dtype=np.float64)
    return float(((t - t.mean()) * (w - w.mean())).sum() / ((t - t.mean()) ** 2).sum())


def _corr(pairs: np.ndarray) -> float:
    a, b = pairs[:, 0], pairs[:, 1]
    da, db = a - a.mean(), b - b.mean()
    denominator = math.sqrt((da**2).sum() * (db**2).sum())
    return float((da * db).sum() / denominator) if denominator > 0 else math.nan


def _session_keys(ts: list[datetime]) -> list[object]:
    """Globex trading date: the Chicago date, plus one day from 17:00 CT on."""
    chicago = ZoneInfo("America/Chicago")
    return [(t.astimezone(chicago) + timedelta(hours=7)).date() for t in ts]


def _reference() -> dict[str, np.ndarray]:  # noqa: PLR0915 - one formula per docs row
    o, h, lo, c, v = (_bars()[x].to_numpy() for x in ("open", "high", "low", "close", "volume"))
    lc = np.log(c)
    r1 = np.full(N, np.nan)
    r1[1:] = np.diff(lc)
    hl, co = np.log(h / lo), np.log(c / o)
    rs = np.log(h / c) * np.log(h / o) + np.log(lo / c) * np.log(lo / o)
    ref: dict[str, np.ndarray] = {}

    def ret(n: int) -> np.ndarray:
        return lc - _shift(lc, n)

    def rv(n: int) -> np.ndarray:
        return np.sqrt(np.maximum(0.0, _rolling(r1, n, lambda w: w.var(ddof=1))))

    def pk(n: int) -> np.ndarray:
        mean = _rolling(hl**2, n, np.mean)
        return np.sqrt(np.maximum(0.0, mean) / (4.0 * math.log(2.0)))

    def gk(n: int) -> np.ndarray:
        term = 0.5 * hl**2 - (2.0 * math.log(2.0) - 1.0) * co**2
        return np.sqrt(np.maximum(0.0, _rolling(term, n, np.mean)))

    vol = {"rv": rv, "pk": pk}
    for k in range(20):
        ref[f"obs__ret1_lag{k}"] = _shift(r1, k)
    for n in (2, 3, 5, 8, 10, 15, 20, 30, 40, 60, 80, 100, 120):
        ref[f"obs__ret_{n}"] = ret(n)
    for n in (1, 5, 10, 20, 40, 80):
        ref[f"obs__zret_{n}"] = _safe(ret(n), rv(20) * math.sqrt(n))
    for n in (5, 10, 20, 40, 80, 120):
        ref[f"obs__rv_cc_{n}"] = rv(n)
        ref[f"obs__rv_parkinson_{n}"] = pk(n)
        ref[f"obs__rv_garman_klass_{n}"] = gk(n)
        ref[f"obs__rv_rogers_satchell_{n}"] = np.sqrt(np.maximum(0.0, _rolling(rs, n, np.mean)))
    for k, a, b in (("rv", 5, 40), ("rv", 10, 80), ("rv", 20, 120), ("pk", 5, 40)):
        ref[f"obs__{k}_ratio_{a}_{b}"] = np.log((vol[k](a) + 1e-12) / (vol[k](b) + 1e-12))
    for n in (20, 40, 80, 120):
        ref[f"obs__skew_{n}"] = _clean(_rolling(r1, n, _skew))
        ref[f"obs__kurt_{n}"] = _clean(_rolling(r1, n, _kurt))

    # TA-Lib's numpy API (the C library itself), scaled as the docs say
    for p in (3, 6, 9, 14, 21, 28):
        ref[f"obs__rsi_{p}"] = _clean(talib.RSI(c, p) - 50.0) / 50.0
    for fast, slow, sig in ((12, 26, 9), (5, 35, 5), (8, 17, 9)):
        macd, signal, hist = talib.MACD(c, fast, slow, sig)
        tag = f"{fast}_{slow}_{sig}"
        ref[f"obs__macd_{tag}"] = _safe(macd, c)
        ref[f"obs__macd_signal_{tag}"] = _safe(signal, c)
        ref[f"obs__macd_hist_{tag}"] = _safe(hist, c)
    for n in (10, 20, 40, 80):
        up, mid, dn = talib.BBANDS(c, n, 2.0, 2.0, 0)
        ref[f"obs__bb_pctb_{n}"] = _safe(c - dn, up - dn) - 0.5
        ref[f"obs__bb_width_{n}"] = _safe(up - dn, mid)
    for p in (7, 14, 21, 28):
        ref[f"obs__natr_{p}"] = _clean(talib.NATR(h, lo, c, p)) / 100.0
    for p in (7, 14, 28):
        ref[f"obs__adx_{p}"] = _clean(talib.ADX(h, lo, c, p)) / 100.0
        ref[f"obs__plus_di_{p}"] = _clean(talib.PLUS_DI(h, lo, c, p)) / 100.0
        ref[f"obs__minus_di_{p}"] = _clean(talib.MINUS_DI(h, lo, c, p)) / 100.0
    for k, sk, sd in ((5, 3, 3), (14, 3, 3), (21, 5, 5)):
        slowk, slowd = talib.STOCH(h, lo, c, k, sk, 0, sd, 0)
        ref[f"obs__stoch_k_{k}_{sk}_{sd}"] = _clean(slowk / 100.0 - 0.5)
        ref[f"obs__stoch_d_{k}_{sk}_{sd}"] = _clean(slowd / 100.0 - 0.5)
    for p in (14, 28):
        ref[f"obs__willr_{p}"] = _clean(talib.WILLR(h, lo, c, p) / 100.0 + 0.5)
    for p in (14, 28):
        ref[f"obs__cci_{p}"] = _clean(talib.CCI(h, lo, c, p) / 100.0)
    for p in (14, 28):
        ref[f"obs__mfi_{p}"] = _clean(talib.MFI(h, lo, c, v, p) / 100.0 - 0.5)

    # volume and VWAP
    lv = np.log1p(v)
    for n in (10, 20, 40, 80, 120):
        mean, std = _rolling(lv, n, np.mean), _rolling(lv, n, lambda w: w.std(ddof=1))
        ref[f"obs__volume_z_{n}"] = _safe(lv - mean, std)
    for n in (5, 40, 120):
        ref[f"obs__volume_ratio_{n}"] = lv - np.log1p(_rolling(v, n, np.mean))
    for n in (5, 10, 20, 40):
        signed = _rolling(np.sign(r1) * v, n, np.sum)
        ref[f"obs__volume_imbalance_{n}"] = _safe(signed, _rolling(v, n, np.sum))
    tp = (h + lo + c) / 3.0
    for n in (5, 10, 20, 40, 80, 120):
        v_sum = _rolling(v, n, np.sum)
        with np.errstate(divide="ignore", invalid="ignore"):
            vwap = np.where(
                v_sum > 0, _rolling(tp * v, n, np.sum) / v_sum, _rolling(tp, n, np.mean)
            )
        ref[f"obs__vwap_dist_{n}"] = np.log(c / vwap)
    keys = _session_keys(_bars()["ts"].to_list())
    session_vwap = np.empty(N)
    cum_v = cum_tpv = 0.0
    for i in range(N):
        if i == 0 or keys[i] != keys[i - 1]:
            cum_v = cum_tpv = 0.0
        cum_v += v[i]
        cum_tpv += tp[i] * v[i]
        session_vwap[i] = cum_tpv / cum_v if cum_v > 0 else c[i]
    ref["obs__vwap_dist_session"] = np.log(c / session_vwap)

    # bar shape
    shape = {
        "body": _safe(c - o, h - lo),
        "upper_wick": _safe(h - np.maximum(o, c), h - lo),
        "lower_wick": _safe(np.minimum(o, c) - lo, h - lo),
        "log_range": hl,
    }
    for k in range(5):
        for name, x in shape.items():
            ref[f"obs__{name}_lag{k}"] = _shift(x, k)
    gap = np.log(o / _shift(c, 1))
    for k in range(5):
        ref[f"obs__gap_lag{k}"] = _shift(gap, k)

    # regime
    for k, w, n in (
        ("rv", 20, 40),
        ("rv", 20, 80),
        ("rv", 20, 120),
        ("pk", 10, 40),
        ("pk", 10, 80),
        ("pk", 10, 120),
    ):
        ref[f"obs__{k}_{w}_pctile_{n}"] = _rolling(vol[k](w), n, _rank_pct)
    for n in (5, 10, 20, 40, 80, 120):
        ref[f"obs__sma_dist_{n}"] = np.log(c / _rolling(c, n, np.mean))
    for n in (5, 10, 20, 40, 60, 80):
        alpha, ema = 2.0 / (n + 1.0), np.empty(N)
        ema[0] = c[0]
        for i in range(1, N):
            ema[i] = alpha * c[i] + (1.0 - alpha) * ema[i - 1]
        ref[f"obs__ema_dist_{n}"] = np.log(c / ema)
    for n in (10, 20, 40, 80, 120):
        ref[f"obs__trend_{n}"] = _safe(_rolling(lc, n, _slope) * math.sqrt(n), rv(n))
    for n in (10, 20, 40, 80):
        ref[f"obs__efficiency_{n}"] = _safe(np.abs(ret(n)), _rolling(np.abs(r1), n, np.sum))
    for n in (5, 10, 20, 40, 80, 120):
        ref[f"obs__dist_high_{n}"] = np.log(c / _rolling(h, n, np.max))
        ref[f"obs__dist_low_{n}"] = np.log(c / _rolling(lo, n, np.min))
    pairs = np.stack([r1, _shift(r1, 1)], axis=1)
    for n in (20, 40, 80, 120):
        corr = np.full(N, np.nan)
        for t in range(n - 1, N):
            window = pairs[t - n + 1 : t + 1]
            if np.isfinite(window).all():
                corr[t] = _corr(window)
        ref[f"obs__autocorr_{n}"] = np.clip(_clean(corr), -1.0, 1.0)
    return ref


# -- tests ------------------------------------------------------------------------------------


def test_the_bars_reach_every_guard() -> None:
    """The fixture holds what the guards are for (so the comparison below is not vacuous)."""
    h, lo, v = (_bars()[x].to_numpy() for x in ("high", "low", "volume"))
    assert (h == lo).sum() == FLAT.stop - FLAT.start  # zero range: body and wicks divide by 0
    assert (sliding_window_view(v, 10).sum(axis=1) == 0).any()  # volume std and sums vanish
    assert (sliding_window_view(v, 5).sum(axis=1) == 1).any()  # a VWAP from a single lot
    keys = _session_keys(_bars()["ts"].to_list())
    assert keys[ROLL] != keys[ROLL - 1] and keys[ROLL - 1] == keys[0]  # one 17:00 CT roll
    assert (v[ROLL], v[ROLL + 1]) == (0.0, 1.0)


@pytest.mark.slow
def test_every_observed_feature_matches_its_documented_formula() -> None:
    got, want = _foxhunt_features(), _reference()
    assert list(got) == [name for name, _ in observed_features()]
    assert sorted(got) == sorted(want)  # the reference covers all 210, names included
    for name, values in got.items():
        rows = _well_conditioned(name)
        np.testing.assert_allclose(
            values[rows], want[name][rows], rtol=1e-7, atol=1e-9, equal_nan=True, err_msg=name
        )


def _well_conditioned(name: str) -> np.ndarray:
    """Rows where a feature does not amplify float noise: the log of a ratio of two
    volatilities that are both ~0 in the flat stretch reads the last bits of polars' rolling
    mean (about -18.3 there against -21.8 exactly), so those rows are left out."""
    rows = np.ones(N, dtype=bool)
    if name.startswith(("obs__rv_ratio_", "obs__pk_ratio_")):
        rows[FLAT.start : FLAT.stop] = False
    return rows


def test_windows_and_guards_leave_visible_values() -> None:
    """Spot checks the comparison relies on: zeros where denominators vanish, resets."""
    got = _foxhunt_features()
    inside_flat = FLAT.start + 30
    for name in ("body", "upper_wick", "lower_wick"):
        assert got[f"obs__{name}_lag0"][inside_flat] == 0.0
    assert got["obs__skew_20"][inside_flat] == 0.0 and got["obs__kurt_20"][inside_flat] == 0.0
    assert got["obs__bb_pctb_10"][inside_flat] == -0.5  # upper = lower: safe(...) - 1/2
    assert got["obs__volume_imbalance_5"][ZERO_VOLUME.start + 10] == 0.0
    assert got["obs__volume_z_10"][ZERO_VOLUME.start + 12] == 0.0
    # the session VWAP restarts at the roll: no volume yet -> the close; then one lot's tp
    assert got["obs__vwap_dist_session"][ROLL] == 0.0
    row = _bars().row(ROLL + 1, named=True)
    tp = (row["high"] + row["low"] + row["close"]) / 3.0
    assert got["obs__vwap_dist_session"][ROLL + 1] == pytest.approx(math.log(row["close"] / tp))


def _vol_feature(name: str, columns: dict[str, np.ndarray]) -> np.ndarray:
    expr = dict(observed_features())[name]
    return pl.DataFrame(columns).select(expr.alias(name)).to_series().to_numpy()


def test_square_roots_of_rolling_means_are_clipped_at_zero() -> None:
    """A rolling mean of squares can come out a hair below zero after a large value leaves the
    window (docs/features.md, "Guards"): the volatility is then 0, never NaN."""
    small, big = 3e-17, 1.2  # squared log ranges: tiny bars around one wide one, then flat
    squares = np.concatenate([np.full(3, small), [big], np.full(12, small), np.zeros(20)])
    raw = pl.Series(squares).rolling_mean(5).to_numpy()
    assert np.nanmin(raw) < 0.0  # the polars behaviour the clip is there for
    below = np.flatnonzero(raw < 0.0)
    hl = np.sqrt(squares)
    zeros = np.zeros_like(hl)
    for name, columns in (
        ("obs__rv_parkinson_5", {"_hl": hl}),
        ("obs__rv_garman_klass_5", {"_hl": hl, "_co": zeros}),  # mean of ½ ln(h/l)²: halved
        ("obs__rv_rogers_satchell_5", {"_rs": squares}),
    ):
        values = _vol_feature(name, columns)
        assert np.isfinite(values[4:]).all(), name
        assert (values[below] == 0.0).all(), name
        assert 0.1 < values[3 + 2] < 1.0, name  # the wide bar is still in the window


@pytest.mark.parametrize(
    ("returns", "bound"),
    [
        (np.tile([0.0123, -0.0123], 30), -1.0),  # alternating: correlation -1
        (0.001 + 0.0001 * np.arange(60), 1.0),  # a steady trend in the returns: +1
    ],
)
def test_autocorrelation_is_clipped_to_plus_minus_one(returns: np.ndarray, bound: float) -> None:
    r1 = pl.Series(returns)
    raw = pl.DataFrame({"r": r1}).select(
        pl.rolling_corr(pl.col("r"), pl.col("r").shift(1), window_size=20)
    )
    raw_values = raw.to_series().drop_nulls().to_numpy()
    assert np.abs(raw_values).max() > 1.0  # float noise past the bound, the clip's reason
    got = _vol_feature("obs__autocorr_20", {"_r1": returns})[20:]
    assert np.abs(got).max() <= 1.0
    np.testing.assert_allclose(got, bound, atol=1e-12)


def test_base_columns_default_session_is_the_globex_trading_date() -> None:
    """Without a session expression, ``_session`` is the trading date rolling at 17:00 CT."""
    ts = [datetime(2024, 3, 5, 22, 59, tzinfo=UTC), datetime(2024, 3, 5, 23, 0, tzinfo=UTC)]
    ts += [datetime(2024, 7, 5, 21, 59, tzinfo=UTC), datetime(2024, 7, 5, 22, 0, tzinfo=UTC)]
    frame = pl.DataFrame(
        {"ts": ts, "symbol": ["ES"] * 4}
        | {x: [100.0, 101.0, 102.0, 101.0] for x in ("open", "high", "low", "close")}
        | {"volume": [1.0, 2.0, 3.0, 4.0]}
    ).with_columns(pl.col("ts").dt.cast_time_unit("us"))
    got = frame.with_columns(base_columns()).get_column("_session").to_list()
    # 16:59 CST / 17:00 CST on Tuesday 5 March; 16:59 CDT / 17:00 CDT on Friday 5 July
    assert [d.isoformat() for d in got] == ["2024-03-05", "2024-03-06", "2024-07-05", "2024-07-06"]
    session = pl.lit("given")
    assert frame.with_columns(base_columns(session))["_session"].to_list() == ["given"] * 4
