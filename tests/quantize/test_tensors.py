"""quantize/tensors.py: the symmetric INT8 scheme on hand-computed values.

``quantize_int8`` (per-row, per-column and per-variable scales, all-zero slices, input dtypes),
``dequantize_int8`` (``codes * scale`` in the requested dtype) and ``quantize_rows`` (dynamic
per-row scales, a static calibrated scale and the clamp to [-127, 127] it needs).
"""

from __future__ import annotations

import pytest
import torch

from foxhunt.quantize.tensors import QMAX, dequantize_int8, quantize_int8, quantize_rows

TINY = torch.tensor(1e-30, dtype=torch.float32)


# --- quantize_int8 -----------------------------------------------------------------------------


def test_quantize_int8_per_row_hand_values() -> None:
    w = torch.tensor(
        [
            [127.0, -50.0, 3.2, 0.0],  # scale 1
            [-2.54, 1.0, 0.0, 0.5],  # scale 0.02
            [0.0, 0.0, 0.0, 0.0],  # all zero: the floor scale, codes 0
        ]
    )
    codes, scale = quantize_int8(w, (1,))
    assert codes.dtype == torch.int8 and codes.shape == (3, 4)
    assert scale.dtype == torch.float32 and scale.shape == (3, 1)
    assert codes.tolist() == [[127, -50, 3, 0], [-127, 50, 0, 25], [0, 0, 0, 0]]
    expected = torch.stack([torch.tensor(1.0), torch.tensor(2.54) / 127, TINY]).view(3, 1)
    torch.testing.assert_close(scale, expected, rtol=0, atol=0)
    # The zero row comes back exactly zero, not NaN.
    assert torch.equal(dequantize_int8(codes, scale)[2], torch.zeros(4))


def test_quantize_int8_per_variable_stack_shares_one_scale_per_leading_index() -> None:
    g = torch.Generator().manual_seed(3)
    w = torch.randn(3, 4, 5, generator=g, dtype=torch.float64)
    w[1] *= 100.0  # variables of very different magnitude
    codes, scale = quantize_int8(w, (1, 2))
    assert codes.shape == (3, 4, 5) and codes.dtype == torch.int8
    assert scale.shape == (3, 1, 1) and scale.dtype == torch.float32
    amax = w.abs().amax(dim=(1, 2), keepdim=True)
    torch.testing.assert_close(scale.double(), amax / QMAX, rtol=1e-6, atol=0)
    assert codes.abs().amax(dim=(1, 2)).tolist() == [QMAX] * 3
    ref = torch.round(w / scale.double())
    assert torch.equal(codes.double(), ref)


def test_quantize_int8_per_column_scales() -> None:
    w = torch.tensor([[1.0, -4.0], [-0.5, 2.0], [0.25, 0.0]])
    codes, scale = quantize_int8(w, (0,))
    assert scale.shape == (1, 2)
    torch.testing.assert_close(scale, torch.tensor([[1.0, 4.0]]) / 127, rtol=0, atol=0)
    assert codes.tolist() == [[127, -127], [-64, 64], [32, 0]]


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16, torch.float16])
def test_quantize_int8_of_any_float_dtype_gives_int8_codes_and_float32_scales(
    dtype: torch.dtype,
) -> None:
    w = torch.tensor([[2.0, -1.0, 0.5]], dtype=dtype, requires_grad=True)
    codes, scale = quantize_int8(w, (1,))
    assert codes.dtype == torch.int8 and scale.dtype == torch.float32
    assert not codes.requires_grad and not scale.requires_grad
    assert codes.tolist() == [[127, -64, 32]]  # -63.5 and 31.75 round to the nearest code
    torch.testing.assert_close(scale, torch.tensor([[2.0 / 127]]), rtol=0, atol=0)


# --- dequantize_int8 ---------------------------------------------------------------------------


def test_dequantize_int8_is_codes_times_scale_in_float32_by_default() -> None:
    codes = torch.tensor([[127, -127, 0, 5], [1, -2, 3, -4]], dtype=torch.int8)
    scale = torch.tensor([[0.5], [0.25]])
    w = dequantize_int8(codes, scale)
    assert w.dtype == torch.float32
    assert w.tolist() == [[63.5, -63.5, 0.0, 2.5], [0.25, -0.5, 0.75, -1.0]]


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16, torch.float16])
def test_dequantize_int8_returns_the_requested_dtype(dtype: torch.dtype) -> None:
    codes = torch.tensor([[127, -127, 0, 5]], dtype=torch.int8)
    w = dequantize_int8(codes, torch.tensor([[0.5]]), dtype)
    assert w.dtype == dtype
    assert w.tolist() == [[63.5, -63.5, 0.0, 2.5]]  # all exact in these dtypes


def test_dequantize_int8_broadcasts_a_per_variable_scale() -> None:
    codes = torch.tensor([[[127, -1], [0, 64]], [[-127, 2], [3, 0]]], dtype=torch.int8)
    scale = torch.tensor([0.5, 0.25]).view(2, 1, 1)
    w = dequantize_int8(codes, scale)
    assert w.shape == (2, 2, 2)
    assert w.tolist() == [[[63.5, -0.5], [0.0, 32.0]], [[-31.75, 0.5], [0.75, 0.0]]]


# --- quantize_rows -----------------------------------------------------------------------------


def test_quantize_rows_dynamic_gives_one_scale_per_row() -> None:
    x = torch.tensor([[1.0, -2.54, 0.5], [254.0, 0.0, -100.0], [0.0, 0.0, 0.0]])
    codes, scale = quantize_rows(x)
    assert codes.dtype == torch.int8 and codes.shape == (3, 3)
    assert scale.dtype == torch.float32 and scale.shape == (3, 1)
    expected = torch.stack([torch.tensor(2.54) / 127, torch.tensor(2.0), TINY]).view(3, 1)
    torch.testing.assert_close(scale, expected, rtol=0, atol=0)
    assert codes.tolist() == [[50, -127, 25], [127, 0, -50], [0, 0, 0]]


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
def test_quantize_rows_of_other_float_dtypes(dtype: torch.dtype) -> None:
    x = torch.tensor([[4.0, -2.0, 1.0]], dtype=dtype)
    codes, scale = quantize_rows(x)
    assert codes.dtype == torch.int8 and scale.dtype == torch.float32
    assert codes.tolist() == [[127, -64, 32]]
    torch.testing.assert_close(scale, torch.tensor([[4.0 / 127]]), rtol=0, atol=0)


def test_quantize_rows_static_uses_the_given_scale_and_clamps_at_127() -> None:
    act_scale = torch.tensor(0.5)
    x = torch.tensor(
        [
            [1000.0, -1000.0, 0.26, -0.74],
            [63.4, -63.6, 0.0, 1e9],  # 126.8 -> 127; -127.2 clamps to -127
            [float("inf"), float("-inf"), 300.0, -300.0],
        ]
    )
    codes, scale = quantize_rows(x, act_scale)
    assert codes.dtype == torch.int8 and codes.shape == (3, 4)
    assert scale.shape == () and float(scale) == 0.5
    assert codes.tolist() == [[127, -127, 1, -1], [127, -127, 0, 127], [127, -127, 127, -127]]


def test_quantize_rows_static_within_range_is_plain_rounding() -> None:
    codes, _ = quantize_rows(torch.tensor([[0.3, -0.3, 12.7, -12.7]]), torch.tensor(0.1))
    assert codes.tolist() == [[3, -3, 127, -127]]
