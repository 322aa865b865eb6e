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
    state = (torch.zeros(1, 3, 6), torch.zeros(1, 3, 6))
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
