"""Read the rows appended to a bars file since the last call, line by line where it matters.

* **CSV**: the bytes after the last complete line read (a half-written last line waits for the
  next poll), in pieces of at most ``chunk_bytes``;
* **parquet** (rewritten by its producer, ideally atomically): the rows past the row count
  already read, in pieces of at most ``chunk_rows``; a file that cannot be read yet (a writer
  mid-way) is retried at the next poll.

Each piece is read exactly as ``foxhunt predict`` reads a file (:func:`~foxhunt.data.read.bars.load_bars`
on a file of the same name: same column names, timestamp formats, symbol from the file name)
but not validated: every row keeps its place in the file (:data:`~foxhunt.infer.screen.WHERE`,
the CSV line number) so that :func:`~foxhunt.infer.screen.screen` can judge it on its own. A
piece the reader cannot take as a whole (a line with too many fields) is halved until the lines
it cannot read are alone; those are ``malformed`` rejects. Blank lines are passed over.

A reader can start at a position already processed (``resume_at``: CSV byte offset, parquet
row): the rows before it are read again as history (``Piece.replay``) and the first pieces end
exactly there.
"""

from __future__ import annotations

import logging
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import BinaryIO

import polars as pl
import pyarrow.parquet as pq

from foxhunt.data.read.bars import load_bars
from foxhunt.data.read.csv_dialect import sniff_csv
from foxhunt.data.read.encoding import encoding_of
from foxhunt.data.read.files import TABLE_SUFFIXES, is_parquet
from foxhunt.data.read.options import ReadOptions
from foxhunt.data.read.stamps import bar_start
from foxhunt.errors import DataError, InputError
from foxhunt.infer.screen import WHERE, Reject

log = logging.getLogger(__name__)

CHUNK_ROWS = 100_000
"""Parquet rows read per piece."""
CHUNK_BYTES = 8 << 20
"""CSV bytes read per piece (cut at the last complete line)."""


@dataclass(frozen=True)
class Piece:
    """New rows of the followed file.

    Attributes:
        rows: ``ts symbol open high low close volume`` (nulls where unreadable) and ``WHERE``.
        rejects: Lines that could not be read at all (``malformed``).
        end: The position after this piece (CSV: byte offset; parquet: rows).
        replay: Whether the piece lies before ``resume_at`` (already processed by an earlier run).
    """

    rows: pl.DataFrame
    rejects: list[Reject]
    end: int
    replay: bool


