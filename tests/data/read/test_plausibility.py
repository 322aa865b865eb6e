"""Plausibility at load: nothing real is flagged; 1e30 closes, x100 bars and interleaved
instruments are refused in one line (or kept with --allow-outliers, counted); the screened,
vectorised rules equal a naive per-bar loop."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foxhunt.cli import main
from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.plausibility import (
    LIMITS,
    RULE,
    Limits,
    find_outliers,
    interleaved_levels,
    level,
)
from foxhunt.data.sources.demo import demo_bars
from foxhunt.errors import DataError

FIXTURES = Path(__file__).parents[1] / "fixtures" / "real"
PRICES = ("open", "high", "low", "close")


def _bars(n: int = 1000, seed: int = 0, symbol: str = "ES") -> pl.DataFrame:
    return demo_bars(n, seed=seed, symbol=symbol).with_columns(pl.col("volume").cast(pl.Float64))


def _times(df: pl.DataFrame, rows: int | list[int], factor: float) -> pl.DataFrame:
    """``df`` with every price of ``rows`` multiplied by ``factor``."""
    rows = [rows] if isinstance(rows, int) else rows
    hit = pl.int_range(pl.len()).is_in(rows)
    return df.with_columns(
        pl.when(hit).then(pl.col(c) * factor).otherwise(pl.col(c)).alias(c) for c in PRICES
    )


def _flagged(df: pl.DataFrame) -> list[int]:
    """Row positions ``find_outliers`` flags."""
    out = find_outliers(df.with_row_index("pos"))
    return out["pos"].to_list()


# ---- the thresholds ---------------------------------------------------------------------


def test_screen_is_below_every_rule() -> None:
    """The screen (the only full pass) can drop no candidate of any rule (Limits.screen)."""
    s = LIMITS.screen
    assert s <= LIMITS.move_floor and s <= LIMITS.gap_floor
    assert (LIMITS.level_window + 1) * s < math.log(LIMITS.level_factor)


def test_level_rounding() -> None:
    assert [level(x) for x in (4812.25, 17012.0, 1.2734, 1e30)] == ["4800", "17000", "1.3", "1e+30"]


# ---- false positives: real and demo data pass unchanged ---------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.csv.gz")))
def test_real_fixtures_pass(name: str) -> None:
    """Real 1-minute FX (flat minutes, weekend gaps) and BTC bars: nothing flagged."""
    bars = read_bars(FIXTURES / name)  # would raise on an outlier
    assert find_outliers(bars).height == 0


def test_real_index_daily_bars_pass() -> None:
    """S&P 500 and NASDAQ daily bars 1999-2018 (2000-2002, 2008 included): nothing flagged."""
    from foxhunt.data.sources.index_daily import index_daily_bars

    try:
        bars = index_daily_bars()
    except DataError as e:  # arch is a regular dependency; say so if it went missing
        pytest.skip(str(e))
    assert bars.filter(pl.col("ts").dt.year() == 2008).height > 200
    assert find_outliers(bars).height == 0


@pytest.mark.parametrize("symbol", ["ES", "NQ", "CL", "GC", "ZN", "6E"])
def test_demo_bars_pass(symbol: str) -> None:
    for seed in range(4):
        assert find_outliers(_bars(5000, seed=seed, symbol=symbol)).height == 0


@st.composite
def _valid_series(draw: st.DrawFn) -> pl.DataFrame:
    """Valid bars on a tick grid, at least 100 ticks in price: flat runs, one-tick moves,
    time gaps with price gaps of up to 3 %, bars with wicks."""
    n = draw(st.integers(1, 600))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    tick = draw(st.sampled_from([1e-5, 0.001, 0.01, 0.25, 5.0]))
    start = draw(st.integers(100, 1_000_000))
    p_flat = draw(st.floats(0.0, 1.0))
    p_gap = draw(st.floats(0.0, 0.2))
    step = rng.integers(-1, 2, n) * (rng.random(n) > p_flat)
    gap = rng.random(n) < p_gap
    size = np.maximum(1, (rng.uniform(-0.03, 0.03, n) * start).astype(np.int64))
    step = np.where(gap, size, step)
    close = np.maximum(100, start + np.cumsum(step))
    open_ = np.concatenate([[start], close[:-1]])
    high = np.maximum(open_, close) + rng.integers(0, 3, n) * (rng.random(n) < 0.5)
    low = np.maximum(1, np.minimum(open_, close) - rng.integers(0, 3, n) * (rng.random(n) < 0.5))
    minutes = np.cumsum(np.where(gap, rng.integers(2, 4000, n), 1))
    return pl.DataFrame(
        {
            "ts": pl.Series(minutes * 60_000_000).cast(pl.Datetime("us", "UTC")),
            "symbol": ["X"] * n,
            **{c: v * tick for c, v in zip(PRICES, (open_, high, low, close), strict=True)},
        }
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bars=_valid_series())
def test_valid_adversarial_bars_pass(bars: pl.DataFrame) -> None:
    assert find_outliers(bars).height == 0


def test_flat_series_with_one_tick_move_passes() -> None:
    """The median move of a flat series is 0: the floor keeps one tick (and one large but real
    move: -30 % in one bar, a crash held) plausible."""
    bars = _bars(400).with_columns(pl.lit(1.30000).alias(c) for c in PRICES)
    i = pl.int_range(pl.len())
    tick = bars.with_columns(
        pl.when(i == 200).then(1.30001).otherwise(pl.col(c)).alias(c) for c in ("high", "close")
    )
    assert find_outliers(tick).height == 0
    assert find_outliers(_times(_bars(400), list(range(200, 400)), 0.7)).height == 0


# ---- true positives ---------------------------------------------------------------------


def test_one_bad_bar_is_one_outlier_wherever_it_is() -> None:
    """The bar after a spike moves back; it is not counted. First and last bars too."""
    es = _bars(600)
    for row in (0, 1, 300, 599):
        assert _flagged(_times(es, row, 100)) == [row]
        assert _flagged(_times(es, row, 0.01)) == [row]
    assert _flagged(_times(es, 300, 2.0)) == [300]  # not x10: the move rule
    assert _flagged(_times(es, [300, 301, 302], 100)) == [300, 301, 302]


def test_rules_and_columns() -> None:
    es = _bars(600)
    i = pl.int_range(pl.len())
    wick = es.with_columns(pl.when(i == 250).then(1e30).otherwise(pl.col("high")).alias("high"))
    hit = find_outliers(wick).row(0, named=True)
    assert (hit[RULE], hit["__column"], hit["__value"]) == ("magnitude", "high", 1e30)
    move = find_outliers(_times(es, 250, 3.0)).row(0, named=True)
    assert (move[RULE], move["__column"]) == ("move", "close")
    assert move["__ref"] == es["close"][249]


def test_level_shift_is_flagged_once_where_it_starts() -> None:
    """Prices x100 from some bar on (a unit change): the one-bar move where it starts."""
    assert _flagged(_times(_bars(600), list(range(300, 600)), 100)) == [300]


def _interleaved(es: pl.DataFrame, other: pl.DataFrame, minutes: int = 1) -> pl.DataFrame:
    """One file, one symbol (``es``'s), two instruments ``minutes`` apart."""
    other = other.with_columns(
        pl.col("ts") + pl.duration(minutes=minutes), pl.lit(es["symbol"][0]).alias("symbol")
    )
    return pl.concat([es, other]).sort("ts", maintain_order=True)


def test_interleaved_levels() -> None:
    es, nq = _bars(500), _bars(500, seed=1, symbol="NQ")
    both = _interleaved(es, nq)
    lo, hi = interleaved_levels(both)  # type: ignore[misc]
    assert (level(lo), level(hi)) == ("4700", "17000")
    out = find_outliers(both)
    assert out.height == 500 and set(out[RULE]) == {"interleaved"}
    assert out["close"].min() > 10_000  # the level the first bar is not at
    # ZN and ZB, 8 % apart, are found too; 10 % of the other instrument is enough ...
    zn, zb = _bars(500, symbol="ZN"), _bars(60, seed=2, symbol="ZB")
    zb = zb.with_columns(pl.col(c) * 1.08 for c in PRICES)
    assert interleaved_levels(_interleaved(zn, zb, minutes=2)) is not None
    # ... a few spikes are spikes, and one symbol's bars are never two levels
    assert interleaved_levels(_times(es, [100, 200, 300], 100)) is None
    assert interleaved_levels(es) is None


@st.composite
def _dirty_series(draw: st.DrawFn) -> pl.DataFrame:
    """Two symbols of random-walk bars, each with a few bars or a tail multiplied."""
    parts = []
    for symbol in ("A", "B"):
        n = draw(st.integers(2, 500))
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        vol = draw(st.sampled_from([0.0, 1e-4, 2e-3, 0.03]))
        close = 100 * np.exp(np.cumsum(rng.normal(0, vol, n)))
        open_ = np.concatenate([[close[0]], close[:-1]])
        wick = np.exp(np.abs(rng.normal(0, vol, (2, n))))
        frame = pl.DataFrame(
            {
                "symbol": [symbol] * n,
                "open": open_,
                "high": np.maximum(open_, close) * wick[0],
                "low": np.minimum(open_, close) / wick[1],
                "close": close,
            }
        )
        rows = draw(st.lists(st.integers(0, n - 1), max_size=4))
        factor = draw(st.sampled_from([1e-3, 0.5, 0.6, 1.7, 3.0, 12.0, 100.0, 1e26]))
        frame = _times(frame, rows, factor)
        if draw(st.booleans()):
            frame = _times(frame, list(range(draw(st.integers(0, n - 1)), n)), factor)
        parts.append(frame)
    return pl.concat(parts)


def _naive(bars: pl.DataFrame, lim: Limits = LIMITS) -> list[int]:
    """The magnitude and move rules bar by bar, over every bar (no screen): the oracle."""
    flagged, start = [], 0
    for _, g in bars.group_by("symbol", maintain_order=True):
        o, h, low, c = (g[k].to_numpy() for k in PRICES)
        n = len(c)
        prev = np.concatenate([[o[0]], c[:-1]])
        move = np.maximum(np.log(h / prev), np.log(prev / low))
        hw, mw = lim.level_window // 2, lim.move_window // 2
        mag, jump, limit = np.zeros(n, bool), np.zeros(n, bool), np.zeros(n)
        for i in range(n):
            ref = np.median(c[max(0, i - hw) : i + hw + 1])
            mag[i] = max(np.log(h[i] / ref), np.log(ref / low[i])) >= math.log(lim.level_factor)
            limit[i] = max(
                lim.move_floor, lim.move_k * np.median(move[max(0, i - mw) : i + mw + 1])
            )
            jump[i] = move[i] > limit[i]
        for i in range(n):
            explained = i > 0 and mag[i - 1]
            if i > 0 and jump[i - 1]:
                before = prev[i - 1]  # the close before the spike (a first bar: its open)
                back = max(np.log(h[i] / before), np.log(before / low[i]))
                explained = explained or back <= limit[i]
            if mag[i] or (jump[i] and not explained):
                flagged.append(start + i)
        start += n
    return flagged


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bars=_dirty_series())
def test_screened_rules_equal_the_naive_loop(bars: pl.DataFrame) -> None:
    """The screen and the stretches around screened bars lose nothing: same bars as a loop over
    every bar (symbols found interleaved are left out: the loop has no such rule)."""
    out = find_outliers(bars.with_row_index("pos"))
    two = set(out.filter(pl.col(RULE) == "interleaved")["symbol"])
    got = out.filter(~pl.col("symbol").is_in(list(two)))["pos"].to_list()
    want = _naive(bars.filter(~pl.col("symbol").is_in(list(two))))
    if two:  # positions of the remaining symbol, back in the full frame
        offset = bars.with_row_index("pos").filter(~pl.col("symbol").is_in(list(two)))["pos"]
        want = [offset[i] for i in want]
    assert got == want


