"""The kept rows of :class:`SelectedRows`, piece by piece on a tiny untrained TFT: the full
forward's quantiles for symbols added in any slot order, the rows each forecast computes (all of
a new window, none of a window held, one per symbol for the next bar), a row or origin held for
another bar computed again, the slot axis doubling, graphs that replace the historical VSN and
the temporal layers, the state's round trip and refusals, the held tensors' device and dtype,
the VSN's chunks and the index helper's numpy views and device indices (written against the
mutants ``make mutate`` left alive)."""

from __future__ import annotations

import copy
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from torch import Tensor, nn

from foxhunt.config import TFTConfig
from foxhunt.infer.incremental.known_rows import Ahead
from foxhunt.infer.incremental.selected import FORMAT, SelectedRows, _Index, _vsn
from foxhunt.model.batch import TFTBatch
from foxhunt.model.static_encoder import StaticContexts
from foxhunt.model.tft import TFT

L, H, D, A = 4, 2, 8, 3
CONFIG = TFTConfig(
    n_static=2, n_historical=3, n_known=2, hidden=D, n_heads=2, lstm_layers=1,
    encoder_length=L, horizon=H, quantiles=(0.1, 0.5, 0.9), dropout=0.0,
    variable_width=4, vsn_chunk=2, decoder_origin_inputs=True,
)  # fmt: skip
CPU, META = torch.device("cpu"), torch.device("meta")
PER_SLOT = 4 * (L * D + D + 4 * D) + 8 * (L + 1) + 1
"""Bytes held per symbol without known rows: rows, origin, contexts, bar numbers, flag."""


def _tft() -> TFT:
    torch.manual_seed(0)
    return TFT(CONFIG).eval()


def _series(slot: int, bars: int = 16) -> tuple[Tensor, Tensor, Tensor]:
    """One symbol's static inputs, observed inputs of ``bars`` bars and their known inputs."""
    g = torch.Generator().manual_seed(100 + int(slot))
    static = torch.randn(CONFIG.n_static, generator=g)
    return static, torch.randn(bars, 3, generator=g), torch.randn(bars + H, 2, generator=g)


def _batch(slots: list[int], counts: list[int]) -> TFTBatch:
    """The window of each slot ending at bar ``count - 1``."""
    parts = [_series(s) for s in slots]
    return TFTBatch(
        static=torch.stack([p[0] for p in parts]),
        historical=torch.stack([p[1][c - L : c] for p, c in zip(parts, counts, strict=True)]),
        known=torch.stack([p[2][c - L : c + H] for p, c in zip(parts, counts, strict=True)]),
    )


def _ahead(counts: dict[int, int]) -> Ahead:
    """The known inputs of each slot's origin and the ``A - 1`` bars after it."""
    return lambda slots: np.stack([_series(s)[2][counts[s] - 1 :][:A].numpy() for s in slots])


def _refuse(slots: np.ndarray) -> np.ndarray:
    raise AssertionError("known inputs ahead asked for without known_width")


def _forecast(
    sel: SelectedRows, tft: TFT, slots: list[int], counts: list[int], ahead: Ahead | None = _refuse
) -> tuple[int, int]:
    """Check the kept rows' quantiles against the full forward's; return the observed rows
    and the static rows computed (by the model's VSNs) for them."""
    batch = _batch(slots, counts)
    hist: list[int] = []
    static: list[int] = []
    hooks = [
        vsn.register_forward_hook(lambda m, a, o, n=n: n.append(a[0].shape[0]))
        for vsn, n in ((tft.historical_vsn, hist), (tft.static_vsn, static))
    ]
    with torch.inference_mode():
        try:
            kept = sel.outputs(tft, batch, np.array(slots), np.array(counts), ahead)
        finally:
            for hook in hooks:
                hook.remove()
        full = tft(batch).quantiles
    assert kept.shape == (len(slots), H, CONFIG.n_quantiles)
    torch.testing.assert_close(kept, full, rtol=1e-5, atol=1e-6)
    return sum(hist), sum(static)


