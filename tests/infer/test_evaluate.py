from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from foxhunt.infer.evaluate import QuantileScores

LEVELS = (0.02, 0.1, 0.5, 0.9, 0.98)


def _naive(pred: np.ndarray, y: np.ndarray, levels: tuple[float, ...]) -> dict[str, object]:
    """Loop-over-everything reference."""
    b, h, q = pred.shape
    pin = np.zeros((h, q))
    for i in range(b):
        for j in range(h):
            for k, tau in enumerate(levels):
                e = y[i, j] - pred[i, j, k]
                pin[j, k] += max(tau * e, (tau - 1) * e)
    abs_sum = np.abs(y).sum()
    cover = {"10-90": 0, "2-98": 0}
    for i in range(b):
        for j in range(h):
            cover["10-90"] += pred[i, j, 1] <= y[i, j] <= pred[i, j, 3]
            cover["2-98"] += pred[i, j, 0] <= y[i, j] <= pred[i, j, 4]
    return {
        "pinball": pin / b,
        "P50": 2 * pin[:, 2].sum() / abs_sum,
        "P90": 2 * pin[:, 3].sum() / abs_sum,
        "coverage": {k: v / (b * h) for k, v in cover.items()},
    }


@settings(max_examples=25, deadline=None)
@given(b=st.integers(1, 12), h=st.integers(1, 4), seed=st.integers(0, 10_000))
def test_matches_naive_reference(b: int, h: int, seed: int) -> None:
    g = np.random.default_rng(seed)
    pred = np.sort(g.normal(0, 1e-3, (b, h, 5)), axis=-1)
    y = g.normal(0, 1e-3, (b, h))
    s = QuantileScores(LEVELS, h)
    s.update(torch.from_numpy(pred), torch.from_numpy(y))
    r = s.result()
    ref = _naive(pred, y, LEVELS)
    # Pinball is computed in fp32 (as the training loss): errors of ~1e-3 round at ~1e-10.
    np.testing.assert_allclose(r["pinball"], ref["pinball"], rtol=1e-5, atol=2e-10)
    # q-risk = 2 sum(pinball) / sum|y|: the pinball's absolute fp32 error carries over (found:
    # b=1, h=1, seed=4918, a P90 pinball of ~2e-7 off by 1.2e-5 relative).
    risk_atol = 2 * 2e-10 * b * h / np.abs(y).sum()
    assert r["q_risk"]["P50"] == pytest.approx(ref["P50"], rel=1e-5, abs=risk_atol)
    assert r["q_risk"]["P90"] == pytest.approx(ref["P90"], rel=1e-5, abs=risk_atol)
    assert r["coverage"] == pytest.approx(ref["coverage"])
    assert r["mean_pinball"] == pytest.approx(np.mean(ref["pinball"]), rel=1e-5)
    assert r["n_windows"] == b


def test_streaming_equals_one_shot() -> None:
    g = torch.Generator().manual_seed(0)
    pred = torch.sort(torch.randn(40, 3, 5, generator=g), dim=-1).values
    y = torch.randn(40, 3, generator=g)
    one, two = QuantileScores(LEVELS, 3), QuantileScores(LEVELS, 3)
    one.update(pred, y)
    for a in range(0, 40, 7):
        two.update(pred[a : a + 7], y[a : a + 7])
    r1, r2 = one.result(), two.result()
    np.testing.assert_allclose(r1["pinball"], r2["pinball"], rtol=1e-6)
    assert r1["coverage"] == pytest.approx(r2["coverage"])
    assert r1["q_risk"] == pytest.approx(r2["q_risk"])


def test_sized_scores_equal_unsized_ones_and_refuse_more_windows() -> None:
    g = torch.Generator().manual_seed(1)
    pred = torch.sort(torch.randn(40, 3, 5, generator=g), dim=-1).values
    y = torch.randn(40, 3, generator=g)
    free, sized, spare = (QuantileScores(LEVELS, 3, n) for n in (None, 40, 50))
    for a in range(0, 40, 7):
        for s in (free, sized, spare):
            s.update(pred[a : a + 7], y[a : a + 7])
    for s in (sized, spare):  # a larger size is cut to the windows fed
        assert s.result() == free.result()
        assert torch.equal(s.window_losses(), free.window_losses())
        assert s.window_losses().shape == (40, 3)
        got, want = s.window_coverage(), free.window_coverage()
        assert got.keys() == want.keys() and all(torch.equal(got[k], want[k]) for k in got)
    lean = QuantileScores(LEVELS, 3, 40, window_coverage=False)
    for a in range(0, 40, 7):  # the same batches: the same sums
        lean.update(pred[a : a + 7], y[a : a + 7])
    assert lean.result() == free.result()  # the interval totals are kept all the same
    with pytest.raises(ValueError, match="no per-window coverage"):
        lean.window_coverage()
    with pytest.raises(ValueError, match="41 windows fed to scores sized for 40"):
        sized.update(pred[:1], y[:1])
    assert sized.n == 40  # the refused batch left nothing behind


def test_zero_forecast_has_p50_risk_one_and_a_perfect_forecast_zero() -> None:
    y = torch.randn(50, 2, dtype=torch.float64) * 1e-3
    zero = QuantileScores(LEVELS, 2)
    zero.update(torch.zeros(50, 2, 5, dtype=torch.float64), y)
    assert zero.result()["q_risk"]["P50"] == pytest.approx(1.0)
    perfect = QuantileScores(LEVELS, 2)
    perfect.update(y[..., None].expand(50, 2, 5), y)
    r = perfect.result()
    assert r["mean_pinball"] == 0.0 and r["coverage"] == {"10-90": 1.0, "2-98": 1.0}


