"""Sierra Chart intraday files (``.scid``), written here record by record in the published
layout (a 56-byte header, 40-byte records): bars read as bars, ticks as trades that
``--bar-minutes`` builds into bars, both time encodings, and one-line refusals of damaged files.
Were refused as "unsupported file type '.scid'"."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from foxhunt.cli import main
from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.options import ReadOptions
from foxhunt.data.read.row_count import estimate_rows
from foxhunt.data.read.scid import read_scid
from foxhunt.errors import DataError

_RECORD = np.dtype(
    [
        ("time", "<i8"),
        ("open", "<f4"),
        ("high", "<f4"),
        ("low", "<f4"),
        ("close", "<f4"),
        ("trades", "<u4"),
        ("volume", "<u4"),
        ("bid_volume", "<u4"),
        ("ask_volume", "<u4"),
    ]
)
"""The published record, spelled out again here so a change to the reader's cannot pass."""
START = 1_704_205_800_000_000  # 2024-01-02 14:30 UTC, microseconds since 1970
SC_EPOCH_US = 25_569 * 86_400_000_000  # 1899-12-30 -> 1970-01-01


def _header(record_bytes: int = 40) -> bytes:
    return b"SCID" + struct.pack("<IIHHI", 56, record_bytes, 1, 0, 0) + bytes(36)


def _write(
    path: Path,
    us: np.ndarray,
    prices: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    volume: np.ndarray,
    *,
    days: bool = False,
) -> Path:
    """An .scid file of the given records (times in microseconds since 1970, UTC); ``days``:
    the pre-2017 encoding, a float64 of days since 1899-12-30."""
    rec = np.zeros(len(us), _RECORD)
    sc = np.asarray(us, np.int64) + SC_EPOCH_US
    rec["time"] = (sc / 86_400_000_000).astype("<f8").view("<i8") if days else sc
    rec["open"], rec["high"], rec["low"], rec["close"] = prices
    rec["trades"], rec["volume"] = 1, volume
    path.write_bytes(_header() + rec.tobytes())
    return path


def _bars(n: int = 300) -> tuple[np.ndarray, tuple, np.ndarray]:
    rng = np.random.default_rng(3)
    close = 4700 + np.cumsum(rng.integers(-4, 5, n)) * 0.25
    opens = np.r_[close[0], close[:-1]]
    high, low = np.maximum(opens, close) + 0.5, np.minimum(opens, close) - 0.25
    us = START + np.arange(n, dtype=np.int64) * 60_000_000
    return us, (opens, high, low, close), rng.integers(100, 1000, n)


def _expected(us: np.ndarray, prices: tuple, volume: np.ndarray) -> pl.DataFrame:
    o, h, low, c = prices
    return pl.DataFrame(
        {
            "ts": pl.Series(us).cast(pl.Datetime("us", "UTC")),
            "open": o,
            "high": h,
            "low": low,
            "close": c,
            "volume": volume.astype(np.float64),
        }
    )


def test_one_minute_bars_read_as_written_with_the_contract_from_the_name(tmp_path: Path) -> None:
    us, prices, volume = _bars()
    path = _write(tmp_path / "ESH24_FUT_CME.scid", us, prices, volume)
    got = read_bars(path)
    assert got["symbol"].unique().to_list() == ["ES"]
    assert got["contract"].unique().to_list() == ["ESH24"]
    want = _expected(us, prices, volume)
    assert_frame_equal(got.select(want.columns), want, check_dtypes=False)


def test_the_pre_2017_encoding_of_days_reads_the_same_bars(tmp_path: Path) -> None:
    us, prices, volume = _bars()
    (tmp_path / "new").mkdir()
    (tmp_path / "old").mkdir()
    new = read_bars(_write(tmp_path / "new" / "ESH24.scid", us, prices, volume))
    old = read_bars(_write(tmp_path / "old" / "ESH24.scid", us, prices, volume, days=True))
    assert_frame_equal(old, new)


