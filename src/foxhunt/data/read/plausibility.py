"""Plausibility: valid bars that no market prints, found per symbol at load.

Validity (:mod:`foxhunt.data.read.validate`) asks whether each row can be a bar; plausibility asks
whether a symbol's series can be a market. On bars sorted by (symbol, ts), after validity:

* **interleaved**: the closes sit at two price levels with an empty band between them that the
  series crosses again and again (ES at ~4800 and NQ at ~17000 in one file without a symbol
  column). The bars of the smaller level are the outliers.
* **magnitude**: a bar's high or low is an order of magnitude or more from the median close of
  the bars around it (a close of 1e30 in ES at 4800; a price x100 for a few bars).
* **move**: a one-bar move beyond the larger of ``move_k`` median moves of the bars around it and
  a floor. The move of a bar is ``max(ln(high / c), ln(c / low))`` with ``c`` the previous
  close (the bar's own open for a symbol's first bar); it covers the close, which lies between.

A move that only comes back from an outlier (the bar after a spike) is not an outlier itself.
Medians, not standard deviations: one bad bar cannot widen its own limit.

Fast by construction: the one-bar moves are computed for every bar (a few vectorised columns);
the rolling medians only around the rare bars whose move reaches :attr:`Limits.screen`, which
no rule can flag a symbol without (see there), and the two-level test only for symbols with at
least ``min_crossings`` such moves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import polars as pl

__all__ = ["LIMITS", "Limits", "describe", "find_outliers", "interleaved_levels", "level"]

RULE, COLUMN, VALUE, REF, LIMIT, SCALE, LOW, HIGH = (
    "__rule",
    "__column",
    "__value",
    "__ref",
    "__limit",
    "__scale",
    "__low_level",
    "__high_level",
)
"""Columns :func:`find_outliers` adds to the flagged rows."""


@dataclass(frozen=True)
class Limits:
    """The thresholds of the plausibility rules: fixed here, one place, and why.

    Measured on the data in the repository (test_plausibility.py checks none is flagged): the
    largest one-bar move is 14.6 % (NASDAQ daily, 2008), 2.6 % in 1-minute BTC, 1.3 % in
    1-minute USD/JPY; the largest move in median moves is 81 (USD/JPY: a 1.3 % minute against a
    median 0.016 %), 9 among moves above 5 % (S&P daily, 2008). So the floor, not ``move_k``,
    sets the limit of every intraday series, and ``move_k`` only widens it for volatile ones
    (daily crypto: 50 x 3 % ~ x4.5).
    """

    move_k: float = 50.0
    """A move is flagged beyond this many median moves of the bars around it (and the floor)."""
    move_floor: float = math.log(1.5)
    """No one-bar move under x1.5 (up +50 %, down -33 %) is flagged, whatever the median: flat
    series with one-tick moves have a median move of 0. Real extremes pass: 1987 S&P -20.5 %,
    SNB 2015 EUR/CHF -30 % in minutes; ES/NQ (x3.5), x10 and x100 errors do not."""
    move_window: int = 251
    """Bars around a bar (centered) whose median move is its scale: a year of daily bars, four
    hours of minutes; a volatility burst shorter than half of it does not move the median."""
    level_factor: float = 10.0
    """Magnitude: a high or low this many times above (or below) the median close around it. No
    market moves x10 within ``level_window`` bars; a decimal point or unit slip does."""
    level_window: int = 21
    """Bars around a bar (centered) whose median close is its level: a few bad bars in a row
    cannot move it; a real level shift moves it halfway through, so neither side is flagged."""
    gap_floor: float = math.log(1.05)
    """Interleaved: the band between the two levels is at least 5 % wide (ZN/ZB at 110/120
    is found, one-tick flips of FX never)..."""
    gap_k: float = 50.0
    """... and at least this many median moves between bars of the same level (a real series
    crossing an empty band that wide, again and again, has moves that wide too)."""
    min_share: float = 0.1
    """Interleaved: the smaller level holds at least this share of the bars (fewer are spikes,
    left to the magnitude and move rules)."""
    min_crossings: int = 4
    """Interleaved: the series crosses the band at least this often (a crash crosses once, a
    crash and its recovery twice)."""

    @property
    def screen(self) -> float:
        """The smallest one-bar move that can take part in a flag. With every move of a symbol
        below it: no move reaches the floor; no close-to-close move crosses a band of
        ``gap_floor``; and a high or low is within ``(level_window + 1) x screen`` (< ln
        ``level_factor``) of any close within ``level_window // 2`` bars, so of their median."""
        by_level = math.log(self.level_factor) / (self.level_window + 1)
        return min(self.move_floor, self.gap_floor, by_level)


