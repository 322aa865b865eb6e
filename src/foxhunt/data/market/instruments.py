"""Instruments: what a symbol is (tick size, point value, currency, asset class, calendar).

A symbol resolves to an :class:`Instrument` in this order (:func:`resolve`):

1. the user's table (``--instruments FILE``, :func:`foxhunt.data.market.instrument_table.load_instruments`),
   by the exact symbol, then by its futures root;
2. the built-in futures table (:data:`foxhunt.data.market.futures.FUTURES`) by root: ``ES``, ``ESZ4``,
   ``ESZ24``, ``ES.c.0``, ``ES_FUT``, ``6EH4`` all resolve to ``ES`` / ``6E``;
3. inference from the symbol's shape: spot FX pairs (``GBPUSD``, ``GBP/USD``, ``EUR_USD``),
   crypto (``BTCUSD``, ``BTCUSDT``, ``BTC-PERP``, ``ETH/USDC``), ETFs and cash indices from a
   short list, then stock tickers (``AAPL``, ``BRK.B``; Stooq's and EODHD's ``AAPL.US`` is a US
   listing, read as ``AAPL``, and never a future's root: ``CL.US`` is a stock) — each its own
   asset class with its own calendar, never a future's contract economics;
4. anything else is ``unknown``: tick size from the data (:func:`infer_tick_size`), point value 1,
   the 24/7 calendar — or, given its bars (:func:`resolve_bars`), the calendar whose hours and
   days they keep (:mod:`foxhunt.data.market.bars_market`; also for another market's index,
   and for a bare ticker taken for a US stock whose bars do not keep the NYSE's calendar).

Steps 3 and 4 log one warning per symbol naming what was guessed and ``--instruments FILE``.
A resolved table round-trips through :func:`instruments_to_dict` / :func:`instruments_from_dict`
so a run stores the values it trained with and inference reuses them.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, replace
from typing import Any

import numpy as np

from foxhunt.data.market.futures import FUTURES
from foxhunt.data.market.instrument import Instrument
from foxhunt.errors import DataError

log = logging.getLogger(__name__)

_LEADING = re.compile(r"[A-Za-z0-9]+")
_CONTRACT = re.compile(r"^([A-Z0-9]+?)[FGHJKMNQUVXZ](\d{1,2}|(19|20)\d{2})$")
_CONTINUOUS_SPELLINGS = (
    re.compile(r"^([A-Z0-9]{1,4}?) ?\d{1,2} (?:INDEX|COMDTY|CURNCY)$", re.IGNORECASE),  # Bloomberg
    re.compile(r"^([A-Z0-9]{1,4})c\d{1,2}$"),  # Refinitiv's continuation RIC: ESc1
    re.compile(r"^(?:[A-Z0-9_]+:)?([A-Z0-9]{1,4}?)\d{1,2}!$", re.IGNORECASE),  # TradingView
)
"""Vendors' names of a continuous future: Bloomberg's generic ``ES1 Index``/``CL1 Comdty``,
Refinitiv's ``ESc1``, TradingView's ``ES1!``/``CME_MINI:ES1!`` (thinkorswim's ``/ES`` and
``/ESH18`` are a root or a contract after a slash); a name whose root is no known future is
unknown."""
_SEP = re.compile(r"[/_\-. :]")
_CQG = re.compile(r"^F\.(?:US|EU|UK|JP|CA)\.([A-Z0-9]{1,4}?)([FGHJKMNQUVXZ]\d{1,2})?$")
"""CQG's futures names: ``F.US.EPM18`` is the June 2018 E-mini S&P, ``F.US.EP`` the root."""
CQG_ROOTS = {
    "EP": "ES",
    "ENQ": "NQ",
    "DD": "YM",
    "CLE": "CL",
    "NGE": "NG",
    "RBE": "RB",
    "HOE": "HO",
    "GCE": "GC",
    "SIE": "SI",
    "HGE": "HG",
    "TYA": "ZN",
    "USA": "ZB",
    "FVA": "ZF",
    "TUA": "ZT",
    "EU6": "6E",
    "JY6": "6J",
    "BP6": "6B",
    "ZCE": "ZC",
    "ZSE": "ZS",
    "ZWA": "ZW",
}
"""CQG's roots where they differ from the exchange's (any other root is the exchange's)."""

