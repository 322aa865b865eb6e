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
