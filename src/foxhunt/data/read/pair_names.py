"""File names that spell a currency or crypto pair, in a venue's own way or a plain one.

:func:`foxhunt.data.read.vendors.guess_from_name` asks these of a name's stem; each gives the
pair as the instrument table knows it (``BTCUSD``, ``EURUSD``), or None where the name is not of
its kind:

* :func:`is_pair`, :func:`pair_first` and :data:`PAIR`: two currencies or a crypto asset and its
  quote, joined (``EURUSD``) or with a separator (``EUR_USD``, ``BTC-USD``);
* :data:`MT4_HISTORY`: MetaTrader 4's History Center export, the pair and the minutes
  (``EURUSD1440``);
* :func:`kraken_pair`: Kraken's codes of four letters, ``XXBTZUSD``, ``XETHZUSD`` (``X`` before
  a crypto asset, ``Z`` before a currency; Kraken's XBT is bitcoin) -> ``XBTUSD``, ``ETHUSD``,
  the short names of Kraken's OHLCVT downloads (were ``XXBTZUSD``, unknown on 24x7); the
  minutes of those downloads, ``XBTUSD_1440``, ``XBTUSD_1``;
* :func:`bitcoincharts_market`: bitcoincharts.com's markets, an exchange in small letters and
  the currency bitcoin is quoted in, as Kaggle's bitcoin history names its files
  (``bitstampUSD_1-min_data_2012-01-01_to_2021-03-31``, ``coinbaseUSD``, ``bitflyerJPY``) ->
  ``BTCUSD``, ``BTCJPY`` (were ``BITSTAMPUSD``, unknown on 24x7);
* :func:`stable_pair`: any crypto asset quoted in a dollar stablecoin with a separator, as OKX
  and KuCoin write them (``INJ-USDT``, ``1INCH-USDT``) -> ``INJUSDT`` (was ``INJ``, a US stock
  on the NYSE's calendar, its 24x7 bars refused);
* :func:`broker_pair`: a MetaTrader broker's suffix after the pair, in small letters
  (``EURUSDm``, ``EURUSDc``, ``XAUUSDm``, ``BTCUSDm``, ``US30m``) or one of the known ones in
  capitals (``EURUSDPRO``) -> the pair (were ``EURUSDM``, ``EURUSDC``: one broker's EURUSD a
  symbol apart from another's; ``EURUSD.a``, ``EURUSD-ECN``, ``EURUSD_i``, ``EURUSD#`` were the
  pair already).
"""

from __future__ import annotations

import re
from datetime import timedelta

from foxhunt.data.market.instruments import (
    BROKER_SUFFIXES,
    CFD_BASES,
    CRYPTO,
    CRYPTO_QUOTES,
    FIAT,
    INDEX_CFDS,
    STABLECOINS,
    coin,
)

PAIR = re.compile(r"^([A-Za-z]{2,5})[-_/ .]([A-Za-z]{3,5})(?![A-Za-z0-9])")
"""A currency or crypto pair written with a separator: ``EUR_USD``, ``BTC-USD``, ``eth usdt``,
Interactive Brokers' ``EUR.USD`` (since session 56; was ``EUR``)."""
MT4_HISTORY = re.compile(
    r"^([A-Za-z]{3})([A-Za-z]{3})(?:[a-z])?(1|5|15|30|60|240|1440|10080|43200)$"
)
"""MetaTrader 4's History Center export: the pair, a broker's one-letter suffix perhaps
(Exness's ``EURUSDm``), then the period in minutes (``EURUSD1``, ``XAUUSD60``, ``EURUSDm1``);
read as a symbol ``EURUSD1`` the bars were an unknown instrument on a 24x7 calendar, their
broker clock never checked (``EURUSDm1`` until session 53)."""


def is_pair(base: str, quote: str) -> bool:
    """Two currencies (``EUR``/``USD``) or a crypto asset and a crypto quote (``BTC``/``USDT``)."""
    if base == quote:
        return False
    return (base in FIAT and quote in FIAT) or (base in CRYPTO and quote in CRYPTO_QUOTES)


_STABLE_PAIR = re.compile(
    rf"^((?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{{2,12}})[-_/]({'|'.join(STABLECOINS)})(?![A-Za-z0-9])",
    re.IGNORECASE,
)


def stable_pair(stem: str) -> tuple[str, str] | None:
    """``("INJ", "USDT")`` of a name starting ``INJ-USDT``, ``1inch_usdt`` or ``1000PEPE/USDC``:
    an asset quoted in a dollar stablecoin (:data:`STABLECOINS`), listed in :data:`CRYPTO` or
    not, and no future's root or currency pair (:func:`coin`); a perpetual's ``-SWAP`` after
    it, and a generic word before it (``prices_USDT``), are the caller's to see. Else None."""
    m = _STABLE_PAIR.match(stem)
    if m is None or not coin(m.group(1)):
        return None
    return m.group(1).upper(), m.group(2).upper()


def pair_first(rest: str) -> bool:
    """Whether a name (after Alpha Vantage's ``fx_daily_``) starts with a pair: ``EURUSD``,
    ``EUR_USD``, ``BTC_USD``."""
    joined = re.match(r"^([A-Za-z]{3})([A-Za-z]{3})(?![A-Za-z])", rest)
    found = joined or PAIR.match(rest)
    return found is not None and is_pair(found.group(1).upper(), found.group(2).upper())