FIAT = frozenset(
    "USD EUR JPY GBP CHF AUD NZD CAD SEK NOK DKK HKD SGD CNH CNY MXN ZAR TRY PLN HUF CZK ILS "
    "KRW INR BRL RUB THB TWD".split()
)
"""ISO 4217 codes accepted as either side of a spot FX pair."""
CRYPTO = frozenset(
    "BTC XBT ETH SOL XRP ADA DOGE LTC BNB DOT AVAX LINK MATIC POL BCH TRX XLM ATOM UNI ETC "
    "FIL APT ARB OP SHIB TON NEAR SUI PEPE".split()
)
"""Crypto asset codes recognised as the base of a pair or perpetual."""
STABLECOINS = ("USDT", "USDC", "BUSD", "FDUSD")
"""Dollar stablecoins: any asset quoted in one is crypto (``INJUSDT``), in :data:`CRYPTO` or not."""
CRYPTO_QUOTES = ("USDT", "USDC", "BUSD", "FDUSD", "USD", "EUR", "GBP", "JPY", "KRW", "AUD",
                 "CAD", "CHF", "TRY", "BRL", "BTC", "ETH", "XBT")  # fmt: skip
"""What a crypto asset is quoted in: stablecoins, the currencies of the exchanges that list it
(Coinbase's GBP, bitFlyer's JPY, Upbit's KRW, BtcTurk's TRY...; until session 53 ``BTC-GBP``
and ``BTC_JPY`` were the CME future ``BTC``), and other crypto assets."""
_PERP = re.compile(
    r"^([A-Z0-9]+?)[-_/.]?(?:(USDT|USDC|USD)[-_/.]?)?(?:PERPETUAL|PERP|SWAP|P)$"
)  # Deribit's BTC-PERPETUAL, FTX's BTC-PERP, OKX's BTC-USDT-SWAP, dYdX's BTC-USD-P
ETFS = frozenset(
    "SPY IVV VOO VTI QQQ IWM DIA EEM EFA TLT IEF SHY LQD HYG GLD SLV USO UNG XLF XLE XLK XLV "
    "XLI XLY XLP XLU XLB XLRE VNQ GDX SMH ARKK TQQQ SQQQ UVXY".split()
)
"""ETF tickers recognised by name (any other short ticker is taken for a stock)."""
CASH_INDICES = frozenset(
    "SPX GSPC SP500 NDX NDX100 DJI DJIA RUT VIX IXIC NYA SOX DJT DJU OEX MID SML RUA RUI W5000 "
    "XAX VXN TNX IRX FVX TYX".split()
)
"""US cash index names (not tradeable; own asset class, the NYSE's hours); those of other
markets are :data:`INDEX_MARKETS`. Any other of Yahoo's ``^`` names is an unknown market
(until session 54 the NYSE's: ``^NSEBANK``'s 5-minute bars were refused as all in closed
hours, and ``^MDAXI``'s days judged on US holidays)."""
INDEX_MARKETS = {
    **dict.fromkeys(
        ("DAX", "GDAXI", "SX5E", "STOXX50E", "MDAXI", "SDAXI", "TECDAX"), ("xetr", "EUR")
    ),
    **dict.fromkeys(("FTSE", "UKX", "FTSE100", "FTMC", "FTAS"), ("xlon", "GBP")),
    **dict.fromkeys(
        ("N225", "NK225", "NIKKEI", "NIKKEI225", "TOPIX", "TPX", "NKX"), ("xtks", "JPY")
    ),
    **dict.fromkeys(("HSI", "HANGSENG", "HSCE"), ("xhkg", "HKD")),
    **dict.fromkeys(("AS51", "XJO", "AXJO", "ASX200", "AORD"), ("xasx", "AUD")),
    **dict.fromkeys(
        ("NIFTY", "NIFTY50", "NSEI", "SENSEX", "BSESN", "NSEBANK", "CNXIT", "NSMIDCP"),
        ("xnse", "INR"),
    ),
    **dict.fromkeys(("STI",), ("xses", "SGD")),
    **dict.fromkeys(("GSPTSE", "TSX", "SPTSX"), ("xtse", "CAD")),
    **dict.fromkeys(("FCHI", "CAC", "CAC40", "PX1"), ("xpar", "EUR")),
    **dict.fromkeys(("AEX",), ("xams", "EUR")),
    **dict.fromkeys(("SSMI", "SMI"), ("xswx", "CHF")),
    **dict.fromkeys(("IBEX", "IBEX35"), ("xmad", "EUR")),
    **dict.fromkeys(("FTSEMIB", "FTMIB"), ("xmil", "EUR")),
    **dict.fromkeys(("OMX", "OMXS30"), ("xsto", "SEK")),
    **dict.fromkeys(("KS11", "KOSPI", "KS200", "KOSPI200"), ("xkrx", "KRW")),
    **dict.fromkeys(("TWII", "TAIEX"), ("xtai", "TWD")),
    **dict.fromkeys(("SSEC", "SHCOMP", "CSI300"), ("xshg", "CNY")),
    **dict.fromkeys(("BVSP", "IBOV"), ("bvmf", "BRL")),
    **dict.fromkeys(("J203", "JALSH", "JTOPI"), ("xjse", "ZAR")),
    **dict.fromkeys(("TA35", "TA125"), ("xtae", "ILS")),
    "JKSE": ("xidx", "IDR"),
    "MXX": ("xmex", "MXN"),
    "XU100": ("xist", "TRY"),
    "KLSE": ("xkls", "MYR"),
    "NZ50": ("xnze", "NZD"),
    "WIG20": ("xwar", "PLN"),
    "OMXH25": ("xhel", "EUR"),
    "OMXC25": ("xcse", "DKK"),
    "PSI20": ("xlis", "EUR"),
    "BFX": ("xbru", "EUR"),
    "ISEQ": ("xdub", "EUR"),
}
"""Cash indices of markets outside New York (Yahoo's spellings after its ``^`` too): their
exchange's calendar and currency; they read as stocks on the NYSE's before (``NK225`` bars in
Tokyo time were valid 9 hours off on a 24x7 calendar, ``HSI`` refused with a zone advice that
moved correct UTC bars)."""
_QUANTIACS = re.compile(r"^F_([A-Z0-9]{1,4})$")
QUANTIACS_US = frozenset(
    "ES NQ YM MD RU CL NG HO RB GC SI HG PL PA C S W O BO SM NR TY US FV TU ZQ ED AD BP CD EC "
    "JY SF MP DX CC CT KC SB OJ LC FC LN LB VX".split()
)
"""Quantiacs' codes of US futures (``F_TY`` the 10-year note, ``F_C`` corn, ``F_LC`` live
cattle): their daily bars are the US exchanges' trading days, the NYSE's holidays left out (over
1990-2014 2-13 of ~6,300 bars fall on a day the NYSE is shut, and 5-49 of its days lack a
bar; on CME Globex's calendars 150-190 days lack one: Globex trades on Martin Luther King Day
and the like)."""
_STOCK = re.compile(r"^[A-Z]{1,5}(\.[A-EG-KM-SUW-Z]|-[A-Z])?$")
"""A US stock's ticker, perhaps with its share class (``BRK.B``, ``BRK-B``); not a ticker with
Yahoo's one-letter market outside the US (``VOD.L`` London, ``.T`` Tokyo, ``.F`` Frankfurt,
``.V`` TSX Venture: an unknown market, as ``BMW.DE`` is, not the NYSE's calendar)."""
LISTING_MARKETS = {
    **dict.fromkeys(("T", "JP"), ("xtks", "JPY")),
    **dict.fromkeys(("L", "UK"), ("xlon", "GBP")),
    "DE": ("xetr", "EUR"),
    "HK": ("xhkg", "HKD"),
    "AX": ("xasx", "AUD"),
    **dict.fromkeys(("NS", "BO"), ("xnse", "INR")),
    "SI": ("xses", "SGD"),
    **dict.fromkeys(("TO", "V"), ("xtse", "CAD")),  # V: the TSX Venture, on Toronto's hours
    "PA": ("xpar", "EUR"),
    "AS": ("xams", "EUR"),
    "SW": ("xswx", "CHF"),
    "MC": ("xmad", "EUR"),
    "MI": ("xmil", "EUR"),
    "ST": ("xsto", "SEK"),
    **dict.fromkeys(("KS", "KQ"), ("xkrx", "KRW")),
    "TW": ("xtai", "TWD"),
    **dict.fromkeys(("SS", "SZ", "SH"), ("xshg", "CNY")),
    "SA": ("bvmf", "BRL"),
    "JO": ("xjse", "ZAR"),
    "TWO": ("xtai", "TWD"),
    "TA": ("xtae", "ILS"),
    "JK": ("xidx", "IDR"),
    "MX": ("xmex", "MXN"),
    "IS": ("xist", "TRY"),
    "BK": ("xbkk", "THB"),
    "KL": ("xkls", "MYR"),
    "NZ": ("xnze", "NZD"),
    **dict.fromkeys(("WA", "PL"), ("xwar", "PLN")),
    "HE": ("xhel", "EUR"),
    "CO": ("xcse", "DKK"),
    "OL": ("xosl", "NOK"),
    "VI": ("xwbo", "EUR"),
    "PR": ("xpra", "CZK"),
    **dict.fromkeys(("BD", "HU"), ("xbud", "HUF")),
    "AT": ("asex", "EUR"),
    "LS": ("xlis", "EUR"),
    "BR": ("xbru", "EUR"),
    "IR": ("xdub", "EUR"),
}
"""A stock's market after its ticker, as Yahoo writes it (``7203.T``, ``VOD.L``, ``BMW.DE``,
``0700.HK``, ``BHP.AX``, ``RELIANCE.NS``, ``D05.SI``, ``RY.TO``) and Stooq (``7203.JP``,
``VOD.UK``): that exchange's calendar and currency. Until session 54 these were an unknown
market on ``24x7``, and a Tokyo file's naive local times were read as UTC, valid, nine hours
off. Since session 55 also Paris ``.PA``, Amsterdam ``.AS``, Zurich ``.SW``, Madrid ``.MC``,
Milan ``.MI``, Stockholm ``.ST``, Korea ``.KS``/``.KQ``, Taiwan ``.TW``, Shanghai and
Shenzhen ``.SS``/``.SZ`` (and ``.SH``), São Paulo ``.SA``, Johannesburg ``.JO``. Since session
59 (on ``exchange_calendars``' calendars) Tel Aviv ``.TA``, Jakarta ``.JK``, Mexico ``.MX``,
Istanbul ``.IS``, Bangkok ``.BK``, Kuala Lumpur ``.KL``, Wellington ``.NZ``,
Warsaw ``.WA`` (Stooq's ``.PL``), Helsinki ``.HE``, Copenhagen ``.CO``, Oslo ``.OL``, Vienna
``.VI``, Prague ``.PR``, Budapest ``.BD`` (Stooq's ``.HU``), Athens ``.AT``, Lisbon ``.LS``,
Brussels ``.BR``, Dublin ``.IR``, and Taipei's OTC market ``.TWO`` on its main board's
calendar (until then all an unknown market on ``24x7``, or the calendar their bars keep).
Other markets (Frankfurt's floor ``.F``, TSX Venture ``.V``) stay unknown, their calendar
taken from their bars."""
_LISTING = re.compile(r"^[A-Z0-9][A-Z0-9&-]*\.([A-Z]{1,3})$")
CALENDAR_CURRENCY = {"xnys": "USD", "xnys_ext": "USD", **dict(LISTING_MARKETS.values())}
"""The currency of a stock market's calendar, for a symbol given its calendar by its bars."""


