"""Contract-coded symbols: ``ESZ4``, ``ESZ24``, ``6EH4``, ``ES.c.0`` -> root ``ES``.

Bars of one contract (or one continuous series) are the root's bars; the contract is kept in a
``contract`` column. A symbol is split only when it is the root followed by a month code and a
1-2 digit year, or a Databento continuous suffix (``.c.0``, ``.v.1``, ``.n.0``): an alias such
as ``SPY`` (which the static table maps to ``ES`` for its features) is never renamed.
"""

from __future__ import annotations

import re

import polars as pl

from foxhunt.data.market.futures import FUTURES
from foxhunt.data.market.instruments import futures_root

_SUFFIX = re.compile(r"^([FGHJKMNQUVXZ]\d{1,2}|[FGHJKMNQUVXZ](?:19|20)\d{2}|\.[cvn]\.\d+)$", re.I)
_LONG_YEAR = re.compile(r"^(.+[FGHJKMNQUVXZ])(?:19|20)(\d{2})$", re.IGNORECASE)
"""A contract code with its year in four digits (Quandl's ``CME/ESH2018``): written ``ESH18``."""


def contract_root(symbol: str) -> str | None:
    """The futures root of a contract-coded symbol, or None when ``symbol`` is no contract code.

    Args:
        symbol: e.g. ``ESZ4``, ``ESZ24``, ``ESZ2024``, ``6EH4``, ``ES.c.0`` (roots ``ES``,
            ``ES``, ``ES``, ``6E``, ``ES``); ``ES``, ``GOOG``, ``SPY`` give None.

    Returns:
        The root (upper case) or None.
    """
    s = symbol.strip()
    root = futures_root(s, FUTURES)
    if root is None:  # not a known futures root: keep the symbol as it is
        return None
    if s.upper().startswith(root) and _SUFFIX.match(s[len(root) :]):
        return root
    return None


def is_spread(symbol: str) -> bool:
    """A spread of contracts, as a parent symbology (Databento's ``ES.FUT``) lists them beside
    the outrights: a calendar spread ``ZNH4-ZNM4`` (two contract codes), or a user-defined one
    (``UD:1V: ...``). Its prices are differences, at zero or below as often as not."""
    s = symbol.strip()
    if s.upper().startswith("UD:"):
        return True
    legs = s.split("-")
    return len(legs) == 2 and all(contract_root(leg) is not None for leg in legs)


def split_contracts(df: pl.DataFrame) -> pl.DataFrame:
    """Contract-coded symbols -> root symbol + ``contract`` column (one contract per root)."""
    symbols = df["symbol"].unique().drop_nulls().to_list()
    roots = {s: r for s in symbols if (r := contract_root(s)) is not None}
    per_root: dict[str, int] = {}
    for r in roots.values():
        per_root[r] = per_root.get(r, 0) + 1
    roots = {s: r for s, r in roots.items() if per_root[r] == 1}
    if not roots:
        return df
    sym = pl.col("symbol")
    codes = {s: _LONG_YEAR.sub(r"\1\2", s.strip()) for s in roots}  # ESH2018: ESH18
    return df.with_columns(
        sym.replace(roots).alias("symbol"),
        pl.when(sym.is_in(list(roots))).then(sym.replace(codes)).otherwise(None).alias("contract"),
    )
