"""What training gets from the data side: spec, scaler and the three window datasets."""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

import polars as pl

from foxhunt.data.features.table import FeatureSpec
from foxhunt.data.market.instrument import Instrument
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.data.windows.dataset import WindowDataset


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
        closes: ``symbol``, ``ts``, ``close`` of the bars (the report's fan chart), so
            nothing reads the bars again after training. Pickled (the preparation child
            hands the data to the training process, :mod:`foxhunt.train.prepare`) as Arrow
            IPC bytes and decoded on first use: a process that unpickles the data and trains
            does not load polars' IPC reader (~11 MB of code pages, docs/memory.md) until the
            report reads ``closes``.
        instruments: each symbol's resolved instrument (stored in the run for inference);
            None from a feature store (its features follow the ``globex`` calendar).
    """

    spec: FeatureSpec
    scaler: ScalerParams
    train: WindowDataset
    val: WindowDataset
    test: WindowDataset
    fingerprint: str
    closes: pl.DataFrame
    instruments: dict[str, Instrument] | None = None
    bar_interval_s: float | None = None
    """The bars' interval (:func:`~foxhunt.data.market.calendar.bars_interval`), recorded in
    ``run.json`` so inference refuses bars of another; None from a feature store."""

    @property
    def closes_nbytes(self) -> int:
        """Bytes ``closes`` holds: its Arrow IPC bytes until first use (an unpickled object),
        then the frame's."""
        ipc = self.__dict__.get(_CLOSES_IPC)
        if ipc is not None:
            return len(ipc)
        return int(self.closes.estimated_size())

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        if "closes" in state:
            state[_CLOSES_IPC] = state.pop("closes").write_ipc(None).getvalue()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes not set: ``closes`` of an unpickled object, once.
        if name == "closes" and _CLOSES_IPC in self.__dict__:
            closes = pl.read_ipc(io.BytesIO(self.__dict__.pop(_CLOSES_IPC)))
            self.closes = closes
            return closes
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


_CLOSES_IPC = "_closes_ipc"
