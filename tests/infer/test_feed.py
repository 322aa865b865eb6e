"""Reading a growing bars file: CSV line numbers, lines that cannot be read, resuming."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.sources.demo import demo_bars
from foxhunt.errors import DataError, InputError
from foxhunt.infer.feed import BarFileReader
from foxhunt.infer.screen import WHERE


def _csv(path: Path, n: int) -> list[str]:
    text = demo_bars(n, seed=4).write_csv()
    path.write_text(text)
    return text.splitlines(keepends=True)


def test_csv_rows_carry_their_file_line(tmp_path: Path) -> None:
    path = tmp_path / "ES_feed.csv"
    lines = _csv(path, 6)
    with open(
        path, "a"
    ) as f:  # a blank line, a line with a field too many, a good one, half a line
        f.write("\n" + lines[1].replace("\n", ",9\n") + lines[2] + lines[3][:10])
    pieces = list(BarFileReader(path, chunk_bytes=150).new_pieces())  # ~2 lines per piece
    rows = pl.concat([p.rows for p in pieces])
    assert rows[WHERE].to_list() == [2, 3, 4, 5, 6, 7, 10]
    assert rows["ts"][-1] == rows["ts"][1]  # line 10 repeats line 3 (judged later, not here)
    rejects = [r for p in pieces for r in p.rejects]
    assert [(r.where, r.reason) for r in rejects] == [(9, "malformed")]
    assert "8 fields where the table has 7" in rejects[0].detail and "tmp" not in rejects[0].detail
    assert pieces[-1].end == path.stat().st_size - 10  # the half line waits


def test_resume_replays_up_to_the_offset_then_reads_on(tmp_path: Path) -> None:
    path = tmp_path / "ES_feed.csv"
    lines = _csv(path, 8)
    offset = sum(len(x) for x in lines[:5])
    pieces = list(BarFileReader(path, chunk_bytes=1 << 20, resume_at=offset).new_pieces())
    assert [(p.end, p.replay) for p in pieces] == [(offset, True), (path.stat().st_size, False)]
    assert pieces[1].rows[WHERE].to_list() == [6, 7, 8, 9]
    with pytest.raises(DataError, match="no line ends at byte"):
        list(BarFileReader(path, resume_at=offset - 3).new_pieces())


def test_a_broken_header_stops_the_reader(tmp_path: Path) -> None:
    path = tmp_path / "ES_feed.csv"
    path.write_text("when,sym,o,h,l\n1,ES,1,1,1\n")
    with pytest.raises(DataError, match=r"ES_feed.csv line 1 \(the header\): missing column"):
        list(BarFileReader(path).new_pieces())


def test_rows_are_read_with_the_runs_read_options(tmp_path: Path) -> None:
    """A feed of naive New York times without a symbol column, read with the run's (or the
    user's) --tz and --symbol: the rows are the bars the model knows."""
    from foxhunt.data.read.options import ReadOptions

    bars = demo_bars(4, seed=4)
    local = pl.col("ts").dt.convert_time_zone("America/New_York").dt.replace_time_zone(None)
    path = tmp_path / "feed.csv"
    bars.drop("symbol").with_columns(local).write_csv(path)
    opts = ReadOptions(tz="America/New_York", symbol="ES")
    (piece,) = BarFileReader(path, options=opts).new_pieces()
    assert piece.rows["ts"].to_list() == bars["ts"].to_list()
    assert piece.rows["symbol"].unique().to_list() == ["ES"]
    (guessed,) = BarFileReader(path).new_pieces()  # without them: UTC and the file's name
    assert guessed.rows["ts"][0] != bars["ts"][0] and guessed.rows["symbol"][0] == "FEED"


def test_a_headerless_vendor_file_is_read_from_its_first_line(tmp_path: Path) -> None:
    """histdata's DAT_ASCII files have no header: line 1 is a bar, read like every other line
    (and as ``predict --bars`` reads the whole file), also when it grows line by line."""
    import zipfile

    from foxhunt.data.read.bars import load_bars
    from foxhunt.data.read.options import ReadOptions

    real = Path(__file__).parents[1] / "data" / "fixtures" / "real" / "histdata"
    with zipfile.ZipFile(real / "HISTDATA_COM_ASCII_EURUSD_M12018.zip") as z:
        lines = z.read("DAT_ASCII_EURUSD_M1_2018.csv").splitlines(keepends=True)[:40]
    path = tmp_path / "DAT_ASCII_EURUSD_M1_2018.csv"
    opts = ReadOptions(tz="Etc/GMT+5")
    path.write_bytes(b"".join(lines))
    whole = load_bars(path, options=opts).frame
    path.write_bytes(lines[0])  # the file as it starts: one bar, no header
    reader = BarFileReader(path, options=opts, chunk_bytes=400)
    pieces = list(reader.new_pieces())
    with open(path, "ab") as f:
        f.write(b"".join(lines[1:]))
    pieces += list(reader.new_pieces())
    rows = pl.concat([p.rows for p in pieces])
    assert rows[WHERE].to_list() == list(range(1, 41))
    assert rows["ts"].to_list() == whole["ts"].to_list()
    assert rows["close"].to_list() == whole["close"].to_list()
    assert rows["symbol"].unique().to_list() == ["EURUSD"]
    assert pieces[-1].end == path.stat().st_size
    offset = sum(len(x) for x in lines[:25])  # a restart replays up to where the last run was
    again = list(BarFileReader(path, options=opts, resume_at=offset).new_pieces())
    assert [(p.end, p.replay) for p in again] == [(offset, True), (path.stat().st_size, False)]
    assert again[1].rows[WHERE].to_list() == list(range(26, 41))


