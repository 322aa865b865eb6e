"""``foxhunt.quantize.recipe`` piece by piece: which windows calibrate and score, which bars they
come from, what ``quantize_run`` measures and records (its fresh-process measurement faked)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from demo_run import DemoRun
from foxhunt.data.sources.demo import write_demo_bars
from foxhunt.errors import InputError, ModelDirError
from foxhunt.quantize import bench, recipe
from foxhunt.quantize.model import MARKER


class _Windows:
    """Stands in for a WindowDataset: ``batch`` returns the indices it was given."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def batch(self, idx: list[int]) -> list[int]:
        return list(idx)


def test_spread_takes_evenly_spaced_indices_from_both_ends() -> None:
    assert recipe._spread(3, 5) == [0, 1, 2]
    assert recipe._spread(4, 4) == [0, 1, 2, 3]
    assert recipe._spread(10, 4) == [0, 3, 6, 9]
    assert recipe._spread(100, 3) == [0, 50, 99]
    assert recipe._spread(5, 1) == [0]


def test_batches_cover_the_indices_once_in_order() -> None:
    windows = _Windows(7)
    assert list(recipe._batches(windows, [6, 0, 1, 2, 5], 2)) == [[6, 0], [1, 2], [5]]
    assert list(recipe._batches(windows, [3], 128)) == [[3]]
    assert list(recipe._batches(windows, [], 4)) == []


def _loaded(tmp_path: Path, info: object | None) -> SimpleNamespace:
    """A LoadedModel's fields that choosing windows reads; ``info`` is run.json (None: absent)."""
    run_info = tmp_path / "run.json"
    if info is not None:
        run_info.write_text(info if isinstance(info, str) else json.dumps(info))
    model = SimpleNamespace(encoder_length=12, horizon=3)
    return SimpleNamespace(
        run=SimpleNamespace(run_info=run_info),
        config=SimpleNamespace(model=model, data="the run's inputs"),
        spec="spec",
        scaler="scaler",
        fingerprint="fingerprint",
        instruments={"ES": "table"},
    )


