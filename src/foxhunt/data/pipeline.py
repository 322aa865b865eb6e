"""Bars file -> ready-to-train (or ready-to-forecast) window datasets.

Training: read and validate bars -> features and targets -> time splits with an embargo ->
scaler fitted on train -> scaled tables -> :class:`WindowDataset` per split.

Inference: the same features, scaled with the stored params. For forecasting
(``with_target=False``) each symbol gets H synthetic future rows after its last bar whose known
(calendar) features come from :func:`foxhunt.data.market.calendar.project_bar_times`; their other
columns are 0 and never read (observed inputs only cover the encoder).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import math
import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from foxhunt.config import DataConfig, RunConfig
from foxhunt.data.features.covariates import USER, future_values
from foxhunt.data.features.inputs import check_input_shape, is_standard, read_run_bars
from foxhunt.data.features.table import FeatureSpec, compute_features, feature_spec
from foxhunt.data.market.bars_market import resolve_bars
from foxhunt.data.market.calendar import (
    bars_interval,
    infer_interval,
    known_features,
    project_bar_times,
)
from foxhunt.data.market.calendars import DEFAULT_CALENDAR
from foxhunt.data.market.instrument import Instrument
from foxhunt.data.market.instrument_table import load_instruments
from foxhunt.data.market.intervals import refuse_mixed_intervals
from foxhunt.data.prepared import PreparedData
from foxhunt.data.read.fingerprint import bars_fingerprint
from foxhunt.data.scale.scaler import ScalerParams, fit_scaler
from foxhunt.data.windows.by_symbol import windows_by_symbol
from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.data.windows.needs import split_cut, training_bars_needed
from foxhunt.data.windows.row_files import host_tag, remove_stale_rows
from foxhunt.data.windows.scope import WindowScope, before_end, end_text
from foxhunt.data.windows.split_arrays import split_windows_by_symbol
from foxhunt.data.windows.splits import Splits, split_by_time
from foxhunt.errors import DataError, InputError, ModelDirError

if TYPE_CHECKING:
    from foxhunt.data.store.cache import Coordinator

log = logging.getLogger(__name__)


def prepare_training_data(
    bars_path: Path,
    cfg: RunConfig,
    *,
    coordinator: Coordinator | None = None,
    spill: Path | None = None,
) -> PreparedData:
    """Read bars and build scaled train/val/test window datasets.

    Args:
        bars_path: bars file, directory or glob; or a feature store written by
            ``foxhunt features --shards`` (a folder with ``manifest.json``), whose windows are
            built once and memory-mapped (:mod:`foxhunt.data.store.cache`).
        cfg: run config (encoder length, horizon, split fractions, embargo, stride).
        coordinator: with a feature store under torchrun, the rank's ``World``: its main
            process builds the window cache while the others wait. Unused for bars.
        spill: for bars, an existing folder the window arrays are written to and mapped
            from instead of held (:mod:`foxhunt.data.windows.row_files`); the caller deletes
            it once the datasets are mapped (or, in another process, unpickled). Unused for
            a feature store (already mapped).

    Returns:
        The prepared datasets with spec, scaler and bars fingerprint.

    Raises:
        DataError: bad bars or store, too few bars for warm-up + windows, or a split too short.
    """
    from foxhunt.data.store.manifest import is_feature_store

    if is_feature_store(bars_path):
        from foxhunt.data.store.cache import prepare_store_data

        if not is_standard(cfg.data):
            raise DataError(
                f"{bars_path}: a feature store holds the default features and target; with "
                "--features, --target or covariate columns pass the bars instead"
            )
        return prepare_store_data(Path(bars_path), cfg, coordinator)
    L, H = cfg.model.encoder_length, cfg.model.horizon
    spec = feature_spec(H, cfg.data)
    check_input_shape(cfg)
    cut = split_cut(cfg)
    bars, _ = read_run_bars(
        bars_path,
        cfg.data,
        min_bars=spec.warmup + L + H,
        reason=f"warm-up {spec.warmup} + encoder {L} + horizon {H}; training's splits need "
        f"{training_bars_needed(cfg)} bars in all",
        allow_outliers=cfg.data.allow_outliers,
    )
    fingerprint = bars_fingerprint(bars)
    closes = bars.select("symbol", "ts", "close")
    interval = bars_interval(closes)
    refuse_mixed_intervals(closes, interval, bars_path)
    instruments = run_instruments(bars, cfg)
    calendars = calendars_of(instruments)

    def table(symbol: str, part: pl.DataFrame) -> pl.DataFrame:
        return compute_features(part, H, instruments=instruments, inputs=cfg.data)

    # One symbol's feature table at a time, the scaler fitted on the training rows after
    # (split_arrays.py): the peak holds the window arrays once, not the whole table beside them.
    train, val, test, scaler = split_windows_by_symbol(
        bars,
        table,
        spec,
        L,
        H,
        cut,
        stride=cfg.data.stride,
        calendars=calendars,
        spill=spill,
    )
    del bars
    seconds = interval.total_seconds() if interval is not None else None
    return PreparedData(spec, scaler, train, val, test, fingerprint, closes, instruments, seconds)


def run_instruments(bars: pl.DataFrame, cfg: RunConfig) -> dict[str, Instrument]:
    """Each symbol's instrument: the user's table (``cfg.data.instruments``) first, then the
    built-in one, then inference from the symbol and its prices (one warning each)."""
    table = load_instruments(Path(cfg.data.instruments)) if cfg.data.instruments else None
    return resolve_bars(bars, table)


def calendars_of(instruments: Mapping[str, Instrument] | None) -> dict[str, str]:
    """symbol -> calendar name (empty for a run from before calendars: ``globex`` for all)."""
    return {sym: inst.calendar for sym, inst in (instruments or {}).items()}


def windows_of_test_split(
    bars: pl.DataFrame,
    cfg: RunConfig,
    instruments: Mapping[str, Instrument] | None,
    spill: Path | None = None,
) -> tuple[WindowDataset, ScalerParams]:
    """The test split of bars a model was trained on, and the scaler refitted on their train
    split (the caller checks it equals the model's).

    Args:
        bars: the validated training bars, already read.
        cfg: the model's run config (the same splits as training).
        instruments: the run's stored instruments (None: a run from before calendars).
        spill: a folder for the window files: the splits are built one symbol at a time into
            files there, as training builds them (:func:`split_windows_by_symbol`; the same
            test windows and scaler), and the test windows read from them; the files are
            deleted once open. None: the whole feature table in memory, only the test windows
            built.
    """
    L, H = cfg.model.encoder_length, cfg.model.horizon
    spec = feature_spec(H, cfg.data)
    if spill is not None:
        remove_stale_rows(spill)  # what a killed evaluation left
        folder = spill / f".rows.{host_tag()}.{os.getpid()}"
        folder.mkdir(exist_ok=True)

        def table(symbol: str, part: pl.DataFrame) -> pl.DataFrame:
            return compute_features(part, H, instruments=instruments, inputs=cfg.data)

        try:
            *_, test, scaler = split_windows_by_symbol(
                bars,
                table,
                spec,
                L,
                H,
                split_cut(cfg),
                stride=cfg.data.stride,
                calendars=calendars_of(instruments),
                spill=folder,
            )
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return test, scaler
    splits = _feature_splits(bars, cfg, instruments)
    scaler = fit_scaler(splits.train, spec)
    test = WindowDataset(
        splits.test, spec, L, H, stride=1, scaler=scaler, calendars=calendars_of(instruments)
    )
    return test, scaler


def _feature_splits(
    bars: pl.DataFrame, cfg: RunConfig, instruments: Mapping[str, Instrument] | None
) -> Splits:
    """Features and targets of ``bars``, split by time with the run's fractions and embargo."""
    feats = compute_features(bars, cfg.model.horizon, instruments=instruments, inputs=cfg.data)
    cut = split_cut(cfg)
    return split_by_time(
        feats,
        val_fraction=cut.val_fraction,
        test_fraction=cut.test_fraction,
        embargo=cut.embargo,
        min_rows=cut.min_rows,
    )


def future_rows(
    bars: pl.DataFrame,
    spec: FeatureSpec,
    horizon: int,
    columns: list[str],
    calendars: Mapping[str, str] | None = None,
    future: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """H rows per symbol after its last bar, at the scheduled bar times, unscaled.

    Their known (calendar) columns hold the scheduled times' features; every other column is 0
    and never read (observed inputs only cover the encoder, static inputs come from the origin
    row). The times are :func:`foxhunt.data.market.calendar.project_bar_times` from each symbol's last
    bar with its inferred interval — the same schedule ``WindowDataset`` uses for every
    window's decoder, so batch inference (:func:`prepare_inference_data`) and the streaming
    ``Forecaster`` see the same future inputs at every origin.

    Args:
        bars: Validated bars (``symbol``, ``ts``), each symbol's rows in time order.
        spec: The model's feature names.
        horizon: H, rows appended per symbol.
        columns: Output column order.
        calendars: symbol -> calendar of its schedule (missing: ``globex``).
        future: the bars' future rows (:func:`read_run_bars`): the known covariates'
            values at the scheduled times (needed only when ``spec`` has known covariates).

    Returns:
        ``H * n_symbols`` rows with ``columns``.

    Raises:
        DataError: a known covariate without a future row at a scheduled time.
    """
    calendars = calendars or {}
    parts = []
    for (sym,), group in bars.group_by("symbol", maintain_order=True):
        ts = group["ts"]
        cal = calendars.get(str(sym), DEFAULT_CALENDAR)
        scheduled = project_bar_times(ts.tail(1), horizon, infer_interval(ts), calendar=cal)
        times = pl.Series("ts", scheduled.row(0)).dt.convert_time_zone("UTC")
        part = pl.DataFrame({"symbol": pl.Series([str(sym)] * horizon, dtype=pl.String)})
        part = part.with_columns(times.dt.cast_time_unit("us").alias("ts"))
        parts.append(part.with_columns(known_features(pl.col("ts"), cal)))
    fut = pl.concat(parts, how="vertical")
    zeros = [pl.lit(0.0).alias(c) for c in (*spec.historical, *spec.static)]
    prefix = f"known__{USER}"
    user = [n for n in spec.known if n.startswith(prefix)]
    cols = [n[len(prefix) :] for n in user]
    if user:
        got = future_values(future, fut.select("symbol", "ts"), cols)
        fut = fut.with_columns(
            got[c].cast(pl.Float32).alias(n) for c, n in zip(cols, user, strict=True)
        )
    return fut.with_columns(zeros).select(columns)


def inference_bars_needed(
    spec: FeatureSpec, encoder_length: int, horizon: int, *, with_target: bool
) -> tuple[int, str]:
    """Bars a symbol needs for one inference window, and why (for the error message)."""
    # Targets drop each symbol's last H rows, and those windows still need H decoder rows.
    need = spec.warmup + encoder_length + (2 * horizon if with_target else 0)
    why = f"warm-up {spec.warmup} + encoder {encoder_length}"
    why += f" + 2 x horizon {horizon}" if with_target else ""
    return need, why


def prepare_inference_data(
    bars_path: Path | pl.DataFrame,
    spec: FeatureSpec,
    scaler: ScalerParams,
    encoder_length: int,
    horizon: int,
    *,
    with_target: bool,
    tz: str | None = None,
    instruments: Mapping[str, Instrument] | None = None,
    allow_outliers: bool = False,
    inputs: DataConfig | None = None,
    future: pl.DataFrame | None = None,
    spill: Path | None = None,
) -> WindowDataset:
    """Windows for evaluation (``with_target=True``) or forecasting (``with_target=False``).

    Args:
        bars_path: bars file, directory or glob, or bars already read with
            :func:`inference_bars_needed` bars per symbol.
        spec: the model's feature spec (from its run directory).
        scaler: the model's scaler params.
        encoder_length: L.
        horizon: H.
        tz: zone of naive timestamps when reading ``bars_path`` (None: the one in ``inputs``,
            else UTC).
        instruments: the model's stored instruments (None: a run from before calendars,
            every symbol on ``globex``); a symbol not in them is resolved as in training.
        allow_outliers: keep implausible bars when reading ``bars_path``.
        inputs: the model's data config (feature set, covariates, target); None: the
            standard features. ``tz`` is taken from it when ``bars_path`` is read.
        future: with bars already read and known covariates, their future rows
            (:func:`read_run_bars`); read from ``bars_path`` otherwise.
        with_target: True: every origin with realised targets. False: every origin up to and
            including each symbol's last bar, decoded into H future bar times.
        spill: A folder for the window arrays' temporary files when they are large
            (:func:`foxhunt.data.windows.by_symbol.windows_by_symbol`; e.g.
            :func:`~foxhunt.data.windows.by_symbol.scratch_for` the model); None: in memory.

    Returns:
        The window dataset (stride 1); ``origins()`` gives symbol and origin time per window.

    Raises:
        DataError: bad bars, too few bars, or features that do not match ``spec``/``scaler``.
    """
    if len(spec.targets) != horizon:
        raise DataError(f"model spec has {len(spec.targets)} targets but horizon is {horizon}")
    from foxhunt.data.store.manifest import is_feature_store

    if not isinstance(bars_path, pl.DataFrame) and is_feature_store(bars_path):
        raise DataError(
            f"{bars_path}: is a feature store (foxhunt features --shards), which only "
            "foxhunt train reads; pass the bars it was made from"
        )
    need, why = inference_bars_needed(spec, encoder_length, horizon, with_target=with_target)
    if isinstance(bars_path, pl.DataFrame):  # read (and length-checked) by the caller
        bars, bars_path = bars_path, Path("bars")
    else:
        data = inputs or DataConfig()
        data = dataclasses.replace(data, tz=tz or data.tz)
        bars, future = read_run_bars(
            bars_path,
            data,
            min_bars=need,
            reason=why,
            allow_outliers=allow_outliers,
            instruments=instruments,
        )
    if instruments is not None:
        instruments = {**resolve_bars(bars, instruments), **instruments}
    calendars = calendars_of(instruments)
    ours = feature_spec(horizon, inputs)
    for group, theirs, mine in (
        ("observed", spec.historical, ours.historical),
        ("known", spec.known, ours.known),
        ("static", spec.static, ours.static),
    ):
        missing = [c for c in theirs if c not in mine]
        if missing:
            raise DataError(
                f"{bars_path}: cannot produce the model's {group} feature {missing[0]!r} "
                "(model trained with a different feature set)"
            )
    missing = [c for c in spec.inputs if c not in scaler.columns]
    if missing:
        raise DataError(f"scaler params lack the model's input {missing[0]!r}")
    if spec.warmup != ours.warmup:
        log.warning("model warm-up %d differs from this version's %d", spec.warmup, ours.warmup)
    columns = ["ts", "symbol", *spec.inputs, *(spec.targets if with_target else ())]
    ahead = None if with_target else future_rows(bars, spec, horizon, columns, calendars, future)

    def table(symbol: str, part: pl.DataFrame) -> pl.DataFrame:
        feats = compute_features(
            part, horizon, with_targets=with_target, instruments=instruments, inputs=inputs
        ).select(columns)
        if ahead is None:
            return feats
        mine = ahead.filter(pl.col("symbol") == symbol).cast(feats.schema)  # type: ignore[arg-type]
        return pl.concat([feats, mine], how="vertical")

    # One symbol's feature table at a time: the peak is the window arrays once (by_symbol.py).
    return windows_by_symbol(
        bars,
        table,
        spec,
        encoder_length,
        horizon,
        with_target=with_target,
        scaler=scaler,
        calendars=calendars,
        spill=spill,
    )


def evaluation_windows(
    bars: Path,
    cfg: RunConfig,
    spec: FeatureSpec,
    scaler: ScalerParams,
    fingerprint: str,
    instruments: Mapping[str, Instrument] | None = None,
    allow_outliers: bool = False,
    ends: Mapping[str, dt.datetime] | None = None,
) -> tuple[WindowDataset, str]:
    """The windows a model is scored on: the test split if ``bars`` are the bars it was trained
    on (same ``fingerprint``), else the windows whose origin is after the training bars' end
    (``ends``, the run's ``data_end``: :func:`evaluation_data`'s ``new``; without it other bars
    are refused).

    The bars are read once; for the training bars only the test split's windows are built.
    Implausible bars are kept when ``allow_outliers`` or the run was trained keeping them.

    Returns:
        ``(windows with targets, description of the split)``.
    """
    windows, split, _ = evaluation_data(
        bars, cfg, spec, scaler, fingerprint, instruments, allow_outliers, ends=ends
    )
    return windows, split


def evaluation_data(
    bars: Path,
    cfg: RunConfig,
    spec: FeatureSpec,
    scaler: ScalerParams,
    fingerprint: str,
    instruments: Mapping[str, Instrument] | None = None,
    allow_outliers: bool = False,
    scope: WindowScope | None = None,
    ends: Mapping[str, dt.datetime] | None = None,
    spill: Path | None = None,
    check: Callable[[pl.DataFrame], None] | None = None,
) -> tuple[WindowDataset, str, pl.DataFrame]:
    """The windows ``evaluate`` scores (:mod:`foxhunt.data.windows.scope`), a description of
    them, and the bars' ``symbol``, ``ts``, ``close`` (what the classical baselines filter up to
    each window's origin).

    Args:
        scope: ``new``, ``test`` or ``all``; None: ``test`` for the training bars themselves
            (same fingerprint), else ``new``.
        ends: The run's training end per symbol (``data_end`` in ``run.json``); None for a run
            that did not record it (``new`` is then refused).
        spill: As for :func:`prepare_inference_data` (``new`` and ``all``); for ``test``, as
            for :func:`windows_of_test_split`.
        check: Called with the bars' ``symbol``, ``ts``, ``close`` once read, before the
            windows are scoped (the bar interval: bars of another interval are refused for
            that, not for holding nothing new to score).

    Raises:
        InputError: ``test`` on other bars than the training bars; ``new`` without ``ends``.
        DataError: No window left to score (the message names the ``--windows`` that has some).
    """
    m = cfg.model
    need, why = inference_bars_needed(spec, m.encoder_length, m.horizon, with_target=True)
    allow = allow_outliers or cfg.data.allow_outliers
    frame, _ = read_run_bars(
        bars,
        cfg.data,
        min_bars=need,
        reason=why,
        allow_outliers=allow,
        drop_short=True,
        instruments=instruments,
    )
    closes = frame.select("symbol", "ts", "close")
    if check is not None:
        check(closes)
    same = bars_fingerprint(frame) == fingerprint
    scope = scope or ("test" if same else "new")
    if scope == "test":
        if not same:
            raise InputError(
                f"--windows test: {bars} are not the bars the model was trained on (another "
                "data fingerprint), so they have no test split; use --windows new or all"
            )
        test, refit = windows_of_test_split(frame, cfg, instruments, spill=spill)
        if not _same_scaler(refit, scaler):
            raise ModelDirError(
                f"the scaler refitted on {bars} differs from the model's "
                "although the bars are the same (feature code changed since training?)"
            )
        return test, "test split of the training bars", closes
    if scope == "new" and ends is None:
        raise InputError(
            "--windows new: the run does not record where its training bars end (trained "
            "before foxhunt stored it); --windows all scores every window, training windows "
            "included"
        )
    windows = prepare_inference_data(
        frame,
        spec,
        scaler,
        m.encoder_length,
        m.horizon,
        with_target=True,
        instruments=instruments,
        inputs=cfg.data,
        spill=spill,
    )
    inside = before_end(windows, ends) if ends is not None else None
    n_inside = len(windows) if same else int(inside.sum()) if inside is not None else None
    if scope == "all":
        if n_inside:
            log.warning(
                "--windows all: %d of %d windows have their forecast origin inside the training "
                "bars%s: the model was fitted or early-stopped on most of them; the scores flatter it",
                n_inside, len(windows), f" (before {end_text(ends)})" if ends else "",
            )  # fmt: skip
        elif n_inside is None:
            log.warning(
                "--windows all: the run does not record where its training bars end; any "
                "window inside them is scored too"
            )
        return windows, "all windows", closes
    assert inside is not None and ends is not None
    n_new = len(windows) - int(inside.sum())
    if n_new == 0:
        hint = "--windows test scores their test split" if same else "--windows all scores them"
        raise DataError(
            f"{bars}: all {len(windows)} windows have their forecast origin before the training "
            f"bars end ({end_text(ends)}): nothing new to score; {hint}"
        )
    if inside.any():
        log.warning(
            "left out %d of %d windows whose forecast origin is before the training bars end "
            "(%s): the model was trained on them (or they precede its training bars, which "
            "is not out of time either); --windows all scores them too",
            int(inside.sum()), len(windows), end_text(ends),
        )  # fmt: skip
        windows = windows.subset(~inside)
    return windows, "windows after the training bars", closes


def _same_scaler(a: ScalerParams, b: ScalerParams, rel: float = 1e-6) -> bool:
    """Equal up to float summation order (a refit may add in a different order)."""
    pairs = [(a.mean, b.mean), (a.std, b.std), (a.target_std, b.target_std)]
    return a.columns == b.columns and all(
        len(x) == len(y)
        and all(math.isclose(u, v, rel_tol=rel, abs_tol=1e-12) for u, v in zip(x, y, strict=True))
        for x, y in pairs
    )
