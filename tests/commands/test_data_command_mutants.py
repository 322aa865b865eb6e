"""``foxhunt data demo | index-daily | inspect`` in process, with the bars and the report made by
recorders: what each passes on, prints and returns. The readers and the report are tested where
they live (tests/data/read/test_inspection.py); this file holds the command's own text."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from foxhunt.cli import build_parser, main
from foxhunt.commands import data as data_cmd
from foxhunt.data.read.options import ReadOptions
from foxhunt.errors import DataError


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    """rich's consoles wider than any line the tests print."""
    monkeypatch.setenv("COLUMNS", "400")


def _bars(symbols: list[str], days: list[int]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "symbol": symbols,
            "ts": [datetime(2024, 1, d, 14, 30, tzinfo=UTC) for d in days],
        }
    )


def test_demo_passes_its_flags_and_names_the_bars_it_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[tuple[Any, ...]] = []

    def write_demo_bars(out: Path, **kw: Any) -> pl.DataFrame:
        calls.append((out, kw))
        return _bars(["NQ"] * 3, [2, 3, 9])

    monkeypatch.setattr("foxhunt.data.sources.demo.write_demo_bars", write_demo_bars)
    out = tmp_path / "nq.csv"
    argv = ["data", "demo", "--bars", "1234", "--seed", "7", "--symbol", "NQ", "--out", str(out)]
    assert main([*argv, "--start", "2023-05-01"]) == 0
    assert calls == [(out, {"n_bars": 1234, "seed": 7, "symbol": "NQ", "start": "2023-05-01"})]
    assert capsys.readouterr().out == (
        f"wrote 3 NQ 5-minute bars (2024-01-02 14:30 .. 2024-01-09 14:30 UTC) to {out}\n"
    )
    calls.clear()
    assert main(["data", "demo", "--out", str(out)]) == 0
    assert calls == [(out, {"n_bars": 1000, "seed": 0, "symbol": "ES", "start": "2024-01-02"})]


