"""One instrument: what the static features and the calendar of a symbol are made of."""

from __future__ import annotations

import math
from dataclasses import dataclass

from foxhunt.data.market.calendars import CALENDARS
from foxhunt.errors import DataError

ASSET_CLASSES: tuple[str, ...] = (
    "equity_index",  # 0  (codes 0-5 are the pre-issue-12 futures codes, kept)
    "energy",  # 1
    "metals",  # 2
    "rates",  # 3
    "currency",  # 4  currency futures
    "agriculture",  # 5
    "volatility",  # 6
    "crypto_future",  # 7
    "stock",  # 8
    "etf",  # 9
    "spot_fx",  # 10
    "crypto",  # 11 spot and perpetual swaps
    "cash_index",  # 12
    "unknown",  # 13
)
"""Asset class names; ``static__asset_class`` is the index in this tuple."""


@dataclass(frozen=True)
class Instrument:
    """One market's static description (the source of the 5 static features)."""

    root: str
    """Root or symbol the row is keyed by (``ES``, ``GBPUSD``, ``AAPL``)."""
    tick_size: float
    """Minimum price increment, in price points (> 0)."""
    point_value: float
    """Currency value of a one-point price move per contract or unit (> 0; 1 for cash)."""
    currency: str
    """Currency of the price (``USD``, ``EUR``, ``JPY``; ``""`` when unknown)."""
    asset_class: str
    """One of :data:`ASSET_CLASSES`."""
    calendar: str
    """A name in :data:`foxhunt.data.market.calendars.CALENDARS`."""
    session_hours: float = 0.0
    """Typical hours traded per trading day; 0 means the calendar's typical hours."""
    typical_price: float = 0.0
    """A representative price (the demo generator only; never a feature). 0 when unknown."""

    def __post_init__(self) -> None:
        for name in ("tick_size", "point_value"):
            v = getattr(self, name)
            if not (isinstance(v, int | float) and math.isfinite(v) and v > 0):
                raise DataError(f"instrument {self.root!r}: {name} must be > 0, got {v!r}")
        if self.asset_class not in ASSET_CLASSES:
            raise DataError(
                f"instrument {self.root!r}: unknown asset_class {self.asset_class!r} "
                f"(one of {', '.join(ASSET_CLASSES)})"
            )
        if self.calendar not in CALENDARS:
            raise DataError(
                f"instrument {self.root!r}: calendar {self.calendar!r} is unknown "
                f"(one of {', '.join(sorted(CALENDARS))})"
            )
        if not (math.isfinite(self.session_hours) and 0.0 <= self.session_hours <= 24.0):
            raise DataError(
                f"instrument {self.root!r}: session_hours must be in [0, 24], "
                f"got {self.session_hours!r}"
            )

    @property
    def hours(self) -> float:
        """Session hours, the calendar's typical hours when the row leaves them at 0."""
        return self.session_hours or CALENDARS[self.calendar].hours

    @property
    def tick_value(self) -> float:
        """Currency value of one tick, tick_size * point_value."""
        return self.tick_size * self.point_value

    def static_values(self) -> tuple[float, float, float, float, float]:
        """(log10 tick size, log10 point value, log10 tick value, asset class code, hours)."""
        return (
            math.log10(self.tick_size),
            math.log10(self.point_value),
            math.log10(self.tick_value),
            float(ASSET_CLASSES.index(self.asset_class)),
            float(self.hours),
        )


# --- symbol shapes ---------------------------------------------------------------------------
