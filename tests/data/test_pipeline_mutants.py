"""What :mod:`foxhunt.data.pipeline` does with what it is given (mutation survivors,
runs/mutate/data.pipeline): the windows ``evaluate`` scores in every ``--windows`` scope, the
scaler comparison, and what the ``prepare_*`` functions pass on (the user's instruments and their
calendar, covariate inputs, spill folders, zones, outliers).

One small run on demo bars serves every test: 850 ES bars, encoder 16, horizon 5, an observed
covariate ``extra`` and an instrument table that gives ES a tick of 0.5 and the ``24x7`` calendar
(not the built-in ES: tick 0.25, ``cme_equity``). Under ``24x7`` the demo bars' daily halts are
gaps, so windows whose next H bars cross one get their decoder inputs from the calendar
(``WindowDataset.calendar_windows``): a count that shows which calendar reached the windows.
The static features of ES are constant, so scaled with the run's scaler they are 0 only when
computed from the user's instrument.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import torch

from foxhunt.artifacts.data_end import data_end
from foxhunt.config import DataConfig, RunConfig, TFTConfig
from foxhunt.data.features.inputs import read_run_bars, with_input_shape
from foxhunt.data.features.table import feature_spec
from foxhunt.data.market.calendar import known_features
from foxhunt.data.market.instrument import Instrument
from foxhunt.data.pipeline import (
    _feature_splits,
    _same_scaler,
    evaluation_data,
    evaluation_windows,
    future_rows,
    prepare_inference_data,
    prepare_training_data,
    run_instruments,
    split_cut,
    windows_of_test_split,
)
from foxhunt.data.prepared import PreparedData
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.data.sources.demo import demo_bars
from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.data.windows.row_files import host_tag
from foxhunt.data.windows.split_arrays import SplitCut
from foxhunt.errors import DataError, InputError, ModelDirError
from foxhunt.model.batch import TFTBatch

L, H = 16, 5
STEP = dt.timedelta(minutes=5)
CUSTOM = Instrument("ES", 0.5, 20.0, "USD", "equity_index", "24x7")
"""The user's ES: not the built-in one (tick 0.25, point value 50, ``cme_equity``)."""
END = "2024-01-05 00:45 UTC"
"""The training bars' end: bar 849, 21 bars into the fourth session (opened 23:00 UTC)."""
ARRAYS = ("historical", "known", "static", "target")
PIPELINE_LOG = "foxhunt.data.pipeline"

# Window counts (stride 1, with targets): n bars - warm-up 200 - 2 x H - L + 1.
N_TRAIN_WINDOWS = 850 - 200 - 2 * H - L + 1  # 625, origins bars 215..839: all before the end
N_LATER_WINDOWS = 1100 - 200 - 2 * H - L + 1  # 875, origins bars 215..1089
N_LATER_INSIDE = 849 - 215  # 634: origins bars 215..848 are before the end (bar 849)
N_LATER_NEW = N_LATER_WINDOWS - N_LATER_INSIDE  # 241
N_AFTER_WINDOWS = 300 - 200 - 2 * H - L + 1  # 75, all after the end
# Test split of 850 bars: 645 rows after warm-up and targets, 603 after two embargoes of 21,
# 15 % of them (90 rows) make 90 - 21 + 1 windows.
N_TEST_WINDOWS = 70


@dataclass(frozen=True)
class World:
    """The shared run and the bar files evaluated with it."""

    cfg: RunConfig
    train: Path
    """850 ES bars: the run's training bars."""
    later: Path
    """1100 ES bars; the first 850 at the training bars' times."""
    earlier: Path
    """850 other ES bars (another seed) at the training bars' times: all before the end."""
    after: Path
    """300 ES bars from 2024-01-08: all after the end."""
    spiked: Path
    """``later`` with bar 400 at 50 times its prices: an outlier."""
    instruments: Path
    prepared: PreparedData
    ends: dict[str, dt.datetime]