def _slot_axes(sel: SelectedRows) -> list[int]:
    held = (sel.rows, sel.origin, sel.contexts, sel.bar, sel.origin_bar, sel.has_contexts)
    return [t.shape[1] for t in (*held, *sel.known.tensors)]


def test_each_forecast_computes_only_the_rows_not_held() -> None:
    tft = _tft()
    sel = SelectedRows([tft], CPU)
    assert sel.graphs is None and sel.known_width == 0 and sel.known.A == 0 and sel.nbytes == 0
    held = (sel.rows, sel.origin, sel.contexts, sel.bar, sel.origin_bar, sel.has_contexts)
    want = [(1, 0, L, D), (1, 0, D), (1, 0, 4, D), (1, 0, L), (1, 0), (1, 0)]
    assert [t.shape for t in held] == want  # no slot yet
    # slots in reverse order: each keeps its own static contexts
    assert _forecast(sel, tft, [1, 0], [6, 9]) == (2 * L, 2)
    assert sel.nbytes == 2 * PER_SLOT
    assert _forecast(sel, tft, [2], [5]) == (L, 1)  # a third symbol, whose window holds bar 1
    assert _slot_axes(sel) == [4] * 9
    assert sel.has_contexts.tolist() == [[True, True, True, False]]
    assert sel.nbytes == 3 * PER_SLOT  # the fourth slot, allocated ahead, not counted
    assert _forecast(sel, tft, [0, 1, 2], [9, 6, 5]) == (0, 0)  # all held: nothing computed
    assert sel.origin_bar[0, :3].tolist() == [8, 5, 4]
    assert _forecast(sel, tft, [0, 1, 2], [10, 7, 6]) == (3, 0)  # the next bar: one per symbol
    assert _forecast(sel, tft, [2, 0], [7, 14]) == (1 + L, 0)  # a backlog: the whole window
    assert sorted(sel.bar[0, 0].tolist()) == [10, 11, 12, 13]


@pytest.mark.parametrize("held", [("row", 0), ("row", L - 1), ("origin", -1), ("origin", 7),
                                  ("origin", 9), ("origin", 10)])  # fmt: skip
def test_a_row_or_origin_held_for_another_bar_is_computed_again(held: tuple[str, int]) -> None:
    """Window of bars 5..8: the row at position ``k`` recorded as holding the bar ``L`` later
    (its ring position's next), or the origin as bar ``k``'s, is computed again (NaN if used)."""
    tft = _tft()
    sel = SelectedRows([tft], CPU)
    _forecast(sel, tft, [0], [9])
    what, k = held
    with torch.inference_mode():  # the held tensors were made in it
        if what == "row":
            ring = (5 + k) % L
            sel.bar[0, 0, ring] += L
            sel.rows[0, 0, ring] = float("nan")
        else:
            sel.origin_bar[0, 0] = k
            sel.origin[0, 0] = float("nan")
    assert _forecast(sel, tft, [0], [9]) == (1, 0)
    assert sel.origin_bar[0, 0] == 8 and sorted(sel.bar[0, 0].tolist()) == [5, 6, 7, 8]


def test_the_slot_axis_doubles_and_grows_only_for_a_new_slot() -> None:
    sel = SelectedRows([_tft()], CPU, known_width=A)
    sizes = []
    for slots in ([], [1], [1], [0], [2], [3], [9]):
        sel._reserve(np.array(slots, np.int64))
        sizes.append(_slot_axes(sel))
    assert [s[0] for s in sizes] == [0, 2, 2, 2, 4, 4, 10]
    assert all(len(set(s)) == 1 for s in sizes)
    # every new slot holds nothing: no bar number (those are >= 0), no contexts
    assert (sel.bar < 0).all() and (sel.origin_bar < 0).all() and not sel.has_contexts.any()


class _Graphs:
    """A stand-in for one model's onnxruntime graphs: runs the model's layers, records calls."""

    def __init__(self, tft: TFT) -> None:
        self.tft, self.calls = tft, list[str]()

    def historical(self, x: np.ndarray, context: np.ndarray) -> Tensor:
        self.calls.append("historical")
        return self.tft.historical_vsn(torch.from_numpy(x), torch.from_numpy(context))[0]

    def temporal(self, selected: Tensor, ctx: StaticContexts) -> Tensor:
        self.calls.append("temporal")
        return self.tft.temporal(selected, ctx)[0]


