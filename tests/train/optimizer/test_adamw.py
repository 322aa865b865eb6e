"""foxhunt's AdamW is torch.optim.AdamW(fused=True)'s CPU arithmetic, bit for bit (a tensor that
is not contiguous: torch's default one-op-at-a-time arithmetic), with torch's state-dict layout
(checkpoints move between the two), and without importing torch._dynamo."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from torch import nn

from foxhunt.train.optimizer.adamw import AdamW
from foxhunt.train.optimizer.optim import param_groups


def _net(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 8), nn.LayerNorm(8), nn.Linear(8, 3))


def _groups(net: nn.Module) -> list[dict]:
    return param_groups(net, weight_decay=0.05)


def _steps(net: nn.Module, opt, steps: range, *, skip_bias_at: int = 2) -> None:
    """Steps with a changing learning rate; at one step the last bias gets no gradient."""
    g = torch.Generator().manual_seed(1)
    for k in steps:
        for group in opt.param_groups:
            group["lr"] = 1e-2 / (1 + k)
        x = torch.randn(16, 6, generator=g)
        loss = net(x).pow(2).mean()
        loss.backward()
        if k == skip_bias_at:
            net[2].bias.grad = None
        opt.step()
        opt.zero_grad(set_to_none=True)


def _assert_same(a: nn.Module, b: nn.Module) -> None:
    for (name, x), (_, y) in zip(a.named_parameters(), b.named_parameters(), strict=True):
        assert torch.equal(x, y), name


def _fused(groups: list[dict], **kw: object) -> torch.optim.AdamW:
    return torch.optim.AdamW(groups, fused=True, **kw)  # type: ignore[arg-type]


def test_the_trajectory_is_torchs_fused_one_bit_for_bit() -> None:
    ours_net, torch_net = _net(), _net()
    ours = AdamW(_groups(ours_net), lr=1e-2, betas=(0.9, 0.999))
    theirs = _fused(_groups(torch_net), lr=1e-2, betas=(0.9, 0.999))
    _steps(ours_net, ours, range(6))
    _steps(torch_net, theirs, range(6))
    _assert_same(ours_net, torch_net)
    assert not torch.equal(ours_net[0].weight, _net()[0].weight)  # it did train


@pytest.mark.parametrize("direction", ["torch to ours", "ours to torch"])
def test_a_state_dict_moves_between_the_two_and_training_continues_identically(
    direction: str,
) -> None:
    first_net, second_net, reference_net = _net(), _net(), _net()
    make_first, make_second = (_fused, AdamW) if direction == "torch to ours" else (AdamW, _fused)
    first = make_first(_groups(first_net), lr=1e-2)
    reference = _fused(_groups(reference_net), lr=1e-2)
    _steps(first_net, first, range(3))
    _steps(reference_net, reference, range(3))
    saved = first.state_dict()
    assert saved.keys() == {"state", "param_groups"}
    assert saved["param_groups"][0].keys() == reference.state_dict()["param_groups"][0].keys()
    second_net.load_state_dict(first_net.state_dict())
    second = make_second(_groups(second_net), lr=1e-2)
    second.load_state_dict(saved)
    _steps(second_net, second, range(3, 6))
    _steps(reference_net, reference, range(3, 6))
    _assert_same(second_net, reference_net)


def test_a_checkpoint_of_torchs_default_adamw_resumes_to_rounding() -> None:
    """torch's default (one op at a time) and the fused kernel differ in rounding only."""
    first_net, second_net, reference_net = _net(), _net(), _net()
    first = torch.optim.AdamW(_groups(first_net), lr=1e-2)
    reference = torch.optim.AdamW(_groups(reference_net), lr=1e-2)
    _steps(first_net, first, range(3))
    _steps(reference_net, reference, range(3))
    second_net.load_state_dict(first_net.state_dict())
    second = AdamW(_groups(second_net), lr=1e-2)
    second.load_state_dict(first.state_dict())
    _steps(second_net, second, range(3, 6))
    _steps(reference_net, reference, range(3, 6))
    for (name, x), (_, y) in zip(
        second_net.named_parameters(), reference_net.named_parameters(), strict=True
    ):
        torch.testing.assert_close(x, y, rtol=1e-5, atol=1e-6, msg=name)
    assert second.state[next(second_net.parameters())]["step"].item() == 6


