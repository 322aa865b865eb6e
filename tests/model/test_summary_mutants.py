"""model/summary.py edges that `make mutate` found untested: parameters held by the model
itself (the ``(own)`` row, after the blocks, with its count and bytes), and a model without
them (no such row)."""

from __future__ import annotations

import torch
from torch import nn

from foxhunt.model import parameter_table


class _WithOwn(nn.Module):
    def __init__(self, dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        self.proj = nn.Linear(2, 3)  # 6 weights + 3 biases
        self.act = nn.ReLU()  # no parameters: no row
        self.scale = nn.Parameter(torch.ones(2, 3, dtype=dtype))
        self.shift = nn.Parameter(torch.zeros(4, dtype=dtype))


def test_parameters_held_by_the_model_itself_come_last_as_own() -> None:
    assert parameter_table(_WithOwn()) == [("proj", 9, 36), ("(own)", 10, 40)]


def test_own_bytes_follow_the_own_parameters_dtype() -> None:
    rows = parameter_table(_WithOwn(torch.float64))
    assert rows[-1] == ("(own)", 10, 80)


def test_a_model_without_own_parameters_has_no_own_row() -> None:
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert parameter_table(model) == [("0", 9, 36), ("2", 4, 16)]
