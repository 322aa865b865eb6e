"""Validation of loaded bars: the first problem, named by file, column, row and time.

Checks, in order: null or unparsable timestamp, missing symbol, missing or non-numeric value,
NaN/inf, non-positive price, negative volume, ``high < max(open, close)``, ``low > min(open,
close)``; then, sorted by (symbol, ts): duplicate bars and too few bars per symbol; then
plausibility (:mod:`foxhunt.data.read.plausibility`: two interleaved price levels, prices off by
orders of magnitude, implausible one-bar moves), refused unless ``allow_outliers``. Rows are
0-based data rows of the file (header not counted), as pandas/polars number them.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import polars as pl

from foxhunt.data.market.calendar import infer_interval, interval_text
from foxhunt.data.read import plausibility
from foxhunt.data.read.files import is_readable
from foxhunt.data.read.high_low import swapped_hint
from foxhunt.data.read.hints import (
    comma_hint,
    raw_value,
    settle_hint,
    symbol_column_hint,
    two_files_hint,
    updated_hint,
)
from foxhunt.data.read.open_close import check_open_close
from foxhunt.data.read.running_volume import check_running_volume
from foxhunt.data.read.tick_slips import with_slips_mended
from foxhunt.data.read.timestamps import HOURS_OFFSET, short_mantissa
from foxhunt.errors import DataError

if TYPE_CHECKING:
    from foxhunt.data.read.bars import LoadedBars

log = logging.getLogger(__name__)

BAR_COLUMNS = ("ts", "symbol", "open", "high", "low", "close", "volume")
"""Columns of a validated bars frame, in order."""
PRICE_COLUMNS = ("open", "high", "low", "close")
VALUE_COLUMNS = (*PRICE_COLUMNS, "volume")
FILE_COLUMN = "__file"
"""Provenance column of loaded bars: index of the file the row came from."""
CONTRACT_COLUMN = "contract"
"""Optional column of loaded and validated bars: a contract-coded symbol's contract (``ESZ4``)."""
EMPTY_COLUMN = "__empty"
"""Column of loaded bars: the row holds no value as written (no price, no kept input: a blank
line, a ``null`` row, a footer); :func:`foxhunt.data.read.checks.without_empty_rows` drops them."""
ROW_COLUMN = "__row"
"""Provenance column of loaded bars: 0-based row within that file."""
_FILE, _ROW = FILE_COLUMN, ROW_COLUMN


_BACK_ADJUSTED = (
    " (a back-adjusted continuous future can reach zero or below, and a market can trade "
    "there, as WTI crude did on 20 April 2020; a log return cannot: read the stretch where "
    "prices are positive)"
)
_OFFSET = re.compile(rf"(Z|[+-]\d{{2}}:?\d{{2}})$|{HOURS_OFFSET}")
"""A timestamp text's UTC offset (``Z``, ``+01:00``, ``-0500``, ``-05`` after a clock)."""
_HEADER_WORDS = frozenset(
    ("ts", "timestamp", "time", "date", "datetime", "date_time", "gmt time", "local time",
     "symbol", "ticker", "open", "high", "low", "close", "volume", "<date>", "<time>", "<open>",
     "<close>")
)  # fmt: skip
"""Words of a header line: found where a time belongs, a header line in mid-file."""


def _is_iso(text: str) -> bool:
    try:
        datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


_SUMMARY_WORD = re.compile(r"^(?!(?:nan|nat|null|none|inf)$)[a-z]{3,}(?:[ .:]+[a-z]*)*$", re.I)
"""A word where a timestamp belongs, no missing value's spelling: ``Total``, ``Average``."""


@dataclass(frozen=True)
class _Rows:
    """What :class:`_Validator` reads of ``LoadedBars``, for frames that came from no file."""

    frame: pl.DataFrame
    files: tuple[Path, ...]
    spellings: tuple[dict[str, str], ...]
    naive: tuple[bool, ...] = ()
    extra: tuple[tuple[str, ...], ...] = ()


