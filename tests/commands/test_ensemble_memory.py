"""``foxhunt memory --seed-ensemble N``: what a ``foxhunt train --ensemble N`` run holds."""

from __future__ import annotations

import json

import pytest

from foxhunt.cli import main


def _report(capsys: pytest.CaptureFixture[str], *extra: str) -> dict:
    argv = ["memory", "--preset", "tft-225", "--batch-size", "32", "--json", *extra]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_seed_ensemble_quotes_one_member_for_training_and_n_weights_for_inference(
    capsys: pytest.CaptureFixture[str],
) -> None:
    single = _report(capsys)
    assert "seed_ensemble" not in single
    report = _report(capsys, "--seed-ensemble", "3")
    c = report["components"]
    se = report["seed_ensemble"]
    assert se["members"] == 3
    assert se["training_peak_per_member"] == c["training_peak"]["estimated_bytes"]
    assert se["process_peak_rss_per_member"] == c["process_peak_rss"]["estimated_bytes"]
    params = c["parameters"]["estimated_bytes"]
    assert se["extra_weights"] == 2 * params
    assert se["inference_peak"] == c["inference_peak"]["estimated_bytes"] + 2 * params
    assert report["budgets"] == single["budgets"]  # quoted, not judged


def test_seed_ensemble_below_one_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", "--preset", "demo", "--seed-ensemble", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--seed-ensemble" in err
