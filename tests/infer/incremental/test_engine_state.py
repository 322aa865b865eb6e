"""The live feature engine's bookkeeping: slots, bar counts, the saved state and its reload.

Synthetic bars only (a seeded random walk, a few hundred bars), the numpy step
(``compiled=False``): what is checked here is the engine's contract, not the features' values
(``test_engine.py`` compares those with the batch pipeline).
"""

from __future__ import annotations

import importlib.util
import io
import re
import sys
import types

import numpy as np
import pytest

import foxhunt.infer.incremental as incremental_pkg
from foxhunt.data.features.observed import WARMUP
from foxhunt.infer.incremental import windows as w
from foxhunt.infer.incremental.engine import (
    FORMAT,
    KERNEL_ENV,
    IncrementalFeatures,
    compiled_available,
)
from foxhunt.infer.incremental.kernel_layout import WIDTHS

HAS_NUMBA = importlib.util.find_spec("numba") is not None

N_BARS = WARMUP + 60


def _bars(n: int, k: int, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """(n, k, 5) open/high/low/close/volume of ``k`` random walks and (n, k) session days."""
    rng = np.random.default_rng(seed)
    close = 100.0 * np.exp(np.cumsum(0.002 * rng.standard_normal((n, k)), axis=0))
    op = np.vstack([close[:1], close[:-1]])
    wick = 1.0 + 0.001 * np.abs(rng.standard_normal((2, n, k)))
    hi = np.maximum(op, close) * wick[0]
    lo = np.minimum(op, close) / wick[1]
    vol = rng.uniform(1.0, 10.0, (n, k))
    session = np.broadcast_to(19_000 + np.arange(n)[:, None] // 90, (n, k))
    return np.stack([op, hi, lo, close, vol], axis=2), np.ascontiguousarray(session, np.int64)


def _engine(capacity: int = 8) -> IncrementalFeatures:
    return IncrementalFeatures(capacity, compiled=False)


def _run(engine: IncrementalFeatures, slots, values, session, start: int, stop: int) -> list:
    return [engine.step(slots, values[i], session[i]) for i in range(start, stop)]


def _reload(state: dict[str, np.ndarray]) -> IncrementalFeatures:
    """``state`` through ``np.savez`` / ``np.load`` into a new numpy engine."""
    buf = io.BytesIO()
    np.savez(buf, **state)
    buf.seek(0)
    with np.load(buf) as saved:
        engine = IncrementalFeatures.from_state_dict(dict(saved))
    engine.compiled = False
    return engine


# --- construction, kernel choice ---------------------------------------------------------------


def test_compiled_argument_is_obeyed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KERNEL_ENV, raising=False)
    assert IncrementalFeatures(compiled=False).compiled is False
    monkeypatch.setenv(KERNEL_ENV, "numpy")
    assert IncrementalFeatures(compiled=True).compiled is True
    assert IncrementalFeatures().compiled is False  # None: compiled_available()


def test_kernel_env_var_is_case_and_space_insensitive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KERNEL_ENV, "  NumPy ")
    assert compiled_available() is False


def test_the_numpy_engine_never_calls_the_compiled_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object) -> None:
        raise AssertionError("compiled kernel called by a numpy engine")

    fake = types.SimpleNamespace(step=boom)
    monkeypatch.setitem(sys.modules, "foxhunt.infer.incremental.compiled", fake)
    monkeypatch.setattr(incremental_pkg, "compiled", fake, raising=False)
    values, session = _bars(3, 1)
    engine = _engine()
    slots = engine.slot_of(["A"])
    for out in _run(engine, slots, values, session, 0, 3):
        assert out.shape == (1, 210)
    assert engine.bars("A") == 3


def test_a_new_engine_is_empty_with_the_asked_capacity() -> None:
    engine = _engine(3)
    assert engine.slots == {}
    assert engine.count.shape == (3,) and engine.count.dtype == np.int64
    assert engine.session.shape == (3,) and engine.session.dtype == np.int64
    assert engine.ring.shape == (3, len(w.SERIES), w.RING)
    assert np.isnan(engine.ring).all()
    assert engine.packed.shape == (3, sum(WIDTHS.values()))
    assert engine.nbytes == 0
    assert IncrementalFeatures(compiled=False).count.shape == (8,)  # the default