def test_index_daily_counts_each_symbol(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    written: list[Path] = []

    def write_index_daily(out: Path) -> pl.DataFrame:
        written.append(out)
        return _bars(["NQ", "ES", "ES", "NQ", "ES"], [5, 2, 3, 4, 9])

    monkeypatch.setattr("foxhunt.data.sources.index_daily.write_index_daily", write_index_daily)
    monkeypatch.setattr(
        "foxhunt.data.sources.index_daily.provenance", lambda: {"source": "arch package's data"}
    )
    out = tmp_path / "index.parquet"
    assert main(["data", "index-daily", "--out", str(out)]) == 0
    assert written == [out]
    assert capsys.readouterr().out == (
        "wrote 5 daily bars (ES 3, NQ 2; 2024-01-02 .. 2024-01-09) from the arch package's data "
        f"to {out}\n"
    )


def _symbol(**extra: Any) -> dict[str, Any]:
    return {
        "symbol": "ES",
        "bars": 12_345,
        "first": "2024-01-02T09:30:00-05:00",
        "last": "2024-03-28T16:00:00-04:00",
        "interval": "1min",
        "sessions": 1_060,
        "session_breaks": 1_059,
        "intra_session_gaps": 0,
        "missing_bars": 0,
        "largest_gap": None,
        "calendar": "cme_equity",
        "closed_time_bars": 4,
        **extra,
    }


TRAINING = (
    "training: a symbol needs 574 bars with --preset demo, 436 bars with --preset fast (the "
    "presets' defaults; a longer --encoder-length or --horizon needs more)"
)


def _report(**extra: Any) -> dict[str, Any]:
    return {
        "path": "bars",
        "files": ["bars/ES.csv"],
        "symbols": [_symbol()],
        "guesses": [],
        "warnings": [],
        "time_axis": [],
        "too_short_for_features": [],
        "features_min_bars": 120,
        "training_min_bars": {"demo": 574, "fast": 436},
        "too_short_to_train": {"demo": [], "fast": []},
        "verdict": "valid",
        "readable": True,
        "error": None,
        **extra,
    }


def _inspect(
    monkeypatch: pytest.MonkeyPatch, report: dict[str, Any] | Exception
) -> list[tuple[Any, ...]]:
    calls: list[tuple[Any, ...]] = []

    def inspect_report(path: Path, **kw: Any) -> dict[str, Any]:
        calls.append((path, kw))
        if isinstance(report, Exception):
            raise report
        return report

    monkeypatch.setattr("foxhunt.data.read.inspection.inspect_report", inspect_report)
    return calls


def _table(out: str) -> dict[str, str]:
    """The report's two-column rows, label -> value."""
    rows = {}
    for line in out.splitlines():
        if line.startswith("  "):
            label, _, value = line.strip().partition("  ")
            rows[label] = value.strip()
    return rows


def test_inspect_passes_its_flags_and_prints_a_valid_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = _inspect(monkeypatch, _report())
    argv = ["data", "inspect", str(tmp_path / "bars"), "--instruments", str(tmp_path / "i.toml")]
    assert main([*argv, "--allow-outliers", "--tz", "America/New_York"]) == 0
    assert calls == [
        (
            tmp_path / "bars",
            {
                "instruments": tmp_path / "i.toml",
                "allow_outliers": True,
                "options": ReadOptions(tz="America/New_York"),
            },
        )
    ]
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[:2] == ["bars/ES.csv", "ES"]
    assert lines[-1] == "verdict: valid"
    assert _table(out) == {
        "bars": "12,345",
        "first bar": "2024-01-02 09:30:00-05:00",
        "last bar": "2024-03-28 16:00:00-04:00",
        "interval": "1min",
        "sessions": "1,060 trading days with bars",
        "gaps in sessions": "0",
        "days without bars": "0",
        "calendar": "cme_equity",
        "bars in closed hours": "4",
    }
    assert lines[-2] == TRAINING
    assert len(lines) == 2 + 9 + 2
    calls.clear()
    assert main(["data", "inspect", str(tmp_path / "bars")]) == 0
    assert calls[0][1] == {"instruments": None, "allow_outliers": False, "options": ReadOptions()}


def test_inspect_prints_gaps_guesses_warnings_and_a_suspicious_verdict(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    daily = _symbol(
        symbol="CL",
        interval=None,
        intra_session_gaps=1_234,
        missing_bars=5_678,
        missing_days=3,
        first_missing_day="2024-01-05",
        largest_gap="3h",
        daily=True,
        closed_time_bars=1_500,
    )
    del daily["calendar"]
    report = _report(
        path="folder",
        files=["a.csv", "b.csv"],
        symbols=[_symbol(), daily],
        guesses=["times read as America/Chicago"],
        warnings=["ES: 3 bars repeat a time", "CL: volume is 0 on 40 bars"],
        too_short_for_features=["CL", "GC"],
        verdict="suspicious",
    )
    _inspect(monkeypatch, report)
    assert main(["data", "inspect", "folder"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "folder (2 files)"
    cl = out[out.index("\nCL\n") :]
    assert _table(cl) == {
        "bars": "12,345",
        "first bar": "2024-01-02 09:30:00-05:00",
        "last bar": "2024-03-28 16:00:00-04:00",
        "interval": "-",
        "sessions": "1,060 trading days with bars",
        "gaps in sessions": "1,234 (5,678 missing bars, largest 3h)",
        "days without bars": "3 (first: 2024-01-05)",
        "calendar": "-",
        "bars on closed days": "1,500",
    }
    assert lines[-5:] == [
        "guess: times read as America/Chicago",
        "warning: ES: 3 bars repeat a time",
        "warning: CL: volume is 0 on 40 bars",
        "too short for features (need >= 120 bars): CL, GC",
        "verdict: suspicious - 2 warnings above; the commands read these bars as given, not as "
        "valid",
    ]


def test_inspect_says_warning_once_for_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _inspect(monkeypatch, _report(warnings=["w"], verdict="suspicious"))
    assert main(["data", "inspect", "x.csv"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "verdict: suspicious - 1 warning above; the commands read these bars as given, not as valid"
    )


def test_inspect_an_invalid_file_names_its_time_axis_problems_and_exits_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _report(
        verdict="invalid",
        readable=False,
        error="column 'high', row 50: high below the body",
        time_axis=["the summary line", "ES: 3 times out of order", "ES: 2 repeated times"],
    )
    _inspect(monkeypatch, report)
    assert main(["data", "inspect", "x.csv"]) == 2
    assert capsys.readouterr().out.splitlines()[-3:] == [
        "time axis: ES: 3 times out of order",
        "time axis: ES: 2 repeated times",
        "verdict: invalid - column 'high', row 50: high below the body",
    ]
    # the time-axis lines belong to an invalid verdict only
    _inspect(monkeypatch, _report(time_axis=["summary", "ES: a note"]))
    assert main(["data", "inspect", "x.csv"]) == 0
    assert "time axis" not in capsys.readouterr().out


def test_inspect_json_prints_the_report_and_exits_by_readability(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _report(verdict="invalid", readable=True, error="bad")
    _inspect(monkeypatch, report)
    assert main(["data", "inspect", "x.csv", "--json"]) == 0
    out = capsys.readouterr().out
    assert out.endswith("}\n") and out.count("\n") == 1 and json.loads(out) == report
    _inspect(monkeypatch, _report(readable=False))
    assert main(["data", "inspect", "x.csv", "--json"]) == 2


def test_inspect_an_unreadable_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _inspect(monkeypatch, DataError("x.csv: missing column 'open'"))
    assert main(["data", "inspect", "x.csv", "--json"]) == 2
    assert json.loads(capsys.readouterr().out) == {
        "path": "x.csv",
        "verdict": "invalid",
        "valid": False,
        "readable": False,
        "error": "x.csv: missing column 'open'",
        "symbols": [],
    }
    a = build_parser().parse_args(["data", "inspect", "x.csv"])
    assert a.func is data_cmd.inspect
    with pytest.raises(DataError, match="missing column 'open'"):
        a.func(a)
    assert main(["data", "inspect", "x.csv"]) == 2
    assert "x.csv: missing column 'open'" in capsys.readouterr().err


def test_inspect_lays_out_each_symbol_as_a_two_column_table(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _report()
    del report["guesses"]  # a report without guesses
    _inspect(monkeypatch, report)
    assert main(["data", "inspect", "x.csv"]) == 0
    assert [line.rstrip() for line in capsys.readouterr().out.splitlines()] == [
        "bars/ES.csv",
        "ES",
        "  bars                    12,345",
        "  first bar               2024-01-02 09:30:00-05:00",
        "  last bar                2024-03-28 16:00:00-04:00",
        "  interval                1min",
        "  sessions                1,060 trading days with bars",
        "  gaps in sessions        0",
        "  days without bars       0",
        "  calendar                cme_equity",
        "  bars in closed hours    4",
        TRAINING,
        "verdict: valid",
    ]


LONG = "a message long enough to wrap on a 60-column terminal: 1,234 bars at 3.5 % of 'x.csv'"


def _whole(message: str, text: str) -> bool:
    """``message`` stands on one line of ``text`` as written: not wrapped, nothing in it
    highlighted (rich colours numbers, quotes and paths unless told not to)."""
    return any(message in line for line in text.splitlines())


def test_inspect_on_a_terminal_keeps_each_message_whole_and_uncoloured(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], terminal: None
) -> None:
    title = f"/{'long/' * 12}ES 2024.csv"  # a path and a number: what rich would colour
    report = _report(
        files=[title],
        guesses=[f"guess {LONG}"],
        warnings=[f"warning {LONG}"],
        time_axis=["summary", f"axis {LONG}"],
        verdict="invalid",
        readable=False,
        error=f"error {LONG}",
    )
    _inspect(monkeypatch, report)
    assert main(["data", "inspect", "x.csv"]) == 2
    out = capsys.readouterr().out
    for message in (title, f"guess {LONG}", f"warning {LONG}", f"axis {LONG}", f"error {LONG}"):
        assert _whole(message, out), message
    assert "\x1b[2mbars" in out  # the labels are dim
    _inspect(monkeypatch, _report(warnings=[f"w {LONG}"], verdict="suspicious"))
    assert main(["data", "inspect", "x.csv"]) == 0
    assert _whole(
        "1 warning above; the commands read these bars as given, not as valid",
        capsys.readouterr().out,
    )


def test_demo_and_index_daily_on_a_terminal(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    terminal: None,
) -> None:
    monkeypatch.setattr(
        "foxhunt.data.sources.demo.write_demo_bars", lambda out, **kw: _bars(["ES"], [2])
    )
    monkeypatch.setattr(
        "foxhunt.data.sources.index_daily.write_index_daily", lambda out: _bars(["ES"], [2])
    )
    monkeypatch.setattr("foxhunt.data.sources.index_daily.provenance", lambda: {"source": "x"})
    monkeypatch.chdir(tmp_path)
    assert main(["data", "demo", "--bars", "1500", "--out", "es.csv"]) == 0
    captured = capsys.readouterr()
    assert "generating 1,500 demo bars" in captured.err
    assert _whole(
        "wrote 1 ES 5-minute bars (2024-01-02 14:30 .. 2024-01-02 14:30 UTC) to es.csv",
        captured.out,
    )
    assert main(["data", "index-daily", "--out", "index.parquet"]) == 0
    assert _whole(
        "wrote 1 daily bars (ES 1; 2024-01-02 .. 2024-01-02) from the x to index.parquet",
        capsys.readouterr().out,
    )


def test_inspect_names_the_symbols_too_short_to_train(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    short = {"demo": ["ES"], "fast": []}
    _inspect(monkeypatch, _report(too_short_to_train=short))
    assert main(["data", "inspect", str(tmp_path / "bars")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-3:-1] == [
        TRAINING,
        "too short to train with --preset demo (fewer than 574 bars): ES",
    ]
    assert not any("--preset fast (fewer" in line for line in lines)
