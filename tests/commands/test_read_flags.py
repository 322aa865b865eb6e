"""The read flags (``--symbol --columns --ts-format --tz --bar-minutes --allow-odd-times``) on
every command that reads bars, stored in the run's config (issue 27)."""

from __future__ import annotations

from pathlib import Path

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
    assert data.bar_minutes == 5 and data.allow_odd_times
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