def on_calendar(inst: Instrument, calendar: str, prices: np.ndarray | None = None) -> Instrument:
    """``inst`` moved to ``calendar`` (chosen from its bars), in that market's currency where
    it is a stock market's (:data:`CALENDAR_CURRENCY`), else in its own (a name that places
    nothing has none; a cash index keeps its own: ``DAX``'s bars of Eurex's hours are still in
    euros).

    A name taken for a stock or a crypto future, moved to a calendar of no stock market, is no
    longer one: its bars through the weekends are a coin's (``crypto`` on ``24x7``: ``DOGE``,
    ``BTC``'s spot bars, not CME's future), others a future's, a CFD's or a pair's (``unknown``:
    ``CABLE``'s FX week, ``OIL``'s CME hours), of point value 1 and the tick its ``prices``
    show (:func:`infer_tick_size`)."""
    if inst.asset_class not in ("stock", "crypto_future") or calendar in CALENDAR_CURRENCY:
        # a stock market's currency, else its own: an unknown name's none, an index's its own
        currency = CALENDAR_CURRENCY.get(calendar, inst.currency)
        if inst.asset_class == "unknown" and inst.currency:  # Quantiacs': values in USD
            currency = inst.currency
        return replace(inst, calendar=calendar, currency=currency)
    cls = "crypto" if calendar == "24x7" else "unknown"
    tick = infer_tick_size(prices) if prices is not None else None
    return Instrument(
        inst.root, tick or (1e-8 if cls == "crypto" else 0.01), 1.0, "", cls, calendar
    )


