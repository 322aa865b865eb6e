"""``infer/stream_checks.py``: a live update's bars against the bars held before them."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import numpy as np
import polars as pl
import pytest

from demo_run import DemoRun
from foxhunt.data.sources.demo import demo_bars
from foxhunt.errors import DataError
from foxhunt.infer.forecaster import Forecaster
from foxhunt.infer.stream_checks import check_new_bars

MIN = 60_000_000  # µs
T0 = 1_704_205_800_000_000  # 2024-01-02T14:30:00Z


def _bars(closes: list[float], spread: float = 0.5) -> np.ndarray:
    c = np.array(closes, np.float64)
    return np.column_stack([c, c + spread, c - spread, c, np.full(len(c), 10.0)])


def _check(
    ts: list[int],
    closes: list[float],
    *,
    last_ts: int | None = None,
    last_close: float | None = None,
    held: Counter[int] | None = None,
    trained: int | None = 5 * MIN,
    rows: list[int] | None = None,
    spread: float = 0.5,
) -> None:
    check_new_bars(
        "ES",
        np.array(rows if rows is not None else range(len(ts))),
        np.array(ts, np.int64),
        _bars(closes, spread),
        last_ts=last_ts,
        last_close=last_close,
        held_gaps=held if held is not None else Counter(),
        trained_us=trained,
        model="runs/es",
    )


def test_a_bar_closer_than_half_the_interval_is_refused_naming_its_row() -> None:
    with pytest.raises(DataError) as refused:
        _check([T0 + MIN], [100.0], last_ts=T0, last_close=100.0, rows=[7])
    assert str(refused.value) == (
        "Forecaster.update: row 7, symbol 'ES', ts 2024-01-02T14:31:00+00:00: 1 minute after "
        "the bar before it; runs/es was trained on 5-minute bars: send bars of that interval"
    )
    with pytest.raises(DataError, match=r"row 1, symbol 'ES', ts 2024-01-02T14:37:00\+00:00: 2 "):
        _check([T0 + 5 * MIN, T0 + 7 * MIN], [100.0, 100.0])  # within the update, none held


def test_half_the_interval_and_longer_gaps_pass() -> None:
    """A stock's hourly bars: 09:30, 10:00, 11:00; a pause of hours; no interval: not judged."""
    _check([T0 + 30 * MIN, T0 + 90 * MIN, T0 + 900 * MIN], [1.0] * 3, last_ts=T0, trained=60 * MIN)
    _check([T0 + MIN, T0 + 2 * MIN], [1.0, 1.0], last_ts=T0, trained=None)


def test_twenty_gaps_mostly_of_another_interval_are_refused() -> None:
    held = Counter({15 * MIN: 19})
    with pytest.raises(DataError) as refused:
        _check([T0 + 15 * MIN], [100.0], last_ts=T0, last_close=100.0, held=held)
    assert str(refused.value) == (
        "runs/es was trained on 5-minute bars; the bars given for 'ES' are mostly 15 minutes "
        "apart (20 of their 20 gaps, 0 of 5-minute): send 5-minute bars, or forecast them with "
        "a model trained on such bars"
    )
    _check([T0 + 15 * MIN], [100.0], last_ts=T0, held=Counter({15 * MIN: 18}))  # 19: not judged


def test_one_gap_in_ten_at_the_interval_is_enough() -> None:
    """Illiquid bars of the trained interval skip bars: 2 of 20 gaps at 5 minutes pass, 1 not."""
    held = Counter({15 * MIN: 17, 5 * MIN: 2})
    _check([T0 + 15 * MIN], [1.0], last_ts=T0, held=held)
    held = Counter({15 * MIN: 18, 5 * MIN: 1})
    with pytest.raises(DataError, match=r"\(18 of their 20 gaps, 1 of 5-minute\)"):
        _check([T0 + 20 * MIN], [1.0], last_ts=T0, held=held)
    with pytest.raises(DataError, match=r"mostly 15 minutes apart \(19 of their 20 gaps, 1 of"):
        _check([T0 + 15 * MIN], [1.0], last_ts=T0, held=held)