# --- slots and bar counts ----------------------------------------------------------------------


def test_slot_of_numbers_new_symbols_in_order_and_keeps_known_ones() -> None:
    engine = _engine(8)
    got = engine.slot_of(["ZZ", "AA", "MM"])
    assert got.dtype == np.int64 and got.tolist() == [0, 1, 2]
    again = engine.slot_of(["MM", "new", "ZZ", "new"])
    assert again.dtype == np.int64 and again.tolist() == [2, 3, 0, 3]
    assert engine.slots == {"ZZ": 0, "AA": 1, "MM": 2, "new": 3}
    empty = engine.slot_of([])
    assert empty.dtype == np.int64 and empty.shape == (0,)


def test_capacity_grows_only_when_full_and_at_least_doubles() -> None:
    engine = _engine(1)
    engine.slot_of(["a"])
    assert engine.count.shape == (1,)  # exactly full: no growth
    engine.slot_of(["b"])
    assert engine.count.shape == (2,)  # doubled
    engine.slot_of(["c"])
    assert engine.count.shape == (4,)
    engine.slot_of(["d"])
    assert engine.count.shape == (4,)
    engine.slot_of([f"s{i}" for i in range(6)])  # 10 needed: more than double
    assert engine.count.shape == (10,)


def test_growing_keeps_the_state_and_the_dtypes() -> None:
    values, session = _bars(5, 1)
    engine = _engine(1)
    slot = engine.slot_of(["A"])
    _run(engine, slot, values, session, 0, 5)
    before = {k: v.copy() for k, v in engine.state_dict().items()}
    slots = engine.slot_of(["B", "C", "D"])
    assert slots.tolist() == [1, 2, 3]
    cap = 4
    assert engine.count.shape == (cap,) and engine.count.dtype == np.int64
    assert engine.session.shape == (cap,) and engine.session.dtype == np.int64
    assert engine.ring.shape == (cap, len(w.SERIES), w.RING) and engine.ring.dtype == np.float64
    assert engine.packed.shape == (cap, sum(WIDTHS.values()))
    assert engine.count.tolist() == [5, 0, 0, 0]
    assert engine.session.tolist() == [int(session[4, 0]), 0, 0, 0]
    assert np.isnan(engine.ring[1:]).all()
    assert not engine.packed[1:].any()
    after = engine.state_dict()
    np.testing.assert_array_equal(after["ring"][:1], before["ring"])
    for k in WIDTHS:
        np.testing.assert_array_equal(after[f"state.{k}"][:1], before[f"state.{k}"])
        assert engine.state[k].base is engine.packed or engine.state[k].base is engine.packed.base


def test_bars_counts_each_symbol_and_is_zero_for_unknown_ones() -> None:
    values, session = _bars(4, 2)
    engine = _engine(4)
    assert engine.bars("A") == 0
    slots = engine.slot_of(["A", "B"])
    assert engine.bars("A") == 0 and engine.bars("B") == 0
    _run(engine, slots, values, session, 0, 3)
    engine.step(slots[1:], values[3, 1:], session[3, 1:])
    assert engine.bars("A") == 3
    assert engine.bars("B") == 4
    assert type(engine.bars("B")) is int
    assert engine.bars("never seen") == 0
    assert "never seen" not in engine.slots


# --- step -------------------------------------------------------------------------------------


def test_step_returns_one_row_per_slot_and_advances_only_those() -> None:
    values, session = _bars(2, 3)
    engine = _engine(4)
    slots = engine.slot_of(["A", "B", "C"])
    out = engine.step(slots[[2, 0]], values[0, [2, 0]], session[0, [2, 0]])
    assert out.shape == (2, 210) and out.dtype == np.float64
    assert [engine.bars(s) for s in "ABC"] == [1, 0, 1]
    assert engine.session.tolist() == [session[0, 0], 0, session[0, 2], 0]
    assert np.isnan(engine.ring[1]).all() and not engine.packed[1].any()


