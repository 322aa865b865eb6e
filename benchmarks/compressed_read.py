"""One bars CSV read plain and in each compression: seconds and peak RSS; ONE JSON line each.

Writes the CSV at ``--csv`` (default: histdata's EURUSD one-minute bars of 2018, the member
``DAT_ASCII_EURUSD_M1_2018.csv`` of ``../shared/data/real/histdata-m1-2018/``, read from there
and never copied into the repository) plain and as ``.csv.gz``, ``.csv.bz2``, ``.csv.xz`` and
``.csv.zst`` to a temporary folder, then reads each with ``read_bars`` in a fresh process and
reports the wall seconds of the read, its process's peak RSS, the bars and the sum of the
closes (the same in every row when every compression reads the same bars).

Example:
    .venv/bin/python benchmarks/compressed_read.py
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import json
import lzma
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

_REAL = Path(__file__).resolve().parents[2] / "shared/data/real/histdata-m1-2018"
_MEMBER = "DAT_ASCII_EURUSD_M1_2018.csv"

_READ = """
import json, logging, resource, sys, time
logging.disable(logging.WARNING)
from foxhunt.data.read.bars import read_bars
t = time.perf_counter()
bars = read_bars(sys.argv[1])
print(json.dumps({"seconds": round(time.perf_counter() - t, 2), "bars": bars.height,
                  "close_sum": round(bars["close"].sum(), 4),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))
"""


def _text(csv: Path | None) -> bytes:
    if csv is not None:
        return csv.read_bytes()
    with zipfile.ZipFile(_REAL / "HISTDATA_COM_ASCII_EURUSD_M12018.zip") as z:
        return z.read(_MEMBER)


def _zstd(data: bytes) -> bytes:
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as f:
        f.write(data)
    return sink.getvalue().to_pybytes()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--csv", type=Path, help="a bars CSV (default: histdata EURUSD 2018, see above)")
    a = p.parse_args(argv)
    data = _text(a.csv)
    stem = a.csv.stem if a.csv else Path(_MEMBER).stem
    kinds = {
        "": lambda d: d,
        ".gz": gzip.compress,
        ".bz2": bz2.compress,
        ".xz": lzma.compress,
        ".zst": _zstd,
    }
    with tempfile.TemporaryDirectory() as tmp:
        for end, pack in kinds.items():
            path = Path(tmp) / f"{stem}.csv{end}"
            path.write_bytes(pack(data))
            out = subprocess.run(
                [sys.executable, "-c", _READ, str(path)], capture_output=True, text=True, check=True
            )
            result = json.loads(out.stdout.strip().splitlines()[-1])
            result.update(file=path.name, file_mb=round(path.stat().st_size / 2**20, 1))
            print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