def _bars(n: int, *, seed: int = 11, symbol: str = "ES", start: str = "2024-01-02") -> pl.DataFrame:
    return demo_bars(n, seed=seed, symbol=symbol, start=start).with_columns(
        (pl.int_range(pl.len()) % 7).cast(pl.Float64).alias("extra")
    )


def _spike(bars: pl.DataFrame, row: int) -> pl.DataFrame:
    at = pl.int_range(pl.len()) == row
    return bars.with_columns(
        pl.when(at).then(pl.col(c) * 50).otherwise(pl.col(c)).alias(c)
        for c in ("open", "high", "low", "close")
    )


def _cfg(**data: object) -> RunConfig:
    model = TFTConfig(hidden=8, n_heads=2, encoder_length=L, horizon=H)
    cfg = RunConfig(model=model, data=DataConfig(**data), preset="test")  # type: ignore[arg-type]
    return with_input_shape(cfg)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    root = tmp_path_factory.mktemp("pipeline_mutants")
    table = root / "instruments.csv"
    table.write_text(
        "root,tick_size,point_value,currency,asset_class,calendar\n"
        "ES,0.5,20,USD,equity_index,24x7\n"
    )
    paths = {
        name: root / f"ES_{name}.parquet" for name in ("train", "later", "earlier", "after", "sp")
    }
    _bars(850).write_parquet(paths["train"])
    later = _bars(1100)
    later.write_parquet(paths["later"])
    _bars(850, seed=12).write_parquet(paths["earlier"])
    _bars(300, seed=5, start="2024-01-08").write_parquet(paths["after"])
    _spike(later, 400).write_parquet(paths["sp"])
    cfg = _cfg(instruments=str(table), observed_cols=("extra",))
    prepared = prepare_training_data(paths["train"], cfg)
    ends = {s: dt.datetime.fromisoformat(t) for s, t in data_end(prepared.closes).items()}
    return World(
        cfg,
        paths["train"],
        paths["later"],
        paths["earlier"],
        paths["after"],
        paths["sp"],
        table,
        prepared,
        ends,
    )


def _evaluate(w: World, bars: Path, **kw: object) -> tuple[WindowDataset, str, pl.DataFrame]:
    p = w.prepared
    return evaluation_data(bars, w.cfg, p.spec, p.scaler, p.fingerprint, p.instruments, **kw)  # type: ignore[arg-type]


def _infer(w: World, bars: Path | pl.DataFrame, **kw: object) -> WindowDataset:
    p = w.prepared
    args: dict[str, object] = {"with_target": True, "instruments": p.instruments}
    args |= {"inputs": w.cfg.data, **kw}
    return prepare_inference_data(bars, p.spec, p.scaler, L, H, **args)  # type: ignore[arg-type]


def _frame(w: World, bars: Path) -> pl.DataFrame:
    frame, _ = read_run_bars(bars, w.cfg.data, min_bars=1, reason="test", allow_outliers=False)
    return frame


def _off_schedule(ds: WindowDataset, bars: Path) -> int:
    """Windows of ``ds`` (one symbol) whose next H bars are not each 5 minutes after the one
    before: under ``24x7`` the ones that cross a halt or weekend, whose decoder inputs the
    calendar gives."""
    ts = pl.read_parquet(bars)["ts"]
    crossing = ts.filter((ts.shift(-H) - ts) != H * STEP)
    return int(ds.origins()["ts"].is_in(crossing.implode()).sum())


def _all(ds: WindowDataset, start: int = 0, n: int | None = None) -> TFTBatch:
    return ds.batch(list(range(start, start + (len(ds) - start if n is None else n))))


def _assert_same_windows(got: WindowDataset, want: WindowDataset, start: int = 0) -> None:
    """``got``'s windows from ``start`` on are ``want``'s, array for array."""
    assert got.origins().slice(start, len(want)).equals(want.origins())
    a, b = _all(got, start, len(want)), _all(want)
    for name in ARRAYS:
        assert torch.equal(getattr(a, name), getattr(b, name)), name


