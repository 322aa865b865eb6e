"""ByteDropout: the documented rate (rounded to 1/256), an unbiased output, the drawn bytes as
the only thing saved for backward (one per element), the gradient through kept elements only,
identity in eval."""

from __future__ import annotations

import pytest
import torch

from foxhunt.model.dropout import ByteDropout, dropout_layer, random_bytes


def test_rate_is_rounded_to_a_256th_and_scale_keeps_the_mean() -> None:
    d = ByteDropout(0.1)
    assert d.threshold == 26 and d.rate == 26 / 256
    assert d.scale == pytest.approx(256 / 230)
    torch.manual_seed(0)
    x = torch.ones(400_000)
    y = d.train()(x)
    dropped = (y == 0).double().mean().item()
    # binomial sd of the share at n = 4e5 is 4.8e-4: 5 sd either side
    assert abs(dropped - 26 / 256) < 2.5e-3
    values = torch.unique(y).tolist()
    assert values[0] == 0.0 and values[1:] == [pytest.approx(256 / 230)]
    assert y.mean().item() == pytest.approx(1.0, abs=6e-3)


def test_random_bytes_are_uniform_over_all_256_values() -> None:
    torch.manual_seed(1)
    b = random_bytes(torch.Size([3, 256 * 400 + 5]), torch.device("cpu"))
    assert b.dtype == torch.uint8 and b.shape == (3, 256 * 400 + 5)
    counts = torch.bincount(b.flatten().long(), minlength=256).double()
    expected = b.numel() / 256
    chi2 = ((counts - expected) ** 2 / expected).sum().item()
    assert chi2 < 400  # 255 degrees of freedom: p < 1e-7 above this


@pytest.mark.parametrize("shape", [(64, 32), (5, 9)])  # a whole number of draws, and not
def test_gradient_flows_only_through_kept_elements_and_only_the_bytes_are_saved(
    shape: tuple[int, int],
) -> None:
    torch.manual_seed(2)
    d = ByteDropout(0.5).train()
    x = torch.randn(*shape, requires_grad=True)
    saved: list[torch.Tensor] = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        y = d(x)
    assert [t.dtype for t in saved] == [torch.uint8]
    # one byte per element, no more: an odd size's bytes are not a view of the drawn words
    assert saved[0].untyped_storage().nbytes() == x.numel()
    keep = saved[0] >= d.threshold  # the saved bytes: below the threshold is dropped
    assert 0 < int(keep.sum()) < keep.numel()
    assert torch.equal(y, x.detach() * keep * d.scale)
    y.sum().backward()
    assert x.grad is not None
    assert torch.equal(x.grad, keep.float() * d.scale)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_output_and_gradient_are_bit_for_bit_those_of_a_masked_fill(dtype: torch.dtype) -> None:
    """The 0/1 mask in the tensor's dtype, then the scale: what masking by a bool tensor and
    scaling gave, bit for bit, in half precision too (the scale is not rounded to bf16)."""
    d = ByteDropout(0.1).train()
    x = torch.randn(40, 33, dtype=dtype, requires_grad=True)
    g = torch.randn(40, 33, dtype=dtype)
    torch.manual_seed(6)
    y = d(x)
    (dx,) = torch.autograd.grad(y, x, g)
    torch.manual_seed(6)
    dropped = random_bytes(x.shape, x.device) < d.threshold
    assert torch.equal(y, x.detach().masked_fill(dropped, 0.0).mul_(d.scale))
    assert torch.equal(dx, g.masked_fill(dropped, 0.0).mul_(d.scale))


def _x_sized_allocations(fn, size: int) -> int:  # noqa: ANN001
    from torch.profiler import ProfilerActivity, profile

    from foxhunt.memory.tensor_peak import allocation_events

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    return sum(b == size for _, b in allocation_events(prof))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_in_place_drops_in_the_input_and_the_gradient_bit_for_bit(dtype: torch.dtype) -> None:
    """``inplace``: the output is the input tensor, and backward writes into the incoming
    gradient; values and gradient are those of the out-of-place dropout, bit for bit, and
    neither direction makes an input-sized tensor."""
    a = torch.randn(6, 5, 700, dtype=dtype, requires_grad=True)
    w = torch.randn(700, 3, dtype=dtype)
    size = a.numel() * a.element_size()
    out = {}
    for inplace in (False, True):
        d = ByteDropout(0.1, inplace=inplace).train()
        torch.manual_seed(3)
        x = a * 2  # the dropout's own input, as fc2's output is the GRN's
        made: list[torch.Tensor] = []
        forward = _x_sized_allocations(lambda: made.append(d(x)), size)  # noqa: B023
        y = made[0]
        assert (y.data_ptr() == x.data_ptr()) == inplace
        loss = (y @ w).sum()  # a matmul's backward makes y's gradient afresh
        grads: list[torch.Tensor] = []
        backward = _x_sized_allocations(
            lambda: grads.extend(torch.autograd.grad(loss, a)),  # noqa: B023
            size,
        )
        out[inplace] = (y.detach(), grads[0], forward, backward)
    (y0, g0, f0, b0), (y1, g1, f1, b1) = out[False], out[True]
    assert torch.equal(y0, y1) and torch.equal(g0, g1)
    # forward: a*2, then the mask (out of place) or nothing; backward: the matmul's gradient
    # of y, then the mask and 2*grad (out of place) or 2*grad alone
    assert (f0 - f1, b0 - b1) == (1, 1)


