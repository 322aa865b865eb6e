"""Lines that break a CSV bar file, found to name them: a quote opened and not closed, a line
with a field too many (polars' own errors for them name no line, or the wrong field)."""

from __future__ import annotations

import csv
import zipfile
from pathlib import Path

from foxhunt.data.read.compressed import ERRORS as COMPRESSED_ERRORS
from foxhunt.data.read.csv_dialect import open_text, sniff_csv
from foxhunt.errors import DataError


def unclosed_quote_line(path: Path) -> int | None:
    """The first line (1-based) that opens a quote it does not close, or None.

    No field of a bar file spans lines, so such a line is a file cut short or edited by hand;
    polars' error for it names no line (or names the wrong field)."""
    try:
        with open_text(path) as f:
            for number, line in enumerate(f, start=1):
                if line.count('"') % 2:
                    return number
    except (*COMPRESSED_ERRORS, zipfile.BadZipFile, KeyError):
        return None
    return None


def overlong_line(path: Path) -> tuple[int, int, int] | None:
    """The first line (1-based) of the table holding more fields than its header or first bar,
    with both counts (``6: 7 fields, 6``), or None: a note typed after a bar's volume, which
    polars refuses naming no line."""
    try:
        dialect = sniff_csv(path, say=False)
        with open_text(path) as f:
            width = None
            for number, row in enumerate(csv.reader(f, delimiter=dialect.delimiter), start=1):
                if number <= dialect.skip_lines or not any(c.strip() for c in row):
                    continue
                width = width or len(row)
                if len(row) > width:
                    return number, len(row), width
    except (DataError, csv.Error, *COMPRESSED_ERRORS, zipfile.BadZipFile, KeyError):
        return None
    return None
