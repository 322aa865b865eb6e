"""The streaming Forecaster's contract where mutation testing found it unpinned (the surviving
mutants of ``runs/mutate/forecaster``).

Each test states what a user of :class:`~foxhunt.infer.forecaster.Forecaster` relies on: that
``incremental=True`` is honoured or refused with its message, that bars of another interval are
refused at a symbol's first update on either path, that the run's instrument table (or its
absence) sets the calendar of the incremental path exactly as the bar-tail path reads it, that a
long first update forecasts what the bar-tail path does, that a seed ensemble forecasts with
every member, that the bar-tail path runs PyTorch whatever ``engine`` says while the incremental
forward runs the engine's graphs, that ``load`` puts the model where it is asked, and that a
state file whose arrays do not load is refused naming the file. ``mutation/mutate.py
forecaster`` maps this file.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import shutil
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
import torch

import foxhunt.infer.forecaster as forecaster_module
from demo_run import QUANTILES, DemoRun
from foxhunt.artifacts.ensemble import EnsembleTFT
from foxhunt.data.features.covariates import USER
from foxhunt.data.sources.demo import demo_bars
from foxhunt.errors import DataError, InputError
from foxhunt.infer.forecaster import Forecaster
from foxhunt.infer.quantiles import quantile_map
from foxhunt.quantize.model import load_inference_model

pytestmark = pytest.mark.slow  # every test forecasts with the shared trained demo run

RETURNS = [f"return_q{q:g}" for q in QUANTILES]
MINIMUM = 200 + 16  # the demo run's warm-up + encoder


def _returns(out: pl.DataFrame) -> np.ndarray:
    return out.select(RETURNS).to_numpy()


def _assert_same_forecasts(got: pl.DataFrame, want: pl.DataFrame) -> None:
    """The same rows (symbol, origin, horizon, close) and the same quantiles, to the streaming
    tolerance of docs/inference.md."""
    key = ["symbol", "origin_ts", "horizon", "close"]
    assert got.height == want.height > 0
    assert got.select(key).equals(want.select(key))
    np.testing.assert_allclose(_returns(got), _returns(want), rtol=1e-4, atol=1e-8)


def _round_the_clock(symbol: str, n: int = 240) -> pl.DataFrame:
    """``n`` five-minute bars without a break from Tuesday 2024-01-02 21:10 UTC: across the
    Globex daily pause (21:00-22:00 UTC), so a 24x7 calendar and Globex read them differently."""
    first = datetime(2024, 1, 2, 21, 10, tzinfo=UTC)
    times = pl.datetime_range(first, first + timedelta(minutes=5 * (n - 1)), "5m", eager=True)
    return demo_bars(n, seed=2).with_columns(
        ts=times.dt.cast_time_unit("us"), symbol=pl.lit(symbol)
    )


def _run_copy(demo_run: DemoRun, tmp_path: Path, name: str) -> Path:
    run = tmp_path / name
    shutil.copytree(demo_run.run, run)
    return run


def test_incremental_true_is_honoured_and_refused_for_inputs_it_cannot_compute(
    demo_run: DemoRun,
) -> None:
    """``incremental=True`` on a run of the built-in features gives the incremental path; on a
    run whose inputs add an observed covariate it raises ValueError with the documented message
    (the class docstring), before anything else is built."""
    loaded = load_inference_model(demo_run.run, "cpu")
    fc = Forecaster(loaded, incremental=True)
    assert fc.incremental
    fc.update(demo_bars(3, seed=0), forecast=False)
    assert fc.held_bars("ES") == 3
    spec = dataclasses.replace(loaded.spec, historical=(*loaded.spec.historical, f"obs__{USER}vix"))
    with pytest.raises(
        ValueError, match=r"^incremental features cover the built-in observed set only$"
    ):
        Forecaster(dataclasses.replace(loaded, spec=spec), incremental=True)


@pytest.mark.parametrize("incremental", [True, False])
def test_bars_of_another_interval_are_refused_at_their_first_update(
    demo_run: DemoRun, incremental: bool
) -> None:
    """The run learned 5-minute bars (run.json ``bar_interval_s``): a symbol's first bars at
    1 minute are refused on either path, the message naming the row, the run directory and
    the remedy, and nothing is kept; 5-minute bars are then taken."""
    bars = demo_bars(30, seed=1)
    start = bars["ts"][0]
    minutes = pl.datetime_range(start, start + timedelta(minutes=29), "1m", eager=True)
    one_minute = bars.with_columns(ts=minutes.dt.cast_time_unit("us"))
    fc = Forecaster.load(demo_run.run, incremental=incremental)
    assert fc.incremental is incremental
    message = (
        f"Forecaster.update: row 1, symbol 'ES', ts {minutes[1].isoformat()}: 1 minute after "
        f"the bar before it; {demo_run.run} was trained on 5-minute bars: send bars of that "
        "interval"
    )
    with pytest.raises(DataError) as caught:
        fc.update(one_minute)
    assert str(caught.value) == message
    assert fc.symbols == () and fc.held_bars("ES") == 0
    fc.update(bars, forecast=False)
    assert fc.held_bars("ES") == 30


def test_the_bar_tail_path_refuses_symbols_outside_the_list(demo_run: DemoRun) -> None:
    """``symbols`` restricts the bar-tail path as it does the incremental one."""
    fc = Forecaster.load(demo_run.run, symbols=["ES"], incremental=False)
    with pytest.raises(DataError, match=r"symbol 'NQ' is not one this forecaster serves \(ES\)$"):
        fc.update(demo_bars(3, seed=0, symbol="NQ"))
    assert fc.symbols == ()


def test_the_runs_instrument_table_sets_the_incremental_calendar(
    demo_run: DemoRun, tmp_path: Path
) -> None:
    """A run whose instruments.json puts ES on the 24x7 calendar: the incremental path streams
    ES, and ESH5 (matched to ES by its root), on 24x7, as the bar-tail path does; the same bars
    through the stock run (ES on cme_equity) forecast otherwise, so the calendar is what is
    compared."""
    run = _run_copy(demo_run, tmp_path, "run")
    table = json.loads((run / "instruments.json").read_text())
    table["ES"]["calendar"] = "24x7"
    (run / "instruments.json").write_text(json.dumps(table))
    symbols = ["ES", "ESH5"]
    bars = pl.concat([_round_the_clock(s) for s in symbols]).sort(["ts", "symbol"])
    live = Forecaster.load(run, symbols=symbols).update(bars)
    tail = Forecaster.load(run, symbols=symbols, incremental=False).update(bars)
    assert live["symbol"].unique().sort().to_list() == symbols
    _assert_same_forecasts(live, tail)
    stock = Forecaster.load(demo_run.run, symbols=symbols).update(bars)
    assert np.abs(_returns(stock) - _returns(live)).max() > 1e-3 * np.abs(_returns(live)).max()


def test_a_run_without_instruments_streams_every_symbol_on_globex(
    demo_run: DemoRun, tmp_path: Path
) -> None:
    """A run without instruments.json (trained before calendars): every symbol follows Globex,
    even one whose own instrument would be 24x7 (BTCUSD, crypto), on the incremental path as on
    the bar-tail path; later updates of the held symbol stream on."""
    run = _run_copy(demo_run, tmp_path, "run")
    (run / "instruments.json").unlink()
    bars = _round_the_clock("BTCUSD", MINIMUM + 3)
    outs = {}
    for incremental in (True, False):
        fc = Forecaster.load(run, symbols=["BTCUSD"], incremental=incremental)
        assert fc.incremental is incremental
        first = fc.update(bars.head(MINIMUM + 1))
        outs[incremental] = pl.concat([first, fc.update(bars.tail(2))])
    assert outs[True].height == 2 * 4
    _assert_same_forecasts(outs[True], outs[False])
    with_table = Forecaster.load(demo_run.run, symbols=["BTCUSD"]).update(bars)  # on 24x7
    assert with_table.height == 4
    assert not np.allclose(_returns(with_table), _returns(outs[True])[-4:], rtol=1e-3)


def test_a_long_first_update_forecasts_as_the_bar_tail_path(demo_run: DemoRun) -> None:
    """One update holding the whole backlog (a feed's start): its forecast, from the last bar,
    equals the bar-tail path's, the window's first bar included."""
    bars = demo_bars(MINIMUM + 40, seed=6)
    live = Forecaster.load(demo_run.run).update(bars)
    tail = Forecaster.load(demo_run.run, incremental=False).update(bars)
    assert live["origin_ts"].to_list() == [bars["ts"][-1]] * 4
    _assert_same_forecasts(live, tail)


def test_an_ensemble_forecasts_with_every_member(demo_run: DemoRun) -> None:
    """A seed ensemble's incremental forecasts are the mean of its members' (tft_quantiles),
    each member forecasting from its own held rows."""
    loaded = load_inference_model(demo_run.run, "cpu")
    other = copy.deepcopy(loaded.model)
    gen = torch.Generator().manual_seed(5)
    with torch.no_grad():
        for p in other.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=gen))
    qmap = quantile_map(loaded)
    ensemble = dataclasses.replace(loaded, model=EnsembleTFT([loaded.model, other], [qmap, qmap]))
    bars = demo_bars(MINIMUM + 2, seed=3)
    fc = Forecaster(ensemble)
    assert fc.incremental
    got = pl.concat([fc.update(bars.head(MINIMUM + 1)), fc.update(bars.tail(1))])
    each = [
        Forecaster(dataclasses.replace(loaded, model=m)).update(bars) for m in (loaded.model, other)
    ]
    assert got.height == 8 and all(e.height == 4 for e in each)
    assert np.abs(_returns(each[0]) - _returns(each[1])).max() > 1e-6  # the members differ
    np.testing.assert_allclose(
        _returns(got)[-4:], (_returns(each[0]) + _returns(each[1])) / 2, rtol=1e-5, atol=1e-9
    )


def test_the_bar_tail_path_runs_pytorch_whatever_engine_is_asked(
    demo_run: DemoRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bar-tail path always runs PyTorch (class docstring): ``engine="onnx"`` there builds
    no graphs, so a model the graphs cannot run is not refused, and ``engine`` says torch."""
    monkeypatch.setattr(
        "foxhunt.infer.incremental.graphs.unsupported", lambda tft, device: "a reason"
    )
    with pytest.raises(InputError, match="--engine onnx: a reason"):
        Forecaster.load(demo_run.run, engine="onnx")  # the incremental path needs them
    fc = Forecaster.load(demo_run.run, engine="onnx", incremental=False)
    assert fc.engine == "torch"
    assert fc.update(demo_bars(MINIMUM, seed=1)).height == 4


class _TorchGraphs:
    """Stands in for one model's onnxruntime graphs (``graphs.LiveGraphs``): the same layers
    in PyTorch, counting the calls."""

    def __init__(self, tft: Any) -> None:
        self.tft = tft
        self.calls: Counter[str] = Counter()

    def historical(self, x: Any, context: Any) -> torch.Tensor:
        self.calls["historical"] += 1
        return self.tft.historical_vsn(torch.as_tensor(x), torch.as_tensor(context))[0]

    def temporal(self, selected: torch.Tensor, ctx: Any) -> torch.Tensor:
        self.calls["temporal"] += 1
        return self.tft.temporal(selected, ctx)[0]


def test_the_incremental_forward_runs_the_engines_graphs(
    demo_run: DemoRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With graphs for the engine (``onnx``), every forecast's historical VSN and temporal
    layers run in them, and the forecasts are the torch engine's."""
    built: list[_TorchGraphs] = []

    def live_graphs(models: list[Any], engine: str, device: Any, cache: Path) -> Any:
        if engine == "torch":
            return None
        built.extend(_TorchGraphs(m) for m in models)
        return list(built)

    monkeypatch.setattr(forecaster_module, "live_graphs", live_graphs)
    bars = demo_bars(MINIMUM + 1, seed=4)
    fc = Forecaster.load(demo_run.run, engine="onnx")
    assert fc.engine == "onnx" and len(built) == 1
    got = pl.concat([fc.update(bars.head(MINIMUM)), fc.update(bars.tail(1))])
    assert built[0].calls == Counter(historical=2, temporal=2)  # one forward per update
    want = Forecaster.load(demo_run.run).update(bars)
    _assert_same_forecasts(got.tail(4), want)


def test_load_puts_the_model_on_the_device_asked(
    demo_run: DemoRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Forecaster.load(run, device=...)`` loads the model onto that device and forecasts
    there (``cpu:0``: a device other than the default ``cpu`` that this machine has)."""
    seen: list[object] = []
    real = forecaster_module.load_inference_model

    def spy(path: Path, device: object = "default") -> Any:
        seen.append(device)
        return real(path, "cpu" if device == "default" else device)  # type: ignore[arg-type]

    monkeypatch.setattr(forecaster_module, "load_inference_model", spy)
    fc = Forecaster.load(demo_run.run, device="cpu:0")
    assert seen == ["cpu:0"]
    assert fc.device == torch.device("cpu:0") != torch.device("cpu")
    assert fc.update(demo_bars(MINIMUM, seed=1)).height == 4


def test_a_state_whose_arrays_do_not_load_is_refused_naming_the_file(
    demo_run: DemoRun, tmp_path: Path
) -> None:
    """A file of the right format and model that lacks one of the state's arrays: DataError
    naming the file and the missing array."""
    fc = Forecaster.load(demo_run.run)
    fc.update(demo_bars(20, seed=0), forecast=False)
    arrays = dict(np.load(fc.save(tmp_path / "ok.state")))
    del arrays["close"]
    path = tmp_path / "cut.npz"
    np.savez(path, **arrays)
    with pytest.raises(DataError) as caught:
        Forecaster.load(demo_run.run, state=path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "close" in message


# --- the three faults writing these tests found (fixed with them) ------------------------------


def _reweighted_copy(demo_run: DemoRun, tmp_path: Path) -> Path:
    """A copy of the demo run whose weights differ (another seed, say): same bars and features,
    so the same data fingerprint, another model."""
    from foxhunt.artifacts import checkpoints as ckpt
    from foxhunt.artifacts.rundir import RunDir, model_weights

    run = _run_copy(demo_run, tmp_path, "other")
    weights = model_weights(RunDir(run))
    tensors, sidecar = ckpt.load_weights(weights)
    changed = {k: v * 1.01 if v.is_floating_point() else v for k, v in tensors.items()}
    kept = {k: v for k, v in sidecar.items() if k not in ("format", "weights_sha256")}
    ckpt.save_weights(weights, changed, kept)
    return run


def test_a_state_saved_for_another_models_weights_is_refused(
    demo_run: DemoRun, tmp_path: Path
) -> None:
    """The state's identity holds the weights' digest: a model trained on the same bars with
    other weights refuses it (it was "<fingerprint>:" for every model, so it restored another
    model's held rows)."""
    fc = Forecaster.load(demo_run.run)
    fc.update(demo_bars(20, seed=0), forecast=False)
    state = fc.save(tmp_path / "es.state")
    other = _reweighted_copy(demo_run, tmp_path)
    assert load_inference_model(other).fingerprint == fc.loaded.fingerprint
    with pytest.raises(DataError, match=r"es.state: the state was saved for another model$"):
        Forecaster.load(other, state=state)
    assert Forecaster.load(demo_run.run, state=state).held_bars("ES") == 20


def test_a_state_saved_before_weights_were_in_its_identity_is_restored_with_a_warning(
    demo_run: DemoRun, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fc = Forecaster.load(demo_run.run)
    fc.update(demo_bars(20, seed=0), forecast=False)
    arrays = dict(np.load(fc.save(tmp_path / "new.state")))
    arrays["model"] = np.array(f"{fc.loaded.fingerprint}:")
    old = tmp_path / "old.npz"
    np.savez(old, **arrays)
    with caplog.at_level("WARNING"):
        assert Forecaster.load(demo_run.run, state=old).held_bars("ES") == 20
    assert "a state saved before foxhunt tied states to the model's weights" in caplog.text


@pytest.mark.parametrize("incremental", [True, False])
def test_an_update_without_bars_changes_nothing_on_either_path(
    demo_run: DemoRun, incremental: bool
) -> None:
    """An empty frame (a poll that found nothing) was an IndexError on the incremental path."""
    fc = Forecaster.load(demo_run.run, incremental=incremental)
    bars = demo_bars(MINIMUM, seed=1)
    out = fc.update(bars.head(0))
    assert out.height == 0 and out.columns == fc.update(bars).columns
    assert fc.held_bars("ES") == MINIMUM
    with pytest.raises(DataError):
        fc.update(bars.head(0).drop("close"))


def test_a_run_whose_inputs_have_no_incremental_kernel_opens_on_the_bar_tail_path(
    demo_run: DemoRun, tmp_path: Path
) -> None:
    """A run with an input the incremental engine has no kernel for (an SQL feature line):
    ``Forecaster`` raised ``tuple.index(x): x not in tuple`` building the incremental state it
    would not use; now it takes the bar-tail path, and has no state to save or restore."""
    loaded = load_inference_model(demo_run.run, "cpu")
    spec = dataclasses.replace(loaded.spec, historical=(*loaded.spec.historical, "obs__line_1"))
    fc = Forecaster(dataclasses.replace(loaded, spec=spec))
    assert not fc.incremental and fc.symbols == ()
    with pytest.raises(ValueError, match="only the incremental forecaster saves its state"):
        fc.save(tmp_path / "x.state")
    state = Forecaster.load(demo_run.run).save(tmp_path / "es.state")
    with pytest.raises(DataError, match=r"es.state: this model's inputs are not computed incr"):
        fc.restore(state)


def test_a_run_that_reads_covariate_columns_is_refused_naming_them(demo_run: DemoRun) -> None:
    """Neither path carries a bar's extra columns: such a run failed at its first forecast
    with "bars lack the input column 'vix'" although the bars held it."""
    loaded = load_inference_model(demo_run.run, "cpu")
    data = dataclasses.replace(loaded.config.data, observed_cols=("vix",), static_cols=("beta",))
    config = dataclasses.replace(loaded.config, data=data)
    with pytest.raises(InputError) as caught:
        Forecaster(dataclasses.replace(loaded, config=config))
    assert str(caught.value) == (
        f"{demo_run.run}: the model reads covariate columns (vix, beta), which the streaming "
        "forecaster does not carry; forecast it with foxhunt predict"
    )


@pytest.mark.parametrize("cut", ["gaps", "hist"])
def test_a_failed_restore_changes_nothing(demo_run: DemoRun, tmp_path: Path, cut: str) -> None:
    """A state of three symbols whose ``gaps`` (or ``hist``) is missing: refused naming the
    file, and the forecaster keeps what it held (the symbols and arrays before the missing key
    were replaced, and the next forecast failed)."""
    three = Forecaster.load(demo_run.run, symbols=["ES", "NQ", "YM"])
    for symbol in ("ES", "NQ", "YM"):
        three.update(demo_bars(MINIMUM, seed=3, symbol=symbol), forecast=False)
    arrays = dict(np.load(three.save(tmp_path / "three.state")))
    del arrays[cut]
    path = tmp_path / "cut.npz"
    np.savez(path, **arrays)
    fc = Forecaster.load(demo_run.run)
    want = fc.update(demo_bars(MINIMUM, seed=1))
    with pytest.raises(DataError, match=f"^{path}: "):
        fc.restore(path)
    assert fc.symbols == ("ES",) and fc.held_bars("ES") == MINIMUM
    _assert_same_forecasts(fc.forecast(), want)


def test_a_state_whose_arrays_do_not_match_its_symbols_is_refused(
    demo_run: DemoRun, tmp_path: Path
) -> None:
    """``hist`` of one symbol's rows in a state of two: refused at once (it loaded, and the
    first forecast failed)."""
    fc = Forecaster.load(demo_run.run, symbols=["ES", "NQ"])
    for symbol in ("ES", "NQ"):
        fc.update(demo_bars(MINIMUM, seed=3, symbol=symbol), forecast=False)
    arrays = dict(np.load(fc.save(tmp_path / "two.state")))
    arrays["hist"] = arrays["hist"][:1]
    path = tmp_path / "short.npz"
    np.savez(path, **arrays)
    with pytest.raises(DataError, match=r"arrays hold \[1, 2\] symbols' rows for 2 symbols$"):
        Forecaster.load(demo_run.run, symbols=["ES", "NQ"], state=path)