def test_a_tensor_that_is_not_contiguous_steps_as_torchs_default_does() -> None:
    """The fused kernel reads one run of memory per tensor: a transposed parameter (or a
    gradient laid out otherwise) is updated one op at a time, as torch's default AdamW, while
    the group's other parameters still take the fused kernel."""
    torch.manual_seed(0)
    base = torch.randn(5, 3)
    ours_t, theirs_t = (nn.Parameter(base.clone().t()) for _ in range(2))  # (3, 5), strided
    ours_c, theirs_c = (nn.Parameter(torch.ones(4)) for _ in range(2))
    ours = AdamW([ours_t, ours_c], lr=0.1, weight_decay=1.0)  # a decay of one still decays
    default = torch.optim.AdamW([theirs_t], lr=0.1, weight_decay=1.0)
    fused = _fused([theirs_c], lr=0.1, weight_decay=1.0)
    for k in range(3):
        grad = torch.randn(3, 5, generator=torch.Generator().manual_seed(k))
        for p in (ours_t, theirs_t):
            p.grad = grad.clone()
        for p in (ours_c, theirs_c):
            p.grad = torch.full((4,), 0.3 * (k + 1))
        for opt in (ours, default, fused):
            opt.step()
    assert not ours_t.is_contiguous()
    assert torch.equal(ours_t, theirs_t) and torch.equal(ours_c, theirs_c)
    assert not torch.equal(ours_t, base.t())  # it moved
    contiguous_grad = nn.Parameter(torch.zeros(3, 5))
    contiguous_grad.grad = torch.ones(5, 3).t()  # the parameter is contiguous, its gradient not
    AdamW([contiguous_grad], lr=0.1).step()
    torch.testing.assert_close(contiguous_grad.detach(), torch.full((3, 5), -0.1))


def test_zero_grad_and_a_mismatched_state_dict() -> None:
    net = _net()
    opt = AdamW(_groups(net), lr=1e-2)
    net(torch.randn(2, 6)).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.any() for p in net.parameters())
    opt.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    other = AdamW(list(_net().parameters()), lr=1e-2)  # one group, not two
    with pytest.raises(ValueError, match="parameter groups"):
        other.load_state_dict(opt.state_dict())
    with pytest.raises(ValueError, match="closure"):
        opt.step(lambda: 0.0)


