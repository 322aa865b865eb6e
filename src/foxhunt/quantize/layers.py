"""Inference-only layers that hold INT8 (or bf16) weights and compute in float.

* :class:`QuantLinear` replaces ``nn.Linear``. With int8 weights on CPU it quantises its input
  rows to int8 too (per row at run time, ``dynamic``, or with one calibrated scale,
  ``static``) and multiplies int8 x int8 -> int32 with ``torch._int_mm`` (oneDNN/VNNI on x86;
  the same kernel torchao's int8 dynamic-activation path calls; a float64 matmul where a
  one-off check finds its sums wrong, :func:`int_mm_is_exact`). Elsewhere (CUDA, or
  ``activations="none"``) the weight is dequantised for the call (weight-only INT8).
* :class:`QuantLSTM` replaces ``nn.LSTM``: weight-only, its int8 weights are dequantised for
  each call and run through the ordinary ``nn.LSTM`` kernel via ``torch.func.functional_call``
  on a weightless (meta-device) LSTM shell. There is no maintained int8 LSTM kernel (the
  quantised LSTM lives in the deprecated ``torch.ao.quantization``).
* :class:`DequantizeWeight` is a parametrisation (``torch.nn.utils.parametrize``) for the
  variable selection network's per-variable weight stacks: the module keeps int8 codes and
  every read of the attribute returns ``codes * scale``.

The dequantised copies are temporaries of one layer at a time: the model's resident weights
stay int8.
"""

from __future__ import annotations

import functools
import warnings
from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from foxhunt.quantize.tensors import dequantize_int8, quantize_rows

Activations = Literal["dynamic", "static", "none"]


def _weight(codes: Tensor, scale: Tensor | None, dtype: torch.dtype) -> Tensor:
    """Float weight from int8 codes and scales, or from a bf16 copy (``scale`` None)."""
    if scale is None:
        return codes.to(dtype)
    return dequantize_int8(codes, scale, dtype)


def int8_matmul(a: Tensor, b: Tensor) -> Tensor:
    """``a @ b`` of int8 matrices as exact int32 sums: ``torch._int_mm`` where it is exact on
    this machine (:func:`int_mm_is_exact`), else a float64 matmul (exact: every sum of int8
    products up to 2**53 is a float64 integer), rounded back to int32."""
    if int_mm_is_exact():
        return torch._int_mm(a, b)
    return (a.to(torch.float64) @ b.to(torch.float64)).to(torch.int32)


@functools.cache
def int_mm_is_exact() -> bool:
    """Whether ``torch._int_mm`` returns the exact sums here, checked once per process on a
    fixed 32 x 64 x 24 product of codes up to +-127. It does not under a oneDNN ISA cap below
    VNNI on a CPU with VNNI (``ONEDNN_MAX_CPU_ISA=AVX2`` on an AMD Zen 5, torch 2.13: sums off
    by thousands once codes pass about +-64, as if pairs of products saturated at 16 bits),
    where the int8 layers then multiply in float64 and a warning says so. An AVX2-only Zen 3
    passed the exact-sum tests in session 19; the check does not assume either way."""
    g = torch.Generator().manual_seed(0)
    a = torch.randint(-127, 128, (32, 64), generator=g, dtype=torch.int8)
    b = torch.randint(-127, 128, (64, 24), generator=g, dtype=torch.int8)
    try:
        exact = bool(torch.equal(torch._int_mm(a, b).to(torch.int64), a.long() @ b.long()))
    except RuntimeError:
        exact = False
    if not exact:
        warnings.warn(
            "torch._int_mm gives wrong int8 sums on this CPU and oneDNN setting (seen with "
            "ONEDNN_MAX_CPU_ISA below the CPU's own ISA): int8 layers multiply in float64 "
            "instead, exact but slower",
            RuntimeWarning,
            stacklevel=2,
        )
    return exact


