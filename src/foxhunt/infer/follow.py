"""``foxhunt predict --follow FILE``: forecast as bars are appended to a parquet or CSV file.

Every ``poll_seconds`` the file is checked for rows past the ones already read:

* **CSV**: bytes after the last complete line read (a half-written last line waits for the
  next poll);
* **parquet** (rewritten by its producer, ideally atomically): rows past the row count already
  read; a file that cannot be read yet (a writer mid-way) is retried at the next poll.

New rows are read in chunks of at most ``chunk_rows`` rows (CSV: ``chunk_bytes``) and read
exactly as ``foxhunt predict`` reads a file (same column names, timestamp formats, validation;
rows of one chunk are sorted by symbol and time, as ``read_bars`` does), then fed to a
:class:`~foxhunt.infer.forecaster.Forecaster`. The first poll reads the backlog without
forecasting until its last chunk. Memory stays bounded: one chunk, plus the forecaster's
per-symbol tails, plus the latest forecast per symbol.

Forecasts go to ``out``: a ``.csv`` gets every forecast appended (one line per symbol x
horizon, the columns of ``foxhunt predict``); a ``.parquet`` is rewritten atomically after
each poll with the latest forecast of every symbol.

A file that shrinks (replaced by a shorter one) or a bar at or before one already read is a
:class:`~foxhunt.errors.DataError`: the loop stops rather than forecast from wrong history.
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from foxhunt.data.bars import read_bars
from foxhunt.data.files import TABLE_SUFFIXES, is_parquet
from foxhunt.errors import DataError, InputError
from foxhunt.infer.forecaster import Forecaster
from foxhunt.runtime import atomic_path

log = logging.getLogger(__name__)

CHUNK_ROWS = 100_000
"""Parquet rows read per chunk."""
CHUNK_BYTES = 8 << 20
"""CSV bytes read per chunk (cut at the last complete line)."""


class BarFileReader:
    """Reads the rows appended to a bars file since the last call.

    Args:
        path: A ``.parquet``/``.pq`` or ``.csv`` file (it may not exist yet).
        chunk_rows: Parquet rows per chunk.
        chunk_bytes: CSV bytes per chunk.
    """

    def __init__(
        self, path: Path, *, chunk_rows: int = CHUNK_ROWS, chunk_bytes: int = CHUNK_BYTES
    ) -> None:
        self.path = Path(path)
        if self.path.suffix.lower() not in TABLE_SUFFIXES:
            raise InputError(f"--follow {path}: unsupported file type (use .parquet or .csv)")
        self.chunk_rows = chunk_rows
        self.chunk_bytes = chunk_bytes
        self.rows = 0  # parquet: rows read
        self.offset = 0  # CSV: bytes read (header included)
        self.header = b""

    def new_chunks(self) -> Iterator[pl.DataFrame]:
        """Validated bars frames of the rows appended since the last call, oldest first.

        Raises:
            DataError: The file shrank, or new rows are invalid (the message names the file).
        """
        if not self.path.is_file():
            return
        if is_parquet(self.path):
            yield from self._parquet()
        else:
            yield from self._csv()

    def _parquet(self) -> Iterator[pl.DataFrame]:
        try:
            total = pq.ParquetFile(self.path).metadata.num_rows
        except Exception as e:  # noqa: BLE001 - a writer mid-way; pyarrow raises several types
            log.warning("%s: not readable yet (%s); retrying at the next poll", self.path, e)
            return
        if total < self.rows:
            raise DataError(
                f"{self.path}: has {total} rows, fewer than the {self.rows} already read"
            )
        while self.rows < total:
            n = min(self.chunk_rows, total - self.rows)
            raw = pl.scan_parquet(self.path).slice(self.rows, n).collect()
            yield self._validated(raw, f"rows {self.rows}..{self.rows + n - 1}")
            self.rows += n

    def _csv(self) -> Iterator[pl.DataFrame]:
        size = self.path.stat().st_size
        if size < self.offset:
            raise DataError(
                f"{self.path}: is {size} bytes, shorter than the {self.offset} already read"
            )
        with open(self.path, "rb") as f:
            if not self.header:
                line = f.readline()
                if not line.endswith(b"\n"):
                    return  # the header itself is still being written
                self.header, self.offset = line, len(line)
            while self.offset < size:
                f.seek(self.offset)
                data = f.read(min(self.chunk_bytes, size - self.offset))
                end = data.rfind(b"\n")
                if end < 0:
                    if len(data) >= self.chunk_bytes:
                        raise DataError(
                            f"{self.path}: a line longer than {self.chunk_bytes} bytes at byte {self.offset}"
                        )
                    return  # an incomplete last line: wait for the rest
                body = data[: end + 1]
                if body.strip():
                    yield self._validated(
                        self.header + body, f"bytes {self.offset}..{self.offset + end}"
                    )
                self.offset += end + 1

    def _validated(self, content: pl.DataFrame | bytes, what: str) -> pl.DataFrame:
        """Read new rows exactly as ``read_bars`` reads a file: via a file of the same name."""
        with tempfile.TemporaryDirectory() as tmp:
            chunk = Path(tmp) / self.path.name  # same name: a symbol taken from it stays the same
            if isinstance(content, bytes):
                chunk.write_bytes(content)
            else:
                content.write_parquet(chunk)
            try:
                return read_bars(chunk)
            except DataError as e:
                message = str(e).replace(str(chunk), f"{self.path} ({what} of the new data)")
                raise DataError(message) from e


class ForecastSink:
    """Where follow-mode forecasts go: appended to a CSV, or the latest per symbol in parquet.

    Args:
        out: ``.csv`` or ``.parquet`` path (its folder must exist).
    """

    def __init__(self, out: Path) -> None:
        self.out = Path(out)
        suffix = self.out.suffix.lower()
        if suffix not in (".csv", ".parquet", ".pq"):
            raise InputError(
                f"--out {out}: follow mode writes .csv (appended) or .parquet (latest)"
            )
        if not self.out.parent.is_dir():
            raise InputError(f"--out {out}: directory {self.out.parent} does not exist")
        self.append = suffix == ".csv"
        self.latest: dict[str, pl.DataFrame] = {}

    def write(self, forecasts: pl.DataFrame) -> None:
        """Record one poll's forecasts."""
        if forecasts.height == 0:
            return
        if self.append:
            new = not self.out.exists() or self.out.stat().st_size == 0
            with open(self.out, "ab") as f:
                forecasts.write_csv(f, include_header=new)
            return
        for (sym,), part in forecasts.group_by("symbol", maintain_order=True):
            self.latest[str(sym)] = part
        table = pl.concat([self.latest[s] for s in sorted(self.latest)], how="vertical")
        with atomic_path(self.out) as tmp:
            table.write_parquet(tmp)


