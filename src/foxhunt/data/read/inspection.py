"""``foxhunt data inspect``: what is in a bars file, and is it valid?

Per symbol: bar count, first and last bar, bar interval, trading sessions, session breaks
(daily halt, weekends), gaps inside sessions (missing bars) and bars at times Globex is
normally closed; then the validation verdict (the first error ``read_bars`` would raise).

When many bars fall in closed hours, the timestamps may be local times read as UTC: for a file
with naive timestamps, the zone (of a short list) that puts the fewest bars in closed hours is
named, with the option that applies it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from foxhunt.config import PRESETS
from foxhunt.data.features.observed import WARMUP
from foxhunt.data.market.bars_market import fitted_calendars, with_calendars
from foxhunt.data.market.calendar import (
    bars_interval,
    closed_day,
    closed_time,
    infer_interval,
    trading_date,
)
from foxhunt.data.market.calendars import calendar_spec, sessions
from foxhunt.data.market.instrument import Instrument
from foxhunt.data.market.instrument_table import load_instruments
from foxhunt.data.market.instruments import (
    FITTED_NOTE,
    calendar_of,
    lookup,
    on_calendar,
    resolve,
)
from foxhunt.data.market.intervals import describe_interval, symbols_off_interval
from foxhunt.data.read import plausibility
from foxhunt.data.read.bars import LoadedBars, load_bars, validate_bars
from foxhunt.data.read.checks import without_empty_rows, without_settlements
from foxhunt.data.read.clock_zones import CITY_ZONES
from foxhunt.data.read.fillers import without_fillers
from foxhunt.data.read.options import ReadOptions
from foxhunt.data.read.resample import aggregate_bars
from foxhunt.data.read.time_axis import (
    CLOSED_SHARE_WARN,
    DAILY,
    ODD_TIMES_FLAG,
    WEEKLY,
    TimeAxisFindings,
    examine,
    interval_text,
)
from foxhunt.data.read.validate import FILE_COLUMN
from foxhunt.data.read.vendors import guess_lines
from foxhunt.data.read.zones import local_to_utc, utc_to_local
from foxhunt.data.windows.needs import training_bars_needed
from foxhunt.errors import DataError

log = logging.getLogger(__name__)

TRAINING_MIN_BARS = {name: training_bars_needed(make()) for name, make in PRESETS.items()}
"""Bars a symbol needs to train with each preset's defaults (``--encoder-length``,
``--horizon`` and the split fractions change it): what ``train`` refuses below."""

ClosedFn = Callable[[pl.Expr], pl.Expr]
"""A calendar's test: UTC timestamp expression -> True where the market is closed."""

DEFAULT_HORIZON = 10
"""Horizon assumed when saying whether a file is long enough for ``foxhunt features``."""


def fitting_zones(
    ts: pl.Series, read_in: str, closed: ClosedFn = closed_time, market: str | None = None
) -> tuple[list[str], int]:
    """Every zone in which these wall-clock times put the fewest bars in closed hours, and that
    count: ``read_in`` first where it is one of them, then the market's own zone, then
    :data:`CITY_ZONES` in order.

    Args:
        ts: UTC timestamps that were read from naive wall-clock times in ``read_in``.
        read_in: the zone they were read in.
        closed: the calendar's closed-hours test (Globex by default).
        market: the calendar's own zone (Hong Kong's was not tried until session 54: the
            warning named Tokyo, an hour off, where the refusal named Hong Kong).
    """
    wall = pl.DataFrame({"t": ts}).select(utc_to_local(pl.col("t"), read_in).alias("w"))
    zones = tuple(dict.fromkeys((read_in, *([market] if market else []), *CITY_ZONES)))
    counts = wall.select([closed(local_to_utc(pl.col("w"), z)).sum().alias(z) for z in zones]).row(
        0, named=True
    )
    fewest = min(counts.values())
    return [z for z in zones if counts[z] == fewest], int(fewest)


