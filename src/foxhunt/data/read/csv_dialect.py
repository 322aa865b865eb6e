"""CSV dialects of bar files as vendors write them: delimiter, header, decimal comma.

The dialect is guessed from the first lines only (a sample), then polars reads the whole file.
Python's ``csv.Sniffer`` is not enough here: with a decimal comma (``2024-01-02;1234,5;...``)
it picks ``,`` as the delimiter, and its header test misreads all-number rows. So the delimiter
is the candidate (``,`` ``;`` tab ``|``) that splits every sampled line into the same number
(>= 4) of fields with the most number-like fields; ``csv.reader`` still does the splitting (so
quoted fields are honoured).

Headerless files get names by position (see :func:`headerless_names`):
``timestamp, open, high, low, close[, volume, ...]`` or, when the second field is a clock time
(Kibot ``01/02/2024,09:30,...``, MetaTrader ``2024.01.02,09:30,...``),
``date, time, open, high, low, close[, volume, ...]``; so also when the first field is an
8-digit date and the second a clock in digits that changes within a date (Portara
``20240102,0930,...``). Further fields are ``column_N`` (1-based, as polars names them); the
prices are in another vendor's order where only it reads the sampled rows as bars (IQFeed's).
"""

from __future__ import annotations

import csv
import io
import logging
import re
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from foxhunt.data.read.compressed import ERRORS as COMPRESSED_ERRORS
from foxhunt.data.read.compressed import codec_of
from foxhunt.data.read.encoding import UTF8, open_bytes, text_encoding, utf8_bytes
from foxhunt.data.read.files import zip_member
from foxhunt.data.read.price_order import price_order
from foxhunt.errors import DataError

log = logging.getLogger(__name__)

SAMPLE_LINES = 64
"""Lines read to guess the dialect."""
_FOOTER_LINES = 4
"""Narrower lines after a short table that still leave it a table (a footer)."""
DELIMITERS = (",", ";", "\t", "|")
"""Delimiters tried, in order of preference on a tie."""

_DOT_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_COMMA_NUMBER = re.compile(r"^[+-]?\d+,\d+$")
_DOT_GROUPED = re.compile(r"^[+-]?\d{1,3}(\.\d{3})+(,\d+)?$")
"""Points as thousands separators, in a decimal-comma locale: ``16.750,50``, ``6.340``."""
_QUOTED_DECIMAL_COMMA = re.compile(r"^[+-]?(\d{1,3}(\.\d{3})+,\d+|\d+,(\d{1,2}|\d{4,}))[%KMB]?$")
"""A decimal comma in a comma-delimited file (the field quoted): ``16.751,64``, ``0,28%``,
``51,34M``; not ``1,234`` (English thousands)."""
_POINT_AFTER_COMMAS = re.compile(r"^[+-]?\d{1,3}(,\d{3})+\.\d*[%KMB]?$")
"""English thousands with a decimal point (``2,052.50``): no decimal comma in this file."""
_COMMA_GROUPED = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?$")
"""English thousands (``1,252,742``, ``1,837.75``): numbers in Excel's tab-delimited text of
formatted cells, which split on commas into more fields than on tabs."""
_CLOCK = re.compile(r"^\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?$")
_MIN_FIELDS = 4
"""Fields of the narrowest bar table (a time and three prices, or a close and volume)."""
_DATE8 = re.compile(r"^((19|20)\d{2}|1\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(\.0+)?$")
"""A date of digits: ``yyyymmdd``, or EasyLanguage's ``CYYMMDD`` (``1240103.00``)."""
_DIGITS = re.compile(r"^\d{1,6}(\.0+)?$")
_STAMP = re.compile(r"^(19|20)\d{2}([-./]?\d{2}){2}[ T]?\d{2}:?\d{2}")
"""A date and a clock in one field: ``20240103 103000291`` (histdata's ticks), ``20240103
10:30:00.291`` (TrueFX), ``2024-01-03 10:30:00``."""
_HISTDATA_TICKS = re.compile(r"^(?:DAT_)?ASCII_[A-Z0-9]+_T_?\d{4}", re.IGNORECASE)
"""histdata.com's tick files, ``DAT_ASCII_EURUSD_T_202401.csv``: no header, ``time,bid,ask,
volume``."""


