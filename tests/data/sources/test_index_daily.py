"""The real daily index bars read from the installed ``arch`` wheel (data/sources/index_daily.py):
the frame's exact layout and first values, the close stamped at 16:00 New York in both halves of
the year, the refusals when ``arch`` or its file is missing, provenance and the atomic write."""

from __future__ import annotations

import importlib.metadata
from datetime import datetime
from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.sources import index_daily
from foxhunt.data.sources.index_daily import (
    SERIES,
    index_daily_bars,
    provenance,
    source_files,
    write_index_daily,
)
from foxhunt.errors import DataError

UTC = "UTC"


def test_both_series_as_one_sorted_frame_with_the_files_first_values() -> None:
    bars = index_daily_bars()
    assert bars.columns == ["ts", "symbol", "open", "high", "low", "close", "volume"]
    assert bars.schema["ts"] == pl.Datetime("us", UTC)
    assert all(bars.schema[c] == pl.Float64 for c in ("open", "high", "low", "close", "volume"))
    assert bars.height == 10_062
    assert bars.group_by("symbol").len().sort("symbol").rows() == [("ES", 5031), ("NQ", 5031)]
    assert bars["symbol"].to_list() == sorted(bars["symbol"].to_list())  # ES first, then NQ
    for _, one in bars.group_by("symbol"):
        assert one["ts"].is_sorted()
    es, nq = bars.row(0, named=True), bars.row(5031, named=True)
    # 1/4/1999 16:00 New York (winter, UTC-5) is 21:00 UTC; the prices and volume as in the file
    assert es == {
        "ts": datetime(1999, 1, 4, 21, tzinfo=es["ts"].tzinfo), "symbol": "ES",
        "open": 1229.22998, "high": 1248.810059, "low": 1219.099976, "close": 1228.099976,
        "volume": 877000000.0,
    }  # fmt: skip
    assert (nq["symbol"], nq["close"], nq["volume"]) == ("NQ", 2208.050049, 936660000.0)


def test_the_close_is_stamped_at_16_new_york_in_summer_and_winter() -> None:
    ts = index_daily_bars()["ts"].dt.convert_time_zone("America/New_York")
    assert set(ts.dt.hour().to_list()) == {16} and set(ts.dt.minute().to_list()) == {0}
    utc_hours = set(index_daily_bars()["ts"].dt.hour().to_list())
    assert utc_hours == {20, 21}  # daylight saving and standard time


def test_the_source_files_are_the_wheels_csvs() -> None:
    files = source_files()
    assert list(files) == ["ES", "NQ"]
    for symbol, path in files.items():
        assert path.is_file() and path.as_posix().endswith(SERIES[symbol])


def test_no_arch_is_refused_with_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> object:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(index_daily.importlib.metadata, "distribution", missing)
    with pytest.raises(DataError, match=r"^the real index bars come from the 'arch' package, "
                       r"which is not installed \(pip install arch, or make install\)$"):  # fmt: skip
        source_files()


def test_a_file_missing_from_the_wheel_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_daily, "SERIES", {"ES": "arch/data/nothing/here.csv.gz"})
    version = importlib.metadata.version("arch")
    with pytest.raises(DataError, match=rf"nothing/here\.csv\.gz: not in the installed arch "
                       rf"{version} wheel$"):  # fmt: skip
        source_files()


def test_provenance_names_the_arch_version_and_both_files() -> None:
    got = provenance()
    assert got["source"] == f"arch {importlib.metadata.version('arch')} wheel"
    assert got["files"] == {s: str(p) for s, p in source_files().items()}


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_write_index_daily_writes_what_it_returns(tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"index{suffix}"
    bars = write_index_daily(out)
    back = pl.read_parquet(out) if suffix == ".parquet" else pl.read_csv(out, try_parse_dates=True)
    assert back.height == bars.height == 10_062
    assert back["close"].to_list() == bars["close"].to_list()
    assert not list(tmp_path.glob("*.tmp"))
