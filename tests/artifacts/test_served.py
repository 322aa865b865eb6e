"""Which weights a run serves, and how training moved validation loss (artifacts/served.py).

The loop writing these files is tested in tests/train/test_loop_start.py; here the checkpoint
folder is laid out by hand as the loop leaves it."""

from __future__ import annotations

import pytest
import torch

from foxhunt.artifacts import checkpoints as ckpt
from foxhunt.artifacts.served import served_line, served_weights

W = {"w": torch.zeros(2)}


def _lay_out(d, start: float, epochs: list[float]):  # type: ignore[no-untyped-def]
    """tft_start, tft_epoch_N and the final weights (the best of them), with best.json."""
    d.mkdir()
    ckpt.save_weights(d / ckpt.START_WEIGHTS, W, {"epoch": 0, "metrics": {"val_loss": start}})
    for e, loss in enumerate(epochs, 1):
        meta = {"epoch": e, "metrics": {"val_loss": loss}}
        ckpt.save_weights(ckpt.epoch_weights_path(d, e), W, meta)
    best = min(range(len(epochs) + 1), key=lambda e: ([start, *epochs][e], e))
    loss = [start, *epochs][best]
    final = ckpt.final_weights_path(d, len(epochs))
    meta = {"epoch": len(epochs), "best_epoch": best, "metrics": {"val_loss": loss}}
    ckpt.save_weights(final, W, meta)
    ckpt.mark_best(d, best, loss)
    return final


def test_a_run_that_kept_its_start_says_so(tmp_path) -> None:
    final = _lay_out(tmp_path / "c", start=0.25, epochs=[0.26, 0.255])
    info = served_weights(tmp_path / "c", final)
    assert info == {
        "served": "start",
        "epoch": 0,
        "epochs_trained": 2,
        "start_val_loss": 0.25,
        "served_val_loss": 0.25,
        "change": 0.0,
        "best_epoch_val_loss": 0.255,
    }
    line = served_line(info)
    assert line.startswith("served weights: the START") and "+2.00%" in line
    assert (tmp_path / "c" / ckpt.read_best(tmp_path / "c")["file"]).is_file()


def test_a_run_that_kept_an_epoch_says_which_and_by_how_much(tmp_path) -> None:
    final = _lay_out(tmp_path / "c", start=0.25, epochs=[0.26, 0.24, 0.245])
    info = served_weights(tmp_path / "c", final)
    assert info["served"] == "epoch" and info["epoch"] == 2 and info["epochs_trained"] == 3
    assert info["change"] == pytest.approx(0.24 / 0.25 - 1)
    assert served_line(info) == (
        "served weights: trained epoch 2 of 3 (validation loss 0.24, -4.00% against the "
        "start's 0.25)"
    )
    assert ckpt.read_best(tmp_path / "c")["file"] == "tft_epoch_2.safetensors"


def test_a_run_from_before_the_start_was_saved_is_unknown(tmp_path) -> None:
    final = _lay_out(tmp_path / "c", start=0.25, epochs=[0.3])
    (tmp_path / "c" / ckpt.START_WEIGHTS).unlink()
    info = served_weights(tmp_path / "c", final)
    assert info["served"] == "unknown" and info["start_val_loss"] is None
    assert "not recorded" in served_line(info)


def test_the_start_line_word_for_word_with_and_without_epochs(tmp_path) -> None:
    final = _lay_out(tmp_path / "c", start=0.25, epochs=[0.26, 0.255])
    assert served_line(served_weights(tmp_path / "c", final)) == (
        "served weights: the START (no epoch of 2 beat its validation loss 0.25; the best of 2 "
        "epochs had 0.255 (+2.00%)): training did not pay"
    )
    info = {"served": "start", "start_val_loss": 0.25, "served_val_loss": 0.25}
    assert served_line({**info, "epochs_trained": 0, "best_epoch_val_loss": None}) == (
        "served weights: the START (no epoch of 0 beat its validation loss 0.25): training did "
        "not pay"
    )


def test_a_served_epoch_without_a_recorded_start_says_so() -> None:
    info = {"served": "epoch", "epoch": 3, "epochs_trained": 4, "served_val_loss": 0.2}
    assert served_line({**info, "start_val_loss": None}) == (
        "served weights: epoch 3 of 4 (the start's loss was not recorded)"
    )
    unknown = {"served": "unknown", "epoch": 0, "epochs_trained": 4, "served_val_loss": 0.2}
    assert served_line({**unknown, "start_val_loss": 0.25}) == (
        "served weights: epoch 0 of 4 (the start's loss was not recorded)"
    )


def test_the_start_file_itself_is_served_as_the_start(tmp_path) -> None:
    _lay_out(tmp_path / "c", start=0.25, epochs=[0.3])
    info = served_weights(tmp_path / "c", tmp_path / "c" / ckpt.START_WEIGHTS)
    assert (info["served"], info["epoch"], info["served_val_loss"]) == ("start", 0, 0.25)


def test_a_final_file_without_best_epoch_takes_its_epoch(tmp_path) -> None:
    d = tmp_path / "c"
    _lay_out(d, start=0.25, epochs=[0.24, 0.23])
    old = d / "old.safetensors"  # a run from before best_epoch was recorded
    ckpt.save_weights(old, W, {"epoch": 2, "metrics": {"val_loss": 0.23}})
    info = served_weights(d, old)
    assert (info["served"], info["epoch"]) == ("epoch", 2)


def test_losses_that_are_not_finite_or_not_numbers_are_left_out(tmp_path) -> None:
    d = tmp_path / "c"
    _lay_out(d, start=0.25, epochs=[float("nan"), 0.3])
    text = d / "text.safetensors"
    ckpt.save_weights(text, W, {"epoch": 1, "best_epoch": 1, "metrics": {"val_loss": "0.2"}})
    info = served_weights(d, text)
    assert info["best_epoch_val_loss"] == 0.3  # the NaN epoch is no best
    assert info["served_val_loss"] is None and info["change"] is None  # "0.2" is not a loss


def test_no_finite_epoch_loss_gives_no_best(tmp_path) -> None:
    d = tmp_path / "c"
    _lay_out(d, start=0.25, epochs=[float("nan")])
    assert served_weights(d, d / ckpt.START_WEIGHTS)["best_epoch_val_loss"] is None