_DST_ZONES = ("Europe/London", "Europe/Berlin", "America/New_York", "America/Chicago")
"""Zones whose repeated autumn hour a duplicate of naive times read as UTC is checked against."""


def _repeats(wall: datetime, tz: ZoneInfo) -> bool:
    """Whether ``wall`` (naive) happens twice in ``tz``."""
    return (
        wall.replace(tzinfo=tz, fold=0).utcoffset() != wall.replace(tzinfo=tz, fold=1).utcoffset()
    )


class _Validator:
    def __init__(self, loaded: LoadedBars) -> None:
        self.loaded = loaded

    def where(self, hit: dict[str, object], canon: str) -> str:
        f = int(hit[_FILE])  # type: ignore[arg-type]
        spell = self.loaded.spellings[f].get(canon, canon)
        ts = hit.get("ts")
        when = f" ({ts})" if ts is not None else ""
        return f"{self.loaded.files[f]}: column '{spell}', row {hit[_ROW]}{when}"

    def all_good(self) -> bool:
        """One pass over the frame for every check of :meth:`check` (which then looks for the
        first bad row only when something is bad: 3.5 M bars are ~20 filters fewer)."""
        df = self.loaded.frame
        bad = [pl.col("ts").is_null(), pl.col("symbol").is_null() | (pl.col("symbol") == "")]
        for c in VALUE_COLUMNS:
            bad += [pl.col(c).is_null(), ~pl.col(c).is_finite()]
        bad += [pl.col(c) <= 0 for c in PRICE_COLUMNS]
        bad += [
            pl.col("volume") < 0,
            pl.col("high") < pl.max_horizontal("open", "close"),
            pl.col("low") > pl.min_horizontal("open", "close"),
        ]
        row = df.select(pl.any_horizontal(bad).any()).item()
        return not row

    def _other_way(self, f: int, offset: bool) -> bool:
        """Whether file ``f``'s other times were read the other way from a time with (or
        without) an offset: naive, or with theirs (until session 54 a ``20240104 1259`` among
        naive ``1240103 1258`` was said to lack the offset the others had)."""
        naive = self.loaded.naive
        return not naive or naive[f] == offset

    def _footer(self, f: int, row: int) -> bool:
        """Whether no row of file ``f`` after ``row`` has a timestamp: lines under the bars."""
        after = (pl.col(_FILE) == f) & (pl.col(_ROW) > row)
        return bool(self.loaded.frame.filter(after)["ts"].is_null().all())

    def first(self, frame: pl.DataFrame, mask: pl.Expr) -> dict[str, object] | None:
        hit = frame.filter(mask).head(1)
        return hit.row(0, named=True) if hit.height else None

    def check(self) -> None:
        if self.all_good():
            return
        df = self.loaded.frame
        hit = self.first(df, pl.col("ts").is_null())
        if hit:
            f, r = int(hit[_FILE]), int(hit[_ROW])  # type: ignore[arg-type]
            col = self.loaded.spellings[f]["ts"]
            raw = raw_value(self.loaded.files[f], col, r)
            what = (
                "null timestamp"
                if raw in (None, "")
                else f"unparsable timestamp {raw!r} (--ts-format names its spelling, e.g. "
                "'%d/%m/%Y %H:%M' or epoch-ms)"
            )
            skipped = self.skipped_hour(f, raw)
            word = self.words_for_prices(hit) if raw in (None, "") else None
            if word is not None:
                what = (
                    f"no timestamp, and {word!r} where a price belongs: a line of units or notes "
                    "under the header? remove that line"
                )
            elif skipped:
                what = f"timestamp {raw!r}{skipped}"
            elif isinstance(raw, str) and (short := short_mantissa(raw)):
                what = (
                    f"timestamp {raw!r} is an epoch in scientific notation, {short[0]} "
                    f"significant digits of a {short[1]}-digit number: the others are lost (a "
                    "spreadsheet's number format; bars apart read as one, or hours off): save the "
                    "column as whole numbers"
                )
            elif (
                isinstance(raw, str)
                and _is_iso(raw)
                and self.loaded.frame["ts"].drop_nulls().len()
                and self._other_way(f, _OFFSET.search(raw.strip()) is not None)
            ):
                # A valid time, but the column parsed the other way (with or without offset).
                offset = _OFFSET.search(raw.strip()) is not None
                what = (
                    f"timestamp {raw!r} {'has' if offset else 'lacks'} a UTC offset while the "
                    f"column's other timestamps {'do not' if offset else 'have one'}: write "
                    "them all one way"
                )
            elif isinstance(raw, str) and raw.strip().lower() in _HEADER_WORDS:
                # another file's header, in another order (exports joined with `cat`): the
                # header again in this file's order is dropped as a row without a bar
                what = (
                    f"{raw!r} where a time belongs: a header line in the middle of the file "
                    "(files joined with their headers, in another column order?); read the "
                    "files apart, or remove that line"
                )
            elif isinstance(raw, str) and _SUMMARY_WORD.match(raw.strip()) and self._footer(f, r):
                what = f"{raw!r} where a timestamp belongs, and no time in the rows after it: a "
                what += "total, average or note line under the bars? remove it"  # a spreadsheet's
            raise DataError(f"{self.where(hit, 'ts')}: {what}")
        hit = self.first(df, pl.col("symbol").is_null() | (pl.col("symbol") == ""))
        if hit:
            raise DataError(f"{self.where(hit, 'symbol')}: missing symbol")
        for c in VALUE_COLUMNS:
            hit = self.first(df, pl.col(c).is_null())
            if hit:
                f, r = int(hit[_FILE]), int(hit[_ROW])  # type: ignore[arg-type]
                raw = raw_value(self.loaded.files[f], self.loaded.spellings[f][c], r)
                what = "missing value" if raw in (None, "") else f"not a number {raw!r}"
                comma = re.fullmatch(r"\s*-?\d+,\d+\s*", raw) if isinstance(raw, str) else None
                if comma and self.loaded.options.decimal != "point":
                    what += comma_hint(raw)  # type: ignore[arg-type]
                raise DataError(f"{self.where(hit, c)}: {what}")
            hit = self.first(df, ~pl.col(c).is_finite())
            if hit:
                raise DataError(f"{self.where(hit, c)}: {c} is {hit[c]} (must be finite)")
        # the first bar with a price at or below zero, and its first such price (a low of -40.32
        # a day before an open of -14: the low's row is named, not the open's)
        hit = self.first(df, pl.any_horizontal(pl.col(c) <= 0 for c in PRICE_COLUMNS))
        if hit:
            c = next(c for c in PRICE_COLUMNS if hit[c] <= 0)  # type: ignore[operator]
            f = self.loaded.files[int(hit[_FILE])]  # type: ignore[arg-type]
            why = _BACK_ADJUSTED if is_readable(f) else ""
            raise DataError(f"{self.where(hit, c)}: non-positive price {c} {hit[c]}{why}")
        hit = self.first(df, pl.col("volume") < 0)
        if hit:
            raise DataError(f"{self.where(hit, 'volume')}: negative volume {hit['volume']}")
        top = pl.max_horizontal("open", "close")
        hit = self.first(df.with_columns(top.alias("__top")), pl.col("high") < pl.col("__top"))
        if hit:
            raise DataError(
                f"{self.where(hit, 'high')}: high {hit['high']} < max(open, close) {hit['__top']}"
                + self.price_hint(df, hit)
            )
        bottom = pl.min_horizontal("open", "close")
        hit = self.first(df.with_columns(bottom.alias("__bot")), pl.col("low") > pl.col("__bot"))
        if hit:
            raise DataError(
                f"{self.where(hit, 'low')}: low {hit['low']} > min(open, close) {hit['__bot']}"
                + self.price_hint(df, hit)
            )

    def price_hint(self, df: pl.DataFrame, hit: dict[str, object]) -> str:
        """What the refusal of ``hit``'s high or low adds: a settlement, an order, a swap."""
        return self.settle(hit) or self.order_hint(hit) or swapped_hint(df, hit, self.loaded, _FILE)

    def words_for_prices(self, hit: dict[str, object]) -> str | None:
        """The open as written in ``hit``'s row when it is a word, not a number (a units row,
        ``,USD,USD,USD,USD,Shares``, under the header); else None."""
        f, r = int(hit[_FILE]), int(hit[_ROW])  # type: ignore[call-overload]
        col = self.loaded.spellings[f].get("open")
        raw = raw_value(self.loaded.files[f], col, r) if col else None
        if isinstance(raw, str) and re.fullmatch(r"\s*[^\W\d_][^\d]*", raw):
            return raw.strip()
        return None

    def settle(self, hit: dict[str, object]) -> str:
        """:func:`~foxhunt.data.read.hints.settle_hint` for ``hit``'s file."""
        f = int(str(hit[_FILE]))
        extra = self.loaded.extra[f] if self.loaded.extra else ()
        return settle_hint(self.loaded.spellings[f].get("close", ""), extra)

    def order_hint(self, hit: dict[str, object]) -> str:
        """For a file without a header, the column order it was read in and how to change it
        (IQFeed writes high, low, open, close; Coinbase low, high, open, close); else ``""``."""
        from foxhunt.data.read.csv_dialect import sniff_csv
        from foxhunt.data.read.files import table_kind

        path = self.loaded.files[int(hit[_FILE])]  # type: ignore[call-overload]
        try:
            dialect = sniff_csv(path, say=False) if table_kind(path) == "csv" else None
        except DataError:
            return ""
        if dialect is None or dialect.has_header or dialect.names is None:
            return ""
        return (
            f" (the file has no header: its columns were read as {', '.join(dialect.names)}; "
            "if the file's order differs, --columns names each field's column by these names, "
            "e.g. --columns open=high,high=open)"
        )

    def without_repeats(self, df: pl.DataFrame) -> pl.DataFrame:
        """``df`` (sorted by symbol and ts, in file order within a time) without the bars that
        repeat the one before them exactly (symbol, time and every value: overlapping monthly
        downloads, one export saved twice): read once, one warning naming the first repeat.
        Two bars at one time with any value apart stay, for :meth:`check_sorted` to refuse."""
        values = [c for c in df.columns if c not in (_FILE, _ROW)]
        repeat = pl.all_horizontal([pl.col(c) == pl.col(c).shift(1) for c in values])
        repeat = repeat.fill_null(False)
        n = df.select(repeat.sum()).item()
        if not n:
            return df
        hit = df.filter(repeat).sort([_FILE, _ROW]).row(0, named=True)
        log.warning(
            "%d bars repeat another exactly (same symbol, time and values: overlapping "
            "downloads?) and are read once; first: %s",
            n,
            self.where(hit, "ts"),
        )
        return df.filter(~repeat)

    def repeated_hour(self, hit: dict[str, object]) -> str:
        """Naive times in a DST zone, a duplicate in the autumn's repeated hour the rows' order
        did not tell (:mod:`.repeated_hour`): that hour named, the way out; else ``""``."""
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        f = int(hit[_FILE])  # type: ignore[call-overload]
        if not (self.loaded.naive and self.loaded.naive[f]):
            return ""
        zone = self.loaded.zone_of(f)
        try:
            tz = ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError):
            return ""  # a fixed offset repeats no hour
        local = hit["ts"].astimezone(tz).replace(tzinfo=None)  # type: ignore[union-attr]
        early, late = local.replace(tzinfo=tz, fold=0), local.replace(tzinfo=tz, fold=1)
        if early.utcoffset() != late.utcoffset():
            return (
                f": {local:%Y-%m-%d %H:%M} happens twice in {zone} (the hour repeated when "
                "daylight saving ends), and naive times cannot say which; write the times in "
                "UTC or with their offset"
            )
        if early.utcoffset():  # read in a zone with an offset: another zone's hour is no tell
            return ""
        repeating = [z for z in _DST_ZONES if _repeats(local, ZoneInfo(z))]
        if not repeating:
            return ""
        return (  # naive local times read as UTC: the autumn hour of the file's clock, twice
            f": {local:%Y-%m-%d %H:%M} happens twice in {' and '.join(repeating)} (the hour "
            "repeated when daylight saving ends): local times read as UTC? --tz names their "
            "zone, but naive times cannot say which of the two; write them in UTC or with "
            "their offset"
        )

    def dates_only(self, df: pl.DataFrame, hit: dict[str, object]) -> str:
        """A duplicate's file giving every bar one time of day (a date column without the time,
        AlgoSeek's ``Date`` beside ``TimeBarStart``): how to name the time column; else ``""``."""
        f = int(hit[_FILE])  # type: ignore[call-overload]
        column = self.loaded.spellings[f].get("ts", "ts")
        if "+" in column:  # a date and a time column already
            return ""
        clock = df.filter(pl.col(_FILE) == f).select(pl.col("ts").dt.time().n_unique()).item()
        if clock != 1:
            return ""
        others = (
            [c for c in self.loaded.extra[f] if "time" in c.lower()] if self.loaded.extra else []
        )
        named = f" (column '{others[0]}'?)" if others else ""
        return (
            f": column '{column}' gives every bar the same time of day, so the bars of one day "
            f"collide; if another column holds the time{named}, --columns "
            f"date={column},time=COLUMN reads both"
        )

    def skipped_hour(self, f: int, raw: object) -> str:
        """For a naive time read in a zone with daylight saving that skips it (02:30 on the
        morning the clocks go forward): why it is null, and the way out; else ``""``."""
        if not (self.loaded.naive and self.loaded.naive[f]) or not isinstance(raw, str):
            return ""
        try:
            wall = datetime.fromisoformat(raw.strip())
            zone = self.loaded.zone_of(f)
            tz = ZoneInfo(zone)
        except (ValueError, ZoneInfoNotFoundError):
            return ""
        if wall.tzinfo is not None:
            return ""
        back = wall.replace(tzinfo=tz).astimezone(UTC).astimezone(tz).replace(tzinfo=None)
        if back == wall:
            return ""
        return (
            f" does not exist in {zone} (the hour skipped when daylight saving starts): the "
            "file's clock keeps no daylight saving; --tz with its fixed offset (e.g. -05:00) "
            "or UTC reads it"
        )

    def check_sorted(self, df: pl.DataFrame) -> None:
        """``df`` is sorted by (symbol, ts) with provenance columns still present."""
        same = (pl.col("symbol") == pl.col("symbol").shift(1)) & (
            pl.col("ts") == pl.col("ts").shift(1)
        )
        prev = df.select(
            same.alias("__dup"),
            pl.col(_FILE).shift(1).alias("__pf"),
            pl.col(_ROW).shift(1).alias("__pr"),
        )
        idx = prev["__dup"].arg_true()
        if idx.len():
            dups = df[idx].with_columns(prev["__pf"].gather(idx), prev["__pr"].gather(idx))
            # Report the duplicate that comes first in file order.
            hit = dups.sort([_FILE, _ROW]).row(0, named=True)
            other = f"{self.loaded.files[int(hit['__pf'])]} row {hit['__pr']}"
            # Two instruments in one file without a symbol column often share bar times.
            levels = plausibility.interleaved_levels(df.filter(pl.col("symbol") == hit["symbol"]))
            if levels is not None:
                raise DataError(
                    f"{self.where(hit, 'ts')}: symbol {hit['symbol']!r} has a second bar at "
                    f"this time (first: {other}) at another price level: "
                    f"{plausibility.interleaved_advice(*levels)}"
                )
            why = (
                self.repeated_hour(hit)
                or self.symbol_column(hit)
                or self.two_files(hit)  # daily contracts' files: a roll, not a time column
                or self.dates_only(df, hit)
                or updated_hint(df, hit, (_FILE, _ROW))
            )
            raise DataError(
                f"{self.where(hit, 'ts')}: duplicate bar for symbol {hit['symbol']!r} "
                f"(same time as {other}){why}"
            )

    def symbol_column(self, hit: dict[str, object]) -> str:
        """A symbol column read past, where both rows of a duplicate bar are in one file
        (:func:`~foxhunt.data.read.hints.symbol_column_hint`); else ``""``."""
        first, this = int(str(hit["__pf"])), int(str(hit[_FILE]))
        if first != this:
            return ""
        extra = self.loaded.extra[this] if self.loaded.extra else ()
        rows = (int(str(hit["__pr"])), int(str(hit[_ROW])))
        return symbol_column_hint(self.loaded.files[this], extra, rows)

    def two_files(self, hit: dict[str, object]) -> str:
        """Two files of one symbol overlapping, where a duplicate bar's rows are in two
        (:func:`~foxhunt.data.read.hints.two_files_hint`); else ``""``."""
        first, this = int(str(hit["__pf"])), int(str(hit[_FILE]))
        if first == this:
            return ""
        files = self.loaded.files
        a, b = (_interval_of(self.loaded.frame, f, hit["symbol"]) for f in (first, this))
        intervals = (a, b) if a is not None and b is not None else None
        return two_files_hint(files[first], files[this], hit["symbol"], intervals)

    def enough_bars(
        self, df: pl.DataFrame, min_bars: int | None, reason: str, drop_short: bool
    ) -> pl.DataFrame:
        """Refuse a symbol of fewer than ``min_bars`` bars; with ``drop_short`` leave such
        symbols out with one warning, refusing only when no symbol has enough."""
        if min_bars is None:
            return df
        counts = (
            df.group_by("symbol", maintain_order=True)
            .agg(pl.len().alias("n"), pl.col(_FILE).first())
            .sort(["n", "symbol"])
        )
        short = counts.filter(pl.col("n") < min_bars)
        if short.height == 0:
            return df
        row = short.row(0, named=True)
        if not drop_short or short.height == counts.height:
            f = self.loaded.files[int(row[_FILE])]
            raise DataError(
                f"{f}: symbol {row['symbol']!r} has {row['n']} bars; need at least "
                f"{min_bars} ({reason})"
            )
        warn_short_left_out(short["symbol"].to_list(), short["n"].to_list(), min_bars, reason)
        return df.filter(~pl.col("symbol").is_in(short["symbol"].implode()))

    def check_plausible(self, df: pl.DataFrame, allow_outliers: bool) -> None:
        """Refuse the first outlier of ``df`` (sorted, valid, with provenance), in file order;
        with ``allow_outliers`` keep them all and log one warning per file with the count."""
        hits = plausibility.find_outliers(df)
        if hits.height == 0:
            return
        hits = hits.sort([_FILE, _ROW])
        if not allow_outliers:
            hit = hits.row(0, named=True)
            keep = "" if hit[plausibility.RULE] == "interleaved" else "; --allow-outliers keeps it"
            raise DataError(f"{self.at(hit)}: {plausibility.describe(hit)}{keep}")
        for (f,), per_file in hits.group_by(_FILE, maintain_order=True):
            hit, n = per_file.row(0, named=True), per_file.height
            first = "first: " if n > 1 else ""
            log.warning(
                "kept %d outlier bar%s in %s (%ssymbol %r, row %s, %s: %s)",
                n,
                "s" if n > 1 else "",
                self.loaded.files[int(f)],  # type: ignore[call-overload]
                first,
                hit["symbol"],
                hit[_ROW],
                hit["ts"],
                plausibility.describe(hit),
            )

    def at(self, hit: dict[str, object]) -> str:
        """File, symbol, column as spelled, row and time of an outlier."""
        f = int(hit[_FILE])  # type: ignore[arg-type]
        column = str(hit[plausibility.COLUMN])
        col = self.loaded.spellings[f].get(column, column)
        return (
            f"{self.loaded.files[f]}: symbol {hit['symbol']!r}, column '{col}', "
            f"row {hit[_ROW]} ({hit['ts']})"
        )