class BarFileReader:
    """Reads the rows appended to a bars file since the last call.

    Args:
        path: A ``.parquet``/``.pq`` or ``.csv`` file (it may not exist yet).
        chunk_rows: Parquet rows per piece.
        chunk_bytes: CSV bytes per piece.
        resume_at: Position already processed by an earlier run (CSV: byte offset, header
            included; parquet: rows); rows before it come back with ``replay=True``.
        options: how to read the rows (the run's read options, ``--tz`` ...); None: guess.
            ``bar_minutes`` is not applied: the feed's bars are taken as they come.
        stamp_shift: subtracted from every row's time: the run's bar interval for bars
            stamped at their end (``--stamps end``; a piece of one row has no interval of its
            own to infer), else zero.

    Raises:
        InputError: Unsupported file type.
    """

    def __init__(
        self,
        path: Path,
        *,
        chunk_rows: int = CHUNK_ROWS,
        chunk_bytes: int = CHUNK_BYTES,
        resume_at: int = 0,
        options: ReadOptions | None = None,
        stamp_shift: timedelta = timedelta(0),
    ) -> None:
        self.path = Path(path)
        self.options = options
        self.stamp_shift = stamp_shift
        self.ends: dict[str, object] = {}  # each symbol's last end stamp read (--stamps end)
        self.told: set[str] = set()  # the reader's warnings given so far, once each
        if self.path.suffix.lower() not in TABLE_SUFFIXES:
            raise InputError(f"--follow {path}: unsupported file type (use .parquet or .csv)")
        self.parquet = is_parquet(self.path)
        self.chunk_rows = chunk_rows
        self.chunk_bytes = chunk_bytes
        self.resume_at = resume_at
        self.position = 0  # CSV: bytes read (header included); parquet: rows read
        self.lines = 0  # CSV: lines read (header included)
        self.header = b""  # the header line (empty for a headerless file)
        self.header_read = False
        self.symbol_column: bool | None = None  # whether the rows name their symbol (None: unread)

    @property
    def unit(self) -> str:
        """What :attr:`position` counts: ``bytes`` or ``rows``."""
        return "rows" if self.parquet else "bytes"

    def where(self, at: int) -> str:
        """How a row is named in messages: ``FILE line N`` (CSV) or ``FILE row N`` (parquet)."""
        return f"{self.path} {'row' if self.parquet else 'line'} {at}"

    def new_pieces(self) -> Iterator[Piece]:
        """The rows appended since the last call, oldest first.

        Raises:
            DataError: The file shrank, its header changed or is unreadable, or it no longer
                reaches ``resume_at`` on a line boundary (it was replaced).
        """
        if not self.path.is_file():
            return
        yield from (self._parquet() if self.parquet else self._csv())

    # --- parquet ---------------------------------------------------------------------------

    def _parquet(self) -> Iterator[Piece]:
        try:
            total = pq.ParquetFile(self.path).metadata.num_rows
        except Exception as e:  # noqa: BLE001 - a writer mid-way; pyarrow raises several types
            log.warning("%s: not readable yet (%s); retrying at the next poll", self.path, e)
            return
        if total < max(self.position, self.resume_at):
            raise DataError(
                f"{self.path}: has {total} rows, fewer than the "
                f"{max(self.position, self.resume_at)} already read"
            )
        while self.position < total:
            stop = self.resume_at if self.position < self.resume_at else total
            n = min(self.chunk_rows, stop - self.position)
            raw = pl.scan_parquet(self.path).slice(self.position, n).collect()
            rows, rejects = self._load_parquet(raw, self.position)
            self.position += n
            yield Piece(rows, rejects, self.position, self.position <= self.resume_at)

    def _load_parquet(self, raw: pl.DataFrame, first: int) -> tuple[pl.DataFrame, list[Reject]]:
        """Load parquet rows ``first..`` ; halve the piece while it cannot be read whole."""
        try:
            return self._load(raw, pl.Series(WHERE, range(first, first + raw.height))), []
        except DataError as e:
            if raw.height == 1:
                return _empty_rows(), [Reject(first, "malformed", str(e))]
        h = raw.height // 2
        a, ra = self._load_parquet(raw.head(h), first)
        b, rb = self._load_parquet(raw.slice(h), first + h)
        return pl.concat([a, b], how="vertical"), ra + rb

    # --- CSV -------------------------------------------------------------------------------

    def _csv(self) -> Iterator[Piece]:
        size = self.path.stat().st_size
        if size < max(self.position, self.resume_at):
            raise DataError(
                f"{self.path}: is {size} bytes, shorter than the "
                f"{max(self.position, self.resume_at)} already read"
            )
        with open(self.path, "rb") as f:
            if not self.header_read and not self._read_header(f):
                return
            while self.position < size:
                replaying = self.position < self.resume_at
                stop = self.resume_at if replaying else size
                f.seek(self.position)
                data = f.read(min(self.chunk_bytes, stop - self.position))
                end = data.rfind(b"\n")
                if end < 0:
                    if replaying:
                        raise DataError(
                            f"{self.path}: no line ends at byte {self.resume_at}, where the "
                            "last run stopped (was the file replaced?)"
                        )
                    if len(data) >= self.chunk_bytes:
                        raise DataError(
                            f"{self.path}: a line longer than {self.chunk_bytes} bytes at byte "
                            f"{self.position}"
                        )
                    return  # an incomplete last line: wait for the rest
                lines = data[: end + 1].split(b"\n")[:-1]
                numbered = [
                    (self.lines + 1 + i, line) for i, line in enumerate(lines) if line.strip()
                ]
                rows, rejects = self._load_lines(numbered) if numbered else (_empty_rows(), [])
                self.lines += len(lines)
                self.position += end + 1
                yield Piece(rows, rejects, self.position, self.position <= self.resume_at)

    def _read_header(self, f: BinaryIO) -> bool:
        """Read and check the header line; False while it is still being written.

        A headerless file (a vendor's ``20180102 170000;1.2;...``: the first line is a bar, as
        :func:`~foxhunt.data.read.csv_dialect.sniff_csv` judges it) has no header to keep:
        every line, the first included, is then read as rows."""
        line = f.readline()
        if not line.endswith(b"\n"):
            return False
        self._pin_decimal()
        if encoding_of(line).startswith("utf-16"):  # its lines do not end at a b"\n" byte
            raise DataError(
                f"{self.where(1)}: UTF-16 text; --follow reads UTF-8 (or ASCII) files: have the "
                "producer write UTF-8 (a finished file reads with --bars as it is)"
            )
        try:
            self._load(line, pl.Series(WHERE, [1], dtype=pl.Int64))
        except DataError:
            pass
        else:  # line 1 reads as one bar: no header
            self.header_read = True
            return True
        try:
            self._load(line, pl.Series(WHERE, [], dtype=pl.Int64))
        except DataError as e:
            if "empty file" not in str(e):  # a header alone is "empty"; anything else is fatal
                raise DataError(f"{self.where(1)} (the header): {str(e)}") from e
        self.header, self.position, self.lines = line, len(line), 1
        self.header_read = True
        return True

    def _pin_decimal(self) -> None:
        """The decimal comma of the file as it is when the follower starts, kept for every
        piece: a piece of a few lines may hold no number that tells (a German file's whole
        prices, ``16.750``, read as 16.75 in a piece without a comma)."""
        if self.options is not None and self.options.decimal is not None:
            return
        try:
            comma = sniff_csv(self.path).decimal_comma
        except DataError:
            return  # too little to tell yet, or ambiguous: each piece is judged (and refused)
        if comma:
            self.options = replace(self.options or ReadOptions(), decimal="comma")

    def _load_lines(self, numbered: list[tuple[int, bytes]]) -> tuple[pl.DataFrame, list[Reject]]:
        """Load numbered lines; halve them while they cannot be read whole."""
        where = pl.Series(WHERE, [n for n, _ in numbered], dtype=pl.Int64)
        try:
            return self._load(self.header + b"\n".join(x for _, x in numbered) + b"\n", where), []
        except DataError as e:
            if len(numbered) == 1:
                return _empty_rows(), [Reject(numbered[0][0], "malformed", str(e))]
        h = len(numbered) // 2
        a, ra = self._load_lines(numbered[:h])
        b, rb = self._load_lines(numbered[h:])
        return pl.concat([a, b], how="vertical"), ra + rb

    # --- both ------------------------------------------------------------------------------

    def _to_starts(self, frame: pl.DataFrame) -> pl.DataFrame:
        """End-stamped rows moved to their start as ``--stamps end`` moves a file's
        (:func:`~foxhunt.data.read.stamps.to_bar_starts`): the run's interval earlier, or to the
        end of the symbol's bar before where that is later (a short last bar of the session),
        that bar carried over from the pieces before."""
        ts = pl.col("ts")
        carried = pl.DataFrame(
            {"symbol": list(self.ends), _END: list(self.ends.values())},
            schema={"symbol": pl.String, _END: frame.schema["ts"]},
        )
        frame = frame.join(carried, on="symbol", how="left", maintain_order="left")
        before = pl.coalesce(ts.shift(1).over("symbol"), pl.col(_END))
        start = bar_start(ts, before, self.stamp_shift)
        for symbol, end in (
            frame.drop_nulls(["symbol", "ts"]).group_by("symbol").agg(ts.last()).rows()
        ):
            self.ends[symbol] = end
        return frame.with_columns(start.alias("ts")).drop(_END)

    def _load(self, content: pl.DataFrame | bytes, where: pl.Series) -> pl.DataFrame:
        """Read rows as ``load_bars`` reads a file: via a file of the same name (a symbol taken
        from the file name stays the same). Errors do not name the temporary file."""
        with tempfile.TemporaryDirectory() as tmp:
            # under the feed's own three nearest folders: a name that says nothing of the
            # symbol (ES/data.csv, symbol=ES/part-0.parquet) takes a folder's, and the
            # temporary folder's random name was read as symbol TMPVLYTQW65
            folders = [p.name for p in list(self.path.resolve().parents)[:3] if p.name][::-1]
            piece = Path(tmp).joinpath(*folders, self.path.name)
            piece.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                piece.write_bytes(content)
            else:
                content.write_parquet(piece)
            try:
                with _told_once(piece, self.path, self.told):
                    loaded = load_bars(piece, options=self.options)
            except DataError as e:  # the temporary file's name and line are not the feed's
                detail = re.sub(re.escape(str(piece)) + r"(?: line \d+)?:? ?", "", str(e))
                raise DataError(detail) from e
        if any(loaded.prints):  # a minute's bar would be forecast before its minute ends
            raise InputError(  # not a line's fault: stops the follower (DataError rejects a line)
                f"--follow {self.path}: the feed holds prints (trades or quotes), not bars: "
                "--follow takes bars as they come; write each bar once it is complete"
            )
        frame = loaded.frame
        self.symbol_column = "symbol" in loaded.spellings[0]
        if frame.height != where.len():  # e.g. a quoted field across lines: judge line by line
            raise DataError(f"read {frame.height} rows from {where.len()} lines")
        if self.stamp_shift:
            frame = self._to_starts(frame)
        return frame.select(_ROW_COLUMNS).with_columns(where)