def test_end_stamped_rows_move_by_the_runs_interval(tmp_path: Path) -> None:
    """A followed feed of bars stamped at their end (--stamps end): each row, even one alone
    in its piece, moves by the run's bar interval (the follower passes it)."""
    from datetime import timedelta

    bars = demo_bars(3, seed=4)
    path = tmp_path / "ES.csv"
    bars.with_columns(pl.col("ts") + timedelta(minutes=5)).write_csv(path)
    reader = BarFileReader(path, chunk_bytes=80, stamp_shift=timedelta(minutes=5))
    rows = pl.concat([piece.rows for piece in reader.new_pieces()])
    assert rows["ts"].to_list() == bars["ts"].to_list()


def test_a_short_end_stamped_bar_starts_where_the_bar_before_ended(tmp_path: Path) -> None:
    """TradeStation's hourly stock bars end 10:30 ... 15:30, then 16:00 (the last half hour):
    followed one row per piece, the 16:00 bar starts at 15:30 as ``--stamps end`` reads it in
    a file (it was moved to 15:00)."""
    from datetime import timedelta

    from foxhunt.data.read.bars import read_bars
    from foxhunt.data.read.options import ReadOptions

    lines = [f"2018-02-0{d} {h}:30:00-05:00,SPY,270,271,269,270.5,100" for d in (1, 2)
             for h in range(10, 16)]  # fmt: skip
    lines.insert(6, "2018-02-01 16:00:00-05:00,SPY,270,271,269,270.5,100")
    lines.append("2018-02-02 16:00:00-05:00,SPY,270,271,269,270.5,100")
    path = tmp_path / "SPY.csv"
    path.write_text("ts,symbol,open,high,low,close,volume\n" + "\n".join(lines) + "\n")
    reader = BarFileReader(path, chunk_bytes=60, stamp_shift=timedelta(hours=1))
    rows = pl.concat([piece.rows for piece in reader.new_pieces()])
    whole = read_bars(path, options=ReadOptions(stamps="end"), allow_outliers=True)
    assert rows["ts"].to_list() == whole["ts"].to_list()
    assert rows["ts"].dt.minute().to_list() == [30] * 14  # 15:30 for both short bars


def test_a_decimal_comma_seen_at_the_start_holds_for_every_piece(tmp_path: Path) -> None:
    """A German feed whose first lines have decimal commas (``4.700,25``): a later piece of
    whole prices (``4.701``) is read with points between thousands, 4701, as the file is (it was
    read as 4.701 in a piece without a comma)."""
    path = tmp_path / "FESX.csv"
    head = "Datum;Zeit;Eröffnung;Hoch;Tief;Schluss;Volumen\n"
    start = "".join(f"02.01.2024;09:0{m};4.700,25;4.701,5;4.699,5;4.700,5;12\n" for m in range(4))
    path.write_text(head + start)
    reader = BarFileReader(path, chunk_bytes=1 << 16)
    first = pl.concat([p.rows for p in reader.new_pieces()])
    assert first["open"].to_list() == [4700.25] * 4
    with open(path, "a") as f:
        f.write("02.01.2024;09:04;4.701;4.702;4.700;4.701;12\n")
    later = pl.concat([p.rows for p in reader.new_pieces()])
    assert later["close"].to_list() == [4701.0]


def test_a_feed_of_prints_is_refused(tmp_path: Path) -> None:
    """Trades built into one-minute bars as they come would forecast a minute before it ends."""
    from foxhunt.data.read.options import ReadOptions

    path = tmp_path / "ES_trades.csv"
    path.write_text("timestamp,price,size\n2024-03-04 15:00:30,5000.25,3\n")
    reader = BarFileReader(path)
    reader.options = ReadOptions(bar_minutes=1)
    with pytest.raises(InputError, match=r"ES_trades.csv: the feed holds prints \(trades or"):
        list(reader.new_pieces())


def test_the_readers_warnings_name_the_feed_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A feed without a volume column: "no volume column in /tmp/tmp.../ES_feed.csv" came at
    every piece until session 54; now once, naming the feed."""
    import logging

    path = tmp_path / "ES_feed.csv"
    text = demo_bars(6, seed=4).drop("volume").write_csv()
    path.write_text(text)
    with caplog.at_level(logging.WARNING):
        pieces = list(BarFileReader(path, chunk_bytes=150).new_pieces())
    assert len(pieces) > 2
    told = [r.getMessage() for r in caplog.records if "no volume column" in r.getMessage()]
    assert told == [f"no volume column in {path}: volume features will be constant"]