CFD_BASES = {
    **dict.fromkeys(("XAU", "XAG", "XPT", "XPD"), "metals"),
    **dict.fromkeys(("BCO", "WTI", "WTICO"), "energy"),  # WTICO: Oanda's WTI crude
    **dict.fromkeys(
        ("SPX", "NSX", "UDX", "JPX", "GRX", "FRX", "UKX", "HKX", "AUX", "ETX"), "cash_index"
    ),
}
"""Bases of CFDs quoted like FX pairs (histdata's ``XAUUSD``, ``SPXUSD``, ``BCOUSD``): spot
metals, crude oil and index CFDs, traded through the FX week (``fx_24x5``: in 2018 histdata's
SPXUSD/NSXUSD/XAUUSD/BCOUSD put 0.4-0.6 % of their bars outside it, 2-5 % outside the CME
calendars)."""


INDEX_CFDS = {
    **dict.fromkeys(("US500", "SPX500", "US30", "DJ30", "US100", "NAS100", "USTEC"), "USD"),
    **dict.fromkeys(("USA500", "USA30", "USATECH"), "USD"),  # Dukascopy's USA500.IDX/USD ...
    **dict.fromkeys(("GER40", "GER30", "DE40", "DE30", "EU50", "FRA40", "ESP35"), "EUR"),
    **dict.fromkeys(("UK100",), "GBP"),
    **dict.fromkeys(("JP225", "JPN225"), "JPY"),
    **dict.fromkeys(("HK50",), "HKD"),
    **dict.fromkeys(("AUS200",), "AUD"),
}
"""Brokers' index CFDs by their usual names: cash indices traded through the FX week (as
histdata's ``SPXUSD``), in their currency; they were unknown on a 24x7 calendar."""


