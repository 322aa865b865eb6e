"""The known VSN's kept rows: found by their inputs, computed once, never a wrong row."""

from __future__ import annotations

import numpy as np
import torch

from foxhunt.infer.incremental.known_rows import KnownRows
from foxhunt.model.vsn import VariableSelectionNetwork

V, D, A = 3, 8, 5


def _setup() -> tuple[VariableSelectionNetwork, KnownRows, torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    vsn = VariableSelectionNetwork(V, 4, D, d_context=D).eval()
    kept = KnownRows(1, A, V, D, torch.device("cpu"))
    kept.reserve(3)
    ahead = torch.randn(3, A, V)  # slot -> its projected rows' inputs
    ahead[2, 3:] = float("nan")  # a slot with fewer rows projected
    return vsn, kept, ahead, torch.randn(2, D)


def _counting(calls: list[int]):  # noqa: ANN202
    def call(vsn: VariableSelectionNetwork, x: torch.Tensor, c: torch.Tensor):  # noqa: ANN202
        calls.append(x.shape[0])
        return vsn(x, c)

    return call


@torch.inference_mode()
def test_rows_are_the_vsn_of_their_inputs_and_computed_once() -> None:
    vsn, kept, ahead, context = _setup()
    slots = np.array([2, 0])  # windows 0 and 1 hold slots 2 and 0
    x = torch.cat([ahead[2, 0:3], ahead[0, 1:5]])  # window 0's rows, then window 1's
    at = torch.tensor([0, 0, 0, 1, 1, 1, 1])
    calls: list[int] = []
    call = _counting(calls)
    want, _ = vsn(x, context[at])
    got = kept.rows(0, vsn, call, x, at, slots, context, lambda s: ahead[s].numpy())
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    assert calls == [3 + 5 + 7]  # both slots' projected rows and the rows asked, in one call
    again = kept.rows(0, vsn, call, x, at, slots, context, lambda s: ahead[s].numpy())
    torch.testing.assert_close(again, want, rtol=1e-5, atol=1e-6)
    assert len(calls) == 1  # every row held: no call
    other = torch.randn(1, V)  # not projected: computed, its slot refilled
    got = kept.rows(
        0, vsn, call, other, torch.tensor([1]), slots, context, lambda s: ahead[s].numpy()
    )
    torch.testing.assert_close(got, vsn(other, context[1:])[0], rtol=1e-5, atol=1e-6)
    assert calls[1:] == [5 + 1]


@torch.inference_mode()
def test_a_shared_key_costs_a_recomputation_not_a_wrong_row() -> None:
    vsn, kept, ahead, context = _setup()
    kept._keys = lambda x: torch.zeros(x.shape[:-1], dtype=torch.int64)  # type: ignore[method-assign]
    slots = np.array([0, 1])
    x = torch.cat([ahead[0, 2:4], ahead[1, 0:1]])
    at = torch.tensor([0, 0, 1])
    want, _ = vsn(x, context[at])
    for _ in range(3):  # the first candidate of every key is row 0 of the slot: mostly wrong
        got = kept.rows(
            0, vsn, vsn.__class__.__call__, x, at, slots, context, lambda s: ahead[s].numpy()
        )
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_a_cleared_store_holds_nothing() -> None:
    _, kept, _, _ = _setup()
    kept.x.zero_()
    kept.clear()
    assert torch.isnan(kept.x).all()
