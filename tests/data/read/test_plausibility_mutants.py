"""Plausibility (data/read/plausibility.py) against an independent reference, and the edges its
first mutation run (session 21) found untested: the moves of a symbol's first bar, moves down,
tiny prices, the screen and the stretches around flagged bars, the two-level thresholds at their
exact values, the empty result's schema and the words of every message."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import polars as pl
import pytest

from foxhunt.data.read.plausibility import (
    COLUMN,
    HIGH,
    LIMIT,
    LIMITS,
    LOW,
    REF,
    RULE,
    SCALE,
    VALUE,
    describe,
    find_outliers,
    interleaved_levels,
    split_hint,
)

T0 = dt.datetime(2024, 1, 2, 14, 30)


def _frame(symbol: str, ohlc: np.ndarray) -> pl.DataFrame:
    n = len(ohlc)
    return pl.DataFrame(
        {
            "symbol": [symbol] * n,
            "ts": [T0 + dt.timedelta(minutes=i) for i in range(n)],
            "open": ohlc[:, 0],
            "high": ohlc[:, 1],
            "low": ohlc[:, 2],
            "close": ohlc[:, 3],
        }
    )


def _walk(n: int, price: float, sigma: float, seed: int) -> np.ndarray:
    """(n, 4) open/high/low/close of a log random walk: open = previous close."""
    rng = np.random.default_rng(seed)
    close = price * np.exp(np.cumsum(rng.normal(0.0, sigma, n)))
    open_ = np.concatenate([[price], close[:-1]])
    wick = np.abs(rng.normal(0.0, sigma / 2, (n, 2)))
    high = np.maximum(open_, close) * np.exp(wick[:, 0])
    low = np.minimum(open_, close) * np.exp(-wick[:, 1])
    return np.stack([open_, high, low, close], axis=1)


def _bar(o: float, h: float, low: float, c: float) -> list[float]:
    return [o, max(o, h, low, c), min(o, h, low, c), c]


def _plant(x: np.ndarray) -> np.ndarray:
    """Every pattern the rules treat differently, at fixed places of one walk."""
    x = x.copy()
    p = lambda i: float(x[i - 1, 3])  # noqa: E731 - the close before bar i
    x[0] = _bar(x[0, 0], 3 * x[0, 0], x[0, 0], x[0, 0])  # a first bar 3x above its own open
    x[40] = _bar(p(40), 3 * p(40), p(40), 3 * p(40))  # near the start: up x3, then back
    x[41] = _bar(p(40), p(40), p(40), p(40))
    x[300] = _bar(p(300), 2 * p(300), p(300), p(300))  # the high alone
    x[500] = _bar(p(500), p(500), p(500) / 2.5, p(500))  # the low alone
    x[700] = _bar(p(700), 100 * p(700), p(700), 100 * p(700))  # x100 for one bar
    x[701] = _bar(p(700), p(700), p(700), p(700))
    x[900] = _bar(p(900), p(900), p(900) / 100, p(900))  # a low 1/100 of the level
    for i in (1100, 1101, 1102):  # a plateau at 2x for three bars, then back
        x[i] = _bar(p(1100) * 2, p(1100) * 2, p(1100) * 2, p(1100) * 2)
    x[1103] = _bar(x[1102, 3], x[1102, 3], x[1099, 3], x[1099, 3])
    base = p(1300)  # down 28 % (no jump), then a bar 1.15x the close before it: a jump from
    x[1300] = _bar(base, base, 0.72 * base, 0.72 * base)  # the last close, not from the one before
    x[1301] = _bar(0.72 * base, 1.15 * base, 0.72 * base, base)
    x[1500] = _bar(p(1500), p(1500), p(1500) / 3, p(1500) / 3)  # down x3, close too
    x[1501] = _bar(p(1500), p(1500), p(1500), p(1500))
    x[1200] = _bar(p(1200), p(1200), p(1200) / 2, p(1200) / 2)  # down x2 (flagged), then
    x[1201] = _bar(x[1200, 3], 2.8 * x[1200, 3], x[1200, 3], 2.8 * x[1200, 3])  # up x2.8 ...
    x[1202] = _bar(x[1200, 3], x[1200, 3], x[1200, 3], x[1200, 3])  # ... and back to x[1200]
    x[1600] = _bar(p(1600), 3 * p(1600), p(1600), 3 * p(1600))  # up x3, then a bar back whose
    x[1601] = _bar(p(1600), p(1600), p(1600) / 3, p(1600))  # low is x3 below the close before
    x[1650] = _bar(p(1650), p(1650), p(1650) / 3, p(1650) / 3)  # down x3, then a bar back
    x[1651] = _bar(p(1650), 3 * p(1650), p(1650), p(1650))  # whose high is x3 above it
    return x


def _reference(bars: pl.DataFrame) -> list[tuple[int, str, str, float, float, float, float]]:
    """The move and magnitude rules of the module docstring, over each whole symbol in numpy."""
    out = []
    syms = bars["symbol"].to_numpy()
    o, h, lo, c = (bars[k].to_numpy() for k in ("open", "high", "low", "close"))
    for s in dict.fromkeys(syms):
        rows = np.flatnonzero(syms == s)
        oo, hh, ll, cc = o[rows], h[rows], lo[rows], c[rows]
        n = len(rows)
        prev = np.concatenate([[oo[0]], cc[:-1]])
        move = np.maximum(np.log(hh) - np.log(prev), np.log(prev) - np.log(ll))

        def rolling(v: np.ndarray, w: int) -> np.ndarray:
            k = w // 2
            return np.array([np.median(v[max(0, i - k) : i + k + 1]) for i in range(len(v))])

        lvl = rolling(cc, LIMITS.level_window)
        scale = rolling(move, LIMITS.move_window)
        up, down = np.log(hh) - np.log(lvl), np.log(lvl) - np.log(ll)
        mag = np.maximum(up, down) >= math.log(LIMITS.level_factor)
        limit = np.maximum(LIMITS.move_floor, LIMITS.move_k * scale)
        jump = move > limit
        for i in range(n):
            explained = False
            if i > 0:
                back = max(np.log(hh[i] / prev[i - 1]), np.log(prev[i - 1] / ll[i]))
                explained = bool(mag[i - 1] or (jump[i - 1] and back <= limit[i]))
            if not (mag[i] or (jump[i] and not explained)):
                continue
            ref = lvl[i] if mag[i] else prev[i]
            bound = math.log(LIMITS.level_factor) if mag[i] else limit[i]
            if abs(math.log(cc[i] / ref)) >= bound:
                col, value = "close", cc[i]
            elif (up[i] >= down[i]) if mag[i] else (hh[i] / prev[i] >= prev[i] / ll[i]):
                col, value = "high", hh[i]
            else:
                col, value = "low", ll[i]
            rule = "magnitude" if mag[i] else "move"
            out.append((int(rows[i]), rule, col, value, ref, limit[i], scale[i]))
    return out


def test_find_outliers_equals_an_independent_reference_of_the_rules() -> None:
    # CC is volatile (50 median moves > x1.5): a bar x1.8 breaks the floor, not its limit
    x = _walk(600, 30000.0, 0.02, seed=3)
    x[300] = _bar(x[299, 3], 1.8 * x[299, 3], x[299, 3], x[299, 3])
    x[450] = _bar(x[449, 3], 4.0 * x[449, 3], x[449, 3], x[449, 3])  # ... a bar x4 does
    bars = pl.concat(
        [
            _frame("AA", _plant(_walk(1700, 4800.0, 0.001, seed=1))),  # an index
            _frame("BB", _plant(_walk(1700, 0.002, 0.002, seed=2))),  # a tiny price
            _frame("CC", x),
            _frame("DD", np.array([[1.0, 30.0, 1.0, 1.0]])),  # one bar, its high 30x the rest
        ]
    )
    want = _reference(bars)
    got = find_outliers(bars)
    rows = (
        bars.with_row_index("__row")
        .join(got.select("ts", "symbol"), on=["ts", "symbol"])
        .sort("__row")
    )
    assert rows["__row"].to_list() == [w[0] for w in want]
    assert got[RULE].to_list() == [w[1] for w in want]
    assert got[COLUMN].to_list() == [w[2] for w in want]
    for name, k in ((VALUE, 3), (REF, 4), (LIMIT, 5), (SCALE, 6)):
        np.testing.assert_allclose(got[name].to_numpy(), [w[k] for w in want], rtol=1e-9)
    # the reference is not vacuous: every planted bar of both walks and CC's x4 bar
    flagged = {(w[0], w[1], w[2]) for w in want}
    for start in (0, 1700):
        for i, rule, col in (
            (0, "move", "high"),
            (40, "move", "close"),
            (300, "move", "high"),
            (500, "move", "low"),
            (700, "magnitude", "close"),
            (900, "magnitude", "low"),
            (1100, "move", "close"),
            (1103, "move", "close"),  # back from three bars away: not a one-bar spike
            (1301, "move", "high"),
            (1500, "move", "close"),
        ):
            assert (start + i, rule, col) in flagged, (start + i, rule, col)
    assert (3400 + 300, "move", "high") not in flagged
    assert (3400 + 450, "move", "high") in flagged
    assert (4000, "magnitude", "high") in flagged
    back = {start + i for start in (0, 1700) for i in (41, 701, 1501)}
    assert not back & {w[0] for w in want}  # the way back from a one-bar spike is explained


def test_an_interleaved_symbol_leaves_the_other_symbols_checked() -> None:
    levels = np.where((np.arange(200) // 10) % 4 == 0, 200.0, 100.0)  # 50 of 200 at 200
    two = _frame("AB", np.stack([levels] * 4, axis=1))
    x = _walk(400, 4800.0, 0.001, seed=5)
    x[200] = _bar(x[199, 3], 3 * x[199, 3], x[199, 3], x[199, 3])
    got = find_outliers(pl.concat([two, _frame("ZZ", x)]))
    inter = got.filter(pl.col(RULE) == "interleaved")
    assert inter.height == 50 and set(inter["close"].to_list()) == {200.0}
    assert set(inter[COLUMN].to_list()) == {"close"}
    assert inter[LOW].to_list() == [100.0] * 50 and inter[HIGH].to_list() == [200.0] * 50
    moved = got.filter(pl.col("symbol") == "ZZ")
    assert moved[RULE].to_list() == ["move"] and moved["high"][0] == 3 * x[199, 3]


def _blocks(sizes: list[int], lo: float = 100.0, hi: float = 200.0) -> pl.DataFrame:
    """One symbol's closes in blocks that alternate between ``lo`` and ``hi``, ``lo`` first."""
    closes = np.concatenate([np.full(k, lo if j % 2 == 0 else hi) for j, k in enumerate(sizes)])
    return _frame("X", np.stack([closes] * 4, axis=1))


