"""What the inference tests (``test_predict.py``, ``test_predict_mutants.py``,
``test_evaluate_mutants.py``) share: windows of two symbols over a four-feature spec, a tiny TFT
config, a recorder that stands in for the model's forward, and a progress bar that records its
calls."""

from __future__ import annotations

import datetime as dt
from types import ModuleType
from typing import Any

import numpy as np
import polars as pl
import pytest
import torch

from foxhunt.config import TFTConfig
from foxhunt.data.features.table import FeatureSpec
from foxhunt.data.windows.dataset import WindowDataset

SPEC = FeatureSpec(
    ("obs__a", "obs__b"),
    ("known__c",),
    ("static__d",),
    ("target__h1", "target__h2", "target__h3"),
    0,
)
H = 3
T0 = dt.datetime(2024, 1, 2, tzinfo=dt.UTC)


def windows(rows_per_symbol: int = 15, *, with_target: bool) -> WindowDataset:
    """ES and NQ, ``rows_per_symbol`` 5-minute rows each of seeded normal features (and
    targets), encoder 4, horizon :data:`H`."""
    g = np.random.default_rng(0)
    columns = (*SPEC.inputs, *SPEC.targets) if with_target else SPEC.inputs
    frames = []
    for sym in ("ES", "NQ"):
        ts = [T0 + dt.timedelta(minutes=5 * i) for i in range(rows_per_symbol)]
        values = {c: g.normal(size=rows_per_symbol).astype(np.float32) for c in columns}
        frames.append(pl.DataFrame({"ts": ts, "symbol": [sym] * rows_per_symbol, **values}))
    frame = pl.concat(frames).with_columns(pl.col("ts").dt.cast_time_unit("us"))
    return WindowDataset(frame, SPEC, 4, H, with_target=with_target)


def tiny_config(quantiles: tuple[float, ...]) -> TFTConfig:
    """A TFT over :data:`SPEC`'s inputs: hidden 8, one LSTM layer."""
    return TFTConfig(
        n_static=1,
        n_historical=2,
        n_known=1,
        hidden=8,
        n_heads=2,
        lstm_layers=1,
        encoder_length=4,
        horizon=H,
        quantiles=quantiles,
        variable_width=2,
    )


class ForwardRecorder:
    """Stands in for ``module``'s ``tft_quantiles``, ``row_forward`` and ``quantile_map``:
    records what each got and hands back window ``i``'s quantiles ``table[i]``."""

    def __init__(self, table: torch.Tensor, module: ModuleType, forward: Any = "ROWS") -> None:
        self.table = table
        self.module = module
        self.calls: list[dict[str, Any]] = []
        self.rows: list[torch.Tensor] = []
        self.forward = forward
        self.offset = 0

    def tft_quantiles(self, model: Any, batch: Any, qmap: Any, **kw: Any) -> torch.Tensor:
        b = batch.historical.shape[0]
        self.calls.append({"model": model, "training": model.training, "qmap": qmap, "b": b, **kw})
        out = self.table[self.offset : self.offset + b].clone()
        self.offset += b
        return out

    def row_forward(self, windows: Any, rows: torch.Tensor) -> Any:
        self.rows.append(rows.clone())
        return self.forward

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(self.module, "tft_quantiles", self.tft_quantiles)
        monkeypatch.setattr(self.module, "row_forward", self.row_forward)
        monkeypatch.setattr(self.module, "quantile_map", lambda loaded: ("QMAP", loaded))


class FakeProgress:
    """A rich ``Progress`` that records ``add_task`` (answering ``task``) and ``update``."""

    def __init__(self, task: int) -> None:
        self.task = task
        self.tasks: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
        self.updates: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def add_task(self, *args: Any, **kw: Any) -> int:
        self.tasks.append((args, kw))
        return self.task

    def update(self, *args: Any, **kw: Any) -> None:
        self.updates.append((args, kw))


def assert_forwarded_in_sevens(rec: ForwardRecorder, loaded: Any, windows: WindowDataset) -> None:
    """The 18 windows of :func:`windows` went to ``tft_quantiles`` in batches of 7, 7 and 4: each
    with the model in eval mode, the run's quantile map, the CPU, the run's precision (bf16)
    and the rows' forward, over the windows' origin rows in order."""
    assert len(rec.calls) == 3  # 7 + 7 + 4
    for call in rec.calls:
        assert call["model"] is loaded.model
        assert call["training"] is False  # put in eval mode before the first forward
        assert call["qmap"] == ("QMAP", loaded)
        assert call["device"] == torch.device("cpu")
        assert call["precision"] == "bf16"
        assert call["forward"] == "ROWS"
        assert set(call) == {"model", "training", "qmap", "b", "device", "precision", "forward"}
    every = torch.from_numpy(windows.origin_rows())
    assert [r.tolist() for r in rec.rows] == [
        every[0:7].tolist(),
        every[7:14].tolist(),
        every[14:18].tolist(),
    ]


def recording(
    seen: list[tuple[str, tuple[Any, ...], dict[str, Any]]], name: str, result: Any
) -> Any:
    """A stand-in for collaborator ``name``: appends ``(name, args, kwargs)`` to ``seen`` and
    returns ``result``."""

    def fake(*args: Any, **kw: Any) -> Any:
        seen.append((name, args, kw))
        return result

    return fake
