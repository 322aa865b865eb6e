"""The LSTM sequence-to-sequence layer (Lim et al. 2021, §4.5.1), one block per direction.

The encoder runs over the past ``T_enc`` selected embeddings, seeded with the static contexts
``(c_h, c_c)`` in every layer; the decoder runs over the ``T_dec`` known-future embeddings,
seeded with the encoder's final state.

Precision: under CPU bf16 autocast the LSTM runs in bf16 where the CPU computes bf16 natively
(AVX512-BF16 or AMX: ``runtime.native_bf16``) and in fp32 elsewhere (autocast off, inputs cast
up): bf16 autocast around ``nn.LSTM`` has been seen to fail inside oneDNN on CPUs without native
bf16 (AVX2 only), where it would save no time anyway. Natively, oneDNN's bf16 LSTM keeps less
(TFT-225 batch 32: encoder 42.9 instead of 59.9 MB, decoder 10.8 instead of 12.7) and a
training step is 7-10 % faster (0.31-0.33 s against 0.34). On CUDA the LSTM runs under
autocast as usual.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.utils.checkpoint import checkpoint

LSTMState = tuple[Tensor, Tensor]


class LSTMBlock(nn.Module):
    """A stacked, batch-first ``nn.LSTM`` with explicit initial state.

    Args:
        d_in: Input width.
        d_hidden: Hidden width.
        n_layers: Stacked layers.
        dropout: Dropout between layers (only with ``n_layers > 1``).
        recompute: In training, recompute the LSTM's forward in backward instead of keeping its
            internals: oneDNN's training workspace is about ``16 * d_hidden`` floats per step,
            batch row and layer (at TFT-225, batch 32: 67 MiB, the largest activation of the
            model), and recomputing costs one more LSTM forward.
    """

    def __init__(
        self, d_in: int, d_hidden: int, n_layers: int, dropout: float = 0.0, recompute: bool = True
    ) -> None:
        super().__init__()
        self.lstm = nn.LSTM(
            d_in, d_hidden, n_layers, batch_first=True, dropout=dropout if n_layers > 1 else 0.0
        )
        self.recompute = recompute

    def forward(self, x: Tensor, state: LSTMState) -> tuple[Tensor, LSTMState]:
        """Run the LSTM.

        Args:
            x: (B, T, d_in) input sequence.
            state: ``(h0, c0)``, each (n_layers, B, d_hidden).

        Returns:
            ``(out, (h, c))``: (B, T, d_hidden) outputs and the final state.
        """
        h0, c0 = state
        if self.recompute and torch.is_grad_enabled():
            out, h, c = checkpoint(self._run, x, h0, c0, use_reentrant=False)
        else:
            out, h, c = self._run(x, h0, c0)
        return out, (h, c)

    def _run(self, x: Tensor, h0: Tensor, c0: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        if x.device.type == "cpu" and torch.is_autocast_enabled("cpu") and not _native_cpu_bf16():
            with torch.autocast("cpu", enabled=False):
                out, (h, c) = self.lstm(
                    x.float(), (h0.float().contiguous(), c0.float().contiguous())
                )
        else:
            out, (h, c) = self.lstm(x, (h0.contiguous(), c0.contiguous()))
        return out, h, c


def _native_cpu_bf16() -> bool:
    """bf16 autocast on a CPU that computes bf16 natively (where oneDNN's bf16 LSTM runs)."""
    from foxhunt.runtime import native_bf16

    return torch.get_autocast_dtype("cpu") == torch.bfloat16 and native_bf16(torch.device("cpu"))
