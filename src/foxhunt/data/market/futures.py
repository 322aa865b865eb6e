"""The built-in futures table: liquid CME, CBOT, NYMEX, COMEX, CFE, Eurex and ICE roots.

Contract specifications as the exchanges publish them (tick size in price points, point value
in the contract's currency). ``typical_price`` only sets the demo generator's price level. Add
or override a root with the user's table (``--instruments FILE``, docs/data.md).
"""

from __future__ import annotations

from foxhunt.data.market.instrument import Instrument


def _group(
    asset_class: str, calendar: str, currency: str, rows: dict[str, tuple[float, float, float]]
) -> dict[str, Instrument]:
    return {
        root: Instrument(root, tick, point, currency, asset_class, calendar, 0.0, price)
        for root, (tick, point, price) in rows.items()
    }


FUTURES: dict[str, Instrument] = {
    # root: (tick size, point value, typical price)
    **_group(
        "equity_index",
        "cme_equity",
        "USD",
        {
            "ES": (0.25, 50.0, 4750.0),
            "MES": (0.25, 5.0, 4750.0),
            "NQ": (0.25, 20.0, 16800.0),
            "MNQ": (0.25, 2.0, 16800.0),
            "YM": (1.0, 5.0, 37700.0),
            "MYM": (1.0, 0.5, 37700.0),
            "RTY": (0.1, 50.0, 2030.0),
            "M2K": (0.1, 5.0, 2030.0),
            "EMD": (0.1, 100.0, 2800.0),
            "NKD": (5.0, 5.0, 38000.0),
        },
    ),
    **_group(
        "energy",
        "cme_energy",
        "USD",
        {
            "CL": (0.01, 1000.0, 72.0),
            "MCL": (0.01, 100.0, 72.0),
            "QM": (0.025, 500.0, 72.0),
            "BZ": (0.01, 1000.0, 77.0),
            "NG": (0.001, 10000.0, 2.5),
            "QG": (0.005, 2500.0, 2.5),
            "RB": (0.0001, 42000.0, 2.1),
            "HO": (0.0001, 42000.0, 2.6),
        },
    ),
    **_group(
        "metals",
        "cme_metals",
        "USD",
        {
            "GC": (0.1, 100.0, 2070.0),
            "MGC": (0.1, 10.0, 2070.0),
            "SI": (0.005, 5000.0, 23.5),
            "SIL": (0.005, 1000.0, 23.5),
            "HG": (0.0005, 25000.0, 3.9),
            "MHG": (0.0005, 2500.0, 3.9),
            "PL": (0.1, 50.0, 950.0),
            "PA": (0.5, 100.0, 1000.0),
        },
    ),
    **_group(
        "rates",
        "cme_rates",
        "USD",
        {
            "ZN": (1.0 / 64.0, 1000.0, 112.0),
            "ZB": (1.0 / 32.0, 1000.0, 122.0),
            "ZF": (1.0 / 128.0, 1000.0, 108.0),
            "ZT": (1.0 / 256.0, 2000.0, 102.5),
            "UB": (1.0 / 32.0, 1000.0, 130.0),
            "TN": (1.0 / 64.0, 1000.0, 115.0),
            "SR3": (0.0025, 2500.0, 95.0),
            "ZQ": (0.0025, 4167.0, 95.0),
        },
    ),
    **_group(
        "currency",
        "cme_fx",
        "USD",
        {
            "6E": (0.00005, 125000.0, 1.10),
            "6J": (0.0000005, 12500000.0, 0.0070),
            "6B": (0.0001, 62500.0, 1.27),
            "6A": (0.00005, 100000.0, 0.68),
            "6C": (0.00005, 100000.0, 0.75),
            "6S": (0.00005, 125000.0, 1.17),
            "6N": (0.00005, 100000.0, 0.61),
            "6M": (0.00001, 500000.0, 0.058),
            "M6E": (0.0001, 12500.0, 1.10),
            "M6A": (0.0001, 10000.0, 0.68),
            "M6B": (0.0001, 6250.0, 1.27),
        },
    ),
    **_group(
        "agriculture",
        "cme_grains",
        "USD",
        {
            "ZC": (0.25, 50.0, 470.0),
            "ZS": (0.25, 50.0, 1300.0),
            "ZW": (0.25, 50.0, 620.0),
            "KE": (0.25, 50.0, 640.0),
            "ZM": (0.1, 100.0, 380.0),
            "ZL": (0.01, 600.0, 50.0),
        },
    ),
    **_group(
        "agriculture",
        "cme_livestock",
        "USD",
        {"LE": (0.025, 400.0, 180.0), "HE": (0.025, 400.0, 80.0), "GF": (0.025, 500.0, 250.0)},
    ),
    **_group(
        "crypto_future",
        "cme_crypto",
        "USD",
        {
            "BTC": (5.0, 5.0, 60000.0),
            "MBT": (5.0, 0.1, 60000.0),
            "ETH": (0.5, 50.0, 3000.0),
            "MET": (0.5, 0.1, 3000.0),
        },
    ),
    # Cboe VIX futures trade 17:00-16:00 CT like Globex equity; the CME equity calendar is the
    # closest maintained one (the library's CFE calendar has regular hours only).
    **_group(
        "volatility",
        "cme_equity",
        "USD",
        {"VX": (0.05, 1000.0, 15.0), "VXM": (0.05, 100.0, 15.0)},
    ),
    **_group(
        "equity_index",
        "eurex",
        "EUR",
        {
            "FDAX": (0.5, 25.0, 18000.0),
            "FDXM": (1.0, 5.0, 18000.0),
            "FDXS": (1.0, 1.0, 18000.0),
            "FESX": (1.0, 10.0, 4800.0),
        },
    ),
    **_group(
        "rates",
        "eurex",
        "EUR",
        {
            "FGBL": (0.01, 1000.0, 132.0),
            "FGBM": (0.01, 1000.0, 117.0),
            "FGBS": (0.005, 1000.0, 106.0),
            "FGBX": (0.02, 1000.0, 120.0),
        },
    ),
    **_group("equity_index", "eurex", "CHF", {"FSMI": (1.0, 10.0, 11500.0)}),
    # ICE Futures Europe's Brent by ICE's (and TradingView's) BRN, Bloomberg's CO (CO1 Comdty) and
    # Interactive Brokers' COIL; ICE's own one-letter codes (B, G, T, Z ...) are US stocks.
    **_group(
        "energy",
        "ice_europe",
        "USD",
        {"BRN": (0.01, 1000.0, 80.0), "CO": (0.01, 1000.0, 80.0), "COIL": (0.01, 1000.0, 80.0)},
    ),
    # ICE US softs (prices in US cents per pound, cocoa in dollars per tonne): coffee, sugar,
    # cocoa and orange juice by day (03:30-14:00 New York between them), cotton from the evening
    # before; and the dollar index
    **_group(
        "agriculture",
        "ice_softs",
        "USD",
        {
            "KC": (0.05, 375.0, 200.0),
            "SB": (0.01, 1120.0, 20.0),
            "CC": (1.0, 10.0, 8000.0),
            "OJ": (0.05, 150.0, 300.0),
        },
    ),
    **_group("agriculture", "ice_us", "USD", {"CT": (0.01, 500.0, 75.0)}),
    **_group("currency", "ice_us", "USD", {"DX": (0.005, 1000.0, 104.0)}),
}
"""Root -> :class:`~foxhunt.data.market.instruments.Instrument` (``root`` equals the key)."""
