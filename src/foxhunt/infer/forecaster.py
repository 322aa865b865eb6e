"""Streaming forecasts: feed bars as they arrive, get quantile forecasts for the latest origin.

::

    fc = Forecaster.load("runs/es")            # fp32 or quantised model directory
    out = fc.update(bars)                      # pl.DataFrame of new bars, any symbols
    # out: one row per (symbol with new bars) x horizon, the schema of `foxhunt predict`

Per symbol the forecaster keeps a fixed-size state (:mod:`foxhunt.infer.incremental`): the
observed features advance one bar at a time (ring buffers, smoother states, the session VWAP),
and the model's inputs of the last ``L`` bars are kept ready; an update of N symbols costs N
feature steps and one batched forward. Forecasts equal ``foxhunt predict`` at the same origin
(tests assert rtol 1e-4). :meth:`Forecaster.save` writes that state (atomically, versioned) and
``Forecaster.load(run, state=path)`` resumes it, without the backlog.

Runs with SQL feature lines, or a given ``history``, keep a bounded tail of raw bars instead
and recompute the features on it (:mod:`foxhunt.infer.bartail`). Runs that read covariate columns
(``--observed-cols`` ...) are refused: neither path carries a bar's extra columns (``foxhunt
predict`` forecasts them).

Bad input raises :class:`~foxhunt.errors.DataError` naming the row, symbol and time, and leaves
the forecaster unchanged (a rejected update is all or nothing):

* a bar at or before the last bar held for its symbol (out of order, or a duplicate);
* bars of one symbol out of time order, or repeated, within one update;
* a symbol whose futures root has no static features (unknown to foxhunt), or one outside
  the forecaster's ``symbols`` (given, or the training symbols when ``run.json`` records
  them);
* missing/non-finite values, non-positive prices, negative volume, high/low inconsistent with
  open/close;
* a bar less than half the trained interval after the bar before it, a symbol's gaps mostly of
  another interval, a high or low x10 from the close before it
  (:mod:`foxhunt.infer.stream_checks`).

A symbol gets forecasts once it has ``warm-up + encoder`` bars; until then ``update`` returns
no rows for it (see :meth:`Forecaster.ready`).
"""

from __future__ import annotations

import io
import logging
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import torch

from foxhunt.artifacts.ensemble import EnsembleTFT
from foxhunt.artifacts.rundir import LoadedModel, trained_symbols
from foxhunt.data.features.covariates import covariate_columns
from foxhunt.data.features.table import compute_features
from foxhunt.data.market.bars_market import resolve_bars
from foxhunt.data.market.calendars import DEFAULT_CALENDAR
from foxhunt.data.pipeline import calendars_of, future_rows
from foxhunt.data.read.zones import parse_zone
from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.errors import DataError, InputError
from foxhunt.infer.bar_input import (
    BarArrays,
    bar_arrays,
    check_order,
    fast_arrays,
    group_rows,
    normalise,
    session_expr,
)
from foxhunt.infer.bar_interval import trained_interval
from foxhunt.infer.bartail import VALUE_COLUMNS, BarTail, smoother_memory
from foxhunt.infer.closed_bars import closed_bar_lines
from foxhunt.infer.incremental.graphs import check_engine, live_graphs
from foxhunt.infer.incremental.selected import SelectedRows
from foxhunt.infer.incremental.stream import AHEAD, LiveState, supports, without_symbol
from foxhunt.infer.incremental.windows import RING
from foxhunt.infer.predict import anchor_column, forecast_frame, forecast_schema
from foxhunt.infer.quantiles import quantile_map, tft_quantiles
from foxhunt.infer.state_file import STATE_FORMAT, read_state_file, weights_digest
from foxhunt.infer.stream_checks import check_new_bars
from foxhunt.infer.targets import scheduled_targets
from foxhunt.model.batch import TFTBatch
from foxhunt.quantize.model import load_inference_model
from foxhunt.runtime import atomic_path

log = logging.getLogger(__name__)