def test_a_most_common_gap_at_the_interval_passes_below_the_share() -> None:
    """All gaps different (a gappy feed) but the trained one the most common of them: taken."""
    held = Counter({5 * MIN: 1} | {(6 + k) * MIN: 1 for k in range(20)})
    _check([T0 + 5 * MIN], [1.0], last_ts=T0, held=held)


def test_a_tenfold_level_against_the_close_before_is_refused() -> None:
    with pytest.raises(DataError) as refused:
        _check([T0 + 5 * MIN], [1000.0], last_ts=T0, last_close=100.0, rows=[3], spread=0.0)
    assert str(refused.value) == (
        "Forecaster.update: row 3, symbol 'ES', ts 2024-01-02T14:35:00+00:00: high 1000 is 10 "
        "times or more above the close before it, 100 (off by orders of magnitude: a bad tick, a "
        "decimal slip or another unit)"
    )
    with pytest.raises(DataError, match=r"row 0, .*: low 10 is 10 times or more below .* 100 "):
        _check([T0 + 5 * MIN], [10.0], last_ts=T0, last_close=100.0, spread=0.0)
    _check([T0 + 5 * MIN], [999.99], last_ts=T0, last_close=100.0, spread=0.0)
    _check([T0 + 5 * MIN], [10.0001], last_ts=T0, last_close=100.0, spread=0.0)


def test_within_an_update_each_bar_is_judged_by_the_one_before() -> None:
    _check([T0, T0 + 5 * MIN], [4800.0, 4810.0])  # a symbol's first bars: the first not judged
    with pytest.raises(DataError, match=r"row 2, .*: high 48100 is 10 times or more above"):
        _check([T0, T0 + 5 * MIN, T0 + 10 * MIN], [4800.0, 4810.0, 48100.0], spread=0.0)


@pytest.mark.parametrize("incremental", [True, False])
def test_the_forecaster_refuses_a_bad_tick_and_keeps_what_it_held(
    demo_run: DemoRun, incremental: bool
) -> None:
    """A x10 bar after held bars is refused, nothing changes, and the clean bar after it is
    forecast exactly as by a forecaster that never saw it."""
    bars = demo_bars(260, seed=3)
    fc = Forecaster.load(demo_run.run, incremental=incremental)
    clean = Forecaster.load(demo_run.run, incremental=incremental)
    for f in (fc, clean):
        f.update(bars.head(250), forecast=False)
    bad = bars.slice(250, 1).with_columns(pl.col("open", "high", "low", "close") * 10)
    with pytest.raises(DataError, match=r"is 10 times or more above the close before it"):
        fc.update(bad)
    assert fc.held_bars("ES") == 250
    out = fc.update(bars.slice(250, 10))
    assert out.height > 0 and out.equals(clean.update(bars.slice(250, 10)))


def test_the_forecaster_refuses_one_minute_bars_sent_one_at_a_time(demo_run: DemoRun) -> None:
    """The first bars of a symbol one per update: each alone has no gap; the second is refused."""
    bars = demo_bars(3, seed=3)
    fc = Forecaster.load(demo_run.run)
    fc.update(bars.head(1), forecast=False)
    nxt = bars.slice(1, 1).with_columns(ts=bars["ts"][0] + timedelta(minutes=1))
    with pytest.raises(DataError, match=r"1 minute after the bar before it"):
        fc.update(nxt)
    assert fc.held_bars("ES") == 1


