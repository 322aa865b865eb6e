"""``foxhunt train --ensemble N`` (:mod:`foxhunt.train.ensemble`) with each member's training
replaced by a recorder that writes a member's files: what each member is trained with, the
ensemble's ``run.json`` before, between and after the members, the files copied from member 0,
the refusals (whole messages), resume (which members train again, the recorded ones'
numbers), the peak and time totals (on a clock set by hand) and the callbacks.

The real ensemble is trained in ``tests/train/test_ensemble.py`` (slow)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
import types
from pathlib import Path
from typing import Any

import pytest

from foxhunt.config import RunConfig, demo
from foxhunt.errors import InputError, ModelDirError
from foxhunt.train import ensemble as ensemble_mod
from foxhunt.train.ensemble import EnsembleRun, MemberDone, train_ensemble
from foxhunt.version import __version__

KEEP = {
    "bars": "member-bars.parquet",
    "fingerprint": "fp",
    "symbols": ["ES"],
    "data_end": {"ES": "2024-01-02"},
    "windows": {"train": 10},
    "parameters": 1234,
    "precision": "fp32",
    "cpu_allocator": "balanced",
    "bar_interval_s": 60,
}
"""What member 0's run.json holds that the ensemble's run.json takes."""

MEMORY = "members trained one after another in one process: the peak is the largest member's"


class Clock:
    """``time.perf_counter``: 0, 1, 3, 6, 10, ... (each step one longer than the last)."""

    def __init__(self) -> None:
        self.now, self.step = 0.0, 0.0

    def __call__(self) -> float:
        now = self.now
        self.step += 1
        self.now += self.step
        return now


def _iso_seconds(text: str) -> None:
    """``text`` is a UTC time to the second, as ``isoformat(timespec="seconds")`` writes it."""
    parsed = dt.datetime.fromisoformat(text)
    assert parsed.utcoffset() == dt.timedelta(0)
    assert text == parsed.isoformat(timespec="seconds")


def write_member(
    where: Path,
    k: int,
    *,
    features: dict[str, Any] | None = None,
    missing: tuple[str, ...] = (),
    final: bool = True,
) -> None:
    """A finished member's files (``missing``: names not written)."""
    (where / "checkpoints").mkdir(parents=True, exist_ok=True)
    if final:
        (where / "checkpoints" / "tft_final_epoch1.safetensors").write_bytes(b"w")
        (where / "checkpoints" / "tft_final_epoch1.json").write_text("{}")
    files = {
        "config.json": {"member": k},
        "features.json": features
        or {"spec": {"n": 3}, "scaler": {"mean": 1.0}, "fingerprint": "abc", "member": k},
        "baselines.json": {"baselines": k},
        "instruments.json": {"instruments": k},
        "run.json": {**KEEP, "member_only": k, "stop_reason": "finished"},
    }
    for name, content in files.items():
        if name not in missing:
            (where / name).write_text(json.dumps(content))


