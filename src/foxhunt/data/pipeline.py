"""Bars file -> ready-to-train (or ready-to-forecast) window datasets.

Training: read and validate bars -> features and targets -> time splits with an embargo ->
scaler fitted on train -> scaled tables -> :class:`WindowDataset` per split.

Inference: the same features, scaled with the stored params. For forecasting
(``with_target=False``) each symbol gets H synthetic future rows after its last bar whose known
(calendar) features come from :func:`foxhunt.data.calendar.future_timestamps`; their other
columns are 0 and never read (observed inputs only cover the encoder).
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from foxhunt.config import RunConfig
from foxhunt.data.bars import read_bars
from foxhunt.data.calendar import future_timestamps, infer_interval, known_features
from foxhunt.data.features import FeatureSpec, compute_features, feature_spec
from foxhunt.data.scaling import ScalerParams, apply_scaler, fit_scaler
from foxhunt.data.splits import split_by_time
from foxhunt.data.windows import WindowDataset
from foxhunt.errors import DataError

log = logging.getLogger(__name__)


@dataclass
class PreparedData:
    """Everything training needs from the data side.

    Attributes:
        spec: feature names and warm-up (saved with the model).
        scaler: fitted on the training split (saved with the model).
        train: training windows (stride ``cfg.data.stride``).
        val: validation windows (stride 1).
        test: test windows (stride 1).
        fingerprint: sha256 of the bars' content (symbols, times, OHLCV).
    """

    spec: FeatureSpec
    scaler: ScalerParams
    train: WindowDataset
    val: WindowDataset
    test: WindowDataset
    fingerprint: str


def bars_fingerprint(bars: pl.DataFrame) -> str:
    """sha256 over a validated bars frame's content: symbols, timestamps and OHLCV values."""
    h = hashlib.sha256()
    counts = bars.group_by("symbol", maintain_order=True).len()
    for sym, n in counts.iter_rows():
        h.update(f"{sym}\x00{n}\x00".encode())
    h.update(np.ascontiguousarray(bars["ts"].dt.epoch("us").to_numpy()).tobytes())
    for c in ("open", "high", "low", "close", "volume"):
        h.update(np.ascontiguousarray(bars[c].to_numpy()).tobytes())
    return h.hexdigest()


def prepare_training_data(bars_path: Path, cfg: RunConfig) -> PreparedData:
    """Read bars and build scaled train/val/test window datasets.

    Args:
        bars_path: bars file, directory or glob.
        cfg: run config (encoder length, horizon, split fractions, embargo, stride).

    Returns:
        The prepared datasets with spec, scaler and bars fingerprint.

    Raises:
        DataError: bad bars, too few bars for warm-up + windows, or a split too short.
    """
    L, H = cfg.model.encoder_length, cfg.model.horizon
    spec = feature_spec(H)
    bars = read_bars(
        bars_path,
        min_bars=spec.warmup + L + H,
        min_bars_reason=f"warm-up {spec.warmup} + encoder {L} + horizon {H}",
    )
    fingerprint = bars_fingerprint(bars)
    feats = compute_features(bars, H)
    del bars
    embargo = cfg.data.embargo if cfg.data.embargo is not None else L + H
    splits = split_by_time(
        feats,
        val_fraction=cfg.data.val_fraction,
        test_fraction=cfg.data.test_fraction,
        embargo=embargo,
        min_rows=L + H,
    )
    del feats
    scaler = fit_scaler(splits.train, spec)

    # Scaled while the arrays are filled; each split's table is dropped once it is windowed.
    tables = [splits.train, splits.val, splits.test]
    del splits
    strides = [cfg.data.stride, 1, 1]
    datasets = []
    for _ in range(3):
        frame = tables.pop(0)
        datasets.append(WindowDataset(frame, spec, L, H, stride=strides.pop(0), scaler=scaler))
        del frame
    train, val, test = datasets
    return PreparedData(spec, scaler, train, val, test, fingerprint)


def future_rows(
    bars: pl.DataFrame,
    spec: FeatureSpec,
    scaler: ScalerParams,
    horizon: int,
    columns: list[str],
) -> pl.DataFrame:
    """H synthetic rows per symbol after its last bar: scaled known features, zeros elsewhere.

    The bar interval is inferred from each symbol's bars; future times follow the Globex
    calendar. Used by batch inference (:func:`prepare_inference_data`) and by the streaming
    ``Forecaster``, so both see the same future inputs.

    Args:
        bars: Validated bars (``symbol``, ``ts``), each symbol's rows in time order.
        spec: The model's feature names.
        scaler: The model's scaler (known features are scaled with it).
        horizon: H, rows appended per symbol.
        columns: Output column order.

    Returns:
        ``H * n_symbols`` rows with ``columns``.
    """
    syms: list[str] = []
    times: list[object] = []
    for (sym,), group in bars.group_by("symbol", maintain_order=True):
        syms += [str(sym)] * horizon
        times += future_timestamps(group["ts"][-1], horizon, infer_interval(group["ts"]))
    fut = pl.DataFrame(
        {"symbol": pl.Series(syms, dtype=pl.String), "ts": pl.Series(times)}
    ).with_columns(pl.col("ts").dt.convert_time_zone("UTC").dt.cast_time_unit("us"))
    fut = fut.with_columns(known_features(pl.col("ts")))
    pos = {c: i for i, c in enumerate(scaler.columns)}
    scaled_known = [
        ((pl.col(c) - scaler.mean[pos[c]]) / scaler.std[pos[c]]).cast(pl.Float32).alias(c)
        for c in spec.known
    ]
    zeros = [pl.lit(0.0, dtype=pl.Float32).alias(c) for c in (*spec.historical, *spec.static)]
    return fut.with_columns(scaled_known + zeros).select(columns)


def prepare_inference_data(
    bars_path: Path,
    spec: FeatureSpec,
    scaler: ScalerParams,
    encoder_length: int,
    horizon: int,
    *,
    with_target: bool,
) -> WindowDataset:
    """Windows for evaluation (``with_target=True``) or forecasting (``with_target=False``).

    Args:
        bars_path: bars file, directory or glob.
        spec: the model's feature spec (from its run directory).
        scaler: the model's scaler params.
        encoder_length: L.
        horizon: H.
        with_target: True: every origin with realised targets. False: every origin up to and
            including each symbol's last bar, decoded into H future bar times.

    Returns:
        The window dataset (stride 1); ``origins()`` gives symbol and origin time per window.

    Raises:
        DataError: bad bars, too few bars, or features that do not match ``spec``/``scaler``.
    """
    if len(spec.targets) != horizon:
        raise DataError(f"model spec has {len(spec.targets)} targets but horizon is {horizon}")
    # Targets drop each symbol's last H rows, and those windows still need H decoder rows.
    need = spec.warmup + encoder_length + (2 * horizon if with_target else 0)
    why = f"warm-up {spec.warmup} + encoder {encoder_length}"
    why += f" + 2 x horizon {horizon}" if with_target else ""
    bars = read_bars(bars_path, min_bars=need, min_bars_reason=why)
    feats = compute_features(bars, horizon, with_targets=with_target)
    ours = feature_spec(horizon)
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
    scaled = apply_scaler(feats.select(columns), scaler).select(columns)
    if not with_target:
        future = future_rows(bars, spec, scaler, horizon, columns)
        scaled = pl.concat([scaled, future.cast(scaled.schema)], how="vertical").sort(  # type: ignore[arg-type]
            ["symbol", "ts"], maintain_order=True
        )
    return WindowDataset(scaled, spec, encoder_length, horizon, with_target=with_target)