def test_graphs_run_the_historical_vsn_and_the_temporal_layers_and_survive_an_old_state() -> None:
    tft = _tft()
    sel = SelectedRows([tft], CPU)
    graphs = _Graphs(tft)
    sel.graphs = [graphs]  # type: ignore[list-item]
    _forecast(sel, tft, [0], [9])
    assert graphs.calls == ["historical", "temporal"]
    sel.load_state_dict({"forecaster": np.array([1])})  # a state saved before the kept rows
    assert sel.graphs == [graphs] and sel.bar.size == 0
    _forecast(sel, tft, [0], [9])
    assert graphs.calls == ["historical", "temporal"] * 2


def _state(sel: SelectedRows, tft: TFT) -> dict[str, np.ndarray]:
    """The state after two symbols' forecasts (with their known rows kept)."""
    _forecast(sel, tft, [1, 0], [6, 9], _ahead({0: 9, 1: 6}))
    return sel.state_dict()


def test_the_state_round_trips_into_a_new_instance_and_holds_its_dtypes() -> None:
    tft = _tft()
    sel = SelectedRows([tft], CPU, known_width=A)
    state = _state(sel, tft)
    assert state["selected.format"].tolist() == [FORMAT, 1, L, D]
    widened = {k: v.astype(np.float64) for k, v in state.items() if v.dtype == np.float32}
    widened |= {k: state[k].astype(np.int32) for k in ("selected.bar", "selected.origin_bar")}
    widened |= {"selected.has_contexts": state["selected.has_contexts"].astype(np.uint8)}
    for d in (state, {**state, **widened}):  # another writer's dtypes: held as ours
        other = SelectedRows([tft], CPU, known_width=A)
        other.load_state_dict(d)
        assert [t.dtype for t in (other.rows, other.origin, other.contexts)] == [torch.float32] * 3
        assert [a.dtype for a in (other.bar, other.origin_bar)] == [np.int64] * 2
        assert other.has_contexts.dtype == bool
        assert _slot_axes(other) == [2] * 9 and other.nbytes == sel.nbytes
        assert torch.equal(other.rows, sel.rows) and (other.bar == sel.bar).all()
        assert _forecast(other, tft, [0, 1], [9, 6], _ahead({0: 9, 1: 6})) == (0, 0)


def test_a_state_of_another_shape_is_refused_and_an_old_one_holds_nothing() -> None:
    tft = _tft()
    sel = SelectedRows([tft], CPU, known_width=A)
    state = _state(sel, tft)
    for i, wrong in enumerate([FORMAT + 1, 2, L + 1, D + 1]):
        fmt = state["selected.format"].copy()
        fmt[i] = wrong
        with pytest.raises(ValueError) as err:
            sel.load_state_dict({**state, "selected.format": fmt})
        want = f"{fmt.tolist()} (format, models, L, d), expected {[FORMAT, 1, L, D]}"
        assert str(err.value) == f"selected rows format {want}"
    sel.load_state_dict({"forecaster": np.array([1])})
    assert sel.device == CPU and sel.known_width == A and sel.known.A == A
    assert _slot_axes(sel) == [0] * 9 and sel.nbytes == 0
    assert _forecast(sel, tft, [0], [9], _ahead({0: 9})) == (L, 1)


def _devices(sel: SelectedRows) -> set[torch.device]:
    return {t.device for t in (sel.rows, sel.origin, sel.contexts, *sel.known.tensors)}