@dataclass(frozen=True)
class CsvDialect:
    """How a CSV bar file is written.

    Attributes:
        delimiter: the field separator.
        has_header: whether the first line names the columns.
        decimal_comma: numbers are written ``1234,5`` (only with a delimiter other than ``,``).
        names: column names to use for a headerless file (None with a header).
        skip_lines: lines before the header (or the first bar) that are not the table: a
            vendor's title, ``Symbol: ES``, blank lines (counted too).
        comma_groups: commas part thousands, one group too (``37,715``, ``1,261``), as a
            spreadsheet's formatted cells are saved with tabs or semicolons between them (as
            ``--decimal point`` reads them).
        spaced_quotes: a space after each delimiter before a quoted field (``"a", "b"``).
    """

    delimiter: str = ","
    has_header: bool = True
    decimal_comma: bool = False
    names: tuple[str, ...] | None = None
    skip_lines: int = 0
    comma_groups: bool = False
    spaced_quotes: bool = False

    def describe(self) -> str:
        """E.g. ``delimiter ';', header, decimal comma``."""
        parts = [f"delimiter {self.delimiter!r}", "header" if self.has_header else "no header"]
        if self.decimal_comma:
            parts.append("decimal comma")
        if self.comma_groups:
            parts.append("commas between thousands")
        if self.spaced_quotes:
            parts.append("a space before each quoted field")
        if self.skip_lines:
            parts.append(f"the first {self.skip_lines} lines skipped (not the table)")
        return ", ".join(parts)


def open_text(path: Path) -> io.TextIOBase:
    """Open a ``.csv``/``.txt``/``.tsv`` file, plain or compressed, or a file inside a zip archive
    (``a.zip/b.csv``), as text in its encoding (:mod:`foxhunt.data.read.encoding`; a leading
    BOM dropped, bytes not in the encoding read as U+FFFD)."""
    found = text_encoding(path)
    encoding = "utf-8-sig" if found == UTF8 else found
    return io.TextIOWrapper(open_bytes(path), encoding=encoding, errors="replace", newline="")


def _numbered_sample(path: Path) -> list[tuple[int, str]]:
    """The first :data:`SAMPLE_LINES` lines that are not blank, each with its 0-based line."""
    try:
        with open_text(path) as f:
            lines = []
            for number, line in enumerate(f):
                if line.strip():
                    lines.append((number, line.rstrip("\r\n")))
                if len(lines) >= SAMPLE_LINES:
                    break
    except (*COMPRESSED_ERRORS, zipfile.BadZipFile, KeyError) as e:
        raise DataError(f"{path}: cannot read ({e})") from e
    return lines


def _is_number(cell: str, comma: bool) -> bool:
    cell = cell.strip()
    return bool(
        _DOT_NUMBER.match(cell)
        or (
            comma
            and (
                _COMMA_NUMBER.match(cell) or _DOT_GROUPED.match(cell) or _COMMA_GROUPED.match(cell)
            )
        )
    )


def _split(lines: list[str], delimiter: str) -> list[list[str]]:
    return list(csv.reader(lines, delimiter=delimiter))


def _score(rows: list[list[str]], delimiter: str) -> tuple[int, int] | None:
    """(number-like fields, fields per row) of the body rows, or None if rows are ragged."""
    body = rows[1:] if len(rows) > 1 else rows
    widths = Counter(len(r) for r in body)
    width, count = widths.most_common(1)[0]
    # a short file's footer of narrower lines: "Source: ...", MOEX ISS's "history.cursor" block
    tail = next((i for i, r in enumerate(reversed(body)) if len(r) >= width), 0)
    footer = 0 < tail <= _FOOTER_LINES and count == len(body) - tail
    if width < _MIN_FIELDS or (count < 0.9 * len(body) and not footer):
        return None
    numbers = sum(_is_number(c, delimiter != ",") for r in body for c in r)
    return numbers, width


def _digit_clocks(rows: list[list[str]]) -> bool:
    """Rows of a date of digits then a clock in digits (Portara's ``20240102,0930,...``,
    EasyLanguage's ``1240103.00,1705.00,...``): some date repeats with other clocks. (A daily
    file's second field is its open, and its dates do not repeat: ``20240102,930,...`` there
    is a price of 930.)"""
    seen: dict[str, set[str]] = {}
    for row in rows:
        if len(row) < 6 or not (_DATE8.match(row[0].strip()) and _DIGITS.match(row[1].strip())):
            return False
        seen.setdefault(row[0].strip(), set()).add(row[1].strip())
    return any(len(clocks) > 1 for clocks in seen.values())


