from __future__ import annotations

import pytest
import torch

from foxhunt.model.lstm import LSTMBlock


def test_initial_state_is_used_and_final_state_returned() -> None:
    torch.manual_seed(0)
    m = LSTMBlock(4, 6, 2)
    x = torch.randn(3, 5, 4)
    zeros = (torch.zeros(2, 3, 6), torch.zeros(2, 3, 6))
    seeded = (torch.randn(2, 3, 6), torch.randn(2, 3, 6))
    out0, _ = m(x, zeros)
    out1, (h, c) = m(x, seeded)
    assert out1.shape == (3, 5, 6) and h.shape == c.shape == (2, 3, 6)
    assert not torch.allclose(out0, out1)
    torch.testing.assert_close(out1[:, -1], h[-1])
    # continuing from the final state equals running the whole sequence at once
    first, state = m(x[:, :2], seeded)
    rest, _ = m(x[:, 2:], state)
    torch.testing.assert_close(torch.cat([first, rest], 1), out1)


@pytest.mark.parametrize("native", [False, True])
def test_cpu_bf16_autocast_runs_lstm_in_fp32_unless_bf16_is_native(
    native: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    import foxhunt.runtime as runtime

    if native and not runtime.native_bf16(torch.device("cpu")):
        pytest.skip("this CPU has no native bf16 (oneDNN's bf16 LSTM may fail here)")
    monkeypatch.setattr(runtime, "native_bf16", lambda device: native)
    torch.manual_seed(0)
    m = LSTMBlock(4, 6, 1)
    x = torch.randn(3, 5, 4)
    state = (torch.randn(1, 3, 6), torch.randn(1, 3, 6))  # the fp32 run starts from it too
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out, (h, c) = m(x.bfloat16(), state)
    assert torch.isfinite(out).all()
    fp32 = m(x.bfloat16().float(), state)[0]
    if native:  # oneDNN's bf16 LSTM: bf16 out, within bf16 rounding of the fp32 run
        assert out.dtype == h.dtype == torch.bfloat16
        torch.testing.assert_close(out.float(), fp32, rtol=0.02, atol=0.02)
    else:
        assert out.dtype == torch.float32
        torch.testing.assert_close(out, fp32)


def test_recompute_gives_the_same_gradients() -> None:
    torch.manual_seed(0)
    m = LSTMBlock(4, 6, 2, dropout=0.2)
    x = torch.randn(3, 5, 4, requires_grad=True)
    state = (torch.randn(2, 3, 6), torch.randn(2, 3, 6))
    grads = []
    for recompute in (False, True):
        m.recompute = recompute
        m.zero_grad(set_to_none=True)
        torch.manual_seed(1)  # same inter-layer dropout masks
        out, (h, c) = m(x, state)
        (out.sum() + h.sum() + c.sum()).backward()
        grads.append([x.grad.clone(), *(p.grad.clone() for p in m.parameters())])
        x.grad = None
    for a, b in zip(*grads, strict=True):
        torch.testing.assert_close(a, b)


def test_dropout_runs_between_stacked_layers_only() -> None:
    assert LSTMBlock(4, 6, 2).lstm.dropout == 0.0
    assert LSTMBlock(4, 6, 2, dropout=0.3).lstm.dropout == 0.3
    assert LSTMBlock(4, 6, 1, dropout=0.3).lstm.dropout == 0.0  # one layer: nothing between


def _saved_bytes(m: LSTMBlock, x: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]) -> int:
    storages: dict[int, int] = {}

    def keep(t: torch.Tensor) -> torch.Tensor:
        storages[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(keep, lambda t: t):
        out, (h, c) = m(x, state)
    (out.sum() + h.sum() + c.sum()).backward()
    return sum(storages.values())


def test_recompute_keeps_only_the_inputs_and_trains_parameters_from_constant_inputs() -> None:
    """Recomputed: the LSTM keeps what checkpoint saves (its inputs), not oneDNN's workspace,
    and its weights get gradients even when no input requires one (the non-reentrant
    checkpoint; the reentrant one would leave them None)."""
    torch.manual_seed(0)
    m = LSTMBlock(4, 6, 2)
    x = torch.randn(3, 5, 4)
    state = (torch.randn(2, 3, 6), torch.randn(2, 3, 6))
    grads, saved = [], []
    for recompute in (False, True):
        m.recompute = recompute
        m.zero_grad(set_to_none=True)
        saved.append(_saved_bytes(m, x, state))
        grads.append([p.grad for p in m.parameters()])
    for a, b in zip(*grads, strict=True):
        assert a is not None and b is not None
        torch.testing.assert_close(a, b)
    inputs = (x.numel() + 2 * state[0].numel()) * 4
    assert saved[1] == inputs < saved[0]


@pytest.mark.subprocess
def test_bf16_autocast_lstm_runs_under_a_onednn_cap_below_bf16() -> None:
    """ONEDNN_MAX_CPU_ISA=AVX2 (``make test-avx2``, or a user's container): oneDNN is told at
    start-up, so this runs in a fresh interpreter; on an AVX-512 BF16 CPU a bf16 LSTM there
    fails inside oneDNN unless the block runs it in fp32."""
    import os
    import subprocess
    import sys

    code = (
        "import torch\n"
        "from foxhunt.model.lstm import LSTMBlock\n"
        "m = LSTMBlock(4, 6, 1, recompute=False)\n"
        "s = (torch.zeros(1, 3, 6), torch.zeros(1, 3, 6))\n"
        "with torch.autocast('cpu', dtype=torch.bfloat16):\n"
        "    out, _ = m(torch.randn(3, 5, 4), s)\n"
        "assert out.dtype == torch.float32 and bool(torch.isfinite(out).all())\n"
        "print('ok')\n"
    )
    env = {**os.environ, "ONEDNN_MAX_CPU_ISA": "AVX2", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"