_END = r"(?![A-Za-z0-9])"
_KRAKEN = re.compile(rf"^X([A-Z]{{3}})([XZ])([A-Z]{{3}}){_END}")
"""Kraken's older pairs, two codes of four letters: ``X`` and a crypto asset, then ``Z`` and a
currency or ``X`` and a crypto asset (``XXBTZUSD``, ``XETHXXBT``)."""
_KRAKEN_ALT = re.compile(rf"^(XBT|XDG)[-_/.]?([A-Z]{{3,4}}){_END}", re.IGNORECASE)
"""Kraken's own codes of bitcoin and dogecoin, in its pairs' short names: ``XBTUSD``, ``XDGEUR``
(XBT: ISO 4217's ``X`` for a currency of no country)."""
_KRAKEN_MINUTES = re.compile(r"_(1|5|15|30|60|240|720|1440|10080|21600)(?=$|[-_. ])")
"""The minutes of Kraken's OHLCVT downloads, after the pair: ``XBTUSD_1440.csv`` (a unit written
after them, ``XBTUSD_1_Hour``, is the name's interval instead: ``guess_from_name``)."""
_DERIVATIVE = re.compile(r"[-_ .]?(PERP|PERPETUAL|SWAP)(?![A-Z])", re.IGNORECASE)
"""A perpetual's marker after the pair (``XBTUSD-PERP``): left to the perpetuals' rule."""


def kraken_pair(stem: str) -> tuple[str, timedelta | None] | None:
    """The short name of Kraken's pair (``XXBTZUSD`` -> ``XBTUSD``, as Kraken names it in its
    OHLCVT downloads: one symbol for both) and the minutes of such a download (``XBTUSD_60``:
    an hour; else None), or None."""
    if (old := _KRAKEN.match(stem)) is not None:
        base, side, quote = old.groups()
        crypto = CRYPTO | {"XDG"}  # XXDGZUSD: XDGUSD
        if base == quote or base not in crypto or quote not in (FIAT if side == "Z" else crypto):
            return None
        found = old
    elif (alt := _KRAKEN_ALT.match(stem)) is not None:
        base, quote = alt.group(1).upper(), alt.group(2).upper()
        if quote not in CRYPTO_QUOTES and quote not in FIAT:
            return None
        found = alt
    else:
        return None
    if _DERIVATIVE.match(stem, found.end()):
        return None
    minutes = _KRAKEN_MINUTES.match(stem, found.end())
    return base + quote, (timedelta(minutes=int(minutes.group(1))) if minutes else None)


_BITCOINCHARTS = re.compile(rf"^([a-z]{{3,}})([A-Z]{{3}}){_END}")
BITCOINCHARTS_EXCHANGES = frozenset(
    "bitstamp coinbase kraken bitflyer coincheck bitfinex btce mtgox itbit gemini okcoin "
    "localbtc bitbay zaif anxhk btcde cex hitbtc bitkonan btcn bitcurex justcoin rock lake "
    "bitx btcchina huobi quadriga cbx bit2c btcmarkets fybse fybsg mrcd vcx bitmarket "
    "bitcoincentral campbx icbit intrsng virtex wbx btcbox coinfloor korbit wex exmo "
    "coinsetter bitex paymium btcturk bitso independentreserve mercado foxbit getbtc btcoid "
    "coinsbank zyado".split()
)
"""bitcoincharts.com's exchanges (its market names are these in small letters, then the
currency): another word before a currency is no exchange (``ethUSD`` is ether, ``eurUSD`` the
euro, not bitcoin)."""


def bitcoincharts_market(stem: str) -> str | None:
    """Bitcoin in the currency of bitcoincharts' market name (``bitstampUSD``, ``krakenEUR``
    -> ``BTCUSD``, ``BTCEUR``), or None."""
    m = _BITCOINCHARTS.match(stem)
    if m is None or m.group(1) not in BITCOINCHARTS_EXCHANGES or m.group(2) not in FIAT:
        return None
    return f"BTC{m.group(2)}"


_SUFFIXED = re.compile(rf"^([A-Z][A-Z0-9]{{3,8}}?)([a-z]{{1,3}}|{'|'.join(BROKER_SUFFIXES)}){_END}")


def _quoted_like_fx(symbol: str) -> bool:
    """An FX pair or a CFD quoted like one (``EURUSD``, ``XAUUSD``, ``US30``)."""
    base, quote = symbol[:3], symbol[3:]
    fx = len(symbol) == 6 and base in FIAT and quote in FIAT and base != quote
    return fx or (symbol[:-3] in CFD_BASES and symbol[-3:] in FIAT) or symbol in INDEX_CFDS


def broker_pair(stem: str) -> str | None:
    """The pair before a MetaTrader broker's suffix (``EURUSDm``, ``EURUSDPRO``, ``BTCUSDm`` ->
    ``EURUSD``, ``EURUSD``, ``BTCUSD``), or None. A crypto pair sheds small letters only:
    ``BTCUSDC`` is bitcoin in USDC."""
    if (m := _SUFFIXED.match(stem)) is None:
        return None
    symbol, suffix = m.groups()
    if _quoted_like_fx(symbol):
        return symbol
    crypto = any(is_pair(symbol[:i], symbol[i:]) for i in range(2, len(symbol) - 2))
    return symbol if crypto and suffix.islower() else None