def closed_hours_warning(
    s: dict[str, Any],
    naive: bool,
    tz: str,
    closed: ClosedFn,
    ts: pl.Series,
    daily: bool = False,
    market: str | None = None,
) -> str | None:
    """The warning for one symbol's summary when many of its bars fall in closed hours (daily
    bars: on days the calendar does not trade)."""
    share = s["closed_time_bars"] / max(s["bars"], 1)
    if share <= CLOSED_SHARE_WARN:
        return None
    text = f"{s['closed_time_bars']:,} of {s['bars']:,} bars ({share:.0%}) fall in closed hours"
    if daily:
        return (
            f"{s['closed_time_bars']:,} of {s['bars']:,} daily bars ({share:.0%}) fall on days "
            "the calendar does not trade (a market with other days, or dates shifted by a zone)"
        )
    if not naive:
        return text + " (a market with other hours, or timestamps in the wrong zone)"
    zones, n = fitting_zones(ts, tz, closed, market)
    # A zone is named only when it clearly fits: a 24/7 market is closed-heavy in every zone.
    if zones[0] == tz or n > 0.5 * s["closed_time_bars"]:
        tried = dict.fromkeys((*([market] if market else []), *CITY_ZONES))
        return text + f"; no other zone fits its calendar's hours better (tried {', '.join(tried)})"
    if len(zones) > 1:  # New York and Chicago over one session: the market's own zone
        named = " or ".join(f"--tz {z}" for z in zones)
        return (
            text + f"; the timestamps fit {' and '.join(zones)} alike ({n:,} closed; the bars "
            f"cannot tell them apart): pass the market's zone, {named}"
        )
    return text + f"; the timestamps fit {zones[0]} ({n:,} closed): pass --tz {zones[0]}"


def summarize(
    loaded: LoadedBars,
    closed: ClosedFn | None = None,
    instruments: Mapping[str, Instrument] | None = None,
) -> list[dict[str, Any]]:
    """One dict per symbol describing its bars (rows with a null timestamp are ignored).

    Args:
        loaded: bars from :func:`foxhunt.data.read.bars.load_bars`.
        closed: a closed-hours test for every symbol; None: each symbol's own calendar (its
            instrument's: the user's table, the built-in one, or inferred from the symbol).
        instruments: the user's instrument table, looked up first.

    Returns:
        Dicts with keys symbol, bars, first, last, interval, sessions, session_breaks,
        intra_session_gaps, largest_gap, missing_bars, missing_days (the calendar's trading
        days without a bar, between the first and the last), first_missing_day and
        longest_missing_run (``days``, ``first``, ``last`` of the longest run of them, or None),
        closed_time_bars (daily bars: on days
        the calendar does not trade), daily, closed_hours_warning
        (None, or a line naming the zone that would fit when the timestamps were naive),
        calendar.
    """
    naive_files = [i for i, n in enumerate(loaded.naive) if n]
    naive_symbols = set(
        loaded.frame.filter(pl.col(FILE_COLUMN).is_in(naive_files))["symbol"].unique().to_list()
    )
    first_file = dict(loaded.frame.group_by("symbol").agg(pl.col(FILE_COLUMN).min()).iter_rows())
    df = (
        loaded.frame.select("ts", "symbol")
        .drop_nulls()
        .unique(maintain_order=True)
        .sort(["symbol", "ts"])
    )
    out = []
    for (sym,), g in df.group_by("symbol", maintain_order=True):
        cal = calendar_of(str(sym), instruments)
        g = g.with_columns(trading_date(pl.col("ts"), cal).alias("session"))
        ts = g["ts"]
        interval = infer_interval(ts) if g.height > 1 else None
        daily = interval is not None and interval >= DAILY
        sym_closed = closed or partial(closed_day if daily else closed_time, calendar=cal)
        gaps = g.select(
            pl.col("ts").diff().alias("gap"),
            (pl.col("session") != pl.col("session").shift(1)).alias("new_session"),
            pl.col("ts").shift(1).alias("before"),
        ).slice(1)
        within = gaps.filter(~pl.col("new_session"))
        if interval is not None:
            within = within.filter(pl.col("gap") > interval)
            if not daily:  # a gap whose next slot the calendar closes is its break, not a
                # hole (Tokyo's lunch was a gap a day until session 54)
                step_us = interval // timedelta(microseconds=1)
                slot = pl.col("before") + pl.duration(microseconds=step_us)
                within = within.filter(~sym_closed(slot))
        else:
            within = within.clear()
        missing = 0
        if interval is not None and within.height:
            step = interval // timedelta(microseconds=1)
            per_gap = within["gap"].dt.total_microseconds() // step - 1
            missing = int(per_gap.sum())
        weekly = interval is not None and interval >= WEEKLY  # stamped by convention: not judged
        n_closed = 0 if weekly else g.select(sym_closed(pl.col("ts")).sum()).item()
        largest = within["gap"].max() if within.height else None
        missing_days, hole = ([], None) if weekly else _missing_days(g["session"], cal)
        summary: dict[str, Any] = {
            "symbol": sym,
            "bars": g.height,
            "first": ts[0].isoformat(),
            "last": ts[-1].isoformat(),
            "interval": interval_text(interval) if interval else None,
            "sessions": g["session"].n_unique(),
            "session_breaks": int(gaps["new_session"].sum()),
            "intra_session_gaps": within.height,
            "largest_gap": interval_text(largest) if largest is not None else None,
            "missing_bars": missing,
            "missing_days": len(missing_days),
            "first_missing_day": missing_days[0] if missing_days else None,
            "longest_missing_run": hole,
            "closed_time_bars": int(n_closed),
            "daily": daily,
            "calendar": cal,
        }
        read_in = loaded.zone_of(int(first_file.get(sym, 0)))
        naive = sym in naive_symbols
        market = calendar_spec(cal).tz  # 24x7's is UTC, tried anyway
        warning = closed_hours_warning(summary, naive, read_in, sym_closed, g["ts"], daily, market)
        if warning:
            log.warning("%s: %s", sym, warning)
        summary["closed_hours_warning"] = warning
        out.append(summary)
    return out