def _ticks_without_header(rows: list[list[str]]) -> bool:
    """A first row of data in a file of ticks or quotes: a time (:data:`_STAMP`) and two or
    three numbers, as many as the next row's (a header names them: no numbers)."""
    if len(rows) < 2:
        return False
    first, second = (sum(_is_number(c, comma=True) for c in r) for r in rows[:2])
    return first in (2, 3) and first == second and any(_STAMP.match(c.strip()) for c in rows[0])


def _tick_names(path: Path, first: list[str]) -> tuple[str, ...]:
    """The columns of a headerless file of fewer than five fields: histdata's ticks by their
    file name (``time,bid,ask,volume``).

    Raises:
        DataError: any other such file (ticks or quotes whose columns cannot be told).
    """
    if len(first) == 4 and _HISTDATA_TICKS.match(path.name):
        return ("timestamp", "bid", "ask", "volume")
    shown = ",".join(c.strip() for c in first)
    raise DataError(
        f"{path}: no header, and {len(first)} fields a row ({shown[:60]!r}): too few for bars "
        "(a time, open, high, low and close); ticks or quotes need a header line naming their "
        "columns (such as time,bid,ask,volume or time,price,size), then --bar-minutes K builds "
        "K-minute bars from them"
    )


_TICKER = re.compile(r"^[A-Za-z^][A-Za-z0-9.\-^=&_]{0,15}$")
_DAY = re.compile(r"^((19|20)\d{6}|(19|20)\d\d[-/.]\d\d[-/.]\d\d|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})$")


def _ticker_first(rows: list[list[str]]) -> bool:
    """Rows of a ticker, then a date (asxhistoricaldata's and MetaStock's end-of-day
    ``BHP,20240102,o,h,l,c,v``: until session 54 the ticker was read as the time, refused)."""
    return all(
        len(r) >= 6 and _TICKER.match(r[0].strip()) and _DAY.match(r[1].strip()) for r in rows
    )


def headerless_names(first_row: list[str], rows: list[list[str]] | None = None) -> tuple[str, ...]:
    """Column names for a headerless file, from the types of the first row's fields (and, for a
    clock written in digits or a ticker first, of every sampled row; the prices' order from the
    sampled rows' bars, :func:`~foxhunt.data.read.price_order.price_order`)."""
    sampled = rows or [first_row]
    clock = _CLOCK.match(first_row[1].strip()) if len(first_row) > 1 else None
    if _ticker_first(sampled):  # then a clock or not, as after a date alone
        rest = headerless_names(first_row[1:], [r[1:] for r in sampled])
        return ("symbol", *rest[: len(first_row) - 1])
    if len(first_row) >= 6 and (clock or _digit_clocks(sampled)):
        head = ("date", "time", "open", "high", "low", "close", "volume")
    else:
        head = ("timestamp", "open", "high", "low", "close", "volume")
    names = list(head[: len(first_row)])
    names += [f"column_{i + 1}" for i in range(len(names), len(first_row))]
    return price_order(tuple(names), sampled)


def _filled(row: list[str]) -> int:
    """The row's width less the empty fields padding its end: Excel's ``Title,,,,,`` is 1."""
    n = len(row)
    while n and not row[n - 1].strip():
        n -= 1
    return n


