"""Investing.com's download names: ``US 500 Futures Historical Data.csv`` is ``ES``.

Its exports name the instrument in words, with no ticker (:mod:`foxhunt.data.read.vendors` reads
the name); the common futures' words map to their CME roots, any other is refused naming
``--symbol``.
"""

from __future__ import annotations

import re

HISTORICAL_DATA = re.compile(r"^(.+?)\s+historical data", re.IGNORECASE)
"""Investing.com's export name: ``US 500 Futures Historical Data.csv``."""
INVESTING_NAMES = {
    "us 500 futures": "ES",
    "nasdaq 100 futures": "NQ",
    "us tech 100 futures": "NQ",
    "us 30 futures": "YM",
    "us small cap 2000 futures": "RTY",
    "crude oil wti futures": "CL",
    "brent oil futures": "BZ",
    "natural gas futures": "NG",
    "gold futures": "GC",
    "silver futures": "SI",
    "copper futures": "HG",
    "us 10 year t-note futures": "ZN",
    "us 30 year t-bond futures": "ZB",
    "corn futures": "ZC",
    "us corn futures": "ZC",
    "us soybeans futures": "ZS",
    "us wheat futures": "ZW",
}
"""Investing.com's names of the common futures -> their CME roots (others need ``--symbol``)."""