def test_intervals_only_for_levels_the_model_has() -> None:
    s = QuantileScores((0.1, 0.5, 0.9), 1)
    s.update(torch.tensor([[[-1.0, 0.0, 1.0]]]), torch.tensor([[2.0]]))
    r = s.result()
    assert r["coverage"] == {"10-90": 0.0} and set(r["q_risk"]) == {"P50", "P90"}


@pytest.mark.slow
def test_verdict_follows_the_significance_test(
    demo_run, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every baseline the run fitted is scored on the same windows; "TFT beats X" exactly when
    the Diebold–Mariano test says the TFT's loss is significantly lower, in the JSON and in the
    sentence."""
    from rich.console import Console

    from foxhunt.commands.evaluate import print_tables
    from foxhunt.infer.evaluate import evaluate_model

    result = evaluate_model(demo_run.run, demo_run.bars, batch_size=256, device="cpu")
    s, c = result["scores"], result["comparisons"]
    assert set(s) == {"tft", "zero", "empirical", "ewma", "garch", "tow_ewma"}
    assert set(c) == set(s) - {"tft"}
    assert {v["n_windows"] for v in s.values()} == {result["n_windows"]}
    for key, comp in c.items():
        pooled = comp["pooled"]
        assert pooled["baseline"] == pytest.approx(s[key]["mean_pinball"], rel=1e-6)
        assert pooled["tft"] == pytest.approx(s["tft"]["mean_pinball"], rel=1e-6)
        assert comp["lag"] >= result["horizon"] - 1
        assert len(comp["per_horizon"]) == result["horizon"]
        significant = pooled["p_value"] < 0.05
        want = ("win" if pooled["difference"] < 0 else "lose") if significant else None
        assert pooled["verdict"] == (want or "no significant difference")
        assert result["tft_beats"][key] == (pooled["verdict"] == "win")
    assert c["zero"]["pooled"]["verdict"] == "win"  # a trained model beats zero return here
    per_sym = result["per_symbol"]  # each symbol's windows on their own
    assert sum(e["n_windows"] for e in per_sym.values()) == result["n_windows"]
    pooled_tft = sum(e["tft"] * e["n_windows"] for e in per_sym.values()) / result["n_windows"]
    assert pooled_tft == pytest.approx(s["tft"]["mean_pinball"], rel=1e-6)
    cov = sum(e["coverage"]["10-90"] * e["n_windows"] for e in per_sym.values())
    assert cov / result["n_windows"] == pytest.approx(s["tft"]["coverage"]["10-90"], rel=1e-9)
    for key in c:
        wins = sum(e["comparisons"][key]["verdict"] == "win" for e in per_sym.values())
        assert result["symbols_beaten"][key] == wins
    print_tables(result, Console(width=200))
    line = capsys.readouterr().out.strip().splitlines()[-1]
    beaten = line.split("significantly beats ")[1].split(";")[0]
    assert "zero return" in beaten
    for key, comp in c.items():
        label = {"empirical": "empirical quantiles", "ewma": "EWMA", "garch": "GARCH"}.get(key)
        if label:
            assert (label in beaten) == (comp["pooled"]["verdict"] == "win"), line


@pytest.mark.slow
def test_a_run_from_before_the_classical_baselines_still_evaluates(demo_run, tmp_path) -> None:
    """A format-1 baselines.json (empirical quantiles only) is read; only the baselines it
    holds are scored and compared."""
    import json
    import shutil

    from foxhunt.infer.evaluate import evaluate_model

    run = tmp_path / "run"
    shutil.copytree(demo_run.run, run)
    record = json.loads((run / "baselines.json").read_text())
    del record["classical"]
    (run / "baselines.json").write_text(json.dumps(record | {"format": 1}))
    result = evaluate_model(
        run, demo_run.bars, batch_size=256, device="cpu", out=tmp_path / "e.json"
    )
    assert set(result["scores"]) == {"tft", "empirical", "zero"}
    assert set(result["comparisons"]) == {"empirical", "zero"}


def test_evaluate_says_which_weights_are_served_and_how_training_moved_them(
    demo_run, tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    from rich.console import Console

    from foxhunt.artifacts import checkpoints as ckpt
    from foxhunt.commands.evaluate import print_tables
    from foxhunt.infer.evaluate import evaluate_model

    result = evaluate_model(
        demo_run.run, demo_run.bars, batch_size=256, device="cpu", out=tmp_path / "e.json"
    )
    t = result["training"]
    best = ckpt.read_best(demo_run.run / "checkpoints")
    assert best is not None and (demo_run.run / "checkpoints" / best["file"]).is_file()
    assert t["epoch"] == best["epoch"]
    assert t["served"] == ("start" if best["epoch"] == 0 else "epoch")
    assert t["served_val_loss"] == pytest.approx(best["val_loss"])
    assert t["change"] == pytest.approx(t["served_val_loss"] / t["start_val_loss"] - 1)
    print_tables(result, Console(width=200))
    first = capsys.readouterr().out.strip().splitlines()[0]
    assert first.startswith("served weights: ")
    assert ("START" in first) == (t["served"] == "start")
