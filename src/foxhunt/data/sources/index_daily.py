"""Real market bars, offline: the daily index OHLCV series shipped inside the ``arch`` wheel.

``arch`` (Kevin Sheppard's ARCH-models package, ``pip install arch``; a dev dependency of
foxhunt) ships two real daily OHLCV series with its examples, as downloaded from Yahoo!
Finance by arch's authors:

- ``arch/data/sp500/sp500.csv.gz``: S&P 500 index, 1999-01-04 .. 2018-12-31, 5,031 days;
- ``arch/data/nasdaq/nasdaq.csv.gz``: NASDAQ Composite index, same dates, 5,031 days.

They are cash indices, not futures, and they follow the NYSE holiday calendar (the Globex
calendar foxhunt schedules future bars on has no holidays), which makes them a good test of
everything that must hold on data nobody here generated. They are written as symbols ``ES``
(S&P 500) and ``NQ`` (NASDAQ-100 futures are the nearest listed contract to the Composite),
which only selects the static features (tick size, point value, asset class). Each daily bar is
stamped at the US cash close, 16:00 America/New_York (15:00 CT), converted to UTC. Prices and
volumes are unchanged. Nothing is downloaded: the files are read from the installed wheel.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import polars as pl

from foxhunt.errors import DataError

SERIES = {"ES": "arch/data/sp500/sp500.csv.gz", "NQ": "arch/data/nasdaq/nasdaq.csv.gz"}
"""Symbol -> the CSV inside the ``arch`` wheel."""


def source_files() -> dict[str, Path]:
    """Symbol -> path of the CSV inside the installed ``arch`` wheel.

    Raises:
        DataError: ``arch`` is not installed, or the file is missing from it.
    """
    try:
        dist = importlib.metadata.distribution("arch")
    except importlib.metadata.PackageNotFoundError as e:
        raise DataError(
            "the real index bars come from the 'arch' package, which is not installed "
            "(pip install arch, or make install)"
        ) from e
    out = {}
    for symbol, rel in SERIES.items():
        path = Path(str(dist.locate_file(rel)))
        if not path.is_file():
            raise DataError(f"{path}: not in the installed arch {dist.version} wheel")
        out[symbol] = path
    return out


def index_daily_bars() -> pl.DataFrame:
    """Both series as one long-format bars frame (``ts symbol open high low close volume``).

    Returns:
        10,062 bars sorted by symbol and time, ``ts`` in UTC.

    Raises:
        DataError: ``arch`` is not installed.
    """
    frames = []
    for symbol, path in source_files().items():
        raw = pl.read_csv(path)
        frames.append(
            raw.select(
                pl.col("Date")
                .str.to_date("%m/%d/%Y")
                .cast(pl.Datetime("us"))
                .dt.offset_by("16h")
                .dt.replace_time_zone("America/New_York")
                .dt.convert_time_zone("UTC")
                .alias("ts"),
                pl.lit(symbol).alias("symbol"),
                pl.col("Open").cast(pl.Float64).alias("open"),
                pl.col("High").cast(pl.Float64).alias("high"),
                pl.col("Low").cast(pl.Float64).alias("low"),
                pl.col("Close").cast(pl.Float64).alias("close"),
                pl.col("Volume").cast(pl.Float64).alias("volume"),
            )
        )
    return pl.concat(frames).sort(["symbol", "ts"])


def provenance() -> dict[str, object]:
    """Where :func:`index_daily_bars` comes from: arch version and source files."""
    return {
        "source": "arch " + importlib.metadata.version("arch") + " wheel",
        "files": {s: str(p) for s, p in source_files().items()},
    }


def write_index_daily(out: Path) -> pl.DataFrame:
    """Write :func:`index_daily_bars` to ``out`` (``.parquet`` or ``.csv``), atomically; return them.

    Raises:
        DataError: ``arch`` is not installed.
        InputError: bad output path.
    """
    from foxhunt.data.read.files import write_table

    bars = index_daily_bars()
    write_table(bars, Path(out))
    return bars