@pytest.mark.slow
@pytest.mark.subprocess
def test_stepping_does_not_import_the_compiler() -> None:
    code = (
        "import sys, torch\n"
        "from foxhunt.train.optimizer.adamw import AdamW\n"
        "net = torch.nn.Linear(3, 2)\n"
        "opt = AdamW(net.parameters(), lr=0.1)\n"
        "net(torch.ones(1, 3)).sum().backward()\n"
        "opt.step(); opt.zero_grad(); opt.load_state_dict(opt.state_dict())\n"
        "print('torch._dynamo' in sys.modules)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "False"


def test_defaults_are_torchs() -> None:
    p = [nn.Parameter(torch.ones(3))]
    ours, theirs = AdamW(p).defaults, _fused(p).defaults
    assert {k: ours[k] for k in theirs} == theirs
    assert (ours["lr"], ours["weight_decay"], ours["decoupled_weight_decay"]) == (1e-3, 1e-2, True)


def test_a_weight_decay_of_one_still_decays() -> None:
    a, b = nn.Parameter(torch.ones(3)), nn.Parameter(torch.ones(3))
    ours, theirs = (
        AdamW([a], lr=0.1, weight_decay=1.0),
        torch.optim.AdamW([b], lr=0.1, weight_decay=1.0),
    )
    for p, opt in ((a, ours), (b, theirs)):
        p.grad = torch.full((3,), 0.5)
        opt.step()
    assert torch.equal(a, b) and a[0].item() < 0.9  # decayed by 1 - lr * wd, then stepped


def test_step_counter_dtype_follows_the_default_dtype() -> None:
    p = nn.Parameter(torch.ones(2))
    p.grad = torch.ones(2)
    opt = AdamW([p])
    opt.step()
    assert opt.state[p]["step"].dtype == torch.float32
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        q = nn.Parameter(torch.ones(2))
        q.grad = torch.ones(2)
        opt = AdamW([q])
        opt.step()
        assert opt.state[q]["step"].dtype == torch.float64
        torch.set_default_dtype(torch.float16)  # any other default: a float32 count, as torch's
        h = nn.Parameter(torch.ones(2, dtype=torch.float32))
        h.grad = torch.ones(2, dtype=torch.float32)
        opt = AdamW([h])
        opt.step()
        assert opt.state[h]["step"].dtype == torch.float32
        t = nn.Parameter(torch.ones(2, dtype=torch.float32))  # torch agrees
        t.grad = torch.ones(2, dtype=torch.float32)
        theirs = torch.optim.AdamW([t])
        theirs.step()
        assert theirs.state[t]["step"].dtype == torch.float32
    finally:
        torch.set_default_dtype(old)


def test_zero_grad_goes_past_a_parameter_without_a_gradient() -> None:
    first, second = nn.Parameter(torch.ones(2)), nn.Parameter(torch.ones(2))
    second.grad = torch.ones(2)
    AdamW([first, second]).zero_grad()
    assert first.grad is None and second.grad is None


def test_mismatched_groups_are_refused_whichever_differs() -> None:
    a, b, c = (nn.Parameter(torch.ones(1)) for _ in range(3))
    saved = AdamW([{"params": [a]}, {"params": [b]}]).state_dict()
    message = "optimizer state does not match the model's parameter groups"
    with pytest.raises(ValueError, match=f"^{message}$"):  # as many groups, other sizes
        AdamW([{"params": [a, c]}, {"params": [b]}]).load_state_dict(saved)
    with pytest.raises(ValueError, match=f"^{message}$"):  # another number of groups
        AdamW([{"params": [a]}]).load_state_dict(saved)


def test_loaded_state_takes_the_parameters_dtype_but_keeps_its_step() -> None:
    p = nn.Parameter(torch.ones(2, dtype=torch.float64))
    saved = {
        "state": {
            0: {"step": torch.tensor(3.0), "exp_avg": torch.ones(2), "exp_avg_sq": torch.ones(2)}
        },
        "param_groups": [{**AdamW([p]).defaults, "params": [0]}],
    }
    opt = AdamW([p])
    opt.load_state_dict(saved)
    assert opt.state[p]["exp_avg"].dtype == torch.float64
    assert opt.state[p]["step"].dtype == torch.float32 and opt.state[p]["step"].item() == 3.0


def test_a_parameter_without_saved_state_starts_fresh_after_a_load() -> None:
    a, b = nn.Parameter(torch.ones(2)), nn.Parameter(torch.ones(2))
    first = AdamW([a, b])
    a.grad = torch.ones(2)
    first.step()  # b has no gradient yet: no state
    opt = AdamW([a, b])
    opt.load_state_dict(first.state_dict())
    b.grad = torch.ones(2)
    opt.step()
    assert opt.state[b]["step"].item() == 1.0 and opt.state[a]["step"].item() == 2.0


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_on_cuda_the_trajectory_is_torchs_fused_one_bit_for_bit() -> None:
    """``build_optimizer`` hands CUDA runs torch's own AdamW; this one, given CUDA parameters,
    makes its state there and runs torch's fused CUDA kernel, as ``fused=True`` does."""
    ours_net, torch_net = _net().cuda(), _net().cuda()
    ours = AdamW(_groups(ours_net), lr=1e-2)
    theirs = _fused(_groups(torch_net), lr=1e-2)
    g = torch.Generator().manual_seed(1)
    for _ in range(4):
        x = torch.randn(16, 6, generator=g).cuda()
        for net, opt in ((ours_net, ours), (torch_net, theirs)):
            net(x).pow(2).mean().backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    _assert_same(ours_net, torch_net)
    assert all(s["step"].device.type == "cuda" for s in ours.state.values())
