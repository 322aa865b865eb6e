"""CUDA's library buffers and cuDNN's LSTM workspace in the estimate (no GPU needed): the sizing
rules, and the formula against the allocations an H200 made (docs/memory.md, "On CUDA")."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from foxhunt.config import tft_225
from foxhunt.memory import cuda_libraries as libs
from foxhunt.memory.activation_formulas import cudnn_lstm_workspace_bytes
from foxhunt.memory.estimate import estimate_memory

needs_no_gpu = pytest.mark.skipif(torch.cuda.is_available(), reason="reads the visible GPU")


@pytest.mark.parametrize(
    ("capability", "env", "want"),
    [
        ((9, 0), "", 33_554_432),  # measured on the H200
        ((10, 0), "", 33_554_432),
        ((8, 6), "", 4096 * 1024 * 2 + 16 * 1024 * 8),
        ((8, 0), ":4096:8", 4096 * 8 * 1024),
        ((9, 0), ":16:8", 16 * 8 * 1024),  # what deterministic runs set
        ((9, 0), ":4096:2:16:8", (4096 * 2 + 16 * 8) * 1024),
        ((9, 0), "garbage", 33_554_432),
    ],
)
def test_cublas_workspace_follows_pytorchs_rule(capability, env, want) -> None:  # noqa: ANN001
    assert libs.cublas_workspace_bytes(capability, env) == want


def test_cublas_workspace_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(libs.CUBLAS_ENV, ":1024:3")
    assert libs.cublas_workspace_bytes((9, 0)) == 3 * 1024 * 1024
    monkeypatch.delenv(libs.CUBLAS_ENV)
    assert libs.cublas_workspace_bytes((9, 0)) == 32 * 2**20


@needs_no_gpu
def test_without_a_gpu_the_h200s_sizes_are_assumed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(libs.CUBLAS_ENV, raising=False)
    assert libs.cublas_workspace_bytes() == 33_554_432
    assert libs.cudnn_dropout_state_bytes() == 6_488_064  # measured on the H200 (132 SMs)
    assert libs.cudnn_dropout_state_bytes(100) == 100 * 49_152


@needs_no_gpu
def test_library_bytes_by_mode_and_lstm_dropout(monkeypatch: pytest.MonkeyPatch) -> None:
    """Training: two workspaces (the caller's thread and autograd's) plus the dropout state when
    the stacked LSTM drops out between layers; inference: one workspace."""
    monkeypatch.delenv(libs.CUBLAS_ENV, raising=False)
    cfg = tft_225().model
    ws, state = 33_554_432, 6_488_064
    assert libs.cuda_library_bytes(cfg) == 2 * ws + state
    assert libs.cuda_library_bytes(cfg, "infer") == ws
    assert libs.cuda_library_bytes(dataclasses.replace(cfg, dropout=0.0)) == 2 * ws
    assert libs.cuda_library_bytes(dataclasses.replace(cfg, lstm_layers=1)) == 2 * ws


@pytest.mark.parametrize(
    ("f", "steps", "batch", "printed"),
    [  # an H200's workspace allocations / (B T H 4), as benchmarks' probe printed them (2 dp)
        (4, 10, 8, 265.00),
        (4, 10, 64, 41.00),
        (4, 10, 1024, 11.00),
        (4, 50, 32, 20.20),
        (4, 50, 256, 9.00),
        (4, 50, 1024, 7.80),
        (2, 10, 8, 234.90),
        (2, 50, 32, 15.22),
        (2, 50, 256, 5.14),
        (2, 50, 1024, 4.06),
    ],
)
def test_cudnn_lstm_workspace_matches_the_h200(f: int, steps: int, batch: int, printed: float):
    unit = batch * steps * 256 * 4
    assert round(cudnn_lstm_workspace_bytes(batch, steps, 256, f) / unit, 2) == printed


@needs_no_gpu
def test_the_cuda_estimate_holds_the_libraries_and_the_workspace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """TFT-225 at batch 32: the CUDA estimate carries the library buffers in both peaks, the CPU
    estimate none; cuDNN's encoder workspace is the largest backward transient on CUDA."""
    monkeypatch.delenv(libs.CUBLAS_ENV, raising=False)
    cfg = tft_225().model
    cuda = estimate_memory(cfg, 32, device="cuda")
    cpu = estimate_memory(cfg, 32, device="cpu")
    assert cuda.library_bytes == 2 * 33_554_432 + 6_488_064
    assert cpu.library_bytes == 0 and "cuda_libraries" not in cpu.components()
    assert cuda.components()["cuda_libraries"] == cuda.library_bytes
    workspace = cudnn_lstm_workspace_bytes(32, cfg.encoder_length, cfg.hidden, 4)
    assert cuda.backward_transient_bytes >= workspace
    state = cuda.parameter_bytes + cuda.optimizer_bytes + cuda.batch_bytes
    assert cuda.training_peak_bytes >= state + cuda.library_bytes + workspace
    # the no-grad forward's terms do not depend on the device: only the one workspace differs
    assert cuda.inference_peak_bytes - cpu.inference_peak_bytes == 33_554_432


