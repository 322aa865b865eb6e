"""Bars a path holds, estimated without reading it (for the memory plan)."""

from __future__ import annotations

import gzip
import zipfile
from pathlib import Path

from foxhunt.data.read.row_count import estimate_rows
from foxhunt.data.sources.demo import demo_bars

REAL = Path(__file__).parents[1] / "fixtures" / "real"


def test_parquet_is_exact_and_text_close(tmp_path: Path) -> None:
    bars = demo_bars(3000, seed=2)
    bars.write_parquet(tmp_path / "ES.parquet")
    assert estimate_rows(tmp_path / "ES.parquet") == 3000
    text = bars.write_csv()
    (tmp_path / "csv").mkdir()
    (tmp_path / "csv" / "ES.csv").write_text(text)
    with zipfile.ZipFile(tmp_path / "csv" / "NQ.zip", "w") as z:
        z.writestr("NQ.csv", text)
    (tmp_path / "csv" / "YM.csv.gz").write_bytes(gzip.compress(text.encode()))
    got = estimate_rows(tmp_path / "csv")
    assert abs(got - 3 * 3001) < 0.03 * 3 * 3001  # header lines counted; lengths vary a little


def test_real_fixtures() -> None:
    assert estimate_rows(REAL / "gbpusd-m1-bid-2012.csv.gz") == 6001  # counted: exact
    assert estimate_rows(REAL / "histdata") == 600  # fixed-width lines: exact


def test_compressed_text_without_a_size_is_counted_line_by_line_over_megabytes(
    tmp_path: Path,
) -> None:
    """bzip2, xz and zstd keep no uncompressed size: their lines are counted as they
    decompress, a megabyte at a time (here 2.6 MB of text: three reads), exactly."""
    import bz2

    rows = 80_000
    text = "ts,open,high,low,close\n" + "".join(
        f"2024-01-02T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z,1,2,0.5,1.5\n"
        for i in range(rows)
    )
    assert len(text) > 2 << 20
    (tmp_path / "ES.csv.bz2").write_bytes(bz2.compress(text.encode()))
    assert estimate_rows(tmp_path / "ES.csv.bz2") == rows + 1
    (tmp_path / "ES.csv.bz2").write_bytes(bz2.compress(text.rstrip("\n").encode()))
    assert estimate_rows(tmp_path / "ES.csv.bz2") == rows + 1
    (tmp_path / "ES.csv.bz2").write_bytes(bz2.compress(b""))
    assert estimate_rows(tmp_path / "ES.csv.bz2") == 0
