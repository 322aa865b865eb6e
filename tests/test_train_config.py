"""``TrainConfig``'s bounds, each at its edge: the last value accepted, the first refused with
its message word for word; ``micro_batch`` falls back to the batch size."""

from __future__ import annotations

from typing import Any

import pytest

from foxhunt.errors import ConfigError
from foxhunt.train_config import TrainConfig

EDGES: list[tuple[dict[str, Any], dict[str, Any], str]] = [
    # (accepted, refused, message)
    ({"batch_size": 1, "micro_batch_size": 1}, {"batch_size": 0}, "batch_size must be >= 1, got 0"),
    (
        {"batch_size": 8, "micro_batch_size": 8},
        {"batch_size": 8, "micro_batch_size": 9},
        "micro_batch_size must be in [1, batch_size], got 9",
    ),
    (
        {"micro_batch_size": 1},
        {"micro_batch_size": 0},
        "micro_batch_size must be in [1, batch_size], got 0",
    ),
    (
        {"validation_batch_size": 1},
        {"validation_batch_size": 0},
        "validation_batch_size must be >= 1, got 0",
    ),
    ({"epochs": 1}, {"epochs": 0}, "epochs must be >= 1, got 0"),
    ({"max_steps": 1}, {"max_steps": 0}, "max_steps must be >= 1: 0"),
    ({"epoch_steps": 1}, {"epoch_steps": 0}, "epoch_steps must be >= 1: 0"),
    ({"validation_windows": 1}, {"validation_windows": 0}, "validation_windows must be >= 1: 0"),
    ({"max_minutes": 1e-9}, {"max_minutes": 0.0}, "max_minutes must be > 0: 0.0"),
    ({"lr": 1e-12}, {"lr": 0.0}, "lr must be > 0, got 0.0"),
    ({"weight_decay": 0.0}, {"weight_decay": -1e-9}, "weight_decay must be >= 0, got -1e-09"),
    ({"warmup_steps": 0}, {"warmup_steps": -1}, "warmup_steps must be >= 0, got -1"),
    ({"grad_clip": 0.0}, {"grad_clip": -0.5}, "grad_clip must be >= 0, got -0.5"),
    (
        {"weight_average": 0.0},
        {"weight_average": -0.1},
        "weight_average must be in [0, 1), got -0.1",
    ),
    (
        {"weight_average": 0.999},
        {"weight_average": 1.0},
        "weight_average must be in [0, 1), got 1.0",
    ),
    (
        {"precision": "fp16"},
        {"precision": "fp8"},
        "unknown precision 'fp8' (auto, fp32, bf16 or fp16)",
    ),
    ({"patience": 1}, {"patience": 0}, "patience must be >= 1, got 0"),
    (
        {"cpu_allocator": "glibc"},
        {"cpu_allocator": "tcmalloc"},
        "unknown cpu_allocator 'tcmalloc' (balanced, lean or glibc)",
    ),
    ({"log_every": 1}, {"log_every": 0}, "log_every must be >= 1, got 0"),
]


@pytest.mark.parametrize(("accepted", "refused", "message"), EDGES, ids=[e[2] for e in EDGES])
def test_each_bound_at_its_edge(
    accepted: dict[str, Any], refused: dict[str, Any], message: str
) -> None:
    config = TrainConfig(**accepted)
    for field, value in accepted.items():
        assert getattr(config, field) == value
    with pytest.raises(ConfigError) as caught:
        TrainConfig(**refused)
    assert str(caught.value) == message


@pytest.mark.parametrize("precision", ["auto", "fp32", "bf16", "fp16"])
def test_every_precision_setting_is_accepted(precision: str) -> None:
    assert TrainConfig(precision=precision).precision == precision  # type: ignore[arg-type]


@pytest.mark.parametrize("allocator", ["balanced", "lean", "glibc"])
def test_every_cpu_allocator_is_accepted(allocator: str) -> None:
    assert TrainConfig(cpu_allocator=allocator).cpu_allocator == allocator  # type: ignore[arg-type]


def test_the_optional_bounds_accept_none() -> None:
    config = TrainConfig(
        micro_batch_size=None,
        max_steps=None,
        epoch_steps=None,
        validation_windows=None,
        max_minutes=None,
    )
    assert config.micro_batch == config.batch_size == 32


def test_micro_batch_is_the_micro_batch_size_or_the_batch_size() -> None:
    assert TrainConfig(batch_size=16, micro_batch_size=4).micro_batch == 4
    assert TrainConfig(batch_size=16).micro_batch == 16


def test_the_defaults() -> None:
    """What a run gets without a config file (docs/training.md lists them)."""
    c = TrainConfig()
    assert (c.batch_size, c.micro_batch_size, c.validation_batch_size) == (32, None, 256)
    assert (c.epochs, c.max_steps, c.epoch_steps, c.validation_windows) == (5, None, 2000, None)
    assert (c.max_minutes, c.lr, c.weight_decay, c.warmup_steps) == (None, 1e-3, 1e-2, 50)
    assert (c.grad_clip, c.weight_average, c.precision) == (1.0, 0.0, "auto")
    assert (c.checkpointing, c.recompute, c.patience, c.seed) == (False, False, 3, 0)
    assert (c.device, c.num_threads, c.cpu_allocator, c.log_every) == ("cpu", None, "balanced", 10)
