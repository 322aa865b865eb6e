from __future__ import annotations

import dataclasses

import pytest
import torch
from model_refs import batch_tensors, make_batch, saved_activation_bytes

from foxhunt.config import TFTConfig
from foxhunt.model import TFT, is_checkpointing, quantile_loss, set_checkpointing
from foxhunt.model.recompute import CHECKPOINTED_BLOCKS


def _grads(model: TFT, config: TFTConfig, seed: int) -> dict[str, torch.Tensor]:
    batch = make_batch(config, 4)
    model.zero_grad(set_to_none=True)
    torch.manual_seed(seed)  # same dropout masks in both runs
    out = model(batch)
    quantile_loss(out.quantiles, batch.target, torch.tensor(config.quantiles)).backward()
    return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("mode", ["fused", "faithful"])
def test_checkpointed_gradients_equal_plain_and_reach_every_parameter(
    tiny_config: TFTConfig, mode: str
) -> None:
    c = dataclasses.replace(tiny_config, vsn_mode=mode, dropout=0.1)
    torch.manual_seed(0)
    model = TFT(c).train()
    plain = _grads(model, c, seed=1)
    set_checkpointing(model, True)
    assert is_checkpointing(model)
    ckpt = _grads(model, c, seed=1)
    names = [n for n, _ in model.named_parameters()]
    assert sorted(ckpt) == sorted(names)  # every parameter got a gradient (no .detach())
    for n in names:
        assert ckpt[n].abs().sum() > 0, n
        torch.testing.assert_close(ckpt[n], plain[n], rtol=1e-5, atol=1e-7, msg=n)


def test_idempotent_reversible_and_invisible_to_state_dict(tiny_config: TFTConfig) -> None:
    torch.manual_seed(0)
    model = TFT(tiny_config).eval()
    keys = list(model.state_dict())
    batch = make_batch(tiny_config, 2)
    before = model(batch).quantiles
    set_checkpointing(model, True)
    wrapped = model.static_enrichment.forward
    set_checkpointing(model, True)
    assert model.static_enrichment.forward is wrapped  # not wrapped twice
    assert list(model.state_dict()) == keys
    torch.testing.assert_close(model(batch).quantiles, before)
    set_checkpointing(model, False)
    assert not is_checkpointing(model)
    assert all("forward" not in vars(getattr(model, n)) for n in CHECKPOINTED_BLOCKS)
    set_checkpointing(model, False)  # no-op


def test_checkpointing_cuts_saved_activations(tiny_config: TFTConfig) -> None:
    torch.manual_seed(0)
    model = TFT(tiny_config).train()
    batch = make_batch(tiny_config, 8)
    exclude = batch_tensors(batch)
    plain = saved_activation_bytes(lambda: model(batch), model, exclude)
    set_checkpointing(model, True)
    ckpt = saved_activation_bytes(lambda: model(batch), model, exclude)
    assert ckpt < plain / 2


def test_internal_recompute_off_keeps_gradients_and_saves_more(tiny_config: TFTConfig) -> None:
    """VSN streaming and LSTM recompute off (fast): same gradients (dropout off: the masks are
    drawn per chunk when streaming), every parameter reached, more saved for backward."""
    from foxhunt.model.recompute import set_internal_recompute

    c = dataclasses.replace(tiny_config, dropout=0.0)
    torch.manual_seed(0)
    model = TFT(c).train()
    on = _grads(model, c, seed=1)
    batch = make_batch(c, 4)
    q = torch.tensor(c.quantiles)

    def loss() -> torch.Tensor:
        return quantile_loss(model(batch).quantiles, batch.target, q)

    saved_on = saved_activation_bytes(loss, model, exclude=batch_tensors(batch))
    set_internal_recompute(model, False)
    assert not model.historical_vsn.streaming and not model.lstm_encoder.recompute
    off = _grads(model, c, seed=1)
    assert sorted(off) == sorted(on) == sorted(n for n, _ in model.named_parameters())
    for n in on:
        torch.testing.assert_close(off[n], on[n], rtol=1e-5, atol=1e-6, msg=n)
    assert saved_activation_bytes(loss, model, exclude=batch_tensors(batch)) > saved_on
    set_internal_recompute(model, True)
    assert model.historical_vsn.streaming and model.lstm_decoder.recompute
    assert not model.static_vsn.streaming  # B rows only: never streamed


def test_a_checkpointed_block_still_gets_its_keyword_arguments(tiny_config: TFTConfig) -> None:
    """The replaced forward passes keyword arguments on (static enrichment's ``context=``)."""
    model = TFT(tiny_config).eval()
    block = model.static_enrichment
    d = tiny_config.hidden
    a, context = torch.randn(2, 3, d), torch.randn(2, d)
    plain = block(a, context=context)
    set_checkpointing(model, True)
    assert torch.equal(block(a, context=context), plain)
    with pytest.raises(ValueError, match="needs a context vector"):
        block(a)  # without the keyword the block refuses: the call above passed it on
