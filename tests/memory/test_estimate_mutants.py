"""Estimate contracts that `make mutate` found unguarded (mutation/mutate.py, estimate).

Relationships, not byte counts copied from the code: the estimate's parts against a real model
and a real step, its fields against what it was asked for, and how it moves with the batch, the
precision, checkpointing and recompute.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from foxhunt.config import RunConfig, TrainConfig
from foxhunt.memory.estimate import (
    MemoryEstimate,
    batch_bytes,
    estimate_for_run,
    estimate_memory,
    parameter_bytes_by_block,
    run_device_type,
)
from foxhunt.model import TFT
from memory_helpers import TINY

R = dataclasses.replace


def test_parameter_bytes_by_block_are_the_real_blocks() -> None:
    model = TFT(TINY)
    want = {
        name: sum(p.numel() * 4 for p in child.parameters())
        for name, child in model.named_children()
    }
    assert parameter_bytes_by_block(TINY) == want
    assert sum(want.values()) == estimate_memory(TINY, 2).parameter_bytes


@pytest.mark.parametrize(
    ("batch", "precision", "checkpointing", "recompute"),
    [(3, "fp32", False, True), (5, "bf16", True, False)],
)
def test_fields_echo_the_request_and_components_add_up(
    batch: int, precision: str, checkpointing: bool, recompute: bool
) -> None:
    est = estimate_memory(
        TINY,
        batch,
        precision=precision,
        checkpointing=checkpointing,
        recompute=recompute,  # type: ignore[arg-type]
    )
    assert (est.batch_size, est.precision, est.checkpointing) == (batch, precision, checkpointing)
    assert est.gradient_bytes == est.parameter_bytes
    assert est.state_bytes == est.parameter_bytes + est.gradient_bytes + est.optimizer_bytes
    assert est.optimizer_transient_bytes == est.parameter_bytes  # one param-sized temporary
    assert est.batch_bytes == batch_bytes(TINY, batch)
    comps = est.components()
    saved = {k: v for k, v in comps.items() if k.startswith("saved.")}
    assert saved == {f"saved.{k}": v for k, v in est.saved_by_block.items()}
    assert comps == {
        "parameters": est.parameter_bytes,
        "gradients": est.gradient_bytes,
        "optimizer": est.optimizer_bytes,
        "batch": est.batch_bytes,
        **saved,
        "saved_activations": est.saved_activation_bytes,
        "backward_transient": est.backward_transient_bytes,
        "inference_peak": est.inference_peak_bytes,
        "training_peak": est.training_peak_bytes,
    }
    assert est.saved_activation_bytes == sum(est.saved_by_block.values()) > 0
    assert est.backward_transient_bytes > 0 and est.inference_peak_bytes > 0


def test_defaults_of_the_dataclass_and_the_function() -> None:
    bare = MemoryEstimate(1, "fp32", False, 1, 1, 1, 1)
    assert bare.saved_by_block == {} and bare.saved_activation_bytes == 0
    assert (bare.backward_transient_bytes, bare.inference_peak_bytes) == (0, 0)
    assert (bare.optimizer_transient_bytes, bare.training_peak_bytes) == (0, 0)
    default = estimate_memory(TINY, 4)
    explicit = estimate_memory(
        TINY, 4, precision="fp32", checkpointing=False, device="cpu", recompute=True
    )
    assert default == explicit
    assert estimate_memory(TINY, 4, recompute=False) != default


def test_run_device_type() -> None:
    for device, want in (("cpu", "cpu"), ("cuda", "cuda"), ("cuda:1", "cuda")):
        assert run_device_type(RunConfig(model=TINY, train=TrainConfig(device=device))) == want


@pytest.mark.parametrize("recompute", [False, True])
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_estimate_for_run_reads_every_setting_of_the_run(
    device: str,
    recompute: bool,
    monkeypatch,  # noqa: ANN001
) -> None:
    """Micro-batch (not the batch), checkpointing, recompute, the device and ``auto`` precision
    resolved for that device (a CPU with native bf16 here; CUDA without a GPU: fp32)."""
    import foxhunt.runtime

    if device == "cuda" and torch.cuda.is_available():
        pytest.skip("a GPU resolves auto for itself")
    monkeypatch.delenv(foxhunt.runtime.FORCE_FP32_ENV, raising=False)
    monkeypatch.setattr(foxhunt.runtime, "_cpu_has_native_bf16", lambda: True)
    model = R(TINY, encoder_length=12)
    cfg = RunConfig(
        model=model,
        train=TrainConfig(
            batch_size=16,
            micro_batch_size=4,
            checkpointing=True,
            recompute=recompute,
            precision="auto",
            device=device,
        ),
    )
    precision = "bf16" if device == "cpu" else "fp32"
    want = estimate_memory(
        model, 4, precision=precision, checkpointing=True, device=device, recompute=recompute
    )
    assert estimate_for_run(cfg) == want
    others = [
        estimate_memory(model, 16, precision=precision, checkpointing=True, device=device,
                        recompute=recompute),
        estimate_memory(model, 4, precision="fp32" if precision == "bf16" else "bf16",
                        checkpointing=True, device=device, recompute=recompute),
        estimate_memory(model, 4, precision=precision, checkpointing=False, device=device,
                        recompute=recompute),
        estimate_memory(model, 4, precision=precision, checkpointing=True, device=device,
                        recompute=not recompute),
    ]  # fmt: skip
    assert all(o != want for o in others)
    assert others[3].saved_by_block != want.saved_by_block  # recompute is heard


def test_cpu_and_cuda_estimates_differ_where_the_lstm_keeps_its_workspace() -> None:
    """The LSTM's saved workspace is device-specific: with recompute off the device shows."""
    cpu = estimate_memory(TINY, 4, recompute=False, device="cpu")
    cuda = estimate_memory(TINY, 4, recompute=False, device="cuda")
    assert cpu.saved_by_block != cuda.saved_by_block
    assert cpu.training_peak_bytes != cuda.training_peak_bytes


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_every_part_grows_with_the_batch(precision: str) -> None:
    small, large = (estimate_memory(TINY, b, precision=precision) for b in (4, 8))  # type: ignore[arg-type]
    assert large.parameter_bytes == small.parameter_bytes
    assert large.optimizer_bytes == small.optimizer_bytes
    assert large.batch_bytes == 2 * small.batch_bytes
    for field in ("backward_transient_bytes", "inference_peak_bytes", "training_peak_bytes"):
        assert getattr(large, field) > getattr(small, field), field


