"""File names that spell a futures contract, or a venue's own spelling of a pair.

Each function takes a file name's stem and gives ``(symbol, how)``, or None where the name is
not of its kind; :func:`foxhunt.data.read.vendors.guess_from_name` asks them in turn. A
contract's symbol is written as ``ESM18`` so that the reader splits it into its root (``ES``)
and its ``contract`` column, as for a contract-coded symbol column:

* NinjaTrader's ``ES 06-18.Last.txt`` -> ``ESM18``;
* Norgate's and CSI's ``ES-2014H.csv``, ``ES2014H`` -> ``ESH14``;
* Cboe Futures Exchange's history files, ``CFE_F15_VX.csv`` -> ``VXF15``;
* Sierra Chart's names of a contract through CQG, Rithmic or TT, ``FDAX-201803-EUREX``
  (root, year and month, exchange) -> ``FDAXH18`` (until session 59 ``FDAX``: the contract
  month was lost, and a folder of contracts collided as duplicate bars);
* Refinitiv's (LSEG's) continuous futures RICs, ``ESc1``, ``LCOc1`` (Brent), ``TYc2`` -> the
  root (``ES``, ``BRN``; the second month ``ZN2``, as ``ES2!`` is ``ES2``), where the root is a
  built-in future (until session 59 ``ESC1``, ``LCOC1``: unknown instruments on 24x7);
* Bitfinex's trading pairs, ``tBTCUSD`` (``t`` for a trading pair, ``f`` for a funding
  currency) and ``tDOGE:USD`` -> ``BTCUSD``, ``DOGEUSD`` (until session 59 ``TBTCUSD``, an
  unknown instrument); its perpetuals, ``tBTCF0:USTF0`` (``F0`` after each side) ->
  ``BTCUSDT-PERP``, as other venues' perpetuals are named (until session 60 ``TBTCF0``).
"""

from __future__ import annotations

import re

from foxhunt.data.market.futures import FUTURES
from foxhunt.data.market.instruments import CRYPTO, CRYPTO_QUOTES, FIAT

MONTH_CODES = "FGHJKMNQUVXZ"
"""The futures month codes, January to December."""

_NINJA = re.compile(r"^([A-Za-z0-9]{1,4}) (0[1-9]|1[0-2])-(\d{2})(?:\.(?:last|bid|ask))?$", re.I)
"""NinjaTrader's contract names, ``ES 06-18.Last.txt`` (root, month and year): ``ESM18``."""
_NORGATE = re.compile(r"^([A-Za-z0-9]{1,4})[-_]?((?:19|20)\d{2})([FGHJKMNQUVXZ])$", re.I)
"""Norgate's and CSI's contract names, ``ES-2014H.csv``, ``ES2014H`` (root, year, month code):
``ESH14`` (until session 57 ``ES``: a folder of contracts collided as duplicate bars)."""
_CFE = re.compile(r"^CFE_([FGHJKMNQUVXZ])(\d{2})_([A-Z]{1,4})$", re.IGNORECASE)
"""Cboe Futures Exchange's history files, ``CFE_F15_VX``: month code, year, root (VX, January
2015)."""
_SIERRA = re.compile(r"^([A-Za-z0-9]{1,5})-((?:19|20)\d{2})(0[1-9]|1[0-2])-([A-Za-z]{2,8})$")
"""Sierra Chart's symbol of a contract through CQG, Rithmic or TT: root, year and month,
exchange (``FDAX-201803-EUREX``, ``ZN-201806-CBOT``)."""
_RIC = re.compile(r"^([A-Z0-9]{1,4})c(\d{1,2})(?=$|[-_ .])")
"""Refinitiv's continuous-futures RIC: root, a small ``c``, the month's number (``ESc1``)."""
_RIC_ROOTS = {"LCO": "BRN", "TY": "ZN", "US": "ZB", "FV": "ZF", "TU": "ZT", "W": "ZW", "C": "ZC",
              "S": "ZS", "FDX": "FDAX", "STXE": "FESX", "URO": "6E", "JY": "6J"}  # fmt: skip
