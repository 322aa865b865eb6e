"""The exact tensor peak of a call: what it allocates and has not yet freed at its worst moment,
not counting what was live before it, whatever it returns."""

from __future__ import annotations

import torch

from foxhunt.memory.tensor_peak import tensor_peak_bytes

MB = 2**20


def test_the_peak_is_the_most_bytes_alive_at_once_within_the_call() -> None:
    before = torch.zeros(4 * MB, dtype=torch.uint8)  # live already: not counted

    def two_then_one() -> torch.Tensor:
        a = torch.ones(MB, dtype=torch.uint8)
        b = torch.ones(2 * MB, dtype=torch.uint8)  # a and b: 3 MB at once
        del a, b
        return torch.ones(MB, dtype=torch.uint8)  # 1 MB kept past the call: below the peak

    assert tensor_peak_bytes(two_then_one) == 3 * MB
    assert before.numel() == 4 * MB


def test_sequential_temporaries_do_not_add_up() -> None:
    def one_at_a_time() -> None:
        for _ in range(3):
            t = torch.ones(MB, dtype=torch.uint8)
            del t

    assert tensor_peak_bytes(one_at_a_time) == MB
    assert tensor_peak_bytes(lambda: None) == 0


class _TemporaryInside(torch.autograd.Function):
    """A custom Function whose forward makes and drops a 2 MB temporary of its own."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:  # noqa: ANN001
        tmp = torch.ones(2 * MB, dtype=torch.uint8)
        del tmp
        return x.clone()

    @staticmethod
    def backward(ctx, dy: torch.Tensor) -> torch.Tensor:  # noqa: ANN001
        return dy


def test_a_temporary_inside_a_custom_function_is_counted() -> None:
    """The operator-level memory columns date a custom Function's own frees at its start, so
    its temporary would vanish from the curve; the allocation events keep it."""
    x = torch.zeros(MB // 4, requires_grad=True)  # 1 MB of float32

    def run() -> None:
        y = _TemporaryInside.apply(x)  # 2 MB temporary, then the 1 MB copy
        del y

    assert tensor_peak_bytes(run) == 2 * MB