@needs_no_gpu
@pytest.mark.parametrize("offset", [0, -1])
def test_cuda_validation_counts_trainings_library_buffers(
    offset: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Validation runs between training steps: beside the inference peak (one cuBLAS workspace)
    the training's second workspace and cuDNN's dropout state stay allocated. Exactly at that
    sum the configured validation batch fits; a byte less and it halves."""
    from foxhunt.config import RunConfig, TrainConfig
    from foxhunt.memory.budget import _fit_validation

    monkeypatch.delenv(libs.CUBLAS_ENV, raising=False)
    cfg = RunConfig(
        model=tft_225().model,
        train=TrainConfig(batch_size=32, validation_batch_size=64, device="cuda", precision="fp32"),
    )
    est = estimate_memory(cfg.model, 64, precision="fp32", device="cuda")
    need = est.inference_peak_bytes + est.optimizer_bytes + est.parameter_bytes
    need += 33_554_432 + 6_488_064
    reasons: list[str] = []
    got = _fit_validation(cfg, "fp32", need + offset, reasons, 0)
    assert got == (64 if offset == 0 else 32)


def test_a_visible_gpu_sizes_the_buffers(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a GPU visible its compute capability picks the cuBLAS default and its multiprocessor
    count scales the dropout state (an 8.6 card with 84 SMs, faked: no GPU is used)."""
    from types import SimpleNamespace

    asked: list[object] = []

    def properties(index: object) -> SimpleNamespace:
        asked.append(index)
        return SimpleNamespace(major=8, minor=6, multi_processor_count=84)

    monkeypatch.delenv(libs.CUBLAS_ENV, raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 3)
    monkeypatch.setattr(torch.cuda, "get_device_properties", properties)
    assert libs._visible_gpu() == ((8, 6), 84)
    assert asked == [3]  # the current device's properties
    assert libs.cublas_workspace_bytes() == libs.EARLIER_WORKSPACE
    assert libs.cudnn_dropout_state_bytes() == 84 * 49_152
    cfg = tft_225().model
    assert libs.cuda_library_bytes(cfg) == 2 * libs.EARLIER_WORKSPACE + 84 * 49_152


@pytest.mark.parametrize("recompute", [True, False])
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_cuda_lstm_transient_adds_the_workspace(recompute: bool, precision: str) -> None:
    """On CUDA each LSTM's backward transient is cuDNN's workspace on top of what it recomputes
    (its whole ``lstm_bytes`` with recompute, nothing more without); on the CPU oneDNN's
    backward scratch of one layer instead."""
    from foxhunt.memory.activation_formulas import lstm_backward_scratch_bytes, lstm_bytes
    from foxhunt.memory.activations import blocks_unchecked, shape_of

    cfg = tft_225().model
    d = cfg.hidden
    f = 4 if precision == "fp32" else 2
    for device in ("cpu", "cuda"):
        s = shape_of(cfg, 8, precision, device)  # type: ignore[arg-type]
        _, transients = blocks_unchecked(cfg, s, recompute)
        for name, steps in (("lstm_encoder", s.t_enc), ("lstm_decoder", s.t_dec)):
            redo = lstm_bytes(steps, s) if recompute else 0
            if device == "cuda":
                work = cudnn_lstm_workspace_bytes(8, steps, d, f)
            else:
                work = lstm_backward_scratch_bytes(8, steps, d, d)
            assert transients[name] == redo + work
