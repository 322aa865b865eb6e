from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from foxhunt.model.quantile import monotone_quantiles, quantile_loss, quantile_loss_table


def test_pinball_known_values() -> None:
    q = torch.tensor([0.1, 0.5, 0.9])
    pred = torch.zeros(1, 1, 3)
    # under-prediction (y > ŷ) costs q per unit, over-prediction costs 1 - q
    assert quantile_loss(pred, torch.tensor([[2.0]]), q).item() == pytest.approx(
        (0.2 + 1.0 + 1.8) / 3
    )
    assert quantile_loss(pred, torch.tensor([[-2.0]]), q).item() == pytest.approx(
        (1.8 + 1.0 + 0.2) / 3
    )


@settings(max_examples=30, deadline=None)
@given(b=st.integers(1, 4), h=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_loss_properties(b: int, h: int, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    q = torch.tensor([0.02, 0.5, 0.98])
    pred, target = torch.randn(b, h, 3, generator=g), torch.randn(b, h, generator=g)
    table = quantile_loss_table(pred, target, q)
    assert table.shape == (h, 3) and (table >= 0).all()
    torch.testing.assert_close(table.mean(), quantile_loss(pred, target, q))
    exact = target.unsqueeze(-1).expand(b, h, 3)
    assert quantile_loss(exact, target, q).item() == 0.0
    # the median's pinball loss is half the absolute error
    torch.testing.assert_close(table[:, 1], 0.5 * (target - pred[..., 1]).abs().mean(0))


def test_the_q_quantile_minimises_the_loss() -> None:
    y = torch.linspace(0, 1, 1001)
    candidates = torch.linspace(0, 1, 101)
    q = torch.tensor([0.9])
    losses = torch.stack(
        [quantile_loss(torch.full((1001, 1, 1), float(c)), y[:, None], q) for c in candidates]
    )
    assert candidates[losses.argmin()].item() == pytest.approx(0.9, abs=0.011)


def test_shape_mismatch_raises() -> None:
    with pytest.raises(ValueError, match="expected pred"):
        quantile_loss(torch.zeros(2, 3, 4), torch.zeros(2, 3), torch.zeros(3))


def test_each_level_prices_its_own_column() -> None:
    """Asymmetric levels, one prediction per column, computed by hand: a loss that paired a
    level with another column (e.g. the level vector reversed) gets other numbers."""
    q = torch.tensor([0.1, 0.3, 0.8])
    pred = torch.tensor([[[-1.0, 0.5, 2.0]]])  # (B=1, H=1, Q=3)
    y = torch.tensor([[1.0]])
    # y > pred: q * (y - pred); y < pred: (1 - q) * (pred - y)
    by_hand = torch.tensor([[0.1 * 2.0, 0.3 * 0.5, 0.2 * 1.0]])
    torch.testing.assert_close(quantile_loss_table(pred, y, q), by_hand)
    assert quantile_loss(pred, y, q).item() == pytest.approx(by_hand.mean().item())
    reversed_levels = quantile_loss_table(pred, y, q.flip(0))
    assert not torch.allclose(reversed_levels, by_hand)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), spread=st.floats(0.01, 100.0))
def test_monotone_quantiles_never_cross(seed: int, spread: float) -> None:
    g = torch.Generator().manual_seed(seed)
    raw = torch.randn(3, 4, 9, generator=g) * spread
    q = monotone_quantiles(raw)
    assert q.shape == raw.shape
    assert (q[..., 1:] >= q[..., :-1]).all()
    torch.testing.assert_close(q[..., 0], raw[..., 0])  # the lowest quantile is free


def test_monotone_steps_are_softplus_of_the_raw_outputs() -> None:
    raw = torch.tensor([[[-1.0, 0.0, 2.0]]])
    sp = torch.nn.functional.softplus
    want = torch.tensor(
        [
            [
                [
                    -1.0,
                    -1.0 + sp(torch.tensor(0.0)),
                    -1.0 + sp(torch.tensor(0.0)) + sp(torch.tensor(2.0)),
                ]
            ]
        ]
    )
    torch.testing.assert_close(monotone_quantiles(raw), want)