"""Refinitiv's roots that are not the exchange's (Brent ``LCO``, the 10-year note ``TY``)."""
_BITFINEX = re.compile(r"^t([A-Z0-9]{2,6}):?([A-Z0-9]{3,5})(?=$|[-_ .])")
"""Bitfinex's trading pair, a ``t`` before it (``tBTCUSD``, ``tETHUSD_1m``, ``tDOGE:USD``)."""
_BITFINEX_PERP = re.compile(r"^t([A-Z0-9]{2,6})F0[:_-]([A-Z0-9]{3,5})F0(?=$|[-_ .])")
"""Bitfinex's perpetual, ``F0`` after its base and its collateral: ``tBTCF0:USTF0`` (saved where
a colon is no file name's as ``tBTCF0_USTF0``)."""
_BITFINEX_QUOTES = {"UST": "USDT"}
"""Bitfinex's own names of quote currencies (``tBTCUST`` is BTC against Tether)."""


def contract_name(stem: str) -> tuple[str, str] | None:
    """The contract a file name spells (``ESM18``) and how it was found, or None: the names of
    the module docstring whose root is a built-in future."""
    if (ninja := _NINJA.match(stem)) is not None and ninja.group(1).upper() in FUTURES:
        code = MONTH_CODES[int(ninja.group(2)) - 1]
        return f"{ninja.group(1).upper()}{code}{ninja.group(3)}", (
            "NinjaTrader's file name (root, month-year)"
        )
    if (norgate := _NORGATE.match(stem)) is not None and norgate.group(1).upper() in FUTURES:
        root, year, month = (g.upper() for g in norgate.groups())
        return f"{root}{month}{year[2:]}", "the file name (root, year, month code)"
    if (sierra := _SIERRA.match(stem)) is not None and sierra.group(1).upper() in FUTURES:
        code = MONTH_CODES[int(sierra.group(3)) - 1]
        symbol = f"{sierra.group(1).upper()}{code}{sierra.group(2)[2:]}"
        return symbol, "Sierra Chart's file name (root-yyyymm-exchange)"
    return None


def cfe_name(stem: str) -> str | None:
    """The contract of Cboe CFE's history file name (``CFE_F15_VX`` -> ``VXF15``), or None."""
    if (cfe := _CFE.match(stem)) is None:
        return None
    month, year, root = (g.upper() for g in cfe.groups())
    return f"{root}{month}{year}"


def bitfinex_pair(stem: str) -> str | None:
    """The pair of Bitfinex's name ``tBTCUSD`` (``BTCUSD``; ``tBTCUST`` is ``BTCUSDT``; its
    perpetual ``tBTCF0:USTF0`` is ``BTCUSDT-PERP``), or None where what follows the ``t`` is no
    pair of a currency or crypto asset and a quote."""
    if (perp := _BITFINEX_PERP.match(stem)) is not None:
        base, quote = perp.group(1), _BITFINEX_QUOTES.get(perp.group(2), perp.group(2))
        known = base != quote and base in CRYPTO | FIAT and quote in {*CRYPTO_QUOTES, *FIAT}
        return f"{base}{quote}-PERP" if known else None
    if (m := _BITFINEX.match(stem)) is None:
        return None
    joined = m.group(1) + m.group(2)
    splits = [(m.group(1), m.group(2))] if ":" in m.group(0) else []
    splits += [(joined[:i], joined[i:]) for i in range(2, len(joined) - 2)]
    for base, quote in splits:
        quote = _BITFINEX_QUOTES.get(quote, quote)
        if base != quote and base in CRYPTO | FIAT and quote in {*CRYPTO_QUOTES, *FIAT}:
            return base + quote
    return None


def ric_root(stem: str) -> str | None:
    """The built-in root of a Refinitiv continuous RIC (``ESc1`` -> ``ES``, ``LCOc1`` -> ``BRN``,
    ``ESc2`` -> ``ES2``), or None."""
    if (m := _RIC.match(stem)) is None:
        return None
    root = _RIC_ROOTS.get(m.group(1), m.group(1))
    if root not in FUTURES:
        return None
    return root if m.group(2) == "1" else f"{root}{m.group(2)}"