def test_the_ring_holds_the_latest_values_newest_last() -> None:
    n = 5
    values, session = _bars(n, 1)
    engine = _engine(1)
    slots = engine.slot_of(["A"])
    _run(engine, slots, values, session, 0, n)
    ring = engine.state_dict()["ring"][0]
    close = values[:, 0, 3]
    assert np.isnan(ring[:, : w.RING - n]).all()
    np.testing.assert_array_equal(ring[w.IX["close"], -n:], close)
    np.testing.assert_array_equal(ring[w.IX["volume"], -n:], values[:, 0, 4])
    r1 = ring[w.IX["r1"], -n:]
    assert np.isnan(r1[0])  # a symbol's first bar has no return
    np.testing.assert_allclose(r1[1:], np.diff(np.log(close)), rtol=1e-12)


def test_skipping_the_features_advances_the_same_state() -> None:
    values, session = _bars(N_BARS, 2)
    full, quick = _engine(4), _engine(4)
    slots = full.slot_of(["A", "B"])
    quick.slot_of(["A", "B"])
    out_full = _run(full, slots, values, session, 0, N_BARS - 20)
    for i in range(N_BARS - 20):
        assert quick.step(slots, values[i], session[i], features=False) is None
    assert quick.bars("A") == quick.bars("B") == N_BARS - 20
    assert len(out_full) == N_BARS - 20
    a, b = full.state_dict(), quick.state_dict()
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    tail_full = _run(full, slots, values, session, N_BARS - 20, N_BARS)
    tail_quick = _run(quick, slots, values, session, N_BARS - 20, N_BARS)
    np.testing.assert_array_equal(np.stack(tail_full), np.stack(tail_quick))
    assert np.isfinite(tail_full[-1]).all()


def test_skipping_the_features_leaves_other_slots_alone() -> None:
    values, session = _bars(3, 2)
    engine = _engine(2)
    slots = engine.slot_of(["A", "B"])
    engine.step(slots[:1], values[0, :1], session[0, :1], features=False)
    engine.step(slots[:1], values[1, :1], session[1, :1], features=False, derived=False)
    assert engine.bars("A") == 2 and engine.bars("B") == 0
    assert engine.session.tolist() == [session[1, 0], 0]
    assert np.isnan(engine.ring[1]).all() and not engine.packed[1].any()
    assert np.isnan(engine.ring[0, w.DERIVED, -1]).all()  # not derived: NaN


def test_the_numpy_step_silences_its_own_float_errors() -> None:
    """Flat bars without volume divide 0 by 0, and a walk that turns flat divides x by 0
    (a ratio of windows whose spread vanished): the step must not raise even where numpy is
    set to raise."""
    n = 170
    flat = np.full((n, 5), 50.0)
    flat[:, 4] = 0.0
    walk = _bars(n, 1)[0][:, 0]
    walk[150:, :4] = walk[150, 3]
    walk[150:, 4] = 0.0
    values = np.stack([flat, walk], axis=1)
    session = np.zeros((n, 2), np.int64)
    engine = _engine(2)
    slots = engine.slot_of(["flat", "walk"])
    with np.errstate(all="raise"):
        out = _run(engine, slots, values, session, 0, n)
    assert len(out) == n and out[-1].shape == (2, 210)


# --- state_dict ------------------------------------------------------------------------------


def test_state_dict_has_exactly_the_documented_arrays() -> None:
    values, session = _bars(3, 2)
    engine = _engine(8)  # more slots than used: trimmed
    slots = engine.slot_of(["ZZ", "AA"])
    _run(engine, slots, values, session, 0, 3)
    state = engine.state_dict()
    assert list(state) == [
        "format",
        "symbols",
        "count",
        "session",
        "ring",
        *(f"state.{k}" for k in WIDTHS),
    ]
    assert state["format"].dtype == np.int64
    assert state["format"].tolist() == [FORMAT, w.RING, len(w.SERIES)]
    assert state["symbols"].dtype.kind == "U"
    assert state["symbols"].tolist() == ["ZZ", "AA"]  # slot order, not sorted
    assert state["count"].dtype == np.int64 and state["count"].tolist() == [3, 3]
    assert state["session"].dtype == np.int64
    assert state["session"].tolist() == session[2].tolist()
    assert state["ring"].dtype == np.float64
    assert state["ring"].shape == (2, len(w.SERIES), w.RING)
    for k, m in WIDTHS.items():
        assert state[f"state.{k}"].dtype == np.float64
        assert state[f"state.{k}"].shape == (2, m), k