def sniff_csv(path: Path, decimal: str | None = None, *, say: bool = True) -> CsvDialect:
    """Guess the dialect of a CSV bar file from its first :data:`SAMPLE_LINES` lines.

    Args:
        path: a ``.csv`` or ``.csv.gz`` file.
        decimal: the user's decimal separator (``--decimal``: ``point`` or ``comma``); None:
            guessed, and refused where the sample cannot tell (:func:`_points_ambiguous`).
        say: log the guess (a file's first read; not its re-reads nor a hint's look back).

    Returns:
        The dialect; ``,`` with a header when nothing fits better (polars names what's missing).

    Raises:
        DataError: the file is empty or cannot be read.
    """
    numbered = _numbered_sample(path)
    lines = [line for _, line in numbered]
    if not lines:
        raise DataError(f"{path}: empty file (no bars)")
    best: tuple[tuple[int, int], str, int] | None = None
    for d in DELIMITERS:
        rows = _split(lines, d)
        # a preamble (a title, "Symbol: ES") holds fewer fields than any bar table has, also
        # where Excel's "Save as CSV" padded its end to the table's width ("SAP GY Equity,,,,,")
        start = next((i for i, r in enumerate(rows) if _filled(r) >= _MIN_FIELDS), 0)
        score = _score(rows[start:], d)
        if score is not None and (best is None or score > best[0]):
            best = (score, d, start)
    if best is None:
        return CsvDialect()
    _, delimiter, start = best
    # '"Date", "Open"': fields quoted after a space, which csv skips, as polars does not
    spaced = sum(f'{delimiter} "' in line for line in lines[start:]) * 2 > len(lines) - start
    rows = list(csv.reader(lines, delimiter=delimiter, skipinitialspace=spaced))[start:]
    skip_lines = numbered[start][0]
    first = rows[0]
    # any spelling of a number marks a bar, a quoted "16.751,64" in a comma file too
    first_numbers = sum(_is_number(c, comma=True) for c in first)
    has_header = first_numbers < 4 and not _ticks_without_header(rows)
    body = rows[int(has_header) :]
    cells = [_plain(c) for r in body for c in r]
    # a point is a thousands separator where every dotted number is grouped in threes and some
    # number has a decimal comma: "16.750,50", "4520,5" beside a volume of "6.340"
    grouped_only = not any(
        "." in c and _DOT_NUMBER.match(c) and not _DOT_GROUPED.match(c) for c in cells
    )
    comma_groups = False
    if delimiter != ",":
        # "4,780.25": a decimal point after commas, so the commas part thousands
        comma_groups = any(_POINT_AFTER_COMMAS.match(c) for c in cells)
        decimal_comma = (
            grouped_only
            and not comma_groups
            and (
                any(_COMMA_NUMBER.match(c) or ("," in c and _DOT_GROUPED.match(c)) for c in cells)
                or _grouped_beside_small(body)
            )
        )
        if decimal_comma and _commas_only_grouped(cells, body):
            if _comma_grouped_beside_small(body):  # "1,261" beside "820": thousands
                decimal_comma, comma_groups = False, True
            elif decimal is None and not _comma_beside_large(body):
                example = next(c for c in cells if _COMMA_ONE_GROUP.match(c))
                raise DataError(
                    f"{path}: every number with a comma has three digits after it "
                    f"({example!r}), and nothing in the first lines tells a decimal comma from "
                    f"commas between thousands (an English export's {example!r} is "
                    f"{example.replace(',', '')}); --decimal point or --decimal comma says which"
                )
    else:  # quoted: a localized Investing.com export, "16.751,64" and "0,28%"
        decimal_comma = (
            grouped_only
            and any(_QUOTED_DECIMAL_COMMA.match(c) for c in cells)
            and not any(_POINT_AFTER_COMMAS.match(c) for c in cells)
        )
        # "25,312,400": commas in two places part thousands, so "3,429" beside it is 3429
        multi = any(re.match(r"^[+-]?\d{1,3}(,\d{3}){2,}$", c) for c in cells)
        comma_groups = not decimal_comma and multi
    if decimal is not None:
        decimal_comma = decimal == "comma"
        comma_groups = comma_groups and not decimal_comma
    elif delimiter != "," and not decimal_comma and grouped_only and _points_ambiguous(cells, body):
        example = next(c for c in cells if _DOT_GROUPED.match(c))
        raise DataError(
            f"{path}: every number with a point has three digits after it ({example!r}), and "
            "nothing in the first lines tells a decimal point from points between thousands "
            f"(a German export's {example!r} is {example.replace('.', '')}); --decimal point "
            "or --decimal comma says which"
        )
    names = None if has_header else headerless_names(first, rows)
    if not has_header and len(first) < 5:
        names = _tick_names(path, first)
    if has_header and len(rows) > 1 and _trailing_delimiter_below(rows):
        # "a,b,c" over "1,2,3,": a field more on every bar, empty (a trailing delimiter)
        names = (*(c.strip() for c in first), "")
        has_header, skip_lines = False, numbered[start + 1][0]
    levels = column_levels(rows, path)
    if levels is not None:  # pandas' columns in levels (yfinance): the fields' level is the header
        names, under = levels
        has_header, skip_lines = False, numbered[start + under][0]
    dialect = CsvDialect(
        delimiter, has_header, decimal_comma, names, skip_lines, comma_groups, spaced
    )
    if say and dialect != CsvDialect(delimiter=","):
        log.info("%s: CSV read with %s (guessed from the first lines)", path, dialect.describe())
    return dialect


