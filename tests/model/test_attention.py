from __future__ import annotations

import math

import pytest
import torch

from foxhunt.model.attention import InterpretableMultiHeadAttention, causal_mask


def naive_attention(
    m: InterpretableMultiHeadAttention, query: torch.Tensor, key: torch.Tensor, mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Loop over heads, explicit softmax: the paper's eq. 14-16 written plainly."""
    dh = m.head_dim
    v = key @ m.v_proj.weight.T + m.v_proj.bias  # shared by every head
    heads, probs = [], []
    for h in range(m.n_heads):
        rows = slice(h * dh, (h + 1) * dh)
        q = query @ m.q_proj.weight[rows].T + m.q_proj.bias[rows]
        k = key @ m.k_proj.weight[rows].T + m.k_proj.bias[rows]
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(dh)
        p = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
        heads.append(p @ v)
        probs.append(p)
    out = torch.stack(heads).mean(0) @ m.out_proj.weight.T + m.out_proj.bias
    return out, torch.stack(probs, dim=1)


def test_causal_mask_aligns_queries_with_the_last_positions() -> None:
    mask = causal_mask(2, 5)
    assert mask.tolist() == [[True, True, True, True, False], [True] * 5]


def test_batched_attention_equals_loop_over_heads() -> None:
    torch.manual_seed(0)
    m = InterpretableMultiHeadAttention(16, 4)
    key = torch.randn(3, 9, 16)
    query = key[:, 6:]
    mask = causal_mask(3, 9)
    out, weights = m(query, key, mask, return_weights=True)
    ref_out, ref_weights = naive_attention(m, query, key, mask)
    torch.testing.assert_close(out, ref_out, rtol=1e-5, atol=1e-6)
    assert weights is not None and weights.shape == (3, 4, 3, 9)
    torch.testing.assert_close(weights, ref_weights, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(weights.sum(-1), torch.ones(3, 4, 3))
    assert m(query, key, mask)[1] is None  # weights only on request


def test_attention_is_causal() -> None:
    torch.manual_seed(0)
    m = InterpretableMultiHeadAttention(8, 2)
    key = torch.randn(2, 10, 8)
    mask = causal_mask(4, 10)  # queries at positions 6..9
    out = m(key[:, 6:], key, mask)[0]
    for t in range(6, 10):
        changed = key.clone()
        changed[:, t + 1 :] += torch.randn_like(changed[:, t + 1 :])
        out2 = m(changed[:, 6:], changed, mask)[0]
        i = t - 6
        torch.testing.assert_close(out2[:, : i + 1], out[:, : i + 1])
        if t < 9:
            assert not torch.allclose(out2[:, i + 1 :], out[:, i + 1 :])


def test_dropout_on_the_probabilities_only_in_training() -> None:
    torch.manual_seed(0)
    m = InterpretableMultiHeadAttention(16, 4, dropout=0.5)
    key = torch.randn(3, 9, 16)
    query, mask = key[:, 6:], causal_mask(3, 9)
    ref_out, _ = naive_attention(m, query, key, mask)
    torch.testing.assert_close(m.eval()(query, key, mask)[0], ref_out, rtol=1e-5, atol=1e-6)
    m.train()
    torch.manual_seed(1)
    dropped = m(query, key, mask)[0]
    assert not torch.allclose(dropped, ref_out, atol=1e-3)
    torch.manual_seed(1)
    torch.testing.assert_close(m(query, key, mask)[0], dropped)  # masks from torch's generator


def test_heads_must_divide_the_width() -> None:
    with pytest.raises(ValueError, match=r"^d_model \(10\) must divide by n_heads \(4\)$"):
        InterpretableMultiHeadAttention(10, 4)