LONG_HOLE_DAYS = 5
"""Trading days in a row without a bar that ``inspect`` warns of: a week a vendor lost (the
holidays and closures are the calendar's, not counted); windows across such a hole see one
move for the whole stretch."""


def _missing_days(session: pl.Series, calendar: str) -> tuple[list[str], dict[str, Any] | None]:
    """The calendar's trading days between the first and the last bar's with no bar (a day
    a vendor lost: a gap between sessions counts no missing bar), and the longest run of them
    in a row (``days``, ``first``, ``last``; None without one); days outside the calendar's span are
    not judged."""
    days = session.cast(pl.Int32).unique().sort()
    if days.len() < 2:
        return [], None
    traded = np.unique(sessions(calendar).day)
    inside = traded[(traded > days[0]) & (traded < days[-1])]
    gone = ~np.isin(inside, days.to_numpy())
    text = [str(np.datetime64(int(d), "D")) for d in inside[gone]]
    if not text:
        return text, None
    edges = np.diff(np.concatenate(([0], gone.astype(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    k = int(np.argmax(ends - starts))  # the first of the longest
    run = inside[starts[k] : ends[k]]
    first, last = (str(np.datetime64(int(d), "D")) for d in (run[0], run[-1]))
    return text, {"days": int(run.size), "first": first, "last": last}


def _long_hole(summary: dict[str, Any]) -> bool:
    run = summary.get("longest_missing_run")
    return run is not None and run["days"] >= LONG_HOLE_DAYS


def hole_warning(summary: dict[str, Any]) -> str:
    """The line for a symbol's longest run of trading days without bars."""
    run = summary["longest_missing_run"]
    return (
        f"{summary['symbol']}: no bars on {run['days']} trading days in a row, {run['first']} "
        f"to {run['last']} (calendar {summary['calendar']}): a stretch the file lacks; a "
        "window across it sees the whole stretch's move as one bar's"
    )


def instrument_guesses(
    symbols: list[dict[str, Any]],
    table: Mapping[str, Instrument] | None,
    fitted: Mapping[str, str] | None = None,
) -> list[str]:
    """One line per kind of instrument guessed from symbol names (not in the user's or the
    built-in table), naming the symbols and ``--instruments FILE``; a calendar chosen from the
    bars (``fitted``, :func:`fitted_calendars`) is said to be."""
    kinds: dict[tuple[str, str, bool], list[str]] = {}
    fits = fitted or {}
    for s in symbols:
        sym = str(s["symbol"])
        if lookup(sym, table) is None or sym in fits:
            inst = resolve(sym, table, warn=False)
            if sym in fits:
                inst = on_calendar(inst, fits[sym])
            kinds.setdefault((inst.asset_class, inst.calendar, sym in fits), []).append(sym)
    lines = []
    for (asset, cal, fit), names in kinds.items():
        shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
        lines.append(
            f"instrument of {shown} ({len(names)} symbol{'s' if len(names) > 1 else ''}) "
            f"guessed from the name: {asset}, calendar {cal}{FITTED_NOTE if fit else ''}; "
            "--instruments FILE sets it"
        )
    return lines


def _kept_outliers(bars: pl.DataFrame) -> list[str]:
    """One warning per symbol with implausible bars kept by ``--allow-outliers``."""
    hits = plausibility.find_outliers(bars)
    return [
        f"{sym}: kept {n} implausible bar{'s' if n > 1 else ''} (--allow-outliers; first: "
        f"{first}): a level shift counts once, where it starts"
        for (sym,), n, first in (
            (k, g.height, g["ts"][0]) for k, g in hits.group_by("symbol", maintain_order=True)
        )
    ]


def _mixed_intervals(frame: pl.DataFrame) -> list[str]:
    """One warning when the symbols' bars are of different intervals (1-hour EURUSD beside
    15-minute USDJPY): ``train`` refuses them together, and the verdict was valid."""
    frame = frame.select("symbol", "ts").drop_nulls()
    interval = bars_interval(frame)
    off = symbols_off_interval(frame, interval) if interval is not None else []
    if interval is None or not off:
        return []
    named = ", ".join(f"{s} {describe_interval(g)}" for s, g in off[:6])
    more = f" and {len(off) - 6} more" if len(off) > 6 else ""
    return [
        f"symbols of different bar intervals: {named}{more}, the others mostly "
        f"{describe_interval(interval)}: train refuses them together; --bar-minutes K "
        "aggregates them to one interval"
    ]


OFF_GRID_SHARE = 0.99
"""Share of a symbol's intraday bars on one phase of its interval (their times modulo it) above
which the others are strays: a stock's hourly bars opening at 09:30 then 10:00 (a seventh of
them on another phase) are a vendor's grid, a 1-minute bar at 00:01:30 is not."""


def _off_grid(frame: pl.DataFrame) -> list[str]:
    """One warning per symbol whose intraday bars lie on one grid but a few (a stray print, a
    second feed merged in): they were a gap of "0 missing bars" and the verdict was valid."""
    out = []
    bars = frame.select("symbol", "ts").drop_nulls().unique().sort("symbol", "ts")
    for (sym,), g in bars.group_by("symbol", maintain_order=True):
        if g.height < 100:
            continue
        interval = infer_interval(g["ts"])
        if interval >= DAILY:
            continue
        step = interval // timedelta(microseconds=1)
        phase = g["ts"].dt.epoch("us") % step
        common = phase.mode().min()
        off = g.filter(phase != common)
        if 0 < off.height <= (1 - OFF_GRID_SHARE) * g.height:
            first = off["ts"][0].isoformat()
            out.append(
                f"{sym}: {off.height} bar{'s' if off.height > 1 else ''} off the "
                f"{describe_interval(interval)} grid of the others (first {first}): a stray "
                "print or a second feed merged in"
            )
    return out


def _unread_volumes(loaded: LoadedBars) -> list[str]:
    """One warning per file read without a volume while a column named like one was read past
    (IQFeed's ``TotalVolume``, a vendor's ``Vol Traded``): every volume is 0 otherwise. Bars
    built from prints count their prints where no size is read: none is 0."""
    out = []
    built = loaded.prints or (False,) * len(loaded.files)
    for path, spell, extra, printed in zip(
        loaded.files, loaded.spellings, loaded.extra, built, strict=False
    ):
        named = [c for c in extra if "vol" in c.lower()]
        if "volume" not in spell and named and not printed:
            out.append(
                f"{path}: no volume read (every volume 0), but column '{named[0]}' was read "
                f"past; --columns volume={named[0]} reads it if it is each bar's volume"
            )
    return out


def inspect_report(
    path: Path,
    tz: str | None = None,
    instruments: Path | None = None,
    allow_outliers: bool = False,
    options: ReadOptions | None = None,
) -> dict[str, Any]:
    """Summary of a bars file/directory/glob and its validation verdict (``foxhunt data
    inspect``).

    Args:
        path: bars file, directory or glob.
        tz: zone of naive timestamps (see :func:`foxhunt.data.read.bars.load_bars`).
        instruments: the user's instrument table file (calendars per symbol).
        allow_outliers: judge implausible bars valid (one warning per file with their count).
        options: the user's read options (``--symbol``, ``--columns``, ``--ts-format``,
            ``--bar-minutes`` is not applied here, ``--allow-odd-times``).

    Returns:
        ``path``, ``files``, ``verdict`` (``valid``: nothing suspicious; ``suspicious``: the
        commands read the bars as given, with warnings; ``invalid``: they refuse them),
        ``valid`` (verdict ``valid``), ``readable`` (not ``invalid``: exit 0), ``error`` (the
        first refusal or None), ``time_axis`` (one line per time-axis problem,
        :mod:`foxhunt.data.read.time_axis`), ``warnings`` (zones kept as given with ``--tz``,
        problems kept with ``--allow-odd-times``, symbols with over 5 % of their bars in
        closed hours), ``guesses`` (what was guessed and the flag that changes it,
        deduplicated), ``features_min_bars``, ``too_short_for_features``,
        ``training_min_bars`` (preset -> bars a symbol needs to train), ``too_short_to_train``
        (preset -> the symbols with fewer: training leaves them out) and one summary per
        symbol.

    Raises:
        DataError: the bars cannot be read at all (missing file or column, empty file).
    """
    loaded = load_bars(path, tz=tz, options=options)
    frame = without_empty_rows(loaded.frame, path, timed=True, files=loaded.files)
    frame = without_settlements(frame, loaded.files)
    table = load_instruments(Path(instruments)) if instruments else None
    frame = without_fillers(frame, loaded.files, loaded.spellings, FILE_COLUMN, table)
    loaded = replace(loaded, frame=frame)
    naive: list[str] = []
    if loaded.options.tz is None:  # a naive US guess stands (time_axis keeps its zone advice)
        files = [i for i, n in enumerate(loaded.naive) if n]
        naive = frame.filter(pl.col(FILE_COLUMN).is_in(files))["symbol"].unique().to_list()
    fitted = fitted_calendars(frame, table, naive=set(naive))
    symbols = summarize(loaded, instruments=with_calendars(table, fitted))
    found = TimeAxisFindings()
    aggregated = None
    bars: pl.DataFrame | None = None
    try:
        bars = validate_bars(loaded, allow_outliers=allow_outliers)
        error = None
        found = examine(loaded, bars, table)
        if loaded.options.bar_minutes is not None:  # what train, features and evaluate read
            k = loaded.options.bar_minutes
            aggregated = (
                f"--bar-minutes {k}: {bars.height:,} bars become "
                f"{aggregate_bars(bars, k, str(path), table, loaded.built_symbols()).height:,} {k}-minute bars "
                "(the table above is of the bars as found)"
            )
    except DataError as e:
        error = str(e)
    problems = list(found.problems)
    allowed = loaded.options.allow_odd_times
    if problems and not allowed:
        error = error or problems[0]
    warnings = [f"kept ({ODD_TIMES_FLAG}): {p}" for p in problems] if allowed else []
    warnings += list(found.kept)
    warnings += [
        f"{s['symbol']}: {s['closed_hours_warning']}" for s in symbols if s["closed_hours_warning"]
    ]
    warnings += [hole_warning(s) for s in symbols if _long_hole(s)]
    warnings += _unread_volumes(loaded)
    if loaded.options.bar_minutes is None:  # aggregated, every symbol has the one interval
        warnings += _mixed_intervals(loaded.frame)
        warnings += _off_grid(loaded.frame)
    if allow_outliers and bars is not None:  # kept as asked: still not valid bars
        warnings += _kept_outliers(bars)
    warnings += [d for per_file in loaded.doubts for d in per_file]
    verdict = "invalid" if error else "suspicious" if warnings else "valid"
    short = [s["symbol"] for s in symbols if s["bars"] <= WARMUP + DEFAULT_HORIZON]
    return {
        "path": str(path),
        "files": [str(f) for f in loaded.files],
        "verdict": verdict,
        "valid": verdict == "valid",
        "readable": error is None,
        "error": error,
        "time_axis": problems,
        "warnings": warnings,
        "guesses": guess_lines(loaded.guesses)
        + instrument_guesses(symbols, table, fitted)
        + ([aggregated] if aggregated else []),
        "features_min_bars": WARMUP + DEFAULT_HORIZON + 1,
        "too_short_for_features": short,
        "training_min_bars": TRAINING_MIN_BARS,
        "too_short_to_train": {
            name: [s["symbol"] for s in symbols if s["bars"] < need]
            for name, need in TRAINING_MIN_BARS.items()
        },
        "symbols": symbols,
    }