@pytest.mark.parametrize("incremental", [True, False])
def test_the_forecaster_refuses_a_feed_of_another_interval_after_its_backlog(
    demo_run: DemoRun, incremental: bool
) -> None:
    """400 bars of 5 minutes held, then bars 15 minutes apart one per update: the held
    window's last gaps (up to 20; this run's incremental window holds 17 bars) refuse the bar
    that makes them all 15 minutes (the all-time counts would take about 3,600 bars)."""
    bars = demo_bars(400, seed=3)
    fc = Forecaster.load(demo_run.run, incremental=incremental)
    fc.update(bars, forecast=False)
    last, row = bars["ts"][-1], bars.tail(1)
    refused = None
    for k in range(1, 21):
        try:
            fc.update(row.with_columns(ts=last + timedelta(minutes=15 * k)), forecast=False)
        except DataError as e:
            refused = (k, str(e))
            break
    assert refused is not None
    k, message = refused
    assert f"the last {k} gaps of 'ES' hold none of 5-minute and {k} of 15 minutes" in message
    assert k >= 10 and fc.held_bars("ES") == 400 + k - 1


def test_new_gaps_at_the_interval_count_with_the_held_ones() -> None:
    """18 held gaps of 15 minutes and 2 new ones of 5: one in ten at the interval, taken."""
    _check([T0 + 5 * MIN, T0 + 10 * MIN], [1.0, 1.0], last_ts=T0, held=Counter({15 * MIN: 18}))


def test_a_tie_of_the_most_common_gaps_names_the_shorter() -> None:
    held = Counter({15 * MIN: 10, 10 * MIN: 9})
    with pytest.raises(DataError, match=r"mostly 10 minutes apart \(10 of their 20 gaps"):
        _check([T0 + 10 * MIN], [1.0], last_ts=T0, held=held)


def _bar(o: float, h: float, lo: float, c: float) -> list[float]:
    return [o, h, lo, c, 10.0]


def _check_values(rows: list[list[float]], last_close: float | None = 100.0) -> None:
    check_new_bars(
        "ES",
        np.arange(len(rows)),
        np.array([T0 + 5 * MIN * (k + 1) for k in range(len(rows))], np.int64),
        np.array(rows, np.float64),
        last_ts=T0 if last_close is not None else None,
        last_close=last_close,
        held_gaps=Counter(),
        trained_us=5 * MIN,
        model="runs/es",
    )


def test_each_bar_is_judged_by_the_close_before_it_not_its_volume_or_the_first() -> None:
    _check_values([_bar(100, 101, 99, 100), _bar(100, 102, 99, 101)])  # volume 10: no level
    with pytest.raises(DataError, match=r"row 1, .*: high 1001 is 10 times or more above the "):
        _check_values(
            [_bar(100, 101, 99, 100), _bar(1000, 1001, 999, 1000), _bar(100, 101, 99, 100)]
        )


def test_a_low_tenfold_under_the_close_before_is_named_with_its_own_price() -> None:
    """A wick down to 9 from 100 with the close back at 100: the low is judged, and named."""
    with pytest.raises(DataError) as refused:
        _check_values([_bar(100, 101, 9, 100)])
    assert str(refused.value).endswith(
        ": low 9 is 10 times or more below the close before it, 100 (off by orders of "
        "magnitude: a bad tick, a decimal slip or another unit)"
    )
    with pytest.raises(DataError, match=r": high 1002 is 10 times or more above the close"):
        _check_values([_bar(1000, 1002, 998, 1001)])


def test_gaps_under_a_second_are_named_not_a_crash() -> None:
    """A bar 50 µs after the one before: describe_interval's "5e-05-second" broke the prose."""
    with pytest.raises(DataError, match=r": 5e-05 seconds after the bar before it; "):
        _check([T0 + 50], [1.0], last_ts=T0)


def test_a_price_targets_level_is_its_own_column() -> None:
    """``--target high``: the held reference is the previous high, and so is each bar's in the
    update (the close was used there), named as the high."""
    rows = [_bar(100, 101, 99, 100), _bar(100, 1011, 99, 100)]
    with pytest.raises(
        DataError,
        match=r"row 1, .*: high 1011 is 10 times or more above the "
        r"high before it, 101 ",
    ):
        check_new_bars(
            "ES",
            np.arange(2),
            np.array([T0 + 5 * MIN, T0 + 10 * MIN], np.int64),
            np.array(rows, np.float64),
            last_ts=T0,
            last_close=101.0,
            held_gaps=Counter(),
            trained_us=5 * MIN,
            model="runs/es",
            level=1,
        )


