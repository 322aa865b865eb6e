from __future__ import annotations

import os

import pytest

from foxhunt.commands.options import refuse_out_over_inputs
from foxhunt.errors import InputError


@pytest.fixture
def files(tmp_path):
    bars = tmp_path / "bars"
    bars.mkdir()
    for name in ("ES.parquet", "NQ.csv"):
        (bars / name).write_bytes(b"x")
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    for name in ("config.json", "features.json", "evaluation.json", "forecast.parquet"):
        (run / name).write_text("{}")
    (run / "checkpoints" / "tft_final_epoch2.safetensors").write_bytes(b"w")
    return tmp_path


@pytest.mark.parametrize(
    ("out", "kw", "named"),
    [
        ("bars/ES.parquet", {"bars": "bars/ES.parquet"}, "--bars bars/ES.parquet"),
        ("bars/../bars/ES.parquet", {"bars": "bars/ES.parquet"}, "--bars"),  # same, spelled apart
        ("bars/NQ.csv", {"bars": "bars"}, "--bars"),  # a file of a bars directory
        ("bars/NQ.csv", {"bars": "bars/*.csv"}, "--bars"),  # a glob's match
        ("bars", {"bars": "bars"}, "--bars bars"),
        ("feed.csv", {"follow": "feed.csv"}, "--follow feed.csv"),
        ("run", {"model": "run"}, "--model run"),
        ("run/config.json", {"model": "run"}, "--model"),
        ("run/checkpoints/tft_final_epoch2.safetensors", {"model": "run"}, "--model"),
    ],
)
def test_out_that_is_an_input_is_refused(files, monkeypatch, out, kw, named) -> None:
    monkeypatch.chdir(files)
    (files / "feed.csv").write_text("x")
    with pytest.raises(InputError) as e:
        refuse_out_over_inputs(out, **kw)
    msg = str(e.value)
    assert msg.startswith(f"--out {out} is the input") and named in msg and "\n" not in msg


def test_links_to_an_input_are_the_input(files) -> None:
    bars = files / "bars" / "ES.parquet"
    (files / "sym.parquet").symlink_to(bars)
    os.link(bars, files / "hard.parquet")
    for out in ("sym.parquet", "hard.parquet"):
        with pytest.raises(InputError, match="is the input --bars"):
            refuse_out_over_inputs(files / out, bars=bars)


def test_output_directory_holding_an_input(files) -> None:
    with pytest.raises(InputError, match="holds the input --bars"):
        refuse_out_over_inputs(files, bars=files / "bars" / "ES.parquet", out_is_dir=True)
    with pytest.raises(InputError, match="holds the input --calibration-bars"):
        refuse_out_over_inputs(
            files, bars=files / "bars", out_is_dir=True, bars_flag="--calibration-bars"
        )
    refuse_out_over_inputs(files / "store", bars=files / "bars", out_is_dir=True)


def test_outputs_beside_the_inputs_are_fine(files) -> None:
    run, bars = files / "run", files / "bars"
    refuse_out_over_inputs(files / "f.parquet", bars=bars, model=run)
    refuse_out_over_inputs(run / "forecast.parquet", bars=bars, model=run)  # not a model file
    refuse_out_over_inputs(run / "evaluation.json", bars=bars, model=run)  # explicitly replaced
    refuse_out_over_inputs(bars / "features.parquet", bars=bars / "ES.parquet")
    refuse_out_over_inputs(files / "x.parquet", bars=files / "missing.parquet")  # reported later