def check_values(frame: pl.DataFrame, where: str) -> None:
    """The value checks of :func:`validate_bars` on a frame that came from no file (the
    streaming ``Forecaster``'s bars): the same rules, one place. Errors name ``where``, the
    column, the row (0-based in ``frame``) and its time.

    Args:
        frame: columns ``ts``, ``symbol`` and :data:`VALUE_COLUMNS` (float).
        where: what to call the source in messages, e.g. ``Forecaster.update``.

    Raises:
        DataError: the first bad value.
    """
    rows = frame.with_columns(
        pl.lit(0, dtype=pl.Int64).alias(_FILE), pl.int_range(pl.len()).alias(_ROW)
    )
    names = {c: c for c in ("ts", "symbol", *VALUE_COLUMNS)}
    _Validator(_Rows(rows, (Path(where),), (names,))).check()  # type: ignore[arg-type]


def warn_short_left_out(symbols: list[str], counts: list[int], need: int, reason: str) -> None:
    """One warning naming the symbols left out for too few bars (the first 5, then a count)."""
    named = ", ".join(f"{s!r} ({n} bars)" for s, n in zip(symbols[:5], counts[:5], strict=True))
    more = f" and {len(symbols) - 5} more" if len(symbols) > 5 else ""
    log.warning(
        "left out %d symbol%s with too few bars: %s%s; need at least %d (%s)",
        len(symbols),
        "" if len(symbols) == 1 else "s",
        named,
        more,
        need,
        reason,
    )