CURRENCY = r"^[$€£¥]\s*|\s*(?:[$€£¥]|EUR|USD|GBP|CHF|JPY)$"
"""A currency sign before a price, as some exports write it (``$185.09``), or a sign or code
after it (``2.682,00 €``, ``2682.25 USD``)."""
GROUP_MARK = "[ \u00a0\u202f'’]"
"""What parts thousands besides a point or a comma: a space (French: ``2 682,25``, also a
no-break space or a narrow one) or an apostrophe (Swiss: ``2'682.25``)."""
SPACE_GROUPED = rf"^[+-]?\d{{1,3}}({GROUP_MARK}\d{{3}})+([,.]\d+)?$"
"""A number whose thousands are parted by :data:`GROUP_MARK`: the marks go, the decimal mark
stays."""


def _plain(cell: str) -> str:
    """A cell as its number is judged: without a currency sign or code, and without the spaces
    or apostrophes between its thousands (``2 682,25`` -> ``2682,25``, ``2'682.25`` ->
    ``2682.25``: ``file_read`` reads them so)."""
    cell = re.sub(CURRENCY, "", cell.strip())
    return re.sub(GROUP_MARK, "", cell) if re.match(SPACE_GROUPED, cell) else cell


DECIMALS = ("point", "comma")
"""Decimal separators a user may name (``--decimal``)."""


def _points_ambiguous(cells: list[str], rows: list[list[str]]) -> bool:
    """Numbers with a point, each with three digits after it and one group (``12.352``), none
    starting ``0.`` (no thousands group does), no comma number, and no column holding both such
    a number and a whole number of four digits or more (``5044`` beside ``1.210``: points that
    are decimals): a decimal point or points between thousands, the sample cannot tell (a
    semicolon file of a whole-point future in German, or of USDJPY with a decimal point)."""
    dotted = [c for c in cells if "." in c and _DOT_NUMBER.match(c)]
    if not dotted or not all(_ONE_GROUP.match(c) for c in dotted):
        return False
    if any(c.lstrip("+-").startswith("0.") for c in dotted):
        return False
    if any(_COMMA_NUMBER.match(c) for c in cells):
        return False
    return not any(
        any(_ONE_GROUP.match(c) for c in column) and any(_LARGE_WHOLE.match(c) for c in column)
        for column in _columns(rows)
    )


_ONE_GROUP = re.compile(r"^[+-]?\d{1,3}\.\d{3}$")
_SMALL_WHOLE = re.compile(r"^[+-]?\d{1,3}$")
_LARGE_WHOLE = re.compile(r"^[+-]?\d{4,}$")


def _grouped_beside_small(rows: list[list[str]]) -> bool:
    """A column of whole numbers written with points between thousands and none below 1,000
    (a German volume of ``5.044`` beside ``820``), in a file whose every dotted number is grouped
    in threes: the points group thousands there, so they do in the prices (``2.673`` is 2,673),
    though no number has a decimal comma. A column with ``5044`` beside ``5.044`` is no such
    evidence."""
    return any(
        any(_DOT_GROUPED.match(c) and "," not in c for c in column)
        and any(_SMALL_WHOLE.match(c) for c in column)
        and not any(_LARGE_WHOLE.match(c) for c in column)
        for column in _columns(rows)
    )


def _trailing_delimiter_below(rows: list[list[str]]) -> bool:
    """Every row under the header one field longer than it, that field empty (a delimiter at
    the end of each bar's line but not of the header's: polars refuses such a file as having
    "more fields than defined")."""
    width = len(rows[0])
    return bool(rows[0][-1].strip()) and all(
        len(r) == width + 1 and not r[-1].strip() for r in rows[1:]
    )


