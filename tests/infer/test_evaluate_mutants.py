"""Exact behaviour of ``foxhunt.infer.evaluate`` (the mutation survivors' cases), without a
trained model: ``score`` over a recorder of the model's quantiles and hand-made baselines
against ``QuantileScores`` fed in one piece, the per-symbol and pooled verdicts on hand-made
losses against ``compare``/``compare_per_group``, every argument ``evaluate_model`` hands its
collaborators (each replaced by a recorder) and the result it builds, its refusals word for
word, and where ``_training`` and ``_record`` look and write."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import polars as pl
import pytest
import torch

import foxhunt.infer.evaluate as evaluate_mod
from foxhunt.artifacts.rundir import RunDir
from foxhunt.data.scale.scaler import ScalerParams
from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.errors import DataError, InputError, ModelDirError
from foxhunt.infer.evaluate import (
    _record,
    _training,
    baseline_forecasts,
    evaluate_model,
    per_symbol,
    score,
    symbols_beaten,
    verdicts,
)
from foxhunt.infer.scores import QuantileScores
from foxhunt.infer.significance import compare, compare_per_group
from foxhunt.model.tft import TFT

from .forward_fakes import (
    SPEC,
    FakeProgress,
    ForwardRecorder,
    H,
    assert_forwarded_in_sevens,
    recording,
    tiny_config,
    windows,
)

QUANTILES = (0.02, 0.1, 0.5, 0.9, 0.98)
TARGET_STD = (1e-3, 2e-3, 4e-3)


def _windows(rows_per_symbol: int = 15) -> WindowDataset:
    return windows(rows_per_symbol, with_target=True)


def _loaded() -> SimpleNamespace:
    """What ``score`` reads of a ``LoadedModel`` (the model left in training mode: ``score``
    must put it in eval mode itself)."""
    torch.manual_seed(0)
    cfg = tiny_config(QUANTILES)
    return SimpleNamespace(
        config=SimpleNamespace(model=cfg, train=SimpleNamespace(precision="bf16")),
        model=TFT(cfg).train(),
        scaler=ScalerParams(SPEC.inputs, (0.0,) * 4, (1.0,) * 4, TARGET_STD),
    )


def _recorder(n: int, forward: Any = "ROWS") -> ForwardRecorder:
    """Window ``i``'s quantiles are ``table[i]`` (sorted, float32)."""
    g = np.random.default_rng(7)
    table = np.sort(g.normal(size=(n, H, len(QUANTILES))) * 3e-3, axis=-1)
    return ForwardRecorder(torch.from_numpy(table.astype(np.float32)), evaluate_mod, forward)


class Baseline:
    """A baseline whose window ``i`` forecasts ``table[i]``; records the ranges asked for."""

    def __init__(self, table: torch.Tensor) -> None:
        self.table = table
        self.asked: list[tuple[int, int]] = []

    def predict(self, start: int, stop: int) -> torch.Tensor:
        self.asked.append((start, stop))
        return self.table[start:stop]


# ---------------------------------------------------------------- score


def _score(
    monkeypatch: pytest.MonkeyPatch, *, batch_size: int, progress: Any = None, forward: Any = "ROWS"
) -> tuple[Any, ForwardRecorder, dict[str, Baseline], WindowDataset, SimpleNamespace]:
    windows, loaded = _windows(), _loaded()
    n = len(windows)
    rec = _recorder(n, forward)
    rec.install(monkeypatch)
    g = np.random.default_rng(11)
    baselines = {
        "zero": Baseline(torch.zeros(n, H, len(QUANTILES), dtype=torch.float64)),
        "wide": Baseline(
            torch.from_numpy(np.sort(g.normal(size=(n, H, len(QUANTILES))) * 5e-3, axis=-1))
        ),
    }
    got = score(
        loaded,  # type: ignore[arg-type]
        windows,
        baselines,  # type: ignore[arg-type]
        batch_size=batch_size,
        device=torch.device("cpu"),
        progress=progress,
    )
    return got, rec, baselines, windows, loaded