def test_held_tensors_are_kept_and_indexed_on_the_device_given() -> None:
    """Not on torch's default device. On another device (meta, the only other one a CPU has:
    shapes without values) a restored state is moved there, and a forecast of held windows
    indexes with torch, handing the known rows a window index on that device."""
    tft = _tft()
    with torch.device(META):
        assert _devices(SelectedRows([tft], CPU)) == {CPU}
    state = _state(SelectedRows([tft], CPU, known_width=A), tft)
    meta = copy.deepcopy(tft).to(META)
    there = SelectedRows([meta], META, known_width=A)
    there.load_state_dict(state)
    assert _devices(there) == {META} and there.known.x.shape == (1, 2, A, 2)
    at: list[torch.device] = []

    def rows(*args: Tensor) -> Tensor:  # KnownRows.rows(m, vsn, call, x, at, ...)
        at.append(args[4].device)
        return torch.zeros(args[3].shape[0], D, device=META)

    there.known = SimpleNamespace(rows=rows)  # type: ignore[assignment]
    batch = _batch([1, 0], [6, 9]).to(META)
    with torch.inference_mode():
        out = there.outputs(meta, batch, np.array([1, 0]), np.array([6, 9]), _refuse)
    assert out.shape == (2, H, 3) and out.device == META and at == [META]


def test_contexts_of_a_model_in_another_dtype_are_held_in_the_held_dtype() -> None:
    tft = _tft().double()
    sel = SelectedRows([tft], CPU)
    sel._reserve(np.array([1]))
    static = torch.stack([_series(1)[0], _series(0)[0]]).double()
    with torch.inference_mode():
        got, want = sel._contexts(0, tft, np.array([1, 0]), static), tft.contexts(static)[0]
    for g, w in zip(got, want, strict=True):
        assert g.dtype == torch.float32
        torch.testing.assert_close(g, w.float())
    assert sel.has_contexts.tolist() == [[True, True]]


class _Chunks:
    """A stand-in VSN of ``n_vars`` variables of width ``d_var``: records each call's chunk."""

    def __init__(self, n_vars: int, d_var: int, chunk: int) -> None:
        self.n_vars, self.d_var, self.chunk = n_vars, d_var, chunk
        self.seen: list[object] = []

    def __call__(self, x: Tensor, c: Tensor, chunk: int | None = None) -> tuple[Tensor, Tensor]:
        self.seen.append(chunk)
        return x, c


@pytest.mark.parametrize(("n_vars", "d_var", "chunk", "rows", "want"), [
    (210, 16, 32, 1, 210),  # one new bar: all variables in one chunk
    (210, 16, 32, 100, 81),  # 2**17 // (100 * 16) variables
    (210, 16, 32, 500, 32),  # fewer than the VSN's own chunk: its chunk
    (200_000, 1, 1, 1, 1 << 17),  # one row of width 1: 2**17 variables
])  # fmt: skip
def test_the_vsn_runs_in_chunks_of_2_to_the_17_values(
    n_vars: int, d_var: int, chunk: int, rows: int, want: int
) -> None:
    vsn = _Chunks(n_vars, d_var, chunk)
    _vsn(vsn, torch.zeros(rows, n_vars), torch.zeros(rows, 1))  # type: ignore[arg-type]
    assert vsn.seen == [want] and type(vsn.seen[0]) is int


def test_the_index_views_host_tensors_in_numpy_and_moves_indices_to_other_devices() -> None:
    host = _Index(CPU)
    assert host.host is True and host.device == CPU
    t, p = torch.zeros(3), nn.Parameter(torch.ones(2))
    view, pview = host.view(t), host.view(p)  # a parameter: its values, without autograd
    assert isinstance(view, np.ndarray) and isinstance(pview, np.ndarray)
    view[1], pview[0] = 5.0, 3.0  # views share the tensors' memory
    assert t.tolist() == [0.0, 5.0, 0.0] and p.tolist() == [3.0, 1.0]
    a = np.array([2, 0])
    assert host.at(a) is a and host.tensor(view).tolist() == t.tolist()
    device = _Index(META)
    assert device.host is False and device.device == META
    assert device.view(t) is t
    at = device.at(a)
    assert isinstance(at, Tensor) and at.device == META and at.dtype == torch.int64
    value = torch.ones(2, dtype=torch.float64, device=META)
    assert device.like(value, torch.zeros(2, device=META)).dtype == torch.float32
