"""An output folder a command fills in whole: refused (one line naming the folder, what it
holds, at most three of its files and the way out) unless --overwrite; cleared of the
command's own outputs only."""

from __future__ import annotations

from pathlib import Path

import pytest

from foxhunt.artifacts.outputs import clear_outputs, held_outputs, refuse_held_outputs
from foxhunt.errors import InputError

NAMES = ("backtest.json", "fold_*")


def _fill(out: Path, folds: int) -> None:
    out.mkdir(exist_ok=True)
    (out / "backtest.json").write_text("{}")
    for k in range(folds):
        (out / f"fold_{k}").mkdir()
        (out / f"fold_{k}" / "forecast.parquet").write_bytes(b"x")
    (out / "notes.txt").write_text("the user's")


@pytest.mark.parametrize(
    ("folds", "shown"),
    [
        (1, "backtest.json, fold_0"),
        (2, "backtest.json, fold_0, fold_1"),  # three: all shown
        (3, "backtest.json, fold_0, fold_1, ..."),
    ],
)
def test_a_folder_holding_the_outputs_is_refused_in_one_line(
    tmp_path: Path, folds: int, shown: str
) -> None:
    out = tmp_path / "bt"
    _fill(out, folds)
    with pytest.raises(InputError) as refused:
        refuse_held_outputs(out, NAMES, "backtest", overwrite=False)
    assert str(refused.value) == (
        f"{out} already holds a backtest ({shown}); replace it with --overwrite or choose "
        "another --out"
    )
    refuse_held_outputs(out, NAMES, "backtest", overwrite=True)  # allowed: the caller clears


def test_other_files_neither_refuse_nor_are_cleared(tmp_path: Path) -> None:
    out = tmp_path / "bt"
    out.mkdir()
    (out / "notes.txt").write_text("the user's")
    refuse_held_outputs(out, NAMES, "backtest", overwrite=False)
    refuse_held_outputs(tmp_path / "absent", NAMES, "backtest", overwrite=False)
    _fill(out, 2)
    assert [p.name for p in held_outputs(out, NAMES)] == ["backtest.json", "fold_0", "fold_1"]
    clear_outputs(out, NAMES)
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