def test_score_equals_scores_fed_in_one_piece(monkeypatch: pytest.MonkeyPatch) -> None:
    (results, losses, coverage), rec, baselines, windows, _ = _score(monkeypatch, batch_size=4)
    n = len(windows)
    assert n == 18 and [c["b"] for c in rec.calls] == [4, 4, 4, 4, 2]
    # unscaled targets: the scaled ones times each horizon's target_std
    y = windows.batch(list(range(n))).target.double() * torch.tensor(TARGET_STD).double()
    assert list(results) == ["tft", "zero", "wide"]
    assert list(losses) == ["tft", "zero", "wide"]
    preds = {"tft": rec.table} | {k: b.table for k, b in baselines.items()}
    for name, pred in preds.items():
        want = QuantileScores(QUANTILES, H)
        want.update(pred, y)
        ref = want.result()
        assert results[name]["n_windows"] == n
        np.testing.assert_allclose(results[name]["pinball"], ref["pinball"], rtol=1e-6)
        assert results[name]["coverage"] == pytest.approx(ref["coverage"], rel=1e-6)
        assert results[name]["q_risk"] == pytest.approx(ref["q_risk"], rel=1e-6)
        np.testing.assert_allclose(losses[name].numpy(), want.window_losses().numpy(), rtol=1e-6)
        assert losses[name].shape == (n, H)
        if name == "tft":
            ref_cov = want.window_coverage()
            assert list(coverage) == ["10-90", "2-98"]
            for k in ref_cov:
                assert torch.equal(coverage[k], ref_cov[k])
                assert coverage[k].shape == (n,)
    for b in baselines.values():
        assert b.asked == [(0, 4), (4, 8), (8, 12), (12, 16), (16, 18)]
    # the baselines are scored against the same outcomes: zero's pinball is 0.5 * mean |y|
    # at the median level
    assert results["zero"]["pinball"][0][2] == pytest.approx(0.5 * float(y[:, 0].abs().mean()))


