"""The recursive indicators one bar at a time against TA-Lib (polars-talib, what the batch
pipeline calls) over every bar, the warm-up's NaN bars included, on a series made to reach
their edge cases: a flat start (zero gains and losses, zero true range, zero variance), a flat
stretch later, gaps up and down across the previous close, and equal highs and lows."""

from __future__ import annotations

import numpy as np
import polars as pl
import polars_talib as plta
import pytest

from foxhunt.infer.incremental import smoothers as sm

PERIODS = np.array([2, 3, 5])


def _series() -> pl.DataFrame:
    flat = [100.0] * 12  # longer than 2 * 5 - 1 bars: ADX's first output still on a flat start
    walk = [100.0, 101.5, 100.25, 103.0, 103.0, 102.0, 99.0, 99.5, 104.0, 104.0]
    gap_down = [97.0, 96.5, 98.0, 98.0, 98.0, 98.0, 98.0, 98.0]  # then flat
    gap_up = [103.5, 104.25, 103.0, 105.5, 101.0, 100.75, 102.0, 106.0, 106.0, 105.0]
    close = np.array(flat + walk + gap_down + gap_up)
    rng = np.random.default_rng(0)
    spread = np.where(
        np.diff(close, prepend=close[0]) == 0, 0.0, rng.uniform(0.25, 1.5, len(close))
    )
    spread[:12] = 0.0  # the flat start has high == low == close
    high, low = close + spread, close - spread / 2
    high[30:33] = low[30:33] = close[30:33]  # a gap down with no range: |low - prev close| wins
    return pl.DataFrame({"h": high, "l": low, "c": close})


def _steps(bars: pl.DataFrame, step) -> np.ndarray:  # noqa: ANN001
    """Run ``step(state, t, i)`` over every bar; stack its (1, m) outputs to (n, m)."""
    state: dict[str, np.ndarray] = {}
    with np.errstate(divide="ignore", invalid="ignore"):  # as the engine runs them
        return np.concatenate([step(state, np.array([t]), t) for t in range(len(bars))])


def _zeros(state: dict[str, np.ndarray], *names: str, m: int = len(PERIODS)) -> None:
    for name in names:
        state.setdefault(name, np.zeros((1, m)))


def _talib(bars: pl.DataFrame, exprs: list[pl.Expr]) -> np.ndarray:
    return bars.select([e.alias(str(i)) for i, e in enumerate(exprs)]).to_numpy()


def _same(got: np.ndarray, want: np.ndarray) -> None:
    assert np.array_equal(np.isnan(got), np.isnan(want))  # the warm-up ends on the same bar
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9, equal_nan=True)


@pytest.fixture(scope="module")
def bars() -> pl.DataFrame:
    return _series()


def test_true_range_takes_the_previous_close_on_gaps_either_way(bars: pl.DataFrame) -> None:
    h, lo, c = (bars[x].to_numpy() for x in ("h", "l", "c"))
    got = sm.true_range(h[1:], lo[1:], c[:-1])
    want = _talib(bars, [plta.trange(pl.col("h"), pl.col("l"), pl.col("c"))])[1:, 0]
    _same(got, want)
    assert (np.abs(lo[1:] - c[:-1]) > np.maximum(h[1:] - lo[1:], np.abs(h[1:] - c[:-1]))).any()


def test_rsi_and_atr_step_by_step_equal_ta_lib(bars: pl.DataFrame) -> None:
    h, lo, c = (bars[x].to_numpy() for x in ("h", "l", "c"))

    def rsi(state: dict[str, np.ndarray], t: np.ndarray, i: int) -> np.ndarray:
        _zeros(state, "rsi_gain", "rsi_loss")
        d = np.array([c[i] - c[i - 1] if i else 0.0])
        return sm.rsi_step(state, t, d, PERIODS)

    def atr(state: dict[str, np.ndarray], t: np.ndarray, i: int) -> np.ndarray:
        _zeros(state, "atr")
        tr = sm.true_range(h[i : i + 1], lo[i : i + 1], c[i - 1 : i] if i else c[:1])
        return sm.atr_step(state, t, tr, PERIODS)

    cols = [pl.col("h"), pl.col("l"), pl.col("c")]
    _same(
        _steps(bars, rsi), _talib(bars, [plta.rsi(pl.col("c"), timeperiod=int(p)) for p in PERIODS])
    )
    _same(_steps(bars, atr), _talib(bars, [plta.atr(*cols, timeperiod=int(p)) for p in PERIODS]))


def test_dmi_step_by_step_equals_ta_lib_flat_start_included(bars: pl.DataFrame) -> None:
    h, lo, c = (bars[x].to_numpy() for x in ("h", "l", "c"))

    def dmi(state: dict[str, np.ndarray], t: np.ndarray, i: int) -> np.ndarray:
        _zeros(state, "dm_plus", "dm_minus", "dm_tr", "adx", "adx_sum")
        j = max(i - 1, 0)
        tr = sm.true_range(h[i : i + 1], lo[i : i + 1], c[j : j + 1])
        out = sm.dmi_step(state, t, h[i : i + 1] - h[j], lo[j] - lo[i : i + 1], tr, PERIODS)
        return np.concatenate(out, axis=1)

    cols = [pl.col("h"), pl.col("l"), pl.col("c")]
    want = _talib(
        bars,
        [
            f(*cols, timeperiod=int(p))
            for f in (plta.plus_di, plta.minus_di, plta.adx)
            for p in PERIODS
        ],
    )
    got = _steps(bars, dmi)
    _same(got, want)
    assert (got[:12][~np.isnan(got[:12])] == 0.0).all()  # flat start: 0, not NaN


def test_macd_and_bbands_step_by_step_equal_ta_lib(bars: pl.DataFrame) -> None:
    c = bars["c"].to_numpy()
    params = np.array([[2, 3, 2], [3, 5, 3]])

    def macd(state: dict[str, np.ndarray], t: np.ndarray, i: int) -> np.ndarray:
        names = ("macd_fast", "macd_slow", "macd_sig", "macd_fast_sum", "macd_slow_sum")
        _zeros(state, *names, "macd_sig_sum", m=len(params))
        return np.concatenate(sm.macd_step(state, t, c[i : i + 1], params), axis=1)

    def bbands(state: dict[str, np.ndarray], t: np.ndarray, i: int) -> np.ndarray:
        _zeros(state, "bb_sum")
        r = int(PERIODS.max())
        closes = np.concatenate([np.full(r, np.nan), c[: i + 1]])[-r:][None]  # ring: NaN first
        return np.concatenate(sm.bbands_step(state, t, c[i : i + 1], closes, PERIODS), axis=1)

    m = [
        plta.macd(pl.col("c"), fastperiod=int(f), slowperiod=int(s), signalperiod=int(g))
        for f, s, g in params
    ]
    fields = ("macd", "macdsignal", "macdhist")
    _same(_steps(bars, macd), _talib(bars, [e.struct.field(x) for x in fields for e in m]))
    bb = [plta.bbands(pl.col("c"), timeperiod=int(n), nbdevup=2.0, nbdevdn=2.0) for n in PERIODS]
    want = _talib(
        bars,
        [b.struct.field("middleband") for b in bb]
        + [(b.struct.field("upperband") - b.struct.field("middleband")) / 2.0 for b in bb],
    )
    got = _steps(bars, bbands)
    _same(got, want)
    assert (got[4:12, 3:] == 0.0).all()  # a flat window's deviation is 0
