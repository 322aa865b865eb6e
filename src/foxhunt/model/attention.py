"""Interpretable multi-head attention (Lim et al. 2021, eq. 13-16).

Each head has its own query and key projections; all heads share one value projection, so the
head outputs can be averaged: ``H = (1/nh) sum_h A_h V W_V`` and ``out = H W_H``. Averaging the
heads' attention patterns then describes exactly what the layer did, which is the point.

All heads run in one ``scaled_dot_product_attention`` call with a boolean mask (True = may
attend), so no ``-1e9`` constants appear and fp16/bf16 stay finite. Attention weights are only
computed when asked for (interpretation), by a separate softmax over the same scores; nothing is
cached between calls.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def causal_mask(n_query: int, n_key: int, device: torch.device | None = None) -> Tensor:
    """Boolean mask for queries at the last ``n_query`` of ``n_key`` positions.

    Args:
        n_query: Number of query positions (the decoder steps).
        n_key: Number of key positions (encoder + decoder steps); ``n_key >= n_query``.
        device: Where to build the mask.

    Returns:
        (n_query, n_key) bool; entry ``[i, j]`` is True iff key ``j`` is at or before query ``i``'s
        position ``n_key - n_query + i``.
    """
    ones = torch.ones(n_query, n_key, dtype=torch.bool, device=device)
    return torch.tril(ones, diagonal=n_key - n_query)


class InterpretableMultiHeadAttention(nn.Module):
    """Multi-head attention with per-head Q/K, a shared V and head averaging.

    Args:
        d_model: Width d.
        n_heads: Heads nh; ``d_model`` must divide by it.
        dropout: Dropout on the attention probabilities (training only).
    """

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must divide by n_heads ({n_heads})")
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.dropout = dropout
        self.q_proj = nn.Linear(d_model, d_model)  # nh per-head query maps, stacked
        self.k_proj = nn.Linear(d_model, d_model)  # nh per-head key maps, stacked
        self.v_proj = nn.Linear(d_model, self.head_dim)  # one value map shared by all heads
        self.out_proj = nn.Linear(self.head_dim, d_model)

    def forward(
        self, query: Tensor, key: Tensor, mask: Tensor, return_weights: bool = False
    ) -> tuple[Tensor, Tensor | None]:
        """Attend.

        Args:
            query: (B, Tq, d) query positions.
            key: (B, Tk, d) key/value positions.
            mask: (Tq, Tk) bool, True where a query may attend a key; every row needs a True.
            return_weights: Also return the attention probabilities.

        Returns:
            ``(out, weights)``: (B, Tq, d) and, if asked for, (B, nh, Tq, Tk) attention
            probabilities (without dropout), else None.
        """
        b, tq, _ = query.shape
        tk = key.shape[1]
        q = self.q_proj(query).view(b, tq, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(key).view(b, tk, self.n_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(key).unsqueeze(1).expand(b, self.n_heads, tk, self.head_dim)
        heads = F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, dropout_p=self.dropout if self.training else 0.0
        )  # (B, nh, Tq, dh)
        out = self.out_proj(heads.mean(dim=1))  # (B, Tq, d)
        weights = None
        if return_weights:
            scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)  # (B, nh, Tq, Tk)
            weights = torch.softmax(scores.float().masked_fill(~mask, float("-inf")), dim=-1)
        return out, weights