def validate_bars(
    loaded: LoadedBars,
    *,
    min_bars: int | None = None,
    min_bars_reason: str = "warm-up + encoder + horizon",
    allow_outliers: bool = False,
    drop_short: bool = False,
) -> pl.DataFrame:
    """Validate loaded bars and return them sorted by (symbol, ts), without provenance columns.

    Args:
        loaded: output of :func:`load_bars`.
        min_bars: smallest acceptable number of bars per symbol, or None.
        min_bars_reason: how ``min_bars`` was made up, shown in the error message.
        allow_outliers: keep implausible bars (:mod:`foxhunt.data.read.plausibility`) with one
            warning per file giving their count, instead of refusing the first.
        drop_short: leave out the symbols of fewer than ``min_bars`` bars, with one warning
            naming them (``predict`` and ``evaluate`` forecast the others); refused only when
            no symbol has enough.

    Returns:
        The validated bars frame (columns :data:`BAR_COLUMNS`, then ``contract`` if loaded).

    Raises:
        DataError: the first problem found, naming file, column, row and time (and symbol,
            for an implausible bar).
    """
    loaded = replace(loaded, frame=with_slips_mended(loaded.frame, loaded.files, _FILE, _ROW))
    v = _Validator(loaded)
    v.check()
    df = loaded.frame
    backwards = df.select((pl.col("ts").dt.epoch("us").diff().over("symbol") < 0).any()).item()
    if backwards:
        log.warning("bars were not in time order; sorted by (symbol, ts)")
    is_sorted = (
        not backwards and df.select((pl.col("symbol").shift(1) <= pl.col("symbol")).all()).item()
    )
    if not is_sorted:
        df = df.sort(["symbol", "ts"], maintain_order=True)
    df = v.without_repeats(df)
    v.check_sorted(df)
    df = v.enough_bars(df, min_bars, min_bars_reason, drop_short)
    v.check_plausible(df, allow_outliers)
    check_open_close(df, loaded.files, loaded.spellings, _FILE)
    check_running_volume(df, loaded.files, loaded.spellings, loaded.extra, _FILE)
    extra = [CONTRACT_COLUMN] if CONTRACT_COLUMN in df.columns else []
    kept = [c for c in df.columns if c not in (*BAR_COLUMNS, *extra, _FILE, _ROW)]
    return df.select(*BAR_COLUMNS, *extra, *kept)  # kept: load_bars(keep=...), checked there


def _interval_of(frame: pl.DataFrame, file: int, symbol: object) -> str | None:
    """The bar interval of one file's bars of ``symbol`` (``1min``), or None (under two times)."""
    mine = (pl.col(_FILE) == file) & (pl.col("symbol") == symbol)
    times = frame.filter(mine)["ts"].drop_nulls().unique().sort()
    try:
        return interval_text(infer_interval(times))
    except ValueError:
        return None
