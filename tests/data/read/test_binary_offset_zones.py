"""A parquet or Feather time column whose zone polars cannot parse (a fixed offset of a part
hour, ``+05:30`` as pandas gives Indian times; ``Z``) is read as the same instants in UTC: polars
panicked on it, a Rust traceback and exit 1."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.feather
import pyarrow.parquet
import pytest

from foxhunt.data.read.bars import read_bars

START = datetime(2024, 1, 3, 4, 0, tzinfo=UTC)  # 09:30 in India


def _table(zone: str) -> pa.Table:
    times = [START + timedelta(minutes=m) for m in range(6)]
    return pa.table(
        {
            "date": pa.array(times, pa.timestamp("us", "UTC")).cast(pa.timestamp("us", zone)),
            "open": [2500.0] * 6,
            "high": [2501.0] * 6,
            "low": [2499.0] * 6,
            "close": [2500.5] * 6,
            "volume": [10, 12, 9, 14, 11, 13],
        }
    )


@pytest.mark.parametrize("zone", ["+05:30", "-03:30", "Z", "+05:00"])
@pytest.mark.parametrize("kind", ["parquet", "feather"])
def test_a_time_zone_polars_cannot_parse_reads_as_its_instants(
    tmp_path: Path, zone: str, kind: str
) -> None:
    path = tmp_path / f"RELIANCE.{kind}"
    if kind == "parquet":
        pyarrow.parquet.write_table(_table(zone), path)
    else:
        pyarrow.feather.write_feather(_table(zone), path)
    bars = read_bars(path, min_bars=1, options=None)
    assert bars["ts"].to_list() == [START + timedelta(minutes=m) for m in range(6)]
    assert bars["volume"].to_list() == [10.0, 12.0, 9.0, 14.0, 11.0, 13.0]