def _static_of_custom(ds: WindowDataset) -> bool:
    """Whether every window's static inputs are the user's instrument's (0 once scaled)."""
    return bool(torch.allclose(_all(ds).static, torch.zeros(()), atol=1e-6))


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == PIPELINE_LOG]


# --- split_cut, run_instruments, _feature_splits ---------------------------------------------


def test_split_cut_takes_the_embargo_or_one_window_of_rows() -> None:
    assert split_cut(_cfg()) == SplitCut(0.15, 0.15, L + H, min_rows=L + H)
    got = split_cut(_cfg(embargo=7, val_fraction=0.2, test_fraction=0.1))
    assert got == SplitCut(0.2, 0.1, 7, min_rows=L + H)


def test_run_instruments_take_the_users_table_first(world: World) -> None:
    bars = pl.read_parquet(world.train)
    assert run_instruments(bars, world.cfg) == {"ES": CUSTOM}
    assert run_instruments(bars, _cfg())["ES"].calendar == "cme_equity"  # the built-in ES


def test_feature_splits_use_the_instruments_inputs_and_one_window_of_rows(world: World) -> None:
    frame = _frame(world, world.train)
    splits = _feature_splits(frame, world.cfg, world.prepared.instruments)
    assert "obs__user_extra" in splits.train.columns
    assert splits.test["static__log10_tick_size"].unique().to_list() == [
        pytest.approx(math.log10(0.5))
    ]
    # 315 bars: 110 rows, 15 for validation: enough for an embargo of 5, not for one window
    short = frame.head(315)
    cfg = world.cfg.replace(data={"embargo": 5})
    with pytest.raises(DataError, match=r"leave 15 for validation \(need >= 21; embargo 5 x2"):
        _feature_splits(short, cfg, world.prepared.instruments)


# --- prepare_training_data --------------------------------------------------------------------


def test_training_data_carry_spec_instruments_closes_and_interval(world: World) -> None:
    p = world.prepared
    assert p.spec == feature_spec(H, world.cfg.data) and "obs__user_extra" in p.spec.historical
    assert p.instruments == {"ES": CUSTOM}
    tick = p.scaler.columns.index("static__log10_tick_size")
    assert p.scaler.mean[tick] == pytest.approx(math.log10(0.5))
    assert p.closes.columns == ["symbol", "ts", "close"]
    assert p.closes.equals(pl.read_parquet(world.train).select("symbol", "ts", "close"))
    assert p.bar_interval_s == 300.0
    assert len(p.test) == N_TEST_WINDOWS
    # the decoder schedule follows the user's calendar (24x7: the halts are gaps)
    for ds in (p.train, p.test):
        assert ds.calendar_windows == _off_schedule(ds, world.train) > 0


def test_training_data_spill_their_window_arrays(world: World, tmp_path: Path) -> None:
    p = prepare_training_data(world.train, world.cfg, spill=tmp_path)
    for ds in (p.train, p.val, p.test):
        assert ds.mapped_arrays == ARRAYS
    _assert_same_windows(p.test, world.prepared.test)


def test_training_data_keep_outliers_only_when_the_config_says(world: World) -> None:
    with pytest.raises(DataError, match="50 times the median close"):
        prepare_training_data(world.spiked, world.cfg)
    kept = prepare_training_data(world.spiked, world.cfg.replace(data={"allow_outliers": True}))
    assert kept.closes.height == 1100


def test_training_data_name_the_bars_they_need(world: World, tmp_path: Path) -> None:
    path = tmp_path / "ES_short.parquet"
    _bars(220).write_parquet(path)
    from foxhunt.data.pipeline import split_cut
    from foxhunt.data.windows.splits import fewest_rows

    cut = split_cut(world.cfg)
    kw = {"val_fraction": cut.val_fraction, "test_fraction": cut.test_fraction}
    total = 200 + 5 + fewest_rows(cut.min_rows, embargo=cut.embargo, **kw)
    why = (
        r"has 220 bars; need at least 221 \(warm-up 200 \+ encoder 16 \+ horizon 5; training's "
        rf"splits need {total} bars in all\)"
    )
    with pytest.raises(DataError, match=why):
        prepare_training_data(path, world.cfg)