def _head(symbol: str) -> str:
    m = _LEADING.match(symbol.strip())
    return m.group(0).upper() if m else ""


def cqg_symbol(name: str) -> str | None:
    """A CQG futures name as the exchange writes it: ``F.US.EPH14`` -> ``ESH14`` (root and
    contract code, split later like any contract), ``F.US.EP`` -> ``ES``; None for other names."""
    if not (cqg := _CQG.match(name.strip().upper())):
        return None
    return CQG_ROOTS.get(cqg.group(1), cqg.group(1)) + (cqg.group(2) or "")


def futures_root(symbol: str, roots: Iterable[str]) -> str | None:
    """The futures root of ``symbol`` among ``roots``, or None.

    ``ES``, ``es``, ``ES.c.0`` and ``ES_FUT`` match by their leading letters and digits;
    ``ESH4``/``ESZ24``/``ESH2018``/``6EM4`` by stripping a contract month code and a year; the
    continuous names of :data:`_CONTINUOUS_SPELLINGS` (``ES1 Index``, ``ESc1``, ``ES1!``,
    ``/ES``) by their root; CQG's ``F.US.EPM18`` by its root through :data:`CQG_ROOTS`.
    """
    roots = set(roots)
    if cqg := _CQG.match(symbol.strip().upper()):
        root = CQG_ROOTS.get(cqg.group(1), cqg.group(1))
        return root if root in roots else None
    for spelling in _CONTINUOUS_SPELLINGS:
        if (m := spelling.match(symbol.strip())) and m.group(1).upper() in roots:
            return m.group(1).upper()
    head = _head(symbol.strip().removeprefix("/"))
    if head in roots:
        return head
    c = _CONTRACT.match(head)
    return c.group(1) if c and c.group(1) in roots else None


def _us_listing(symbol: str) -> str | None:
    """The ticker of a US listing spelt with its market, as Stooq and EODHD do (``AAPL.US``,
    ``BRK-B.US`` -> ``AAPL``, ``BRK-B``), or None."""
    s = symbol.strip().upper()
    bare = s.removesuffix(".US")
    return bare if bare != s and _STOCK.match(bare) else None


