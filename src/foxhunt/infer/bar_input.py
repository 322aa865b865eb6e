"""New bars handed to the streaming ``Forecaster``: normalised, checked, and their sessions.

One home for the checks both of the forecaster's paths (the incremental features and the bar
tail) make before anything held changes.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from foxhunt.data.market.calendar import trading_date
from foxhunt.data.market.calendars import DEFAULT_CALENDAR
from foxhunt.data.read.columns import map_columns
from foxhunt.data.read.validate import check_values
from foxhunt.data.read.zones import local_to_utc
from foxhunt.errors import DataError
from foxhunt.infer.bar_frame import canonical_bars, polars_bars
from foxhunt.infer.bartail import VALUE_COLUMNS

log = logging.getLogger(__name__)

WHERE = "Forecaster.update"
"""How error messages name the input."""


def session_expr(calendars: Mapping[str, str]) -> pl.Expr:
    """Each bar's trading date on its symbol's calendar (``globex`` when none is named)."""
    expr = trading_date(pl.col("ts"), DEFAULT_CALENDAR)
    for cal in sorted(set(calendars.values()) - {DEFAULT_CALENDAR}):
        syms = [s for s, c in calendars.items() if c == cal]
        expr = (
            pl.when(pl.col("symbol").is_in(syms))
            .then(trading_date(pl.col("ts"), cal))
            .otherwise(expr)
        )
    return expr


def normalise(bars: pl.DataFrame | Any, tz: str | None = None) -> pl.DataFrame:
    """Check columns and values; return ``ts`` (UTC µs), ``symbol`` and float64 values.

    Column by column on polars Series (no query plan): a live update of a few rows is
    dominated by per-call work, and a column already of its type is taken as it is. Naive
    times are wall-clock times in ``tz`` (an IANA zone or an offset, as ``--tz`` takes); without
    it they are UTC, said once per process in a warning (a notebook's New York times read
    as UTC were forecast 4-5 hours off without a word).
    """
    bars = canonical_bars(polars_bars(bars, WHERE))
    missing = [c for c in ("ts", "symbol", *VALUE_COLUMNS) if c not in bars.columns]
    if missing:
        raise DataError(
            f"{WHERE}: missing column {missing[0]!r} (columns: {', '.join(bars.columns)})"
        )
    ts = bars["ts"]
    if not isinstance(ts.dtype, pl.Datetime):
        raise DataError(f"{WHERE}: column 'ts' must be a datetime, got {ts.dtype}")
    try:
        if ts.dtype.time_zone is None and tz is not None:
            ts = pl.select(local_to_utc(pl.lit(ts), tz)).to_series().alias("ts")
        elif ts.dtype.time_zone is None:
            if not _NAIVE_SAID:
                _NAIVE_SAID.append(True)
                log.warning(
                    "%s: naive times taken as UTC; send times with their zone (or, from "
                    "Python, name the feed's clock: Forecaster.load(..., tz=ZONE), "
                    "TFTForecaster.stream(tz=ZONE))",
                    WHERE,
                )
            ts = ts.dt.replace_time_zone("UTC")
        elif ts.dtype.time_zone != "UTC":
            ts = ts.dt.convert_time_zone("UTC")
        if ts.dtype.time_unit != "us":  # type: ignore[union-attr]
            ts = ts.dt.cast_time_unit("us")
        df = pl.DataFrame(
            [
                ts,
                bars["symbol"].cast(pl.String),
                *[bars[c].cast(pl.Float64) for c in VALUE_COLUMNS],
            ]
        )
    except pl.exceptions.PolarsError as e:
        raise DataError(f"{WHERE}: cannot read the bars ({str(e).splitlines()[0]})") from e
    if not _plainly_valid(df):
        check_values(df, WHERE)  # the one bar validator, as for files: names the first bad row
    return df


class BarArrays(NamedTuple):
    """A normalised chunk's columns as numpy arrays (read once per update)."""

    ts: np.ndarray
    """(n,) int64 µs UTC."""
    symbol: np.ndarray
    """(n,) the symbols (object array of str)."""
    values: np.ndarray
    """(n, 5) float64 open, high, low, close, volume."""


