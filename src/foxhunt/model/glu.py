"""Gated linear unit and gate-add-norm (Lim et al. 2021, eq. 5 and the "Add & Norm" boxes).

``GLU(x) = (W4 x + b4) * sigmoid(W5 x + b5)`` lets a block switch itself off (output near 0), so a
skip connection can carry the input past it; ``GateAddNorm(x, skip) = LayerNorm(skip + GLU(x))``.
The two linear maps are one ``Linear(d_in, 2 * d_out)`` followed by ``torch.nn.functional.glu``.
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from foxhunt.model.dropout import dropout_layer


class GatedLinearUnit(nn.Module):
    """Dropout, then a gated linear map ``d_in -> d_out``.

    Args:
        d_in: Input width.
        d_out: Output width.
        dropout: Dropout applied to the input (the paper puts dropout before the gate).
    """

    def __init__(self, d_in: int, d_out: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.dropout = dropout_layer(dropout)
        self.proj = nn.Linear(d_in, 2 * d_out)

    def forward(self, x: Tensor) -> Tensor:
        """Apply the gate.

        Args:
            x: (..., d_in) input.

        Returns:
            (..., d_out) gated output.
        """
        return F.glu(self.proj(self.dropout(x)), dim=-1)


class GateAddNorm(nn.Module):
    """``LayerNorm(skip + GLU(x))``: the gated skip connection used throughout the TFT.

    Args:
        d_in: Width of ``x``.
        d_out: Width of ``skip`` and of the output.
        dropout: Dropout before the gate.
    """

    def __init__(self, d_in: int, d_out: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.glu = GatedLinearUnit(d_in, d_out, dropout)
        self.norm = nn.LayerNorm(d_out)

    def forward(self, x: Tensor, skip: Tensor) -> Tensor:
        """Gate ``x``, add ``skip``, normalise.

        Args:
            x: (..., d_in) the block's output to be gated.
            skip: (..., d_out) the residual.

        Returns:
            (..., d_out).
        """
        return self.norm(skip + self.glu(x))
