"""Bars -> the model's feature table: 210 observed, 10 known-future, 5 static, H targets.

The output has ``ts``, ``symbol``, then ``obs__*`` (Float32), ``known__*`` (Float32),
``static__*`` (Float32) and ``target__h1..hH`` (Float64) columns. Every feature is causal (row
t reads bars <= t); targets read the future by definition: ``target__h{h}`` at row t is
``log(close[t+h] / close[t])`` of the same symbol. The first :data:`WARMUP` rows of each
symbol are dropped (their look-back is incomplete), and with targets so are its last H rows.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from foxhunt.config import DataConfig
from foxhunt.data.features.covariates import check_static, covariate_exprs, covariate_names
from foxhunt.data.features.inputs import input_columns
from foxhunt.data.features.observed import WARMUP, base_columns
from foxhunt.data.features.sets import feature_names, selected_features
from foxhunt.data.features.static import STATIC_FEATURES, ContractSpec, static_table_for
from foxhunt.data.features.targets import check_target_prices, target_exprs
from foxhunt.data.market.bars_market import resolve_bars
from foxhunt.data.market.calendar import KNOWN_FEATURES, known_features, trading_date
from foxhunt.data.market.calendars import DEFAULT_CALENDAR
from foxhunt.data.market.instrument import Instrument
from foxhunt.data.read.bars import BAR_COLUMNS, VALUE_COLUMNS
from foxhunt.errors import DataError

if TYPE_CHECKING:
    from foxhunt.data.read.options import ReadOptions

log = logging.getLogger(__name__)

_DEFAULT_TIMING = Instrument("GLOBEX", 1.0, 1.0, "", "unknown", DEFAULT_CALENDAR)  # calendar only
_IDX = "__i"
_LEN = "__n"
_CHUNK = 40  # feature columns computed per pass (bounds peak memory)


@dataclass(frozen=True)
class FeatureSpec:
    """Names of the model's inputs and targets, in order, and the warm-up length.

    Attributes:
        historical: observed feature names (``obs__``), 210 in the standard set.
        known: known-future feature names (``known__``), 10.
        static: static feature names (``static__``), 5.
        targets: ``target__h1`` .. ``target__hH``.
        warmup: rows dropped at the start of each symbol.
    """

    historical: tuple[str, ...]
    known: tuple[str, ...]
    static: tuple[str, ...]
    targets: tuple[str, ...]
    warmup: int

    @property
    def horizon(self) -> int:
        """H, the number of target horizons."""
        return len(self.targets)

    @property
    def inputs(self) -> tuple[str, ...]:
        """All model input columns: historical, known, static."""
        return (*self.historical, *self.known, *self.static)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict (lists of names)."""
        return {
            "historical": list(self.historical),
            "known": list(self.known),
            "static": list(self.static),
            "targets": list(self.targets),
            "warmup": self.warmup,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FeatureSpec:
        """Inverse of :meth:`to_dict`.

        Raises:
            DataError: a key is missing or a name has the wrong group prefix.
        """
        try:
            spec = cls(
                historical=tuple(d["historical"]),
                known=tuple(d["known"]),
                static=tuple(d["static"]),
                targets=tuple(d["targets"]),
                warmup=int(d["warmup"]),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise DataError(f"invalid feature spec: {e!r}") from e
        for group, prefix in (
            (spec.historical, "obs__"),
            (spec.known, "known__"),
            (spec.static, "static__"),
            (spec.targets, "target__h"),
        ):
            bad = [n for n in group if not n.startswith(prefix)]
            if bad:
                raise DataError(f"invalid feature spec: {bad[0]!r} should start with {prefix!r}")
        return spec


def target_names(horizon: int) -> tuple[str, ...]:
    """``target__h1`` .. ``target__h{horizon}``."""
    return tuple(f"target__h{h}" for h in range(1, horizon + 1))


def feature_spec(horizon: int = 10, inputs: DataConfig | None = None) -> FeatureSpec:
    """The run's feature names: the standard set (210 observed, 10 known, 5 static), or the
    set and covariates ``inputs`` chooses, with ``horizon`` targets.

    Args:
        horizon: H, number of forward-return targets.
        inputs: the run's data config (``features``, ``feature_lines``, ``*_cols``); None is
            the standard set.

    Returns:
        The spec: the set's observed features then the observed covariates; the calendar
        then the known covariates; the instrument's then the static covariates.
        ``warmup`` is :data:`foxhunt.data.features.observed.WARMUP` for every set.
    """
    if horizon < 1:
        raise ValueError(f"horizon must be >= 1, got {horizon}")
    obs, known, static = covariate_names(inputs)
    chosen = ("default", ()) if inputs is None else (inputs.features, inputs.feature_lines)
    return FeatureSpec(
        historical=(*feature_names(*chosen), *obs),
        known=(*KNOWN_FEATURES, *known),
        static=(*STATIC_FEATURES, *static),
        targets=target_names(horizon),
        warmup=WARMUP,
    )


def _static_exprs(
    resolved: Mapping[str, Instrument], table: Mapping[str, ContractSpec] | None
) -> list[pl.Expr]:
    if table is not None:  # the older futures-only override: raises on an unknown root
        values = static_table_for(resolved, table)
    else:
        values = {s: inst.static_values() for s, inst in resolved.items()}
    return [
        pl.col("symbol")
        .replace_strict({s: v[i] for s, v in values.items()}, return_dtype=pl.Float64)
        .alias(name)
        for i, name in enumerate(STATIC_FEATURES)
    ]


def _per_calendar(resolved: Mapping[str, Instrument], make: Callable[[str], pl.Expr]) -> pl.Expr:
    """``make(calendar)`` for each symbol's calendar (one expression when all share one)."""
    by_cal: dict[str, list[str]] = {}
    for sym, inst in resolved.items():
        by_cal.setdefault(inst.calendar, []).append(sym)
    cals = sorted(by_cal)
    expr = make(cals[0])
    for cal in cals[1:]:
        expr = pl.when(pl.col("symbol").is_in(by_cal[cal])).then(make(cal)).otherwise(expr)
    return expr


def _check_finite(df: pl.DataFrame, columns: tuple[str, ...]) -> None:
    bad = df.select([(~pl.col(c).is_finite()).fill_null(True).any().alias(c) for c in columns]).row(
        0, named=True
    )
    for c in columns:
        if bad[c]:
            hit = df.filter((~pl.col(c).is_finite()).fill_null(True)).row(0, named=True)
            raise DataError(
                f"feature {c!r} is {hit[c]} for symbol {hit['symbol']!r} at {hit['ts']}: "
                "the bars are degenerate there"
            )


def compute_features(
    bars: pl.DataFrame,
    horizon: int = 10,
    *,
    with_targets: bool = True,
    static_table: Mapping[str, ContractSpec] | None = None,
    instruments: Mapping[str, Instrument] | None = None,
    inputs: DataConfig | None = None,
) -> pl.DataFrame:
    """Compute the run's features (:func:`feature_spec`) and targets from validated bars.

    Args:
        bars: output of :func:`foxhunt.data.read.bars.read_bars` (sorted by symbol, ts).
        horizon: H, number of forward-return targets.
        with_targets: add ``target__h1..hH`` and drop each symbol's last H rows (whose
            targets are incomplete); False keeps every row after the warm-up.
        static_table: root -> :class:`ContractSpec`, replacing the built-in table for the
            static features (futures only; an unknown root raises). Prefer ``instruments``.
        instruments: the user's instrument table (root or symbol ->
            :class:`~foxhunt.data.market.instruments.Instrument`, e.g. from
            :func:`~foxhunt.data.market.instrument_table.load_instruments`, or a stored resolved
            table), looked up before the built-in one. Each symbol's instrument gives its
            static features; unknown symbols are inferred with one warning each (see
            :func:`foxhunt.data.market.instruments.resolve`). When given (``{}`` will do), each
            symbol's calendar also drives its known-future features and session VWAP; when
            None they follow the ``globex`` rule, as the decoder schedule of callers that pass
            no calendar does.
        inputs: the run's data config: feature set, covariate columns (which ``bars`` must
            hold, e.g. read with ``read_bars(keep=...)``) and target; None: the standard set
            and the close log return.

    Returns:
        Columns ``ts``, ``symbol``, the 210 ``obs__``, 10 ``known__`` and 5 ``static__``
        columns (Float32) and, if ``with_targets``, the H ``target__`` columns (Float64).
        No null, NaN or inf.

    Raises:
        DataError: missing bar columns, an unknown root in ``static_table``, a symbol too
            short to leave any row after the warm-up, or a non-finite feature (only bars that
            validation refuses can cause one).
    """
    missing = [c for c in BAR_COLUMNS if c not in bars.columns]
    if missing:
        raise DataError(f"bars lack column {missing[0]!r}")
    spec = feature_spec(horizon, inputs)
    extra = input_columns(inputs)
    missing = [c for c in extra if c not in bars.columns]
    if missing:
        raise DataError(f"bars lack the input column {missing[0]!r}")
    # In order: each row starts a later symbol, or continues its symbol at a later time.
    previous = pl.col("symbol").shift(1)
    sorted_ok = bars.select(
        (
            (previous < pl.col("symbol"))
            | ((previous == pl.col("symbol")) & (pl.col("ts").diff() > pl.duration()))
        )
        .fill_null(True)
        .all()
    ).item()
    if not sorted_ok:
        bars = bars.sort(["symbol", "ts"])
    resolved = resolve_bars(bars, instruments)
    static = _static_exprs(resolved, static_table)
    # Calendars follow the instruments only when the caller passes a table (``{}`` will do):
    # the decoder schedule is built by callers that must then pass the same calendars to
    # project_bar_times / known_features. Without one, the old Globex rule holds everywhere.
    timing = resolved if instruments is not None else dict.fromkeys(resolved, _DEFAULT_TIMING)

    f32 = pl.Float32
    chosen = ((), "default") if inputs is None else (inputs.feature_lines, inputs.features)
    obs = [e.cast(f32).alias(n) for n, e in selected_features(*chosen)]
    obs += covariate_exprs(inputs)  # observed, known and static covariates, in spec order
    if inputs is not None:
        check_static(bars, inputs.static_cols)
        check_target_prices(bars, inputs.target)
    by_calendar: dict[str, tuple[pl.Expr, ...]] = {}  # built once a calendar, not once a feature

    def calendar_known(cal: str) -> tuple[pl.Expr, ...]:
        if cal not in by_calendar:
            by_calendar[cal] = tuple(known_features(pl.col("ts"), cal))
        return by_calendar[cal]

    known = [
        _per_calendar(timing, lambda cal, i=i: calendar_known(cal)[i]).cast(f32).alias(name)
        for i, name in enumerate(KNOWN_FEATURES)
    ]
    session = _per_calendar(timing, lambda cal: trading_date(pl.col("ts"), cal))
    targets = target_exprs("close" if inputs is None else inputs.target, spec.targets)
    keep = pl.col(_IDX) >= spec.warmup
    if with_targets:
        keep = keep & (pl.col(_IDX) < pl.col(_LEN) - horizon)
    columns = ["ts", "symbol", *spec.historical, *spec.known, *spec.static]
    columns += list(spec.targets) if with_targets else []

    # Base columns once, then the features in column chunks, each filtered as it is made:
    # peak memory is about the output plus one chunk, not two copies of the whole table.
    base = (
        bars.lazy()
        .select("ts", "symbol", *[pl.col(c).cast(pl.Float64) for c in (*VALUE_COLUMNS, *extra)])
        .with_columns(base_columns(session))
        .with_columns(
            pl.int_range(pl.len()).over("symbol").alias(_IDX),
            pl.len().over("symbol").alias(_LEN),
        )
        .collect()
    )
    exprs = [*obs, *known, *[e.cast(f32) for e in static], *targets]
    parts = [base.filter(keep).select("ts", "symbol")]
    for start in range(0, len(exprs), _CHUNK):
        chunk = exprs[start : start + _CHUNK]
        names = [e.meta.output_name() for e in chunk]
        parts.append(base.lazy().with_columns(chunk).filter(keep).select(names).collect())
    del base
    out = pl.concat(parts, how="horizontal").select(columns)

    n_in = bars.group_by("symbol").len()
    n_out = out.group_by("symbol").len()
    empty = n_in.join(n_out, on="symbol", how="anti")
    if empty.height:
        row = empty.sort("symbol").row(0, named=True)
        need = spec.warmup + (horizon if with_targets else 0) + 1
        raise DataError(
            f"symbol {row['symbol']!r} has {row['len']} bars; features need at least {need} "
            f"(warm-up {spec.warmup}{f' + horizon {horizon}' if with_targets else ''} + 1)"
        )
    _check_finite(out, tuple(columns[2:]))
    dropped = bars.height - out.height
    log.debug(
        "features: %d rows x %d inputs from %d bars (%d warm-up rows per symbol%s dropped, %d total)",
        out.height,
        len(spec.inputs),
        bars.height,
        spec.warmup,
        f" and last {horizon}" if with_targets else "",
        dropped,
    )
    return out


def write_features(
    bars: Path,
    out: Path,
    horizon: int = 10,
    *,
    tz: str | None = None,
    instruments: Path | None = None,
    allow_outliers: bool = False,
    options: ReadOptions | None = None,
    before: Callable[[int, int], object] | None = None,
) -> tuple[int, FeatureSpec]:
    """Read bars, compute features and targets, write a parquet (or CSV) file atomically
    (``foxhunt features``).

    Args:
        bars: bars file, directory or glob.
        out: destination ``.parquet`` (or ``.csv``), written atomically.
        horizon: H, number of target horizons.
        tz: zone of naive timestamps in ``bars``.
        instruments: the user's instrument table file; each symbol's calendar drives its
            known-future features (as in training).
        allow_outliers: keep implausible bars (one warning per file with their count).
        options: how to read the bar files (``--symbol``, ``--columns``, ...).
        before: called with the bars read and their symbols before the features are computed
            (the command's memory check; it may raise).

    Returns:
        ``(rows written, feature spec)``.

    Raises:
        InputError/DataError: bad bars, horizon or output path.
    """
    from foxhunt.data.market.instrument_table import load_instruments
    from foxhunt.data.read.files import write_table

    table = load_instruments(Path(instruments)) if instruments else {}
    frame, spec = read_bars_for_features(
        Path(bars), horizon, tz=tz, allow_outliers=allow_outliers, options=options, table=table
    )
    if before is not None:
        before(frame.height, frame["symbol"].n_unique())
    log.debug("computing %d features for %s bars", len(spec.inputs), f"{frame.height:,}")
    feats = compute_features(frame, horizon, instruments=table)
    write_table(feats, Path(out))
    return feats.height, spec


def read_bars_for_features(
    bars: Path,
    horizon: int,
    *,
    tz: str | None = None,
    allow_outliers: bool = False,
    options: ReadOptions | None = None,
    table: Mapping[str, Instrument] | None = None,
) -> tuple[pl.DataFrame, FeatureSpec]:
    """Check ``horizon`` and read ``bars`` with enough rows for one target row per symbol.

    Args:
        bars: Bars file, directory or glob.
        horizon: H, number of target horizons (>= 1).
        tz: zone of naive timestamps.
        allow_outliers: keep implausible bars (one warning per file with their count).
        options: how to read the bar files (``--symbol``, ``--columns``, ...).
        table: the user's instrument table (the calendars the time axis is judged by).

    Returns:
        The validated bars and the feature spec for ``horizon``.

    Raises:
        InputError: ``horizon`` < 1.
        DataError: Bad or too few bars.
    """
    from foxhunt.data.read.bars import read_bars
    from foxhunt.errors import InputError

    if horizon < 1:
        raise InputError(f"--horizon must be >= 1, got {horizon}")
    spec = feature_spec(horizon)
    frame = read_bars(
        bars,
        min_bars=spec.warmup + horizon + 1,
        min_bars_reason=f"warm-up {spec.warmup} + horizon {horizon} + 1",
        tz=tz,
        allow_outliers=allow_outliers,
        options=options,
        instruments=table,
    )
    return frame, spec
