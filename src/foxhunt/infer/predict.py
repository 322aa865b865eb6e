"""``foxhunt predict``: quantile forecasts for every origin, streamed to Parquet.

One row per symbol x origin x horizon: ``symbol``, ``origin_ts`` (the last bar the model saw),
``horizon`` (1..H), ``target_ts`` (the time of the bar forecast: the h-th bar after the origin
in the bars, past the last one the instrument's calendar's, on the bars' own grid:
:mod:`foxhunt.infer.targets`), ``close`` (at the origin),
``return_q{level}`` (log-return quantiles) and ``price_q{level}`` (implied prices
``close * exp(q)``) for every quantile level, then ``realised_close`` and ``realised_return``
(``log(realised_close / close)``) where the bars hold the target bar, else null. Quantiles are
sorted per row (the model does not force monotonicity). ``long=True`` writes one row per
quantile instead: ``quantile``, ``return``, ``price`` in place of the per-level columns.

Batches are forwarded and written one at a time with a ``pyarrow.parquet.ParquetWriter`` into
``<out>.tmp``, renamed over ``<out>`` at the end: memory stays flat however many origins there
are, and a crash never leaves a half-written forecast under the final name.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import torch
from rich.progress import Progress

from foxhunt.artifacts.data_end import read_data_end
from foxhunt.artifacts.rundir import LoadedModel, with_read_flags, with_user_instruments
from foxhunt.data.features.inputs import read_run_bars
from foxhunt.data.features.targets import target_column
from foxhunt.data.pipeline import inference_bars_needed, prepare_inference_data
from foxhunt.data.windows.by_symbol import scratch_for
from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.data.windows.scope import before_end, end_text
from foxhunt.errors import DataError, InputError
from foxhunt.infer.bar_interval import check_bar_interval
from foxhunt.infer.bartail import VALUE_COLUMNS
from foxhunt.infer.quantiles import plain_forward, quantile_map, tft_quantiles
from foxhunt.infer.row_forward import row_forward
from foxhunt.infer.targets import forecast_targets
from foxhunt.infer.untrained import check_trained_symbols
from foxhunt.quantize.model import load_inference_model
from foxhunt.runtime import atomic_path, parse_device

log = logging.getLogger(__name__)


def quantile_columns(quantiles: tuple[float, ...]) -> tuple[list[str], list[str]]:
    """``(["return_q0.02", ...], ["price_q0.02", ...])``."""
    return [f"return_q{q:g}" for q in quantiles], [f"price_q{q:g}" for q in quantiles]


def forecast_schema(quantiles: tuple[float, ...]) -> pa.Schema:
    """The streaming ``Forecaster``'s table: key, close and one column per quantile level."""
    ret, price = quantile_columns(quantiles)
    return pa.schema(
        [
            ("symbol", pa.string()),
            ("origin_ts", pa.timestamp("us", tz="UTC")),
            ("horizon", pa.int16()),
            ("close", pa.float64()),
            *[(c, pa.float64()) for c in ret],
            *[(c, pa.float64()) for c in price],
        ]
    )


def forecast_frame(
    symbols: Sequence[str],
    origins_us: np.ndarray,
    closes: Sequence[float] | np.ndarray,
    q: np.ndarray,
    quantiles: tuple[float, ...],
) -> pl.DataFrame:
    """The streaming forecast table (:func:`forecast_schema`) of (B, H, Q) log-return
    quantiles ``q`` of ``symbols`` at their origins (µs) with the closes there."""
    B, H, Q = q.shape
    ret_cols, price_cols = quantile_columns(quantiles)
    close = np.repeat(np.asarray(closes, np.float64), H)  # (B*H,)
    flat = q.reshape(B * H, Q)
    # one (2Q + 1, B*H) block, each column a contiguous row: built Series by Series (a dict of
    # numpy columns costs polars several times more per column, felt at one symbol per update)
    block = np.concatenate([close[None], flat.T, close[None] * np.exp(flat.T)])
    names = ("close", *ret_cols, *price_cols)
    return pl.DataFrame(
        [
            pl.Series("symbol", [s for s in symbols for _ in range(H)], dtype=pl.String),
            pl.Series("origin_ts", np.repeat(np.asarray(origins_us, np.int64), H)).cast(
                pl.Datetime("us", "UTC")
            ),
            pl.Series("horizon", np.tile(np.arange(1, H + 1, dtype=np.int16), B)),
            *[pl.Series(name, block[j]) for j, name in enumerate(names)],
        ]
    )


