"""quantize/layers.py: the int8 matmul is exact whatever ``torch._int_mm`` does here."""

from __future__ import annotations

import pytest
import torch

from foxhunt.quantize import layers
from foxhunt.quantize.layers import QuantLinear, int8_matmul
from foxhunt.quantize.tensors import quantize_int8


@pytest.fixture
def fresh_check():
    layers.int_mm_is_exact.cache_clear()
    yield
    layers.int_mm_is_exact.cache_clear()


def _off_by_one(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a.long() @ b.long()).to(torch.int32) + 1


def _int8(shape: tuple[int, int], seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-127, 128, shape, generator=g, dtype=torch.int8)


def test_a_wrong_int_mm_is_found_once_and_replaced_by_exact_float64_sums(
    monkeypatch: pytest.MonkeyPatch, fresh_check: None
) -> None:
    """As under ONEDNN_MAX_CPU_ISA=AVX2 on a VNNI CPU, where torch 2.13's sums are wrong."""
    calls = []

    def wrong(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        calls.append(a.shape)
        return _off_by_one(a, b)

    monkeypatch.setattr(torch, "_int_mm", wrong)
    a, b = _int8((40, 3360), 1), _int8((3360, 9), 2)  # sums up to 3360 * 127**2 = 54 M > 2**24
    with pytest.warns(RuntimeWarning, match="ONEDNN_MAX_CPU_ISA"):
        got = int8_matmul(a, b)
    assert got.dtype == torch.int32
    assert torch.equal(got.long(), a.long() @ b.long())
    assert calls == [(32, 64)]  # only the one-off check called it
    int8_matmul(a, b)
    assert calls == [(32, 64)]


def test_an_int_mm_that_raises_is_replaced_too(
    monkeypatch: pytest.MonkeyPatch, fresh_check: None
) -> None:
    def refuses(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        raise RuntimeError("could not create a primitive")

    monkeypatch.setattr(torch, "_int_mm", refuses)
    a, b = _int8((5, 12), 3), _int8((12, 7), 4)
    with pytest.warns(RuntimeWarning):
        assert torch.equal(int8_matmul(a, b).long(), a.long() @ b.long())


def test_an_exact_int_mm_is_used_without_a_warning(
    monkeypatch: pytest.MonkeyPatch, fresh_check: None, recwarn: pytest.WarningsRecorder
) -> None:
    calls = []

    def exact(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        calls.append(a.shape)
        return (a.long() @ b.long()).to(torch.int32)

    monkeypatch.setattr(torch, "_int_mm", exact)
    a, b = _int8((5, 12), 5), _int8((12, 7), 6)
    assert torch.equal(int8_matmul(a, b).long(), a.long() @ b.long())
    assert calls == [(32, 64), (5, 12)]
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_quant_linear_goes_through_the_checked_matmul(
    monkeypatch: pytest.MonkeyPatch, fresh_check: None
) -> None:
    monkeypatch.setattr(torch, "_int_mm", _off_by_one)
    g = torch.Generator().manual_seed(0)
    w, x = torch.randn(7, 12, generator=g), torch.randn(3, 12, generator=g)
    codes, s = quantize_int8(w, (1,))
    with pytest.warns(RuntimeWarning):
        y = QuantLinear(codes, s, None, "dynamic")(x)
    assert float((y - x @ w.t()).abs().max()) < 0.05 * float((x @ w.t()).abs().max())


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_a_half_precision_input_adds_the_float32_bias_unrounded(dtype: torch.dtype) -> None:
    """The int8 path sums in float32: the bias joins that sum as stored, and only the result is
    rounded to the input's dtype (not the bias first, then the result again)."""
    g = torch.Generator().manual_seed(3)
    w, x = torch.randn(16, 24, generator=g), torch.randn(64, 24, generator=g).to(dtype)
    b = torch.randn(16, generator=g) * 1e-3 + 0.3  # bits below bf16's precision
    codes, s = quantize_int8(w, (1,))
    layer = QuantLinear(codes, s, b, "dynamic")
    assert torch.equal(layer(x), layer(x.float()).to(dtype))