def bar_arrays(df: pl.DataFrame) -> BarArrays:
    """:class:`BarArrays` of :func:`normalise`'s output."""
    return BarArrays(
        ts=df["ts"].to_numpy().view(np.int64),  # datetime64[us] (no nulls: checked)
        symbol=df["symbol"].to_numpy(),
        values=np.column_stack([df[c].to_numpy() for c in VALUE_COLUMNS]).astype(np.float64),
    )


_CANONICAL_TS = pl.Datetime("us", "UTC")
_NAIVE_SAID: list[bool] = []
"""Whether the naive-times warning was given in this process (once is enough)."""


def fast_arrays(bars: pl.DataFrame | Any) -> BarArrays | None:
    """:class:`BarArrays` of bars that need no normalising, read and checked in numpy.

    A live feed usually hands over a polars frame already in :func:`normalise`'s layout
    (``ts`` UTC µs, ``symbol`` text, numeric values, under these names): then building the
    normalised frame, its casts and checks are skipped (a fraction of a millisecond per update).
    None when anything differs (another type, spelling or time zone, a null, a bar a rule of
    ``check_values`` refuses): :func:`normalise` then reads it, or names the problem.
    """
    if not isinstance(bars, pl.DataFrame):
        return None
    schema = bars.schema
    if schema.get("ts") != _CANONICAL_TS or schema.get("symbol") != pl.String:
        return None
    for c in VALUE_COLUMNS:
        dtype = schema.get(c)
        if dtype is None or not (dtype.is_float() or dtype.is_integer()):
            return None
    if not _canonical_names(tuple(bars.columns)):
        return None
    if not _keys_present(bars):
        return None
    arrays = bar_arrays(bars)
    return arrays if _values_valid(arrays.values) else None


@functools.lru_cache(maxsize=64)
def _canonical_names(columns: tuple[str, ...]) -> bool:
    """Whether the names :func:`normalise` would read in ``columns`` are the canonical ones
    (cached: a live feed sends the same columns every update)."""
    cols = map_columns(list(columns))
    return (cols.ts, cols.symbol, cols.volume) == ("ts", "symbol", "volume") and all(
        k == v for k, v in cols.prices.items()
    )


def _plainly_valid(df: pl.DataFrame) -> bool:
    """Whether every rule of ``check_values`` holds, tested in numpy (a few microseconds for a
    live update, where the validator's polars passes cost milliseconds); when not,
    ``check_values`` finds and names the first bad row."""
    if not _keys_present(df):
        return False
    return _values_valid(np.column_stack([df[c].to_numpy() for c in VALUE_COLUMNS]))


def _keys_present(df: pl.DataFrame) -> bool:
    """No null time, no null or empty symbol."""
    return not (df["ts"].null_count() or df["symbol"].null_count() or (df["symbol"] == "").any())


def _values_valid(v: np.ndarray) -> bool:
    """(n, 5) OHLCV (nulls read as NaN): finite, prices > 0, volume >= 0, high and low
    around open and close."""
    v = v.astype(np.float64, copy=False)
    op, hi, lo, c, vol = (v[:, j] for j in range(5))
    return bool(
        np.isfinite(v).all()
        and (v[:, :4] > 0).all()
        and (vol >= 0).all()
        and (hi >= np.maximum(op, c)).all()
        and (lo <= np.minimum(op, c)).all()
    )


def iso_us(us: int) -> str:
    """µs since the epoch as ISO-8601 UTC (``2024-01-02T14:30:00+00:00``), for messages and
    records."""
    return (_EPOCH + timedelta(microseconds=int(us))).isoformat()


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _latest_plausible_us() -> int:
    """The latest bar time a live update accepts (µs since the epoch): now + one day, the
    time-axis rule for files (``foxhunt.data.read.time_axis.FUTURE_SLACK``)."""
    from foxhunt.data.read.time_axis import FUTURE_SLACK

    return int((datetime.now(UTC) + FUTURE_SLACK).timestamp() * 1_000_000)


