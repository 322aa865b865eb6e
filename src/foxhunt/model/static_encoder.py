"""Static covariate encoders (Lim et al. 2021, §4.3).

Four GRNs turn the selected static embedding into four context vectors: ``c_s`` for variable
selection, ``c_e`` for static enrichment, and ``c_c`` / ``c_h`` for the LSTM's initial cell and
hidden state.
"""

from __future__ import annotations

from typing import NamedTuple

from torch import Tensor, nn

from foxhunt.model.grn import GatedResidualNetwork


class StaticContexts(NamedTuple):
    """The four context vectors, each (B, d)."""

    selection: Tensor
    """c_s: context for the temporal variable selection networks."""
    enrichment: Tensor
    """c_e: context for static enrichment."""
    cell: Tensor
    """c_c: initial LSTM cell state (every layer)."""
    hidden: Tensor
    """c_h: initial LSTM hidden state (every layer)."""


class StaticCovariateEncoders(nn.Module):
    """Four GRNs ``d -> d`` over the static embedding.

    Args:
        d_model: Width d.
        dropout: Dropout inside the GRNs.
    """

    def __init__(self, d_model: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.selection = GatedResidualNetwork(d_model, d_model, d_model, dropout)
        self.enrichment = GatedResidualNetwork(d_model, d_model, d_model, dropout)
        self.cell = GatedResidualNetwork(d_model, d_model, d_model, dropout)
        self.hidden = GatedResidualNetwork(d_model, d_model, d_model, dropout)

    def forward(self, static: Tensor) -> StaticContexts:
        """Encode.

        Args:
            static: (B, d) selected static embedding.

        Returns:
            The four (B, d) contexts.
        """
        return StaticContexts(
            self.selection(static), self.enrichment(static), self.cell(static), self.hidden(static)
        )
