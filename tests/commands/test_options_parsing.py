"""What the shared options parse into (``foxhunt.commands.options``): paths, whole numbers and
column lists as the commands read them, the refusals argparse prints, fixed offsets as values."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from foxhunt.cli import build_parser
from foxhunt.commands.options import (
    read_flags,
    read_options_of,
    refuse_out_over_inputs,
    run_config,
)
from foxhunt.config import preset
from foxhunt.config_files import DEFAULT_PRESET
from foxhunt.errors import InputError


def _parse(*argv: str):  # noqa: ANN202 - argparse.Namespace
    return build_parser().parse_args(list(argv))


def test_config_shape_and_batch_flags_parse_to_their_types() -> None:
    a = _parse(
        "train",
        "--bars",
        "b.csv",
        "--config",
        "c.toml",
        "--batch-size",
        "16",
        "--encoder-length",
        "12",
        "--horizon",
        "3",
        "--hidden",
        "16",
        "--heads",
        "2",
        "--precision",
        "fp32",
        "--checkpointing",
    )
    assert a.config == Path("c.toml") and isinstance(a.config, Path)
    assert (a.batch_size, a.encoder_length, a.horizon, a.hidden, a.heads) == (16, 12, 3, 16, 2)
    assert a.precision == "fp32" and a.checkpointing is True
    unset = _parse("train", "--bars", "b.csv")
    assert unset.config is None and unset.checkpointing is False and unset.hidden is None


def test_column_lists_are_tuples_of_stripped_names() -> None:
    a = _parse(
        "train",
        "--bars",
        "b.csv",
        "--observed-cols",
        "spread, imbalance",
        "--known-cols",
        "event,",
        "--static-cols",
        " sector ",
        "--columns",
        "ts=Date,close=Last",
    )
    assert a.observed_cols == ("spread", "imbalance")
    assert a.known_cols == ("event",)
    assert a.static_cols == ("sector",)
    assert a.columns == ("ts=Date", "close=Last")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--observed-cols", " , "), "expected column names separated by commas"),
        (("--columns", ","), "expected column names separated by commas"),
        (("--bar-minutes", "five"), "expected a whole number, got 'five'"),
        (("--bar-minutes", "0"), "expected a number >= 1, got 0"),
        (("--bar-minutes", "-3"), "expected a number >= 1, got -3"),
    ],
)
def test_bad_values_are_refused_by_argparse_with_the_reason(
    argv: tuple[str, ...], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        _parse("train", "--bars", "b.csv", *argv)
    assert exit_.value.code == 2
    assert f": {message}\n" in capsys.readouterr().err  # the reason, as written


def test_bar_minutes_and_fixed_offsets_reach_the_namespace() -> None:
    a = _parse("train", "--bars", "b.csv", "--bar-minutes", "15", "--tz", "-05:00")
    assert a.bar_minutes == 15 and a.tz == "-05:00"
    assert _parse("train", "--bars", "b.csv", "--bar-minutes", "1").bar_minutes == 1
    p = _parse(
        "predict", "--model", "run", "--bars", "b.csv", "--out", "f.parquet", "--tz", "-0500"
    )
    assert p.tz == "-0500"
    assert _parse("evaluate", "--model", "r", "--bars", "b.csv", "--tz", "+05:30").tz == "+05:30"


def test_the_input_flags_reach_the_data_section(tmp_path: Path) -> None:
    cfg = run_config(
        _parse(
            "train",
            "--bars",
            "b.csv",
            "--preset",
            "demo",
            "--observed-cols",
            "spread",
            "--known-cols",
            "event",
            "--static-cols",
            "sector",
            "--target",
            "return:ret",
            "--features",
            "minimal",
        )
    )
    d = cfg.data
    assert (d.observed_cols, d.known_cols, d.static_cols) == (("spread",), ("event",), ("sector",))
    assert d.target == "return:ret" and d.features == "minimal" and d.feature_lines == ()
    listing = tmp_path / "features.txt"
    listing.write_text("obs__rsi_3  # a comment\n\nobs__natr_7\n")
    custom = run_config(_parse("train", "--bars", "b.csv", "--features", str(listing)))
    assert custom.data.features == "custom"
    assert custom.data.feature_lines == ("obs__rsi_3", "obs__natr_7")
    plain = run_config(_parse("train", "--bars", "b.csv", "--preset", "demo"))
    assert plain.data == preset("demo").data


def test_the_read_flags_reach_the_data_section() -> None:
    argv = ("train", "--bars", "b.csv", "--preset", "demo")
    cfg = run_config(
        _parse(
            *argv,
            "--symbol",
            "ES",
            "--tz",
            "America/Chicago",
            "--columns",
            "ts=Date",
            "--ts-format",
            "epoch-ms",
            "--bar-minutes",
            "5",
            "--allow-odd-times",
        )
    )
    d = cfg.data
    assert (d.symbol, d.tz, d.columns, d.ts_format, d.bar_minutes) == (
        "ES",
        "America/Chicago",
        ("ts=Date",),
        "epoch-ms",
        5,
    )
    assert d.allow_odd_times is True
    assert run_config(_parse(*argv)).data.allow_odd_times is False
    a = _parse(*argv, "--allow-odd-times", "--tz", "-05:00")
    assert read_options_of(a).allow_odd_times is True
    assert read_options_of(_parse(*argv)).allow_odd_times is False
    assert read_flags(_parse(*argv)) == {}
    with pytest.raises(InputError, match="Mars/Olympus"):
        read_flags(_parse(*argv, "--tz", "Mars/Olympus"))


def test_a_config_file_is_the_base_the_flags_change(tmp_path: Path) -> None:
    partial = tmp_path / "c.json"
    partial.write_text(json.dumps({"preset": "demo", "train": {"max_steps": 7}}))
    cfg = run_config(_parse("train", "--bars", "b.csv", "--config", str(partial), "--hidden", "32"))
    assert cfg.train.max_steps == 7 and cfg.model.hidden == 32 and cfg.preset == "demo"
    assert run_config(_parse("train", "--bars", "b.csv", "--checkpointing")).train.checkpointing


def test_a_command_without_these_flags_gets_the_default_preset() -> None:
    """Commands add only some of the flag groups: what a namespace lacks is not set."""
    assert run_config(argparse.Namespace()) == run_config(_parse("train", "--bars", "b.csv"))
    assert run_config(argparse.Namespace()).preset == DEFAULT_PRESET
    assert read_flags(argparse.Namespace()) == {}
    assert read_options_of(argparse.Namespace()).allow_odd_times is False


def test_the_live_engine_defaults_to_auto() -> None:
    a = _parse("predict", "--model", "r", "--bars", "b.csv", "--out", "f.parquet")
    assert a.engine == "auto"


def test_an_output_over_an_input_is_refused_naming_the_flag(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "config.json").write_text("{}")
    bars = tmp_path / "bars.csv"
    bars.write_text("x")
    with pytest.raises(InputError) as err:
        refuse_out_over_inputs(run / "config.json", model=run)
    assert str(err.value) == (
        f"--out {run / 'config.json'} is the input --model {run / 'config.json'}; "
        "write the output somewhere else"
    )
    refuse_out_over_inputs(tmp_path, bars=bars)  # a file beside the bars: no clash by default
    with pytest.raises(InputError, match=r" holds the input --bars "):
        refuse_out_over_inputs(tmp_path, bars=bars, out_is_dir=True)


def test_a_named_feature_set_replaces_a_config_file_s_custom_lines(tmp_path: Path) -> None:
    listing = tmp_path / "features.txt"
    listing.write_text("obs__rsi_3\n")
    custom = tmp_path / "custom.json"
    argv = ("train", "--bars", "b.csv", "--features", str(listing), "--print-config", "json")
    run_config(_parse(*argv)).save(custom)
    for name in ("default", "minimal"):
        cfg = run_config(
            _parse("train", "--bars", "b.csv", "--config", str(custom), "--features", name)
        )
        assert cfg.data.features == name and cfg.data.feature_lines == (), name


def test_a_config_file_without_a_preset_takes_the_preset_flag_as_its_base(tmp_path: Path) -> None:
    partial = tmp_path / "p.json"
    partial.write_text(json.dumps({"train": {"max_steps": 9}}))
    cfg = run_config(
        _parse("train", "--bars", "b.csv", "--config", str(partial), "--preset", "demo")
    )
    assert cfg.preset == "demo" and cfg.train.max_steps == 9
    assert cfg.model == preset("demo").model