def group_rows(
    chunk: BarArrays,
    last_ts: Callable[[str], int | None],
    allowed: frozenset[str] | None,
) -> dict[str, np.ndarray] | None:
    """symbol -> its rows (indices in ``chunk``, in order) when the chunk passes every check of
    :func:`check_order`, else None (then :func:`check_order` names the problem). numpy only."""
    symbols, ts = chunk.symbol, chunk.ts
    if len(ts) and ts.max() > _latest_plausible_us():
        return None
    order = np.argsort(symbols, kind="stable")
    s, t = symbols[order], ts[order]
    same = s[1:] == s[:-1]
    if (same & (t[1:] <= t[:-1])).any():
        return None
    starts = np.flatnonzero(np.concatenate([[True], ~same]))
    groups = {}
    for a, b in zip(starts, [*starts[1:], len(s)], strict=True):
        sym = str(s[a])
        last = last_ts(sym)
        if (allowed is not None and sym not in allowed) or (last is not None and t[a] <= last):
            return None
        groups[sym] = order[a:b]
    return dict(sorted(groups.items(), key=lambda kv: kv[1][0]))  # in order of first sight


def check_order(
    chunk: pl.DataFrame,
    last_ts: Callable[[str], int | None],
    allowed: frozenset[str] | None,
) -> dict[str, pl.DataFrame]:
    """Check a normalised chunk against itself and the bars held; group it by symbol.

    Args:
        chunk: :func:`normalise`'s output.
        last_ts: symbol -> time of its latest bar held (µs), None if none.
        allowed: the symbols served (None: any).

    Returns:
        symbol -> its rows (with ``__row``, the row in the chunk), in chunk order.

    Raises:
        DataError: a symbol not served; a duplicate or out-of-order bar within the chunk or
            against the bars held (naming row, symbol and time).
    """
    chunk = chunk.with_row_index("__row")
    for sym in chunk["symbol"].unique(maintain_order=True).to_list():
        if allowed is not None and sym not in allowed:
            raise DataError(
                f"{WHERE}: symbol {sym!r} is not one this forecaster serves "
                f"({', '.join(sorted(allowed))})"
            )
    ahead = chunk.filter(pl.col("ts").dt.epoch("us") > _latest_plausible_us())
    if ahead.height:
        row = ahead.row(0, named=True)
        raise DataError(
            f"{WHERE}: row {row['__row']}, symbol {row['symbol']!r}, ts {row['ts']}: bar after "
            "tomorrow (a typo or a misread clock); it would put every later bar out of order"
        )
    step = pl.col("ts").diff().over("symbol")
    bad = chunk.filter(step <= pl.duration())
    if bad.height:
        row = bad.row(0, named=True)
        same = (pl.col("symbol") == row["symbol"]) & (pl.col("ts") == row["ts"])
        what = "duplicate bar" if chunk.filter(same).height > 1 else "bar out of time order"
        raise DataError(
            f"{WHERE}: row {row['__row']}, symbol {row['symbol']!r}, ts {row['ts']}: {what} "
            "within the update"
        )
    groups = {}
    for (sym,), part in chunk.group_by("symbol", maintain_order=True):
        last = last_ts(str(sym))
        first = part.row(0, named=True)
        start = int(part["ts"].dt.epoch("us")[0])
        if last is not None and start <= last:
            held = pl.Series([last]).cast(pl.Datetime("us")).dt.replace_time_zone("UTC")[0]
            what = "duplicate bar" if start == last else "bar out of time order"
            raise DataError(
                f"{WHERE}: row {first['__row']}, symbol {sym!r}, ts {first['ts']}: {what} "
                f"(the last bar already given for {sym!r} is at {held})"
            )
        groups[str(sym)] = part
    return groups