class _Once(logging.Filter):
    """A reader's warning about a piece, naming the feed (not the piece's temporary file),
    given once per feed: "no volume column in /tmp/tmpab12/ES.csv" came at every poll until
    session 54."""

    def __init__(self, piece: Path, path: Path, told: set[str]) -> None:
        super().__init__()
        self.piece, self.path, self.told = str(piece), str(path), told

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith("foxhunt.data."):
            return True
        if (decided := record.__dict__.get("_told_once")) is not None:  # another handler's
            return bool(decided)
        message = record.getMessage().replace(self.piece, self.path)
        record.__dict__["_told_once"] = message not in self.told
        self.told.add(message)
        record.msg, record.args = message, ()
        return bool(record.__dict__["_told_once"])


@contextmanager
def _told_once(piece: Path, path: Path, told: set[str]) -> Iterator[None]:
    """:class:`_Once` on the handlers of the root logger while a piece is read."""
    once = _Once(piece, path, told)
    handlers = list(logging.getLogger().handlers)
    for h in handlers:
        h.addFilter(once)
    try:
        yield
    finally:
        for h in handlers:
            h.removeFilter(once)


_ROW_COLUMNS = ("ts", "symbol", "open", "high", "low", "close", "volume")
_END = "__end_before"


def _empty_rows() -> pl.DataFrame:
    return pl.DataFrame(
        schema={
            "ts": pl.Datetime("us", "UTC"),
            "symbol": pl.String,
            **{c: pl.Float64 for c in _ROW_COLUMNS[2:]},
            WHERE: pl.Int64,
        }
    )