def predict_schema(quantiles: tuple[float, ...], *, long: bool = False) -> pa.Schema:
    """The table ``foxhunt predict`` writes (wide: a column per level; long: a row per level)."""
    ret, price = quantile_columns(quantiles)
    values = (
        [("quantile", pa.float64()), ("return", pa.float64()), ("price", pa.float64())]
        if long
        else [(c, pa.float64()) for c in (*ret, *price)]
    )
    return pa.schema(
        [
            ("symbol", pa.string()),
            ("origin_ts", pa.timestamp("us", tz="UTC")),
            ("horizon", pa.int16()),
            ("target_ts", pa.timestamp("us", tz="UTC")),
            ("close", pa.float64()),
            *values,
            ("realised_close", pa.float64()),
            ("realised_return", pa.float64()),
        ]
    )


def _arrow(values: np.ndarray | pa.Array) -> pa.Array:
    return values if isinstance(values, pa.Array) else pa.array(values)


def _utc(us: np.ndarray) -> pa.Array:
    return pa.array(us, pa.int64()).cast(pa.timestamp("us", "UTC"))


@torch.inference_mode()
def write_forecasts(
    loaded: LoadedModel,
    windows: WindowDataset,
    closes: np.ndarray,
    targets: pl.DataFrame,
    out: Path,
    *,
    batch_size: int,
    device: torch.device,
    progress: Progress | None = None,
    long: bool = False,
) -> int:
    """Forecast every window and stream the rows to ``out`` (atomically).

    Args:
        loaded: The model directory.
        windows: Windows without targets (``prepare_inference_data(with_target=False)``).
        closes: (N,) close at each window's origin.
        targets: N x H rows, window-major: ``target_ts`` and ``realised_close`` (nullable), as
            :func:`foxhunt.infer.targets.forecast_targets` gives them.
        out: Target ``.parquet`` path.
        batch_size: Windows per forward pass (and per written row group).
        device: Where the model is.
        progress: Progress bars.
        long: One row per quantile level instead of one column per level.

    Returns:
        Rows written (windows x H, times Q when ``long``).
    """
    m = loaded.config.model
    q_levels, horizon = m.quantiles, m.horizon
    n_q = len(q_levels)
    ret_cols, price_cols = quantile_columns(q_levels)
    schema = predict_schema(q_levels, long=long)
    origins = windows.origins()
    n = len(windows)
    if targets.height != n * horizon:
        raise ValueError(f"targets has {targets.height} rows, expected {n} x {horizon}")
    target_us = targets["target_ts"].dt.epoch("us").to_numpy()
    realised = targets["realised_close"].to_numpy().astype(np.float64)  # null -> nan
    rows = 0
    task = progress.add_task("predict", total=n) if progress else None
    loaded.model.eval()
    qmap = quantile_map(loaded)
    origin_rows = torch.from_numpy(windows.origin_rows())
    with atomic_path(out) as tmp:
        with pq.ParquetWriter(tmp, schema) as writer:
            for a in range(0, n, batch_size):
                b = min(a + batch_size, n)
                batch = windows.batch(list(range(a, b)))
                q = tft_quantiles(
                    loaded.model,
                    batch,
                    qmap,
                    device=device,
                    precision=loaded.config.train.precision,
                    # each encoder bar's variable selection once per batch (row_forward.py)
                    forward=row_forward(windows, origin_rows[a:b]) or plain_forward,
                )  # (B, H, Q) sorted log returns
                q = q.numpy().reshape(-1, n_q)  # (B*H, Q)
                close = np.repeat(closes[a:b], horizon)  # (B*H,)
                price = close[:, None] * np.exp(q)
                part = origins.slice(a, b - a)
                seen = realised[a * horizon : b * horizon]
                key = {
                    "symbol": np.repeat(part["symbol"].to_numpy(), horizon),
                    "origin_ts": _utc(np.repeat(part["ts"].dt.epoch("us").to_numpy(), horizon)),
                    "horizon": np.tile(np.arange(1, horizon + 1, dtype=np.int16), b - a),
                    "target_ts": _utc(target_us[a * horizon : b * horizon]),
                    "close": close,
                }
                after = {
                    "realised_close": pa.array(seen, from_pandas=True),  # nan -> null
                    "realised_return": pa.array(np.log(seen / close), from_pandas=True),
                }
                if long:  # each (origin, horizon) row once per level, levels innermost
                    every = np.repeat(np.arange(len(close)), n_q)
                    columns = {k: _arrow(v).take(every) for k, v in (key | after).items()}
                    columns |= {
                        "quantile": np.tile(np.asarray(q_levels, dtype=np.float64), len(close)),
                        "return": q.reshape(-1),
                        "price": price.reshape(-1),
                    }
                else:
                    columns = {
                        **key,
                        **{c: q[:, j] for j, c in enumerate(ret_cols)},
                        **{c: price[:, j] for j, c in enumerate(price_cols)},
                        **after,
                    }
                table = pa.table({f.name: columns[f.name] for f in schema}, schema=schema)
                writer.write_table(table)
                rows += table.num_rows
                if progress is not None and task is not None:
                    progress.update(task, advance=b - a)
    return rows