BROKER_SUFFIXES = ("M", "I", "C", "PRO", "RAW", "ECN", "STD", "MICRO", "MINI", "PLUS")
"""What FX brokers put after a pair in their symbols (MetaTrader's ``EURUSDm``, ``XAUUSD.pro``,
``GBPUSD_i``, ``EURUSD+``): the pair without it."""


def _bare_pair(flat: str) -> str:
    """``EURUSDM``/``XAUUSDPRO`` -> the six letters of the pair; another symbol as it is."""
    flat = flat.rstrip("+#")
    if len(flat) > 6 and flat[6:] in BROKER_SUFFIXES and flat[:6].isalpha():
        return flat[:6]
    return flat


def _spot_fx(symbol: str) -> tuple[str, str] | None:
    s = symbol.strip().upper()
    parts = [p for p in _SEP.split(s) if p]
    if len(parts) == 2 and parts[0] in FIAT and parts[1] in FIAT:
        return parts[0], parts[1]
    flat = _bare_pair("".join(parts))
    if len(flat) == 6 and flat[:3] in FIAT and flat[3:] in FIAT and flat[:3] != flat[3:]:
        return flat[:3], flat[3:]
    return None


def _cfd(symbol: str) -> tuple[str, str] | None:
    """(base, quote currency) of a CFD quoted like an FX pair (:data:`CFD_BASES`), or None."""
    flat = _bare_pair("".join(p for p in _SEP.split(symbol.strip().upper()) if p))
    if len(flat) >= 6 and flat[:-3] in CFD_BASES and flat[-3:] in FIAT:  # XAUUSD, WTICOUSD
        return flat[:-3], flat[-3:]
    if flat in INDEX_CFDS:
        return flat, INDEX_CFDS[flat]
    return None


def _crypto(symbol: str) -> tuple[str, str] | None:
    s = symbol.strip().upper()
    m = _PERP.match(s)
    if m and (m.group(1) in CRYPTO or (m.group(2) in STABLECOINS and coin(m.group(1)))):
        return m.group(1), m.group(2) or "USD"
    parts = [p for p in _SEP.split(s) if p]
    if len(parts) >= 2 and parts[0] in CRYPTO and parts[1] in CRYPTO_QUOTES:
        return parts[0], parts[1]
    flat = "".join(parts)
    for q in CRYPTO_QUOTES:
        if flat.endswith(q) and flat[: -len(q)] in CRYPTO:
            return flat[: -len(q)], q
    for q in STABLECOINS:  # an asset the list lacks (INJUSDT: was unknown, its tick 0.01)
        base = flat[: -len(q)]
        if flat.endswith(q) and coin(base):
            return base, q
    return None


_ASSET = re.compile(r"^(?=.*[A-Z])[A-Z0-9]{2,12}$")
"""A crypto asset's code, letters and digits, a letter among them (``1INCH``, ``1000PEPE``)."""


def coin(base: str) -> bool:
    """Whether ``base`` before a stablecoin can be a crypto asset (:data:`_ASSET`): no future's
    root (``ES_USDT`` stays CME's), no currency pair (``EURUSD_usdc``)."""
    b = base.upper()
    return bool(_ASSET.match(b)) and b not in FUTURES and _spot_fx(b) is None


