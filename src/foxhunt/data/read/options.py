"""How to read a bar file when the guess is wrong: the user's explicit choices.

Every command that reads bars takes them (``--symbol``, ``--columns``, ``--ts-format``,
``--tz``, ``--force-tz``, ``--stamps``, ``--bar-minutes``, ``--allow-odd-times``), ``train`` stores them in the run's
``config.json`` (``data`` section), and ``evaluate`` and ``predict`` read new files the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from foxhunt.data.read.columns import parse_columns
from foxhunt.data.read.csv_dialect import DECIMALS
from foxhunt.data.read.stamps import STAMPS
from foxhunt.data.read.timestamps import EPOCH_FORMATS
from foxhunt.data.read.zones import parse_zone
from foxhunt.errors import DataError

if TYPE_CHECKING:
    from foxhunt.config import DataConfig


@dataclass(frozen=True)
class ReadOptions:
    """The user's choices for reading bar files; None or empty: guess.

    Attributes:
        tz: zone of naive timestamps: an IANA name or a fixed offset (``-05:00``, ``UTC-5``);
            None: the vendor's clock where the file name says it (histdata: America/New_York), else
            UTC.
        force_tz: read times marked UTC (``Z``, ``+00:00``, epoch counts, a column typed UTC)
            as wall-clock times in ``tz`` too (:mod:`foxhunt.data.read.marked_utc`).
        symbol: the symbol of one-symbol files (files without a symbol column).
        columns: ``FIELD=COLUMN`` entries naming the file's column for a bar field
            (``ts``, ``date`` + ``time``, ``open`` ... ``volume``, ``symbol``).
        ts_format: how timestamps are written: ``epoch-s|ms|us|ns``, ``yyyymmdd`` or a
            strftime format (``%Y%m%d %H%M%S``).
        stamps: what a bar's timestamp marks, ``start`` (foxhunt's convention) or ``end``
            (:mod:`foxhunt.data.read.stamps`: intraday bars moved one interval earlier).
        decimal: the decimal separator of a CSV's numbers, ``point`` or ``comma`` (points then
            group thousands: ``2.673`` is 2,673); None: guessed, and a file whose every dotted
            number has three digits after its point and nothing else to tell is refused.
        bar_minutes: aggregate the bars to K-minute OHLCV bars when read
            (:mod:`foxhunt.data.read.resample`).
        allow_odd_times: keep bars whose time axis looks wrong (:mod:`foxhunt.data.read.time_axis`)
            with a warning instead of refusing them.
    """

    tz: str | None = None
    force_tz: bool = False
    symbol: str | None = None
    columns: tuple[str, ...] = field(default=())
    ts_format: str | None = None
    stamps: str = "start"
    decimal: str | None = None
    bar_minutes: int | None = None
    allow_odd_times: bool = False

    def __post_init__(self) -> None:
        if self.tz is not None:
            parse_zone(self.tz)
        if self.force_tz and self.tz is None:
            raise DataError("--force-tz needs --tz ZONE: the clock that times marked UTC keep")
        if self.symbol is not None and not self.symbol.strip():
            raise DataError("--symbol is empty")
        try:
            parse_columns(self.columns)
        except ValueError as e:
            raise DataError(str(e)) from e
        fmt = self.ts_format
        if fmt is not None and fmt not in EPOCH_FORMATS and fmt.lower() != "yyyymmdd":
            if "%" not in fmt:
                raise DataError(
                    f"--ts-format {fmt!r}: use epoch-s, epoch-ms, epoch-us, epoch-ns, yyyymmdd "
                    "or a strftime format such as '%Y%m%d %H%M%S'"
                )
        if self.decimal is not None and self.decimal not in DECIMALS:
            raise DataError(f"--decimal must be point or comma, got {self.decimal!r}")
        if self.stamps not in STAMPS:
            raise DataError(f"--stamps must be start or end, got {self.stamps!r}")
        if self.bar_minutes is not None and not 1 <= self.bar_minutes <= 1440:
            raise DataError(f"--bar-minutes must be 1..1440, got {self.bar_minutes}")

    @property
    def column_map(self) -> dict[str, str]:
        """Field -> column of :attr:`columns`."""
        return parse_columns(self.columns)


def options_of(data: DataConfig) -> ReadOptions:
    """The read options a run's data config holds."""
    return ReadOptions(
        tz=data.tz,
        force_tz=data.force_tz,
        symbol=data.symbol,
        columns=data.columns,
        ts_format=data.ts_format,
        stamps=data.stamps,
        decimal=data.decimal,
        bar_minutes=data.bar_minutes,
        allow_odd_times=data.allow_odd_times,
    )
