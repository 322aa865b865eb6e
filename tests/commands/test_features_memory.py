"""``foxhunt features`` without ``--shards`` holds one feature table of every bar: once the bars
are read, refused before the features are computed when its estimated peak is over the
machine's memory, warned of over half of it, both naming the way down
(``commands.features.check_table_fits``)."""

from __future__ import annotations

import logging
import types
from pathlib import Path

import pytest

from foxhunt.cli import main
from foxhunt.commands.features import check_table_fits
from foxhunt.data.sources.demo import demo_bars
from foxhunt.memory.preparation import preparation_peak


def _bars(folder: Path, *symbols: str) -> Path:
    folder.mkdir(exist_ok=True)
    for i, symbol in enumerate(symbols):
        demo_bars(600, seed=i).drop("symbol").write_csv(folder / f"{symbol}.csv")
    return folder / f"{symbols[0]}.csv" if len(symbols) == 1 else folder


def test_the_estimate_is_the_preparation_peak_of_every_bar_whole() -> None:
    want = preparation_peak(10_000, 225, 7)  # 210 observed + 10 known + 5 static inputs, H = 7
    assert check_table_fits(Path("b"), 10_000, 2, 7, total=10 * want) == want
    assert want > preparation_peak(10_000, 225, 7, largest=5_000)  # the table whole


def test_a_table_over_the_machines_memory_is_refused_once_the_bars_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bars = _bars(tmp_path / "two", "ES", "NQ")
    small = types.SimpleNamespace(total=100 * 10**6)  # 100 MB: under any table's estimate
    monkeypatch.setattr("psutil.virtual_memory", lambda: small)
    computed: list[object] = []
    monkeypatch.setattr(
        "foxhunt.data.features.table.compute_features", lambda *a, **k: computed.append(a)
    )
    out = tmp_path / "f.parquet"
    assert main(["features", "--bars", str(bars), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "one feature table of 1,200 bars needs an estimated" in err  # 600 a symbol, as read
    assert "more than this machine's 100 MB" in err
    assert "--shards computes and writes one symbol at a time (a folder" in err
    assert not computed and not out.exists()


def test_over_half_of_the_memory_is_warned_of(caplog: pytest.LogCaptureFixture) -> None:
    peak = check_table_fits(Path("ES.csv"), 5_000, 1, 10, total=10**15)
    with caplog.at_level(logging.WARNING, logger="foxhunt.commands.features"):
        assert check_table_fits(Path("ES.csv"), 5_000, 1, 10, total=int(1.5 * peak)) == peak
    (record,) = caplog.records
    said = record.getMessage()
    assert "ES.csv: one feature table of 5,000 bars needs an estimated" in said
    assert "67 % of this machine's" in said
    assert said.endswith("one symbol's table is computed whole, with --shards too: cut its bars "
                         "into periods")  # fmt: skip
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="foxhunt.commands.features"):
        check_table_fits(Path("ES.csv"), 5_000, 1, 10, total=2 * peak)  # half exactly: quiet
    assert not caplog.records
