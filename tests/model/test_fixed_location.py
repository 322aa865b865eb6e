"""``location = "fixed"``: the head's median is one constant whatever the inputs; the network
moves only the other quantiles around it (docs/recipe.md, *Daily futures: the bars' range and a fixed median*)."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from model_refs import make_batch

from foxhunt.config import ConfigError, TFTConfig
from foxhunt.model import TFT, quantile_loss


def _fixed(tiny_config: TFTConfig) -> TFTConfig:
    return dataclasses.replace(tiny_config, monotone_quantiles=True, location="fixed")


def test_the_median_is_the_buffer_for_any_input_and_the_rest_moves(
    tiny_config: TFTConfig,
) -> None:
    c = _fixed(tiny_config)
    torch.manual_seed(0)
    model = TFT(c).eval().requires_grad_(False)
    with torch.no_grad():
        model.median.fill_(0.125)
    m = c.quantiles.index(0.5)
    outs = []
    for seed in range(3):
        batch = make_batch(c, 5, seed=seed)
        q = model(dataclasses.replace(batch, historical=batch.historical * 5)).quantiles
        assert (q[..., 1:] >= q[..., :-1]).all()
        torch.testing.assert_close(q[..., m], torch.full_like(q[..., m], 0.125))
        outs.append(q)
    # the other levels depend on the inputs: they differ between windows
    assert float(outs[0][..., 0].std()) > 1e-4 and float(outs[0][..., -1].std()) > 1e-4
    # the same weights with a conditional head: the median moves, the steps are the same
    free = TFT(dataclasses.replace(c, location="conditional")).eval().requires_grad_(False)
    free.load_state_dict(model.state_dict(), strict=False)
    batch = make_batch(c, 5, seed=0)
    qf = free(dataclasses.replace(batch, historical=batch.historical * 5)).quantiles
    assert float(qf[..., m].std()) > 1e-4
    torch.testing.assert_close(outs[0] - outs[0][..., m : m + 1], qf - qf[..., m : m + 1])


def test_the_median_is_saved_with_a_fixed_head_and_absent_from_a_conditional_one(
    tiny_config: TFTConfig,
) -> None:
    fixed = TFT(_fixed(tiny_config))
    with torch.no_grad():
        fixed.median.fill_(-0.25)
    state = fixed.state_dict()
    assert float(state["median"]) == -0.25
    again = TFT(_fixed(tiny_config))
    again.load_state_dict(state)
    assert float(again.median) == -0.25
    plain = TFT(dataclasses.replace(tiny_config, monotone_quantiles=True))
    assert "median" not in plain.state_dict()  # runs trained before the option load as before


def test_training_cannot_move_the_median(tiny_config: TFTConfig) -> None:
    c = _fixed(tiny_config)
    torch.manual_seed(1)
    model = TFT(c).train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    batch = make_batch(c, 8, seed=2)
    target = torch.randn(8, c.horizon) + 3.0  # far above the median: a free head would follow
    levels = torch.tensor(c.quantiles)
    first = None
    for _ in range(20):
        opt.zero_grad()
        loss = quantile_loss(model(batch).quantiles, target, levels)
        first = float(loss.detach()) if first is None else first
        loss.backward()
        opt.step()
    assert float(loss.detach()) < first  # the other quantiles did learn
    q = model.eval()(batch).quantiles
    torch.testing.assert_close(q[..., 1], torch.zeros_like(q[..., 1]))
    assert "median" not in dict(model.named_parameters())


def test_the_config_refuses_a_fixed_median_it_cannot_pin(tiny_config: TFTConfig) -> None:
    with pytest.raises(ConfigError, match="monotone_quantiles"):
        dataclasses.replace(tiny_config, location="fixed")
    with pytest.raises(ConfigError, match="0.5"):
        dataclasses.replace(
            tiny_config, monotone_quantiles=True, location="fixed", quantiles=(0.1, 0.9)
        )
    with pytest.raises(ConfigError, match="location"):
        dataclasses.replace(tiny_config, location="median")  # type: ignore[arg-type]


@pytest.mark.parametrize("location", ["conditional", "fixed"])
def test_an_int8_model_keeps_the_fixed_median(tiny_config: TFTConfig, location: str) -> None:
    """The int8 model is built on the meta device from the stored tensors: a fixed head's median
    is one of them; a conditional head's (not stored) starts at zero and is never read."""
    from pathlib import Path

    from foxhunt.quantize.model import build_quantized_model, quantize_tensors

    c = dataclasses.replace(tiny_config, monotone_quantiles=True, location=location)  # type: ignore[arg-type]
    torch.manual_seed(0)
    model = TFT(c).eval()
    with torch.no_grad():
        model.median.fill_(0.3)
    tensors, recipe = quantize_tensors(model, "int8")
    assert ("median" in tensors) == (location == "fixed")
    q = build_quantized_model(c, tensors, recipe, Path("w.safetensors"))
    batch = make_batch(c, 4, seed=1)
    with torch.no_grad():
        got = q(batch).quantiles
        want = model(batch).quantiles
    if location == "fixed":
        torch.testing.assert_close(got[..., 1], torch.full_like(got[..., 1], 0.3))
    torch.testing.assert_close(got, want, atol=0.05, rtol=0.05)
