"""Streaming forecasts: feed bars as they arrive, get quantile forecasts for the latest origin.

::

    fc = Forecaster.load("runs/es")            # fp32 or quantised model directory
    out = fc.update(bars)                      # pl.DataFrame of new bars, any symbols
    # out: one row per (symbol with new bars) x horizon, the schema of `foxhunt predict`

Per symbol the forecaster keeps only the raw bars the next forecast needs (see
:mod:`foxhunt.infer.bartail`: warm-up + encoder + smoother memory, about 1,450 bars at
TFT-225, extended to the start of the current trading session when needed) and recomputes
the features on that tail with the very functions ``foxhunt predict`` uses, so a forecast from
streamed bars equals the batch forecast at the same origin (to about 1e-6 relative; see the
``bartail`` docstring for why not bit for bit). Nothing else is cached: memory is bounded by the
number of symbols, however long it runs.

Bad input raises :class:`~foxhunt.errors.DataError` naming the row, symbol and time, and leaves
the forecaster unchanged (a rejected update is all or nothing):

* a bar at or before the last bar held for its symbol (out of order, or a duplicate);
* bars of one symbol out of time order, or repeated, within one update;
* a symbol whose futures root has no static features (unknown to foxhunt), or one outside
  the forecaster's ``symbols`` (given, or the training symbols when ``run.json`` records
  them);
* missing/non-finite values, non-positive prices, negative volume, high/low inconsistent with
  open/close.

A symbol gets forecasts once it has ``warm-up + encoder`` bars; until then ``update`` returns
no rows for it (see :meth:`Forecaster.ready`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import torch

from foxhunt.artifacts.rundir import LoadedModel, trained_symbols
from foxhunt.data.calendar import trading_date
from foxhunt.data.calendar_decoder import GLOBEX
from foxhunt.data.features import compute_features
from foxhunt.data.instruments import resolve_bars
from foxhunt.data.pipeline import calendars_of, future_rows
from foxhunt.data.validate import check_values
from foxhunt.data.windows import WindowDataset
from foxhunt.errors import DataError
from foxhunt.infer.bar_frame import canonical_bars, polars_bars
from foxhunt.infer.bartail import VALUE_COLUMNS, BarTail, smoother_memory
from foxhunt.infer.predict import forecast_schema, quantile_columns
from foxhunt.infer.quantiles import quantile_map, tft_quantiles
from foxhunt.quantize.model import load_inference_model

log = logging.getLogger(__name__)

WHERE = "Forecaster.update"
"""How error messages name the input."""


class Forecaster:
    """Quantile forecasts for the latest bar of each symbol, updated as bars arrive.

    Args:
        loaded: A loaded model directory (:func:`foxhunt.quantize.model.load_inference_model`).
        history: Raw bars kept per symbol; default warm-up + encoder + :func:`smoother_memory`.
            Shorter is faster and approximate (the recursive smoothers have not forgotten
            their start); it must be at least warm-up + encoder.
        symbols: If given, the only symbols accepted (others raise DataError).
        device: Where the model runs.

    Raises:
        ValueError: ``history`` shorter than warm-up + encoder.
    """

    def __init__(
        self,
        loaded: LoadedModel,
        *,
        history: int | None = None,
        symbols: Iterable[str] | None = None,
        device: torch.device | str = "cpu",
    ) -> None:
        self.loaded = loaded
        m = loaded.config.model
        self.encoder_length = m.encoder_length
        self.horizon = m.horizon
        self.warmup = loaded.spec.warmup
        minimum = self.warmup + self.encoder_length
        self.history = minimum + smoother_memory() if history is None else int(history)
        if self.history < minimum:
            raise ValueError(f"history must be >= warm-up + encoder = {minimum}, got {history}")
        self.allowed = None if symbols is None else frozenset(symbols)
        # Each symbol's instrument, as trained (None: a run from before calendars, all globex);
        # a symbol the run never saw is resolved once, at first sight, and kept.
        self._instruments = None if loaded.instruments is None else dict(loaded.instruments)
        self.device = torch.device(device)
        self._qmap = quantile_map(loaded)
        self._tails: dict[str, BarTail] = {}
        self._ret_cols, self._price_cols = quantile_columns(m.quantiles)

    @classmethod
    def load(
        cls,
        run_dir: Path | str,
        *,
        history: int | None = None,
        symbols: Iterable[str] | None = None,
        device: torch.device | str = "cpu",
    ) -> Forecaster:
        """Load a model directory (fp32 or quantised) into a forecaster with no bars yet.

        Args:
            run_dir: The model directory.
            history: See the class docstring.
            symbols: See the class docstring; default: the symbols the model was trained on
                when the run directory records them (``run.json`` ``symbols`` or
                ``instruments.json``), else any symbol with a known futures root.
            device: Where the model runs.

        Returns:
            The forecaster.

        Raises:
            ModelDirError: Missing, corrupt or inconsistent model directory.
        """
        loaded = load_inference_model(Path(run_dir), device)
        if symbols is None:
            symbols = trained_symbols(loaded.run)
        return cls(loaded, history=history, symbols=symbols, device=device)

    # --- state -----------------------------------------------------------------------------

    @property
    def symbols(self) -> tuple[str, ...]:
        """Symbols seen so far, sorted."""
        return tuple(sorted(self._tails))

    @property
    def held_bytes(self) -> int:
        """Bytes of raw bars held for all symbols (the model's weights not included)."""
        return sum(t.nbytes for t in self._tails.values())

    def held_bars(self, symbol: str) -> int:
        """Raw bars held for ``symbol`` (0 if never seen)."""
        tail = self._tails.get(symbol)
        return len(tail) if tail is not None else 0

    def last_ts(self, symbol: str) -> int | None:
        """Time of the latest bar held for ``symbol`` (epoch µs UTC; None if never seen)."""
        tail = self._tails.get(symbol)
        return tail.last_ts if tail is not None else None

    def ready(self, symbol: str) -> bool:
        """Whether ``symbol`` has enough bars for a forecast (warm-up + encoder)."""
        tail = self._tails.get(symbol)
        return tail is not None and self._is_ready(tail)

    def _is_ready(self, tail: BarTail) -> bool:
        return len(tail) >= self.warmup + self.encoder_length

    # --- updates ---------------------------------------------------------------------------

    def update(self, bars: pl.DataFrame | Any, *, forecast: bool = True) -> pl.DataFrame:
        """Add new bars and forecast from the latest bar of every symbol that got one.

        Args:
            bars: A polars or pandas DataFrame with ``ts`` (datetime; naive means UTC),
                ``symbol``, ``open high low close volume`` under any spelling a bars file may
                use (``timestamp``, ``datetime``, ``Open``...; a pandas ``DatetimeIndex`` is
                the time); any number of rows and symbols,
                each symbol's rows in time order and after the bars already given for it.
            forecast: False only ingests (e.g. a backlog), returning an empty frame.

        Returns:
            The forecasts, schema of ``foxhunt predict`` (``symbol origin_ts horizon close
            return_q* price_q*``), one row per ready symbol in ``bars`` x horizon, sorted by
            symbol and horizon.

        Raises:
            DataError: Bad input (see the module docstring); nothing is changed then.
        """
        chunk = _normalise(bars)
        groups = self._check(chunk)
        self._resolve(chunk)
        session = _session(calendars_of(self._instruments)).cast(pl.Int32).alias("__session")
        groups = {sym: part.with_columns(session) for sym, part in groups.items()}
        candidates = {
            sym: self._tails.get(sym, BarTail()).extended(
                part["ts"].dt.epoch("us").to_numpy(),
                part.select(VALUE_COLUMNS).to_numpy().astype(np.float64),
                part["__session"].to_numpy().astype(np.int32),
                keep=self.history,
                encoder_length=self.encoder_length,
            )
            for sym, part in groups.items()
        }
        ready = sorted(s for s, tail in candidates.items() if self._is_ready(tail))
        out = self._forecast(ready, candidates) if forecast and ready else self._empty()
        self._tails.update(candidates)  # only now: a failed update changes nothing
        return out

    def forecast(self, symbols: Iterable[str] | None = None) -> pl.DataFrame:
        """Forecasts from the latest bar held for ``symbols``.

        Args:
            symbols: Which symbols (default: every symbol seen); those not ready, or never
                seen, are left out.

        Returns:
            The schema of :meth:`update`.
        """
        wanted = self._tails if symbols is None else symbols
        ready = sorted(s for s in wanted if self.ready(s))
        return self._forecast(ready, self._tails) if ready else self._empty()

    def _empty(self) -> pl.DataFrame:
        return pl.DataFrame(schema=pl.Schema(forecast_schema(self.loaded.config.model.quantiles)))

    def _check(self, chunk: pl.DataFrame) -> dict[str, pl.DataFrame]:
        """Validate a normalised chunk against itself and the held tails; group by symbol."""
        chunk = chunk.with_row_index("__row")
        for sym in chunk["symbol"].unique(maintain_order=True).to_list():
            if self.allowed is not None and sym not in self.allowed:
                raise DataError(
                    f"{WHERE}: symbol {sym!r} is not one this forecaster serves "
                    f"({', '.join(sorted(self.allowed))})"
                )
        step = pl.col("ts").diff().over("symbol")
        bad = chunk.filter(step <= pl.duration())
        if bad.height:
            row = bad.row(0, named=True)
            what = (
                "duplicate bar"
                if chunk.filter(
                    (pl.col("symbol") == row["symbol"]) & (pl.col("ts") == row["ts"])
                ).height
                > 1
                else "bar out of time order"
            )
            raise DataError(
                f"{WHERE}: row {row['__row']}, symbol {row['symbol']!r}, ts {row['ts']}: {what} "
                "within the update"
            )
        groups = {}
        for (sym,), part in chunk.group_by("symbol", maintain_order=True):
            last = self._tails[sym].last_ts if sym in self._tails else None
            first = part.row(0, named=True)
            if last is not None and int(part["ts"].dt.epoch("us")[0]) <= last:
                held = pl.Series([last]).cast(pl.Datetime("us")).dt.replace_time_zone("UTC")[0]
                what = (
                    "duplicate bar"
                    if int(part["ts"].dt.epoch("us")[0]) == last
                    else "bar out of time order"
                )
                raise DataError(
                    f"{WHERE}: row {first['__row']}, symbol {sym!r}, ts {first['ts']}: {what} "
                    f"(the last bar already given for {sym!r} is at {held})"
                )
            groups[str(sym)] = part
        return groups

    def _resolve(self, chunk: pl.DataFrame) -> None:
        """Resolve (once) the instrument of each symbol of ``chunk`` the run did not store."""
        if self._instruments is None:
            return
        new = chunk.filter(~pl.col("symbol").is_in(list(self._instruments)))
        if new.height:
            self._instruments |= resolve_bars(new, self._instruments)

    @torch.inference_mode()
    def _forecast(self, symbols: list[str], tails: Mapping[str, BarTail]) -> pl.DataFrame:
        """Forecast from the latest bar of each of ``symbols`` (all ready) in ``tails``."""
        loaded = self.loaded
        spec, scaler = loaded.spec, loaded.scaler
        L, H = self.encoder_length, self.horizon
        bars = pl.concat([tails[s].frame(s) for s in symbols], how="vertical")
        feats = compute_features(
            bars, H, with_targets=False, instruments=self._instruments, inputs=loaded.config.data
        )
        columns = ["ts", "symbol", *spec.inputs]
        recent = feats.group_by("symbol", maintain_order=True).tail(L).select(columns)
        calendars = calendars_of(self._instruments)
        future = future_rows(bars, spec, H, columns, calendars)
        frame = pl.concat([recent, future.cast(recent.schema)], how="vertical").sort(  # type: ignore[arg-type]
            ["symbol", "ts"], maintain_order=True
        )
        # One window per symbol.
        windows = WindowDataset(
            frame, spec, L, H, with_target=False, scaler=scaler, calendars=calendars
        )
        batch = windows.batch(list(range(len(windows))))
        q = tft_quantiles(loaded.model, batch, self._qmap, device=self.device).numpy()  # (B, H, Q)
        origins = windows.origins()
        closes = {s: float(tails[s].values[-1, 3]) for s in symbols}
        close = np.repeat([closes[s] for s in origins["symbol"].to_list()], H)  # (B*H,)
        flat = q.reshape(-1, q.shape[-1])
        price = close[:, None] * np.exp(flat)
        out = pl.DataFrame(
            {
                "symbol": np.repeat(origins["symbol"].to_numpy(), H),
                "origin_ts": origins["ts"].to_numpy().repeat(H),
                "horizon": np.tile(np.arange(1, H + 1, dtype=np.int16), len(origins)),
                "close": close,
                **{c: flat[:, j] for j, c in enumerate(self._ret_cols)},
                **{c: price[:, j] for j, c in enumerate(self._price_cols)},
            }
        )
        return out.with_columns(
            pl.col("origin_ts").dt.replace_time_zone("UTC").dt.cast_time_unit("us")
        )


def _session(calendars: Mapping[str, str]) -> pl.Expr:
    """Each bar's trading date on its symbol's calendar (``globex`` when none is named)."""
    expr = trading_date(pl.col("ts"), GLOBEX)
    for cal in sorted(set(calendars.values()) - {GLOBEX}):
        syms = [s for s, c in calendars.items() if c == cal]
        expr = (
            pl.when(pl.col("symbol").is_in(syms))
            .then(trading_date(pl.col("ts"), cal))
            .otherwise(expr)
        )
    return expr


def _normalise(bars: pl.DataFrame | Any) -> pl.DataFrame:
    """Check columns and values; return ``ts`` (UTC µs), ``symbol`` and float64 values."""
    bars = canonical_bars(polars_bars(bars, WHERE))
    missing = [c for c in ("ts", "symbol", *VALUE_COLUMNS) if c not in bars.columns]
    if missing:
        raise DataError(
            f"{WHERE}: missing column {missing[0]!r} (columns: {', '.join(bars.columns)})"
        )
    ts = bars.schema["ts"]
    if not isinstance(ts, pl.Datetime):
        raise DataError(f"{WHERE}: column 'ts' must be a datetime, got {ts}")
    ts_expr = pl.col("ts").dt.replace_time_zone("UTC") if ts.time_zone is None else pl.col("ts")
    try:
        df = bars.select(
            ts_expr.dt.convert_time_zone("UTC").dt.cast_time_unit("us").alias("ts"),
            pl.col("symbol").cast(pl.String),
            *[pl.col(c).cast(pl.Float64) for c in VALUE_COLUMNS],
        )
    except pl.exceptions.PolarsError as e:
        raise DataError(f"{WHERE}: cannot read the bars ({str(e).splitlines()[0]})") from e
    check_values(df, WHERE)  # the one bar validator, as for files
    return df