LIMITS = Limits()


def level(x: float) -> str:
    """A price level to two significant digits: 4812.25 -> '4800', 17012 -> '17000'."""
    return f"{float(f'{x:.2g}'):g}"


def _num(x: float) -> str:
    return f"{x:.10g}"


def _indexed(bars: pl.DataFrame) -> pl.DataFrame:
    """``bars`` with ``__i`` (row index) and ``__prev`` (previous close; a symbol's first bar:
    its own open)."""
    first = (pl.col("symbol") != pl.col("symbol").shift(1)).fill_null(True)
    prev = pl.when(first).then(pl.col("open")).otherwise(pl.col("close").shift(1))
    return bars.with_row_index("__i").with_columns(prev.alias("__prev"))


def _with_moves(df: pl.DataFrame) -> pl.DataFrame:
    """``__move`` (the bar's one-bar log move) and ``__cmove`` (|close-to-close| log move)."""
    lp = pl.col("__prev").log()
    return df.with_columns(
        pl.max_horizontal(pl.col("high").log() - lp, lp - pl.col("low").log()).alias("__move"),
        (pl.col("close").log() - lp).abs().alias("__cmove"),
    )


def _two_levels(bars: pl.DataFrame, limits: Limits) -> pl.DataFrame:
    """Per symbol of ``bars`` (all its rows), the split between two interleaved levels: columns
    ``symbol``, ``__split`` (log close), LOW, HIGH (median closes); only interleaved symbols."""
    x = pl.col("close").log()
    gaps = bars.group_by("symbol").agg(
        x.sort().diff().max().alias("__gap"),
        x.sort().gather(x.sort().diff().arg_max()).first().alias("__top"),
    )
    sides = (
        bars.join(gaps.drop_nulls(), on="symbol")
        .with_columns(
            (x >= pl.col("__top")).alias("__side"),
            (pl.col("__top") - pl.col("__gap") / 2).alias("__split"),
        )
        .with_columns((x - x.shift(1).over("symbol", "__side")).abs().alias("__same"))
    )
    stats = sides.group_by("symbol").agg(
        pl.col("__gap").first(),
        pl.col("__split").first(),
        pl.col("__side").mean().alias("__share"),
        (pl.col("__side") != pl.col("__side").shift(1)).sum().alias("__crossings"),
        pl.col("__same").median(),
        pl.col("close").filter(~pl.col("__side")).median().alias(LOW),
        pl.col("close").filter(pl.col("__side")).median().alias(HIGH),
    )
    share = pl.min_horizontal(pl.col("__share"), 1 - pl.col("__share"))
    wide = pl.max_horizontal(pl.lit(limits.gap_floor), limits.gap_k * pl.col("__same").fill_null(0))
    return stats.filter(
        (share >= limits.min_share)
        & (pl.col("__crossings") >= limits.min_crossings)
        & (pl.col("__gap") >= wide)
    ).select("symbol", "__split", LOW, HIGH)


def interleaved_levels(bars: pl.DataFrame, limits: Limits = LIMITS) -> tuple[float, float] | None:
    """The two price levels (median closes, low first) of one symbol's bars when they look like
    two instruments interleaved, else None.

    Args:
        bars: one symbol's bars in time order (``symbol``, ``close``); equal times may repeat.
        limits: the thresholds (:data:`LIMITS`).
    """
    found = _two_levels(bars.select("symbol", "close"), limits)
    return (found[LOW][0], found[HIGH][0]) if found.height else None


def find_outliers(bars: pl.DataFrame, limits: Limits = LIMITS) -> pl.DataFrame:
    """The bars that break a plausibility rule (see the module docstring).

    Args:
        bars: valid bars sorted by (symbol, ts): ``symbol``, ``open high low close`` (positive),
            any other columns (provenance) are carried along.
        limits: the thresholds (:data:`LIMITS`).

    Returns:
        The flagged rows, in ``bars`` order, with every column of ``bars`` and RULE
        (``interleaved``, ``magnitude`` or ``move``), COLUMN (the price that breaks it), VALUE,
        REF (the previous close; for ``magnitude`` the median close around), LIMIT and SCALE
        (``move``: limit and median move as log moves), LOW and HIGH (``interleaved``: levels).
    """
    df = _indexed(bars)
    # Ratios, not logs, on every row: the screen is the only full pass (see Limits.screen).
    r = math.exp(limits.screen)
    screen = (pl.col("high") >= r * pl.col("__prev")) | (r * pl.col("low") <= pl.col("__prev"))
    screened = _with_moves(df.filter(screen))
    if screened.height == 0:
        return bars.clear().with_columns(_empty_extra())
    parts = []
    crossers = (
        screened.filter(pl.col("__cmove") >= limits.gap_floor)
        .group_by("symbol")
        .len()
        .filter(pl.col("len") >= limits.min_crossings)["symbol"]
    )
    two = pl.DataFrame()
    if crossers.len():
        two = _two_levels(df.filter(pl.col("symbol").is_in(crossers.implode())), limits)
    if two.height:
        parts.append(_other_level(df.join(two, on="symbol")))
        df = df.join(two.select("symbol"), on="symbol", how="anti")
        screened = screened.join(two.select("symbol"), on="symbol", how="anti")
    parts.append(_spikes(df, screened["__i"], limits))
    out = pl.concat([_finish(p, bars.columns) for p in parts], how="vertical_relaxed")
    return out.sort("__i").drop("__i")