def test_calibration_bars_given_are_read_as_the_model_reads_inference_bars(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import foxhunt.data.pipeline as pipeline

    seen: list[tuple[tuple, dict]] = []
    monkeypatch.setattr(
        pipeline, "prepare_inference_data", lambda *a, **kw: seen.append((a, kw)) or "windows"
    )
    loaded = _loaded(tmp_path, None)
    bars = tmp_path / "cal.csv"
    assert recipe._calibration_windows(loaded, bars) == "windows"
    assert seen == [
        (
            (bars, "spec", "scaler", 12, 3),
            {"with_target": False, "instruments": {"ES": "table"}, "inputs": "the run's inputs"},
        )
    ]


def test_without_calibration_bars_the_run_s_validation_split_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import foxhunt.data.pipeline as pipeline

    train = tmp_path / "train.parquet"
    train.write_text("bars")
    seen: list[tuple] = []

    def prepared(path: Path, config: object) -> SimpleNamespace:
        seen.append((path, config))
        return SimpleNamespace(val="validation windows")

    monkeypatch.setattr(pipeline, "prepare_training_data", prepared)
    loaded = _loaded(tmp_path, {"bars": str(train)})
    assert recipe._calibration_windows(loaded, None) == "validation windows"
    assert seen == [(train, loaded.config)]


@pytest.mark.parametrize(
    "info",
    [None, {}, {"bars": ""}, {"bars": "gone.parquet"}, ["bars"]],
    ids=["no-run-json", "no-bars", "empty", "moved", "not-a-dict"],
)
def test_static_calibration_without_bars_is_refused(tmp_path: Path, info: object) -> None:
    with pytest.raises(InputError) as err:
        recipe._calibration_windows(_loaded(tmp_path, info), None)
    assert str(err.value) == (
        "--mode static needs --calibration-bars (the run's training bars are not available)"
    )
    windows, where = recipe._test_windows(_loaded(tmp_path, info), None)
    assert windows is None and where == "no bars (pass --bars)"


def test_a_corrupt_run_json_is_named(tmp_path: Path) -> None:
    for choose in (
        lambda loaded: recipe._calibration_windows(loaded, None),
        lambda loaded: recipe._test_windows(loaded, None),
    ):
        with pytest.raises(ModelDirError, match=r"run\.json: run\.json is corrupt"):
            choose(_loaded(tmp_path, "{not json"))


def test_the_test_windows_come_from_the_bars_given_else_the_run_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import foxhunt.data.pipeline as pipeline

    seen: list[tuple] = []
    monkeypatch.setattr(
        pipeline,
        "evaluation_windows",
        lambda *a, ends: seen.append((*a, ends)) or ("windows", "test split"),
    )
    train = tmp_path / "train.parquet"
    train.write_text("bars")
    given = tmp_path / "other.csv"
    loaded = _loaded(tmp_path, {"bars": str(train)})
    assert recipe._test_windows(loaded, given) == ("windows", f"test split of {given}")
    assert recipe._test_windows(loaded, None) == ("windows", f"test split of {train}")
    rest = ("the run's config", "spec", "scaler", "fingerprint", {"ES": "table"})
    loaded.config = rest[0]
    recipe._test_windows(loaded, given)
    assert [a[0] for a in seen] == [given, train, given]
    assert seen[-1][1:-1] == rest
    assert seen[-1][-1] is None  # this run.json records no data_end


def test_nothing_new_to_score_names_what_quantize_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """evaluate's remedy, --windows all, is no flag of quantize."""
    import foxhunt.data.pipeline as pipeline
    from foxhunt.errors import DataError

    def nothing_new(*a: object, ends: object) -> None:
        raise DataError(
            "b.csv: all 49 windows have ... nothing new to score; --windows all scores them"
        )

    monkeypatch.setattr(pipeline, "evaluation_windows", nothing_new)
    loaded = _loaded(tmp_path, {"bars": str(tmp_path / "train.parquet")})
    with pytest.raises(DataError) as refused:
        recipe._test_windows(loaded, tmp_path / "b.csv")
    assert str(refused.value) == (
        "b.csv: all 49 windows have ... nothing new to score; quantize scores bars after the "
        "training end, or the run's own bars (their test split): pass such --bars"
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"precision": "int4"}, "--precision must be int8 or bf16, got 'int4'"),
        ({"mode": "qat"}, "--mode must be dynamic or static, got 'qat'"),
        (
            {"precision": "bf16", "mode": "static"},
            "--mode static and --calibration-bars apply to --precision int8 only",
        ),
        (
            {"precision": "bf16", "calibration_bars": Path("x.csv")},
            "--mode static and --calibration-bars apply to --precision int8 only",
        ),
    ],
)
def test_bad_arguments_are_refused_before_anything_is_read(
    tmp_path: Path, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(InputError) as err:
        recipe.quantize_run(tmp_path / "no-such-run", tmp_path / "out", **kwargs)
    assert str(err.value) == message
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_quantize_run_measures_both_directories_and_records_the_comparison(
    demo_run: DemoRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[Path, tuple[int, ...], int]] = []

    def fake_measure(path: Path, sizes: tuple[int, ...] = (), *, repeats: int = 0) -> dict:
        calls.append((path, sizes, repeats))
        return {"measured": path.name}

    def no_calibration(*_a: object, **_k: object) -> None:
        raise AssertionError("dynamic int8 calibrates nothing")

    monkeypatch.setattr(bench, "measure_in_subprocess", fake_measure)
    monkeypatch.setattr(recipe, "_calibration_windows", no_calibration)
    out = tmp_path / "int8"
    result = recipe.quantize_run(demo_run.run, out)
    assert calls == [(demo_run.run, (1, 32), 10), (out, (1, 32), 10)]
    assert result["inference"] == {
        "fp32": {"measured": demo_run.run.name},
        "quantized": {"measured": "int8"},
    }
    assert result["source"] == str(demo_run.run) and result["out"] == str(out)
    assert result["precision"] == "int8" and result["mode"] == "dynamic"
    # the run's training bars as its run.json records them (the demo run's, wherever trained)
    assert result["pinball_on"].startswith("test split of ")
    assert result["pinball_on"].endswith(demo_run.bars.name)
    marker = json.loads((out / MARKER).read_text())
    assert marker["comparison"] == json.loads(json.dumps(result))
    calls.clear()
    recipe.quantize_run(demo_run.run, tmp_path / "again", repeats=3)
    assert [c[2] for c in calls] == [3, 3]


@pytest.mark.slow
def test_static_calibration_reads_the_bars_given(
    demo_run: DemoRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import foxhunt.data.pipeline as pipeline

    read: list[Path] = []
    real = pipeline.prepare_inference_data

    def spy(bars: Path, *a: object, **kw: object) -> object:
        read.append(bars)
        return real(bars, *a, **kw)

    monkeypatch.setattr(pipeline, "prepare_inference_data", spy)
    result = recipe.quantize_run(
        demo_run.run,
        tmp_path / "static",
        mode="static",
        calibration_bars=demo_run.bars,
        measure=False,
    )
    assert result["mode"] == "static"
    assert read == [demo_run.bars]


@pytest.mark.slow
def test_without_bars_anywhere_no_pinball_is_compared(demo_run: DemoRun, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(demo_run.run, run)
    (run / "run.json").unlink()
    result = recipe.quantize_run(run, tmp_path / "int8", measure=False)
    assert result["pinball_on"] == "no bars (pass --bars)"
    assert "pinball" not in result and "inference" not in result


@pytest.mark.slow
def test_the_pinball_is_compared_on_the_bars_given(demo_run: DemoRun, tmp_path: Path) -> None:
    other = tmp_path / "ES_later.parquet"
    write_demo_bars(other, n_bars=400, seed=11, start="2024-03-04")  # after the training bars
    result = recipe.quantize_run(demo_run.run, tmp_path / "int8", bars=other, measure=False)
    assert result["pinball_on"] == f"windows after the training bars of {other}"
    assert set(result["pinball"]) == {"fp32", "quantized"}