def follow(
    forecaster: Forecaster,
    reader: BarFileReader,
    sink: ForecastSink,
    *,
    poll_seconds: float = 5.0,
    max_polls: int | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Poll ``reader`` and forecast from new bars until ``max_polls`` (or forever).

    Args:
        forecaster: The forecaster (possibly already holding bars).
        reader: The followed file.
        sink: Where forecasts go.
        poll_seconds: Wait between polls.
        max_polls: Stop after this many polls (None: until interrupted).
        sleep: The wait function (tests pass a fake).

    Returns:
        Forecast rows written.

    Raises:
        DataError: Bad new bars or a shrinking file (the loop stops).
    """
    written = 0
    polls = 0
    while max_polls is None or polls < max_polls:
        updated: set[str] = set()
        for chunk in reader.new_chunks():  # a backlog may come in many chunks: ingest them all
            forecaster.update(chunk, forecast=False)
            updated.update(chunk["symbol"].unique().to_list())
        if updated:
            forecasts = forecaster.forecast(updated)
            sink.write(forecasts)
            written += forecasts.height
            if forecasts.height:
                last = forecasts["origin_ts"].max()
                log.info("forecast %d symbols at %s", forecasts["symbol"].n_unique(), last)
        polls += 1
        if max_polls is None or polls < max_polls:
            sleep(poll_seconds)
    return written


def follow_path(
    model_dir: Path,
    path: Path,
    out: Path,
    *,
    poll_seconds: float = 5.0,
    max_polls: int | None = None,
    device: str = "cpu",
) -> int:
    """Forecast as bars arrive in ``path`` (``foxhunt predict --follow FILE``).

    Args:
        model_dir: Any model directory (fp32 or quantised).
        path: The growing bars file (``.parquet``/``.pq``/``.csv``).
        out: ``.csv`` (every forecast appended) or ``.parquet`` (latest per symbol).
        poll_seconds: Wait between polls.
        max_polls: Stop after this many polls (None: until interrupted).
        device: Torch device string.

    Returns:
        Forecast rows written.

    Raises:
        InputError: Bad arguments; DataError/ModelDirError for bad bars or model directory.
    """
    from foxhunt.runtime import parse_device

    if poll_seconds < 0:
        raise InputError(f"--poll-seconds must be >= 0, got {poll_seconds}")
    if max_polls is not None and max_polls < 1:
        raise InputError(f"--max-polls must be >= 1, got {max_polls}")
    reader = BarFileReader(Path(path))
    sink = ForecastSink(Path(out))
    forecaster = Forecaster.load(model_dir, device=parse_device(device))
    log.info("following %s (every %gs); forecasts to %s", path, poll_seconds, out)
    return follow(forecaster, reader, sink, poll_seconds=poll_seconds, max_polls=max_polls)
