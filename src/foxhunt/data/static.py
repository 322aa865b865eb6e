"""Static (per-symbol) features from a small table of common futures contracts.

A symbol such as ``ES``, ``ESH4``, ``ESH24``, ``MESZ4``, ``6EM4``, ``ES.c.0`` or ``ES_FUT`` is
mapped to its *root* (``ES``, ``MES``, ``6E``): first the leading run of letters and digits,
upper-cased; if that is not in the table, a trailing contract month code
(``F G H J K M N Q U V X Z``) plus a one- or two-digit year is stripped; failing that, a few
cash-index/ETF names map to their future (``SPX``/``SP500`` -> ``ES``, see :data:`ALIASES`).
Unknown roots are an
error that names the symbol; pass your own table to :func:`static_values` /
``compute_features(static_table=...)`` to add or override contracts.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from foxhunt.errors import DataError


@dataclass(frozen=True)
class ContractSpec:
    """What the static features are made of, for one futures root."""

    tick_size: float
    """Minimum price increment, in price points."""
    point_value: float
    """Currency value of a one-point price move, per contract."""
    asset_class: int
    """0 equity index, 1 energy, 2 metals, 3 interest rates, 4 currencies, 5 agriculture."""
    session_hours: float
    """Typical hours traded per session (23 for most Globex products)."""
    typical_price: float
    """A representative price level (used by the demo generator only, never as a feature)."""

    @property
    def tick_value(self) -> float:
        """Currency value of one tick, tick_size * point_value."""
        return self.tick_size * self.point_value


CONTRACTS: dict[str, ContractSpec] = {
    # equity index
    "ES": ContractSpec(0.25, 50.0, 0, 23.0, 4750.0),
    "MES": ContractSpec(0.25, 5.0, 0, 23.0, 4750.0),
    "NQ": ContractSpec(0.25, 20.0, 0, 23.0, 16800.0),
    "MNQ": ContractSpec(0.25, 2.0, 0, 23.0, 16800.0),
    "YM": ContractSpec(1.0, 5.0, 0, 23.0, 37700.0),
    "MYM": ContractSpec(1.0, 0.5, 0, 23.0, 37700.0),
    "RTY": ContractSpec(0.1, 50.0, 0, 23.0, 2030.0),
    "M2K": ContractSpec(0.1, 5.0, 0, 23.0, 2030.0),
    # energy
    "CL": ContractSpec(0.01, 1000.0, 1, 23.0, 72.0),
    "MCL": ContractSpec(0.01, 100.0, 1, 23.0, 72.0),
    "NG": ContractSpec(0.001, 10000.0, 1, 23.0, 2.5),
    "RB": ContractSpec(0.0001, 42000.0, 1, 23.0, 2.1),
    "HO": ContractSpec(0.0001, 42000.0, 1, 23.0, 2.6),
    # metals
    "GC": ContractSpec(0.1, 100.0, 2, 23.0, 2070.0),
    "MGC": ContractSpec(0.1, 10.0, 2, 23.0, 2070.0),
    "SI": ContractSpec(0.005, 5000.0, 2, 23.0, 23.5),
    "HG": ContractSpec(0.0005, 25000.0, 2, 23.0, 3.9),
    # interest rates
    "ZN": ContractSpec(1.0 / 64.0, 1000.0, 3, 23.0, 112.0),
    "ZB": ContractSpec(1.0 / 32.0, 1000.0, 3, 23.0, 122.0),
    "ZF": ContractSpec(1.0 / 128.0, 1000.0, 3, 23.0, 108.0),
    "ZT": ContractSpec(1.0 / 256.0, 2000.0, 3, 23.0, 102.5),
    "UB": ContractSpec(1.0 / 32.0, 1000.0, 3, 23.0, 130.0),
    # currencies
    "6E": ContractSpec(0.00005, 125000.0, 4, 23.0, 1.10),
    "6J": ContractSpec(0.0000005, 12500000.0, 4, 23.0, 0.0070),
    "6B": ContractSpec(0.0001, 62500.0, 4, 23.0, 1.27),
    "6A": ContractSpec(0.00005, 100000.0, 4, 23.0, 0.68),
    "6C": ContractSpec(0.00005, 100000.0, 4, 23.0, 0.75),
    "6S": ContractSpec(0.00005, 125000.0, 4, 23.0, 1.17),
    # agriculture (day + night session, about 20 h)
    "ZC": ContractSpec(0.25, 50.0, 5, 20.0, 470.0),
    "ZS": ContractSpec(0.25, 50.0, 5, 20.0, 1300.0),
    "ZW": ContractSpec(0.25, 50.0, 5, 20.0, 620.0),
}
"""The built-in table: root -> contract specification (CME/CBOT/NYMEX/COMEX specs)."""

ALIASES: dict[str, str] = {
    **dict.fromkeys(("SPX", "SP500", "GSPC", "US500", "SPY"), "ES"),
    **dict.fromkeys(("NDX", "NASDAQ", "NAS100", "QQQ"), "NQ"),
    **dict.fromkeys(("DJI", "DJIA", "US30", "DIA"), "YM"),
    **dict.fromkeys(("RUT", "IWM"), "RTY"),
    **dict.fromkeys(("WTI", "CRUDE", "USO"), "CL"),
    **dict.fromkeys(("GOLD", "XAUUSD", "GLD"), "GC"),
    "EURUSD": "6E",
    "GBPUSD": "6B",
    "AUDUSD": "6A",
}
"""Cash-index, ETF and spot names -> the futures root on the same underlying (their static
features are the future's: same tick grid and contract economics are the closest match)."""

STATIC_FEATURES: tuple[str, ...] = (
    "static__log10_tick_size",
    "static__log10_point_value",
    "static__log10_tick_value",
    "static__asset_class",
    "static__session_hours",
)
"""The 5 static feature names, in model input order."""

_LEADING = re.compile(r"[A-Za-z0-9]+")
_CONTRACT = re.compile(r"^([A-Z0-9]+?)[FGHJKMNQUVXZ]\d{1,2}$")


def symbol_root(symbol: str, table: Mapping[str, ContractSpec] | None = None) -> str:
    """Map a symbol or contract code to a root in ``table``.

    Args:
        symbol: e.g. ``ES``, ``ESH4``, ``ESZ24``, ``ES.c.0``, ``ES_FUT``, ``6EM4``.
        table: root -> spec; the built-in :data:`CONTRACTS` when None.

    Returns:
        The root, e.g. ``ES``.

    Raises:
        DataError: no root in ``table`` matches.
    """
    table = CONTRACTS if table is None else table
    m = _LEADING.match(symbol.strip())
    head = m.group(0).upper() if m else ""
    if head in table:
        return head
    c = _CONTRACT.match(head)
    if c and c.group(1) in table:
        return c.group(1)
    if ALIASES.get(head) in table:
        return ALIASES[head]
    known = ", ".join(sorted(table))
    raise DataError(
        f"symbol {symbol!r}: unknown futures root (known: {known}); "
        "pass a static table with this root"
    )


def static_values(
    symbol: str, table: Mapping[str, ContractSpec] | None = None
) -> tuple[float, float, float, float, float]:
    """The 5 static feature values of ``symbol`` (order of :data:`STATIC_FEATURES`).

    Args:
        symbol: a symbol or contract code (see :func:`symbol_root`).
        table: root -> spec; the built-in :data:`CONTRACTS` when None.

    Returns:
        (log10 tick size, log10 point value, log10 tick value, asset class code, session hours).

    Raises:
        DataError: the symbol's root is unknown.
    """
    table = CONTRACTS if table is None else table
    spec = table[symbol_root(symbol, table)]
    return (
        math.log10(spec.tick_size),
        math.log10(spec.point_value),
        math.log10(spec.tick_value),
        float(spec.asset_class),
        float(spec.session_hours),
    )


def static_table_for(
    symbols: Iterable[str], table: Mapping[str, ContractSpec] | None = None
) -> dict[str, tuple[float, ...]]:
    """``{symbol: static values}`` for every distinct symbol (raises on the first unknown one)."""
    return {s: static_values(s, table) for s in sorted(set(symbols))}