def test_half_precision_lowers_activations_not_state() -> None:
    # batch 16: at 8 the optimizer's transient, not the activations, sets both training peaks
    fp32, bf16 = (estimate_memory(TINY, 16, precision=p) for p in ("fp32", "bf16"))
    assert (bf16.parameter_bytes, bf16.optimizer_bytes, bf16.batch_bytes) == (
        fp32.parameter_bytes,
        fp32.optimizer_bytes,
        fp32.batch_bytes,
    )
    assert bf16.training_peak_bytes < fp32.training_peak_bytes
    # inference: on CUDA half the activations; on the CPU autocast keeps them at fp32 width and
    # holds a bf16 copy of the weights (measured, session 54: docs/memory.md)
    cuda = {p: estimate_memory(TINY, 16, precision=p, device="cuda") for p in ("fp32", "bf16")}  # type: ignore[arg-type]
    assert cuda["bf16"].inference_peak_bytes < cuda["fp32"].inference_peak_bytes
    half = bf16.parameter_bytes // 2
    assert bf16.inference_peak_bytes == fp32.inference_peak_bytes + half


def _activations(config, batch: int, precision: str = "fp32", device: str = "cpu") -> int:  # noqa: ANN001
    """The inference peak above the weights and the batch: the live activations."""
    est = estimate_memory(config, batch, precision=precision, device=device)  # type: ignore[arg-type]
    return est.inference_peak_bytes - est.parameter_bytes - est.batch_bytes


@pytest.mark.parametrize("preset", ["demo", "tft-225"])
def test_inference_activations_follow_their_documented_shape(preset: str) -> None:
    """memory/estimate.py's inference model, term by term, as relationships: linear in the
    batch; half in bf16; two (B, T, d) embeddings (+2 B T dd per unit of hidden width); in
    the widest VSN (the historical one, V_h > chunk) six (chunk, B T_enc, d_v) intermediates
    (+6 chunk B T_enc dd per unit of variable width) next to its (B T_enc, V_h) weights and
    inputs (+2 B T_enc dV per variable beyond the chunk)."""
    from foxhunt.config import preset as named

    cfg = named(preset).model
    b, f = 8, 4
    base = _activations(cfg, b)
    assert _activations(cfg, 2 * b) == 2 * base
    assert _activations(cfg, 3 * b) == 3 * base
    cuda = _activations(cfg, b, device="cuda") - _activations(cfg, b, "bf16", "cuda")
    assert cuda * 2 == base  # half in bf16 on CUDA (the same but the cuBLAS workspace)
    weights = estimate_memory(cfg, b).parameter_bytes
    assert _activations(cfg, b, "bf16") == base + weights // 2  # CPU: fp32 width + bf16 weights
    assert cfg.n_historical > cfg.vsn_chunk
    assert _activations(R(cfg, hidden=cfg.hidden + 8), b) - base == 2 * b * cfg.total_length * 8 * f
    rows = b * cfg.encoder_length
    wider = _activations(R(cfg, variable_width=cfg.variable_width + 2), b) - base
    assert wider == 6 * cfg.vsn_chunk * rows * 2 * f
    more = _activations(R(cfg, n_historical=cfg.n_historical + 10), b) - base
    assert more == 2 * rows * 10 * f
    whole = _activations(R(cfg, vsn_chunk=cfg.n_historical + 50), b)  # chunk capped at V_h
    assert whole == _activations(R(cfg, vsn_chunk=cfg.n_historical), b)
    assert whole - base == 6 * (cfg.n_historical - cfg.vsn_chunk) * rows * cfg.variable_width * f


