"""Where ``foxhunt predict --follow`` writes: every forecast appended to a CSV, or the latest per
symbol in a parquet file rewritten atomically.

An output that already exists is continued, not replaced: a CSV is appended to (a half-written
last line left by a killed run is cut off first), a parquet file's forecasts are kept for the
symbols that get no new one. :meth:`ForecastSink.last_origins` tells the follower which origins
already have forecasts there, so a restart never writes one twice.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import polars as pl

from foxhunt.errors import InputError
from foxhunt.runtime import atomic_path

log = logging.getLogger(__name__)


class ForecastSink:
    """Where follow-mode forecasts go: appended to a CSV, or the latest per symbol in parquet.

    Args:
        out: ``.csv`` or ``.parquet`` path (its folder must exist).

    Raises:
        InputError: Another file type, a missing folder, or an existing output that cannot be
            read.
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
        if self.append:
            _cut_torn_line(self.out)
        elif self.out.is_file():
            for (sym,), part in _read(self.out).group_by("symbol", maintain_order=True):
                self.latest[str(sym)] = part

    def last_origins(self) -> dict[str, int]:
        """The latest origin with a forecast in the output, per symbol (epoch µs UTC)."""
        if not self.out.is_file() or self.out.stat().st_size == 0:
            return {}
        table = _read(self.out).select("symbol", "origin_ts")
        latest = table.group_by("symbol").agg(pl.col("origin_ts").dt.epoch("us").max())
        return {str(s): int(t) for s, t in latest.iter_rows()}

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


def _read(out: Path) -> pl.DataFrame:
    """An existing output with ``origin_ts`` as UTC datetimes: a parquet file whole; of a CSV
    only each symbol's latest origin, scanned lazily (a long forecast log is not loaded)."""
    try:
        if out.suffix.lower() != ".csv":
            return pl.read_parquet(out)
        lf = pl.scan_csv(out, schema_overrides={"origin_ts": pl.String, "symbol": pl.String})
        return (
            lf.select(
                "symbol", pl.col("origin_ts").str.to_datetime(time_unit="us", time_zone="UTC")
            )
            .group_by("symbol")
            .agg(pl.col("origin_ts").max())
            .collect()
        )
    except (pl.exceptions.PolarsError, OSError) as e:
        raise InputError(
            f"--out {out}: exists but cannot be read as forecasts ({str(e).splitlines()[0]}); "
            "move it away or choose another --out"
        ) from e


def _cut_torn_line(out: Path) -> None:
    """Cut a half-written last line (a run killed mid-append) off a CSV output."""
    if not out.is_file() or out.stat().st_size == 0:
        return
    with open(out, "rb+") as f:
        f.seek(-1, os.SEEK_END)
        if f.read(1) == b"\n":
            return
        f.seek(0)
        data = f.read()
        keep = data.rfind(b"\n") + 1
        f.truncate(keep)
    log.warning("%s: cut off a half-written last line (%d bytes)", out, len(data) - keep)