def _warn_in_sample(loaded: LoadedModel, windows: WindowDataset) -> None:
    """One warning when forecast origins lie before the training bars end: their realised_*
    are bars the model was fitted or early-stopped on (``evaluate --windows new`` leaves them
    out; predict forecasts them, silently until session 44)."""
    ends = read_data_end(loaded.run)
    if not ends:
        return
    inside = int(before_end(windows, ends).sum())
    if inside:
        log.warning(
            "%d of %d forecast origins are before the training bars end (%s): their realised_* "
            "lie in the training period (in-sample for the symbols the model was trained on), "
            "or before it",
            inside,
            len(windows),
            end_text(ends),
        )


def anchor_column(target: str) -> int:
    """Which of the bars' ``open high low close volume`` a forecast's prices are anchored on:
    the target's own column for a price target of the bar (``--target high``: 1; the rows'
    ``close`` and ``price_q*`` are then of the high, as in ``foxhunt predict``), else the close
    (3), with one warning for a ``return:COLUMN`` or extra-column target."""
    column, is_return = target_column(target)
    if not is_return and column in VALUE_COLUMNS[:4]:
        if column != "close":
            log.warning(
                "--target %s: the forecasts' close and price_q* are of column %r (the target), "
                "not of the close",
                target,
                column,
            )
        return VALUE_COLUMNS.index(column)
    log.warning(
        "--target %s: close and price_q* are of the close, not comparable with return_q*", target
    )
    return 3


def target_base(bars: pl.DataFrame, target: str) -> pl.DataFrame:
    """The bars with ``close`` replaced by a price target's column (``--target high``), so the
    rows' ``close``, ``price_q*`` and ``realised_*`` are of what ``return_q*`` forecast: they
    were of the close, beside high-to-high returns, without a word. One warning says so; for a
    ``return:COLUMN`` target it says they are not comparable."""
    column, is_return = target_column(target)
    if column == "close" and not is_return:
        return bars
    if is_return:
        log.warning(
            "--target %s: return_q* forecast the sum of column %r over h bars; close, price_q* "
            "and realised_* are of the close, not comparable with them",
            target,
            column,
        )
        return bars
    log.warning(
        "--target %s: the rows' close, price_q* and realised_* are of column %r (the target), "
        "not of the close",
        target,
        column,
    )
    return bars.with_columns(pl.col(column).cast(pl.Float64).alias("close"))