def test_two_levels_at_exactly_the_least_share_and_crossings() -> None:
    # 10 of 100 bars at the high level (share exactly 0.1), crossing exactly 4 times
    bars = _blocks([20, 5, 20, 5, 50])
    assert interleaved_levels(bars) == (100.0, 200.0)
    got = find_outliers(bars)
    assert got[RULE].to_list() == ["interleaved"] * 10 and set(got["close"]) == {200.0}
    assert got[REF].to_list()[0] == 100.0
    assert interleaved_levels(_blocks([20, 5, 75])) is None  # crossing twice: a crash and back


def test_two_constant_levels_are_found() -> None:
    # the lowest close of the high level is the split's top: it belongs to the high level
    assert interleaved_levels(_blocks([30, 30] * 4)) == (100.0, 200.0)


def test_a_level_with_more_than_nine_tenths_of_the_bars_is_not_two_instruments() -> None:
    # 5 % at the low level: the smaller share is 0.05, whichever side it is on
    assert interleaved_levels(_blocks([2, 38, 2, 38, 1, 19])) is None
    assert interleaved_levels(_blocks([38, 2, 38, 2, 19, 1])) is None


def test_two_levels_need_a_band_wider_than_the_floor_and_the_moves() -> None:
    assert interleaved_levels(_blocks([30, 30] * 4, 100.0, 103.0)) is None  # 3 % < the 5 % floor
    # 20 % apart, but bars of one level move 1 % each: 50 such moves are wider than the band
    rng = np.random.default_rng(0)
    closes = np.concatenate(
        [(100.0 if j % 2 == 0 else 120.0) * np.exp(rng.normal(0.0, 0.01, 30)) for j in range(8)]
    )
    assert interleaved_levels(_frame("X", np.stack([closes] * 4, axis=1))) is None