def test_state_dict_of_an_empty_engine() -> None:
    state = _engine(4).state_dict()
    assert state["symbols"].dtype.kind == "U" and state["symbols"].shape == (0,)
    assert state["count"].shape == (0,) and state["count"].dtype == np.int64
    assert state["ring"].shape == (0, len(w.SERIES), w.RING)
    engine = _reload(state)
    assert engine.slots == {}
    assert engine.count.shape == (1,)
    assert engine.bars("A") == 0
    assert engine.slot_of(["A"]).tolist() == [0]


# --- from_state_dict ---------------------------------------------------------------------------


def test_a_reloaded_engine_continues_bit_identically() -> None:
    values, session = _bars(N_BARS, 3)
    names = ["ZZ", "AA", "MM"]
    straight, saved = _engine(1), _engine(1)
    slots = straight.slot_of(names)
    assert saved.slot_of(names).tolist() == slots.tolist()
    cut = 150
    _run(straight, slots, values, session, 0, cut)
    _run(saved, slots, values, session, 0, cut)
    engine = _reload(saved.state_dict())
    assert engine.slots == {"ZZ": 0, "AA": 1, "MM": 2}
    assert engine.count.shape == (3,)  # exactly the saved symbols
    assert [engine.bars(s) for s in names] == [cut] * 3
    assert engine.slot_of(names).tolist() == slots.tolist()
    again = engine.state_dict()
    for k, v in saved.state_dict().items():
        np.testing.assert_array_equal(again[k], v, err_msg=k)
        assert again[k].dtype == v.dtype, k
    a = np.stack(_run(straight, slots, values, session, cut, N_BARS))
    b = np.stack(_run(engine, slots, values, session, cut, N_BARS))
    np.testing.assert_array_equal(a, b)
    assert np.isfinite(b[-1]).all()
    assert [engine.bars(s) for s in names] == [N_BARS] * 3
    for k, v in straight.state_dict().items():
        np.testing.assert_array_equal(engine.state_dict()[k], v, err_msg=k)


def test_a_format_1_state_loads_and_continues() -> None:
    """Format 1 also held the Bollinger sums of squares (``state.bb_sum2``), which the
    deviation no longer reads: such a state loads, the key ignored, and steps on as the
    engine it was saved from."""
    values, session = _bars(N_BARS, 2)
    straight, saved = _engine(), _engine()
    slots = straight.slot_of(["A", "B"])
    saved.slot_of(["A", "B"])
    _run(straight, slots, values, session, 0, 150)
    _run(saved, slots, values, session, 0, 150)
    old = saved.state_dict()
    assert "state.bb_sum2" not in old
    old["format"] = np.array([1, w.RING, len(w.SERIES)], np.int64)
    old["state.bb_sum2"] = np.full_like(old["state.bb_sum"], 7.0)  # any: not read
    engine = _reload(old)
    assert engine.state_dict()["format"].tolist() == [FORMAT, w.RING, len(w.SERIES)]
    a = np.stack(_run(straight, slots, values, session, 150, N_BARS))
    b = np.stack(_run(engine, slots, values, session, 150, N_BARS))
    np.testing.assert_array_equal(a, b)
    old["format"] = np.array([1, w.RING + 1, len(w.SERIES)], np.int64)
    with pytest.raises(ValueError, match=r"^feature state format \[1, "):
        _reload(old)


