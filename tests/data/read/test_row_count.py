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
    assert estimate_rows(REAL / "gbpusd-m1-bid-2012.csv.gz") == 6003  # 6,001 lines
    assert estimate_rows(REAL / "histdata") == 600  # fixed-width lines: exact
