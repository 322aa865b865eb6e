"""What a live forecaster holds per symbol, and the model batch it makes from it.

:class:`LiveState` keeps, per symbol: the incremental feature state
(:class:`~foxhunt.infer.incremental.engine.IncrementalFeatures`), the model's inputs of the last
``L`` bars (observed and known-future features), their times, the static features, and the
counts of the gaps between bars (the bar interval is their mode, as
:func:`foxhunt.data.market.calendar.infer_interval` takes it over the whole history). Nothing
grows with the bars streamed: memory is O(symbols x L x features).

A bar's inputs are scaled once, when it arrives, exactly as
:class:`foxhunt.data.windows.dataset.WindowDataset` scales them (float32 feature, as the batch
feature table holds it -> float64, minus the training mean, over the training std -> float32);
the observed ones go into a ring of ``L`` rows (bar number ``b`` at row ``b mod L``), so a new
bar writes one row instead of shifting the window. :meth:`LiveState.batch` gathers each
symbol's window in time order and adds the decoder's known inputs at the bar times the calendar
schedules after its last bar, so the window equals the last window ``foxhunt predict`` builds
from the same bars.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl
import torch

from foxhunt.data.features.table import FeatureSpec
from foxhunt.data.market.calendar import known_features, project_bar_times_us, trading_date
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.infer.incremental.engine import IncrementalFeatures, feature_names
from foxhunt.model.batch import TFTBatch

FORMAT = 2
"""Version of :meth:`LiveState.state_dict`'s layout (the engine has its own). 2: scaled inputs,
the observed ones in a ring; a format-1 state (unscaled, shifted) is converted on loading."""


def supports(spec: FeatureSpec) -> bool:
    """Whether the incremental path computes every input of ``spec``: observed features from
    the built-in set (default or minimal), no covariates."""
    from foxhunt.data.features.static import STATIC_FEATURES
    from foxhunt.data.market.calendar import KNOWN_FEATURES

    return (
        set(spec.historical) <= set(feature_names())
        and spec.known == KNOWN_FEATURES
        and spec.static == STATIC_FEATURES
    )


AHEAD = 64
"""Bar times projected ahead at once per symbol (consumed as bars arrive on schedule)."""


def known_rows(ts: pl.Series, calendar: str) -> np.ndarray:
    """(n, 10) float32 known-future features of bar times ``ts`` (UTC) on ``calendar``."""
    frame = pl.DataFrame({"ts": ts})
    exprs = [e.cast(pl.Float32) for e in known_features(pl.col("ts"), calendar)]
    return frame.select(exprs).to_numpy()


class TimeRows:
    """The calendar features of bar times, cached per (calendar, time): the known-future
    features (float32, as the batch table holds them) and the trading day (the session VWAP's
    reset). Live bars arrive at the times projected for the previous decoder, so nearly every
    lookup is a hit; misses are computed together in one polars call.

    Args:
        limit: Entries kept before the cache is emptied (bounds memory).
    """

    def __init__(self, limit: int = 100_000) -> None:
        self.limit = limit
        self._rows: dict[tuple[str, int], tuple[np.ndarray, int]] = {}

    def get(self, calendar: str, ts_us: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(n, 10) float32 known features and (n,) int64 trading days of ``ts_us``."""
        keys = [(calendar, int(t)) for t in ts_us]
        missing = sorted({k[1] for k in keys if k not in self._rows})
        if missing:
            if len(self._rows) + len(missing) > self.limit:
                self._rows.clear()
            ts = pl.Series("ts", missing, dtype=pl.Int64).cast(pl.Datetime("us", "UTC"))
            frame = pl.DataFrame({"ts": ts})
            known = frame.select(
                [e.cast(pl.Float32) for e in known_features(pl.col("ts"), calendar)]
            ).to_numpy()
            day = frame.select(trading_date(pl.col("ts"), calendar).cast(pl.Int32)).to_series()
            for i, (t, d) in enumerate(zip(missing, day.to_numpy(), strict=True)):
                self._rows[calendar, t] = (known[i], int(d))
        rows = [self._rows[k] for k in keys]
        width = len(rows[0][0]) if rows else 0
        known_out = np.array([r[0] for r in rows], np.float32).reshape(len(rows), width)
        return known_out, np.array([r[1] for r in rows], np.int64)


