"""Two files of one symbol holding bars at the same times (one future's contracts around a roll,
NinjaTrader's ``ES 03-24.Last.txt`` beside ``ES 06-24.Last.txt``) are refused naming both files
and the ways out (the refusal said only "duplicate bar for symbol 'ES'")."""

from __future__ import annotations

from pathlib import Path

import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.errors import DataError


def _write(path: Path, minutes: range, dup: bool = False) -> None:
    path.parent.mkdir(exist_ok=True)
    rows = [f"2024-03-04T15:{m}:00Z,5100.25,5101.25,5099.25,5100,{m * 7 % 13 + 1}" for m in minutes]
    if dup:  # the same time again, another bar (an identical row is dropped as a repeat)
        rows.append(rows[-1].replace(",5100,", ",5100.5,"))
    path.write_text("ts,open,high,low,close,volume\n" + "\n".join(rows) + "\n")


def test_contract_files_overlapping_at_a_roll_are_named(tmp_path: Path) -> None:
    folder = tmp_path / "ES"
    _write(folder / "ESH24.csv", range(30, 40))
    _write(folder / "ESM24.csv", range(35, 45))
    with pytest.raises(DataError) as refused:
        read_bars(folder, min_bars=1)
    assert str(refused.value) == (
        f"{folder / 'ESM24.csv'}: column 'ts', row 0 (2024-03-04 15:35:00+00:00): duplicate bar "
        f"for symbol 'ES' (same time as {folder / 'ESH24.csv'} row 5): the files ESH24.csv and "
        "ESM24.csv both hold bars of 'ES' at this time (a future's contracts around a roll, or "
        "a file and its copy?): one series is read from them, and foxhunt does not splice "
        "contracts; read one file, or splice the contracts into one series (rolled and "
        "back-adjusted) first"
    )


def test_a_duplicate_within_one_file_names_no_other_file(tmp_path: Path) -> None:
    path = tmp_path / "ES.csv"
    _write(path, range(30, 40), dup=True)
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1)
    message = str(refused.value)
    assert f"duplicate bar for symbol 'ES' (same time as {path} row 9)" in message
    assert "the files" not in message  # the last bar written again (session 61's hint)
    assert message.endswith(
        "(the bar written again as it updated, a live export's last bar?): keep the later row"
    )


def test_files_of_two_intervals_overlapping_are_named_with_their_intervals(tmp_path: Path) -> None:
    """Kraken's OHLCVT download, ``XBTUSD_1.csv`` and ``XBTUSD_60.csv`` (headerless epoch
    seconds): until session 53 blamed on a future's roll or a copy."""
    folder = tmp_path / "kraken"
    folder.mkdir()
    t0 = 1704499200
    minutes = "".join(f"{t0 + 60 * m},43950.1,43960,43940,43955,1.5,12\n" for m in range(90))
    hours = "".join(f"{t0 + 3600 * h},43950.1,43990,43900,43955,90,700\n" for h in range(3))
    (folder / "XBTUSD_1.csv").write_text(minutes)
    (folder / "XBTUSD_60.csv").write_text(hours)
    with pytest.raises(DataError) as refused:
        read_bars(folder, min_bars=1)
    assert str(refused.value).endswith(
        "the files XBTUSD_1.csv (1min bars) and XBTUSD_60.csv (1h) both hold bars of 'XBTUSD': "
        "bars of two intervals; read each interval apart (a folder or a glob per interval)"
    )