# ---- the CLI: refused in one line, or kept and counted ----------------------------------


def _text(df: pl.DataFrame) -> pl.DataFrame:
    return df.drop("symbol").with_columns(pl.col("ts").dt.strftime("%Y-%m-%dT%H:%M:%SZ"))


def _case(name: str) -> pl.DataFrame:
    es = _bars(1000)
    i = pl.int_range(pl.len())
    if name == "close 1e30":
        return es.with_columns(
            pl.when(i == 500).then(1e30).otherwise(pl.col(c)).alias(c) for c in ("high", "close")
        )
    if name == "one bar x100":
        return _times(es, 500, 100)
    nq = _bars(1000, seed=1, symbol="NQ")
    return _interleaved(es, nq, minutes=1 if name == "interleaved" else 0)


_EXPECTED = {
    # case: (row, time, message tail, exit code with --allow-outliers, bars kept)
    "close 1e30": (
        500,
        "2024-01-03 17:40:00+00:00",
        "close 1e+30 is 2.11e+26 times the median close 4731.25 of the bars around it (off by "
        "orders of magnitude); --allow-outliers keeps it",
        0,
        1,
    ),
    "one bar x100": (
        500,
        "2024-01-03 17:40:00+00:00",
        "close 473100 is 100 times the median close 4731.25 of the bars around it (off by orders "
        "of magnitude); --allow-outliers keeps it",
        0,
        1,
    ),
    "interleaved": (
        1,
        "2024-01-01 23:01:00+00:00",
        "close 16802 after 4750.25: looks like two instruments interleaved (levels ~4700 and "
        "~17000); add a symbol column or split the file",
        0,
        1000,
    ),
    "interleaved, equal times": (
        1,
        "2024-01-01 23:00:00+00:00",
        "symbol 'ES' has a second bar at this time (first: {bars} row 0) at another price level: "
        "looks like two instruments interleaved (levels ~4700 and ~17000); add a symbol column "
        "or split the file",
        2,  # two bars at one time are invalid, kept or not
        0,
    ),
}