_COMMA_ONE_GROUP = re.compile(r"^[+-]?[1-9]\d{0,2},\d{3}$")
"""A comma before three digits, once, not after a lone 0 (``1,261``): a decimal comma, or a
comma between thousands."""


def _commas_only_grouped(cells: list[str], rows: list[list[str]]) -> bool:
    """Every number with a comma is :data:`_COMMA_ONE_GROUP` and nothing else says decimal
    comma: no ``4700,5`` or ``0,652`` (no thousands group has other than three digits, or
    starts with a lone 0), no ``16.750,50``, no ``5.044`` beside ``820``."""
    commas = [c for c in cells if _COMMA_NUMBER.match(c)]
    return (
        bool(commas)
        and all(_COMMA_ONE_GROUP.match(c) for c in commas)
        and not any("," in c and _DOT_GROUPED.match(c) for c in cells)
        and not _grouped_beside_small(rows)
    )


def _comma_grouped_beside_small(rows: list[list[str]]) -> bool:
    """A column of whole numbers with a comma before three digits and others below 1,000
    (``1,261`` beside ``820``, a spreadsheet's formatted volume) and none of four digits
    without it: the commas part thousands."""
    return any(
        any(_COMMA_ONE_GROUP.match(c) for c in column)
        and any(_SMALL_WHOLE.match(c) for c in column)
        and not any(_LARGE_WHOLE.match(c) for c in column)
        for column in _columns(rows)
    )


def _comma_beside_large(rows: list[list[str]]) -> bool:
    """A column holding both ``1,261`` and a whole number of four digits or more (``5044``):
    the comma is no thousands separator there, so it is a decimal comma."""
    return any(
        any(_COMMA_ONE_GROUP.match(c) for c in column)
        and any(_LARGE_WHOLE.match(c) for c in column)
        for column in _columns(rows)
    )


def _columns(rows: list[list[str]]) -> list[list[str]]:
    """The sample's cells column by column, trimmed (a short row adds nothing to the columns
    it lacks)."""
    width = max((len(r) for r in rows), default=0)
    return [[r[j].strip() for r in rows if j < len(r)] for j in range(width)]


_DIGIT_ANY = re.compile(r"\d")
_PRICE_NAMES = {"open", "high", "low", "close", "adj close", "volume"}


def column_levels(rows: list[list[str]], path: Path) -> tuple[tuple[str, ...], int] | None:
    """The names and the first bar's row of a table whose columns pandas wrote in levels, as
    yfinance's downloads are saved (a row per level, then the index's name alone)::

        Price,Close,High,Low,Open,Volume
        Ticker,AAPL,AAPL,AAPL,AAPL,AAPL
        Datetime,,,,,

    None for any other table. A ticker level's one label is kept as parquet's levels are
    named (``('Close', 'AAPL')``: the symbol; it was read past until session 54).

    Raises:
        DataError: the levels hold several tickers (one file per ticker is read).
    """
    under = next(
        (
            i
            for i, r in enumerate(rows[1:5], start=1)
            if r[0].strip() and not any(c.strip() for c in r[1:])
        ),
        None,
    )
    # one level is the plain header (pandas writes the index's name in it): two at least, and
    # the index's name no date (a first bar with its prices empty is not one)
    if (
        under is None
        or under < 2
        or _DIGIT_ANY.search(rows[under][0])
        or len(rows[0]) < _MIN_FIELDS
    ):
        return None
    levels = rows[:under]
    fields = [r for r in levels if _PRICE_NAMES & {c.strip().lower() for c in r[1:]}]
    if len(fields) != 1:
        return None
    for level in levels:
        labels = sorted({c.strip() for c in level[1:]})
        if level is not fields[0] and len(labels) > 1:
            raise DataError(
                f"{path}: columns in levels hold several {level[0].strip() or 'labels'} "
                f"({', '.join(labels[:4])}{', ...' if len(labels) > 4 else ''}): save one per "
                "file (pandas: df.xs(NAME, axis=1, level=1).to_csv(...))"
            )
    ticker = next((c.strip() for lv in levels if lv is not fields[0] for c in lv[1:]), "")
    names = [rows[under][0].strip(), *(c.strip() for c in fields[0][1:])]
    if ticker:  # named as parquet's levels are: wide.column_levels reads the symbol
        names = [f"('{n}', '{ticker if i else ''}')" for i, n in enumerate(names)]
    return tuple(names), under + 1


