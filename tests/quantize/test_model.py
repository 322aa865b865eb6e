"""Quantising a model's tensors refuses weights that are not finite (their int8 codes would be
undefined) and names the tensor."""

from __future__ import annotations

import pytest
import torch

from foxhunt.config import TFTConfig
from foxhunt.errors import ModelDirError
from foxhunt.model.tft import TFT
from foxhunt.quantize.model import SCALE, quantizable_tensors, quantize_tensors

TINY = TFTConfig(
    n_static=2, n_historical=3, n_known=2, hidden=8, n_heads=2, lstm_layers=1,
    encoder_length=4, horizon=2, quantiles=(0.1, 0.5, 0.9), dropout=0.0,
)  # fmt: skip


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
@pytest.mark.parametrize("precision", ["int8", "bf16"])
def test_a_non_finite_weight_is_refused_by_name(bad: float, precision: str) -> None:
    torch.manual_seed(0)
    model = TFT(TINY).eval()
    name = sorted(quantizable_tensors(model))[0]
    with torch.no_grad():
        model.state_dict()[name].view(-1)[0] = bad
    with pytest.raises(ModelDirError, match=rf"^cannot quantise {name}: it holds non-finite"):
        quantize_tensors(model, precision)  # type: ignore[arg-type]


def test_finite_weights_quantise_to_codes_and_finite_scales() -> None:
    torch.manual_seed(0)
    model = TFT(TINY).eval()
    tensors, _ = quantize_tensors(model, "int8")
    kinds = quantizable_tensors(model)
    assert kinds  # the linear, LSTM and per-variable weights
    for name in kinds:
        assert tensors[name].dtype == torch.int8
        assert torch.isfinite(tensors[name + SCALE]).all() and (tensors[name + SCALE] > 0).all()