def test_a_reloaded_engine_takes_new_symbols() -> None:
    values, session = _bars(4, 2)
    engine = _engine(8)
    slots = engine.slot_of(["A"])
    _run(engine, slots, values[:, :1], session[:, :1], 0, 4)
    back = _reload(engine.state_dict())
    assert back.count.shape == (1,)
    assert back.slot_of(["B", "A"]).tolist() == [1, 0]
    assert back.count.shape == (2,)
    assert back.count.tolist() == [4, 0]
    assert back.bars("A") == 4 and back.bars("B") == 0
    out = back.step(np.array([1]), values[0, 1:], session[0, 1:])
    assert out.shape == (1, 210) and back.bars("B") == 1 and back.bars("A") == 4


@pytest.mark.parametrize("at", [0, 1, 2])
def test_a_state_of_another_layout_is_refused(at: int) -> None:
    state = _engine().state_dict()
    expected = [FORMAT, w.RING, len(w.SERIES)]
    got = list(expected)
    got[at] += 1
    state["format"] = np.array(got, np.int64)
    message = f"feature state format {got}, expected {expected}"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        IncrementalFeatures.from_state_dict(state)


def test_a_state_with_a_missing_array_is_refused() -> None:
    values, session = _bars(2, 1)
    engine = _engine()
    slots = engine.slot_of(["A"])
    _run(engine, slots, values, session, 0, 2)
    for key in engine.state_dict():
        state = engine.state_dict()
        del state[key]
        with pytest.raises(KeyError):
            IncrementalFeatures.from_state_dict(state)


def test_a_state_whose_arrays_do_not_fit_its_symbols_is_refused() -> None:
    values, session = _bars(2, 2)
    engine = _engine()
    slots = engine.slot_of(["A", "B"])
    _run(engine, slots, values, session, 0, 2)
    for key in ("count", "session", "ring", "state.rsi_gain", "state.vwap"):
        state = engine.state_dict()
        state[key] = state[key][:1]  # one symbol's row for two symbols
        shape = tuple(engine.state_dict()[key].shape)
        message = (
            f"feature state: {key} has shape {(1, *shape[1:])}, expected {shape} for its 2 symbols"
        )
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            IncrementalFeatures.from_state_dict(state)
    state = engine.state_dict()
    state["state.bb_sum"] = state["state.bb_sum"][:, :1]  # another width
    with pytest.raises(ValueError, match=r"^feature state: state\.bb_sum has shape \(2, 1\)"):
        IncrementalFeatures.from_state_dict(state)


@pytest.mark.parametrize("compiled", [False, True] if HAS_NUMBA else [False])
def test_a_reloaded_state_runs_the_step_asked_for(
    compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KERNEL_ENV, raising=False)
    state = _engine().state_dict()
    assert IncrementalFeatures.from_state_dict(state, compiled=compiled).compiled is compiled
    assert IncrementalFeatures.from_state_dict(state).compiled is HAS_NUMBA  # as constructed
    monkeypatch.setenv(KERNEL_ENV, "numpy")
    assert IncrementalFeatures.from_state_dict(state).compiled is False


@pytest.mark.parametrize("compiled", [False, True] if HAS_NUMBA else [False])
def test_a_step_refuses_a_slot_given_twice_or_not_held(compiled: bool) -> None:
    values, session = _bars(2, 3)
    engine = IncrementalFeatures(compiled=compiled)
    slots = engine.slot_of(["A", "B"])
    before = engine.state_dict()
    for bad, why in (
        ([1, 1], r"^step: slots must be distinct, got \[1, 1\]$"),
        ([0, 2], r"^step: slots must be below the 2 held \(slot_of\), got \[0, 2\]$"),
        ([-1], r"^step: slots must be below the 2 held \(slot_of\), got \[-1\]$"),
    ):
        with pytest.raises(ValueError, match=why):
            engine.step(np.array(bad), values[0, : len(bad)], session[0, : len(bad)])
    after = engine.state_dict()
    assert all(
        np.array_equal(after[k], v, equal_nan=v.dtype.kind == "f") for k, v in before.items()
    )
    assert engine.step(slots, values[0, :2], session[0, :2]).shape == (2, 210)
    assert engine.step(slots[:0], values[0, :0], session[0, :0]).shape == (0, 210)