def test_no_outlier_gives_an_empty_table_with_the_rule_columns_typed() -> None:
    bars = _frame("AA", _walk(300, 4800.0, 0.001, seed=7))
    got = find_outliers(bars)
    assert got.height == 0
    assert got.schema == {
        **bars.schema,
        RULE: pl.String,
        COLUMN: pl.String,
        VALUE: pl.Float64,
        REF: pl.Float64,
        LIMIT: pl.Float64,
        SCALE: pl.Float64,
        LOW: pl.Float64,
        HIGH: pl.Float64,
    }


def test_the_words_of_each_rule() -> None:
    interleaved = {RULE: "interleaved", COLUMN: "close", VALUE: 17000.0, REF: None,
                   LOW: 4800.0, HIGH: 17000.0}  # fmt: skip
    assert describe(interleaved) == (
        "close 17000: looks like two instruments interleaved (levels ~4800 and ~17000); add a "
        "symbol column or split the file"
    )
    assert describe(interleaved | {REF: 4812.25}).startswith("close 17000 after 4812.25: looks")
    assert describe({RULE: "magnitude", COLUMN: "low", VALUE: 48.0, REF: 4800.0}) == (
        "low 48 is 1/100 of the median close 4800 of the bars around it (off by orders of "
        "magnitude)"
    )
    assert describe({RULE: "magnitude", COLUMN: "high", VALUE: 48000.0, REF: 4800.0}) == (
        "high 48000 is 10 times the median close 4800 of the bars around it (off by orders of "
        "magnitude)"
    )
    assert describe({RULE: "magnitude", COLUMN: "high", VALUE: 4800.0, REF: 4800.0}).startswith(
        "high 4800 is 1 times"
    )
    move = {RULE: "move", COLUMN: "low", VALUE: 1600.0, REF: 4800.0,
            LIMIT: math.log(2.0), SCALE: math.log1p(0.095)}  # fmt: skip
    assert describe(move) == (
        "low 1600 after a close of 4800: a one-bar move down x3, beyond the limit x2 here (the "
        "larger of 50 x the median move 9.5 % and x1.5); prices not adjusted for a 3:1 split of "
        "a stock? split-adjusted prices read right"
    )
    assert describe(move | {VALUE: 1900.0}).endswith("and x1.5)")  # x2.53 down: no split

    assert describe(move | {COLUMN: "high", VALUE: 9600.0}).startswith(
        "high 9600 after a close of 4800: a one-bar move up x2, beyond"
    )
    assert "move up x1," in describe(move | {COLUMN: "close", VALUE: 4800.0})


@pytest.mark.parametrize(
    ("factor", "kind"),
    [
        (0.5, "a 2:1 split"),
        (0.46, "a 2:1 split"),
        (0.54, "a 2:1 split"),
        (2 / 3, "a 3:2 split"),
        (0.25, "a 4:1 split"),
        (0.1, "a 10:1 split"),
        (2.0, "a 1:2 reverse split"),
        (10.5, "a 1:10 reverse split"),
        (0.4, None),
        (0.44, None),
        (1.6, None),
        (3.5, None),
    ],
)
def test_a_move_by_a_splits_ratio_asks_whether_the_prices_are_adjusted(
    factor: float, kind: str | None
) -> None:
    """A stock's unadjusted 2:1 split is a one-bar move down x2: refused as an outlier, which is
    right, but the message now says what it likely is."""
    hint = split_hint(factor)
    if kind is None:
        assert hint == ""
    else:
        assert (
            hint == f"; prices not adjusted for {kind} of a stock? split-adjusted prices read right"
        )
