from __future__ import annotations

import torch
from torch import nn

from foxhunt.train.optimizer.adamw import AdamW
from foxhunt.train.optimizer.optim import build_optimizer, param_groups


class _Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 8)
        self.norm = nn.LayerNorm(8)
        self.lstm = nn.LSTM(8, 8, batch_first=True)
        self.per_var_weight = nn.Parameter(torch.randn(3, 4, 8))  # (V, in, out)
        self.per_var_bias = nn.Parameter(torch.zeros(3, 8))  # 2-D but a bias
        self.per_var_norm_weight = nn.Parameter(torch.ones(3, 8))  # 2-D but a norm gain
        self.frozen = nn.Parameter(torch.ones(2, 2), requires_grad=False)


def test_decay_only_on_matrices_not_biases_or_norms() -> None:
    decay, no_decay = param_groups(_Net(), 0.1)
    assert decay["weight_decay"] == 0.1 and no_decay["weight_decay"] == 0.0
    assert set(decay["names"]) == {
        "lin.weight",
        "lstm.weight_ih_l0",
        "lstm.weight_hh_l0",
        "per_var_weight",
    }
    assert set(no_decay["names"]) == {
        "lin.bias",
        "norm.weight",
        "norm.bias",
        "lstm.bias_ih_l0",
        "lstm.bias_hh_l0",
        "per_var_bias",
        "per_var_norm_weight",
    }
    assert all(p.ndim >= 2 for p in decay["params"])


def test_adamw_groups_cover_every_trainable_parameter_once() -> None:
    net = _Net()
    opt = build_optimizer(net, lr=1e-3, weight_decay=0.05)
    assert isinstance(opt, AdamW)
    ids = [id(p) for g in opt.param_groups for p in g["params"]]
    assert len(ids) == len(set(ids))
    assert set(ids) == {id(p) for p in net.parameters() if p.requires_grad}


def test_no_decay_group_is_untouched_by_decay() -> None:
    # With zero gradients AdamW moves a parameter only through weight decay.
    net = _Net()
    opt = build_optimizer(net, lr=0.1, weight_decay=0.5)
    before = {n: p.detach().clone() for n, p in net.named_parameters()}
    for p in net.parameters():
        if p.requires_grad:
            p.grad = torch.zeros_like(p)
    opt.step()
    after = dict(net.named_parameters())
    assert torch.equal(after["lin.bias"], before["lin.bias"])
    assert torch.equal(after["norm.weight"], before["norm.weight"])
    assert torch.allclose(after["lin.weight"], before["lin.weight"] * (1 - 0.1 * 0.5))


def test_tft_vsn_biases_and_norms_do_not_decay() -> None:
    from foxhunt.config import TFTConfig
    from foxhunt.model import TFT

    cfg = TFTConfig(n_historical=3, n_known=2, n_static=2, hidden=8, n_heads=2, lstm_layers=1)
    model = TFT(cfg)
    decay, no_decay = param_groups(model, 0.1)
    shapes = {n: p.shape for n, p in model.named_parameters()}
    stacked_biases = [n for n in no_decay["names"] if n.endswith("bias") and len(shapes[n]) >= 2]
    assert stacked_biases  # per-variable biases (V, w) exist and do not decay
    assert all(
        len(shapes[n]) >= 2 and "norm" not in n and not n.endswith("bias") for n in decay["names"]
    )
    assert all(len(shapes[n]) < 2 or "norm" in n or n.endswith("bias") for n in no_decay["names"])
    assert "output.weight" in decay["names"] and "output.bias" in no_decay["names"]


def _settings(opt: torch.optim.Optimizer) -> list[tuple[float, tuple[float, float], float, int]]:
    return [
        (g["lr"], tuple(g["betas"]), g["weight_decay"], len(g["params"])) for g in opt.param_groups
    ]


def test_cpu_gets_foxhunts_adamw_with_the_runs_lr_betas_and_groups() -> None:
    opt = build_optimizer(_Net(), lr=3e-3, weight_decay=0.1)
    assert type(opt) is AdamW
    assert _settings(opt) == [(3e-3, (0.9, 0.999), 0.1, 4), (3e-3, (0.9, 0.999), 0.0, 7)]


class _OnCuda(_Net):
    """Parameters that say they are on CUDA (for the branch only; the tensors stay on CPU)."""

    def parameters(self, recurse: bool = True):  # noqa: ANN201
        yield type("P", (), {"is_cuda": True})()


def test_cuda_gets_torchs_adamw_with_the_same_settings() -> None:
    opt = build_optimizer(_OnCuda(), lr=3e-3, weight_decay=0.1)
    assert type(opt) is torch.optim.AdamW
    assert _settings(opt) == [(3e-3, (0.9, 0.999), 0.1, 4), (3e-3, (0.9, 0.999), 0.0, 7)]
