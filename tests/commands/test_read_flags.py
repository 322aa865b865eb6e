"""The read flags (``--symbol --columns --ts-format --tz --force-tz --bar-minutes --allow-odd-times``) on
every command that reads bars, stored in the run's config (issue 27)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from foxhunt.cli import build_parser, main
from foxhunt.commands.options import run_config
from foxhunt.config_files import read_config_file, write_config_file
from foxhunt.data.features.inputs import read_run_bars
from foxhunt.data.read.options import options_of

REAL = Path(__file__).parents[1] / "data" / "fixtures" / "real"
FLAGS = [
    "--symbol",
    "CL",
    "--columns",
    "ts=DATE,open=OPEN",
    "--ts-format",
    "yyyymmdd",
    "--tz",
    "UTC-5",
    "--force-tz",
    "--bar-minutes",
    "5",
    "--allow-odd-times",
]


@pytest.mark.parametrize("command", ["train", "tune", "backtest"])
def test_flags_reach_the_run_config(command: str, tmp_path: Path) -> None:
    a = build_parser().parse_args([command, "--bars", "x.csv", *FLAGS])
    data = run_config(a).data
    assert (data.symbol, data.columns, data.ts_format, data.tz) == (
        "CL",
        ("ts=DATE", "open=OPEN"),
        "yyyymmdd",
        "UTC-5",
    )
    assert data.bar_minutes == 5 and data.allow_odd_times and data.force_tz
    # Stored in config.json and read back the same: evaluate and predict read the same way.
    path = tmp_path / "config.json"
    write_config_file(run_config(a), path)
    assert options_of(read_config_file(path).data) == options_of(data)


@pytest.mark.parametrize("command", ["features", "data inspect"])
def test_flags_on_the_reading_commands(command: str) -> None:
    words = command.split()
    args = [*words, "x.csv"] if words[0] == "data" else [*words, "--bars", "x.csv", "--out", "o"]
    a = build_parser().parse_args([*args, *FLAGS])
    assert (a.symbol, a.tz, a.bar_minutes, a.allow_odd_times) == ("CL", "UTC-5", 5, True)
    assert a.force_tz


@pytest.mark.subprocess
def test_read_run_bars_uses_the_stored_options() -> None:
    a = build_parser().parse_args(["train", "--bars", "x", "--symbol", "CL", "--tz", "-05:00"])
    data = run_config(a).data
    bars, _ = read_run_bars(
        REAL / "quantiacs" / "F_CL.txt", data, min_bars=10, reason="test", allow_outliers=False
    )
    assert bars["symbol"].unique().to_list() == ["CL"]


def test_bad_flag_values_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(REAL / "quantiacs")
    assert main(["data", "inspect", path, "--tz", "Mars/Base"]) == 2
    err = capsys.readouterr().err
    assert "unknown time zone 'Mars/Base'" in err and err.count("\n") == 1
    assert main(["data", "inspect", path, "--columns", "when"]) == 2
    assert "not FIELD=COLUMN" in capsys.readouterr().err
    assert main(["data", "inspect", path, "--ts-format", "daily"]) == 2
    assert "--ts-format 'daily'" in capsys.readouterr().err


def _new_york_file(bars: Path, out: Path) -> None:
    """The run's bars as another source writes them: naive New York times, no symbol column."""
    import polars as pl

    local = pl.col("ts").dt.convert_time_zone("America/New_York").dt.replace_time_zone(None)
    pl.read_parquet(bars).drop("symbol").with_columns(local).write_csv(out)


@pytest.mark.slow
def test_predict_and_evaluate_read_later_files_with_their_own_flags(
    demo_run: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """evaluate and predict take the read flags too: given, they win over the run's stored
    ones (here: none), so a later file from another source reads as the training bars did."""
    import polars as pl

    other = tmp_path / "vendor.csv"
    _new_york_file(demo_run.bars, other)
    want = tmp_path / "want.parquet"
    assert main(["predict", "--model", str(demo_run.run), "--bars", str(demo_run.bars),
                 "--out", str(want)]) == 0  # fmt: skip
    got = tmp_path / "got.parquet"
    flags = ["--tz", "America/New_York", "--symbol", "ES"]
    assert main(["predict", "--model", str(demo_run.run), "--bars", str(other),
                 "--out", str(got), *flags]) == 0  # fmt: skip
    assert pl.read_parquet(got).equals(pl.read_parquet(want))
    capsys.readouterr()
    # Without --tz the New York clock read as UTC is refused, naming the flag (without
    # --symbol too the file's name gives VENDOR, unknown, judged 24/7: nothing is closed).
    assert main(["predict", "--model", str(demo_run.run), "--bars", str(other),
                 "--out", str(got), "--symbol", "ES"]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "--tz America/New_York reads it so" in err and err.strip().count("\n") == 0
    scores = []
    for bars, extra in ((demo_run.bars, []), (other, flags)):
        out = tmp_path / f"eval-{len(scores)}.json"
        assert main(["evaluate", "--model", str(demo_run.run), "--bars", str(bars),
                     "--windows", "all", "--out", str(out), "--json", *extra]) == 0  # fmt: skip
        scores.append(json.loads(out.read_text()))
    assert scores[0]["n_windows"] == scores[1]["n_windows"] > 0
    assert scores[0]["scores"]["tft"] == scores[1]["scores"]["tft"]


def test_run_values_are_the_default_and_a_given_flag_wins() -> None:
    from foxhunt.commands.options import read_flags

    a = build_parser().parse_args(["evaluate", "--model", "r", "--bars", "b", "--tz", "UTC-5"])
    assert read_flags(a) == {"tz": "UTC-5"}
    a = build_parser().parse_args(["predict", "--model", "r", "--bars", "b", "--out", "o.pq"])
    assert read_flags(a) == {}  # nothing given: the run's stored options are read unchanged
    for command in ("evaluate", "predict"):
        assert "a flag given here wins over the run's value" in " ".join(_help(command).split())


def _help(command: str) -> str:
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.suppress(SystemExit):
        build_parser().parse_args([command, "--help"])
    return buf.getvalue()
