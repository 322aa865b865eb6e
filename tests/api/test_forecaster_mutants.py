"""``TFTForecaster`` without training: what each method hands the CLI's code (training,
prediction, evaluation and streaming replaced by recorders), its config, scratch directory,
repr and refusals. ``tests/test_api.py`` runs the real thing end to end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

import foxhunt.infer.evaluate as evaluate_mod
import foxhunt.infer.forecaster as forecaster_mod
import foxhunt.infer.predict as predict_mod
import foxhunt.train.ensemble as ensemble_mod
import foxhunt.train.run as run_mod
from foxhunt.api.forecaster import TFTForecaster
from foxhunt.artifacts.lock import LOCK_NAME
from foxhunt.artifacts.rundir import RunDir
from foxhunt.config import preset
from foxhunt.data.sources.demo import demo_bars
from foxhunt.errors import InputError

NOT_FITTED = "TFTForecaster: not fitted; call fit(bars) or TFTForecaster.load(dir)"


def _bars_without_symbol(n: int = 50) -> pl.DataFrame:
    return demo_bars(n, seed=4).drop("symbol")


@pytest.fixture
def trainers(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Replace training (single and ensemble) by a recorder that writes the run's config with
    ``seed`` 99, as training records the config it ran."""
    calls: list[dict[str, Any]] = []

    def record(kind: str):  # noqa: ANN202
        def fake(cfg: Any, **kw: Any) -> None:
            calls.append({"kind": kind, "cfg": cfg, **kw})
            run = RunDir(Path(kw["out"]))
            run.create()
            cfg.replace(train={"seed": 99}).save(run.config)

        return fake

    monkeypatch.setattr(run_mod, "run_training", record("single"))
    monkeypatch.setattr(ensemble_mod, "train_ensemble", record("ensemble"))
    return calls


def test_the_default_is_the_demo_preset_and_overrides_reach_their_section() -> None:
    assert TFTForecaster().config == preset("demo")
    fc = TFTForecaster(data={"tz": "America/Chicago"}, train={"max_steps": 7})
    assert fc.config.data.tz == "America/Chicago" and fc.config.train.max_steps == 7
    assert fc.config.model == preset("demo").model
    assert TFTForecaster("tft-225", model={"horizon": 4}).config.model.horizon == 4


def test_an_unfitted_forecaster_says_so(tmp_path: Path) -> None:
    fc = TFTForecaster()
    assert fc.work_dir.name.startswith("foxhunt-") and fc.work_dir.is_dir()
    assert fc.run_dir == fc.work_dir / "run"
    assert repr(fc) == "TFTForecaster(preset='demo', not fitted)"
    for call in (
        lambda: fc.predict(tmp_path / "x.csv"),
        lambda: fc.evaluate(tmp_path / "x.csv"),
        lambda: fc.save(tmp_path / "copy"),
        lambda: fc.stream(),
    ):
        with pytest.raises(InputError) as err:
            call()
        assert str(err.value) == NOT_FITTED


def test_fit_hands_training_the_bars_and_the_run_directory(
    trainers: list[dict[str, Any]], tmp_path: Path
) -> None:
    fc = TFTForecaster(train={"max_steps": 3})
    assert fc.fit(_bars_without_symbol(), symbol="NQ") is fc
    (call,) = trainers
    assert call["kind"] == "single" and call["cfg"] == fc.config.replace(train={"seed": 0})
    assert call["out"] == fc.run_dir == fc.work_dir / "run"
    assert call["resume"] is None and call["memory_budget"] is None
    assert call["allow_precision_change"] is False
    assert call["overwrite"] is True  # the object's own run directory: refitting replaces it
    assert call["bars"].parent == fc.work_dir
    assert pl.read_parquet(call["bars"])["symbol"].unique().to_list() == ["NQ"]
    assert fc.config.train.seed == 99  # read back from the run directory
    assert repr(fc) == f"TFTForecaster(preset='demo', run_dir={str(fc.run_dir)!r})"


def test_a_named_run_directory_is_overwritten_only_when_asked(
    trainers: list[dict[str, Any]], tmp_path: Path
) -> None:
    bars = tmp_path / "bars.parquet"
    demo_bars(50, seed=4).write_parquet(bars)
    named = TFTForecaster(run_dir=tmp_path / "run")
    named.fit(bars)
    named.fit(bars, overwrite=True)
    assert [c["overwrite"] for c in trainers] == [False, True]
    assert [c["out"] for c in trainers] == [tmp_path / "run"] * 2
    assert [c["bars"] for c in trainers] == [bars, bars]  # a path is read where it is


def test_fit_with_an_ensemble_trains_n_members(
    trainers: list[dict[str, Any]], tmp_path: Path
) -> None:
    fc = TFTForecaster()
    fc.fit(demo_bars(50, seed=4), ensemble=3)
    fc.fit(demo_bars(50, seed=4), ensemble=1)
    assert [(c["kind"], c.get("n")) for c in trainers] == [("ensemble", 3), ("single", None)]
    with pytest.raises(InputError) as err:
        fc.fit(demo_bars(50, seed=4), ensemble=0)
    assert str(err.value) == "TFTForecaster.fit: ensemble must be >= 1, got 0"
    assert len(trainers) == 2


