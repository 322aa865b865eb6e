"""The live forecaster's per-symbol state (:mod:`foxhunt.infer.incremental.stream`) at its own
level, no trained model: the calendar rows it caches are the batch pipeline's known features,
the decoder times are the calendar's schedule after each symbol's last bar (across the daily
pause, a weekend and a holiday), a window is the one ``WindowDataset`` builds from the same
bars, symbols added later leave the others alone, and a saved state loads back exactly (or is
refused with the error ``Forecaster.restore`` turns into a ``DataError``)."""

from __future__ import annotations

import dataclasses
import importlib.util
import io
import json
from collections import Counter
from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest
import torch

from foxhunt.config import DataConfig
from foxhunt.data.features.table import FeatureSpec, compute_features, feature_spec
from foxhunt.data.market.bars_market import resolve_bars
from foxhunt.data.market.calendar import (
    infer_interval,
    known_features,
    project_bar_times_us,
    trading_date,
)
from foxhunt.data.pipeline import calendars_of, future_rows
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.data.sources.demo import demo_bars
from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.infer.incremental.engine import KERNEL_ENV, IncrementalFeatures, feature_names
from foxhunt.infer.incremental.stream import (
    AHEAD,
    FORMAT,
    LiveState,
    TimeRows,
    known_rows,
    supports,
)
from foxhunt.model.batch import TFTBatch

L, H = 8, 4
MIN5 = 300_000_000  # µs
SPEC = feature_spec(H, DataConfig(features="minimal"))
HAS_NUMBA = importlib.util.find_spec("numba") is not None


@pytest.fixture(autouse=True)
def _numpy_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every state here steps with the numpy kernel (no numba compilation in a fresh tree)."""
    monkeypatch.setenv(KERNEL_ENV, "numpy")


def _us(text: str) -> int:
    """µs since the epoch of a UTC ``YYYY-MM-DD HH:MM`` time."""
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()) * 1_000_000


def _series(ts_us: np.ndarray | list[int]) -> pl.Series:
    return pl.Series("ts", np.asarray(ts_us, np.int64)).cast(pl.Datetime("us", "UTC"))


def _calendar_rows(ts_us: np.ndarray | list[int], calendar: str) -> tuple[np.ndarray, np.ndarray]:
    """The batch table's float32 known features and the trading days of ``ts_us``."""
    frame = pl.DataFrame({"ts": _series(ts_us)})
    known = frame.select([e.cast(pl.Float32) for e in known_features(pl.col("ts"), calendar)])
    day = frame.select(trading_date(pl.col("ts"), calendar).cast(pl.Int64)).to_series()
    return known.to_numpy(), day.to_numpy()


def _scaler(spec: FeatureSpec = SPEC, seed: int = 0) -> ScalerParams:
    g = np.random.default_rng(seed)
    n = len(spec.inputs)
    return ScalerParams(
        columns=spec.inputs,
        mean=tuple(g.normal(size=n).tolist()),
        std=tuple(g.uniform(0.5, 2.0, size=n).tolist()),
        target_std=(1.0,) * spec.horizon,
    )


def _scaled(x: np.ndarray, scaler: ScalerParams, names: tuple[str, ...]) -> np.ndarray:
    """The dataset's scaling of float32 ``x`` (float64 arithmetic, float32 out)."""
    pos = [scaler.columns.index(n) for n in names]
    mean, std = np.array(scaler.mean)[pos], np.array(scaler.std)[pos]
    return ((x.astype(np.float32).astype(np.float64) - mean) / std).astype(np.float32)


def _state(calendars: dict[str, str], scaler: ScalerParams | None = None) -> LiveState:
    state = LiveState(SPEC, scaler or _scaler(), L, H)
    state.add_symbols({s: (c, (0.5, -1.0, 2.0, 0.0, 23.0)) for s, c in calendars.items()})
    return state


