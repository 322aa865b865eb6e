"""Static (per-symbol) features: 5 numbers from the symbol's instrument.

The instrument comes from :func:`foxhunt.data.market.instruments.resolve` (the user's table, the
built-in futures table :data:`foxhunt.data.market.futures.FUTURES`, then inference for stocks, ETFs,
spot FX, crypto and unknown symbols). This module keeps the older futures-only interface
(:class:`ContractSpec`, :data:`CONTRACTS`, :func:`contract_spec_of`, :func:`static_values`) that the
demo generator and ``compute_features(static_table=...)`` use.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from foxhunt.data.market.futures import FUTURES
from foxhunt.data.market.instrument import ASSET_CLASSES, Instrument
from foxhunt.data.market.instruments import futures_root
from foxhunt.errors import DataError


@dataclass(frozen=True)
class ContractSpec:
    """What the static features are made of, for one futures root."""

    tick_size: float
    """Minimum price increment, in price points."""
    point_value: float
    """Currency value of a one-point price move, per contract."""
    asset_class: int
    """Code in :data:`foxhunt.data.market.instruments.ASSET_CLASSES` (0 equity index, 1 energy,
    2 metals, 3 interest rates, 4 currencies, 5 agriculture, ...)."""
    session_hours: float
    """Typical hours traded per session (23 for most Globex products)."""
    typical_price: float
    """A representative price level (used by the demo generator only, never as a feature)."""

    @property
    def tick_value(self) -> float:
        """Currency value of one tick, tick_size * point_value."""
        return self.tick_size * self.point_value


def contract_spec(inst: Instrument) -> ContractSpec:
    """The :class:`ContractSpec` view of an instrument."""
    return ContractSpec(
        inst.tick_size,
        inst.point_value,
        ASSET_CLASSES.index(inst.asset_class),
        inst.hours,
        inst.typical_price,
    )


CONTRACTS: dict[str, ContractSpec] = {root: contract_spec(i) for root, i in FUTURES.items()}
"""The built-in futures table as root -> :class:`ContractSpec`."""

STATIC_FEATURES: tuple[str, ...] = (
    "static__log10_tick_size",
    "static__log10_point_value",
    "static__log10_tick_value",
    "static__asset_class",
    "static__session_hours",
)
"""The 5 static feature names, in model input order."""


def contract_spec_of(symbol: str, table: Mapping[str, ContractSpec] | None = None) -> ContractSpec:
    """The contract spec of a futures symbol or contract code, by its root
    (:func:`foxhunt.data.market.instruments.futures_root`, the one root rule).

    Args:
        symbol: e.g. ``ES``, ``ESH4``, ``ESZ24``, ``ES.c.0``, ``ES_FUT``, ``6EM4``.
        table: root -> spec; the built-in :data:`CONTRACTS` when None.

    Returns:
        The spec of the symbol's root, e.g. ``ES``'s.

    Raises:
        DataError: no root in ``table`` matches (stocks, ETFs, spot FX and crypto never match
            a future: use :func:`foxhunt.data.market.instruments.resolve` for those).
    """
    table = CONTRACTS if table is None else table
    root = futures_root(symbol, table)
    if root is None:
        raise DataError(
            f"symbol {symbol!r}: unknown futures root; pass --instruments FILE with this root "
            "(docs/data.md, Instruments)"
        )
    return table[root]


def static_values(
    symbol: str, table: Mapping[str, ContractSpec] | None = None
) -> tuple[float, float, float, float, float]:
    """The 5 static feature values of a futures ``symbol`` (order of :data:`STATIC_FEATURES`).

    Raises:
        DataError: the symbol's root is unknown.
    """
    spec = contract_spec_of(symbol, table)
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
