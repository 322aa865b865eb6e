"""Instruments, planted bug of issue 28: ``futures_root`` matches a root only as the whole
leading token or with a contract code (month letter + 1-2 digit year), never as a prefix: a
stock ticker that starts with a futures root (ESPN, CLX, HEAR) is a stock, not ES / crude /
lean hogs with their point values and CME calendars."""

from __future__ import annotations

import pytest

from foxhunt.data.market.futures import FUTURES
from foxhunt.data.market.instrument import Instrument
from foxhunt.data.market.instruments import futures_root, lookup, resolve

# ticker -> the root it starts with (Disney's ESPN, Clorox, Turtle Beach, Genesco, Cleveland-
# Cliffs, Sirius XM, Ingevity, Mesa Air)
PREFIXED = {
    "ESPN": "ES",
    "CLX": "CL",
    "HEAR": "HE",
    "GCO": "GC",
    "CLF": "CL",
    "SIRI": "SI",
    "NGVT": "NG",
    "MESA": "MES",
}


@pytest.mark.parametrize("ticker", sorted(PREFIXED))
def test_a_ticker_that_starts_with_a_root_is_not_that_future(ticker: str) -> None:
    root = PREFIXED[ticker]
    assert root in FUTURES and ticker.startswith(root)  # the trap is real
    assert futures_root(ticker, FUTURES) is None
    assert futures_root(ticker.lower(), FUTURES) is None
    assert lookup(ticker) is None
    inst = resolve(ticker, warn=False)
    assert (inst.root, inst.asset_class, inst.calendar, inst.point_value) == (
        ticker,
        "stock",
        "xnys",
        1.0,
    )


def test_a_users_root_is_not_a_prefix_either() -> None:
    table = {"ES": Instrument("ES", 0.25, 50.0, "USD", "equity_index", "cme_equity")}
    assert futures_root("ESPN", table) is None
    assert resolve("ESPN", table, warn=False).asset_class == "stock"


@pytest.mark.parametrize(
    ("symbol", "root"),
    [
        ("ES", "ES"),
        ("ESZ4", "ES"),
        ("ESZ24", "ES"),
        ("ES.c.0", "ES"),
        ("CLX4", "CL"),
        ("HEJ24", "HE"),
    ],
)
def test_contracts_and_continuous_names_still_find_their_root(symbol: str, root: str) -> None:
    assert futures_root(symbol, FUTURES) == root