def _other_level(df: pl.DataFrame) -> pl.DataFrame:
    """The bars of the level with fewer bars (on a tie: not the level of the first bar), of
    symbols joined with their ``__split``; REF is the previous close (null on a first bar)."""
    up = pl.col("close").log() >= pl.col("__split")
    first = pl.col("__i") == pl.col("__i").min().over("symbol")
    share = pl.col("__up").mean().over("symbol")
    first_up = pl.col("__up").first().over("symbol")
    other = pl.when(share == 0.5).then(~first_up).otherwise(share < 0.5)
    return (
        df.with_columns(up.alias("__up"), first.alias("__first"))
        .filter(pl.col("__up") == other)
        .with_columns(
            pl.lit("interleaved").alias(RULE),
            pl.lit("close").alias(COLUMN),
            pl.col("close").alias(VALUE),
            pl.when(pl.col("__first")).then(None).otherwise(pl.col("__prev")).alias(REF),
        )
    )


def _empty_extra() -> list[pl.Expr]:
    return [pl.lit(None, dtype=t).alias(c) for c, t in _EXTRA.items()]


_EXTRA = {
    RULE: pl.String,
    COLUMN: pl.String,
    VALUE: pl.Float64,
    REF: pl.Float64,
    LIMIT: pl.Float64,
    SCALE: pl.Float64,
    LOW: pl.Float64,
    HIGH: pl.Float64,
}


def _finish(part: pl.DataFrame, columns: list[str]) -> pl.DataFrame:
    missing = [pl.lit(None, dtype=t).alias(c) for c, t in _EXTRA.items() if c not in part.columns]
    return part.with_columns(missing).select(*columns, *_EXTRA, "__i").cast(_EXTRA)  # type: ignore[arg-type]


def _spikes(df: pl.DataFrame, screened: pl.Series, limits: Limits) -> pl.DataFrame:
    """Magnitude and move outliers of ``df`` (from :func:`_indexed`), computed on the stretches
    within reach of a ``screened`` row (row indices ``__i``): nothing else can be flagged."""
    if screened.len() == 0:
        return df.clear()
    reach = limits.move_window // 2 + limits.level_window // 2 + 2
    # Rows within ``reach`` of a screened row: +1 where a reach starts, -1 after it ends.
    n = int(df["__i"].max()) + 1  # type: ignore[arg-type]
    at = screened.to_numpy().astype(np.int64)
    edges = np.zeros(n + 1, dtype=np.int64)
    np.add.at(edges, np.clip(at - reach, 0, n), 1)
    np.add.at(edges, np.clip(at + reach + 1, 0, n), -1)
    near = pl.Series(np.cumsum(edges[:-1]) > 0)
    part = _with_moves(df.filter(near.gather(df["__i"])))
    new_stretch = (pl.col("__i") != pl.col("__i").shift(1) + 1) | (
        pl.col("symbol") != pl.col("symbol").shift(1)
    )
    part = part.with_columns(new_stretch.fill_null(True).cum_sum().alias("__stretch"))
    by = "__stretch"
    ref = pl.col("close").rolling_median(limits.level_window, center=True, min_samples=1)
    scale = pl.col("__move").rolling_median(limits.move_window, center=True, min_samples=1)
    part = part.with_columns(ref.over(by).alias("__level"), scale.over(by).alias(SCALE))
    lr, lh, ll = pl.col("__level").log(), pl.col("high").log(), pl.col("low").log()
    up, down = lh - lr, lr - ll
    mag = pl.max_horizontal(up, down) >= math.log(limits.level_factor)
    limit = pl.max_horizontal(pl.lit(limits.move_floor), limits.move_k * pl.col(SCALE))
    part = part.with_columns(mag.alias("__mag"), limit.alias(LIMIT))
    jump = pl.col("__move") > pl.col(LIMIT)
    prev2 = pl.col("__prev").shift(1).over(by)
    back = pl.max_horizontal(lh - prev2.log(), prev2.log() - ll)  # vs the close before the spike
    explained = pl.col("__mag").shift(1).over(by).fill_null(False) | (
        jump.shift(1).over(by).fill_null(False) & (back.fill_null(0.0) <= pl.col(LIMIT))
    )
    part = part.with_columns(jump.alias("__jump"), explained.alias("__explained"))
    flagged = part.filter(pl.col("__mag") | (pl.col("__jump") & ~pl.col("__explained")))
    c, lc = pl.col("close"), pl.col("close").log()
    ref_log = pl.when(pl.col("__mag")).then(lr).otherwise(pl.col("__prev").log())
    close_off = (lc - ref_log).abs() >= pl.when(pl.col("__mag")).then(
        math.log(limits.level_factor)
    ).otherwise(pl.col(LIMIT))
    upper = (
        pl.when(pl.col("__mag"))
        .then(up >= down)
        .otherwise(lh - pl.col("__prev").log() >= (pl.col("__prev").log() - ll))
    )
    column = (
        pl.when(close_off)
        .then(pl.lit("close"))
        .when(upper)
        .then(pl.lit("high"))
        .otherwise(pl.lit("low"))
    )
    return flagged.with_columns(
        pl.when(pl.col("__mag")).then(pl.lit("magnitude")).otherwise(pl.lit("move")).alias(RULE),
        column.alias(COLUMN),
    ).with_columns(
        pl.when(pl.col(COLUMN) == "close")
        .then(c)
        .when(pl.col(COLUMN) == "high")
        .then(pl.col("high"))
        .otherwise(pl.col("low"))
        .alias(VALUE),
        pl.when(pl.col("__mag")).then(pl.col("__level")).otherwise(pl.col("__prev")).alias(REF),
    )


