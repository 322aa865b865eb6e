"""The bars-file reader's edges, one at a time: parquet pieces, shrinking and replaced files,
headers still being written, long lines, pieces that must be halved (``make mutate``'s map of
``infer.feed``, which leaves out the follower's polling tests)."""

from __future__ import annotations

import logging
from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.sources.demo import demo_bars
from foxhunt.errors import DataError, InputError
from foxhunt.infer import feed
from foxhunt.infer.feed import BarFileReader, Piece
from foxhunt.infer.screen import WHERE, Reject


def _bars(n: int) -> pl.DataFrame:
    return demo_bars(n, seed=7)


def _pieces(reader: BarFileReader) -> list[Piece]:
    return list(reader.new_pieces())


def test_defaults_and_names(tmp_path: Path) -> None:
    assert (feed.CHUNK_ROWS, feed.CHUNK_BYTES) == (100_000, 8 << 20)
    csv = BarFileReader(tmp_path / "ES.csv")
    assert (csv.chunk_rows, csv.chunk_bytes, csv.resume_at) == (100_000, 8 << 20, 0)
    assert (csv.position, csv.lines, csv.header, csv.header_read) == (0, 0, b"", False)
    assert (csv.parquet, csv.unit, csv.options) == (False, "bytes", None)
    assert csv.where(7) == f"{tmp_path / 'ES.csv'} line 7"
    pq_ = BarFileReader(tmp_path / "ES.PQ", chunk_rows=3, chunk_bytes=9, resume_at=2)
    assert (pq_.parquet, pq_.unit, pq_.where(0)) == (True, "rows", f"{tmp_path / 'ES.PQ'} row 0")
    assert (pq_.chunk_rows, pq_.chunk_bytes, pq_.resume_at) == (3, 9, 2)
    assert BarFileReader(str(tmp_path / "ES.parquet")).path == tmp_path / "ES.parquet"


def test_an_unsupported_file_type_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError) as e:
        BarFileReader(tmp_path / "ES.txt")
    assert (
        str(e.value)
        == f"--follow {tmp_path / 'ES.txt'}: unsupported file type (use .parquet or .csv)"
    )


def test_a_file_not_there_yet_gives_nothing(tmp_path: Path) -> None:
    for name in ("ES.csv", "ES.parquet"):
        reader = BarFileReader(tmp_path / name)
        assert _pieces(reader) == [] and reader.position == 0


def test_parquet_pieces_of_chunk_rows_then_the_rows_appended(tmp_path: Path) -> None:
    path = tmp_path / "ES.parquet"
    bars = _bars(7)
    bars.head(5).write_parquet(path)
    reader = BarFileReader(path, chunk_rows=2)
    first = _pieces(reader)
    assert [(p.end, p.replay, p.rows.height) for p in first] == [
        (2, False, 2),
        (4, False, 2),
        (5, False, 1),
    ]
    assert [p.rows[WHERE].to_list() for p in first] == [[0, 1], [2, 3], [4]]
    assert first[0].rows.columns == [
        "ts",
        "symbol",
        "open",
        "high",
        "low",
        "close",
        "volume",
        WHERE,
    ]
    assert all(p.rejects == [] for p in first)
    got = pl.concat([p.rows for p in first])
    assert got["close"].to_list() == bars["close"].head(5).to_list()
    assert got["ts"].to_list() == bars["ts"].head(5).to_list()
    assert _pieces(reader) == []  # nothing new
    bars.write_parquet(path)  # the producer rewrites it with two more rows
    (more,) = _pieces(reader)
    assert (more.end, more.replay, more.rows[WHERE].to_list()) == (7, False, [5, 6])
    assert reader.position == 7


def test_parquet_resume_replays_to_the_row_then_reads_on(tmp_path: Path) -> None:
    path = tmp_path / "ES.parquet"
    _bars(6).write_parquet(path)
    pieces = _pieces(BarFileReader(path, chunk_rows=10, resume_at=4))
    assert [(p.end, p.replay) for p in pieces] == [(4, True), (6, False)]
    assert pieces[1].rows[WHERE].to_list() == [4, 5]
    done = _pieces(BarFileReader(path, resume_at=6))
    assert [(p.end, p.replay) for p in done] == [(6, True)]