@pytest.mark.parametrize(
    ("symbol", "closes"),
    [
        ("6EH24", [1.08725, 1.0873, 1.08715]),  # float32: 1.0872499942779541 ...
        ("ZNH24", [110.171875, 110.1875, 110.015625]),  # 64ths: exact in float32, 9 digits
        ("6JH24", [0.0067215, 0.0067225, 0.006721]),
        ("BTCH24", [95000.5, 95001.0, 94999.5]),
        ("ZTH24", [104.00390625, 107.8828125, 139.015625]),  # 256ths, 128ths, 64ths above 128
    ],
)
def test_float32_prices_read_as_the_decimals_they_hold(
    tmp_path: Path, symbol: str, closes: list[float]
) -> None:
    """A multiple of 1/256 as it is (exact in float32; its shortest float32 decimal, 104.00391,
    is not the price), any other price as the shortest decimal that is the same float32 (not
    1.08725 with float noise)."""
    us = START + np.arange(3, dtype=np.int64) * 60_000_000
    c = np.array(closes)
    got = read_scid(_write(tmp_path / f"{symbol}.scid", us, (c, c, c, c), np.ones(3)))
    assert got["close"].to_list() == closes
    assert got["open"].to_list() == closes


def _ticks(n: int = 500) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    us = START + np.sort(rng.integers(0, 30 * 60_000_000, n))
    price = 4700 + np.cumsum(rng.integers(-1, 2, n)) * 0.25
    return us, price, rng.integers(1, 20, n)


@pytest.mark.parametrize("marker", [0.0, -1.99900095e37])
def test_ticks_are_trades_that_bar_minutes_builds_into_bars(tmp_path: Path, marker: float) -> None:
    """Sierra Chart's tick records: open 0 (or an unbundled trade's marker), high the ask, low
    the bid, close the trade's price, volume its size."""
    us, price, size = _ticks()
    opens = np.full(len(us), marker)
    path = _write(tmp_path / "NQH24.scid", us, (opens, price + 0.25, price - 0.25, price), size)
    got = read_bars(path, options=ReadOptions(bar_minutes=1))
    ticks = pl.DataFrame(
        {"ts": pl.Series(us).cast(pl.Datetime("us", "UTC")), "p": price, "s": size}
    )
    want = (
        ticks.group_by(pl.col("ts").dt.truncate("1m"), maintain_order=True)
        .agg(
            open=pl.col("p").first(),
            high=pl.col("p").max(),
            low=pl.col("p").min(),
            close=pl.col("p").last(),
            volume=pl.col("s").sum().cast(pl.Float64),
        )
        .sort("ts")
    )
    assert got.height == want.height == 30
    assert_frame_equal(got.select(want.columns), want, check_dtypes=False)
    assert got["symbol"].unique().to_list() == ["NQ"]


def test_ticks_without_bar_minutes_are_refused_naming_it(tmp_path: Path) -> None:
    us, price, size = _ticks(50)
    path = _write(tmp_path / "NQH24.scid", us, (np.zeros(50), price, price, price), size)
    with pytest.raises(
        DataError,
        match=r"a Sierra Chart tick file \(each record one trade\): --bar-minutes K builds",
    ):
        read_bars(path)


def test_bars_then_ticks_are_refused_at_the_first_tick(tmp_path: Path) -> None:
    us, (o, h, low, c), volume = _bars(20)
    o = o.copy()
    o[12:] = 0.0
    path = _write(tmp_path / "ESH24.scid", us, (o, h, low, c), volume)
    with pytest.raises(DataError, match=r"record 13: ticks after 12 records of bars"):
        read_scid(path)


def test_a_file_cut_inside_a_record_is_refused(tmp_path: Path) -> None:
    us, prices, volume = _bars(10)
    path = _write(tmp_path / "ESH24.scid", us, prices, volume)
    path.write_bytes(path.read_bytes()[:-27])
    with pytest.raises(
        DataError, match="cut short: its last record has 13 of its 40 bytes, after 9"
    ):
        read_scid(path)


def test_another_record_size_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ESH24.scid"
    path.write_bytes(_header(44) + bytes(44 * 3))
    with pytest.raises(DataError, match="records are 44 bytes, not the 40"):
        read_scid(path)