def test_score_hands_tft_quantiles_the_model_map_device_precision_and_forward(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, rec, _, windows, loaded = _score(monkeypatch, batch_size=7)
    assert_forwarded_in_sevens(rec, loaded, windows)


def test_score_falls_back_to_the_plain_forward(monkeypatch: pytest.MonkeyPatch) -> None:
    _, rec, *_ = _score(monkeypatch, batch_size=100, forward=None)
    assert len(rec.calls) == 1 and rec.calls[0]["forward"] is evaluate_mod.plain_forward


def test_score_reports_progress_per_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    progress = FakeProgress(3)
    _score(monkeypatch, batch_size=5, progress=progress)
    assert progress.tasks == [(("evaluate",), {"total": 18})]
    assert progress.updates == [((3,), {"advance": k}) for k in (5, 5, 5, 3)]


# ---------------------------------------------------------------- verdicts, per symbol


def _losses(n: int = 120) -> dict[str, torch.Tensor]:
    """The TFT clearly better than ``zero``, clearly worse than ``ewma``, level with
    ``empirical`` (noise only)."""
    g = np.random.default_rng(5)
    tft = 1.0 + 0.1 * g.normal(size=(n, 2))
    return {
        "tft": torch.from_numpy(tft),
        "zero": torch.from_numpy(tft + 0.5 + 0.05 * g.normal(size=(n, 2))),
        "empirical": torch.from_numpy(tft + 0.1 * g.normal(size=(n, 2))),
        "ewma": torch.from_numpy(tft - 0.5 + 0.05 * g.normal(size=(n, 2))),
    }


def test_verdicts_compare_every_baseline_and_not_the_tft_itself() -> None:
    losses = _losses()
    got = verdicts(losses)
    assert list(got) == ["zero", "empirical", "ewma"]
    for name in got:
        assert got[name] == compare(losses["tft"].numpy(), losses[name].numpy())
    assert [got[k]["pooled"]["verdict"] for k in got] == [
        "win",
        "no significant difference",
        "lose",
    ]


def test_per_symbol_scores_each_symbol_on_its_own_windows() -> None:
    losses = _losses(120)
    symbols = ["NQ", "ES", "ES"] * 40  # NQ first: the first-seen order is kept
    g = np.random.default_rng(3)
    coverage = {
        "10-90": torch.from_numpy((g.random(120) < 0.8).astype(np.float64)),
        "2-98": torch.from_numpy((g.random(120) < 0.95).astype(np.float64)),
    }
    got = per_symbol(losses, coverage, symbols)
    assert list(got) == ["NQ", "ES"]
    groups = np.asarray(symbols)
    tft = losses["tft"].numpy()
    for sym in ("NQ", "ES"):
        m = groups == sym
        entry = got[sym]
        assert list(entry) == ["n_windows", "tft", "coverage", "comparisons"]
        assert entry["n_windows"] == int(m.sum()) == (40 if sym == "NQ" else 80)
        assert type(entry["n_windows"]) is int
        assert entry["tft"] == pytest.approx(float(tft[m].mean()), rel=1e-15)
        assert entry["coverage"] == {
            k: pytest.approx(float(c.numpy()[m].mean()), rel=1e-15) for k, c in coverage.items()
        }
        assert list(entry["comparisons"]) == ["zero", "empirical", "ewma"]
        for name in ("zero", "empirical", "ewma"):
            want = compare_per_group(tft, losses[name].numpy(), groups)[sym]
            assert entry["comparisons"][name] == want
    assert got["ES"]["comparisons"]["zero"]["verdict"] == "win"
    assert got["ES"]["comparisons"]["ewma"]["verdict"] == "lose"
    json.dumps(got)  # JSON-able: plain floats and ints


def test_symbols_beaten_counts_the_significant_wins_per_baseline() -> None:
    def entry(**verdicts: str) -> dict[str, Any]:
        return {"comparisons": {k: {"verdict": v} for k, v in verdicts.items()}}

    per_sym = {
        "ES": entry(zero="win", ewma="lose", garch="win"),
        "NQ": entry(zero="win", ewma="no significant difference", garch="lose"),
        "CL": entry(zero="win", ewma="win", garch="lose"),
    }
    assert symbols_beaten(per_sym) == {"zero": 3, "ewma": 1, "garch": 1}
    assert symbols_beaten({"ES": entry(zero="lose")}) == {"zero": 0}
    assert symbols_beaten({}) == {}


# ---------------------------------------------------------------- baseline_forecasts


def test_baseline_forecasts_are_the_simple_ones_then_the_classical_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[tuple[str, tuple[Any, ...]]] = []
    origins = pl.DataFrame({"symbol": ["ES", "NQ", "ES"], "ts": [1, 2, 3]})

    def simple(*args: Any) -> dict[str, Any]:
        seen.append(("simple", args))
        return {"zero": "Z", "empirical": "E"}

    def classical(*args: Any) -> dict[str, Any]:
        seen.append(("classical", args))
        return {"ewma": "W", "garch": "G"}

    monkeypatch.setattr(evaluate_mod, "simple_forecasts", simple)
    monkeypatch.setattr(evaluate_mod, "classical_forecasts", classical)
    windows = SimpleNamespace(origins=lambda: origins, horizon=4)
    empirical = SimpleNamespace(quantiles=(0.1, 0.5, 0.9))
    got = baseline_forecasts(empirical, {"ewma": {}}, "CLOSES", windows)  # type: ignore[arg-type]
    assert got == {"zero": "Z", "empirical": "E", "ewma": "W", "garch": "G"}
    assert list(got) == ["zero", "empirical", "ewma", "garch"]
    assert seen[0] == ("simple", (empirical, ["ES", "NQ", "ES"], 4))
    name, args = seen[1]
    assert name == "classical" and args[0] == {"ewma": {}} and args[1] == "CLOSES"
    assert args[2].equals(origins) and args[3:] == (4, 3)


# ---------------------------------------------------------------- evaluate_model


class _Windows:
    def __init__(self, symbols: list[str]) -> None:
        self.symbols = symbols

    def __len__(self) -> int:
        return len(self.symbols)

    def origins(self) -> pl.DataFrame:
        return pl.DataFrame({"symbol": self.symbols}, schema={"symbol": pl.String})


def _fake_pipeline(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    *,
    n_windows: int = 120,
    training: Any = None,
    untrained: list[str] | None = None,
) -> tuple[list[tuple[str, tuple[Any, ...], dict[str, Any]]], SimpleNamespace, dict[str, Any]]:
    """Replace every collaborator of ``evaluate_model`` by a recorder; ``score`` gives
    ``_losses()``; ``verdicts``, ``per_symbol`` and ``symbols_beaten`` stay real."""
    seen: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
    root = tmp_path / "run"
    root.mkdir(exist_ok=True)
    model = SimpleNamespace(quantiles=(0.1, 0.5, 0.9), horizon=2, encoder_length=6)
    loaded = SimpleNamespace(
        run=RunDir(root),
        config=SimpleNamespace(model=model),
        spec="SPEC",
        scaler="SCALER",
        fingerprint="FP",
        instruments="INSTRUMENTS",
        weights=root / "checkpoints" / "best.safetensors",
    )
    symbols = ["ES", "NQ", "ES"] * (n_windows // 3)
    windows = _Windows(symbols)
    losses = _losses(n_windows) if n_windows else {}
    cov = {"10-90": torch.ones(n_windows, dtype=torch.float64)}
    parts = {
        "scores": {"tft": {"mean_pinball": 1.0}, "zero": {"mean_pinball": 1.5}},
        "losses": losses,
        "coverage": cov,
        "windows": windows,
        "loaded": loaded,
    }

    for name, result in {
        "check_unlocked": None,
        "parse_device": "DEV",
        "load_inference_model": "L0",
        "with_user_instruments": "L1",
        "with_read_flags": loaded,
        "load_baselines": ("EMPIRICAL", "CLASSICAL"),
        "read_data_end": "ENDS",
        "scratch_for": "SCRATCH",
        "evaluation_data": (windows, "test", "CLOSES"),
        "check_bar_interval": None,
        "check_trained_symbols": untrained or [],
        "baseline_forecasts": "BASELINES",
        "score": (parts["scores"], losses, cov),
        "_training": training,
        "_record": None,
    }.items():
        monkeypatch.setattr(evaluate_mod, name, recording(seen, name, result))
    scoped = evaluate_mod.evaluation_data

    def evaluation_data(*args: Any, **kw: Any) -> Any:  # checks the bars it reads, then scopes
        result = scoped(*args, **kw)
        kw["check"]("CLOSES")
        return result

    monkeypatch.setattr(evaluate_mod, "evaluation_data", evaluation_data)
    return seen, loaded, parts


def test_evaluate_model_hands_every_argument_on_and_writes_the_result_to_out(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen, loaded, parts = _fake_pipeline(
        monkeypatch, tmp_path, training={"served": "epoch"}, untrained=["CL"]
    )
    out = tmp_path / "e.json"
    result = evaluate_model(
        tmp_path / "run",
        tmp_path / "bars.csv",
        batch_size=9,
        device="cpu:0",
        progress="PROGRESS",  # type: ignore[arg-type]
        instruments=tmp_path / "inst.csv",
        out=str(out),  # type: ignore[arg-type]
        strict=True,
        allow_outliers=True,
        scope="all",
        read={"tz": "UTC"},
    )
    names = [name for name, *_ in seen]
    assert names == [
        "parse_device",
        "load_inference_model",
        "with_user_instruments",
        "with_read_flags",
        "load_baselines",
        "read_data_end",
        "scratch_for",
        "evaluation_data",
        "check_bar_interval",
        "check_trained_symbols",
        "baseline_forecasts",
        "score",
        "_training",
    ]  # no lock probe and no recording in the run directory with --out
    calls = {name: (args, kw) for name, args, kw in seen}
    assert calls["parse_device"] == (("cpu:0",), {})
    assert calls["load_inference_model"] == ((tmp_path / "run", "DEV"), {})
    assert calls["with_user_instruments"] == (("L0", tmp_path / "inst.csv"), {})
    assert calls["with_read_flags"] == (("L1", {"tz": "UTC"}), {})
    assert calls["load_baselines"] == ((loaded.run.baselines, (0.1, 0.5, 0.9), 2), {})
    assert calls["read_data_end"] == ((loaded.run,), {})
    assert calls["scratch_for"] == ((tmp_path / "run",), {})
    assert isinstance(calls["scratch_for"][0][0], Path)
    args, kw = calls["evaluation_data"]
    assert args == (tmp_path / "bars.csv", loaded.config, "SPEC", "SCALER", "FP", "INSTRUMENTS")
    assert kw.pop("check") is not None
    assert kw == {"allow_outliers": True, "scope": "all", "ends": "ENDS", "spill": "SCRATCH"}
    assert calls["check_bar_interval"] == ((loaded.run, "CLOSES", tmp_path / "bars.csv"), {})
    args, kw = calls["check_trained_symbols"]
    assert args[0] is loaded and sorted(args[1]) == ["ES", "NQ"] and kw == {"strict": True}
    args, kw = calls["baseline_forecasts"]
    assert args[:2] == ("EMPIRICAL", "CLASSICAL") and args[2] == "CLOSES" and not kw
    assert args[3] is parts["windows"]
    args, kw = calls["score"]
    assert args[0] is loaded and args[1] is parts["windows"] and args[2] == "BASELINES"
    assert kw == {"batch_size": 9, "device": "DEV", "progress": "PROGRESS"}
    assert calls["_training"] == ((loaded.run, loaded.weights), {})

    losses = parts["losses"]
    by_symbol = per_symbol(losses, parts["coverage"], parts["windows"].symbols)
    comparisons = verdicts(losses)
    want = {
        "model": str(tmp_path / "run"),
        "weights": "best.safetensors",
        "bars": str(tmp_path / "bars.csv"),
        "split": "test",
        "n_windows": 120,
        "quantiles": [0.1, 0.5, 0.9],
        "horizon": 2,
        "units": "log return",
        "scores": parts["scores"],
        "comparisons": comparisons,
        "tft_beats": {"zero": True, "empirical": False, "ewma": False},
        "per_symbol": by_symbol,
        "symbols_beaten": symbols_beaten(by_symbol),
        "training": {"served": "epoch"},
        "untrained_symbols": ["CL"],
    }
    assert result == want
    assert list(result) == list(want)
    assert result["symbols_beaten"]["zero"] == 2 and result["symbols_beaten"]["ewma"] == 0
    assert json.loads(out.read_text()) == json.loads(json.dumps(want))
    assert not list(tmp_path.glob("*.tmp"))


def test_without_out_the_run_is_probed_and_the_result_recorded_there(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen, loaded, _ = _fake_pipeline(monkeypatch, tmp_path)
    result = evaluate_model(str(tmp_path / "run"), "bars.csv", batch_size=1, device="cpu")  # type: ignore[arg-type]
    calls = {name: (args, kw) for name, args, kw in seen}
    assert seen[0] == (
        "check_unlocked",
        (tmp_path / "run", "evaluate it alongside with --out FILE, or wait"),
        {},
    )
    assert isinstance(seen[0][1][0], Path)
    assert seen[-1][0] == "_record"
    assert calls["_record"][0][0] is loaded.run and calls["_record"][0][1] is result
    assert "training" not in result and "untrained_symbols" not in result
    # the defaults handed on
    assert calls["with_user_instruments"][0][1] is None
    assert calls["with_read_flags"][0][1] is None
    assert calls["evaluation_data"][1]["allow_outliers"] is False
    assert calls["evaluation_data"][1]["scope"] is None
    assert calls["check_trained_symbols"][1] == {"strict": False}
    assert calls["score"][1]["progress"] is None
    assert not list(tmp_path.glob("*.json"))


def test_evaluate_model_refusals_word_for_word(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen, _, _ = _fake_pipeline(monkeypatch, tmp_path)
    with pytest.raises(InputError) as e:
        evaluate_model(tmp_path, "b.csv", batch_size=0, device="cpu")
    assert str(e.value) == "--batch-size must be >= 1, got 0"
    out = tmp_path / "nowhere" / "e.json"
    with pytest.raises(InputError) as e:
        evaluate_model(tmp_path, "b.csv", batch_size=1, device="cpu", out=out)
    assert str(e.value) == f"--out {out}: directory {tmp_path / 'nowhere'} does not exist"
    assert seen == []  # refused before anything was probed or loaded
    evaluate_model(tmp_path, "b.csv", batch_size=1, device="cpu", out=tmp_path / "e.json")
    assert (tmp_path / "e.json").is_file()  # one window per batch is allowed


def test_no_window_is_refused_with_the_sizes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen, _, _ = _fake_pipeline(monkeypatch, tmp_path, n_windows=0)
    with pytest.raises(DataError) as e:
        evaluate_model(tmp_path, "bars.csv", batch_size=1, device="cpu", out=tmp_path / "e.json")
    assert str(e.value) == "bars.csv: no window with 6 encoder and 2 future bars"
    assert [name for name, *_ in seen][-1] == "check_bar_interval"
    assert not (tmp_path / "e.json").exists()


# ---------------------------------------------------------------- _training, _record


def test_training_is_read_only_for_the_runs_own_checkpoints(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    run = RunDir(tmp_path)
    seen: list[tuple[Any, ...]] = []

    def served(*args: Any) -> dict[str, Any]:
        seen.append(args)
        return {"served": "start"}

    monkeypatch.setattr(evaluate_mod, "served_weights", served)
    own = tmp_path / "checkpoints" / "best.safetensors"
    assert _training(run, own) == {"served": "start"}
    assert seen == [(tmp_path / "checkpoints", own)]
    assert _training(run, tmp_path / "members" / "best.safetensors") is None
    assert _training(run, tmp_path / "model.safetensors") is None
    assert len(seen) == 1

    def corrupt(*args: Any) -> dict[str, Any]:
        raise ModelDirError("no sidecar")

    monkeypatch.setattr(evaluate_mod, "served_weights", corrupt)
    assert _training(run, own) is None


class _Lock:
    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error
        self.held: list[tuple[Path, str]] = []

    @contextlib.contextmanager
    def __call__(self, root: Path, command: str) -> Iterator[None]:
        self.held.append((root, command))
        if self.error is not None:
            raise self.error
        yield


def test_record_writes_beside_earlier_evaluations_under_the_lock_and_refreshes_the_report(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    lock, reports = _Lock(), []
    monkeypatch.setattr(evaluate_mod, "run_lock", lock)
    monkeypatch.setattr(evaluate_mod, "write_report", reports.append)
    run = RunDir(tmp_path)
    (tmp_path / "evaluation.json").write_text("{}")
    _record(run, {"n_windows": 3})
    assert json.loads((tmp_path / "evaluation-2.json").read_text()) == {"n_windows": 3}
    assert (tmp_path / "evaluation.json").read_text() == "{}"
    assert lock.held == [(tmp_path, f"foxhunt evaluate --model {tmp_path}")]
    assert reports == [run]


def test_record_gives_up_quietly_on_an_unwritable_directory_but_not_on_a_taken_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    reports: list[Any] = []
    monkeypatch.setattr(evaluate_mod, "write_report", reports.append)
    monkeypatch.setattr(evaluate_mod, "run_lock", _Lock(PermissionError("read-only")))
    _record(RunDir(tmp_path), {"n_windows": 3})  # no exception
    assert reports == [] and not list(tmp_path.iterdir())
    monkeypatch.setattr(evaluate_mod, "run_lock", _Lock(ModelDirError("taken")))
    with pytest.raises(ModelDirError, match="taken"):
        _record(RunDir(tmp_path), {"n_windows": 3})
