"""quantize/layers.py, layer by layer and without a trained model.

* :class:`QuantLinear`: argument checks and their messages; ``dynamic``, ``static`` and
  ``none`` activations against float64 references; a bf16 weight; bias or none; the dtype of
  the output follows the input; ``extra_repr``.
* :class:`QuantLSTM`: the same outputs as ``nn.LSTM`` run with the dequantised weights (int8
  and bf16 weights, ``batch_first`` both ways, float64 input, two layers with dropout in
  training and in eval mode), what it saves, and the message for a missing tensor.
* :class:`DequantizeWeight`: a registered parametrisation reads back ``codes * scale``.
"""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrize

from foxhunt.quantize.layers import DequantizeWeight, QuantLinear, QuantLSTM
from foxhunt.quantize.tensors import quantize_int8

OUT, IN = 7, 12


def _linear_parts() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(int8 codes, scales, bias, input of shape (2, 5, IN)) with rows of mixed magnitude."""
    g = torch.Generator().manual_seed(11)
    w = torch.randn(OUT, IN, generator=g)
    codes, scale = quantize_int8(w, (1,))
    bias = torch.randn(OUT, generator=g)
    x = torch.randn(2, 5, IN, generator=g) * torch.tensor([0.1, 1.0, 3.0, 10.0, 0.5]).view(1, 5, 1)
    return codes, scale, bias, x


def _int8_reference(xq: torch.Tensor, sx: torch.Tensor, codes, scale, bias) -> torch.Tensor:
    """``(xq sx) (codes s)^T + b`` in float64: the int8 sums are exact there."""
    y = (xq.double() @ codes.double().t()) * sx.double() * scale.double().view(1, -1)
    return y if bias is None else y + bias.double()


# --- QuantLinear: arguments --------------------------------------------------------------------


def test_quant_linear_needs_a_2d_weight() -> None:
    with pytest.raises(ValueError, match=r"^weight must be 2-D, got shape \(2, 3, 4\)$"):
        QuantLinear(torch.zeros(2, 3, 4, dtype=torch.int8), torch.ones(2, 3, 1), None)


def test_quant_linear_int8_weight_needs_scales_and_bf16_takes_none() -> None:
    message = r"^an int8 weight needs scales; a bf16 weight takes none$"
    with pytest.raises(ValueError, match=message):
        QuantLinear(torch.zeros(3, 4, dtype=torch.int8), None, None)
    with pytest.raises(ValueError, match=message):
        QuantLinear(torch.zeros(3, 4, dtype=torch.bfloat16), torch.ones(3, 1), None)


def test_quant_linear_static_needs_act_scale() -> None:
    codes, scale, _, _ = _linear_parts()
    with pytest.raises(ValueError, match=r"^static activation quantisation needs act_scale$"):
        QuantLinear(codes, scale, None, "static")
    layer = QuantLinear(codes, scale, None, "static", torch.tensor(0.02))
    assert layer.activations == "static"
    assert float(layer.act_scale) == pytest.approx(0.02)


def test_quant_linear_extra_repr() -> None:
    codes, scale, bias, _ = _linear_parts()
    assert QuantLinear(codes, scale, bias).extra_repr() == "12 -> 7, int8, activations=dynamic"
    static = QuantLinear(codes, scale, None, "static", torch.tensor(0.1))
    assert static.extra_repr() == "12 -> 7, int8, activations=static"
    assert QuantLinear(codes, scale, None, "none").extra_repr() == "12 -> 7, int8, activations=none"
    bf16 = QuantLinear(codes.to(torch.bfloat16), None, bias)  # "dynamic" asked, "none" given
    assert bf16.extra_repr() == "12 -> 7, torch.bfloat16, activations=none"
    assert repr(bf16) == "QuantLinear(12 -> 7, torch.bfloat16, activations=none)"
    assert (bf16.in_features, bf16.out_features) == (IN, OUT)


# --- QuantLinear: outputs ----------------------------------------------------------------------


@pytest.mark.parametrize("with_bias", [True, False])
def test_quant_linear_dynamic_matches_the_float64_reference(with_bias: bool) -> None:
    codes, scale, bias, x = _linear_parts()
    b = bias if with_bias else None
    y = QuantLinear(codes, scale, b)(x)  # "dynamic" by default
    assert y.shape == (2, 5, OUT) and y.dtype == torch.float32
    flat = x.reshape(-1, IN)
    sx = flat.abs().amax(dim=1, keepdim=True) / 127
    xq = torch.round(flat / sx).to(torch.int8)
    ref = _int8_reference(xq, sx, codes, scale, b).view(2, 5, OUT)
    torch.testing.assert_close(y.double(), ref, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("with_bias", [True, False])
def test_quant_linear_static_uses_the_calibrated_scale_and_clamps(with_bias: bool) -> None:
    codes, scale, bias, x = _linear_parts()
    b = bias if with_bias else None
    act_scale = torch.tensor(0.02)  # clips everything past 2.54: rows of scale 3 and 10 clamp
    y = QuantLinear(codes, scale, b, "static", act_scale)(x)
    assert y.shape == (2, 5, OUT) and y.dtype == torch.float32
    xq = torch.round(x.reshape(-1, IN) / act_scale).clamp(-127, 127).to(torch.int8)
    ref = _int8_reference(xq, act_scale, codes, scale, b).view(2, 5, OUT)
    torch.testing.assert_close(y.double(), ref, rtol=1e-6, atol=1e-6)
    dynamic = QuantLinear(codes, scale, b, "dynamic")(x)
    assert float((y - dynamic).abs().max()) > 1.0  # the clamp shows


def test_quant_linear_static_scale_is_saved_and_ignored_by_the_other_modes() -> None:
    codes, scale, bias, x = _linear_parts()
    act_scale = torch.tensor(0.02)
    static = QuantLinear(codes, scale, bias, "static", act_scale)
    assert torch.equal(static.state_dict()["act_scale"], act_scale)
    for activations in ("dynamic", "none"):
        given = QuantLinear(codes, scale, bias, activations, act_scale)
        assert given.act_scale is None and "act_scale" not in given.state_dict()
        plain = QuantLinear(codes, scale, bias, activations)
        assert torch.equal(given(x), plain(x))


def test_quant_linear_int8_output_follows_the_input_dtype() -> None:
    codes, scale, bias, x = _linear_parts()
    layer = QuantLinear(codes, scale, bias)
    # The input is quantised from its float32 copy, so the result is the float32 one, cast.
    y64 = layer(x.double())
    assert y64.dtype == torch.float64
    assert torch.equal(y64, layer(x).double())
    x16 = x.to(torch.bfloat16)
    y16 = layer(x16)
    assert y16.dtype == torch.bfloat16 and y16.shape == (2, 5, OUT)
    # within a bf16 step of it (the bias is rounded to bf16 on the way: one step at most)
    torch.testing.assert_close(y16.float(), layer(x16.float()), rtol=2**-7, atol=1e-2)


@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_quant_linear_weight_only_is_a_float_linear_of_the_dequantised_weight(
    with_bias: bool, dtype: torch.dtype
) -> None:
    codes, scale, bias, x = _linear_parts()
    b = bias if with_bias else None
    y = QuantLinear(codes, scale, b, "none")(x.to(dtype))
    assert y.dtype == dtype
    w = (codes.float() * scale).to(dtype)
    ref = F.linear(x.to(dtype), w, None if b is None else b.to(dtype))
    torch.testing.assert_close(y, ref, rtol=0, atol=0)


@pytest.mark.parametrize("activations", ["dynamic", "none"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_quant_linear_bf16_weight_is_weight_only(activations: str, dtype: torch.dtype) -> None:
    g = torch.Generator().manual_seed(5)
    w = torch.randn(OUT, IN, generator=g).to(torch.bfloat16)
    bias = torch.randn(OUT, generator=g)
    x = torch.randn(3, IN, generator=g, dtype=dtype)
    layer = QuantLinear(w, None, bias, activations)
    assert layer.activations == "none"
    y = layer(x)
    assert y.dtype == dtype
    torch.testing.assert_close(y, F.linear(x, w.to(dtype), bias.to(dtype)), rtol=0, atol=0)
    nobias = QuantLinear(w, None, None, activations)(x)
    torch.testing.assert_close(nobias, x @ w.to(dtype).t(), rtol=1e-12, atol=1e-5)


# --- QuantLSTM ---------------------------------------------------------------------------------


def _lstm(num_layers: int, dropout: float, batch_first: bool) -> nn.LSTM:
    torch.manual_seed(2)
    return nn.LSTM(5, 6, num_layers, batch_first=batch_first, dropout=dropout)


def _quant_lstm(lstm: nn.LSTM, kind: str) -> tuple[QuantLSTM, nn.LSTM]:
    """The QuantLSTM of ``lstm`` and an ``nn.LSTM`` holding its dequantised weights."""
    weights, scales, biases = {}, {}, {}
    ref = copy.deepcopy(lstm)
    for name in lstm._flat_weights_names:
        t = getattr(lstm, name).detach()
        if name.startswith("bias_"):
            biases[name] = t.clone()
            continue
        if kind == "int8":
            weights[name], scales[name] = quantize_int8(t, (1,))
            dequantised = weights[name].float() * scales[name]
        else:
            weights[name] = t.to(torch.bfloat16)
            dequantised = weights[name].float()
        with torch.no_grad():
            getattr(ref, name).copy_(dequantised)
    q = QuantLSTM(
        lstm.input_size,
        lstm.hidden_size,
        lstm.num_layers,
        lstm.dropout,
        lstm.batch_first,
        weights,
        scales,
        biases,
    )
    return q, ref


def _inputs(
    num_layers: int, batch_first: bool, dtype: torch.dtype = torch.float32
) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(9)
    b, t = 3, 4
    x = torch.randn((b, t, 5) if batch_first else (t, b, 5), generator=g, dtype=dtype)
    h0 = torch.randn(num_layers, b, 6, generator=g, dtype=dtype)
    c0 = torch.randn(num_layers, b, 6, generator=g, dtype=dtype)
    return x, (h0, c0)


def _assert_same(got: tuple, want: tuple) -> None:
    """The same outputs up to the last bits (the two calls may take different CPU kernels)."""
    (out, (h, c)), (out_r, (h_r, c_r)) = got, want
    torch.testing.assert_close(out, out_r)
    torch.testing.assert_close(h, h_r)
    torch.testing.assert_close(c, c_r)


@pytest.mark.parametrize("kind", ["int8", "bf16"])
@pytest.mark.parametrize("batch_first", [True, False])
def test_quant_lstm_equals_nn_lstm_with_the_dequantised_weights(
    kind: str, batch_first: bool
) -> None:
    q, ref = _quant_lstm(_lstm(2, 0.0, batch_first), kind)
    q.eval(), ref.eval()
    x, state = _inputs(2, batch_first)
    got = q(x, state)
    out, (h, c) = got
    assert out.shape == ((3, 4, 6) if batch_first else (4, 3, 6))
    assert h.shape == c.shape == (2, 3, 6)
    assert out.dtype == torch.float32
    with torch.no_grad():
        _assert_same(got, ref(x, state))


def test_quant_lstm_runs_in_the_input_dtype() -> None:
    q, ref = _quant_lstm(_lstm(2, 0.0, True), "int8")
    q.eval(), ref.eval()
    x, state = _inputs(2, True, torch.float64)
    got = q(x, state)
    assert got[0].dtype == got[1][0].dtype == torch.float64
    with torch.no_grad():
        _assert_same(got, ref.double()(x, state))


def test_quant_lstm_dropout_between_layers_only_in_training() -> None:
    q, ref = _quant_lstm(_lstm(2, 0.5, True), "int8")
    x, state = _inputs(2, True)
    q.eval(), ref.eval()
    with torch.no_grad():
        evaluated = q(x, state)
        _assert_same(evaluated, ref(x, state))
        q.train(), ref.train()
        torch.manual_seed(123)
        trained = q(x, state)
        torch.manual_seed(123)
        _assert_same(trained, ref(x, state))
        assert float((trained[0] - evaluated[0]).abs().max()) > 1e-3  # dropout did act
        q.eval()
        _assert_same(q(x, state), evaluated)  # and stops again in eval mode


def test_quant_lstm_saves_its_tensors_under_the_lstm_names() -> None:
    lstm = _lstm(2, 0.0, False)
    names = list(lstm._flat_weights_names)
    weight_names = [n for n in names if n.startswith("weight_")]
    q8, _ = _quant_lstm(lstm, "int8")
    state = q8.state_dict()
    assert sorted(state) == sorted(names + [f"{n}_scale" for n in weight_names])
    for n in weight_names:
        assert state[n].dtype == torch.int8 and state[f"{n}_scale"].shape == (state[n].shape[0], 1)
    for n in names:
        if n.startswith("bias_"):
            assert torch.equal(state[n], getattr(lstm, n).detach())
    q16, _ = _quant_lstm(lstm, "bf16")
    assert sorted(q16.state_dict()) == sorted(names)
    assert all(q16.state_dict()[n].dtype == torch.bfloat16 for n in weight_names)


def test_quant_lstm_names_a_missing_weight_or_bias() -> None:
    lstm = _lstm(2, 0.0, False)
    q, _ = _quant_lstm(lstm, "int8")
    weights = {n: getattr(q, n) for n in q._names if n.startswith("weight_")}
    scales = {n: getattr(q, f"{n}_scale") for n in weights}
    biases = {n: getattr(q, n) for n in q._names if n.startswith("bias_")}
    without_weight = {n: w for n, w in weights.items() if n != "weight_hh_l1"}
    with pytest.raises(ValueError, match=r"^LSTM weight weight_hh_l1 is missing$"):
        QuantLSTM(5, 6, 2, 0.0, False, without_weight, scales, biases)
    without_bias = {n: b for n, b in biases.items() if n != "bias_ih_l0"}
    with pytest.raises(ValueError, match=r"^LSTM bias bias_ih_l0 is missing$"):
        QuantLSTM(5, 6, 2, 0.0, False, weights, scales, without_bias)


# --- DequantizeWeight --------------------------------------------------------------------------


def _owner(stored: torch.Tensor, scale: torch.Tensor | None) -> nn.Module:
    owner = nn.Module()
    owner.register_parameter("weight", nn.Parameter(stored, requires_grad=False))
    parametrize.register_parametrization(owner, "weight", DequantizeWeight(scale), unsafe=True)
    return owner


def test_dequantize_weight_reads_back_codes_times_scale() -> None:
    codes = torch.tensor([[[127, -1], [0, 64]], [[-127, 2], [3, 0]]], dtype=torch.int8)
    scale = torch.tensor([0.5, 0.25]).view(2, 1, 1)
    owner = _owner(codes, scale)
    w = owner.weight
    assert w.dtype == torch.float32 and w.shape == (2, 2, 2)
    assert w.tolist() == [[[63.5, -0.5], [0.0, 32.0]], [[-31.75, 0.5], [0.75, 0.0]]]
    # The module keeps the int8 codes; the scale is saved with the parametrisation.
    state = owner.state_dict()
    assert state["parametrizations.weight.original"].dtype == torch.int8
    assert torch.equal(state["parametrizations.weight.0.scale"], scale)


def test_dequantize_weight_of_a_bf16_weight_is_its_float32_copy() -> None:
    w = torch.tensor([[1.5, -0.375], [3.0, 0.0078125]], dtype=torch.bfloat16)
    owner = _owner(w, None)
    read = owner.weight
    assert read.dtype == torch.float32
    assert read.tolist() == [[1.5, -0.375], [3.0, 0.0078125]]
    assert "parametrizations.weight.0.scale" not in owner.state_dict()
