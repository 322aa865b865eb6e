"""Gated residual network (Lim et al. 2021, eq. 2-4).

``GRN(a, c) = LayerNorm(skip(a) + GLU(W1 ELU(W2 a + W3 c + b2) + b1))``. ``skip`` is the identity
when input and output widths agree and a linear map otherwise (as in the authors' reference code).
The optional context ``c`` is per sample: it is projected once per sample and broadcast over time,
instead of being expanded to every time step first.
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from foxhunt.model.glu import GateAddNorm


class GatedResidualNetwork(nn.Module):
    """A GRN ``d_in -> d_out`` with an optional static context.

    Args:
        d_in: Input width.
        d_hidden: Width of the two inner layers.
        d_out: Output width.
        dropout: Dropout before the gate.
        d_context: Width of the context vector, or None for no context.
        project_skip: Use a linear skip even when ``d_in == d_out``; None (default) projects only
            when the widths differ.
    """

    def __init__(
        self,
        d_in: int,
        d_hidden: int,
        d_out: int,
        dropout: float = 0.0,
        d_context: int | None = None,
        project_skip: bool | None = None,
    ) -> None:
        super().__init__()
        if project_skip is None:
            project_skip = d_in != d_out
        self.skip = nn.Linear(d_in, d_out) if project_skip else None
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.context = nn.Linear(d_context, d_hidden, bias=False) if d_context else None
        self.fc2 = nn.Linear(d_hidden, d_hidden)
        self.gate = GateAddNorm(d_hidden, d_out, dropout)

    def forward(self, a: Tensor, context: Tensor | None = None) -> Tensor:
        """Apply the GRN.

        Args:
            a: (B, ..., d_in) input.
            context: (B, d_context) per-sample context, broadcast over the middle dimensions of
                ``a``; required iff the GRN was built with ``d_context``.

        Returns:
            (B, ..., d_out).

        Raises:
            ValueError: If a context is given to a GRN without one, or missing for one with one.
        """
        h = self.fc1(a)  # (B, ..., d_hidden)
        if self.context is not None:
            if context is None:
                raise ValueError("this GRN needs a context vector")
            c = self.context(context)  # (B, d_hidden), once per sample
            h = h + c.view(c.shape[0], *([1] * (a.dim() - 2)), c.shape[-1])
        elif context is not None:
            raise ValueError("this GRN was built without a context")
        h = self.fc2(F.elu(h, inplace=True))  # in place: ELU's backward uses the output fc2 keeps
        skip = a if self.skip is None else self.skip(a)
        return self.gate(h, skip)
