"""Fakes for the training tests: synthetic windows with a learnable target, a tiny config."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from foxhunt.config import DataConfig, RunConfig, TFTConfig, TrainConfig
from foxhunt.model.batch import TFTBatch


class FakeWindows:
    """``n`` random windows; the target is a fixed linear function of the last encoder bar.

    ``static[:, 0]`` holds the sample id so a model wrapper can count which samples it saw.
    """

    def __init__(self, n: int, cfg: TFTConfig, seed: int = 0) -> None:
        g = torch.Generator().manual_seed(seed)
        self.static = torch.randn(n, cfg.n_static, generator=g)
        self.static[:, 0] = torch.arange(n, dtype=torch.float32)
        self.historical = torch.randn(n, cfg.encoder_length, cfg.n_historical, generator=g)
        self.known = torch.randn(n, cfg.total_length, cfg.n_known, generator=g)
        w = torch.randn(cfg.n_historical, cfg.horizon, generator=torch.Generator().manual_seed(99))
        self.target = self.historical[:, -1] @ w / cfg.n_historical**0.5  # (n, H)
        self.calls = 0

    def __len__(self) -> int:
        return self.static.shape[0]

    def batch(self, indices: Sequence[int]) -> TFTBatch:
        self.calls += 1
        idx = torch.as_tensor(list(indices), dtype=torch.long)
        return TFTBatch(self.static[idx], self.historical[idx], self.known[idx], self.target[idx])


def tiny_config(**train: object) -> RunConfig:
    model = TFTConfig(
        n_static=2,
        n_historical=6,
        n_known=3,
        hidden=16,
        n_heads=2,
        lstm_layers=1,
        encoder_length=8,
        horizon=3,
        quantiles=(0.1, 0.5, 0.9),
        dropout=0.1,
        variable_width=4,
    )
    t = {"batch_size": 16, "validation_batch_size": 24, "epochs": 3, "lr": 3e-3, "warmup_steps": 2}
    t.update(train)
    return RunConfig(model=model, data=DataConfig(), train=TrainConfig(**t), preset="tiny")