def test_predict_and_evaluate_hand_over_the_run_bars_and_options(
    trainers: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str, tuple, dict]] = []

    def fake_predict(run: Path, bars: Path, out: Path, **kw: Any) -> None:
        seen.append(("predict", (run, bars, out), kw))
        assert pl.read_parquet(bars)["symbol"].unique().to_list() == ["NQ"]
        pl.DataFrame({"horizon": [1, 2]}).write_parquet(out)

    def fake_evaluate(run: Path, bars: Path, **kw: Any) -> dict[str, Any]:
        seen.append(("evaluate", (run, bars, kw["out"]), kw))
        assert pl.read_parquet(bars)["symbol"].unique().to_list() == ["NQ"]
        return {"tft_beats": []}

    monkeypatch.setattr(predict_mod, "predict_to_file", fake_predict)
    monkeypatch.setattr(evaluate_mod, "evaluate_model", fake_evaluate)
    fc = TFTForecaster(device="meta").fit(demo_bars(50, seed=4))
    got = fc.predict(_bars_without_symbol(), symbol="NQ")
    assert isinstance(got, pl.DataFrame) and got["horizon"].to_list() == [1, 2]
    fc.predict(_bars_without_symbol(), symbol="NQ", long=True, batch_size=7)
    assert fc.evaluate(_bars_without_symbol(), symbol="NQ") == {
        "tft_beats": [],
        "bars": "DataFrame",  # not the scratch file, gone by then
    }
    fc.evaluate(_bars_without_symbol(), symbol="NQ", batch_size=5, windows="all", tz="UTC")
    (p1, p2, e1, e2) = seen
    for _, (run, bars, out), _kw in seen:
        assert run == fc.run_dir and bars.parent == fc.work_dir
        assert out.parent.parent == fc.work_dir and not out.parent.exists()  # cleaned up
    assert [s[1][2].name for s in seen] == ["forecast.parquet"] * 2 + ["evaluation.json"] * 2
    plain = {"strict": False, "read": {}}
    assert p1[2] == {"batch_size": 256, "device": "meta", "long": False} | plain
    assert p2[2] == {"batch_size": 7, "device": "meta", "long": True} | plain
    assert {k: v for k, v in e1[2].items() if k != "out"} == {
        "batch_size": 256,
        "device": "meta",
        "scope": None,
    } | plain
    assert e2[2]["batch_size"] == 5 and e2[2]["scope"] == "all" and e2[2]["read"] == {"tz": "UTC"}
    assert not list(fc.work_dir.glob("dataframe-*.parquet"))[1:]  # only fit's frame is kept


def test_load_and_stream_keep_the_device(
    trainers: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    TFTForecaster(run_dir=tmp_path / "run").fit(demo_bars(50, seed=4))
    loaded = TFTForecaster.load(tmp_path / "run", device="meta")
    assert loaded.device == "meta" and loaded.run_dir == tmp_path / "run"
    assert loaded.config.train.seed == 99
    assert TFTForecaster.load(tmp_path / "run").device == "cpu"
    opened: list[tuple[Path, dict]] = []
    monkeypatch.setattr(
        forecaster_mod.Forecaster,
        "load",
        classmethod(lambda cls, run, **kw: opened.append((run, kw)) or "live"),
    )
    assert loaded.stream(symbols=["ES"], history=300, engine="onnx", tz="Asia/Tokyo") == "live"
    assert loaded.stream() == "live"
    given = {"symbols": ["ES"], "history": 300, "device": "meta", "engine": "onnx"}
    default = {"symbols": None, "history": None, "device": "meta", "engine": "torch"}
    assert opened == [
        (tmp_path / "run", given | {"tz": "Asia/Tokyo"}),
        (tmp_path / "run", default | {"tz": None}),
    ]


def test_save_copies_the_run_without_its_lock_into_a_new_or_empty_directory(
    trainers: list[dict[str, Any]], tmp_path: Path
) -> None:
    fc = TFTForecaster(run_dir=tmp_path / "run").fit(demo_bars(50, seed=4))
    (fc.run_dir / LOCK_NAME).write_text("12345")
    (fc.run_dir / "report.md").write_text("the report")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert fc.save(empty) == empty  # an empty directory is filled
    assert (empty / "report.md").read_text() == "the report"
    assert (empty / "config.json").is_file() and not (empty / LOCK_NAME).exists()
    assert fc.save(tmp_path / "new") == tmp_path / "new"
    assert not (tmp_path / "new" / LOCK_NAME).exists()
    assert fc.save(fc.run_dir) == fc.run_dir  # onto itself: nothing to do
    for taken in (empty, tmp_path / "afile"):
        (tmp_path / "afile").write_text("x")
        with pytest.raises(InputError) as err:
            fc.save(taken)
        assert str(err.value) == f"save: {taken} exists and is not an empty directory"