def test_an_update_of_many_bars_of_another_interval_after_a_long_backlog_is_refused() -> None:
    """10,000 held gaps at 5 minutes outweighed 30 new bars 35 minutes apart (the held share
    stayed above one in ten) until session 54: an update of more than 20 bars is judged alone."""
    held = Counter({5 * MIN: 10_000})
    ts = [T0 + 35 * MIN * (k + 1) for k in range(30)]
    with pytest.raises(DataError) as refused:
        _check(ts, [1.0] * 30, last_ts=T0, held=held)
    assert str(refused.value).startswith(
        "runs/es was trained on 5-minute bars; the bars given for 'ES' are mostly 35 minutes "
        "apart (29 of their 29 gaps, 0 of 5-minute)"
    )
    _check(ts[:20], [1.0] * 20, last_ts=T0, held=held)  # 19 gaps of their own: too few
    _check([T0 + 5 * MIN * (k + 1) for k in range(30)], [1.0] * 30, last_ts=T0, held=held)


def _recent(recent: list[int], ts: list[int], trained: int = 5 * MIN) -> None:
    check_new_bars(
        "ES",
        np.arange(len(ts)),
        np.array(ts, np.int64),
        _bars([100.0] * len(ts)),
        last_ts=recent[-1],
        last_close=100.0,
        held_gaps=Counter({5 * MIN: 10_000}),  # a long backlog at the trained interval
        trained_us=trained,
        model="runs/es",
        recent_ts=np.array(recent, np.int64),
    )


def test_bars_of_another_interval_sent_one_at_a_time_after_a_backlog_are_refused() -> None:
    """The all-time counts hold 10,000 gaps of 5 minutes: 15-minute bars one at a time were
    taken until thousands had come. The held window's last gaps tell at the tenth."""
    held = [T0 + 5 * MIN * i for i in range(40)]
    fifteen = [held[-1] + 15 * MIN * (i + 1) for i in range(10)]
    for k in range(9):  # nine 15-minute gaps after the 5-minute ones: some at 5 minutes
        _recent(held + fifteen[:k], [fifteen[k]])
    window = held[-10:] + fifteen[:9]  # the last 10 gaps: nine 15-minute, one 5-minute
    _recent(window, [fifteen[9]])
    with pytest.raises(DataError) as refused:
        _recent(fifteen[:10], [fifteen[9] + 15 * MIN])
    assert str(refused.value) == (
        "runs/es was trained on 5-minute bars; the last 10 gaps of 'ES' hold none of 5-minute "
        "and 10 of 15 minutes: send 5-minute bars, or forecast them with a model trained on "
        "such bars"
    )


def test_a_quiet_markets_varied_gaps_and_a_short_window_pass() -> None:
    """Gaps of 10, 15 and 20 minutes (a quiet symbol), none at 5: not one other interval."""
    t, quiet = T0, []
    for gap in [10, 15, 20, 10, 10, 15, 10, 20, 10, 15, 10]:
        t += gap * MIN
        quiet.append(t)
    _recent(quiet[:-1], [quiet[-1]])
    nine = [T0 + 15 * MIN * i for i in range(9)]  # 9 gaps with the new bar: too few to judge
    _recent(nine[:-1], [nine[-1]])
    # the most common gap is named, the longer one here (9 of 15 minutes beside 1 of 10)
    ten = [T0, T0 + 10 * MIN] + [T0 + 10 * MIN + 15 * MIN * (i + 1) for i in range(8)]
    with pytest.raises(DataError, match="hold none of 5-minute and 9 of 15 minutes"):
        _recent(ten, [ten[-1] + 15 * MIN])
    # one gap in ten of another length keeps the share at 90 %: refused
    with pytest.raises(DataError, match="the last 10 gaps of 'ES' hold none of 5-minute and 9 "):
        _recent([*nine, nine[-1] + 60 * MIN], [nine[-1] + 75 * MIN])
