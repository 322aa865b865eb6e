"""Instruments: resolution order, inference by symbol shape, tick size from data, round trip."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest

from foxhunt.data.market.calendars import CALENDARS
from foxhunt.data.market.futures import FUTURES
from foxhunt.data.market.instrument import ASSET_CLASSES, Instrument
from foxhunt.data.market.instruments import (
    infer_tick_size,
    instruments_from_dict,
    instruments_to_dict,
    resolve,
    resolve_all,
)
from foxhunt.errors import DataError


@pytest.mark.parametrize(
    ("symbol", "root", "asset_class", "calendar"),
    [
        ("ES", "ES", "equity_index", "cme_equity"),
        ("ESZ4", "ES", "equity_index", "cme_equity"),
        ("ESZ24", "ES", "equity_index", "cme_equity"),
        ("ES.c.0", "ES", "equity_index", "cme_equity"),
        ("6EH4", "6E", "currency", "cme_fx"),
        ("CLF25", "CL", "energy", "cme_energy"),
        ("BTC", "BTC", "crypto_future", "cme_crypto"),
        ("MBTZ4", "MBT", "crypto_future", "cme_crypto"),
        ("METH5", "MET", "crypto_future", "cme_crypto"),
        ("VXF5", "VX", "volatility", "cme_equity"),
        ("FDAXZ4", "FDAX", "equity_index", "eurex"),
        ("FGBL", "FGBL", "rates", "eurex"),
        ("BRN1!", "BRN", "energy", "ice_europe"),  # TradingView's ICEEUR:BRN1!
        ("CO1 Comdty", "CO", "energy", "ice_europe"),  # Bloomberg's Brent
        ("COIL", "COIL", "energy", "ice_europe"),  # Interactive Brokers'
        ("BRNZ24", "BRN", "energy", "ice_europe"),
        ("KCH24", "KC", "agriculture", "ice_softs"),
        ("SB", "SB", "agriculture", "ice_softs"),
        ("DX", "DX", "currency", "ice_us"),
        ("F.US.EPM18", "ES", "equity_index", "cme_equity"),  # CQG's names
        ("F.US.EP", "ES", "equity_index", "cme_equity"),
        ("F.US.ENQH4", "NQ", "equity_index", "cme_equity"),
        ("F.US.CLEZ24", "CL", "energy", "cme_energy"),
        ("F.US.TYAH5", "ZN", "rates", "cme_rates"),
        ("f.us.gce", "GC", "metals", "cme_metals"),
        ("F.US.ZNH5", "ZN", "rates", "cme_rates"),  # a root CQG spells as the exchange does
        ("F.US.QQQQ", "F.US.QQQQ", "unknown", "24x7"),  # no such root
        ("GBPUSD", "GBPUSD", "spot_fx", "fx_24x5"),
        ("GBP/USD", "GBP/USD", "spot_fx", "fx_24x5"),
        ("EUR_USD", "EUR_USD", "spot_fx", "fx_24x5"),
        ("USDJPY", "USDJPY", "spot_fx", "fx_24x5"),
        ("BTCUSD", "BTCUSD", "crypto", "24x7"),
        ("BTCUSDT", "BTCUSDT", "crypto", "24x7"),
        ("BTC-PERP", "BTC-PERP", "crypto", "24x7"),
        ("BTC-PERPETUAL", "BTC-PERPETUAL", "crypto", "24x7"),  # Deribit's, not CME's BTC
        ("ETH-PERPETUAL", "ETH-PERPETUAL", "crypto", "24x7"),
        ("ETH/USDC", "ETH/USDC", "crypto", "24x7"),
        ("AAPL", "AAPL", "stock", "xnys"),
        ("SPY", "SPY", "etf", "xnys"),
        ("SPX", "SPX", "cash_index", "xnys"),
    ],
)
def test_resolve(symbol: str, root: str, asset_class: str, calendar: str) -> None:
    inst = resolve(symbol, warn=False)
    assert (inst.root, inst.asset_class, inst.calendar) == (root, asset_class, calendar)


def test_spy_never_gets_a_futures_point_value() -> None:
    assert resolve("SPY", warn=False).point_value == 1.0
    assert resolve("USDJPY", warn=False).currency == "JPY"
    assert resolve("USDJPY", warn=False).tick_size == 0.001


def test_user_table_comes_first_and_unknown_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    table = {"ES": Instrument("ES", 0.5, 10.0, "USD", "equity_index", "globex")}
    assert resolve("ESZ4", table).tick_size == 0.5
    with caplog.at_level(logging.WARNING):
        inst = resolve("XYZ9", prices=np.array([10.0, 10.05, 10.1, 10.2]))
    assert inst.asset_class == "unknown" and inst.tick_size == pytest.approx(0.05)
    assert inst.calendar == "24x7" and inst.point_value == 1.0
    assert len(caplog.records) == 1
    assert "'XYZ9'" in caplog.text and "--instruments FILE" in caplog.text


@pytest.mark.parametrize(
    ("prices", "tick"),
    [
        ([1.23456, 1.2345700000000001, 1.2346, 1.23458], 1e-5),
        ([4750.0, 4750.25, 4751.0, 4749.75], 0.25),
        ([112.0, 112.0 + 1 / 64, 112.0 + 3 / 64], 1 / 64),
        ([0.00012, 0.00013, 0.00015], 1e-5),
        ([1e6, 1e6 + 0.5, 1e6 + 2.0], 0.5),
    ],
)
def test_infer_tick_size_is_robust_to_float_noise(prices: list[float], tick: float) -> None:
    assert infer_tick_size(np.array(prices)) == pytest.approx(tick, rel=1e-9)


def test_infer_tick_size_needs_two_levels() -> None:
    assert infer_tick_size(np.array([5.0, 5.0])) is None


def test_serialised_round_trip_and_builtin_table_is_valid() -> None:
    resolved = {s: resolve(s, warn=False) for s in ("ES", "GBPUSD", "BTC-PERP", "AAPL")}
    back = instruments_from_dict(instruments_to_dict(resolved))
    assert back == resolved
    for root, inst in FUTURES.items():
        assert inst.root == root and inst.calendar in CALENDARS
        assert inst.asset_class in ASSET_CLASSES and inst.typical_price > 0
        assert all(math.isfinite(v) for v in inst.static_values())


def test_bad_instrument_fields_raise() -> None:
    with pytest.raises(DataError, match="tick_size must be > 0"):
        Instrument("X", 0.0, 1.0, "USD", "stock", "xnys")
    with pytest.raises(DataError, match="calendar 'moon' is unknown"):
        Instrument("X", 0.01, 1.0, "USD", "stock", "moon")
    with pytest.raises(DataError, match="unknown asset_class 'bond'"):
        Instrument("X", 0.01, 1.0, "USD", "bond", "xnys")


def test_many_inferred_symbols_get_one_warning_per_class_and_calendar(
    caplog: pytest.LogCaptureFixture,
) -> None:
    few = {"F_AD": None, "F_AE": None, "ES": None}
    with caplog.at_level(logging.WARNING):
        resolve_all(few)
    assert caplog.text.count("is not in the instrument table") == 2  # ES is in it
    caplog.clear()
    many = {f"F_{a}{b}": None for a in "ABC" for b in "XY"} | {"ES": None}
    with caplog.at_level(logging.WARNING):
        out = resolve_all(many)
    assert set(out) == set(many)
    lines = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(lines) == 1
    assert lines[0].startswith("6 symbols are not in the instrument table (F_AX, F_AY, F_BX")
    assert "ES" not in lines[0] and "--instruments FILE" in lines[0]
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        resolve_all({**many, "EURUSD": None, "XAUUSD": None})  # a class of one: its own line
    lines = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(lines) == 3
    assert any(x.startswith("symbol 'XAUUSD' is not in the instrument table") for x in lines)