def _step(state: LiveState, symbol: str, times: list[int], *, features: bool = False) -> None:
    """Step ``symbol`` one bar at each of ``times`` (prices of no interest)."""
    cal = state.calendars[state.engine.slots[symbol]]
    for t in times:
        close = 100.0 + (t // MIN5) % 7
        values = np.array([[close, close + 1, close - 1, close, 10.0]])
        known, session = state.times.get(cal, np.array([t]))
        state.step([symbol], np.array([t]), values, session, known, features=features)


def _every(start: str, n: int, gap: int = MIN5) -> list[int]:
    return [_us(start) + k * gap for k in range(n)]


def _slots(state: LiveState, *symbols: str) -> np.ndarray:
    return np.array([state.engine.slots[s] for s in symbols], np.int64)


def _equal(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal arrays, NaN equal to NaN (an engine's empty ring entries are NaN)."""
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


def _same(a: torch.Tensor, b: torch.Tensor) -> None:
    """Equal shapes, dtypes and values, NaN where the other has NaN (early bars' features)."""
    assert a.dtype == b.dtype
    np.testing.assert_array_equal(a.numpy(), b.numpy())


# --- supports and the calendar rows ------------------------------------------------------------


def test_supports_the_built_in_sets_and_nothing_else() -> None:
    """Incremental inputs are the default or minimal observed set with the standard known and
    static inputs; any covariate or unknown observed name is not."""
    assert supports(feature_spec(H)) and supports(SPEC)
    assert not supports(dataclasses.replace(SPEC, historical=(*SPEC.historical, "obs__user_x")))
    assert not supports(dataclasses.replace(SPEC, historical=("obs__no_such_feature",)))
    assert not supports(dataclasses.replace(SPEC, known=(*SPEC.known, "known__user_event")))
    assert not supports(dataclasses.replace(SPEC, static=(*SPEC.static, "static__user_beta")))


TIMES = [
    _us("2024-01-10 21:55"),  # Wednesday 15:55 CT: the last bar before the daily pause
    _us("2024-01-10 22:30"),  # in the pause: a new trading day on fx_24x5, not on globex
    _us("2024-01-10 23:30"),  # after the roll: the next trading day on globex, not on 24x7
    _us("2024-01-05 21:55"),  # Friday's last bar
    _us("2024-01-07 23:00"),  # Sunday's open
    _us("2024-07-04 16:55"),  # Independence Day: CME equity halts at 12:00 CT
    _us("2024-07-04 18:00"),
]
CALENDARS = ["globex", "cme_equity", "fx_24x5", "24x7"]


@pytest.mark.parametrize("calendar", CALENDARS)
def test_known_rows_are_the_batch_tables_known_features(calendar: str) -> None:
    """``known_rows`` gives (n, 10) float32 rows: the feature table's known columns of the
    times on the calendar named."""
    got = known_rows(_series(TIMES), calendar)
    want, _ = _calendar_rows(TIMES, calendar)
    assert got.dtype == np.float32 and got.shape == (len(TIMES), len(SPEC.known))
    np.testing.assert_array_equal(got, want)


def test_the_calendars_differ_on_these_times() -> None:
    """What makes the calendar-keyed checks here able to fail: each calendar gives other rows
    or other trading days than ``globex`` on :data:`TIMES`."""
    base_known, base_day = _calendar_rows(TIMES, "globex")
    for cal in CALENDARS[1:]:
        known, _ = _calendar_rows(TIMES, cal)
        assert not np.array_equal(known, base_known), cal
    for cal in ("fx_24x5", "24x7"):
        _, day = _calendar_rows(TIMES, cal)
        assert not np.array_equal(day, base_day), cal


def test_time_rows_are_the_calendar_rows_in_the_order_asked() -> None:
    """``TimeRows.get`` returns, in the order asked (repeats included), each time's float32
    known features and int64 trading day on its calendar; a cached time gives the same rows,
    and the same time on two calendars is two entries."""
    rows = TimeRows()
    order = np.array([TIMES[3], *TIMES, TIMES[0]], np.int64)
    for cal in CALENDARS:
        known, day = rows.get(cal, order)
        want_known, want_day = _calendar_rows(order, cal)
        assert known.dtype == np.float32 and day.dtype == np.int64
        assert known.shape == (len(order), len(SPEC.known)) and day.shape == (len(order),)
        np.testing.assert_array_equal(known, want_known)
        np.testing.assert_array_equal(day, want_day)
        again, again_day = rows.get(cal, order[::-1])  # all cached now
        np.testing.assert_array_equal(again, want_known[::-1])
        np.testing.assert_array_equal(again_day, want_day[::-1])
    assert len(rows._rows) == len(CALENDARS) * len(TIMES)


def test_an_empty_lookup_gives_empty_arrays_of_the_documented_dtypes() -> None:
    """No times: no rows, float32 features and int64 days, no error."""
    known, day = TimeRows().get("globex", np.empty(0, np.int64))
    assert known.dtype == np.float32 and known.ndim == 2 and known.shape[0] == 0
    assert day.dtype == np.int64 and day.shape == (0,)


def test_the_cache_fills_to_its_limit_then_starts_again() -> None:
    """The cache holds up to ``limit`` entries (100 000 by default): a lookup that would pass
    it empties it first; the rows stay right either way."""
    assert TimeRows().limit == 100_000
    rows = TimeRows(limit=4)
    rows.get("globex", np.array(TIMES[:2]))
    rows.get("globex", np.array(TIMES[2:4]))
    assert len(rows._rows) == 4  # exactly the limit: kept
    known, _ = rows.get("globex", np.array(TIMES[4:5]))
    assert len(rows._rows) == 1  # 5 > 4: emptied first
    np.testing.assert_array_equal(known, _calendar_rows(TIMES[4:5], "globex")[0])
    small = TimeRows(limit=3)
    small.get("globex", np.array(TIMES[:2]))
    small.get("globex", np.array(TIMES[2:4]))
    assert len(small._rows) == 2  # 2 + 2 > 3: emptied, then the two new ones


# --- what is held ------------------------------------------------------------------------------


def test_last_ts_is_none_until_a_symbols_first_bar() -> None:
    """A symbol registered but without bars, or never seen, has no last time; after bars it
    is the latest one."""
    state = _state({"ES": "globex", "NQ": "globex"})
    assert state.last_ts("ES") is None and state.last_ts("ZZ") is None
    times = _every("2024-01-10 14:00", 2)
    _step(state, "ES", times[:1])
    assert state.last_ts("ES") == times[0] and state.last_ts("NQ") is None
    _step(state, "ES", times[1:])
    assert state.last_ts("ES") == times[1]


def test_the_saved_arrays_have_the_documented_dtypes() -> None:
    """Times and gap counts are int64, inputs float32, closes float64, with or without bars
    (a state with no gap yet saves an empty (0, 3) int64 gap table)."""
    state = _state({"ES": "globex", "NQ": "cme_equity"})
    want = {
        "hist": np.float32,
        "known": np.float32,
        "ts": np.int64,
        "static": np.float32,
        "close": np.float64,
        "gaps": np.int64,
    }
    d = state.state_dict()
    assert {k: d[k].dtype for k in want} == want
    assert d["gaps"].shape == (0, 3)
    _step(state, "ES", _every("2024-01-10 14:00", 3))
    d = state.state_dict()
    assert {k: d[k].dtype for k in want} == want
    assert d["ts"].shape == (2, L) and d["static"].shape == (2, len(SPEC.static))


def test_the_gap_counts_are_the_positive_gaps_between_consecutive_bars() -> None:
    """Each symbol counts every gap between its consecutive bars once (none before its first
    bar), and its interval is their mode, ties to the smaller, as ``infer_interval`` takes
    it: the decoder steps by it."""
    state = _state({"ES": "globex", "NQ": "globex"})
    t0 = _us("2024-01-10 14:00")
    es = [t0, t0 + 2 * MIN5, t0 + 4 * MIN5, t0 + 6 * MIN5, t0 + 7 * MIN5]  # 10, 10, 10, 5 min
    nq = [t0, t0 + 4 * MIN5, t0 + 6 * MIN5]  # 20 then 10 min: a tie
    _step(state, "ES", es)
    _step(state, "NQ", nq)
    saved = {tuple(r) for r in state.state_dict()["gaps"].tolist()}
    assert saved == {(0, 2 * MIN5, 3), (0, MIN5, 1), (1, 4 * MIN5, 1), (1, 2 * MIN5, 1)}
    for sym, times in (("ES", es), ("NQ", nq)):
        iv = infer_interval(_series(times)) // timedelta(microseconds=1)
        assert iv == 2 * MIN5  # the mode (ES), the smaller of a tie (NQ)
        got = state.decoder_times(_slots(state, sym))
        np.testing.assert_array_equal(got[0], project_bar_times_us(np.array([times[-1]]), H, iv)[0])


# --- the decoder's times -----------------------------------------------------------------------


def test_decoder_times_are_the_calendars_schedule_after_each_last_bar() -> None:
    """(B, H) int64 times: from Friday's 15:45 CT bar Globex resumes Sunday 17:00 CT, 24x7
    goes on; from Wednesday's 15:45 CT bar Globex skips the daily pause; on July 4th CME
    equity skips its holiday halt, which Globex does not know."""
    state = _state({"FRI": "globex", "WED": "globex", "CRY": "24x7", "JUL": "cme_equity"})
    last = {
        "FRI": "2024-01-05 21:25",
        "WED": "2024-01-10 21:25",
        "CRY": "2024-01-05 21:25",
        "JUL": "2024-07-04 16:25",
    }
    for sym, start in last.items():
        _step(state, sym, _every(start, 5))
    syms = list(last)
    got = state.decoder_times(_slots(state, *syms))
    assert got.dtype == np.int64 and got.shape == (len(syms), H)
    expected = {
        "FRI": ["2024-01-05 21:50", "2024-01-05 21:55", "2024-01-07 23:00", "2024-01-07 23:05"],
        "WED": ["2024-01-10 21:50", "2024-01-10 21:55", "2024-01-10 23:00", "2024-01-10 23:05"],
        "CRY": ["2024-01-05 21:50", "2024-01-05 21:55", "2024-01-05 22:00", "2024-01-05 22:05"],
        "JUL": ["2024-07-04 16:50", "2024-07-04 16:55", "2024-07-04 22:00", "2024-07-04 22:05"],
    }
    for i, sym in enumerate(syms):
        assert got[i].tolist() == [_us(t) for t in expected[sym]], sym
    # and the batch's decoder rows are those times' known features
    batch = state.batch(syms)
    scaler = _scaler()
    for i, sym in enumerate(syms):
        known, _ = _calendar_rows(got[i], state.calendars[state.engine.slots[sym]])
        np.testing.assert_array_equal(
            batch.known[i, L:].numpy(), _scaled(known, scaler, SPEC.known)
        )


def test_a_kept_projection_serves_only_bars_on_its_schedule() -> None:
    """Whatever the bars do (on the projected schedule, off it, past the projection, or with
    a new modal interval), the decoder times are the schedule projected from the last bar
    with the interval of all the bars so far."""
    state = _state({"ES": "globex"})
    slot = _slots(state, "ES")
    t0 = _us("2024-01-10 14:00")
    times = [t0, t0 + 4 * MIN5, t0 + 6 * MIN5]  # 20 then 10 minutes: interval 10

    def check() -> None:
        iv = infer_interval(_series(times)) // timedelta(microseconds=1)
        want = project_bar_times_us(np.array([times[-1]]), H, iv, "globex")
        np.testing.assert_array_equal(state.decoder_times(slot), want)

    _step(state, "ES", times)
    check()
    for t in (
        times[-1] + 2 * MIN5,  # on the schedule: the kept projection
        times[-1] + 2 * MIN5 + 60_000_000,  # 11 minutes: off it
        times[-1] + 2 * MIN5 + 60_000_000 + 2 * MIN5,  # on the new one
        times[-1] + 2 * MIN5 + 60_000_000 + 2 * MIN5 + 86_400_000_000,  # a day on: past it
    ):
        times.append(t)
        _step(state, "ES", [t])
        check()
    # a bar on the 10-minute schedule that makes 20 minutes the mode: projected again
    other = _state({"NQ": "globex"})
    t = [t0, t0 + 4 * MIN5, t0 + 6 * MIN5]
    _step(other, "NQ", t)
    assert other.decoder_times(_slots(other, "NQ"))[0, 0] == t[-1] + 2 * MIN5
    t.append(t[-1] + 4 * MIN5)  # gaps 20, 10, 20: 20 minutes now
    _step(other, "NQ", t[-1:])
    want = project_bar_times_us(np.array([t[-1]]), H, 4 * MIN5, "globex")
    np.testing.assert_array_equal(other.decoder_times(_slots(other, "NQ")), want)


def test_known_ahead_is_the_scaled_calendar_rows_of_the_kept_projection() -> None:
    """Before any projection every row is NaN; after one, row 0 is the last bar's known
    inputs and rows 1..AHEAD those of the projected times, scaled; a bar on the schedule
    uses one up (its last row NaN again)."""
    scaler = _scaler(seed=3)
    state = _state({"ES": "cme_equity"}, scaler)
    slot = _slots(state, "ES")
    times = _every("2024-07-03 20:00", 4)
    _step(state, "ES", times)
    assert np.isnan(state.known_ahead(slot)).all()
    state.decoder_times(slot)
    got = state.known_ahead(slot)
    assert got.dtype == np.float32 and got.shape == (1, AHEAD + 1, len(SPEC.known))
    ahead = project_bar_times_us(np.array([times[-1]]), AHEAD, MIN5, "cme_equity")[0]
    want, _ = _calendar_rows([times[-1], *ahead], "cme_equity")
    np.testing.assert_array_equal(got[0], _scaled(want, scaler, SPEC.known))
    _step(state, "ES", [int(ahead[0])])
    state.decoder_times(slot)
    got = state.known_ahead(slot)
    np.testing.assert_array_equal(got[0, :AHEAD], _scaled(want[1:], scaler, SPEC.known))
    assert np.isnan(got[0, AHEAD]).all()


# --- windows -----------------------------------------------------------------------------------


def _engine_features(bars: pl.DataFrame, symbol: str, calendar: str) -> np.ndarray:
    """(n, V_h) float32 observed features of ``symbol``'s bars by a separate engine."""
    engine = IncrementalFeatures(compiled=False)
    slot = engine.slot_of([symbol])
    cols = [feature_names().index(n) for n in SPEC.historical]
    part = bars.filter(pl.col("symbol") == symbol)
    ts = part["ts"].dt.epoch("us").to_numpy()
    _, session = TimeRows().get(calendar, ts)
    values = part.select("open", "high", "low", "close", "volume").to_numpy().astype(np.float64)
    out = [engine.step(slot, values[i : i + 1], session[i : i + 1]) for i in range(len(ts))]
    return np.concatenate(out)[:, cols].astype(np.float32)


def _feed(state: LiveState, bars: pl.DataFrame, symbols: list[str]) -> None:
    """Step each bar time's bars together, as the forecaster's update does."""
    for _, part in bars.sort("ts").group_by("ts", maintain_order=True):
        syms = [s for s in part["symbol"].to_list() if s in symbols]
        if not syms:
            continue
        part = part.filter(pl.col("symbol").is_in(syms))
        ts = part["ts"].dt.epoch("us").to_numpy()
        known, session = [], []
        for s, one in zip(syms, ts, strict=True):
            k, d = state.times.get(state.calendars[state.engine.slots[s]], np.array([one]))
            known.append(k)
            session.append(d)
        values = part.select("open", "high", "low", "close", "volume").to_numpy()
        state.step(
            syms, ts, values.astype(np.float64), np.concatenate(session), np.concatenate(known)
        )


def test_a_bars_observed_inputs_are_its_float32_features_scaled_in_the_ring() -> None:
    """Stepped with the defaults, each bar's observed inputs are the engine's features rounded
    to float32 (as the feature table holds them) and then scaled, at ring row ``b mod L``; the
    batch reads the last L of them oldest first."""
    scaler = _scaler(seed=5)
    bars = demo_bars(3 * L + 3, seed=5, symbol="ES", start="2024-01-10")
    state = _state({"ES": "globex"}, scaler)
    _feed(state, bars, ["ES"])
    raw = _engine_features(bars, "ES", "globex")
    n = len(raw)
    want = _scaled(raw, scaler, SPEC.historical)
    slot = state.engine.slots["ES"]
    for b in range(n - L, n):
        np.testing.assert_array_equal(state.hist[slot, b % L], want[b])
    np.testing.assert_array_equal(state.batch(["ES"]).historical[0].numpy(), want[n - L :])


def test_every_default_feature_is_stepped_with_its_windowed_series() -> None:
    """With the default set (its percentile ranks and stochastics read windowed series that
    only a ``derived`` step computes), a bar stepped with the defaults holds the features of
    an engine stepped with its own defaults."""
    spec = feature_spec(H)
    scaler = _scaler(spec, seed=13)
    bars = demo_bars(40, seed=13, symbol="ES", start="2024-01-10")
    state = LiveState(spec, scaler, L, H)
    state.add_symbols({"ES": ("globex", (0.5, -1.0, 2.0, 0.0, 23.0))})
    _feed(state, bars, ["ES"])
    engine = IncrementalFeatures(compiled=False)
    slot = engine.slot_of(["ES"])
    ts = bars["ts"].dt.epoch("us").to_numpy()
    _, session = TimeRows().get("globex", ts)
    values = bars.select("open", "high", "low", "close", "volume").to_numpy().astype(np.float64)
    out = [engine.step(slot, values[i : i + 1], session[i : i + 1]) for i in range(len(ts))]
    want = _scaled(np.concatenate(out)[-L:].astype(np.float32), scaler, spec.historical)
    got = state.batch(["ES"]).historical[0].numpy()
    np.testing.assert_array_equal(got, want)
    assert np.isfinite(got[-1]).sum() > len(SPEC.historical)


def _window_batch(bars: pl.DataFrame, instruments: dict, scaler: ScalerParams) -> TFTBatch:
    """The batch path's last window of each symbol (what ``Forecaster._forecast`` builds)."""
    feats = compute_features(
        bars, H, with_targets=False, instruments=instruments, inputs=DataConfig(features="minimal")
    )
    columns = ["ts", "symbol", *SPEC.inputs]
    recent = feats.group_by("symbol", maintain_order=True).tail(L).select(columns)
    calendars = calendars_of(instruments)
    future = future_rows(bars, SPEC, H, columns, calendars)
    frame = pl.concat([recent, future.cast(recent.schema)], how="vertical").sort(  # type: ignore[arg-type]
        ["symbol", "ts"], maintain_order=True
    )
    windows = WindowDataset(
        frame, SPEC, L, H, with_target=False, scaler=scaler, calendars=calendars
    )
    return windows.batch(list(range(len(windows))))


@pytest.mark.slow  # computes the batch features of the whole history (7 s)
def test_the_window_equals_the_window_datasets_before_a_weekend() -> None:
    """Two symbols on CME equity, their last bars on Friday afternoon: the live batch is the
    ``WindowDataset`` batch of the same bars (observed inputs to float32 rounding, known and
    static inputs exactly, the decoder across the weekend), whichever order it is asked in."""
    scaler = _scaler(seed=7)
    bars = pl.concat(
        [
            demo_bars(262, seed=7, symbol="ES", start="2024-01-05"),
            demo_bars(266, seed=8, symbol="NQ", start="2024-01-05"),
        ]
    ).sort(["symbol", "ts"])
    instruments = resolve_bars(bars, None)
    state = LiveState(SPEC, scaler, L, H)
    state.add_symbols({s: (i.calendar, i.static_values()) for s, i in instruments.items()})
    _feed(state, bars, ["ES", "NQ"])
    want = _window_batch(bars, instruments, scaler)
    got = state.batch(["ES", "NQ"])
    assert torch.equal(got.static, want.static)
    assert torch.equal(got.known, want.known)
    torch.testing.assert_close(got.historical, want.historical, rtol=1e-4, atol=1e-4)
    flipped = state.batch(["NQ", "ES"])
    _same(flipped.historical, got.historical.flip(0))
    assert torch.equal(flipped.known, got.known.flip(0))
    assert got.target is None


def test_a_symbol_added_later_changes_nothing_held_for_the_others() -> None:
    """Registering and stepping a new symbol leaves an earlier symbol's window, decoder and
    kept projection as they were; each symbol's window is the same alone or batched."""
    state = _state({"ES": "globex"})
    _step(state, "ES", _every("2024-01-10 14:00", L + 3), features=True)
    before = state.batch(["ES"])
    es = _slots(state, "ES")
    ahead = state.known_ahead(es)
    assert np.isfinite(ahead).all()
    state.add_symbols({"NQ": ("24x7", (1.0, 2.0, 3.0, 4.0, 5.0))})
    assert state.last_ts("NQ") is None
    np.testing.assert_array_equal(state.known_ahead(es), ahead)
    _step(state, "NQ", _every("2024-01-10 15:00", L + 1), features=True)
    after = state.batch(["ES", "NQ"])
    for name in ("static", "historical", "known"):
        _same(getattr(after, name)[:1], getattr(before, name))
    alone = state.batch(["NQ"])
    for name in ("static", "historical", "known"):
        _same(getattr(after, name)[1:], getattr(alone, name))
    np.testing.assert_array_equal(state.known_ahead(es), ahead)


# --- persistence -------------------------------------------------------------------------------


def _filled(scaler: ScalerParams | None = None) -> LiveState:
    """Two symbols on two calendars, each with more than L bars (the rings wrapped)."""
    state = _state({"ES": "cme_equity", "BTC": "24x7"}, scaler)
    _step(state, "ES", _every("2024-01-10 14:00", L + 3), features=True)
    _step(state, "BTC", _every("2024-01-10 14:00", 2 * L + 5, 2 * MIN5), features=True)
    state.decoder_times(_slots(state, "ES", "BTC"))
    return state


def _npz(d: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``d`` through ``np.savez`` and ``np.load`` (no pickle), as the forecaster saves it."""
    buf = io.BytesIO()
    np.savez(buf, **d)  # type: ignore[arg-type]
    buf.seek(0)
    with np.load(buf, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def test_a_saved_state_loads_back_exactly_and_goes_on_alike() -> None:
    """A state saved and loaded (through an npz file) into a fresh one holds every array,
    calendar and gap count it held, projects nothing yet, and then forecasts and steps as the
    original does."""
    state = _filled()
    saved = state.state_dict()
    other = LiveState(SPEC, _scaler(), L, H)
    other.load_state_dict(_npz(saved))
    again = other.state_dict()
    assert saved.keys() == again.keys()
    for k, v in saved.items():
        assert again[k].dtype == v.dtype and _equal(again[k], v), k
    assert other.symbols == state.symbols and other.calendars == state.calendars
    assert other.gaps == state.gaps
    slots = _slots(other, "ES", "BTC")
    assert np.isnan(other.known_ahead(slots)).all()  # projected again when needed
    for a, b in ((state.batch(["ES", "BTC"]), other.batch(["ES", "BTC"])),):
        for name in ("static", "historical", "known"):
            _same(getattr(a, name), getattr(b, name))
    np.testing.assert_array_equal(other.known_ahead(slots), state.known_ahead(slots))
    more = _every("2024-01-10 14:55", 2)
    for s in (state, other):
        _step(s, "ES", more, features=True)
    a, b = state.batch(["ES", "BTC"]), other.batch(["ES", "BTC"])
    _same(a.historical, b.historical)
    _same(a.known, b.known)


def _format_1(state: LiveState, raw: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``state`` saved as format 1 did: known inputs unscaled, observed ones unscaled and
    shifted oldest first (``raw``: symbol -> every bar's float32 observed features)."""
    d = dict(state.state_dict())
    meta = json.loads(str(d["meta"]))
    meta["format"] = 1
    d["meta"] = np.array(json.dumps(meta))
    hist = np.empty_like(d["hist"])
    known = np.empty_like(d["known"])
    for sym, slot in state.engine.slots.items():
        hist[slot] = raw[sym][-L:]
        known[slot], _ = state.times.get(state.calendars[slot], state.ts[slot])
    d["hist"], d["known"] = hist, known
    return d


def test_a_format_1_state_is_scaled_and_put_in_the_ring_on_loading() -> None:
    """A format-1 state (unscaled, observed window oldest first) loads as the format-2 state
    of the same bars: scaled, each bar at ring row ``b mod L``."""
    scaler = _scaler(seed=11)
    bars = pl.concat(
        [
            demo_bars(L + 5, seed=11, symbol="ES", start="2024-01-10"),
            demo_bars(2 * L + 3, seed=12, symbol="NQ", start="2024-01-10"),
        ]
    )
    state = _state({"ES": "globex", "NQ": "globex"}, scaler)
    _feed(state, bars, ["ES", "NQ"])
    raw = {s: _engine_features(bars, s, "globex") for s in ("ES", "NQ")}
    old = _format_1(state, raw)
    loaded = LiveState(SPEC, scaler, L, H)
    loaded.load_state_dict(old)
    np.testing.assert_array_equal(loaded.hist, state.hist)
    np.testing.assert_array_equal(loaded.known, state.known)
    np.testing.assert_array_equal(loaded.ts, state.ts)
    a, b = state.batch(["ES", "NQ"]), loaded.batch(["ES", "NQ"])
    _same(a.historical, b.historical)
    _same(a.known, b.known)


def _with_meta(d: dict[str, np.ndarray], **change: object) -> dict[str, np.ndarray]:
    meta = json.loads(str(d["meta"])) | change
    return d | {"meta": np.array(json.dumps(meta))}


def test_a_state_of_another_format_or_model_is_refused_and_changes_nothing() -> None:
    """Another format, another L, H or input spec, symbols that are not the feature state's,
    or a missing array raise ``ValueError``/``KeyError`` (what ``Forecaster.restore`` reports
    as a ``DataError``) with the documented message; the receiving state is untouched."""
    saved = _filled().state_dict()
    state = _state({"YM": "globex"})
    _step(state, "YM", _every("2024-01-10 14:00", 3))
    held = state.state_dict()
    with pytest.raises(ValueError, match=rf"^stream state format 3, expected {FORMAT}$"):
        state.load_state_dict(_with_meta(saved, format=3))
    no_format = json.loads(str(saved["meta"]))
    del no_format["format"]
    with pytest.raises(ValueError, match=rf"^stream state format None, expected {FORMAT}$"):
        state.load_state_dict(saved | {"meta": np.array(json.dumps(no_format))})
    other = "^the stream state was saved for another model's inputs$"
    for change in (
        {"L": L + 1},
        {"H": H + 1},
        {"spec": feature_spec(H).to_dict()},
    ):
        with pytest.raises(ValueError, match=other):
            state.load_state_dict(_with_meta(saved, **change))
    with pytest.raises(ValueError, match="^the stream state's symbols do not match its feature "):
        state.load_state_dict(_with_meta(saved, symbols=["BTC", "ES"]))
    with pytest.raises(KeyError):
        state.load_state_dict({k: v for k, v in saved.items() if k != "meta"})
    now = state.state_dict()
    for k, v in held.items():
        assert _equal(now[k], v), k
    assert state.symbols == ("YM",)


@pytest.mark.skipif(not HAS_NUMBA, reason="without numba every state steps with numpy")
def test_a_loaded_state_keeps_the_receivers_feature_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """A state made to step with the numpy kernel keeps it after loading a saved state, even
    where the compiled kernel is now the default."""
    saved = _filled().state_dict()
    state = LiveState(SPEC, _scaler(), L, H)
    assert state.engine.compiled is False
    monkeypatch.delenv(KERNEL_ENV)
    state.load_state_dict(saved)
    assert state.engine.compiled is False


def test_gap_counts_survive_the_round_trip_as_counters() -> None:
    """The loaded gap counts are the saved ones, per slot."""
    state = _filled()
    other = LiveState(SPEC, _scaler(), L, H)
    other.load_state_dict(state.state_dict())
    assert other.gaps == [Counter({MIN5: L + 2}), Counter({2 * MIN5: 2 * L + 4})]