def test_a_time_in_neither_encoding_is_refused(tmp_path: Path) -> None:
    us, prices, volume = _bars(3)
    path = _write(tmp_path / "ESH24.scid", us - SC_EPOCH_US - START, prices, volume)  # time 0
    with pytest.raises(DataError, match="record 1: its time .* neither microseconds nor days"):
        read_scid(path)


def test_a_text_export_named_scid_and_a_scid_named_csv_are_told_apart(tmp_path: Path) -> None:
    text = tmp_path / "ESH24.scid"
    text.write_text(
        "Date, Time, Open, High, Low, Last, Volume\n2024/1/2, 14:30:00, 1, 2, 0.5, 1, 9\n"
    )
    with pytest.raises(DataError, match="not a Sierra Chart intraday file"):
        read_bars(text)
    us, prices, volume = _bars(5)
    binary = _write(tmp_path / "ESH24.csv", us, prices, volume)
    with pytest.raises(DataError, match="holds a Sierra Chart intraday file.*name it .scid"):
        read_bars(binary)


def test_the_memory_plan_counts_its_records(tmp_path: Path) -> None:
    us, prices, volume = _bars(123)
    assert estimate_rows(_write(tmp_path / "ESH24.scid", us, prices, volume)) == 123


def test_the_cli_refuses_a_damaged_file_in_one_line_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ESH24.scid"
    path.write_bytes(_header(44) + bytes(44))
    assert main(["data", "inspect", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "records are 44 bytes" in err[0]


def test_a_data_folder_of_scid_files_reads_one_series_a_file(tmp_path: Path) -> None:
    """Sierra Chart's Data folder: one file per symbol, read together."""
    us, prices, volume = _bars(50)
    _write(tmp_path / "ESH24_FUT_CME.scid", us, prices, volume)
    _write(tmp_path / "NQH24_FUT_CME.scid", us, tuple(p * 4 for p in prices), volume)
    got = read_bars(tmp_path)
    assert got.group_by("symbol").len().sort("symbol").rows() == [("ES", 50), ("NQ", 50)]
    assert got.filter(pl.col("symbol") == "NQ")["close"].to_list() == (prices[3] * 4).tolist()


def test_days_one_float64_step_below_the_minute_read_at_the_minute(tmp_path: Path) -> None:
    """The old encoding's times are whole milliseconds: a double a step below 14:31 is 14:31."""
    us, prices, volume = _bars(40)
    path = _write(tmp_path / "ESH16.scid", us, prices, volume, days=True)
    rec = np.frombuffer(bytearray(path.read_bytes()), _RECORD, offset=56).copy()
    days = rec["time"].view("<f8")
    rec["time"] = np.nextafter(days, -np.inf).view("<i8")
    path.write_bytes(_header() + rec.tobytes())
    got = read_scid(path)
    assert got["ts"].to_list() == pl.Series(us).cast(pl.Datetime("us", "UTC")).to_list()


@pytest.mark.parametrize("damage", ["zero tail", "flipped bit"])
def test_a_record_whose_time_is_no_date_is_refused_by_its_number(
    tmp_path: Path, damage: str
) -> None:
    us, prices, volume = _bars(30)
    path = _write(tmp_path / "ESH24.scid", us, prices, volume)
    data = bytearray(path.read_bytes())
    if damage == "zero tail":  # a crash leaves the file padded with zeros
        data += bytes(40 * 5)
        match = r"record 31: its time is not a date in 1970-2200 \(all its bytes 0"
    else:
        data[56 + 40 * 17 + 7] ^= 0x40  # bit 62 of record 18's time
        match = r"record 18: its time is not a date in 1970-2200, after 17 records"
    path.write_bytes(bytes(data))
    with pytest.raises(DataError, match=match):
        read_scid(path)


def test_a_scid_inside_a_zip_is_refused_naming_what_to_do(tmp_path: Path) -> None:
    import zipfile

    us, prices, volume = _bars(10)
    inner = _write(tmp_path / "ESH24.scid", us, prices, volume)
    archive = tmp_path / "sierra.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.write(inner, "ESH24.scid")
    with pytest.raises(DataError, match="inside a zip archive is not read: extract it"):
        read_bars(archive / "ESH24.scid")