def infer_instrument(symbol: str, tick_size: float | None = None) -> Instrument:
    """An instrument guessed from the symbol's shape alone (steps 3-4 of :func:`resolve`).

    Args:
        symbol: the bar file's symbol.
        tick_size: the tick inferred from the data (:func:`infer_tick_size`), used where the
            asset class has no standard tick (crypto, unknown); None means 1e-8 / 0.01.

    Returns:
        The guessed instrument (asset class ``unknown`` when nothing matched).
    """
    s = symbol.strip().upper()
    if bare := _us_listing(s):
        return infer_instrument(bare, tick_size)  # as QQQ.US was QQQ, an ETF, before
    if fx := _spot_fx(s):
        tick = 0.001 if fx[1] == "JPY" else 0.00001
        return Instrument(s, tick, 1.0, fx[1], "spot_fx", "fx_24x5")
    if quantiacs := _QUANTIACS.match(s):
        # Quantiacs' continuous futures: prices are contract values in USD (point value 1),
        # daily bars on weekdays: a US future's on the NYSE's trading days (until session 54
        # on fx_24x5 too, forecast on New Year's Day), any other's on the Sunday-Friday week
        # of fx_24x5 (a bar at 00:00 UTC Monday to Friday, none on weekends, no holidays).
        us = quantiacs.group(1) in QUANTIACS_US
        return Instrument(s, tick_size or 0.01, 1.0, "USD", "unknown", "xnys" if us else "fx_24x5")
    if cfd := _cfd(s):
        kind = "cash_index" if cfd[0] in INDEX_CFDS else CFD_BASES[cfd[0]]
        return Instrument(s, tick_size or 0.01, 1.0, cfd[1], kind, "fx_24x5")
    if cr := _crypto(s):
        cur = "USD" if cr[1] in STABLECOINS else cr[1]
        return Instrument(s, tick_size or 1e-8, 1.0, cur, "crypto", "24x7")
    head = _head(s.removeprefix("^"))  # Yahoo's index spelling: ^GSPC is GSPC
    if head in INDEX_MARKETS:
        calendar, currency = INDEX_MARKETS[head]
        return Instrument(head, 0.01, 1.0, currency, "cash_index", calendar)
    if head in ETFS:
        return Instrument(head, 0.01, 1.0, "USD", "etf", "xnys")
    if head in CASH_INDICES:
        return Instrument(head, 0.01, 1.0, "", "cash_index", "xnys")
    if s.startswith("^"):  # another market's index: unknown (xnys until session 54)
        return Instrument(head, tick_size or 0.01, 1.0, "", "cash_index", "24x7")
    if _STOCK.match(s):
        return Instrument(s, 0.01, 1.0, "USD", "stock", "xnys")
    if (listed := _LISTING.match(s)) and listed.group(1) in LISTING_MARKETS:
        calendar, currency = LISTING_MARKETS[listed.group(1)]
        return Instrument(s, tick_size or 0.01, 1.0, currency, "stock", calendar)
    return Instrument(s, tick_size or 0.01, 1.0, "", "unknown", "24x7")


def infer_tick_size(prices: np.ndarray | Iterable[float]) -> float | None:
    """The smallest price increment seen in ``prices``, robust to float noise.

    Prices are rounded to 10 significant digits of the largest price, the distinct levels
    sorted, and the smallest positive difference (itself rounded to 10 significant digits)
    taken: a 5-decimal FX quote gives 1e-05 even if stored as 1.2345600000000001.

    Returns:
        The tick, or None when fewer than two distinct finite positive prices.
    """
    p = np.asarray(list(prices) if not isinstance(prices, np.ndarray) else prices, float)
    p = p[np.isfinite(p) & (p > 0)]
    if p.size < 2:
        return None
    decimals = 9 - math.floor(math.log10(float(p.max())))
    levels = np.unique(np.round(p, decimals))
    d = np.diff(levels)
    d = d[d > 0]
    if d.size == 0:
        return None
    tick = float(d.min())
    return float(f"{tick:.10g}")


def lookup(symbol: str, table: Mapping[str, Instrument] | None = None) -> Instrument | None:
    """Steps 1-2 of :func:`resolve`: the user's table, then the built-in futures; None if
    neither has the symbol."""

    key = symbol.strip().upper()
    user = table or {}
    if key in user:
        return user[key]
    if (root := futures_root(symbol, user)) is not None:
        return user[root]
    if key in FUTURES:
        return FUTURES[key]
    # A pair, CFD, perpetual or US listing (BTC-PERP, XAUUSD, CL.US) must not match a future by
    # its leading letters.
    if _spot_fx(symbol) is not None or _crypto(symbol) is not None or _cfd(symbol) is not None:
        return None
    if _us_listing(symbol) is not None:
        return None
    root = futures_root(symbol, FUTURES)
    return None if root is None else FUTURES[root]


def resolve(
    symbol: str,
    table: Mapping[str, Instrument] | None = None,
    *,
    prices: np.ndarray | None = None,
    warn: bool = True,
) -> Instrument:
    """The instrument of ``symbol``: user table, then built-in futures, then inference.

    Args:
        symbol: e.g. ``ES``, ``ESZ4``, ``ES.c.0``, ``6EH4``, ``GBPUSD``, ``BTC-PERP``, ``AAPL``.
        table: the user's instruments (root or symbol -> :class:`Instrument`), or None.
        prices: the symbol's prices, to infer a tick size when none is known.
        warn: log one warning when the instrument is inferred (steps 3-4).

    Returns:
        The instrument (its ``root`` is the table key that matched, or the symbol).
    """
    found = lookup(symbol, table)
    if found is not None:
        return found
    tick = infer_tick_size(prices) if prices is not None else None
    inst = infer_instrument(symbol, tick)
    if warn:
        log.warning("%s", _inferred_line(symbol, inst))
    return inst