@pytest.mark.parametrize("name", list(_EXPECTED))
def test_cli_refuses_in_one_line_and_keeps_with_allow_outliers(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    row, when, tail, allowed_rc, kept = _EXPECTED[name]
    bars, out = tmp_path / "es.csv", tmp_path / "features.parquet"
    _text(_case(name)).write_csv(bars)
    assert main(["features", "--bars", str(bars), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    column = "ts" if "equal" in name else "close"
    where = f"{bars}: column 'ts'" if "equal" in name else f"{bars}: symbol 'ES', column '{column}'"
    assert err == f"foxhunt: error: {where}, row {row} ({when}): {tail.format(bars=bars)}\n"
    assert list(tmp_path.iterdir()) == [bars]  # nothing written
    with caplog.at_level(logging.WARNING, logger="foxhunt.data.read.validate"):
        rc = main(["features", "--bars", str(bars), "--out", str(out), "--allow-outliers"])
    assert rc == allowed_rc
    kept_lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("kept")]
    if kept:
        plural = "s" if kept > 1 else ""
        first = "first: " if kept > 1 else ""
        assert len(kept_lines) == 1 and out.is_file()
        assert kept_lines[0].startswith(
            f"kept {kept} outlier bar{plural} in {bars} ({first}symbol 'ES', row {row}, {when}: "
        )
    else:
        assert not kept_lines and not out.exists()


def test_inspect_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bars = tmp_path / "es.csv"
    _text(_case("close 1e30")).write_csv(bars)
    assert main(["data", "inspect", str(bars), "--json"]) == 2
    report = json.loads(capsys.readouterr().out)
    assert not report["valid"] and "off by orders of magnitude" in report["error"]
    assert main(["data", "inspect", str(bars), "--json", "--allow-outliers"]) == 0


def test_duplicates_at_one_level_still_say_duplicate(tmp_path: Path) -> None:
    es = _bars(300)
    bars = tmp_path / "es.parquet"
    again = es.slice(100, 1).with_columns(pl.col("volume") + 1)  # not an exact repeat
    pl.concat([es, again]).write_parquet(bars)
    with pytest.raises(DataError, match="duplicate bar for symbol 'ES'"):
        read_bars(bars)


@pytest.mark.subprocess
@pytest.mark.slow
def test_allow_outliers_travels_with_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Trained with --allow-outliers: the run stores it and evaluate/predict keep the outlier
    without the flag; a run trained on clean bars needs the flag for dirty ones."""
    dirty, clean = tmp_path / "dirty.parquet", tmp_path / "clean.parquet"
    _bars(1500).write_parquet(clean)
    _times(_bars(1500), 700, 100).write_parquet(dirty)
    quick = ["--preset", "demo", "--epochs", "1", "--max-steps", "2", "--num-threads", "1"]
    quick += ["--encoder-length", "8", "--horizon", "3", "--hidden", "16", "--heads", "2"]
    run = tmp_path / "run"
    assert main(["train", *quick, "--bars", str(dirty), "--out", str(run)]) == 2
    assert main(["train", *quick, "--bars", str(dirty), "--out", str(run), "--allow-outliers"]) == 0
    assert json.loads((run / "config.json").read_text())["data"]["allow_outliers"] is True
    assert main(["evaluate", "--model", str(run), "--bars", str(dirty), "--json"]) == 0
    fc = tmp_path / "fc.parquet"
    assert main(["predict", "--model", str(run), "--bars", str(dirty), "--out", str(fc)]) == 0
    plain = tmp_path / "plain"
    assert main(["train", *quick, "--bars", str(clean), "--out", str(plain)]) == 0
    # dirty bars cover the clean training bars' period: every window is a training window
    evaluate = ["evaluate", "--model", str(plain), "--bars", str(dirty), "--json"]
    evaluate += ["--windows", "all"]
    assert main(evaluate) == 2
    assert main([*evaluate, "--allow-outliers"]) == 0
    predict = ["predict", "--model", str(plain), "--bars", str(dirty), "--out", str(fc)]
    assert main(predict) == 2
    assert main([*predict, "--allow-outliers"]) == 0
    capsys.readouterr()