def test_a_parquet_file_with_fewer_rows_than_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ES.parquet"
    _bars(6).write_parquet(path)
    reader = BarFileReader(path)
    _pieces(reader)
    _bars(4).write_parquet(path)
    with pytest.raises(DataError) as e:
        _pieces(reader)
    assert str(e.value) == f"{path}: has 4 rows, fewer than the 6 already read"
    with pytest.raises(DataError, match="has 4 rows, fewer than the 5 already read"):
        _pieces(BarFileReader(path, resume_at=5))


def test_a_parquet_file_mid_write_waits_for_the_next_poll(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "ES.parquet"
    path.write_bytes(b"PAR1 not yet")
    reader = BarFileReader(path)
    with caplog.at_level(logging.WARNING, logger="foxhunt.infer.feed"):
        assert _pieces(reader) == []
    assert "not readable yet" in caplog.text and "retrying at the next poll" in caplog.text
    _bars(3).write_parquet(path)
    (piece,) = _pieces(reader)
    assert piece.rows.height == 3


def test_a_parquet_row_that_cannot_be_read_is_one_reject(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A piece the reader refuses is halved until the refused row is alone: every other row
    is kept. (``load_bars`` refuses few parquet rows on their own, so the refusal of row 3 is
    put in by hand.)"""
    path = tmp_path / "ES.parquet"
    bars = _bars(6)
    bars.write_parquet(path)
    calls: list[list[int]] = []
    load = BarFileReader._load

    def refuse_row_3(self: BarFileReader, content: object, where: pl.Series) -> pl.DataFrame:
        calls.append(where.to_list())
        if 3 in where.to_list():
            raise DataError("row 3 is bad")
        return load(self, content, where)  # type: ignore[arg-type]

    monkeypatch.setattr(BarFileReader, "_load", refuse_row_3)
    (piece,) = _pieces(BarFileReader(path))
    assert piece.rows[WHERE].to_list() == [0, 1, 2, 4, 5]
    assert piece.rows["ts"].to_list() == [t for i, t in enumerate(bars["ts"]) if i != 3]
    assert piece.rejects == [Reject(3, "malformed", "row 3 is bad")]
    assert calls == [[0, 1, 2, 3, 4, 5], [0, 1, 2], [3, 4, 5], [3], [4, 5]]


def test_a_first_time_no_format_reads_is_a_null_time_for_the_screen(tmp_path: Path) -> None:
    path = tmp_path / "ES.parquet"
    bars = _bars(4)
    text = bars.with_columns(pl.col("ts").dt.strftime("%Y-%m-%dT%H:%M:%S%z"))
    stamps = text["ts"].to_list()
    stamps[0] = "not a time"
    text.with_columns(pl.Series("ts", stamps)).write_parquet(path)
    (piece,) = _pieces(BarFileReader(path))
    assert piece.rows["ts"].to_list() == [None, *bars["ts"].to_list()[1:]]
    assert piece.rejects == []


def test_a_csv_file_shorter_than_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ES.csv"
    _bars(6).write_csv(path)
    reader = BarFileReader(path)
    _pieces(reader)
    read = reader.position
    _bars(2).write_csv(path)
    size = path.stat().st_size
    with pytest.raises(DataError) as e:
        _pieces(reader)
    assert str(e.value) == f"{path}: is {size} bytes, shorter than the {read} already read"
    with pytest.raises(DataError, match=f"shorter than the {size + 1} already read"):
        _pieces(BarFileReader(path, resume_at=size + 1))


def test_a_header_still_being_written_waits(tmp_path: Path) -> None:
    path = tmp_path / "ES.csv"
    text = _bars(3).write_csv()
    header, rest = text.split("\n", 1)
    path.write_text(header[:8])
    reader = BarFileReader(path)
    assert _pieces(reader) == []
    assert (reader.header_read, reader.position, reader.lines) == (False, 0, 0)
    path.write_text(header + "\n")  # the header alone: no rows yet
    assert _pieces(reader) == []
    assert reader.header == (header + "\n").encode()
    assert (reader.header_read, reader.position, reader.lines) == (True, len(header) + 1, 1)
    path.write_text(text)
    (piece,) = _pieces(reader)
    assert piece.rows[WHERE].to_list() == [2, 3, 4]
    assert (piece.end, reader.lines) == (len(text.encode()), 4)


def test_a_line_longer_than_a_piece_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ES.csv"
    text = _bars(3).write_csv()
    header = text.split("\n", 1)[0] + "\n"
    path.write_text(text)
    with pytest.raises(DataError) as e:
        _pieces(BarFileReader(path, chunk_bytes=20))
    assert str(e.value) == f"{path}: a line longer than 20 bytes at byte {len(header)}"


def test_blank_lines_are_passed_over_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "ES.csv"
    lines = _bars(2).write_csv().splitlines(keepends=True)
    path.write_text(lines[0] + "\n  \n")
    reader = BarFileReader(path)
    (blank,) = _pieces(reader)
    assert blank.rows.height == 0 and blank.rejects == []
    assert blank.rows.schema == {
        "ts": pl.Datetime("us", "UTC"),
        "symbol": pl.String,
        **{c: pl.Float64 for c in ("open", "high", "low", "close", "volume")},
        WHERE: pl.Int64,
    }
    with open(path, "a") as f:
        f.write(lines[1] + "\n" + lines[2])
    (piece,) = _pieces(reader)
    assert piece.rows[WHERE].to_list() == [4, 6]
    assert reader.lines == 6


def test_lines_that_read_as_other_row_counts_are_judged_one_by_one(tmp_path: Path) -> None:
    """A quoted field across two lines reads as fewer rows than lines: the piece is halved
    until each line stands alone, and the two halves of the quote are rejects."""
    path = tmp_path / "ES.csv"
    lines = _bars(3).write_csv().splitlines(keepends=True)
    good = lines[1].rstrip("\n").split(",")
    path.write_text(lines[0] + lines[2] + f'{good[0]},"ES\n",{",".join(good[2:])}\n' + lines[3])
    (piece,) = _pieces(BarFileReader(path))
    assert piece.rows[WHERE].to_list() == [2, 5]
    assert [(r.where, r.reason) for r in piece.rejects] == [(3, "malformed"), (4, "malformed")]


def test_a_utf16_feed_is_refused_at_its_header(tmp_path: Path) -> None:
    """Its lines do not end at a newline byte: pieces would split characters."""
    path = tmp_path / "ES.csv"
    path.write_bytes(_bars(3).write_csv().encode("utf-16"))
    with pytest.raises(DataError) as e:
        _pieces(BarFileReader(path))
    assert str(e.value) == (
        f"{path} line 1: UTF-16 text; --follow reads UTF-8 (or ASCII) files: have the producer "
        "write UTF-8 (a finished file reads with --bars as it is)"
    )


def test_a_csv_file_polled_again_without_new_lines_gives_nothing(tmp_path: Path) -> None:
    path = tmp_path / "ES.csv"
    _bars(3).write_csv(path)
    reader = BarFileReader(path)
    assert len(_pieces(reader)) == 1
    assert _pieces(reader) == [] and reader.position == path.stat().st_size


def test_a_blank_line_before_a_half_written_one_is_passed(tmp_path: Path) -> None:
    """The blank line is complete: it is consumed (an empty piece), the half line waits."""
    path = tmp_path / "ES.csv"
    lines = _bars(3).write_csv().splitlines(keepends=True)
    path.write_text("".join(lines[:2]))
    reader = BarFileReader(path)
    _pieces(reader)
    read = reader.position
    with open(path, "a") as f:
        f.write("\n" + lines[2][:12])
    (blank,) = _pieces(reader)
    assert (blank.end, blank.rows.height, blank.rejects) == (read + 1, 0, [])
    with open(path, "a") as f:
        f.write(lines[2][12:])
    (piece,) = _pieces(reader)
    assert piece.rows[WHERE].to_list() == [4]


def test_a_resume_point_inside_a_line_is_refused_word_for_word(tmp_path: Path) -> None:
    path = tmp_path / "ES.csv"
    _bars(3).write_csv(path)
    with pytest.raises(DataError) as e:
        _pieces(BarFileReader(path, resume_at=50))
    assert str(e.value) == (
        f"{path}: no line ends at byte 50, where the last run stopped (was the file replaced?)"
    )


def test_reject_details_name_neither_the_temporary_file_nor_its_line(tmp_path: Path) -> None:
    path = tmp_path / "ES.csv"
    lines = _bars(3).write_csv().splitlines(keepends=True)
    cut = lines[2].replace(",ES,", ',"ES,')  # a quote that does not close
    path.write_text(lines[0] + lines[1] + cut + lines[3])
    (piece,) = _pieces(BarFileReader(path))
    assert piece.rows[WHERE].to_list() == [2, 4]
    (reject,) = piece.rejects
    assert (reject.where, reject.reason) == (3, "malformed")
    assert reject.detail == (
        "a quote opens and does not close on its line (no field of a bar file spans lines: "
        "was the file cut short or edited by hand?)"
    )
