"""``foxhunt features`` without ``--shards`` holds one feature table of every bar: refused
before any work when its estimated peak is over the machine's memory, warned of over half of
it, both naming ``--shards`` (``commands.features.check_table_fits``)."""

from __future__ import annotations

import logging
import types
from pathlib import Path

import pytest

from foxhunt.cli import main
from foxhunt.commands.features import check_table_fits
from foxhunt.data.read.row_count import estimate_file_rows
from foxhunt.data.sources.demo import demo_bars
from foxhunt.memory.preparation import preparation_peak


def _bars(folder: Path, *symbols: str) -> Path:
    folder.mkdir(exist_ok=True)
    for i, symbol in enumerate(symbols):
        demo_bars(600, seed=i).drop("symbol").write_csv(folder / f"{symbol}.csv")
    return folder / f"{symbols[0]}.csv" if len(symbols) == 1 else folder


def test_the_estimate_is_the_preparation_peak_of_every_bar_whole(tmp_path: Path) -> None:
    bars = _bars(tmp_path / "two", "ES", "NQ")
    n = sum(estimate_file_rows(bars))
    assert n > 1000
    want = preparation_peak(n, 225, 7)  # 210 observed + 10 known + 5 static inputs, H = 7
    assert check_table_fits(bars, 7, total=10 * want) == want
    assert want > preparation_peak(n, 225, 7, largest=n // 2)  # the table whole, not a symbol's


def test_a_table_over_the_machines_memory_is_refused_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bars = _bars(tmp_path / "two", "ES", "NQ")
    small = types.SimpleNamespace(total=100 * 10**6)  # 100 MB: under any table's estimate
    monkeypatch.setattr("psutil.virtual_memory", lambda: small)
    out = tmp_path / "f.parquet"
    assert main(["features", "--bars", str(bars), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "more than this machine's 100 MB" in err and "needs an estimated" in err
    assert "--shards computes and writes one symbol at a time (a folder" in err
    assert not out.exists() and list(tmp_path.iterdir()) == [tmp_path / "two"]


def test_over_half_of_the_memory_is_warned_of(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bars = _bars(tmp_path / "one", "ES")
    peak = check_table_fits(bars, 10, total=10**15)
    with caplog.at_level(logging.WARNING, logger="foxhunt.commands.features"):
        assert check_table_fits(bars, 10, total=int(1.5 * peak)) == peak
    (record,) = caplog.records
    assert "67 % of this machine's" in record.getMessage()
    # one file: --shards helps only where it holds several symbols
    said = record.getMessage()
    assert "one symbol at a time where the file holds several" in said
    assert said.endswith("; one symbol's table is computed whole: cut its bars into periods")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="foxhunt.commands.features"):
        check_table_fits(bars, 10, total=2 * peak)  # half exactly: quiet
    assert not caplog.records


def test_bars_that_cannot_be_counted_are_left_to_the_read(tmp_path: Path) -> None:
    assert check_table_fits(tmp_path / "missing.csv", 10, total=1) == 0
