"""The model's interface: a typed batch in, a typed output out.

Defined here, by the model; ``data/`` produces ``TFTBatch`` and ``model/`` never imports ``data/``.
Shape vocabulary: B batch, T_enc encoder bars, T_dec horizon bars, S static inputs, V_h observed
inputs, V_k known-future inputs, Q quantiles, nh heads.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import torch
from torch import Tensor

from foxhunt.config import TFTConfig


@dataclass
class TFTBatch:
    """One batch of windows.

    Attributes:
        static: [B, S] per-symbol inputs at the forecast origin.
        historical: [B, T_enc, V_h] observed inputs for encoder bars t-T_enc+1 .. t.
        known: [B, T_enc + T_dec, V_k] known-future inputs for bars t-T_enc+1 .. t+T_dec.
        target: [B, T_dec] forward log returns (scaled) for h = 1..T_dec, or None at inference.
    """

    static: Tensor
    historical: Tensor
    known: Tensor
    target: Tensor | None = None

    @property
    def size(self) -> int:
        """B, the number of windows."""
        return self.static.shape[0]

    def to(self, device: torch.device | str, non_blocking: bool = False) -> TFTBatch:
        """Move every tensor to ``device``."""
        return TFTBatch(
            **{
                f.name: (
                    None
                    if (t := getattr(self, f.name)) is None
                    else t.to(device, non_blocking=non_blocking)
                )
                for f in fields(self)
            }
        )

    def slice(self, start: int, stop: int) -> TFTBatch:
        """Windows ``start:stop`` along the batch dimension (views, no copy)."""
        return TFTBatch(
            **{
                f.name: (None if (t := getattr(self, f.name)) is None else t[start:stop])
                for f in fields(self)
            }
        )


@dataclass
class TFTOutput:
    """What the model returns.

    Attributes:
        quantiles: [B, T_dec, Q] predicted quantiles of the (scaled) target.
        static_weights: [B, S] static variable selection weights (sum to 1 over S).
        historical_weights: [B, T_enc, V_h] observed-variable selection weights.
        known_weights: [B, T_enc + T_dec, V_k] known-variable selection weights.
        attention: [B, nh, T_dec, T_enc + T_dec] attention weights of the decoder positions,
            only when asked for (interpretation); None during training.
    """

    quantiles: Tensor
    static_weights: Tensor
    historical_weights: Tensor
    known_weights: Tensor
    attention: Tensor | None = None


def random_batch(config: TFTConfig, batch_size: int, *, seed: int = 0) -> TFTBatch:
    """A batch of standard-normal inputs with the config's shapes (fp32, CPU).

    Args:
        config: the network.
        batch_size: B.
        seed: generator seed.

    Returns:
        A :class:`~foxhunt.model.batch.TFTBatch` with a target.
    """
    g = torch.Generator().manual_seed(seed)
    c = config
    return TFTBatch(
        static=torch.randn(batch_size, c.n_static, generator=g),
        historical=torch.randn(batch_size, c.encoder_length, c.n_historical, generator=g),
        known=torch.randn(batch_size, c.total_length, c.n_known, generator=g),
        target=torch.randn(batch_size, c.horizon, generator=g),
    )