class Trainer:
    """``run_training`` replaced: records each call (with the ensemble's run.json and lock at
    that moment) and writes the member's files."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.calls: list[dict[str, Any]] = []
        self.order: list[str] = []
        self.interrupt_at: int | None = None
        self.features: dict[int, dict[str, Any]] = {}
        self.missing: dict[int, tuple[str, ...]] = {}

    def __call__(self, cfg: RunConfig, *, bars: Path, out: Path, resume: Path | None, **kw: Any):
        k = len(self.calls)
        info = self.root / "run.json"
        lock = self.root / ".lock"
        self.calls.append(
            {
                "cfg": cfg,
                "bars": bars,
                "out": out,
                "resume": resume,
                "kw": kw,
                "run.json": json.loads(info.read_text()) if info.is_file() else None,
                "lock": json.loads(lock.read_text())["command"] if lock.is_file() else None,
                "old": (self.root / "old.txt").exists(),
                "old member": (self.root / "members" / "9").exists(),
            }
        )
        self.order.append("train")
        if k == self.interrupt_at:
            raise KeyboardInterrupt
        index = int(out.name)
        missing = self.missing.get(index, ())
        write_member(out, index, features=self.features.get(index), missing=missing)
        return types.SimpleNamespace(best_epoch=10 + index, best_val_loss=0.5 + index)


@pytest.fixture
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> types.SimpleNamespace:
    """Training, the peak RSS counters and the clock replaced; ``fakes.root``: the ensemble."""
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    root = tmp_path / "ens"
    trainer = Trainer(root)
    peaks = iter([300, 700, 500, 100])

    def reset_peak_rss() -> bool:
        trainer.order.append("reset")
        return True

    monkeypatch.setattr(ensemble_mod, "run_training", trainer)
    monkeypatch.setattr(ensemble_mod, "reset_peak_rss", reset_peak_rss)
    monkeypatch.setattr(ensemble_mod, "peak_rss_bytes", lambda: next(peaks))
    monkeypatch.setattr(ensemble_mod, "time", types.SimpleNamespace(perf_counter=Clock()))
    bars = tmp_path / "ES.parquet"
    bars.write_bytes(b"")
    return types.SimpleNamespace(root=root, trainer=trainer, bars=bars, tmp=tmp_path)


def _base() -> RunConfig:
    return demo().replace(train={"seed": 7, "lr": 0.0042})


def _fresh_run(fakes: types.SimpleNamespace, **kw: Any) -> EnsembleRun:
    kw = {"bars": fakes.bars, "out": fakes.root, "resume": None, **kw}
    return train_ensemble(_base(), kw.pop("n", 2), **kw)


# --- a fresh ensemble --------------------------------------------------------------------------


def test_members_train_with_consecutive_seeds_and_every_setting_passed_on(
    fakes: types.SimpleNamespace,
) -> None:
    progress, setup = object(), object()
    announced: list[tuple[int, int, int]] = []
    finished: list[tuple[MemberDone, int]] = []
    result = _fresh_run(
        fakes,
        memory_budget="1GB",
        allow_precision_change=True,
        progress=progress,
        process_setup=setup,
        isolate=True,
        on_member=lambda *a: announced.append(a),
        on_member_done=lambda *a: finished.append(a),
    )
    calls = fakes.trainer.calls
    assert [c["cfg"] for c in calls] == [
        _base().replace(train={"seed": 7}),
        _base().replace(train={"seed": 8}),
    ]
    assert [c["out"] for c in calls] == [fakes.root / "members/0", fakes.root / "members/1"]
    assert all(c["bars"] == fakes.bars and c["resume"] is None for c in calls)
    want_kw = {
        "memory_budget": "1GB",
        "allow_precision_change": True,
        "progress": progress,
        "process_setup": setup,
        "isolate": True,
    }
    assert all(c["kw"] == want_kw for c in calls)
    assert all(c["lock"] == f"foxhunt train --out {fakes.root}" for c in calls)
    assert fakes.trainer.order == ["reset", "train", "reset", "train"]
    for name in ("config.json", "features.json", "baselines.json", "instruments.json"):
        text = (fakes.root / "members/0" / name).read_text()
        assert (fakes.root / name).read_text() == text

    # clock: started 0; member 0 from 1 to 3 (2 s), member 1 from 6 to 10 (4 s)
    m0 = MemberDone(0, 7, "members/0", 2.0, 300, 10, 0.5)
    m1 = MemberDone(1, 8, "members/1", 4.0, 700, 11, 1.5)
    assert result == EnsembleRun(fakes.root, (m0, m1), 6.0, 700)
    assert announced == [(0, 2, 7), (1, 2, 8)]
    assert finished == [(m0, 2), (m1, 2)]
    # before member 1, the ensemble's run.json lists member 0
    assert calls[1]["run.json"]["members"] == [dataclasses.asdict(m0)]


def test_the_defaults_passed_on_to_each_member(fakes: types.SimpleNamespace) -> None:
    train_ensemble(_base(), 2, bars=fakes.bars, out=fakes.root, resume=None)
    want_kw = {
        "memory_budget": None,
        "allow_precision_change": False,
        "progress": None,
        "process_setup": None,
        "isolate": False,
    }
    assert [c["kw"] for c in fakes.trainer.calls] == [want_kw, want_kw]


def test_run_json_before_the_first_member_and_the_plan(
    fakes: types.SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(fakes.tmp)
    _fresh_run(fakes, bars="ES.parquet", n=3)  # relative, and a str
    first = fakes.trainer.calls[0]
    assert first["bars"] == Path("ES.parquet")  # as given, a Path
    info = first["run.json"]
    plan = {
        "format": 1,
        "members": ["members/0", "members/1", "members/2"],
        "seeds": [7, 8, 9],
        "combine": "mean of the members' calibrated log-return quantiles, then sorted",
    }
    assert set(info) == {"bars", "ensemble", "foxhunt_version", "started", "stop_reason"}
    assert info["bars"] == str(fakes.tmp / "ES.parquet")
    assert info["ensemble"] == plan
    assert info["foxhunt_version"] == __version__
    assert info["stop_reason"] == "running"
    _iso_seconds(info["started"])
    assert json.loads((fakes.root / "ensemble.json").read_text()) == plan


def test_the_base_config_is_saved_before_the_members(
    fakes: types.SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    saved: list[RunConfig] = []

    def train(cfg: RunConfig, **kw: Any) -> Any:
        saved.append(RunConfig.load(fakes.root / "config.json"))
        return fakes.trainer(cfg, **kw)

    monkeypatch.setattr(ensemble_mod, "run_training", train)
    _fresh_run(fakes)
    assert saved == [_base(), _base()]


def test_the_finished_ensembles_run_json_and_copied_files(fakes: types.SimpleNamespace) -> None:
    fakes.trainer.missing = {0: ("instruments.json",)}
    _fresh_run(fakes)
    root = fakes.root
    info = json.loads((root / "run.json").read_text())
    m0 = MemberDone(0, 7, "members/0", 2.0, 300, 10, 0.5)
    m1 = MemberDone(1, 8, "members/1", 4.0, 700, 11, 1.5)
    started, finished = info.pop("started"), info.pop("finished")
    _iso_seconds(started)
    _iso_seconds(finished)
    assert info == {
        "bars": "member-bars.parquet",  # member 0's
        "ensemble": {
            "format": 1,
            "members": ["members/0", "members/1"],
            "seeds": [7, 8],
            "combine": "mean of the members' calibrated log-return quantiles, then sorted",
        },
        "foxhunt_version": __version__,
        "stop_reason": "finished",
        **KEEP,
        "members": [dataclasses.asdict(m0), dataclasses.asdict(m1)],
        "seconds": 6.0,
        "peak_rss_bytes": 700,
        "memory": MEMORY,
    }
    for name in ("config.json", "features.json", "baselines.json"):
        assert (root / name).read_text() == (root / "members/0" / name).read_text()
    assert not (root / "instruments.json").exists()  # member 0 has none
    assert json.loads((root / "config.json").read_text()) == {"member": 0}


def test_an_ensemble_in_the_default_directory(
    fakes: types.SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(fakes.tmp)
    result = train_ensemble(_base(), 2, bars=fakes.bars, out=None, resume=None)
    assert result.root == Path("runs") / "demo"
    assert (fakes.tmp / "runs/demo/ensemble.json").is_file()
    assert fakes.trainer.calls[0]["out"] == Path("runs/demo/members/0")


@pytest.mark.parametrize("n", [None, 1, 0])
def test_fewer_than_two_members_are_refused(fakes: types.SimpleNamespace, n: int | None) -> None:
    with pytest.raises(InputError) as e:
        _fresh_run(fakes, n=n)
    assert str(e.value) == f"--ensemble must be >= 2 for an ensemble, got {n}"
    assert fakes.trainer.calls == []


def test_an_ensemble_needs_bars(fakes: types.SimpleNamespace) -> None:
    with pytest.raises(InputError) as e:
        _fresh_run(fakes, bars=None)
    assert str(e.value) == "foxhunt train: --bars FILE is required (or --resume RUN_DIR)"
    assert fakes.trainer.calls == []


def test_torchrun_is_refused(fakes: types.SimpleNamespace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "0")
    with pytest.raises(InputError) as e:
        _fresh_run(fakes)
    assert str(e.value) == (
        "--ensemble trains its members in one process; it cannot run under torchrun"
    )
    assert not fakes.root.exists()


def test_one_process_named_by_torchrun_variables_trains(
    fakes: types.SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORLD_SIZE", "1")
    assert len(_fresh_run(fakes).members) == 2


def test_an_existing_ensemble_is_refused_without_overwrite(fakes: types.SimpleNamespace) -> None:
    _fresh_run(fakes)
    with pytest.raises(InputError) as e:
        _fresh_run(fakes)
    root = fakes.root
    assert str(e.value) == (
        f"{root} already holds an ensemble; continue it with --resume {root}, start over "
        "with --overwrite, or choose another --out"
    )
    assert len(fakes.trainer.calls) == 2


@pytest.mark.parametrize("name", ["tft_final_epoch3", "tft_epoch_3"])
def test_a_trained_run_is_refused_without_overwrite(
    fakes: types.SimpleNamespace, name: str
) -> None:
    ckpts = fakes.root / "checkpoints"
    ckpts.mkdir(parents=True)
    if name.startswith("tft_final"):
        (ckpts / f"{name}.safetensors").write_bytes(b"w")
    (ckpts / f"{name}.json").write_text("{}")
    with pytest.raises(InputError) as e:
        _fresh_run(fakes)
    assert str(e.value) == (
        f"{fakes.root} already holds a trained run; replace it with --overwrite or choose "
        "another --out"
    )
    assert fakes.trainer.calls == []


def test_a_directory_without_a_run_takes_an_ensemble(fakes: types.SimpleNamespace) -> None:
    (fakes.root / "checkpoints").mkdir(parents=True)  # empty: no epoch, no final weights
    (fakes.root / "old.txt").write_text("mine")
    assert len(_fresh_run(fakes).members) == 2
    assert (fakes.root / "old.txt").read_text() == "mine"


def test_overwrite_clears_the_old_ensemble_before_member_0(fakes: types.SimpleNamespace) -> None:
    _fresh_run(fakes)
    write_member(fakes.root / "members" / "9", 9)
    (fakes.root / "checkpoints").mkdir()
    (fakes.root / "checkpoints" / "tft_epoch_1.json").write_text("{}")
    result = _fresh_run(fakes, overwrite=True)
    again = fakes.trainer.calls[2:]
    assert len(again) == 2 and not any(c["old member"] for c in again)
    assert all(c["lock"] == f"foxhunt train --out {fakes.root} --overwrite" for c in again)
    assert not (fakes.root / "checkpoints").exists()
    assert again[0]["run.json"]["stop_reason"] == "running"
    assert [m.peak_rss_bytes for m in result.members] == [500, 100]


# --- features agree ----------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["spec", "scaler", "fingerprint"])
def test_members_whose_features_differ_are_refused(fakes: types.SimpleNamespace, key: str) -> None:
    other = {"spec": {"n": 3}, "scaler": {"mean": 1.0}, "fingerprint": "abc"}
    other[key] = "else"
    fakes.trainer.features[1] = other
    with pytest.raises(ModelDirError) as e:
        _fresh_run(fakes)
    assert str(e.value) == (
        f"{fakes.root / 'members' / '1'}: features, scaler or data differ from member 0's"
    )
    assert json.loads((fakes.root / "run.json").read_text())["stop_reason"] == "running"


def test_a_third_member_that_differs_is_refused(fakes: types.SimpleNamespace) -> None:
    fakes.trainer.features[2] = {"spec": {"n": 4}, "scaler": {"mean": 1.0}, "fingerprint": "abc"}
    with pytest.raises(ModelDirError, match=r"members/2: features, scaler or data differ"):
        _fresh_run(fakes, n=3)


@pytest.mark.parametrize(
    ("member", "name", "what"),
    [(0, "features.json", "features.json"), (1, "features.json", "features.json"),
     (0, "run.json", "run.json")],
)  # fmt: skip
def test_a_member_without_its_files_is_named(
    fakes: types.SimpleNamespace, member: int, name: str, what: str
) -> None:
    fakes.trainer.missing = {member: (name,)}
    with pytest.raises(ModelDirError) as e:
        _fresh_run(fakes)
    assert str(e.value) == f"{fakes.root / 'members' / str(member) / name}: {what} is missing"


# --- interrupted and resumed -------------------------------------------------------------------


def _interrupted(fakes: types.SimpleNamespace) -> None:
    fakes.trainer.interrupt_at = 1
    with pytest.raises(KeyboardInterrupt):
        _fresh_run(fakes)
    fakes.trainer.interrupt_at = None


def test_an_interrupt_keeps_the_finished_member_and_resume_trains_the_rest(
    fakes: types.SimpleNamespace,
) -> None:
    _interrupted(fakes)
    info = json.loads((fakes.root / "run.json").read_text())
    m0 = MemberDone(0, 7, "members/0", 2.0, 300, 10, 0.5)
    assert info["stop_reason"] == "running"
    assert info["members"] == [dataclasses.asdict(m0)]
    (fakes.root / "members/1/checkpoints").mkdir(parents=True)
    (fakes.root / "members/1/checkpoints/tft_epoch_1.json").write_text("{}")  # a complete epoch

    announced: list[tuple[int, int, int]] = []
    done: list[tuple[MemberDone, int]] = []
    other = demo().replace(train={"lr": 0.9})  # ignored: the ensemble's own config
    result = train_ensemble(
        other, None, bars=None, out=None, resume=fakes.root,
        on_member=lambda *a: announced.append(a), on_member_done=lambda *a: done.append(a),
    )  # fmt: skip
    call = fakes.trainer.calls[-1]
    assert len(fakes.trainer.calls) == 3
    assert call["cfg"] == _base().replace(train={"seed": 8})
    assert call["bars"] == Path(str(fakes.bars.resolve()))
    assert call["resume"] == fakes.root / "members/1"
    assert call["lock"] == f"foxhunt train --resume {fakes.root}"
    # clock: member 1 (the interrupted call) from 6; then resumed: started 10, member 1 15 to 21
    m1 = MemberDone(1, 8, "members/1", 6.0, 700, 11, 1.5)
    assert result == EnsembleRun(fakes.root, (m0, m1), 8.0, 700)
    assert announced == [(1, 2, 8)] and done == [(m1, 2)]
    assert json.loads((fakes.root / "run.json").read_text())["stop_reason"] == "finished"


def test_resume_with_bars_given_and_the_count_checked(fakes: types.SimpleNamespace) -> None:
    _interrupted(fakes)
    other = fakes.tmp / "other.parquet"
    train_ensemble(_base(), 2, bars=other, out=None, resume=fakes.root)
    assert fakes.trainer.calls[-1]["bars"] == other
    assert fakes.trainer.calls[-1]["resume"] is None


def test_resume_with_another_count_is_refused(fakes: types.SimpleNamespace) -> None:
    _interrupted(fakes)
    with pytest.raises(InputError) as e:
        train_ensemble(_base(), 3, bars=None, out=None, resume=fakes.root)
    assert str(e.value) == f"--ensemble 3: {fakes.root} is an ensemble of 2 members"


def test_resume_of_a_finished_ensemble_is_refused(fakes: types.SimpleNamespace) -> None:
    _fresh_run(fakes)
    with pytest.raises(InputError) as e:
        train_ensemble(_base(), None, bars=None, out=None, resume=fakes.root)
    assert str(e.value) == f"{fakes.root}: this ensemble already finished; nothing to resume"


def test_resume_of_a_directory_that_is_no_ensemble_is_refused(fakes: types.SimpleNamespace) -> None:
    fakes.root.mkdir()
    with pytest.raises(ModelDirError) as e:
        train_ensemble(_base(), None, bars=None, out=None, resume=fakes.root)
    assert str(e.value) == f"{fakes.root}: not an ensemble (no ensemble.json)"


def test_resume_of_no_directory_is_refused(fakes: types.SimpleNamespace) -> None:
    with pytest.raises(ModelDirError) as e:
        train_ensemble(_base(), None, bars=None, out=None, resume=fakes.root)
    assert str(e.value) == f"{fakes.root}: no such run directory to resume"


def test_resume_of_a_run_json_that_is_no_object_is_refused(fakes: types.SimpleNamespace) -> None:
    _interrupted(fakes)
    (fakes.root / "run.json").write_text("[]")
    with pytest.raises(ModelDirError) as e:
        train_ensemble(_base(), None, bars=None, out=None, resume=fakes.root)
    assert str(e.value) == f"{fakes.root / 'run.json'}: not a JSON object"


@pytest.mark.parametrize("bars", [None, ""])
def test_resume_without_recorded_bars_needs_bars(
    fakes: types.SimpleNamespace, bars: str | None
) -> None:
    _interrupted(fakes)
    info = json.loads((fakes.root / "run.json").read_text())
    info["bars"] = bars
    (fakes.root / "run.json").write_text(json.dumps(info))
    with pytest.raises(ModelDirError) as e:
        train_ensemble(_base(), None, bars=None, out=None, resume=fakes.root)
    assert str(e.value) == f"{fakes.root / 'run.json'}: no bars path recorded; pass --bars FILE"


def test_resume_retrains_a_recorded_member_without_final_weights(
    fakes: types.SimpleNamespace,
) -> None:
    _interrupted(fakes)
    for p in (fakes.root / "members/0/checkpoints").iterdir():
        p.unlink()
    info = json.loads((fakes.root / "run.json").read_text())
    del info["members"]  # and a run.json that lists none is read as none
    (fakes.root / "run.json").write_text(json.dumps(info))
    result = train_ensemble(_base(), None, bars=None, out=None, resume=fakes.root)
    assert [c["out"].name for c in fakes.trainer.calls[2:]] == ["0", "1"]
    assert [m.index for m in result.members] == [0, 1]


def test_resume_keeps_a_recorded_member_as_recorded(fakes: types.SimpleNamespace) -> None:
    _interrupted(fakes)
    info = json.loads((fakes.root / "run.json").read_text())
    recorded = {**info["members"][0], "seconds": 99.0, "peak_rss_bytes": 12345}
    info["members"] = [recorded]
    (fakes.root / "run.json").write_text(json.dumps(info))
    result = train_ensemble(_base(), None, bars=None, out=None, resume=fakes.root)
    assert result.members[0] == MemberDone(**recorded)
    assert [c["out"].name for c in fakes.trainer.calls[2:]] == ["1"]
    assert result.peak_rss_bytes == 12345 and result.seconds == 99.0 + 6.0


def test_a_finished_member_run_json_does_not_list_is_read_from_its_files(
    fakes: types.SimpleNamespace,
) -> None:
    _interrupted(fakes)
    where = fakes.root / "members/1"
    write_member(where, 1)
    (where / "run.json").write_text(json.dumps({"seconds": 12.5}))
    lines = [{"peak_rss_bytes": 100}, {"point": "x"}, {"peak_rss_bytes": 250}]
    (where / "memory.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    (where / "checkpoints/best.json").write_text(json.dumps({"epoch": 2, "val_loss": 0.25}))
    announced: list[tuple[int, int, int]] = []
    result = train_ensemble(
        _base(), None, bars=None, out=None, resume=fakes.root,
        on_member=lambda *a: announced.append(a),
    )  # fmt: skip
    assert len(fakes.trainer.calls) == 2  # nothing trained again
    assert result.members[1] == MemberDone(1, 8, "members/1", 12.5, 250, 2, 0.25)
    assert announced == [(1, 2, 8)]


@pytest.mark.parametrize("memory", [None, "", '{"point": "x"}\n'])
def test_a_recorded_member_without_its_numbers(
    fakes: types.SimpleNamespace, memory: str | None
) -> None:
    _interrupted(fakes)
    where = fakes.root / "members/1"
    write_member(where, 1)
    (where / "run.json").write_text("{}")
    if memory is not None:
        (where / "memory.jsonl").write_text(memory)
    result = train_ensemble(_base(), None, bars=None, out=None, resume=fakes.root)
    m = result.members[1]
    assert (m.index, m.seed, m.dir, m.peak_rss_bytes, m.best_epoch) == (1, 8, "members/1", 0, 0)
    assert math.isnan(m.seconds) and math.isnan(m.best_val_loss)


def test_a_corrupt_run_json_of_the_ensemble_is_named(fakes: types.SimpleNamespace) -> None:
    _interrupted(fakes)
    (fakes.root / "run.json").write_text("{")
    with pytest.raises(ModelDirError) as e:
        train_ensemble(_base(), None, bars=None, out=None, resume=fakes.root)
    assert str(e.value) == f"{fakes.root / 'run.json'}: run.json is corrupt (not valid JSON)"


def test_a_recorded_member_without_its_run_json_is_named(fakes: types.SimpleNamespace) -> None:
    _interrupted(fakes)
    where = fakes.root / "members/1"
    write_member(where, 1, missing=("run.json",))
    with pytest.raises(ModelDirError) as e:
        train_ensemble(_base(), None, bars=None, out=None, resume=fakes.root)
    assert str(e.value) == f"{where / 'run.json'}: run.json is missing"


def test_update_merges_into_run_json_or_starts_one(tmp_path: Path) -> None:
    ensemble_mod._update(tmp_path, a=1)
    assert json.loads((tmp_path / "run.json").read_text()) == {"a": 1}
    ensemble_mod._update(tmp_path, b=2, a=3)
    assert json.loads((tmp_path / "run.json").read_text()) == {"a": 3, "b": 2}
    (tmp_path / "run.json").write_text("[")
    with pytest.raises(ModelDirError) as e:
        ensemble_mod._update(tmp_path, a=1)
    assert str(e.value) == f"{tmp_path / 'run.json'}: run.json is corrupt (not valid JSON)"