def _inferred_line(symbol: str, inst: Instrument, fitted: bool = False) -> str:
    return (
        f"symbol {symbol!r} is not in the instrument table: treated as {inst.asset_class} "
        f"(tick {inst.tick_size:g}, point value {inst.point_value:g}, currency "
        f"{inst.currency or 'unknown'}, calendar {inst.calendar}"
        f"{FITTED_NOTE if fitted else ''}); pass --instruments FILE to set it"
    )


FITTED_NOTE = ", the hours and days its bars keep"
"""Said of a calendar chosen from the bars (:mod:`foxhunt.data.market.bars_market`)."""


def resolve_all(
    prices_by_symbol: Mapping[str, np.ndarray | None],
    table: Mapping[str, Instrument] | None = None,
    *,
    each: int = 3,
    calendars: Mapping[str, str] | None = None,
) -> dict[str, Instrument]:
    """``{symbol: instrument}`` for every symbol.

    Up to ``each`` inferred symbols get a warning each (their tick, point value, currency and
    calendar); more get one warning per asset class and calendar naming them (a folder of 88
    Quantiacs futures: one line, not 88; the details of each are in the run's
    ``instruments.json`` and at debug level).

    Args:
        prices_by_symbol: symbol -> its prices (or None), e.g. the ``close`` column per symbol.
        table: the user's instruments, or None.
        each: inferred symbols warned about one by one at most.
        calendars: symbol -> the calendar its bars keep, for inferred symbols
            (:func:`fitted_calendars`); it replaces the one guessed from the name.
    """
    out = {s: resolve(s, table, prices=p, warn=False) for s, p in sorted(prices_by_symbol.items())}
    fits = calendars or {}
    for s, cal in fits.items():
        if s in out:
            out[s] = on_calendar(out[s], cal, prices_by_symbol.get(s))
    inferred = [s for s in out if lookup(s, table) is None or s in fits]
    if len(inferred) <= each:
        for s in inferred:
            log.warning("%s", _inferred_line(s, out[s], s in fits))
        return out
    groups: dict[tuple[str, str], list[str]] = {}
    for s in inferred:
        log.debug("%s", _inferred_line(s, out[s], s in fits))
        groups.setdefault((out[s].asset_class, out[s].calendar), []).append(s)
    for (asset_class, calendar), names in groups.items():
        if len(names) == 1:
            log.warning("%s", _inferred_line(names[0], out[names[0]], names[0] in fits))
            continue
        shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
        log.warning(
            "%d symbols are not in the instrument table (%s): treated as %s, calendar %s, tick "
            "sizes inferred from their prices; pass --instruments FILE to set them",
            len(names), shown, asset_class, calendar,
        )  # fmt: skip
    return out


def instruments_to_dict(table: Mapping[str, Instrument]) -> dict[str, dict[str, Any]]:
    """JSON-able form of a table (``{key: {field: value}}``), e.g. for the run directory."""
    return {k: asdict(v) for k, v in sorted(table.items())}


def instruments_from_dict(d: Mapping[str, Mapping[str, Any]]) -> dict[str, Instrument]:
    """Inverse of :func:`instruments_to_dict`.

    Raises:
        DataError: a row lacks a field or holds a bad value (the message names the key).
    """
    out: dict[str, Instrument] = {}
    for key, row in d.items():
        try:
            out[key] = Instrument(**dict(row))
        except TypeError as e:
            raise DataError(f"instrument {key!r}: {e}") from e
    return out


def tick_from_prices(symbol: str, table: Mapping[str, Instrument] | None = None) -> bool:
    """Whether ``symbol``'s tick size is inferred from its prices: in no table, and crypto, a
    CFD or unknown."""
    if lookup(symbol, table) is not None:
        return False
    return infer_instrument(symbol).asset_class in ("crypto", "unknown") or _cfd(symbol) is not None


def calendar_of(symbol: str, table: Mapping[str, Instrument] | None = None) -> str:
    """The calendar name of ``symbol``'s instrument (no warning; see :func:`resolve`)."""
    return resolve(symbol, table, warn=False).calendar
