"""Real market bars, offline: the daily index OHLCV files shipped inside the ``arch`` wheel.

``arch`` (Kevin Sheppard's ARCH-models package, pinned in ``constraints-bench.txt``) ships two
real daily OHLCV series in its wheel, used by its own examples:

- ``arch/data/sp500/sp500.csv.gz``: S&P 500 index, 1999-01-04 .. 2018-12-31, 5,031 days;
- ``arch/data/nasdaq/nasdaq.csv.gz``: NASDAQ Composite index, same dates, 5,031 days.

(Columns Date, Open, High, Low, Close, Adj Close, Volume, as downloaded from Yahoo! Finance by
arch's authors.) Nothing is downloaded at run time: the files are read from the installed wheel
in ``.venv-bench`` (``setup_bench_venv.sh`` installs it).

They are cash indices, not futures. To pass through foxhunt's futures feature pipeline they are
written as symbols ``ES`` (S&P 500) and ``NQ`` (NASDAQ-100 futures are the nearest listed
contract to the Composite), which only selects the static features (tick size, point value,
asset class: constant per symbol). Each daily bar is stamped at the US cash close, 16:00
America/New_York, converted to UTC. Prices and volumes are unchanged.

Run with ``.venv-bench/bin/python benchmarks/real_bars.py --out PATH``.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import sys
from pathlib import Path

SERIES = {"ES": "arch/data/sp500/sp500.csv.gz", "NQ": "arch/data/nasdaq/nasdaq.csv.gz"}


def source_files() -> dict[str, Path]:
    """Symbol -> the CSV inside the installed ``arch`` wheel.

    Raises:
        FileNotFoundError: ``arch`` is not installed here, or the file is missing.
    """
    try:
        dist = importlib.metadata.distribution("arch")
    except importlib.metadata.PackageNotFoundError as e:
        raise FileNotFoundError(
            "arch is not installed in this interpreter; run benchmarks/setup_bench_venv.sh"
        ) from e
    out = {}
    for symbol, rel in SERIES.items():
        path = Path(str(dist.locate_file(rel)))
        if not path.exists():
            raise FileNotFoundError(f"{path}: not in the installed arch {dist.version} wheel")
        out[symbol] = path
    return out


def write_real_bars(out: Path) -> dict[str, object]:
    """Write both series as one long-format foxhunt bars parquet file.

    Args:
        out: Output ``.parquet`` path (written atomically).

    Returns:
        Provenance: arch version, source files, bars per symbol, first and last day.
    """
    import polars as pl

    frames = []
    files = source_files()
    for symbol, path in files.items():
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
                pl.col("Open").alias("open"),
                pl.col("High").alias("high"),
                pl.col("Low").alias("low"),
                pl.col("Close").alias("close"),
                pl.col("Volume").cast(pl.Float64).alias("volume"),
            )
        )
    bars = pl.concat(frames).sort(["symbol", "ts"])
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    bars.write_parquet(tmp)
    tmp.replace(out)
    return {
        "source": "arch " + importlib.metadata.version("arch") + " wheel",
        "files": {s: str(p) for s, p in files.items()},
        "bars": {s: int(n) for s, n in bars.group_by("symbol").len().iter_rows()},
        "first": str(bars["ts"].min()),
        "last": str(bars["ts"].max()),
    }


def main(argv: list[str] | None = None) -> int:
    """Write the bars and print their provenance as one JSON line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True, help="output .parquet")
    a = p.parse_args(argv)
    try:
        info = write_real_bars(a.out)
    except FileNotFoundError as e:
        print(f"real_bars: {e}", file=sys.stderr)
        return 2
    print(json.dumps(info, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