def header_names(path: Path, dialect: CsvDialect) -> list[str]:
    """The column names polars will give a file in this dialect (without reading it)."""
    if dialect.names is not None:
        return list(dialect.names)
    lines = [line for n, line in _numbered_sample(path) if n >= dialect.skip_lines]
    split = csv.reader(
        lines[:1], delimiter=dialect.delimiter, skipinitialspace=dialect.spaced_quotes
    )
    return next(split) if lines else []


_LINE_ENDS = {b"\r": "a carriage return alone (classic Mac OS, Excel's 'CSV (Macintosh)')",
              b"\r\r\n": "CR CR LF (Python's csv.writer on Windows, its file opened without "
                         "newline='')"}  # fmt: skip


def _odd_line_end(path: Path) -> bytes | None:
    """The line end of a file whose lines polars does not split right, from its first 64 KiB:
    a carriage return alone (one, and no line feed), or CR CR LF (the CR left in the last
    field); None for LF and CRLF."""
    with open_bytes(path) as f:
        head = f.read(1 << 16)
    if b"\r\r\n" in head:
        return b"\r\r\n"
    return b"\r" if b"\r" in head and b"\n" not in head else None


def scan_csv_text(path: Path, dialect: CsvDialect, numeric: tuple[str, ...] = ()) -> pl.LazyFrame:
    """The columns of a CSV bar file as text (we cast ourselves, so a bad value keeps its row),
    except ``numeric`` ones, read as Float64: several times faster on millions of rows; a bad
    number then fails the whole read, and the caller reads the file again all as text to name
    it (:func:`foxhunt.data.read.bars.load_bars`)."""
    kwargs = {
        "separator": dialect.delimiter,
        "has_header": dialect.has_header,
        "infer_schema": False,
        "truncate_ragged_lines": False,
        "skip_lines": dialect.skip_lines,
    }
    if numeric and not dialect.decimal_comma:
        kwargs["schema_overrides"] = {c: pl.Float64 for c in numeric}
    if dialect.names is not None:
        kwargs["new_columns"] = list(dialect.names)
    encoding = text_encoding(path)
    end = _odd_line_end(path)
    if end is not None or dialect.spaced_quotes:  # decoded here, in memory
        data = utf8_bytes(path, encoding)
        if end is not None:  # polars splits lines at "\n" only
            log.info("%s: lines end in %s", path, _LINE_ENDS[end])
            data = data.replace(end, b"\n")
        if dialect.spaced_quotes:  # polars keeps ' "182.25"' as written: the spaces go
            spaced = rf'{re.escape(dialect.delimiter)}[ \t]+"'.encode()
            data = re.sub(spaced, dialect.delimiter.encode() + b'"', data)
        return pl.read_csv(data, **kwargs).lazy()  # type: ignore[arg-type]
    if encoding != UTF8:  # polars reads UTF-8 only: decoded here, in memory
        log.info("%s: read as %s text", path, encoding)
        return pl.read_csv(utf8_bytes(path, encoding), **kwargs).lazy()  # type: ignore[arg-type]
    kwargs["encoding"] = "utf8-lossy"  # a damaged byte further on: U+FFFD, named by its row
    codec = codec_of(path.name)
    if codec not in (None, "gzip"):  # bzip2, xz, zstd (also in a zip): decompressed in memory
        with open_bytes(path) as f:
            return pl.read_csv(f.read(), **kwargs).lazy()  # type: ignore[arg-type]
    member = zip_member(path)
    if member is not None:
        # A zip member is read into memory (one 1-minute year is ~20 MB of text); polars
        # decompresses a gzipped one itself.
        with zipfile.ZipFile(member[0]) as z:
            data = z.read(member[1])
        return pl.read_csv(data, **kwargs).lazy()  # type: ignore[arg-type]
    if codec == "gzip":
        # polars reads gzip only eagerly; a 1-minute year is ~100 MB of text, fine in memory.
        return pl.read_csv(path, **kwargs).lazy()  # type: ignore[arg-type]
    return pl.scan_csv(path, **kwargs)  # type: ignore[arg-type]
