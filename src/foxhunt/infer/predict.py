"""``foxhunt predict``: quantile forecasts for every origin, streamed to Parquet.

One row per symbol x origin x horizon: ``symbol``, ``origin_ts`` (the last bar the model saw),
``horizon`` (1..H), ``close`` (at the origin), ``return_q{level}`` (log-return quantiles) and
``price_q{level}`` (implied prices ``close * exp(q)``) for every quantile level. Quantiles are
sorted per row (the model does not force monotonicity).

Batches are forwarded and written one at a time with a ``pyarrow.parquet.ParquetWriter`` into
``<out>.tmp``, renamed over ``<out>`` at the end: memory stays flat however many origins there
are, and a crash never leaves a half-written forecast under the final name.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import torch
from rich.progress import Progress

from foxhunt.artifacts.rundir import LoadedModel, with_user_instruments
from foxhunt.data.bars import read_bars
from foxhunt.data.pipeline import inference_bars_needed, prepare_inference_data
from foxhunt.data.windows import WindowDataset
from foxhunt.errors import DataError, InputError
from foxhunt.infer.quantiles import quantile_map, tft_quantiles
from foxhunt.infer.untrained import check_trained_symbols
from foxhunt.quantize.model import load_inference_model
from foxhunt.runtime import atomic_path, parse_device

log = logging.getLogger(__name__)


def quantile_columns(quantiles: tuple[float, ...]) -> tuple[list[str], list[str]]:
    """``(["return_q0.02", ...], ["price_q0.02", ...])``."""
    return [f"return_q{q:g}" for q in quantiles], [f"price_q{q:g}" for q in quantiles]


def forecast_schema(quantiles: tuple[float, ...]) -> pa.Schema:
    """The output table's schema."""
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


@torch.inference_mode()
def write_forecasts(
    loaded: LoadedModel,
    windows: WindowDataset,
    closes: np.ndarray,
    out: Path,
    *,
    batch_size: int,
    device: torch.device,
    progress: Progress | None = None,
) -> int:
    """Forecast every window and stream the rows to ``out`` (atomically).

    Args:
        loaded: The model directory.
        windows: Windows without targets (``prepare_inference_data(with_target=False)``).
        closes: (N,) close at each window's origin.
        out: Target ``.parquet`` path.
        batch_size: Windows per forward pass (and per written row group).
        device: Where the model is.
        progress: Progress bars.

    Returns:
        Rows written (windows x H).
    """
    m = loaded.config.model
    q_levels, horizon = m.quantiles, m.horizon
    ret_cols, price_cols = quantile_columns(q_levels)
    schema = forecast_schema(q_levels)
    origins = windows.origins()
    n = len(windows)
    rows = 0
    task = progress.add_task("predict", total=n) if progress else None
    loaded.model.eval()
    qmap = quantile_map(loaded)
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
                )  # (B, H, Q) sorted log returns
                q = q.numpy().reshape(-1, len(q_levels))  # (B*H, Q)
                close = np.repeat(closes[a:b], horizon)  # (B*H,)
                price = close[:, None] * np.exp(q)
                part = origins.slice(a, b - a)
                origin_us = np.repeat(part["ts"].dt.epoch("us").to_numpy(), horizon)
                columns = {
                    "symbol": np.repeat(part["symbol"].to_numpy(), horizon),
                    "origin_ts": pa.array(origin_us, pa.int64()).cast(pa.timestamp("us", "UTC")),
                    "horizon": np.tile(np.arange(1, horizon + 1, dtype=np.int16), b - a),
                    "close": close,
                    **{c: q[:, j] for j, c in enumerate(ret_cols)},
                    **{c: price[:, j] for j, c in enumerate(price_cols)},
                }
                writer.write_table(pa.table(columns, schema=schema))
                rows += (b - a) * horizon
                if progress is not None and task is not None:
                    progress.update(task, advance=b - a)
    return rows


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

    Returns:
        ``(rows written, origins, horizons)``: one row per origin and horizon.

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
    loaded = with_user_instruments(load_inference_model(model_dir, dev), instruments)
    m = loaded.config.model
    need, why = inference_bars_needed(loaded.spec, m.encoder_length, m.horizon, with_target=False)
    allow = allow_outliers or loaded.config.data.allow_outliers
    frame = read_bars(
        bars, min_bars=need, min_bars_reason=why, tz=loaded.config.data.tz, allow_outliers=allow
    )
    check_trained_symbols(loaded, frame["symbol"].unique().to_list(), strict=strict)
    windows = prepare_inference_data(
        frame,
        loaded.spec,
        loaded.scaler,
        m.encoder_length,
        m.horizon,
        with_target=False,
        instruments=loaded.instruments,
    )
    if len(windows) == 0:
        raise DataError(
            f"{bars}: fewer bars than one {m.encoder_length}-bar encoder window after the warm-up"
        )
    closes = origin_closes(frame, windows)
    rows = write_forecasts(
        loaded, windows, closes, out, batch_size=batch_size, device=dev, progress=progress
    )
    return rows, len(windows), m.horizon
