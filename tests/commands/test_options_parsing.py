"""What the shared options parse into (``foxhunt.commands.options``): paths, whole numbers and
column lists as the commands read them, the refusals argparse prints, fixed offsets as values."""

from __future__ import annotations

from pathlib import Path

import pytest

from foxhunt.cli import build_parser


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
    assert message in capsys.readouterr().err


def test_bar_minutes_and_fixed_offsets_reach_the_namespace() -> None:
    a = _parse("train", "--bars", "b.csv", "--bar-minutes", "15", "--tz", "-05:00")
    assert a.bar_minutes == 15 and a.tz == "-05:00"
    p = _parse(
        "predict", "--model", "run", "--bars", "b.csv", "--out", "f.parquet", "--tz", "-0500"
    )
    assert p.tz == "-0500"
    assert _parse("evaluate", "--model", "r", "--bars", "b.csv", "--tz", "+05:30").tz == "+05:30"