def origin_closes(bars: pl.DataFrame, windows: WindowDataset) -> np.ndarray:
    """Close at each window's origin bar, by (symbol, ts) lookup in the bars."""
    frame = bars.select("symbol", "ts", "close")
    origins = windows.origins().with_row_index("__w")
    joined = origins.join(frame, on=["symbol", "ts"], how="left").sort("__w")
    if joined["close"].null_count():
        bad = joined.filter(pl.col("close").is_null()).row(0, named=True)
        raise DataError(f"{bars}: no bar for origin {bad['symbol']} {bad['ts']}")
    return joined["close"].to_numpy().astype(np.float64)


def predict_to_file(
    model_dir: Path,
    bars: Path,
    out: Path,
    *,
    batch_size: int,
    device: str,
    progress: Progress | None = None,
    instruments: Path | None = None,
    strict: bool = False,
    allow_outliers: bool = False,
    long: bool = False,
    read: Mapping[str, Any] | None = None,
) -> tuple[int, int, int]:
    """Write quantile forecasts for every origin in ``bars`` to ``out`` (``foxhunt predict``).

    Args:
        model_dir: The run directory.
        bars: Bars file, directory or glob (no future needed: the last bar of each symbol is an
            origin too).
        out: Output ``.parquet``.
        batch_size: Windows per forward pass.
        device: Torch device string.
        progress: A rich progress display to advance, or None.
        instruments: the user's instrument table, for symbols the run did not store.
        strict: Refuse symbols the model was not trained on (else one warning names them).
        allow_outliers: keep implausible bars (always, if the run was trained keeping them).
        long: one row per quantile level (``quantile``, ``return``, ``price``) instead of one
            column per level.
        read: read flags (``DataConfig`` fields: ``tz``, ``symbol`` ...) over the run's own
            (:func:`~foxhunt.artifacts.rundir.with_read_flags`).

    Returns:
        ``(rows written, origins, horizons)``: one row per origin and horizon (times the
        quantile levels with ``long``).

    Raises:
        ModelDirError: Missing/corrupt/mismatched run directory.
        DataError: Bad bars, too few for one window.
        InputError: Bad arguments; untrained symbols with ``strict``.
    """
    if batch_size < 1:
        raise InputError(f"--batch-size must be >= 1, got {batch_size}")
    out = Path(out)
    if out.suffix.lower() not in (".parquet", ".pq"):
        raise InputError(f"--out {out}: predictions are written as Parquet (.parquet)")
    if not out.parent.exists():
        raise InputError(f"--out {out}: directory {out.parent} does not exist")
    dev = parse_device(device)
    loaded = with_read_flags(
        with_user_instruments(load_inference_model(model_dir, dev), instruments), read
    )
    m = loaded.config.model
    need, why = inference_bars_needed(loaded.spec, m.encoder_length, m.horizon, with_target=False)
    allow = allow_outliers or loaded.config.data.allow_outliers
    frame, future = read_run_bars(
        bars,
        loaded.config.data,
        min_bars=need,
        reason=why,
        allow_outliers=allow,
        drop_short=True,
        instruments=loaded.instruments,
    )
    check_trained_symbols(loaded, frame["symbol"].unique().to_list(), strict=strict)
    check_bar_interval(loaded.run, frame, bars)
    windows = prepare_inference_data(
        frame,
        loaded.spec,
        loaded.scaler,
        m.encoder_length,
        m.horizon,
        with_target=False,
        instruments=loaded.instruments,
        inputs=loaded.config.data,
        future=future,
        spill=scratch_for(Path(model_dir)),
    )
    if len(windows) == 0:
        raise DataError(
            f"{bars}: fewer bars than one {m.encoder_length}-bar encoder window after the warm-up"
        )
    _warn_in_sample(loaded, windows)
    base = target_base(frame, loaded.config.data.target)
    closes = origin_closes(base, windows)
    targets = forecast_targets(base, windows.origins(), m.horizon, windows.calendars)
    rows = write_forecasts(
        loaded,
        windows,
        closes,
        targets,
        out,
        batch_size=batch_size,
        device=dev,
        progress=progress,
        long=long,
    )
    return rows, len(windows), m.horizon