class QuantLinear(nn.Module):
    """``y = x W^T + b`` with W stored as int8 codes + per-row scales, or as bf16.

    Args:
        weight: (out, in) int8 codes, or a bf16 weight (then ``scale`` is None).
        scale: (out, 1) float32 per-row scales of an int8 weight, else None.
        bias: (out,) float32, or None.
        activations: ``dynamic`` (per-row int8 activations, scales computed per call),
            ``static`` (one calibrated activation scale, ``act_scale``) or ``none``
            (weight-only: dequantise and use a float matmul).
        act_scale: Scalar float32 activation scale (``static`` only).

    Raises:
        ValueError: Inconsistent arguments.
    """

    def __init__(
        self,
        weight: Tensor,
        scale: Tensor | None,
        bias: Tensor | None,
        activations: Activations = "dynamic",
        act_scale: Tensor | None = None,
    ) -> None:
        super().__init__()
        if weight.dim() != 2:
            raise ValueError(f"weight must be 2-D, got shape {tuple(weight.shape)}")
        int8 = weight.dtype == torch.int8
        if int8 != (scale is not None):
            raise ValueError("an int8 weight needs scales; a bf16 weight takes none")
        if activations == "static" and act_scale is None:
            raise ValueError("static activation quantisation needs act_scale")
        self.out_features, self.in_features = weight.shape
        self.activations: Activations = activations if int8 else "none"
        self.register_buffer("weight", weight)
        self.register_buffer("weight_scale", scale)
        self.register_buffer("bias", bias)
        self.register_buffer("act_scale", act_scale if activations == "static" else None)

    def forward(self, x: Tensor) -> Tensor:
        """Apply the layer.

        Args:
            x: (..., in) input.

        Returns:
            (..., out) in ``x``'s dtype.
        """
        if self.activations == "none" or x.device.type != "cpu":
            bias = None if self.bias is None else self.bias.to(x.dtype)
            return F.linear(x, _weight(self.weight, self.weight_scale, x.dtype), bias)
        lead = x.shape[:-1]
        xq, sx = quantize_rows(x.reshape(-1, self.in_features), self.act_scale)  # (N, in) int8
        acc = int8_matmul(xq, self.weight.t())  # (N, out) int32, exact
        scale = sx * self.weight_scale.view(1, -1)  # (N | 1, out)
        if self.bias is None:
            y = acc.to(torch.float32) * scale
        else:  # the float32 bias as stored: not rounded to a half-precision input's dtype first
            y = torch.addcmul(self.bias.float(), acc.to(torch.float32), scale)
        return y.to(x.dtype).view(*lead, self.out_features)

    def extra_repr(self) -> str:
        kind = "int8" if self.weight.dtype == torch.int8 else str(self.weight.dtype)
        return f"{self.in_features} -> {self.out_features}, {kind}, activations={self.activations}"


class QuantLSTM(nn.Module):
    """A stacked ``nn.LSTM`` whose weights are stored as int8 codes + per-row scales, or bf16.

    Called as the TFT calls ``nn.LSTM``: ``out, (h, c) = lstm(x, (h0, c0))`` with the initial
    state given; only what the TFT's LSTMs use is covered (unidirectional, with biases, no
    ``proj_size``).

    Args:
        input_size: Input width.
        hidden_size: Hidden width.
        num_layers: Stacked layers.
        dropout: Dropout between layers (training mode only, as in ``nn.LSTM``).
        batch_first: Input layout (B, T, d) when True.
        weights: ``weight_ih_l{k}``/``weight_hh_l{k}`` -> int8 codes or bf16 weight.
        scales: The same names -> (rows, 1) float32 scales (int8 only; empty for bf16).
        biases: ``bias_ih_l{k}``/``bias_hh_l{k}`` -> float32 bias.

    Raises:
        ValueError: A tensor ``nn.LSTM`` needs is missing.
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int,
        dropout: float,
        batch_first: bool,
        weights: dict[str, Tensor],
        scales: dict[str, Tensor],
        biases: dict[str, Tensor],
    ) -> None:
        super().__init__()
        with torch.device("meta"):  # a weightless shell: its forward is the real LSTM kernel
            shell = nn.LSTM(
                input_size, hidden_size, num_layers, batch_first=batch_first, dropout=dropout
            )
        self._shell = (shell,)  # a tuple: not a submodule, so .to()/state_dict() never see it
        self._names = tuple(shell._flat_weights_names)
        for name in self._names:
            if name.startswith("weight_"):
                if name not in weights:
                    raise ValueError(f"LSTM weight {name} is missing")
                self.register_buffer(name, weights[name])
                self.register_buffer(f"{name}_scale", scales.get(name))
            else:
                if name not in biases:
                    raise ValueError(f"LSTM bias {name} is missing")
                self.register_buffer(name, biases[name])

    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor]
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """Run the LSTM with dequantised weights (temporaries for this call).

        Args:
            x: (B, T, input_size) when ``batch_first``.
            state: ``(h0, c0)``, each (num_layers, B, hidden_size).

        Returns:
            ``(out, (h, c))`` as ``nn.LSTM`` returns them.
        """
        params = {}
        for name in self._names:
            t = getattr(self, name)
            if name.startswith("weight_"):
                params[name] = _weight(t, getattr(self, f"{name}_scale"), x.dtype)
            else:
                params[name] = t.to(x.dtype)
        shell = self._shell[0]
        shell.train(self.training)
        return torch.func.functional_call(shell, params, (x, state))


class DequantizeWeight(nn.Module):
    """Parametrisation ``codes -> codes * scale`` (int8) or ``w -> float32(w)`` (bf16).

    Registered with ``parametrize.register_parametrization(module, name, ..., unsafe=True)``
    on a module whose ``name`` attribute holds the int8 codes (or bf16 weight).

    Args:
        scale: Float32 scales broadcastable to the weight, or None for a bf16 weight.
    """

    def __init__(self, scale: Tensor | None) -> None:
        super().__init__()
        self.register_buffer("scale", scale)

    def forward(self, stored: Tensor) -> Tensor:
        """The float32 weight."""
        return _weight(stored, self.scale, torch.float32)