def _scaling(scaler: ScalerParams, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    pos = [scaler.columns.index(c) for c in names]
    return np.array([scaler.mean[i] for i in pos]), np.array([scaler.std[i] for i in pos])


def _scaled(x: np.ndarray, scaling: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """float32 features scaled as the dataset scales them (float64 arithmetic, float32 out)."""
    mean, std = scaling
    return ((x.astype(np.float64) - mean) / std).astype(np.float32)


class LiveState:
    """Per-symbol streaming state for one model's inputs.

    Args:
        spec: The model's feature names (:func:`supports` must hold).
        scaler: The run's scaler.
        encoder_length: L.
        horizon: H.
        anchor: The column of the bars' ``open high low close volume`` whose latest value
            each symbol keeps as ``close``, the level its forecasts' prices are anchored on:
            3, the close, unless the model forecasts another price (``--target high``: 1).
    """

    def __init__(
        self,
        spec: FeatureSpec,
        scaler: ScalerParams,
        encoder_length: int,
        horizon: int,
        anchor: int = 3,
    ) -> None:
        self.spec, self.L, self.H = spec, encoder_length, horizon
        self.anchor = anchor
        self.warmup = spec.warmup
        self.engine = IncrementalFeatures()
        names = feature_names()
        self._cols = np.array([names.index(n) for n in spec.historical], np.int64)
        self._scale_h = _scaling(scaler, spec.historical)
        self._scale_k = _scaling(scaler, spec.known)
        self._scale_s = _scaling(scaler, spec.static)
        self.hist = np.zeros((0, self.L, len(spec.historical)), np.float32)  # scaled, ring
        self.known = np.zeros((0, self.L, len(spec.known)), np.float32)  # scaled, oldest first
        self.ts = np.zeros((0, self.L), np.int64)
        self.static = np.zeros((0, len(spec.static)), np.float32)
        self.close = np.zeros(0, np.float64)
        self.calendars: list[str] = []
        self.gaps: list[Counter[int]] = []
        self.times = TimeRows()
        self._ahead: list[tuple[int, np.ndarray]] = []  # per slot: (interval µs, [origin, t1..])

    # --- what is held ------------------------------------------------------------------------

    @property
    def symbols(self) -> tuple[str, ...]:
        return tuple(sorted(self.engine.slots))

    def bars(self, symbol: str) -> int:
        return self.engine.bars(symbol)

    def last_ts(self, symbol: str) -> int | None:
        slot = self.engine.slots.get(symbol)
        return None if slot is None or self.engine.bars(symbol) == 0 else int(self.ts[slot, -1])

    def ready(self, symbol: str) -> bool:
        return self.engine.bars(symbol) >= self.warmup + self.L

    @property
    def nbytes(self) -> int:
        arrays = (self.hist, self.known, self.ts, self.static, self.close)
        return self.engine.nbytes + sum(a.nbytes for a in arrays)

    # --- advancing ---------------------------------------------------------------------------

    def add_symbols(self, symbols: dict[str, tuple[str, tuple[float, ...]]]) -> None:
        """Register new symbols: symbol -> (calendar, static feature values)."""
        new = [s for s in symbols if s not in self.engine.slots]
        if not new:
            return
        self.engine.slot_of(new)
        n = len(new)
        self.hist = np.concatenate([self.hist, np.zeros((n, *self.hist.shape[1:]), np.float32)])
        self.known = np.concatenate([self.known, np.zeros((n, *self.known.shape[1:]), np.float32)])
        self.ts = np.concatenate([self.ts, np.zeros((n, self.L), np.int64)])
        static = np.array([symbols[s][1] for s in new], np.float64).astype(np.float32)
        self.static = np.concatenate([self.static, static.reshape(n, -1)])
        self.close = np.concatenate([self.close, np.zeros(n)])
        self.calendars += [symbols[s][0] for s in new]
        self.gaps += [Counter() for _ in new]
        self._ahead += [(0, np.empty(0, np.int64)) for _ in new]

    def step(
        self,
        symbols: Sequence[str],
        ts: np.ndarray,
        values: np.ndarray,
        session: np.ndarray,
        known: np.ndarray,
        *,
        derived: bool = True,
        features: bool = True,
    ) -> None:
        """One new bar for each of ``symbols`` (distinct, registered, bars already checked).

        Args:
            ts: (k,) int64 µs; values: (k, 5) OHLCV; session: (k,) trading day;
            known: (k, 10) float32 known features of the bars.
            derived, features: See :meth:`IncrementalFeatures.step`; a bar stepped without
                features must leave the window (L bars) before a forecast reads it.
        """
        slots = self.engine.slot_of(list(symbols))
        bar = self.engine.count[slots]  # the new bars' numbers
        prev = self.ts[slots, -1]
        out = self.engine.step(slots, values, session, derived=derived, features=features)
        if out is not None:  # float32 as the batch table holds them, then scaled
            self.hist[slots, bar % self.L] = _scaled(
                out[:, self._cols].astype(np.float32), self._scale_h
            )
        for i in np.flatnonzero(bar > 0):
            gap = int(ts[i] - prev[i])
            if gap > 0:
                self.gaps[slots[i]][gap] += 1
        for arr, new in ((self.known, _scaled(known, self._scale_k)), (self.ts, ts)):
            arr[slots, :-1] = arr[slots, 1:]
            arr[slots, -1] = new
        self.close[slots] = values[:, self.anchor]

    # --- the model's batch -------------------------------------------------------------------

    def decoder_times(self, slots: np.ndarray) -> np.ndarray:
        """(B, H) int64 µs: the bar times the calendar schedules after each slot's last bar
        (:func:`foxhunt.data.market.calendar.project_bar_times_us`, the schedule ``predict`` uses).

        Each slot keeps :data:`AHEAD` times projected from an earlier origin; projection is a
        step function of the current time, so from a later origin on that schedule the next
        H times are the ones already projected. A bar off the schedule, a changed interval or
        a used-up projection projects again (one call per interval and calendar)."""
        out = np.empty((len(slots), self.H), np.int64)
        redo: dict[tuple[int, str], list[int]] = {}
        for i, slot in enumerate(slots):
            origin, iv = self.ts[slot, -1], self._interval_us(int(slot))
            kept_iv, ahead = self._ahead[slot]
            j = int(np.searchsorted(ahead, origin))
            if kept_iv == iv and j < len(ahead) and ahead[j] == origin and len(ahead) > j + self.H:
                self._ahead[slot] = (iv, ahead[j:])
                out[i] = ahead[j + 1 : j + 1 + self.H]
            else:
                redo.setdefault((iv, self.calendars[slot]), []).append(i)
        for (iv, cal), rows in redo.items():
            origins = self.ts[slots[rows], -1]
            times = project_bar_times_us(origins, AHEAD, iv, cal)  # (m, AHEAD)
            self.times.get(cal, times.reshape(-1))  # the calendar rows of all of them, at once
            for r, i in enumerate(rows):
                self._ahead[slots[i]] = (iv, np.concatenate([[origins[r]], times[r]]))
                out[i] = times[r, : self.H]
        return out

    def known_ahead(self, slots: np.ndarray) -> np.ndarray:
        """(b, AHEAD + 1, V_k) float32: the scaled known inputs of each slot's projected bar
        times (its latest bar first, then those :meth:`decoder_times` projected after it),
        NaN past them; what :class:`~foxhunt.infer.incremental.known_rows.KnownRows` keeps."""
        out = np.full((len(slots), AHEAD + 1, self.known.shape[2]), np.nan, np.float32)
        for i, slot in enumerate(slots):
            times = self._ahead[slot][1][: AHEAD + 1]
            if len(times):
                kn, _ = self.times.get(self.calendars[slot], times)
                out[i, : len(times)] = _scaled(kn, self._scale_k)
        return out

    def _interval_us(self, slot: int) -> int:
        gaps = self.gaps[slot]
        return min(gaps.items(), key=lambda kv: (-kv[1], kv[0]))[0]

    def batch(self, symbols: Sequence[str]) -> TFTBatch:
        """The last window of each of ``symbols`` (all ready), scaled, with its decoder rows."""
        slots = np.array([self.engine.slots[s] for s in symbols], np.int64)
        bars = self.engine.count[slots, None] - self.L + np.arange(self.L)  # (B, L) oldest first
        times = self.decoder_times(slots)
        future = np.empty((len(slots), self.H, self.known.shape[2]), np.float32)
        by_cal: dict[str, list[int]] = {}
        for i, slot in enumerate(slots):
            by_cal.setdefault(self.calendars[slot], []).append(i)
        for cal, rows in by_cal.items():
            kn, _ = self.times.get(cal, times[rows].reshape(-1))
            future[rows] = kn.reshape(len(rows), self.H, -1)
        known = np.concatenate([self.known[slots], _scaled(future, self._scale_k)], axis=1)
        return TFTBatch(
            static=torch.from_numpy(_scaled(self.static[slots], self._scale_s)),
            historical=torch.from_numpy(self.hist[slots[:, None], bars % self.L]),  # (B, L, V_h)
            known=torch.from_numpy(known),  # (B, L + H, V_k)
            target=None,
        )

    # --- persistence -------------------------------------------------------------------------

    def state_dict(self) -> dict[str, np.ndarray]:
        """Every array (engine included, under ``engine.``), for ``np.savez``."""
        order = list(self.engine.slots)  # slot order
        gaps = [(slot, g, c) for slot, cnt in enumerate(self.gaps) for g, c in cnt.items()]
        meta = {
            "format": FORMAT,
            "L": self.L,
            "H": self.H,
            "spec": self.spec.to_dict(),
            "calendars": self.calendars,
            "symbols": order,
        }
        out: dict[str, np.ndarray] = {
            "meta": np.array(json.dumps(meta)),
            "hist": self.hist,
            "known": self.known,
            "ts": self.ts,
            "static": self.static,
            "close": self.close,
            "gaps": np.array(gaps, np.int64).reshape(-1, 3),
        }
        return out | {f"engine.{k}": v for k, v in self.engine.state_dict().items()}

    def load_state_dict(self, d: dict[str, Any]) -> None:
        """Replace everything held by a saved state (of the same model inputs). A failure may
        leave this state half replaced: load into a fresh one (``Forecaster.restore`` does).

        Raises:
            ValueError: another format, a state saved for other inputs, or arrays of other
                lengths than its symbols.
        """
        meta = json.loads(str(d["meta"]))
        if meta.get("format") not in (1, FORMAT):
            raise ValueError(f"stream state format {meta.get('format')}, expected {FORMAT}")
        if (meta["L"], meta["H"], meta["spec"]) != (self.L, self.H, self.spec.to_dict()):
            raise ValueError("the stream state was saved for another model's inputs")
        engine = IncrementalFeatures.from_state_dict(
            {k.removeprefix("engine."): v for k, v in d.items() if k.startswith("engine.")},
            compiled=self.engine.compiled,  # the step this state ran with keeps running
        )
        if list(engine.slots) != meta["symbols"]:
            raise ValueError("the stream state's symbols do not match its feature state")
        self.engine = engine
        self.hist, self.known, self.ts = d["hist"], d["known"], d["ts"]
        if meta["format"] == 1:  # unscaled, the observed window shifted (oldest first)
            self.known = _scaled(self.known, self._scale_k)
            ring = (engine.count[: len(self.hist), None] - self.L + np.arange(self.L)) % self.L
            hist = np.empty_like(self.hist)
            hist[np.arange(len(hist))[:, None], ring] = _scaled(self.hist, self._scale_h)
            self.hist = hist
        self.static, self.close = d["static"], d["close"]
        self.calendars = list(meta["calendars"])
        self.gaps = [Counter() for _ in meta["symbols"]]
        self._ahead = [(0, np.empty(0, np.int64)) for _ in meta["symbols"]]
        for slot, gap, count in d["gaps"].tolist():
            self.gaps[slot][gap] = count
        held = {len(a) for a in (self.hist, self.known, self.ts, self.static, self.close)}
        if held != {len(meta["symbols"])} or len(self.calendars) != len(meta["symbols"]):
            raise ValueError(
                f"the stream state's arrays hold {sorted(held)} symbols' rows for "
                f"{len(meta['symbols'])} symbols"
            )


_PER_SYMBOL = ("hist", "known", "ts", "static", "close", "engine.count", "engine.session")
"""Arrays of :meth:`LiveState.state_dict` with a row per symbol (with ``engine.ring`` and every
``engine.state.*``)."""


def without_symbol(d: dict[str, np.ndarray], symbol: str) -> dict[str, np.ndarray]:
    """A :meth:`LiveState.state_dict` without ``symbol``'s rows (its slot gone, the later slots
    moved up one): loaded, the state holds the other symbols exactly as before.

    Raises:
        KeyError: ``symbol`` is not in the state.
    """
    meta = json.loads(str(d["meta"]))
    slot = meta["symbols"].index(symbol) if symbol in meta["symbols"] else -1
    if slot < 0:
        raise KeyError(symbol)
    out = dict(d)
    rows = [k for k in d if k in _PER_SYMBOL or k == "engine.ring" or k.startswith("engine.state.")]
    for key in rows:
        out[key] = np.delete(d[key], slot, axis=0)
    out["engine.symbols"] = np.delete(d["engine.symbols"], slot)
    gaps = d["gaps"][d["gaps"][:, 0] != slot]
    gaps[:, 0] -= gaps[:, 0] > slot
    out["gaps"] = gaps
    for key in ("symbols", "calendars"):
        meta[key] = meta[key][:slot] + meta[key][slot + 1 :]
    out["meta"] = np.array(json.dumps(meta))
    return out