def test_in_place_falls_back_for_a_strided_gradient_and_a_2d_input() -> None:
    """A gradient that is not contiguous (a transposed one; a sum's, one value expanded over
    every element, cannot be written in place at all) is masked into a new tensor (the same
    values), and a 2-D input is dropped out of place (the in-place form goes a row of axis 1
    at a time)."""
    d = ByteDropout(0.3, inplace=True).train()
    a = torch.randn(4, 6, 50, requires_grad=True)
    c = torch.randn(50, 6, 4)
    for loss in (lambda y: (y.transpose(0, 2) * c).sum(), lambda y: y.sum()):
        grads = []
        for layer in (ByteDropout(0.3).train(), d):
            torch.manual_seed(4)
            (g,) = torch.autograd.grad(loss(layer(a * 1)), a)
            grads.append(g)
        assert torch.equal(grads[0], grads[1])
    x = torch.randn(30, 40)
    before = x.clone()
    torch.manual_seed(5)
    y = d(x)
    assert torch.equal(x, before) and y.data_ptr() != x.data_ptr()
    assert 0 < int((y == 0).sum()) < y.numel()


def test_same_seed_same_mask_and_eval_is_identity() -> None:
    d = ByteDropout(0.3).train()
    x = torch.randn(10, 10)
    torch.manual_seed(3)
    a = d(x)
    torch.manual_seed(3)
    assert torch.equal(a, d(x))
    assert d.eval()(x) is x
    assert isinstance(dropout_layer(0.0), torch.nn.Identity)
    with pytest.raises(ValueError, match="dropout probability"):
        ByteDropout(1.0)


def test_a_rate_that_rounds_to_zero_returns_the_input_and_the_smallest_drops() -> None:
    x = torch.ones(4096)
    assert ByteDropout(0.0).train()(x) is x  # [0, 1): zero is allowed, and costs no draw
    assert ByteDropout(0.001).train()(x) is x  # rounds to 0/256
    torch.manual_seed(4)
    smallest = ByteDropout(1 / 256).train()
    assert smallest.threshold == 1
    dropped = int((smallest(x) == 0).sum())
    assert 0 < dropped < 60  # 16 expected of 4,096


def test_a_rate_that_rounds_to_one_is_kept_under_one() -> None:
    d = ByteDropout(0.999)  # 255.7 / 256: a rate of 1 would scale by 1 / 0
    assert d.threshold == 255 and d.rate == 255 / 256 and d.scale == 256.0


def test_random_bytes_draw_one_word_per_eight_bytes() -> None:
    """The generator advances by ceil(n / 8) 64-bit words: what a step's masks cost, and what
    checkpoint recomputation replays."""
    for n in (1, 8, 9, 16):
        torch.manual_seed(5)
        random_bytes(torch.Size([n]), torch.device("cpu"))
        after = torch.randint(0, 1000, (4,))
        torch.manual_seed(5)
        torch.randint(-(2**63), 2**63 - 1, (-(-n // 8),), dtype=torch.int64)
        assert torch.equal(after, torch.randint(0, 1000, (4,))), n


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_the_byte_mask_on_cuda_keeps_the_bytes_and_masks_both_directions(
    dtype: torch.dtype,
) -> None:
    """On CUDA too: the bytes are what backward keeps, and output and gradient are the input
    and the incoming gradient masked by them and scaled (the ops are device-generic)."""
    torch.manual_seed(3)
    d = ByteDropout(0.25).train()
    x = torch.randn(64, 33, device="cuda", dtype=dtype, requires_grad=True)
    g = torch.randn(64, 33, device="cuda", dtype=dtype)
    saved: list[torch.Tensor] = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        y = d(x)
    assert [(t.dtype, t.device.type) for t in saved] == [(torch.uint8, "cuda")]
    dropped = saved[0] < d.threshold
    assert 0 < int(dropped.sum()) < dropped.numel()
    (dx,) = torch.autograd.grad(y, x, g)
    assert torch.equal(y, x.detach().masked_fill(dropped, 0.0).mul_(d.scale))
    assert torch.equal(dx, g.masked_fill(dropped, 0.0).mul_(d.scale))


def test_in_place_only_when_asked_and_said_so() -> None:
    """Dropping in place is the caller's promise: off by default (the GLUs' dropout leaves its
    input alone), passed on by ``dropout_layer``, shown in the module's repr; the per-variable
    GRNs ask for it."""
    from foxhunt.model.variable_grn import PerVariableGRN

    x = torch.randn(2, 3, 40)
    before = x.clone()
    for layer in (ByteDropout(0.5), dropout_layer(0.5)):
        assert not layer.inplace
        torch.manual_seed(7)
        layer.train()(x)
        assert torch.equal(x, before)
    assert dropout_layer(0.5, inplace=True).inplace
    assert repr(ByteDropout(0.1)) == "ByteDropout(rate=0.1016)"
    assert repr(ByteDropout(0.1, inplace=True)) == "ByteDropout(rate=0.1016, inplace)"
    assert PerVariableGRN(3, 2, 2, 2, dropout=0.1).dropout.inplace