class Forecaster:
    """Quantile forecasts for the latest bar of each symbol, updated as bars arrive.

    Args:
        loaded: A loaded model directory (:func:`foxhunt.quantize.model.load_inference_model`).
        history: Keep raw bars instead of the incremental state (the older path): this many
            per symbol (the default of that path is warm-up + encoder + :func:`smoother_memory`;
            shorter is faster and approximate); it must be at least warm-up + encoder.
        symbols: If given, the only symbols accepted (others raise DataError).
        device: Where the model runs.
        incremental: Force the incremental state (True) or the bar tail (False); default:
            incremental unless ``history`` is given or the run's inputs need the tail.
        engine: How the incremental path runs the model's per-update forward: ``torch``
            (eager PyTorch), ``onnx`` (onnxruntime graphs built once per model and cached in
            the run directory's ``live/``; at one symbol about 1.5x faster per update at the demo
            preset, 2x at TFT-225, docs/inference.md) or ``auto``
            (``onnx`` where it can run, else ``torch``):
            :mod:`foxhunt.infer.incremental.graphs`. The bar-tail path always runs PyTorch.
        tz: The zone of naive bar times (an IANA name or an offset, as ``--tz`` takes);
            None: UTC, with one warning per process.

    Raises:
        ValueError: ``history`` shorter than warm-up + encoder, or ``incremental=True`` for
            inputs the incremental path does not compute.
        InputError: an unknown ``engine``, ``onnx`` for a model it cannot run, or a model that
            reads covariate columns.
    """

    def __init__(
        self,
        loaded: LoadedModel,
        *,
        history: int | None = None,
        symbols: Iterable[str] | None = None,
        device: torch.device | str = "cpu",
        incremental: bool | None = None,
        engine: str = "torch",
        tz: str | None = None,
    ) -> None:
        self.tz = tz if tz is None or parse_zone(tz) else None  # naive times' zone (else UTC)
        self.loaded = loaded
        m = loaded.config.model
        self.encoder_length = m.encoder_length
        self.horizon = m.horizon
        self.warmup = loaded.spec.warmup
        minimum = self.warmup + self.encoder_length
        self.history = minimum + smoother_memory() if history is None else int(history)
        if self.history < minimum:
            raise ValueError(f"history must be >= warm-up + encoder = {minimum}, got {history}")
        covariates = covariate_columns(loaded.config.data)
        if covariates:  # neither path carries a bar's extra columns
            raise InputError(
                f"{loaded.run.root}: the model reads covariate columns ({', '.join(covariates)}), "
                "which the streaming forecaster does not carry; forecast it with foxhunt predict"
            )
        if incremental and not supports(loaded.spec):
            raise ValueError("incremental features cover the built-in observed set only")
        if incremental is None:
            incremental = history is None and supports(loaded.spec)
        self.allowed = None if symbols is None else frozenset(symbols)
        # Each symbol's instrument, as trained (None: a run from before calendars, all globex);
        # a symbol the run never saw is resolved once, at first sight, and kept.
        self._instruments = None if loaded.instruments is None else dict(loaded.instruments)
        self._interval = trained_interval(loaded.run)
        self._anchor = anchor_column(loaded.config.data.target)
        self.device = torch.device(device)
        self._qmap = quantile_map(loaded)
        self._tails: dict[str, BarTail] = {}
        self._digest: str | None = None
        # the incremental state, for the inputs it computes (a run with SQL feature lines keeps
        # the bar-tail path only: its inputs have no incremental kernel)
        self._state = self._empty_state() if supports(loaded.spec) else None
        model = loaded.model
        members = list(model.members) if isinstance(model, EnsembleTFT) else [model]
        self._selected = SelectedRows(members, self.device, AHEAD + 1)  # type: ignore[arg-type]
        self.incremental = bool(incremental)
        if self.incremental and self._live.engine.compiled:
            from foxhunt.infer.incremental.compiled import warm

            warm()  # compiled (or loaded) now, not at the first bar
        self._quantiles = m.quantiles
        check_engine(engine)  # the bar-tail path runs PyTorch, whichever is asked
        cache = loaded.run.root / "live"
        graphs = (
            live_graphs(members, engine, self.device, cache)  # type: ignore[arg-type]
            if self.incremental
            else None
        )
        self._selected.graphs = graphs
        self.engine = "onnx" if graphs is not None else "torch"
        """The engine the incremental forward runs on (``auto`` resolved)."""

    def _empty_state(self) -> LiveState:
        """An incremental state holding no symbol, for this model's inputs."""
        m = self.loaded.config.model
        return LiveState(
            self.loaded.spec, self.loaded.scaler, m.encoder_length, m.horizon, self._anchor
        )

    @property
    def _live(self) -> LiveState:
        """The incremental state (only on the incremental path, whose runs have one)."""
        assert self._state is not None, "the bar-tail path has no incremental state"
        return self._state

    @classmethod
    def load(
        cls,
        run_dir: Path | str,
        *,
        history: int | None = None,
        symbols: Iterable[str] | None = None,
        device: torch.device | str = "cpu",
        state: Path | str | None = None,
        incremental: bool | None = None,
        engine: str = "torch",
        tz: str | None = None,
    ) -> Forecaster:
        """Load a model directory (fp32 or quantised) into a forecaster.

        Args:
            run_dir: The model directory.
            history: See the class docstring.
            symbols: See the class docstring; default: the symbols the model was trained on
                when the run directory records them (``run.json`` ``symbols`` or
                ``instruments.json``), else any symbol with a known futures root.
            device: Where the model runs.
            state: A file :meth:`save` wrote for this model: resume from it (else no bars yet).
            incremental: See the class docstring.
            engine: See the class docstring.
            tz: See the class docstring.

        Returns:
            The forecaster.

        Raises:
            ModelDirError: Missing, corrupt or inconsistent model directory.
            DataError: ``state`` unreadable or saved for another model.
        """
        loaded = load_inference_model(Path(run_dir), device)
        if symbols is None:
            symbols = trained_symbols(loaded.run)
        fc = cls(
            loaded,
            history=history,
            symbols=symbols,
            device=device,
            incremental=incremental,
            engine=engine,
            tz=tz,
        )
        if state is not None:
            fc.restore(state)
        return fc

    # --- state -----------------------------------------------------------------------------

    @property
    def symbols(self) -> tuple[str, ...]:
        """Symbols seen so far, sorted."""
        return self._live.symbols if self.incremental else tuple(sorted(self._tails))

    @property
    def held_bytes(self) -> int:
        """Bytes held for all symbols (the model's weights not included): the incremental
        state's arrays, or the raw bars of the tails."""
        if self.incremental:
            return self._live.nbytes + self._selected.nbytes
        return sum(t.nbytes for t in self._tails.values())

    def held_bars(self, symbol: str) -> int:
        """Bars given for ``symbol`` (incremental) or raw bars held (tail); 0 if never seen."""
        if self.incremental:
            return self._live.bars(symbol)
        tail = self._tails.get(symbol)
        return len(tail) if tail is not None else 0

    def last_ts(self, symbol: str) -> int | None:
        """Time of the latest bar held for ``symbol`` (epoch µs UTC; None if never seen)."""
        if self.incremental:
            return self._live.last_ts(symbol)
        tail = self._tails.get(symbol)
        return tail.last_ts if tail is not None else None

    def ready(self, symbol: str) -> bool:
        """Whether ``symbol`` has enough bars for a forecast (warm-up + encoder)."""
        if self.incremental:
            return self._live.ready(symbol)
        tail = self._tails.get(symbol)
        return tail is not None and self._is_ready(tail)

    def _is_ready(self, tail: BarTail) -> bool:
        return len(tail) >= self.warmup + self.encoder_length

    # --- saving and resuming ---------------------------------------------------------------

    def _identity(self) -> str:
        """The model a saved state belongs to: its features' fingerprint and its weights."""
        if self._digest is None:  # read once (a quantised model's weights file is hashed)
            self._digest = weights_digest(self.loaded)
        return f"{self.loaded.fingerprint}:{self._digest}"

    def save(self, path: Path | str) -> Path:
        """Write the whole streaming state to ``path`` (numpy ``.npz``, no pickle), atomically.

        Returns:
            ``path``.

        Raises:
            ValueError: a forecaster on the bar-tail path (it has no state to save).
        """
        if not self.incremental:
            raise ValueError("only the incremental forecaster saves its state")
        path = Path(path)
        arrays = self._live.state_dict() | self._selected.state_dict()
        arrays["forecaster"] = np.array([STATE_FORMAT])
        arrays["model"] = np.array(self._identity())
        buf = io.BytesIO()
        np.savez(buf, **arrays)  # type: ignore[arg-type]
        with atomic_path(path) as tmp:
            tmp.write_bytes(buf.getvalue())
        return path

    def restore(self, path: Path | str) -> None:
        """Replace what is held by the state :meth:`save` wrote.

        Raises:
            DataError: unreadable file, another format, or a state saved for another model.
        """
        path = Path(path)
        arrays = read_state_file(path)
        if self._state is None:
            raise DataError(
                f"{path}: this model's inputs are not computed incrementally: it has no state"
            )
        saved = str(arrays.get("model"))
        if saved == f"{self.loaded.fingerprint}:":  # before its weights were in the identity
            log.warning(
                "%s: a state saved before foxhunt tied states to the model's weights: restored "
                "without that check; save it again to add it",
                path,
            )
        elif saved != self._identity():
            raise DataError(f"{path}: the state was saved for another model")
        try:
            self._swap_in(arrays)
        except (KeyError, ValueError) as e:
            raise DataError(f"{path}: {e}") from e

    def _swap_in(self, arrays: dict[str, np.ndarray]) -> None:
        """Hold the state of ``arrays``, loaded into fresh objects and swapped in only when
        whole (a failed load changes nothing); without ``selected.*`` arrays the model's rows
        are computed again at the next forecast."""
        live = self._empty_state()
        live.engine.compiled = self._live.engine.compiled
        old = self._selected
        selected = SelectedRows(old.models, self.device, old.known_width)
        selected.graphs = old.graphs
        live.load_state_dict(arrays)
        selected.load_state_dict(arrays)
        self._state, self._selected = live, selected
        self.incremental = True

    def forget(self, symbol: str) -> bool:
        """Drop everything held for ``symbol``: its next bars start it afresh, as a symbol
        never seen (a wrong first bar otherwise refuses every right one after it). The other
        symbols' states are kept exactly; the model's cached rows are computed again.

        Returns:
            Whether ``symbol`` was held.
        """
        if not self.incremental:
            return self._tails.pop(symbol, None) is not None
        if symbol not in self._live.engine.slots:
            return False
        self._swap_in(without_symbol(self._live.state_dict(), symbol))
        return True

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
        if self.incremental:
            if len(bars) == 0:  # no bars: nothing changes (the frame's columns still checked)
                normalise(bars, self.tz)
                return self._empty()
            chunk: pl.DataFrame | None = None
            arrays = fast_arrays(bars)  # a frame already normalised: read as it is
            if arrays is None:
                chunk = normalise(bars, self.tz)
                arrays = bar_arrays(chunk)
            rows = group_rows(arrays, self.last_ts, self.allowed)
            if chunk is None and (rows is None or not self._held(rows)):
                chunk = normalise(bars, self.tz)  # a problem to name, or new symbols to resolve
            if rows is None:  # something is wrong: the full check names it
                assert chunk is not None
                check_order(chunk, self.last_ts, self.allowed)
                raise AssertionError("group_rows refused bars check_order accepts")
            self._check_new(arrays, rows)
            if chunk is not None:
                self._resolve(chunk, list(rows))
            self._advance(chunk, arrays, rows)
            ready = sorted(s for s in rows if self._live.ready(s))
            return self._forecast_live(ready) if forecast and ready else self._empty()
        chunk = normalise(bars, self.tz)
        groups = check_order(chunk, self.last_ts, self.allowed)
        self._check_new(bar_arrays(chunk), {s: g["__row"].to_numpy() for s, g in groups.items()})
        self._resolve(chunk, list(groups))
        session = session_expr(calendars_of(self._instruments)).cast(pl.Int32).alias("__session")
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

    def target_times(self, frame: pl.DataFrame) -> pl.Series | None:
        """Each row's target time, for a forecast of this forecaster's (:func:`scheduled_targets`)."""
        return scheduled_targets(frame, self._interval, calendars_of(self._instruments))

    def closed_bars(self, frame: pl.DataFrame) -> list[str]:
        """A line per symbol of ``frame`` with bars where its calendar is shut (:mod:`closed_bars`)."""
        return closed_bar_lines(frame, calendars_of(self._instruments), self._interval)

    def forecast(self, symbols: Iterable[str] | None = None) -> pl.DataFrame:
        """Forecasts from the latest bar held for ``symbols``.

        Args:
            symbols: Which symbols (default: every symbol seen); those not ready, or never
                seen, are left out.

        Returns:
            The schema of :meth:`update`.
        """
        wanted = self.symbols if symbols is None else symbols
        ready = sorted(s for s in wanted if self.ready(s))
        if not ready:
            return self._empty()
        return (
            self._forecast_live(ready) if self.incremental else self._forecast(ready, self._tails)
        )

    def _empty(self) -> pl.DataFrame:
        return pl.DataFrame(schema=pl.Schema(forecast_schema(self.loaded.config.model.quantiles)))

    def _held(self, symbols: Iterable[str]) -> bool:
        """Whether every one of ``symbols`` has its state and instrument already."""
        inst = self._instruments
        slots = self._live.engine.slots
        return all(s in slots and (inst is None or s in inst) for s in symbols)

    def _check_new(self, arrays: BarArrays, rows: Mapping[str, np.ndarray]) -> None:
        """Refuse new bars that break a rule of :mod:`foxhunt.infer.stream_checks` against
        the bars held before them (their spacing and interval, a x10 level)."""
        trained = None if self._interval is None else self._interval // timedelta(microseconds=1)
        for sym, idx in rows.items():
            if self.incremental:
                slot = self._live.engine.slots.get(sym)
                held = slot is not None and self._live.bars(sym) > 0
                last_close = float(self._live.close[slot]) if held else None
                gaps = self._live.gaps[slot] if slot is not None else Counter()
                n = min(self._live.bars(sym), self._live.L) if held else 0
                recent = self._live.ts[slot, -n:] if n else None
            else:
                tail = self._tails.get(sym)
                last = tail.values[-1, self._anchor] if tail is not None and len(tail) else None
                last_close = None if last is None else float(last)
                gaps = Counter(np.diff(tail.ts).tolist()) if tail is not None else Counter()
                recent = tail.ts if tail is not None else None
            check_new_bars(
                sym,
                idx,
                arrays.ts[idx],
                arrays.values[idx],
                last_ts=self.last_ts(sym),
                last_close=last_close,
                held_gaps=gaps,
                trained_us=trained,
                model=self.loaded.run.root,
                level=self._anchor,
                recent_ts=recent,
            )

    def _resolve(self, chunk: pl.DataFrame, symbols: list[str]) -> None:
        """Resolve (once) the instrument of each of ``symbols`` the run did not store."""
        if self._instruments is None or all(s in self._instruments for s in symbols):
            return
        new = chunk.filter(~pl.col("symbol").is_in(list(self._instruments)))
        self._instruments |= resolve_bars(new, self._instruments)

    def _advance(
        self, chunk: pl.DataFrame | None, arrays: BarArrays, rows: Mapping[str, np.ndarray]
    ) -> None:
        """Feed checked bars (``rows``: symbol -> its rows of ``chunk``, ``arrays`` its
        columns) to the state (``chunk`` may be None when every symbol is held already)."""
        live = self._live
        new = [s for s in rows if s not in live.engine.slots]
        if new:
            assert chunk is not None
            resolved = resolve_bars(
                chunk[np.concatenate([rows[s] for s in new])], self._instruments
            )
            live.add_symbols(
                {
                    s: (
                        resolved[s].calendar if self._instruments is not None else DEFAULT_CALENDAR,
                        resolved[s].static_values(),
                    )
                    for s in new
                }
            )
        all_ts, all_values = arrays.ts, arrays.values
        parts = {}
        for sym, idx in rows.items():
            ts = all_ts[idx]
            known, session = live.times.get(live.calendars[live.engine.slots[sym]], ts)
            parts[sym] = (ts, all_values[idx], session, known)
        # The r-th bar of every symbol in one step. Of a long update only the last L bars need
        # their features (the window) and the RING bars before them their windowed series:
        # earlier bars only advance the state (a backlog is fast-forwarded).
        L, ring = self.encoder_length, RING
        longest = max((len(p[0]) for p in parts.values()), default=0)
        for r in range(longest):
            kinds: dict[tuple[bool, bool], list[str]] = {}
            for s, p in parts.items():
                m = len(p[0])
                if m > r:
                    kinds.setdefault((r >= m - L - ring, r >= m - L), []).append(s)
            for (derived, features), syms in kinds.items():
                ts, values, session, known = (
                    np.stack([parts[s][j][r] for s in syms]) for j in range(4)
                )
                live.step(syms, ts, values, session, known, derived=derived, features=features)

    @torch.inference_mode()
    def _forecast_live(self, symbols: list[str]) -> pl.DataFrame:
        """One batched forward over the held windows of ``symbols`` (all ready), reusing each
        symbol's static contexts and the encoder bars' selected embeddings held from earlier
        forecasts (:class:`~foxhunt.infer.incremental.selected.SelectedRows`)."""
        batch = self._live.batch(symbols)
        slots = np.array([self._live.engine.slots[s] for s in symbols], np.int64)
        count = self._live.engine.count[slots]

        def forward(model: torch.nn.Module, batch: TFTBatch) -> torch.Tensor:
            return self._selected.outputs(model, batch, slots, count, self._live.known_ahead)

        q = tft_quantiles(
            self.loaded.model, batch, self._qmap, device=self.device, forward=forward
        ).numpy()
        origins = self._live.ts[slots, -1]
        return forecast_frame(symbols, origins, self._live.close[slots], q, self._quantiles)

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
        syms = origins["symbol"].to_list()
        closes = [float(tails[s].values[-1, self._anchor]) for s in syms]
        return forecast_frame(
            syms, origins["ts"].dt.epoch("us").to_numpy(), closes, q, self._quantiles
        )
