"""The known rows' store, piece by piece: the slot axis it grows, the key multipliers its
docstring promises, which rows a mixed update recomputes, and the host lookup that answers an
update whose every row is held (written against the mutants ``make mutate`` left alive)."""

from __future__ import annotations

import numpy as np
import torch

from foxhunt.infer.incremental.known_rows import KnownRows

V, D, A = 3, 4, 5


def _call(calls: list[int]):  # noqa: ANN202
    """A stand-in VSN (each row's output a function of its inputs and context) that counts
    the rows it is asked for."""

    def call(vsn: object, x: torch.Tensor, c: torch.Tensor) -> tuple[torch.Tensor, None]:
        calls.append(x.shape[0])
        return x.sum(-1, keepdim=True) * torch.arange(1, D + 1) + c, None

    return call


def _want(x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    return _call([])(None, x, c)[0]


def _filled() -> tuple[KnownRows, torch.Tensor, torch.Tensor, list[int]]:
    """A store of two slots, filled by one update of two windows (slots 1 and 0)."""
    kept = KnownRows(1, A, V, D, torch.device("cpu"))
    kept.reserve(2)
    ahead = torch.arange(2 * A * V, dtype=torch.float32).reshape(2, A, V) / 7 + 1
    ahead[0, 4] = float("nan")  # slot 0 projects 4 rows
    context = torch.tensor([[0.5] * D, [-2.0] * D])
    calls: list[int] = []
    x = torch.stack([ahead[1, 0], ahead[0, 2]])
    got = kept.rows(0, None, _call(calls), x, torch.tensor([0, 1]), np.array([1, 0]), context,
                    lambda s: ahead[s].numpy())  # fmt: skip
    torch.testing.assert_close(got, _want(x, context))
    assert calls == [A + 4 + 2]
    return kept, ahead, context, calls


def test_the_slot_axis_grows_to_the_slots_asked_and_never_shrinks() -> None:
    kept = KnownRows(2, A, V, D, torch.device("cpu"))
    assert [t.shape for t in kept.tensors] == [(2, 0, A, V), (2, 0, A, D), (2, 0, A)]
    kept.reserve(3)
    kept.reserve(4)  # one more slot
    kept.reserve(2)  # fewer: nothing changes
    assert [t.shape for t in kept.tensors] == [(2, 4, A, V), (2, 4, A, D), (2, 4, A)]
    assert torch.isnan(kept.x).all() and not kept.y.any() and not kept.key.any()
    assert kept.key.dtype == torch.int64


def test_the_key_multipliers_are_odd_distinct_and_below_2_to_the_27() -> None:
    """Odd: a change of one input always changes the key (odd numbers are invertible mod
    2**64); below 2**27: ten products with 32-bit values sum below 2**63."""
    w = KnownRows(1, A, 100, D, torch.device("cpu"))._w  # wide enough to wrap at 2**27
    assert w.dtype == torch.int64 and len(w) == 100
    assert bool((w % 2 == 1).all()) and len(set(w.tolist())) == 100
    assert int(w.max()) < 1 << 27
    assert int(w.max()) > 1 << 26  # the modulus is what holds them below 2**27


def test_a_mixed_update_recomputes_only_the_windows_with_a_row_not_held() -> None:
    kept, ahead, context, calls = _filled()
    # window 0's row held at position 3 of its slot, window 1's first row at position 1 and
    # its second not held: each row's own first candidate, not the first of the whole update
    x = torch.stack([ahead[1, 3], ahead[0, 1], torch.full((V,), 9.0)])
    at = torch.tensor([0, 1, 1])
    got = kept.rows(0, None, _call(calls), x, at, np.array([1, 0]), context,
                    lambda s: ahead[s].numpy())  # fmt: skip
    torch.testing.assert_close(got, _want(x, context[at]))
    assert calls[1:] == [4 + 1]  # slot 0's projected rows again and the new row, not slot 1's


def test_an_update_of_held_rows_is_answered_by_the_host_lookup_without_a_call() -> None:
    kept, ahead, context, calls = _filled()
    looked: list[bool] = []
    host = kept._held_on_host

    def spy(*args: object) -> torch.Tensor | None:
        held = host(*args)  # type: ignore[arg-type]
        looked.append(held is not None)
        return held

    kept._held_on_host = spy  # type: ignore[method-assign]
    x = torch.stack([ahead[0, 3], ahead[1, 4], ahead[1, 1]])
    at = torch.tensor([1, 0, 0])
    got = kept.rows(0, None, _call(calls), x, at, np.array([1, 0]), context,
                    lambda s: ahead[s].numpy())  # fmt: skip
    torch.testing.assert_close(got, _want(x, context[at]))
    assert looked == [True] and len(calls) == 1


def test_the_host_lookup_finds_held_rows_and_refuses_a_row_not_held() -> None:
    kept, ahead, context, _ = _filled()
    slots = np.array([1, 0])
    x = torch.stack([ahead[0, 3], ahead[1, 4], ahead[1, 0]])
    at = torch.tensor([1, 0, 0])
    held = kept._held_on_host(0, x, at, slots)
    assert held is not None
    torch.testing.assert_close(held, _want(x, context[at]))
    assert kept._held_on_host(0, x[:1], torch.tensor([0]), slots) is None  # slot 1 never held it
    x[2, 1] += 1.0
    assert kept._held_on_host(0, x, at, slots) is None


def test_a_row_sharing_a_held_rows_key_is_not_found_on_the_host() -> None:
    """Two inputs with one key (bits moved between two columns in the ratio of their
    multipliers): the host lookup compares the inputs too, so the held row is not returned."""
    kept, ahead, context, calls = _filled()
    w = kept._w.tolist()
    bits = ahead[1, 2].numpy().view(np.int32).astype(np.int64)
    bits[0] += w[1]
    bits[1] -= w[0]
    twin = torch.from_numpy(bits.astype(np.int32).view(np.float32).copy())
    assert kept._keys(twin) == kept._keys(ahead[1, 2])
    assert not torch.equal(twin, ahead[1, 2])
    x, at, slots = twin[None], torch.tensor([0]), np.array([1, 0])
    assert kept._held_on_host(0, x, at, slots) is None
    got = kept.rows(0, None, _call(calls), x, at, slots, context, lambda s: ahead[s].numpy())
    torch.testing.assert_close(got, _want(x, context[:1]))
    assert calls[1:] == [A + 1]


def test_keys_of_many_inputs_with_large_bits_are_exact_on_the_host() -> None:
    """Forty inputs near 1e30 (bits near 2**31) and multipliers near 2**27: the products pass
    2**53, so keys summed in float64 would not equal the int64 keys the store holds."""
    n = 40
    kept = KnownRows(1, A, n, D, torch.device("cpu"))
    kept.reserve(1)
    ahead = (1e30 * (1 + torch.arange(A * n, dtype=torch.float32) / 1e3)).reshape(1, A, n)
    context = torch.zeros(1, D)
    calls: list[int] = []
    x, at, slots = ahead[0, 2:4], torch.tensor([0, 0]), np.array([0])
    kept.rows(0, None, _call(calls), x, at, slots, context, lambda s: ahead[s].numpy())
    held = kept._held_on_host(0, x, at, slots)
    assert held is not None
    torch.testing.assert_close(held, _want(x, context[at]))
