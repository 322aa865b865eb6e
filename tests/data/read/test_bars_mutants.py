"""The reader's warning lines for ignored columns: one line per set of columns, every set
(written against the mutants ``make mutate`` left alive in ``data/read/bars.py``)."""

from __future__ import annotations

from pathlib import Path

from foxhunt.data.read.bars import ignored_lines


def test_every_set_of_ignored_columns_gets_its_line() -> None:
    files = [Path("/d/a.csv"), Path("/d/b.csv"), Path("/d/c.csv"), Path("/d/e.csv")]
    ignored = [("oi",), ("oi", "vwap"), (), (" oi", "vwap ")]
    assert ignored_lines(files, ignored) == [
        "ignored columns in /d/a.csv: oi",
        "ignored columns in 2 files under /d (b.csv, e.csv): oi, vwap",
    ]
    assert ignored_lines(files[:2], [("x",), ("y",)]) == [
        "ignored columns in /d/a.csv: x",
        "ignored columns in /d/b.csv: y",
    ]
