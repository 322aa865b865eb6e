"""The LSTM's memory formulas against what PyTorch keeps (CPU, exact) and their CUDA forms.

``make mutate`` (memory.activation_formulas) found ``lstm_bytes`` pinned by nothing: with the
LSTMs recomputing (the default) its total only enters as a transient, which the estimate's
tolerance tests cannot see term by term."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from foxhunt.memory.activation_formulas import lstm_workspace_bytes
from foxhunt.memory.estimate import estimate_saved_activations
from foxhunt.memory.saved_tensors import saved_activations_by_block
from foxhunt.model.recompute import set_internal_recompute
from memory_helpers import TINY, loss_closure

LSTMS = ("lstm_encoder", "lstm_decoder")


@pytest.mark.parametrize(
    ("layers", "dropout", "hidden"),
    [(1, 0.0, 16), (2, 0.0, 16), (2, 0.1, 16), (3, 0.1, 24), (2, 0.1, 64)],
)
@pytest.mark.parametrize("batch", [3, 8])
def test_lstm_bytes_is_what_the_cpu_keeps(layers: int, dropout: float, hidden: int, batch: int):
    """Without recompute the LSTM blocks keep exactly what ``lstm_bytes`` counts: the initial
    state, the input copy, each later layer's dropout mask and dropped input, outputs, final
    states and oneDNN's workspace (hidden 64: 4H = 256, the leading dimension oneDNN pads)."""
    cfg = dataclasses.replace(TINY, lstm_layers=layers, dropout=dropout, hidden=hidden, n_heads=4)
    model, fn, inputs = loss_closure(cfg, batch)
    set_internal_recompute(model, False)
    measured = saved_activations_by_block(model, fn, exclude=inputs)
    estimated = estimate_saved_activations(cfg, batch, recompute=False)
    assert {k: estimated[k] for k in LSTMS} == {k: measured[k] for k in LSTMS}


@pytest.mark.parametrize("layers", [1, 2, 3])
def test_lstm_precision_counts_on_cuda_only(layers: int) -> None:
    """On the CPU the LSTM runs outside autocast: the same bytes in bf16 as in fp32. On CUDA
    cuDNN runs it in half precision: every per-step tensor halves, the (L, B, d) initial and
    final states stay fp32."""
    cfg = dataclasses.replace(TINY, lstm_layers=layers, dropout=0.1)
    b, d = 5, cfg.hidden
    for device in ("cpu", "cuda"):
        full, half = (
            estimate_saved_activations(cfg, b, precision=p, device=device, recompute=False)  # type: ignore[arg-type]
            for p in ("fp32", "bf16")
        )
        for name in LSTMS:
            if device == "cpu":
                assert half[name] == full[name]
            else:
                states = 4 * layers * b * d * 4
                assert full[name] - half[name] == (full[name] - states) // 2 > 0


def test_cuda_reserve_space_is_six_states_per_step() -> None:
    """cuDNN's reserve space as the estimate approximates it: 6·T·B·H per layer, at the LSTM's
    element size (an H200 kept 11.03·T·B·H·4 for two layers; docs/memory.md)."""
    assert lstm_workspace_bytes(7, 11, 16, 32, "cuda") == 6 * 7 * 11 * 32 * 4
    assert lstm_workspace_bytes(7, 11, 16, 32, "cuda", 2) == 6 * 7 * 11 * 32 * 2


@pytest.mark.parametrize(
    ("batch", "steps", "hidden", "layers"), [(32, 50, 128, 2), (16, 20, 96, 1)]
)
def test_lstm_backward_peak_is_workspaces_plus_one_layers_scratch(
    batch: int, steps: int, hidden: int, layers: int
) -> None:
    """The exact tensor peak of an LSTMBlock's training forward + backward (recompute off) is
    what the estimate puts there: every layer's kept tensors (``lstm_bytes``), the parameter
    gradients, the input and output gradients, and one layer's oneDNN backward scratch (within
    2 %: small (B, H) buffers are not modelled)."""
    from foxhunt.memory.activation_formulas import (
        F32,
        Shape,
        lstm_backward_scratch_bytes,
        lstm_bytes,
    )
    from foxhunt.memory.tensor_peak import tensor_peak_bytes
    from foxhunt.model.lstm import LSTMBlock

    torch.manual_seed(0)
    block = LSTMBlock(hidden, hidden, layers, 0.1, recompute=False).train()
    x = torch.randn(batch, steps, hidden, requires_grad=True)
    state = (torch.zeros(layers, batch, hidden), torch.zeros(layers, batch, hidden))
    dy = torch.randn(batch, steps, hidden)

    def step() -> None:
        out, _ = block(x, state)
        out.backward(dy)

    step()
    measured = tensor_peak_bytes(step)
    s = Shape(b=batch, t_enc=steps, t_dec=0, d=hidden, d_v=1, nh=1, layers=layers, q=1,
              dropout=True, f=F32, device="cpu")  # fmt: skip
    grads = sum(p.numel() for p in block.parameters()) * F32
    io = 2 * batch * steps * hidden * F32
    modelled = lstm_bytes(steps, s) + grads + io
    assert abs(modelled + lstm_backward_scratch_bytes(batch, steps, hidden, hidden) - measured) <= (
        0.02 * measured
    )
    assert modelled < 0.93 * measured  # without the scratch it is that much low
