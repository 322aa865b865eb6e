"""train/run.py: the pieces `make mutate` left unpinned by the fast tier: the device check, the
resume data check, the files a fresh run starts with (``run.json`` key by key), loading the
last complete epoch on ``--resume`` (and trimming the logs the discarded epoch wrote), the
merging of ``run.json`` updates, the memory log's path per rank and the report call. Each is
called directly, on data prepared once from a few hundred demo bars, a tiny TFT and
checkpoints written with :func:`foxhunt.artifacts.resume.save_epoch`.

Then ``run_training`` itself, on tiny runs trained once per module (the shared demo run is
trained once per mutation session, so it pins nothing of ``_train``): a fresh isolated run
with a memory budget into the default root, a run interrupted by SIGINT and resumed, a refused
and an accepted ``overwrite``; ``_train``'s collaborators are wrapped to record what they get.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import json
import re
import shutil
import signal
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from foxhunt import runtime
from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.calibration import read_calibration
from foxhunt.artifacts.lock import holder
from foxhunt.artifacts.resume import save_epoch
from foxhunt.artifacts.rundir import RunDir, features_record
from foxhunt.config import RunConfig, demo
from foxhunt.data.market.instruments import instruments_to_dict
from foxhunt.data.prepared import PreparedData
from foxhunt.data.scale.target import TargetScale
from foxhunt.data.sources.demo import write_demo_bars
from foxhunt.errors import InputError, ModelDirError
from foxhunt.memory.process import IMPORT_BASELINE_BYTES
from foxhunt.model.tft import TFT
from foxhunt.train import run as run_mod
from foxhunt.train.distributed import World
from foxhunt.train.head_init import start_head
from foxhunt.train.prepare import RunData, prepare
from foxhunt.train.resources.plan import data_bytes
from foxhunt.version import __version__

from .train_fakes import tiny_config

torch.set_num_threads(1)

FINGERPRINT = "0123456789abcdef" * 4
"""A fingerprint of 64 hex digits (the real ones are sha256 digests)."""


def _cfg() -> RunConfig:
    """The demo preset with a tiny model and one short epoch."""
    return demo().replace(
        model={"hidden": 8, "n_heads": 2, "encoder_length": 16, "horizon": 4,
               "lstm_layers": 1, "variable_width": 4, "quantiles": (0.1, 0.5, 0.9)},
        train={"batch_size": 64, "validation_batch_size": 128, "epochs": 1,
               "warmup_steps": 1, "num_threads": 1},
    )  # fmt: skip


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, PreparedData]:
    """700 demo bars and their prepared windows (no baselines: ~0.2 s)."""
    bars = tmp_path_factory.mktemp("bars") / "ES.parquet"
    write_demo_bars(bars, n_bars=700, seed=1)
    return bars, prepare(bars, _cfg(), choose_scale=False, baselines=False).data


# --- _check_device ---------------------------------------------------------------------------


def test_fp16_is_refused_on_the_cpu_and_other_precisions_pass() -> None:
    """fp16 needs CUDA: on the CPU it is an InputError with this message; fp32 and bf16 on
    the CPU return the parsed device."""
    cpu = tiny_config(device="cpu", precision="fp16")
    with pytest.raises(InputError) as e:
        run_mod._check_device(cpu)
    assert str(e.value) == "--precision fp16 needs a CUDA device (use bf16 on CPU)"
    for precision in ("fp32", "bf16"):
        got = run_mod._check_device(tiny_config(device="cpu", precision=precision))
        assert got == torch.device("cpu")


def test_fp16_on_a_cuda_device_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    """fp16 on a CUDA device is accepted (the device is what ``parse_device`` returned)."""
    monkeypatch.setattr(runtime, "parse_device", lambda device: torch.device(device))
    cfg = tiny_config(device="cuda:1", precision="fp16")
    assert run_mod._check_device(cfg) == torch.device("cuda:1")


# --- _check_same_data ------------------------------------------------------------------------


def _features(run: RunDir, fingerprint: Any) -> None:
    run.root.mkdir(parents=True, exist_ok=True)
    run.features.write_text(json.dumps({"fingerprint": fingerprint}))


def test_resume_accepts_the_bars_the_run_was_trained_on(tmp_path: Path) -> None:
    """Same fingerprint in features.json as in the data: no error."""
    run = RunDir(tmp_path / "run")
    _features(run, FINGERPRINT)
    run_mod._check_same_data(run, SimpleNamespace(fingerprint=FINGERPRINT))  # type: ignore[arg-type]


def test_resume_refuses_other_bars_naming_both_fingerprints(tmp_path: Path) -> None:
    """Another fingerprint: ModelDirError naming the run and the first 12 digits of each."""
    run = RunDir(tmp_path / "run")
    _features(run, "fedcba9876543210" * 4)
    with pytest.raises(ModelDirError) as e:
        run_mod._check_same_data(run, SimpleNamespace(fingerprint=FINGERPRINT))  # type: ignore[arg-type]
    assert str(e.value) == (
        f"{run.root}: these bars differ from the ones the run was trained on "
        "(fingerprint 0123456789ab vs fedcba987654); resume needs the same bars"
    )


def test_resume_refuses_a_features_json_without_a_fingerprint(tmp_path: Path) -> None:
    """No fingerprint recorded: refused, shown as ``None``."""
    run = RunDir(tmp_path / "run")
    run.root.mkdir()
    run.features.write_text("{}")
    with pytest.raises(ModelDirError, match=r"\(fingerprint 0123456789ab vs None\)"):
        run_mod._check_same_data(run, SimpleNamespace(fingerprint=FINGERPRINT))  # type: ignore[arg-type]


def test_resume_without_features_json_names_the_file(tmp_path: Path) -> None:
    """A missing features.json is a ModelDirError that says which file is missing."""
    run = RunDir(tmp_path / "run")
    run.root.mkdir()
    with pytest.raises(ModelDirError) as e:
        run_mod._check_same_data(run, SimpleNamespace(fingerprint=FINGERPRINT))  # type: ignore[arg-type]
    assert str(e.value) == f"{run.features}: features.json is missing"


# --- _start_fresh ----------------------------------------------------------------------------


def _start(
    tmp_path: Path, bars: Path, data: PreparedData, cfg: RunConfig
) -> tuple[RunDir, dict[str, Any]]:
    run = RunDir(tmp_path / "run")
    run.create()
    baselines = {"naive": {"pinball": 1.5}}
    span = ({"ES": "2024-01-01T00:00:00+00:00"}, {"ES": "2024-01-05T00:00:00+00:00"})
    run_mod._start_fresh(run, cfg, bars, data, baselines, span, "3GB", "auto")
    return run, json.loads(run.run_info.read_text())


def test_a_fresh_run_writes_its_description_files(
    tmp_path: Path, prepared: tuple[Path, PreparedData]
) -> None:
    """config.json (the config), features.json (spec, scaler, fingerprint), baselines.json and
    instruments.json (the data's instruments) are written as given."""
    bars, data = prepared
    cfg = _cfg().replace(train={"precision": "fp32"})
    run, _ = _start(tmp_path, bars, data, cfg)
    assert RunConfig.load(run.config) == cfg
    assert json.loads(run.features.read_text()) == features_record(
        data.spec, data.scaler, data.fingerprint
    )
    assert json.loads(run.baselines.read_text()) == {"naive": {"pinball": 1.5}}
    assert data.instruments
    assert json.loads(run.instruments.read_text()) == instruments_to_dict(data.instruments)


def test_a_fresh_run_json_records_the_data_the_model_and_the_versions(
    tmp_path: Path, prepared: tuple[Path, PreparedData], monkeypatch: pytest.MonkeyPatch
) -> None:
    """run.json, key by key: the resolved bars path, fingerprint, symbols, bar interval, data
    ends, window counts, parameter count, budget, requested and used precision, allocator,
    versions, a UTC start time to the second and ``stop_reason: running``."""
    bars, data = prepared
    cfg = _cfg().replace(train={"precision": "fp32", "cpu_allocator": "glibc"})
    monkeypatch.chdir(bars.parent)  # a relative bars path is recorded resolved
    _, info = _start(tmp_path, Path(bars.name), data, cfg)
    started = info.pop("started")
    assert info == {
        "bars": str(bars.resolve()),
        "fingerprint": data.fingerprint,
        "symbols": ["ES"],
        "bar_interval_s": data.bar_interval_s,
        "data_start": {"ES": "2024-01-01T00:00:00+00:00"},
        "data_end": {"ES": "2024-01-05T00:00:00+00:00"},
        "windows": {"train": len(data.train), "val": len(data.val), "test": len(data.test)},
        "parameters": sum(p.numel() for p in TFT(cfg.model).parameters()),
        "memory_budget": "3GB",
        "precision": {"requested": "auto", "used": "fp32"},
        "cpu_allocator": "glibc",
        "foxhunt_version": __version__,
        "torch_version": torch.__version__,
        "stop_reason": "running",
    }
    assert data.bar_interval_s is not None and data.bar_interval_s > 0
    assert len({len(data.train), len(data.val), len(data.test)}) >= 2  # the counts differ
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", started), started
    assert dt.datetime.fromisoformat(started).utcoffset() == dt.timedelta(0)


def test_a_fresh_run_from_a_feature_store_writes_no_instruments(
    tmp_path: Path, prepared: tuple[Path, PreparedData]
) -> None:
    """Data without instruments (a feature store): no instruments.json; the rest is written."""
    bars, data = prepared
    plain = PreparedData(**{**vars(data), "instruments": None})
    run, info = _start(tmp_path, bars, plain, _cfg())
    assert not run.instruments.exists()
    assert run.features.is_file() and run.baselines.is_file()
    assert info["stop_reason"] == "running"


# --- _memory_path and _write_report -----------------------------------------------------------


def test_rank_0_logs_memory_to_memory_jsonl_and_other_ranks_to_their_own(tmp_path: Path) -> None:
    """Rank 0 (and one process): ``memory.jsonl``; rank N: ``memory.rankN.jsonl``."""
    run = RunDir(tmp_path / "run")
    assert run_mod._memory_path(run, World()) == run.memory
    assert run_mod._memory_path(run, World(rank=0, size=2)) == run.memory
    assert run_mod._memory_path(run, World(rank=3, size=4)) == run.root / "memory.rank3.jsonl"


def test_write_report_renders_the_report_of_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``_write_report(run)`` hands that run to the report writer."""
    import foxhunt.train.reporting.report as report

    seen: list[object] = []
    monkeypatch.setattr(report, "write_report", seen.append)
    run = RunDir(tmp_path / "run")
    run_mod._write_report(run)
    assert seen == [run]


# --- _update_run_info ------------------------------------------------------------------------


def test_run_json_updates_are_merged_into_what_is_there(tmp_path: Path) -> None:
    """Fields are added to and replace those of an existing run.json; the others stay."""
    run = RunDir(tmp_path / "run")
    run.create()
    run.run_info.write_text(json.dumps({"bars": "b.parquet", "stop_reason": "running"}))
    run_mod._update_run_info(run, stop_reason="finished", steps=12)
    assert json.loads(run.run_info.read_text()) == {
        "bars": "b.parquet",
        "stop_reason": "finished",
        "steps": 12,
    }


def test_run_json_is_created_by_an_update_when_absent(tmp_path: Path) -> None:
    """No run.json yet: the update writes one with just its fields."""
    run = RunDir(tmp_path / "run")
    run.create()
    run_mod._update_run_info(run, stop_reason="interrupted")
    assert json.loads(run.run_info.read_text()) == {"stop_reason": "interrupted"}


def test_a_corrupt_run_json_is_named_when_updated(tmp_path: Path) -> None:
    """A run.json that is not JSON: ModelDirError naming run.json (not overwritten)."""
    run = RunDir(tmp_path / "run")
    run.create()
    run.run_info.write_text("{not json")
    with pytest.raises(ModelDirError) as e:
        run_mod._update_run_info(run, stop_reason="finished")
    assert str(e.value) == f"{run.run_info}: run.json is corrupt (not valid JSON)"
    assert run.run_info.read_text() == "{not json"


# --- _load_last_epoch ------------------------------------------------------------------------


def _model(seed: int) -> TFT:
    torch.manual_seed(seed)
    return TFT(tiny_config().model)


def _save_epochs(run: RunDir, epochs: int) -> dict[int, TFT]:
    """Epochs 1..``epochs`` complete, each with other weights (seed = epoch) and step
    ``10 * epoch``; returns the model of each epoch."""
    models = {}
    for epoch in range(1, epochs + 1):
        model = _model(epoch)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cpu", enabled=False)
        loop = {"epoch": epoch, "step": 10 * epoch}
        save_epoch(run, model, opt, scaler, loop, {}, {"val_loss": 1.0}, False, 30)
        models[epoch] = model
    return models


def _same_weights(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def _logs(run: RunDir, memory: Path) -> None:
    """metrics.jsonl with steps 5, 30 (the last saved epoch's), 31 and a warning without a
    step; the memory log with epochs 2, 3, 4 and a line without an epoch."""
    metrics = [{"step": 5}, {"warning": "w"}, {"step": 30}, {"step": 31}, {"step": 40}]
    memory_lines = [{"epoch": 2}, {"note": "start"}, {"epoch": 3}, {"epoch": 4}]
    run.metrics.write_text("".join(json.dumps(r) + "\n" for r in metrics))
    memory.write_text("".join(json.dumps(r) + "\n" for r in memory_lines))


def test_resume_without_a_complete_epoch_starts_from_scratch(tmp_path: Path) -> None:
    """No complete epoch: None, the model's weights and the logs untouched."""
    run = RunDir(tmp_path / "run")
    run.create()
    (run.checkpoints / "tft_epoch_1.safetensors").write_bytes(b"partial")  # no sidecar
    _logs(run, run.memory)
    before_metrics, before_memory = run.metrics.read_text(), run.memory.read_text()
    model, fresh = _model(7), _model(7)
    assert run_mod._load_last_epoch(run, model, World(), run.memory) is None
    assert _same_weights(model, fresh)
    assert run.metrics.read_text() == before_metrics
    assert run.memory.read_text() == before_memory


def test_resume_loads_the_last_complete_epoch_and_trims_the_logs(tmp_path: Path) -> None:
    """Three complete epochs: epoch 3's weights are loaded, its resume state returned;
    metrics lines after its step (30) and memory lines after epoch 3 are dropped, lines
    without a step or an epoch kept."""
    run = RunDir(tmp_path / "run")
    run.create()
    models = _save_epochs(run, 3)
    _logs(run, run.memory)
    model = _model(99)
    state = run_mod._load_last_epoch(run, model, World(), run.memory)
    assert state is not None
    assert state["loop"] == {"epoch": 3, "step": 30}
    assert state["total_steps"] == 30
    assert _same_weights(model, models[3])
    assert runtime.read_jsonl(run.metrics) == [
        {"step": 5},
        {"warning": "w"},
        {"step": 30},
    ]
    assert runtime.read_jsonl(run.memory) == [{"epoch": 2}, {"note": "start"}, {"epoch": 3}]


def test_resume_on_another_rank_trims_only_its_own_memory_log(tmp_path: Path) -> None:
    """Rank 1 loads the same epoch but leaves metrics.jsonl (rank 0's) alone; it trims its
    own memory log."""
    run = RunDir(tmp_path / "run")
    run.create()
    models = _save_epochs(run, 2)
    mine = run.root / "memory.rank1.jsonl"
    _logs(run, mine)
    before = run.metrics.read_text()
    model = _model(99)
    state = run_mod._load_last_epoch(run, model, World(rank=1, size=2), mine)
    assert state is not None and state["loop"] == {"epoch": 2, "step": 20}
    assert _same_weights(model, models[2])
    assert run.metrics.read_text() == before
    assert runtime.read_jsonl(mine) == [{"epoch": 2}, {"note": "start"}]


def test_resume_refuses_weights_that_do_not_fit_the_config(tmp_path: Path) -> None:
    """An epoch whose weights hold a key the model lacks (strict loading): ModelDirError
    naming the checkpoints folder and the epoch, caused by the load's RuntimeError."""
    run = RunDir(tmp_path / "run")
    run.create()
    _save_epochs(run, 2)
    weights = {**_model(2).state_dict(), "extra.weight": torch.zeros(2)}
    path = ckpt.epoch_weights_path(run.checkpoints, 2)
    ckpt.save_weights(path, weights, {"epoch": 2, "step": 20})
    model = _model(99)
    with pytest.raises(ModelDirError) as e:
        run_mod._load_last_epoch(run, model, World(), run.memory)
    assert str(e.value) == f"{run.checkpoints}: epoch 2 weights do not fit config.json"
    assert isinstance(e.value.__cause__, RuntimeError)


# --- run_training end to end -----------------------------------------------------------------
# Tiny runs (700 bars, hidden 8, 3 steps an epoch: ~2 s each), trained once per module, with the
# collaborators of ``_train`` wrapped to record what they were handed. Every run works in its
# own temporary directory (also the working directory: a default run root lands there).


class _Progress:
    """A progress display that records the epochs it was told about."""

    def __init__(self) -> None:
        self.epochs: list[int] = []

    def start_epoch(self, epoch: int, n_batches: int) -> None:
        self.epochs.append(epoch)

    def step(self, *, loss: float, samples_per_s: float, memory_bytes: int | None) -> None:
        pass

    def start_validation(self, n_batches: int) -> None:
        pass

    def validation_step(self) -> None:
        pass

    def end_epoch(self, line: str) -> None:
        pass

    def note(self, line: str) -> None:
        pass


class _Displays:
    """A progress factory: records ``(epochs, first_epoch)`` of each display it makes."""

    def __init__(self) -> None:
        self.made: list[tuple[int, int]] = []
        self.progress = _Progress()

    @contextlib.contextmanager
    def __call__(self, epochs: int, first_epoch: int) -> Iterator[_Progress]:
        self.made.append((epochs, first_epoch))
        yield self.progress


class _Listener:
    """Records the kind of every record and who held the run's lock at the first one; with
    ``interrupt``, sends this process SIGINT at the first step record of epoch 2."""

    def __init__(self, root: Path, interrupt: bool = False) -> None:
        self.root, self.interrupt = root, interrupt
        self.kinds: list[str] = []
        self.holder: str | None = None

    def __call__(self, record: Mapping[str, Any]) -> None:
        if self.holder is None:
            self.holder = holder(self.root)
        self.kinds.append(str(record.get("kind")))
        if self.interrupt and record.get("kind") == "step" and record.get("epoch") == 2:
            self.interrupt = False
            signal.raise_signal(signal.SIGINT)


class _Calls:
    """Wraps functions of ``foxhunt.train.run``: records ``(args, kwargs)`` of each call and
    calls the real function (or returns ``returns``, or raises with ``refuse``)."""

    def __init__(self, mp: pytest.MonkeyPatch) -> None:
        self.mp = mp
        self.calls: dict[str, list[tuple[tuple[Any, ...], dict[str, Any]]]] = {}
        self.results: dict[str, list[Any]] = {}

    def wrap(self, name: str, *, returns: Any = ..., refuse: bool = False) -> None:
        real = getattr(run_mod, name)
        calls = self.calls.setdefault(name, [])
        results = self.results.setdefault(name, [])

        def recorder(*args: Any, **kwargs: Any) -> Any:
            calls.append((args, kwargs))
            if refuse:
                raise AssertionError(f"{name} must not be called here")
            result = real(*args, **kwargs) if returns is ... else returns
            results.append(result)
            return result

        self.mp.setattr(run_mod, name, recorder)


def _clock(mp: pytest.MonkeyPatch, *readings: float) -> None:
    """``time.perf_counter`` as ``run.py`` sees it: these readings, in turn."""
    it = iter(readings)
    mp.setattr(run_mod, "time", SimpleNamespace(perf_counter=lambda: next(it)))


def _train_cfg(epochs: int) -> RunConfig:
    return _cfg().replace(train={"epochs": epochs, "precision": "fp32", "log_every": 1})


def _in_process_child(calls: list[Any]) -> Any:
    """``prepare_in_child`` done in this process (no child started): records its kwargs and
    returns the data with a known peak RSS."""

    def fake(bars: Path, cfg: RunConfig, *, scratch: Path, **wants: Any) -> Any:
        got = prepare(bars, cfg, **wants)
        result = dataclasses.replace(got, peak_rss=CHILD_PEAK)
        calls.append({"bars": bars, "cfg": cfg, "scratch": scratch, **wants, "result": result})
        return result

    return fake


CHILD_PEAK = 7_000_000
"""The peak RSS the fake preparation child reports."""


@dataclasses.dataclass
class _Isolated:
    """A fresh run with ``isolate`` and a memory budget, into the default run root."""

    cwd: Path
    bars: Path
    trained: run_mod.TrainedRun
    calls: _Calls
    child: list[dict[str, Any]]
    displays: _Displays
    listener: _Listener
    setups: list[RunConfig]


@pytest.fixture(scope="module")
def isolated(tmp_path_factory: pytest.TempPathFactory) -> _Isolated:
    cwd = tmp_path_factory.mktemp("isolated")
    bars = cwd / "ES.parquet"
    write_demo_bars(bars, n_bars=700, seed=1)
    cfg = _train_cfg(epochs=1)
    child: list[dict[str, Any]] = []
    displays, listener, setups = _Displays(), _Listener(cwd / "runs" / "demo"), []
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(cwd)
        mp.setattr(run_mod, "measured_baseline", lambda: IMPORT_BASELINE_BYTES)
        mp.setattr(run_mod, "prepare_in_child", _in_process_child(child))
        calls = _Calls(mp)
        calls.wrap("child_fits_budget", returns=True)
        calls.wrap("check_child_peak", returns=None)
        calls.wrap("apply_budget")
        calls.wrap("warn_large_preparation", refuse=True)
        calls.wrap("set_cpu_threads")
        calls.wrap("fit_calibration")
        calls.wrap("write_interpretation")
        calls.wrap("start_head")
        calls.wrap("fit")
        _clock(mp, 100.0, 107.5)
        trained = run_mod.run_training(
            cfg, bars, None, None, "4GB", True, progress=displays, listeners=[listener],
            process_setup=setups.append, isolate=True,
        )  # fmt: skip
    return _Isolated(cwd, bars, trained, calls, child, displays, listener, setups)


def _a_run_without_out_goes_to_runs_preset_and_returns_its_best_epoch(
    isolated: _Isolated,
) -> None:
    """No ``--out``: the run is ``runs/<preset>`` (relative to the working directory); the
    result names it, the final weights, the best epoch and loss (best.json's), main rank."""
    trained, root = isolated.trained, isolated.cwd / "runs" / "demo"
    best = json.loads((root / "checkpoints" / "best.json").read_text())
    assert trained.root == Path("runs") / "demo"
    assert trained.final == Path("runs/demo/checkpoints/tft_final_epoch1.safetensors")
    assert (trained.best_epoch, trained.best_val_loss) == (best["epoch"], best["val_loss"])
    assert trained.is_main is True


def _a_finished_run_json_records_how_it_ended(isolated: _Isolated) -> None:
    """run.json after training: stop reason, steps, epochs, micro-batch, the seconds between
    the two clock readings, a UTC end time to the second; the fresh run's fields kept (the
    data's ends and the requested precision); baselines.json holds the child's baselines."""
    root = isolated.cwd / "runs" / "demo"
    info = json.loads((root / "run.json").read_text())
    epoch = [r for r in runtime.read_jsonl(root / "metrics.jsonl") if r["kind"] == "epoch"]
    assert info["stop_reason"] == "epochs"
    assert info["steps"] == epoch[-1]["step"] == 3
    assert info["epochs"] == 1
    assert info["micro_batch"] == 64  # the whole batch of 64 fits: no back-off
    assert info["seconds"] == 7.5
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", info["finished"])
    assert info["memory_budget"] == "4GB"
    assert info["bars"] == str(isolated.bars.resolve())
    (child,) = isolated.child  # the fresh run's files hold what its preparation returned
    assert child["result"].baselines and list(child["result"].ends) == ["ES"]
    assert json.loads((root / "baselines.json").read_text()) == child["result"].baselines
    assert info["data_end"] == child["result"].ends
    assert info["data_start"] == child["result"].starts and list(info["data_start"]) == ["ES"]
    assert info["precision"] == {"requested": "fp32", "used": "fp32"}


def _an_isolated_budgeted_run_prepares_in_the_child_and_plans_with_its_data(
    isolated: _Isolated,
) -> None:
    """``isolate`` with a CPU budget: the child is asked whether it fits (cfg, budget, bars,
    baseline), prepares with the scale choice and the baselines into the run directory, its
    peak is checked against the budget, the budget is planned on its data (not this
    process's), and the in-process preparation warning is not given."""
    calls, root = isolated.calls.calls, Path("runs") / "demo"
    ((fit_args, fit_kw),) = calls["child_fits_budget"]
    assert fit_args[1:] == ("4GB", isolated.bars, IMPORT_BASELINE_BYTES) and not fit_kw
    assert isinstance(fit_args[0], RunConfig)
    (child,) = isolated.child
    assert (child["bars"], child["scratch"]) == (isolated.bars, root)
    assert (child["choose_scale"], child["baselines"]) == (True, True)
    assert calls["check_child_peak"] == [(("4GB", IMPORT_BASELINE_BYTES, CHILD_PEAK), {})]
    ((args, kw),) = calls["apply_budget"]
    data = child["result"].data
    assert args[0] == child["result"].cfg
    assert args[1:] == ("4GB", True, 64, data_bytes(data), IMPORT_BASELINE_BYTES)
    assert kw == {"data_process": False}
    assert "warn_large_preparation" not in calls or not calls["warn_large_preparation"]


def _a_run_hands_its_final_config_to_process_setup_and_the_progress_display(
    isolated: _Isolated,
) -> None:
    """process_setup gets the config as planned (the one config.json holds), once; the
    display is made for (epochs, first epoch 1) and told of epoch 1; the listener sees the
    loop's records while this run holds the directory's lock; CPU threads are set from the
    config for the CPU."""
    root = isolated.cwd / "runs" / "demo"
    cfg = RunConfig.load(root / "config.json")
    assert isolated.setups == [cfg]
    assert isolated.displays.made == [(1, 1)]
    assert isolated.displays.progress.epochs == [1]
    assert "epoch" in isolated.listener.kinds
    assert isolated.listener.holder is not None
    assert f"(foxhunt train --out {Path('runs') / 'demo'}, since" in isolated.listener.holder
    assert isolated.calls.calls["set_cpu_threads"] == [((1, torch.device("cpu")), {})]


def _a_run_checkpoints_carry_the_config_and_features_and_start_at_the_seeded_model(
    isolated: _Isolated,
) -> None:
    """Each checkpoint's sidecar holds config.json's config and features.json's record; the
    starting weights are the seeded TFT of the config (the head moved to the scale-only
    forecast: start_head called once, with that model)."""
    root = RunDir(isolated.cwd / "runs" / "demo")
    cfg = RunConfig.load(root.config)
    weights, meta = ckpt.load_weights(ckpt.epoch_weights_path(root.checkpoints, 1))
    assert meta["config"] == json.loads(root.config.read_text())
    assert meta["features"] == json.loads(root.features.read_text())
    start, _ = ckpt.load_weights(root.checkpoints / ckpt.START_WEIGHTS)
    ((head_args, head_kw),) = isolated.calls.calls["start_head"]
    assert isinstance(head_args[0], TFT) and not head_kw
    torch.manual_seed(cfg.train.seed)
    seeded = TFT(cfg.model)
    start_head(seeded, head_args[1])
    assert _same_weights_as(seeded, start)
    assert weights.keys() == start.keys()


def _same_weights_as(model: torch.nn.Module, weights: Mapping[str, torch.Tensor]) -> bool:
    state = model.state_dict()
    return state.keys() == weights.keys() and all(torch.equal(state[k], weights[k]) for k in state)


def _a_finished_run_calibrates_and_interprets_the_trained_model(isolated: _Isolated) -> None:
    """Calibration runs on the validation windows with the trained model, the config's
    quantiles, validation batch size, device and precision, feeding the selection weights
    that the interpretation gets; its result is calibration.json; the report is written."""
    root = RunDir(isolated.cwd / "runs" / "demo")
    cfg = RunConfig.load(root.config)
    calls = isolated.calls.calls
    ((cal_args, cal_kw),) = calls["fit_calibration"]
    model, windows, quantiles = cal_args
    assert isinstance(model, TFT) and quantiles == cfg.model.quantiles
    info = json.loads(root.run_info.read_text())
    assert len(windows) == info["windows"]["val"]
    assert cal_kw["batch_size"] == cfg.train.validation_batch_size
    assert (cal_kw["device"], cal_kw["precision"]) == (torch.device("cpu"), "fp32")
    ((int_args, int_kw),) = calls["write_interpretation"]
    assert not int_kw
    assert int_args[0] == RunDir(Path("runs") / "demo") and int_args[1] is model
    assert int_args[2].fingerprint == info["fingerprint"] and int_args[3] == cfg
    assert int_args[4] == torch.device("cpu")
    assert cal_kw["on_output"].__self__.result() == int_args[5]
    assert int_args[5] is not None
    (calibration,) = isolated.calls.results["fit_calibration"]
    assert calibration is not None
    got = read_calibration(root.calibration, cfg.model.quantiles, cfg.model.horizon)
    assert got == calibration
    assert root.report.is_file() and root.interpretation.is_file()


@dataclasses.dataclass
class _Resumed:
    """A run of 2 epochs interrupted in epoch 2, then resumed to its end."""

    root: Path
    bars: Path
    interrupted: str
    after_interrupt: dict[str, Any]
    had_report: bool
    had_calibration: bool
    trained: run_mod.TrainedRun
    calls: _Calls
    displays: _Displays
    first: _Listener
    second: _Listener
    setups: list[RunConfig]


@pytest.fixture(scope="module")
def resumed(tmp_path_factory: pytest.TempPathFactory) -> _Resumed:
    cwd = tmp_path_factory.mktemp("resumed")
    bars, root = cwd / "ES.parquet", cwd / "run"
    write_demo_bars(bars, n_bars=700, seed=1)
    first, second = _Listener(root, interrupt=True), _Listener(root)
    displays, setups = _Displays(), []
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(cwd)
        mp.setattr(run_mod, "measured_baseline", lambda: IMPORT_BASELINE_BYTES)
        calls = _Calls(mp)
        calls.wrap("prepare_in_child", refuse=True)
        calls.wrap("apply_budget", refuse=True)
        calls.wrap("prepare")
        calls.wrap("warn_large_preparation")
        calls.wrap("training_peak")
        calls.wrap("start_head")
        calls.wrap("_check_same_data")
        with pytest.raises(KeyboardInterrupt) as e:
            run_mod.run_training(
                _train_cfg(epochs=2), bars, root, None, None, False, listeners=[first]
            )
        after = json.loads((root / "run.json").read_text())
        had_report, had_calibration = (
            (root / "report.md").is_file(),
            (root / "calibration.json").is_file(),
        )
        trained = run_mod.run_training(
            _cfg(), None, None, root, "1GB", False, progress=displays, listeners=[second],
            process_setup=setups.append,
        )  # fmt: skip
    return _Resumed(
        root, bars, str(e.value), after, had_report, had_calibration, trained, calls,
        displays, first, second, setups,
    )  # fmt: skip


def _an_interrupted_run_records_it_writes_its_report_and_says_how_to_resume(
    resumed: _Resumed,
) -> None:
    """SIGINT in epoch 2: KeyboardInterrupt naming the resume command, run.json's stop reason
    ``interrupted`` after the one complete epoch, the report written, no calibration."""
    assert resumed.interrupted == (
        f"training interrupted; resume with: foxhunt train --resume {resumed.root}"
    )
    assert resumed.after_interrupt["stop_reason"] == "interrupted"
    assert resumed.after_interrupt["epochs"] == 1
    assert resumed.had_report and not resumed.had_calibration


def _a_fresh_run_from_bars_prepares_here_into_the_run_directory(resumed: _Resumed) -> None:
    """Without ``isolate`` (the default) and without a budget: no child; the data is prepared
    here with the scale choice and the baselines, its windows spilled to a folder in the run
    directory; the preparation warning and the peak estimate are given for this config."""
    calls = resumed.calls.calls
    assert not calls["prepare_in_child"] and not calls["apply_budget"]
    (fresh_args, fresh_kw), (resume_args, resume_kw) = calls["prepare"]
    assert fresh_args[0] == resumed.bars and resume_args[0] == resumed.bars
    assert (fresh_kw["choose_scale"], fresh_kw["baselines"]) == (True, True)
    assert (resume_kw["choose_scale"], resume_kw["baselines"]) == (False, False)
    assert fresh_kw["coordinator"] == World() == resume_kw["coordinator"]
    assert fresh_kw["spill"].parent == resumed.root
    assert [(a[1], kw) for a, kw in calls["warn_large_preparation"]] == [
        (resumed.bars, {}),
        (resumed.bars, {}),
    ]
    cfg = RunConfig.load(resumed.root / "config.json")
    (peak_args, peak_kw), _ = calls["training_peak"]
    t = cfg.train
    assert peak_args == (peak_args[0], t.micro_batch, t.checkpointing, t.precision)
    assert peak_kw["baseline"] == IMPORT_BASELINE_BYTES and peak_kw["data_bytes"] > 0


def _resume_continues_after_the_last_complete_epoch_with_the_runs_own_config(
    resumed: _Resumed,
) -> None:
    """--resume: the run's own bars and config (epochs 2, not the one given), the data
    checked against features.json, the budget ignored, no start head, the display made for
    (2 epochs, first epoch 2); the log of the discarded epoch 2 dropped; the run finishes
    with epoch 2 while holding the lock as a resume."""
    calls = resumed.calls.calls
    ((check_args, _),) = calls["_check_same_data"]
    assert check_args[0] == RunDir(resumed.root)
    assert len(calls["start_head"]) == 1  # the fresh start only
    assert resumed.displays.made == [(2, 2)]
    assert resumed.displays.progress.epochs == [2]
    assert f"(foxhunt train --resume {resumed.root}, since" in str(resumed.second.holder)
    assert f"(foxhunt train --out {resumed.root}, since" in str(resumed.first.holder)
    records = runtime.read_jsonl(resumed.root / "metrics.jsonl")
    epochs = [r["epoch"] for r in records if r["kind"] == "epoch"]
    assert epochs == [1, 2]
    steps = [r["step"] for r in records if r["kind"] == "step"]
    assert steps == sorted(steps) and len(steps) == len(set(steps))  # epoch 2 logged once
    info = json.loads((resumed.root / "run.json").read_text())
    assert (info["stop_reason"], info["epochs"], info["steps"]) == ("epochs", 2, 6)
    assert info["memory_budget"] is None
    assert resumed.setups == [RunConfig.load(resumed.root / "config.json")]
    assert resumed.trained.final == resumed.root / "checkpoints" / "tft_final_epoch2.safetensors"


# One test per trained run, before any other test of the same fixture: mutmut credits a module
# fixture's calls to the test that first sets it up, and runs only that test against a mutant
# of ``_train``; checks spread over several tests left mutants "surviving" that the other tests
# kill (session 41).


def test_an_isolated_budgeted_run_from_every_side(isolated: _Isolated) -> None:
    """The isolated, budgeted run of the ``isolated`` fixture, every check in turn."""
    _a_run_without_out_goes_to_runs_preset_and_returns_its_best_epoch(isolated)
    _a_finished_run_json_records_how_it_ended(isolated)
    _an_isolated_budgeted_run_prepares_in_the_child_and_plans_with_its_data(isolated)
    _a_run_hands_its_final_config_to_process_setup_and_the_progress_display(isolated)
    _a_run_checkpoints_carry_the_config_and_features_and_start_at_the_seeded_model(isolated)
    _a_finished_run_calibrates_and_interprets_the_trained_model(isolated)
    _the_loop_gets_target_scaled_windows_a_memory_log_and_the_run_s_observers(isolated)


def test_an_interrupted_and_resumed_run_from_every_side(resumed: _Resumed) -> None:
    """The interrupted and resumed run of the ``resumed`` fixture, every check in turn."""
    _an_interrupted_run_records_it_writes_its_report_and_says_how_to_resume(resumed)
    _a_fresh_run_from_bars_prepares_here_into_the_run_directory(resumed)
    _resume_continues_after_the_last_complete_epoch_with_the_runs_own_config(resumed)


def test_a_finished_run_is_not_replaced_without_overwrite(
    isolated: _Isolated, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Training into a finished run without ``overwrite`` (the default) stops before any data
    is read; the run's files are left as they were."""
    root = tmp_path / "run"
    shutil.copytree(isolated.cwd / "runs" / "demo", root)
    before = (root / "run.json").read_text()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(run_mod, "_train", _refuse)
    with pytest.raises((InputError, ModelDirError), match="--overwrite"):
        run_mod.run_training(_train_cfg(epochs=1), isolated.bars, root, None, None, False)
    assert (root / "run.json").read_text() == before


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("_train must not be reached")


def test_overwrite_replaces_a_finished_run_on_the_device_of_its_rank(
    isolated: _Isolated, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``overwrite``: the lock names ``--overwrite``, the old run's files are cleared and a
    fresh run written (one epoch, no budget now); the rank's device (``cpu:0`` here, as
    ``cuda:LOCAL_RANK`` under torchrun) replaces the configured one in config.json."""
    root = tmp_path / "run"
    shutil.copytree(isolated.cwd / "runs" / "demo", root)
    (root / "evaluation.json").write_text("{}")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(run_mod, "rank_device", lambda world, device: torch.device("cpu", 0))
    listener = _Listener(root)
    trained = run_mod.run_training(
        _train_cfg(epochs=1), isolated.bars, root, None, None, False, overwrite=True,
        listeners=[listener],
    )  # fmt: skip
    assert f"(foxhunt train --out {root} --overwrite, since" in str(listener.holder)
    assert trained.final == root / "checkpoints" / "tft_final_epoch1.safetensors"
    info = json.loads((root / "run.json").read_text())
    assert info["memory_budget"] is None and info["stop_reason"] == "epochs"
    assert not (root / "evaluation.json").exists()
    records = runtime.read_jsonl(root / "metrics.jsonl")
    assert [r["epoch"] for r in records if r["kind"] == "epoch"] == [1]
    assert RunConfig.load(root / "config.json").train.device == "cpu:0"


def _the_loop_gets_target_scaled_windows_a_memory_log_and_the_run_s_observers(
    isolated: _Isolated,
) -> None:
    """``fit`` trains on the training and validation windows divided by the run's target
    scale (``TargetScale.of`` the config's data, spec and scaler), with the run's memory log
    (memory.jsonl, written), a stop event, no resume state, the display, the listeners and
    this process's world; calibration uses the same scaled validation windows."""
    ((args, kw),) = isolated.calls.calls["fit"]
    root = RunDir(isolated.cwd / "runs" / "demo")
    cfg = RunConfig.load(root.config)
    data = isolated.child[0]["result"].data
    scale = TargetScale.of(cfg.data, data.spec, data.scaler)
    model, train, val = args[:3]
    assert isinstance(model, TFT) and args[3] == cfg and args[4] == RunDir(Path("runs/demo"))
    assert train.target_scale == scale == val.target_scale
    assert (len(train), len(val)) == (len(data.train), len(data.val))
    assert kw["memory"].path == Path("runs/demo/memory.jsonl")
    assert kw["memory"].device == torch.device("cpu")
    assert runtime.read_jsonl(root.memory)
    assert isinstance(kw["stop"], threading.Event) and not kw["stop"].is_set()
    assert kw["resume"] is None and kw["world"] == World()
    assert kw["progress"] is isolated.displays.progress
    assert list(kw["listeners"]) == [isolated.listener]
    (((_, windows, _), _),) = isolated.calls.calls["fit_calibration"]
    assert windows.target_scale == scale


# --- run_training on another rank of a torchrun job --------------------------------------------
# Rank 1 of a two-process job, run in this process: RANK/WORLD_SIZE set as torchrun sets them and
# ``process_group`` yielding a world without a process group (its collectives return this rank's
# own values), so rank 1's path through ``_train`` runs for real on the tiny config.


@dataclasses.dataclass(frozen=True)
class _Rank(World):
    """A rank of a 2-process job with no process group: no DDP wrapper, no sharded validation,
    collectives local; counts its barriers; with ``interrupt_at``, this process gets SIGINT
    after that optimizer step (the loop's test hook)."""

    size: int = 2
    interrupt_at: int | None = None
    barriers: list[None] = dataclasses.field(default_factory=list, compare=False)

    @property
    def distributed(self) -> bool:
        return False

    def barrier(self) -> None:
        self.barriers.append(None)

    def maybe_fail(self, step: int) -> None:
        if step == self.interrupt_at:
            signal.raise_signal(signal.SIGINT)


def _as_rank(mp: pytest.MonkeyPatch, world: _Rank) -> _Calls:
    """This process as ``world``'s rank under torchrun; ``prepare`` and ``fit`` recorded, the
    child preparation and its budget check refused."""
    mp.setenv("WORLD_SIZE", "2")
    mp.setenv("RANK", str(world.rank))
    mp.setenv("LOCAL_RANK", str(world.rank))
    mp.setattr(run_mod, "process_group", lambda device: contextlib.nullcontext(world))
    mp.setattr(run_mod, "measured_baseline", lambda: IMPORT_BASELINE_BYTES)
    calls = _Calls(mp)
    calls.wrap("prepare")
    calls.wrap("fit")
    calls.wrap("prepare_in_child", refuse=True)
    calls.wrap("child_fits_budget", refuse=True)
    return calls


def test_rank_1_trains_without_a_display_replaces_its_stale_memory_log_and_writes_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rank 1 of a fresh run with a memory budget (not isolated, on the CPU: the data is
    prepared here, no child asked for), with the scale choice but no baselines; no progress
    display even when one is given; the memory log a killed run of rank 1 left is replaced by
    this run's; it waits once for rank 0, writes none of the run's files and returns the
    run, no final weights, the loop's best epoch and loss, ``is_main`` False."""
    bars, root = tmp_path / "ES.parquet", tmp_path / "run"
    write_demo_bars(bars, n_bars=700, seed=1)
    RunDir(root).create()  # rank 0 made the run directory
    mine = root / "memory.rank1.jsonl"
    mine.write_text(json.dumps({"stale": True}) + "\n")
    world, displays = _Rank(rank=1), _Displays()
    calls = _as_rank(monkeypatch, world)
    trained = run_mod.run_training(
        _train_cfg(epochs=1), bars, root, None, "4GB", False, progress=displays
    )
    (result,) = calls.results["fit"]
    assert result.stop_reason == "epochs" and result.final_weights is None
    assert trained == run_mod.TrainedRun(
        root, None, result.state.best_epoch, result.state.best_val_loss, is_main=False
    )
    assert result.state.best_epoch in (0, 1) and result.state.best_val_loss < float("inf")
    ((args, kw),) = calls.calls["prepare"]
    assert args[0] == bars and kw["coordinator"] == world
    assert (kw["choose_scale"], kw["baselines"]) == (True, False)
    assert displays.made == [] and calls.calls["fit"][0][1]["progress"] is None
    records = runtime.read_jsonl(mine)
    assert records and all("stale" not in r for r in records)
    assert world.barriers == [None]
    assert sorted(p.name for p in root.iterdir()) == ["checkpoints", "memory.rank1.jsonl"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A feature store of 700 demo bars (``foxhunt features --shards``), its window cache for
    ``_train_cfg`` built (as rank 0 builds it)."""
    from foxhunt.data.store.write import write_feature_store

    cwd = tmp_path_factory.mktemp("store")
    write_demo_bars(cwd / "ES.parquet", n_bars=700, seed=1)
    write_feature_store(cwd / "ES.parquet", cwd / "store", horizon=_cfg().model.horizon)
    prepare(cwd / "store", _train_cfg(epochs=1), choose_scale=False, baselines=False)
    return cwd / "store"


def test_rank_1_from_a_feature_store_waits_for_rank_0_s_cache_and_stops_on_sigint(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rank 1 from a feature store: prepared here with its world as the coordinator (the
    cache is rank 0's: one barrier for it, one for the run directory), the scale choice, no
    baselines, no spill folder; without a memory log of its own yet it starts one; SIGINT
    after its first step: KeyboardInterrupt naming the rank, and no file of rank 0's written."""
    root = tmp_path / "run"
    RunDir(root).create()
    world = _Rank(rank=1, interrupt_at=1)
    calls = _as_rank(monkeypatch, world)
    with pytest.raises(KeyboardInterrupt) as e:
        run_mod.run_training(_train_cfg(epochs=1), store, root, None, None, False)
    assert str(e.value) == "rank 1: training interrupted"
    ((args, kw),) = calls.calls["prepare"]
    assert args[0] == store and args[1].model == _train_cfg(epochs=1).model
    assert kw == {"coordinator": world, "choose_scale": True, "baselines": False}
    assert len(world.barriers) == 2
    (result,) = calls.results["fit"]
    assert (result.stop_reason, result.state.step, result.state.epoch) == ("interrupted", 1, 0)
    assert runtime.read_jsonl(root / "memory.rank1.jsonl")
    assert sorted(p.name for p in root.iterdir()) == ["checkpoints", "memory.rank1.jsonl"]


def test_rank_1_resuming_keeps_its_memory_log_and_returns_rank_0_s_best_epoch(
    resumed: _Resumed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rank 1 resuming after the last complete epoch (2 of 2; the final weights not yet
    written): its memory log is kept up to that epoch (not removed as on a fresh start), no
    epoch is trained, and the result is the run, no final weights, and the best epoch and
    loss of best.json (rank 0's), ``is_main`` False."""
    root = tmp_path / "run"
    shutil.copytree(resumed.root, root)
    final = root / "checkpoints" / "tft_final_epoch2.safetensors"
    final.unlink()
    ckpt.sidecar_path(final).unlink()
    mine = root / "memory.rank1.jsonl"
    mine.write_text("".join(json.dumps({"epoch": e}) + "\n" for e in (1, 2, 3)))
    world = _Rank(rank=1)
    _as_rank(monkeypatch, world)
    trained = run_mod.run_training(_cfg(), None, None, root, None, False)
    best = json.loads((root / "checkpoints" / "best.json").read_text())
    assert trained == run_mod.TrainedRun(root, None, best["epoch"], best["val_loss"], is_main=False)
    assert runtime.read_jsonl(mine)[:2] == [{"epoch": 1}, {"epoch": 2}]
    assert all(r.get("epoch") != 3 for r in runtime.read_jsonl(mine))


def test_a_fresh_run_needs_both_the_baselines_and_the_data_ends(
    prepared: tuple[Path, PreparedData], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A preparation that returned the baselines without the data's ends, or the ends without
    the baselines, stops the fresh run before its description files are written."""
    bars, data = prepared
    ends = {"ES": "2024-01-05T00:00:00+00:00"}
    for baselines, data_end in ((None, ends), ({"naive": {}}, None)):
        monkeypatch.setattr(run_mod, "prepare", _preparing(data, baselines, data_end))
        root = tmp_path / f"run{data_end is None}"
        with pytest.raises(AssertionError):
            run_mod.run_training(_train_cfg(epochs=1), bars, root, None, None, False)
        assert not (root / "run.json").exists() and not (root / "config.json").exists()


def _preparing(data: PreparedData, baselines: Any, ends: Any) -> Any:
    """A ``prepare`` that returns ``data`` (and the config it is given) with these baselines
    and data ends."""

    def fake(bars: Path, cfg: RunConfig, **wants: Any) -> RunData:
        return RunData(data, cfg, baselines, 0, ends)

    return fake