def test_the_known_vsn_is_widest_when_it_has_the_most_variables() -> None:
    """With more known than historical variables the known VSN (over B (L + H) rows) sets the
    widest moment; the static VSN (B rows) never does here."""
    cfg = R(TINY, n_historical=4, n_known=40, vsn_chunk=64, encoder_length=10, horizon=6)
    b, f = 4, 4
    base = _activations(cfg, b)
    rows = b * cfg.total_length
    wider = _activations(R(cfg, variable_width=cfg.variable_width + 1), b) - base
    assert wider == 6 * cfg.n_known * rows * 1 * f
    assert _activations(R(cfg, n_static=cfg.n_static + 1), b) == base
    assert _activations(cfg, 2 * b) == 2 * base


def test_lstm_or_attention_set_the_widest_moment_when_the_vsns_are_narrow() -> None:
    """Few, narrow variables: the LSTM phase ((B, T, d) fp32 four times) or, with many heads
    over a long decoder, the attention scores ((B, nh, T_dec, T) three times) are the widest."""
    narrow = R(TINY, n_historical=2, n_known=1, n_static=1, variable_width=2, vsn_chunk=2)
    lstm = R(narrow, hidden=64, n_heads=4)
    b, t = 4, lstm.total_length
    grown = _activations(R(lstm, hidden=72), b) - _activations(lstm, b)
    assert grown == 2 * b * t * 8 * 4 + 4 * b * t * 8 * 4  # embeddings + the LSTM's four
    assert _activations(lstm, b, "bf16") > _activations(lstm, b) // 2  # the LSTM term stays fp32
    attn = R(narrow, hidden=8, n_heads=4, encoder_length=6, horizon=40)
    t = attn.total_length
    more_heads = _activations(R(attn, n_heads=8), b) - _activations(attn, b)
    assert more_heads == 3 * b * 4 * attn.horizon * t * 4
    assert _activations(attn, 2 * b) == 2 * _activations(attn, b)


@pytest.mark.parametrize(
    ("precision", "checkpointing", "device", "recompute"),
    [("bf16", False, "cpu", True), ("fp16", True, "cuda", False), ("fp32", True, "cuda", True)],
)
def test_saved_activations_are_asked_with_every_setting(
    precision: str, checkpointing: bool, device: str, recompute: bool
) -> None:
    from foxhunt.memory.estimate import estimate_saved_activations

    kw = {"checkpointing": checkpointing, "device": device, "recompute": recompute}
    est = estimate_memory(TINY, 6, precision=precision, **kw)  # type: ignore[arg-type]
    assert est.saved_by_block == estimate_saved_activations(TINY, 6, precision=precision, **kw)  # type: ignore[arg-type]
    if precision != "fp32":
        fp32 = estimate_saved_activations(TINY, 6, precision="fp32", **kw)  # type: ignore[arg-type]
        assert est.saved_by_block != fp32