def test_a_feature_store_is_refused_with_covariates_and_by_inference(
    world: World, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (store / "manifest.json").write_text("{}")
    with pytest.raises(DataError, match="covariate columns pass the bars instead$"):
        prepare_training_data(store, world.cfg)
    with pytest.raises(DataError, match="only foxhunt train reads; pass the bars it was made from"):
        _infer(world, store)


# --- windows_of_test_split ----------------------------------------------------------------------


def test_test_split_equals_the_training_one_in_memory_and_in_files(
    world: World, tmp_path: Path
) -> None:
    p = world.prepared
    frame = _frame(world, world.train)
    whole, refit = windows_of_test_split(frame, world.cfg, p.instruments)
    assert whole.spec == p.spec and _same_scaler(refit, p.scaler)
    _assert_same_windows(whole, p.test)
    assert whole.calendar_windows == p.test.calendar_windows > 0
    # this process's own folder left from before: reused, then deleted
    (tmp_path / f".rows.{host_tag()}.{os.getpid()}").mkdir()
    files, refit = windows_of_test_split(frame, world.cfg, p.instruments, spill=tmp_path)
    assert files.spec == p.spec and _same_scaler(refit, p.scaler)
    assert files.mapped_arrays == ARRAYS and not list(tmp_path.iterdir())
    _assert_same_windows(files, p.test)
    assert files.calendar_windows == p.test.calendar_windows


# --- prepare_inference_data -----------------------------------------------------------------


def test_inference_windows_hold_the_training_test_split(world: World) -> None:
    p = world.prepared
    ds = _infer(world, world.train)
    assert len(ds) == N_TRAIN_WINDOWS
    first = ds.origins()["ts"].to_list().index(p.test.origins()["ts"][0])
    _assert_same_windows(ds, p.test, start=first)
    assert ds.calendar_windows == _off_schedule(ds, world.train) > 0


def test_inference_forecast_decoder_follows_the_symbols_calendar(world: World) -> None:
    p = world.prepared
    ds = _infer(world, world.train, with_target=False)
    last_ts = pl.read_parquet(world.train)["ts"][-1]
    assert ds.origins()["ts"][-1] == last_ts
    times = pl.DataFrame({"ts": [last_ts + STEP * k for k in range(1, H + 1)]})
    raw = times.select(known_features(pl.col("ts"), "24x7")).select(p.spec.known).to_numpy()
    idx = [p.scaler.columns.index(c) for c in p.spec.known]
    want = (raw - np.array(p.scaler.mean)[idx]) / np.array(p.scaler.std)[idx]
    got = ds.batch([len(ds) - 1]).known[0, L:].numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_inference_resolves_other_symbols_against_the_instruments(
    world: World, tmp_path: Path
) -> None:
    path = tmp_path / "ESH4.parquet"
    _bars(850, symbol="ESH4").write_parquet(path)
    ds = _infer(world, path, instruments={"ES": CUSTOM})  # keyed by root, as a user's table
    assert ds.symbols == ("ESH4",) and _static_of_custom(ds)
    assert ds.calendar_windows == _off_schedule(ds, path) > 0


def test_inference_reads_naive_times_in_the_zone_given(world: World, tmp_path: Path) -> None:
    path = tmp_path / "ES_naive.parquet"
    bars = pl.read_parquet(world.train)
    local = pl.col("ts").dt.convert_time_zone("America/Chicago").dt.replace_time_zone(None)
    bars.with_columns(local).write_parquet(path)
    first = bars["ts"][200 + L - 1]
    assert _infer(world, path, tz="America/Chicago").origins()["ts"][0] == first
    inputs = dataclasses.replace(world.cfg.data, tz="America/Chicago")
    assert _infer(world, path, inputs=inputs).origins()["ts"][0] == first


def test_inference_keeps_outliers_only_when_allowed(world: World) -> None:
    with pytest.raises(DataError, match="50 times the median close"):
        _infer(world, world.spiked)
    assert len(_infer(world, world.spiked, allow_outliers=True)) == N_LATER_WINDOWS


def test_inference_refuses_what_it_cannot_produce(world: World) -> None:
    p = world.prepared
    frame = _frame(world, world.train)
    with pytest.raises(DataError, match="^model spec has 5 targets but horizon is 4$"):
        prepare_inference_data(frame, p.spec, p.scaler, L, 4, with_target=True)
    for group, field, name in (
        ("observed", "historical", "obs__nope"),
        ("known", "known", "known__nope"),
        ("static", "static", "static__nope"),
    ):
        spec = dataclasses.replace(p.spec, **{field: (*getattr(p.spec, field)[1:], name)})
        want = f"bars: cannot produce the model's {group} feature '{name}' "
        want += "(model trained with a different feature set)"
        with pytest.raises(DataError, match=f"^{re.escape(want)}$"):
            prepare_inference_data(
                frame, spec, p.scaler, L, H, with_target=True, inputs=world.cfg.data
            )
    k = p.scaler.columns.index("obs__user_extra")
    lacking = ScalerParams(
        columns=(*p.scaler.columns[:k], *p.scaler.columns[k + 1 :]),
        mean=(*p.scaler.mean[:k], *p.scaler.mean[k + 1 :]),
        std=(*p.scaler.std[:k], *p.scaler.std[k + 1 :]),
        target_std=p.scaler.target_std,
    )
    with pytest.raises(DataError, match="^scaler params lack the model's input 'obs__user_extra'$"):
        prepare_inference_data(
            frame, p.spec, lacking, L, H, with_target=True, inputs=world.cfg.data
        )


def test_inference_warns_only_when_the_warmups_differ(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    p = world.prepared
    frame = _frame(world, world.train)
    with caplog.at_level(logging.WARNING, logger=PIPELINE_LOG):
        _infer(world, frame)
        assert _warnings(caplog) == []
        spec = dataclasses.replace(p.spec, warmup=150)
        prepare_inference_data(
            frame, spec, p.scaler, L, H, with_target=True, instruments=p.instruments,
            inputs=world.cfg.data,
        )  # fmt: skip
    assert _warnings(caplog) == ["model warm-up 150 differs from this version's 200"]


def test_inference_spills_large_window_arrays(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import foxhunt.data.windows.by_symbol as by_symbol

    want = _infer(world, world.train)
    monkeypatch.setattr(by_symbol, "SPILL_ABOVE_BYTES", 0)
    got = _infer(world, world.train, spill=tmp_path)
    assert got.mapped_arrays == ARRAYS and not list(tmp_path.iterdir())
    _assert_same_windows(got, want)
    forecast = _infer(world, world.train, with_target=False, spill=tmp_path)
    assert forecast.mapped_arrays == ARRAYS[:3] and len(forecast) == 850 - 200 - L + 1


@pytest.fixture(scope="module")
def known_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunConfig, PreparedData, Path]:
    """A run with a known-future covariate ``event`` (built-in ES: globex-like sessions)."""
    path = tmp_path_factory.mktemp("known") / "ES_known.parquet"
    event = (pl.col("ts").dt.hour() == 14).cast(pl.Float64).alias("event")
    demo_bars(700, seed=11).with_columns(event).write_parquet(path)
    cfg = _cfg(known_cols=("event",))
    return cfg, prepare_training_data(path, cfg), path


def test_inference_forecast_takes_known_covariates_from_the_future_rows(
    known_run: tuple[RunConfig, PreparedData, Path],
) -> None:
    cfg, p, path = known_run
    frame, none = read_run_bars(path, cfg.data, min_bars=1, reason="", allow_outliers=False)
    assert none is not None and none.height == 0  # the file has no future rows: given here
    last = frame["ts"][-1]  # mid-session: the next H bars are 5 minutes apart
    values = [3.0, 1.0, 4.0, 1.0, 5.0]
    future = pl.DataFrame(
        {"ts": [last + STEP * k for k in range(1, H + 1)], "symbol": ["ES"] * H, "event": values}
    )
    ds = prepare_inference_data(
        frame, p.spec, p.scaler, L, H, with_target=False, instruments=p.instruments,
        inputs=cfg.data, future=future,
    )  # fmt: skip
    j, c = p.spec.known.index("known__user_event"), p.scaler.columns.index("known__user_event")
    got = ds.batch([len(ds) - 1]).known[0, L:, j].numpy()
    want = (np.array(values) - p.scaler.mean[c]) / p.scaler.std[c]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


# --- future_rows ------------------------------------------------------------------------------


def test_future_rows_per_symbol_in_bar_order_on_each_calendar() -> None:
    # 20 bars up to 15:55 CT (21:55 UTC), the last before the Globex daily halt
    last = dt.datetime(2024, 1, 2, 21, 55, tzinfo=dt.UTC)
    ts = [last - STEP * k for k in range(19, -1, -1)]
    order = ["NQ", "ES", "CL", "ZN", "GC", "6E"]
    bars = pl.DataFrame(
        {"symbol": [s for s in order for _ in ts], "ts": ts * len(order)}
    ).with_columns(pl.col("ts").dt.cast_time_unit("us"))
    spec = feature_spec(H)
    columns = ["ts", "symbol", *spec.inputs]
    got = future_rows(bars, spec, H, columns, calendars={"ES": "24x7"})
    assert got.columns == columns and got.height == H * len(order)
    assert got["symbol"].to_list() == [s for s in order for _ in range(H)]
    assert got.schema["ts"] == pl.Datetime("us", "UTC")
    on_24x7 = [last + STEP * k for k in range(1, H + 1)]  # through the halt
    reopened = dt.datetime(2024, 1, 2, 23, 0, tzinfo=dt.UTC)  # 17:00 CT
    on_globex = [reopened + STEP * k for k in range(H)]
    for sym in order:
        part = got.filter(pl.col("symbol") == sym)
        cal = "24x7" if sym == "ES" else "globex"
        want_ts = on_24x7 if sym == "ES" else on_globex
        assert part["ts"].to_list() == want_ts, sym
        want = part.select(known_features(pl.col("ts"), cal)).select(spec.known)
        assert part.select(spec.known).equals(want), sym
    rest = got.select(*spec.historical, *spec.static)
    assert rest.null_count().sum_horizontal().item() == 0
    assert (rest.to_numpy() == 0.0).all()


# --- evaluation_data / evaluation_windows -----------------------------------------------------


def test_evaluate_the_training_bars_scores_their_test_split(world: World) -> None:
    p = world.prepared
    for kw in ({}, {"scope": "test"}, {"ends": world.ends}):
        windows, split, closes = _evaluate(world, world.train, **kw)
        assert split == "test split of the training bars"
        assert len(windows) == N_TEST_WINDOWS
        _assert_same_windows(windows, p.test)
        assert closes.columns == ["symbol", "ts", "close"] and closes.equals(p.closes)


def test_evaluate_the_test_split_in_files(world: World, tmp_path: Path) -> None:
    windows, split, _ = _evaluate(world, world.train, spill=tmp_path)
    assert split == "test split of the training bars"
    assert windows.mapped_arrays == ARRAYS and not list(tmp_path.iterdir())
    _assert_same_windows(windows, world.prepared.test)


def test_evaluate_test_scope_refuses_other_bars(world: World) -> None:
    want = (
        f"--windows test: {world.later} are not the bars the model was trained on (another "
        "data fingerprint), so they have no test split; use --windows new or all"
    )
    with pytest.raises(InputError, match=f"^{re.escape(want)}$"):
        _evaluate(world, world.later, scope="test", ends=world.ends)


def test_evaluate_refuses_a_scaler_that_differs_from_the_refit(world: World) -> None:
    p = world.prepared
    shifted = dataclasses.replace(p.scaler, mean=(p.scaler.mean[0] * 1.001, *p.scaler.mean[1:]))
    want = (
        f"the scaler refitted on {world.train} differs from the model's although the bars are "
        "the same (feature code changed since training?)"
    )
    with pytest.raises(ModelDirError, match=f"^{re.escape(want)}$"):
        evaluation_data(world.train, world.cfg, p.spec, shifted, p.fingerprint, p.instruments)


@pytest.mark.parametrize("scope", [None, "new"])
def test_evaluate_new_leaves_out_the_windows_before_the_end(
    world: World, scope: str | None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger=PIPELINE_LOG):
        windows, split, closes = _evaluate(world, world.later, scope=scope, ends=world.ends)
    assert split == "windows after the training bars"
    assert len(windows) == N_LATER_NEW
    assert windows.origins()["ts"].min() == world.ends["ES"]  # the first origin not before it
    assert _static_of_custom(windows)
    assert closes.equals(pl.read_parquet(world.later).select("symbol", "ts", "close"))
    (message,) = _warnings(caplog)
    assert f"left out {N_LATER_INSIDE} of {N_LATER_WINDOWS} windows" in message
    assert f"({END})" in message


def test_evaluate_new_bars_after_the_end_are_all_scored(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger=PIPELINE_LOG):
        windows, split, _ = _evaluate(world, world.after, ends=world.ends)
    assert (split, len(windows)) == ("windows after the training bars", N_AFTER_WINDOWS)
    assert _warnings(caplog) == []


def test_evaluate_new_with_every_window_before_the_end(world: World) -> None:
    nothing = "windows have their forecast origin before the training bars end"
    want = (
        f"{world.train}: all {N_TRAIN_WINDOWS} {nothing} ({END}): nothing new to score; "
        "--windows test scores their test split"
    )
    with pytest.raises(DataError, match=f"^{re.escape(want)}$"):
        _evaluate(world, world.train, scope="new", ends=world.ends)
    want = (
        f"{world.earlier}: all {N_TRAIN_WINDOWS} {nothing} ({END}): nothing new to score; "
        "--windows all scores them"
    )
    with pytest.raises(DataError, match=f"^{re.escape(want)}$"):
        _evaluate(world, world.earlier, ends=world.ends)


def test_evaluate_new_needs_the_runs_end(world: World) -> None:
    want = (
        "--windows new: the run does not record where its training bars end (trained before "
        "foxhunt stored it); --windows all scores every window, training windows included"
    )
    with pytest.raises(InputError, match=f"^{re.escape(want)}$"):
        _evaluate(world, world.later)  # other bars: ``new`` by default
    with pytest.raises(InputError, match=f"^{re.escape(want)}$"):
        _evaluate(world, world.train, scope="new")


@pytest.mark.parametrize(
    ("bars", "with_ends", "n", "inside"),
    [
        ("later", True, N_LATER_WINDOWS, N_LATER_INSIDE),
        ("train", True, N_TRAIN_WINDOWS, N_TRAIN_WINDOWS),
        ("train", False, N_TRAIN_WINDOWS, N_TRAIN_WINDOWS),  # the training bars: all inside
        ("later", False, N_LATER_WINDOWS, None),  # not known
        ("after", True, N_AFTER_WINDOWS, 0),
    ],
)
def test_evaluate_all_scores_every_window_and_counts_the_training_ones(
    world: World,
    bars: str,
    with_ends: bool,
    n: int,
    inside: int | None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    path = getattr(world, bars)
    ends = world.ends if with_ends else None
    with caplog.at_level(logging.WARNING, logger=PIPELINE_LOG):
        windows, split, closes = _evaluate(world, path, scope="all", ends=ends)
    assert (split, len(windows)) == ("all windows", n)
    assert closes.height == pl.read_parquet(path).height
    assert _static_of_custom(windows)
    if inside == 0:
        assert _warnings(caplog) == []
        return
    (message,) = _warnings(caplog)
    if inside is None:
        assert "does not record where its training bars end" in message
        return
    assert f"{inside} of {n} windows have their forecast origin inside the training bars" in message
    assert (f"(before {END})" in message) == with_ends


def test_evaluate_outliers_from_the_argument_or_the_config(world: World) -> None:
    with pytest.raises(DataError, match="50 times the median close"):
        _evaluate(world, world.spiked, ends=world.ends)
    windows, _, closes = _evaluate(world, world.spiked, ends=world.ends, allow_outliers=True)
    assert len(windows) == N_LATER_NEW and closes.height == 1100
    p, allow = world.prepared, world.cfg.replace(data={"allow_outliers": True})
    windows, _, _ = evaluation_data(
        world.spiked, allow, p.spec, p.scaler, p.fingerprint, p.instruments, ends=world.ends
    )
    assert len(windows) == N_LATER_NEW


def test_evaluate_names_the_bars_it_needs(world: World, tmp_path: Path) -> None:
    path = tmp_path / "ES_short.parquet"
    _bars(225).write_parquet(path)
    why = r"has 225 bars; need at least 226 \(warm-up 200 \+ encoder 16 \+ 2 x horizon 5\)$"
    with pytest.raises(DataError, match=why):
        _evaluate(world, path, scope="all")


def test_evaluate_spills_large_windows(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import foxhunt.data.windows.by_symbol as by_symbol

    monkeypatch.setattr(by_symbol, "SPILL_ABOVE_BYTES", 0)
    windows, _, _ = _evaluate(world, world.later, ends=world.ends, spill=tmp_path)
    assert windows.mapped_arrays == ARRAYS and len(windows) == N_LATER_NEW
    assert not list(tmp_path.iterdir())


def test_evaluation_windows_pass_on_their_arguments(world: World) -> None:
    p = world.prepared
    args = (world.cfg, p.spec, p.scaler, p.fingerprint, p.instruments)
    windows, split = evaluation_windows(world.train, *args)
    assert (split, len(windows)) == ("test split of the training bars", N_TEST_WINDOWS)
    windows, split = evaluation_windows(world.later, *args, ends=world.ends)
    assert (split, len(windows)) == ("windows after the training bars", N_LATER_NEW)
    assert _static_of_custom(windows)
    with pytest.raises(DataError, match="50 times the median close"):
        evaluation_windows(world.spiked, *args, ends=world.ends)
    windows, split = evaluation_windows(world.spiked, *args, True, ends=world.ends)
    assert (split, len(windows)) == ("windows after the training bars", N_LATER_NEW)


# --- _same_scaler -------------------------------------------------------------------------------


def _params(
    mean: tuple[float, ...] = (1.0, 0.0),
    std: tuple[float, ...] = (2.0, 1.0),
    target_std: tuple[float, ...] = (0.5,),
    columns: tuple[str, ...] = ("a", "b"),
) -> ScalerParams:
    return ScalerParams(columns=columns, mean=mean, std=std, target_std=target_std)


def test_same_scaler_up_to_summation_order() -> None:
    a = _params()
    assert _same_scaler(a, _params())
    assert _same_scaler(a, _params(mean=(1.0 + 1e-7, 0.0)))  # within 1e-6 relative
    assert _same_scaler(a, _params(mean=(1.0, 1e-13)))  # within 1e-12 absolute of 0
    assert _same_scaler(a, _params(mean=(1.0 + 1e-5, 0.0)), rel=1e-4)
    assert not _same_scaler(a, _params(mean=(1.0 + 1e-5, 0.0)))
    assert not _same_scaler(a, _params(mean=(1.0, 1e-6)))
    assert not _same_scaler(a, _params(std=(2.0, 1.5)))
    assert not _same_scaler(a, _params(target_std=(0.6,)))
    assert not _same_scaler(a, _params(columns=("a", "c")))
    assert not _same_scaler(a, _params(target_std=(0.5, 0.5)))  # another horizon
    assert not _same_scaler(_params(mean=(1.0,)), a)