def describe(hit: dict[str, object], limits: Limits = LIMITS) -> str:
    """What is wrong with one row of :func:`find_outliers`, in words (no file, row or time)."""
    rule, col = hit[RULE], hit[COLUMN]
    value, ref = float(hit[VALUE]), hit[REF]  # type: ignore[arg-type]
    if rule == "interleaved":
        after = "" if ref is None else f" after {_num(float(ref))}"  # type: ignore[arg-type]
        return f"close {_num(value)}{after}: {interleaved_advice(hit[LOW], hit[HIGH])}"  # type: ignore[arg-type]
    ref = float(ref)  # type: ignore[arg-type]
    if rule == "magnitude":
        ratio = value / ref
        times = f"{ratio:.3g} times" if ratio >= 1 else f"1/{1 / ratio:.3g} of"
        return (
            f"{col} {_num(value)} is {times} the median close {_num(ref)} of the bars around it "
            "(off by orders of magnitude)"
        )
    factor = value / ref
    way = f"up x{factor:.3g}" if factor >= 1 else f"down x{1 / factor:.3g}"
    return (
        f"{col} {_num(value)} after a close of {_num(ref)}: a one-bar move {way}, beyond the "
        f"limit x{math.exp(float(hit[LIMIT])):.3g} here (the larger of {limits.move_k:g} x the "  # type: ignore[arg-type]
        f"median move {100 * math.expm1(float(hit[SCALE])):.2g} % and "  # type: ignore[arg-type]
        f"x{math.exp(limits.move_floor):.3g}){split_hint(factor)}"
    )


SPLITS = ((3, 2), (2, 1), (3, 1), (4, 1), (5, 1), (8, 1), (10, 1), (20, 1))
"""Stock splits common enough to name: a stock's prices not adjusted for one jump by its ratio."""


def split_hint(factor: float, tolerance: float = 0.1) -> str:
    """``"; a 2:1 stock split ..."`` when a one-bar move of ``factor`` is within ``tolerance``
    (a day's move) of a split's ratio, or of a reverse split's; else ``""``."""
    for a, b in SPLITS:
        for ratio, kind in ((b / a, f"{a}:{b} split"), (a / b, f"1:{a} reverse split")):
            if b != 1 and kind.startswith("1:"):  # a 2:3 reverse split is no common kind
                continue
            if abs(factor / ratio - 1) < tolerance:
                return (
                    f"; prices not adjusted for a {kind} of a stock? split-adjusted prices read "
                    "right"
                )
    return ""


def interleaved_advice(low: float, high: float) -> str:
    """The words for two interleaved price levels."""
    return (
        f"looks like two instruments interleaved (levels ~{level(low)} and ~{level(high)}); "
        "add a symbol column or split the file"
    )