@pytest.mark.parametrize(
    ("batch", "precision", "checkpointing", "device", "recompute"),
    [
        (64, "fp32", False, "cpu", True),
        (64, "fp32", True, "cpu", True),
        (48, "bf16", True, "cuda", False),
        (64, "fp32", True, "cpu", False),
        (1, "fp32", False, "cpu", True),  # the optimizer step is the peak
    ],
)
def test_training_peak_is_the_documented_backward_walk(
    batch: int, precision: str, checkpointing: bool, device: str, recompute: bool
) -> None:
    """estimate_memory's docstring, written out from its public parts and the per-block
    figures of memory/activations.py: weights + optimizer state + batch, plus the largest of
    the end of forward (all saved), each backward step from the output back (saved by the
    blocks not yet processed + gradients of the blocks processed, this one included + this
    block's transient: its recompute when checkpointed, else its own, plus the (B, T, d)
    gradients of its output and input, less its own gradients made only after its widest
    moment: a streamed VSN's selection GRN's) and the optimizer step (gradients + one
    param-sized temporary)."""
    from foxhunt.memory.activations import blocks_unchecked, gradients_made_after, shape_of
    from foxhunt.model import BLOCK_NAMES
    from foxhunt.model.recompute import CHECKPOINTED_BLOCKS

    cfg = R(TINY, encoder_length=9)
    kw = {"precision": precision, "checkpointing": checkpointing, "device": device}
    est = estimate_memory(cfg, batch, recompute=recompute, **kw)  # type: ignore[arg-type]
    s = shape_of(cfg, batch, precision, device)  # type: ignore[arg-type]
    unchecked, own = blocks_unchecked(cfg, s, recompute)
    params = parameter_bytes_by_block(cfg)
    later = gradients_made_after(cfg, recompute)
    assert set(later) == ({"historical_vsn", "known_vsn"} if recompute else set())
    io = 2 * batch * cfg.total_length * cfg.hidden * (4 if precision == "fp32" else 2)
    live, grads, peaks, transients = est.saved_activation_bytes, 0, [], []
    for name in reversed(BLOCK_NAMES):
        ckpt = checkpointing and name in CHECKPOINTED_BLOCKS
        transient = (unchecked[name] if ckpt else 0) + own.get(name, 0) + io
        grads += params.get(name, 0)
        peaks.append(live + grads - later.get(name, 0) + transient)
        transients.append(transient)
        live -= est.saved_by_block[name]
    n = est.parameter_bytes
    steps = max(est.saved_activation_bytes, *peaks, 2 * n)
    base = n + est.optimizer_bytes + est.batch_bytes + est.library_bytes
    assert est.training_peak_bytes == base + steps
    assert est.backward_transient_bytes == max(transients)
    assert live == est.saved_by_block["other"]  # every block's saved bytes released in turn
    if batch > 1:  # the backward walk sets the peak, so each of its terms shows
        assert max(peaks) > max(est.saved_activation_bytes, 2 * n)
    else:
        assert 2 * n > max(est.saved_activation_bytes, *peaks)


def test_estimate_for_run_holds_the_weight_average() -> None:
    """A run that averages its weights (``TrainConfig.weight_average``) keeps one more copy of
    the parameters for the whole run: its estimate says so, a plain run's does not."""
    plain = RunConfig(model=TINY, train=TrainConfig(batch_size=4, precision="fp32"))
    averaged = plain.replace(train={"weight_average": 0.99})
    est, base = estimate_for_run(averaged), estimate_for_run(plain)
    assert base.average_bytes == 0 and est.average_bytes == est.parameter_bytes > 0
    assert est.training_peak_bytes - base.training_peak_bytes == est.parameter_bytes


def test_the_gradients_made_after_are_the_streamed_selection_grns_own() -> None:
    """Each streamed VSN's selection GRN's parameters in fp32 bytes, counted on the real
    model (recompute on by default, as the estimate's); none with recompute off."""
    from foxhunt.memory.activations import gradients_made_after

    model = TFT(TINY)
    want = {
        name: 4 * sum(p.numel() for p in getattr(model, name).selection.parameters())
        for name in ("historical_vsn", "known_vsn")
    }
    assert gradients_made_after(TINY) == gradients_made_after(TINY, True) == want
    assert all(isinstance(v, int) for v in want.values()) and want["historical_vsn"] > 0
    assert gradients_made_after(TINY, False) == {}


@pytest.mark.parametrize("recompute", [True, False])
def test_the_estimate_asks_for_the_gradients_made_after_at_its_own_recompute(
    monkeypatch: pytest.MonkeyPatch, recompute: bool
) -> None:
    """Without recompute no VSN is streamed and nothing is made after a chunk: the estimate
    must not ask as if it were (the default is recompute on)."""
    import foxhunt.memory.estimate as estimate_module

    asked: list[tuple[object, ...]] = []
    real = estimate_module.gradients_made_after

    def spy(*args: object, **kwargs: object) -> dict[str, int]:
        asked.append((*args, *kwargs.values()))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(estimate_module, "gradients_made_after", spy)
    estimate_memory(TINY, 8, recompute=recompute)
    assert asked == [(TINY, recompute)]
