from __future__ import annotations

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


def test_cpu_bf16_autocast_runs_lstm_in_fp32() -> None:
    torch.manual_seed(0)
    m = LSTMBlock(4, 6, 1)
    x = torch.randn(3, 5, 4)
    state = (torch.zeros(1, 3, 6), torch.zeros(1, 3, 6))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out, _ = m(x.bfloat16(), state)
    assert out.dtype == torch.float32 and torch.isfinite(out).all()
    torch.testing.assert_close(out, m(x.bfloat16().float(), state)[0])


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
