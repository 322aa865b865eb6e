"""The symbol-shape guesses of data/market/instruments.py, pinned where `make mutate
instruments` found them untested: every branch of infer_instrument with its exact fields, the
pair and perpetual spellings, and the tick inferred from prices."""

from __future__ import annotations

import math

import pytest

from foxhunt.data.market.instrument import Instrument
from foxhunt.data.market.instruments import infer_instrument, infer_tick_size


@pytest.mark.parametrize(
    ("symbol", "tick", "want"),
    [
        # spot FX: 5 decimals, 3 for a yen quote; the FX week
        ("eurusd", None, ("EURUSD", 1e-5, "USD", "spot_fx", "fx_24x5")),
        ("USD/JPY", None, ("USD/JPY", 0.001, "JPY", "spot_fx", "fx_24x5")),
        ("gbp_chf", 0.5, ("GBP_CHF", 1e-5, "CHF", "spot_fx", "fx_24x5")),  # the data's tick ignored
        # Quantiacs' continuous futures: contract values in USD, the data's tick or a cent
        # (a US future on the NYSE's days: until session 54 all on fx_24x5)
        ("F_ES", None, ("F_ES", 0.01, "USD", "unknown", "xnys")),
        ("F_GC", 0.1, ("F_GC", 0.1, "USD", "unknown", "xnys")),
        ("F_FB", None, ("F_FB", 0.01, "USD", "unknown", "fx_24x5")),
        # CFDs quoted like pairs
        ("XAUUSD", None, ("XAUUSD", 0.01, "USD", "metals", "fx_24x5")),
        ("bco-usd", 0.001, ("BCO-USD", 0.001, "USD", "energy", "fx_24x5")),
        ("SPXUSD", None, ("SPXUSD", 0.01, "USD", "cash_index", "fx_24x5")),
        ("GRXEUR", None, ("GRXEUR", 0.01, "EUR", "cash_index", "fx_24x5")),
        # crypto: stablecoin quotes count as USD; perpetuals; the data's tick or 1e-8
        ("BTCUSDT", None, ("BTCUSDT", 1e-8, "USD", "crypto", "24x7")),
        ("eth-eur", 0.01, ("ETH-EUR", 0.01, "EUR", "crypto", "24x7")),
        ("SOL-PERP", None, ("SOL-PERP", 1e-8, "USD", "crypto", "24x7")),
        ("ETHUSDC-PERP", None, ("ETHUSDC-PERP", 1e-8, "USD", "crypto", "24x7")),
        ("XBT/BTC", None, ("XBT/BTC", 1e-8, "BTC", "crypto", "24x7")),
        ("DOGEFDUSD", None, ("DOGEFDUSD", 1e-8, "USD", "crypto", "24x7")),
        # exchange-traded: ETFs and cash indices by name, short tickers as stocks
        ("spy", None, ("SPY", 0.01, "USD", "etf", "xnys")),
        ("QQQ.US", None, ("QQQ", 0.01, "USD", "etf", "xnys")),
        ("^GSPC", None, ("GSPC", 0.01, "", "cash_index", "xnys")),  # root '' before session 19
        # another market's index: unknown (the NYSE's until session 54), the data's tick
        ("^FOO", None, ("FOO", 0.01, "", "cash_index", "24x7")),
        ("^FOO", 0.5, ("FOO", 0.5, "", "cash_index", "24x7")),
        ("^IXIC", 0.5, ("IXIC", 0.01, "", "cash_index", "xnys")),
        ("^NSEBANK", None, ("NSEBANK", 0.01, "INR", "cash_index", "xnse")),
        # a stock with Yahoo's or Stooq's market after it: that exchange (session 54), the
        # data's tick or a cent; a market foxhunt has no calendar for stays unknown
        ("7203.T", None, ("7203.T", 0.01, "JPY", "stock", "xtks")),
        ("7203.jp", 0.5, ("7203.JP", 0.5, "JPY", "stock", "xtks")),
        ("VOD.L", None, ("VOD.L", 0.01, "GBP", "stock", "xlon")),
        ("0700.HK", None, ("0700.HK", 0.01, "HKD", "stock", "xhkg")),
        ("M&M.NS", None, ("M&M.NS", 0.01, "INR", "stock", "xnse")),
        ("RY.TO", None, ("RY.TO", 0.01, "CAD", "stock", "xtse")),
        ("MC.PA", None, ("MC.PA", 0.01, "EUR", "stock", "xpar")),  # unknown until session 55
        ("MC.XX", None, ("MC.XX", 0.01, "", "unknown", "24x7")),
        ("SAP.F", 0.5, ("SAP.F", 0.5, "", "unknown", "24x7")),
        ("QQQ.US", 0.5, ("QQQ", 0.01, "USD", "etf", "xnys")),  # the US listing's own tick
        ("VIX", None, ("VIX", 0.01, "", "cash_index", "xnys")),
        ("AAPL", 0.5, ("AAPL", 0.01, "USD", "stock", "xnys")),
        ("BRK.B", None, ("BRK.B", 0.01, "USD", "stock", "xnys")),
        # nothing matched
        ("SOMETHINGLONG", None, ("SOMETHINGLONG", 0.01, "", "unknown", "24x7")),
        ("X123", 0.25, ("X123", 0.25, "", "unknown", "24x7")),
        ("EUREUR", None, ("EUREUR", 0.01, "", "unknown", "24x7")),  # one currency twice
    ],
)
def test_infer_instrument_by_shape(
    symbol: str, tick: float | None, want: tuple[str, float, str, str, str]
) -> None:
    got = infer_instrument(symbol, tick)
    root, tick_size, currency, asset_class, calendar = want
    assert got == Instrument(root, tick_size, 1.0, currency, asset_class, calendar)


@pytest.mark.parametrize(
    ("prices", "tick"),
    [
        ([1.23456, 1.23457, 1.23459], 1e-5),
        ([1.2345600000000001, 1.23457], 1e-5),  # float noise
        ([4500.25, 4500.5, 4501.0, 4500.25], 0.25),
        ([100.0, 100.0], None),  # one level
        ([5.0], None),
        ([float("nan"), -1.0, 0.0, 3.0], None),  # only one finite positive price
        ([float("inf"), 2.0, 2.5], 0.5),
        ([0.000123, 0.000124], 1e-6),
    ],
)
def test_infer_tick_size(prices: list[float], tick: float | None) -> None:
    got = infer_tick_size(prices)
    if tick is None:
        assert got is None
    else:
        assert got is not None and math.isclose(got, tick, rel_tol=1e-9)


def test_a_cqg_root_it_does_not_rename_is_kept() -> None:
    """``make mutate`` (session 54): CQG's own names map to the exchange's (``EP`` -> ``ES``);
    any other root is kept as written, with its contract code."""
    from foxhunt.data.market.instruments import cqg_symbol

    assert cqg_symbol("F.US.EPH14") == "ESH14"
    assert cqg_symbol("F.US.ZNH24") == "ZNH24"
    assert cqg_symbol("F.US.ZN") == "ZN"


def test_a_cfd_base_of_five_letters_keeps_its_quote() -> None:
    """Oanda's WTICOUSD: the base is all but the last three letters, the quote the last three."""
    got = infer_instrument("WTICOUSD")
    assert (got.currency, got.asset_class, got.calendar) == ("USD", "energy", "fx_24x5")
