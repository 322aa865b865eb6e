"""The TFT's composition where the forward's outputs alone do not show it: every block gets the
configured dropout (none before the final gate), the origin's observed embedding is added to
every decoder input, and ``temporal`` returns no attention weights unless asked."""

from __future__ import annotations

import dataclasses
from collections import defaultdict

import torch
from torch import nn

from foxhunt.config import TFTConfig
from foxhunt.model import BLOCK_NAMES, TFT
from foxhunt.model.attention import InterpretableMultiHeadAttention
from foxhunt.model.batch import random_batch
from foxhunt.model.dropout import ByteDropout


def test_every_block_but_the_last_gate_and_the_head_drops_at_the_configured_rate(
    tiny_config: TFTConfig,
) -> None:
    cfg = dataclasses.replace(tiny_config, dropout=0.3, lstm_layers=2)
    rates: dict[str, set[tuple[str, float]]] = defaultdict(set)
    for name, module in TFT(cfg).named_modules():
        block = name.split(".")[0]
        if isinstance(module, ByteDropout):
            rates[block].add(("mask", module.rate))
        elif isinstance(module, nn.LSTM):
            rates[block].add(("between layers", module.dropout))
        elif isinstance(module, InterpretableMultiHeadAttention):
            rates[block].add(("attention", module.dropout))
    byte = ByteDropout(0.3).rate  # 0.3 to the nearest 1/256
    want = {block: {("mask", byte)} for block in BLOCK_NAMES}
    want["lstm_encoder"] = want["lstm_decoder"] = {("between layers", 0.3)}
    want["attention"] = {("attention", 0.3)}
    del want["pre_output_gate"], want["output"]  # no dropout before the head (as in the paper)
    assert dict(rates) == want


def test_the_origins_observed_embedding_is_added_to_every_decoder_input(
    tiny_config: TFTConfig,
) -> None:
    g = torch.Generator().manual_seed(0)
    enc, fut, origin = (torch.randn(2, n, 4, generator=g) for n in (3, 2, 1))
    with_origin = TFT(dataclasses.replace(tiny_config, decoder_origin_inputs=True))
    assert torch.equal(
        with_origin.join_selected(enc, fut, origin), torch.cat([enc, fut + origin], 1)
    )
    without = TFT(dataclasses.replace(tiny_config, decoder_origin_inputs=False))
    assert torch.equal(without.join_selected(enc, fut, origin), torch.cat([enc, fut], 1))


def test_temporal_returns_attention_weights_only_when_asked(tiny_config: TFTConfig) -> None:
    model = TFT(tiny_config).eval()
    batch = random_batch(tiny_config, 2, seed=0)
    ctx, _ = model.contexts(batch.static)
    hist, _ = model.historical_vsn(batch.historical, ctx.selection)
    known, _ = model.known_vsn(batch.known, ctx.selection)
    t = tiny_config.encoder_length
    selected = model.join_selected(known[:, :t] + hist, known[:, t:], hist[:, -1:])
    with torch.no_grad():
        quantiles, attention = model.temporal(selected, ctx)
        again, weights = model.temporal(selected, ctx, return_attention=True)
    assert attention is None and weights is not None
    assert torch.equal(quantiles, again)
    assert torch.allclose(quantiles, model(batch).quantiles, rtol=0, atol=1e-6)  # the forward
