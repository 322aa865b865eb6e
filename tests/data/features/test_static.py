"""Contract table: symbol -> root mapping and static values."""

from __future__ import annotations

import math

import pytest

from foxhunt.data.features.static import (
    CONTRACTS,
    ContractSpec,
    contract_spec,
    contract_spec_of,
    static_values,
)
from foxhunt.data.market.instrument import ASSET_CLASSES, Instrument
from foxhunt.data.market.instruments import futures_root
from foxhunt.errors import DataError


@pytest.mark.parametrize(
    ("symbol", "root"),
    [
        ("ES", "ES"),
        ("ESH4", "ES"),
        ("ESZ24", "ES"),
        ("ES.c.0", "ES"),
        ("ES_FUT", "ES"),
        ("es", "ES"),
        ("MESZ4", "MES"),
        ("6EM4", "6E"),
        ("M2KU24", "M2K"),
        ("ZNH5", "ZN"),
        ("GC", "GC"),
        ("CLF25", "CL"),
    ],
)
def test_futures_root_of_symbols(symbol: str, root: str) -> None:
    assert futures_root(symbol, CONTRACTS) == root


def test_unknown_root_names_symbol() -> None:
    with pytest.raises(DataError, match="symbol 'QQQX'"):
        contract_spec_of("QQQX")


def test_static_values_and_override() -> None:
    tick, point, tick_value, cls, hours = static_values("ESH4")
    assert (10**tick, 10**point, cls, hours) == pytest.approx((0.25, 50.0, 0.0, 23.0))
    assert tick_value == pytest.approx(math.log10(12.5))
    table = {**CONTRACTS, "XX": ContractSpec(1.0, 1.0, 5, 20.0, 10.0)}
    assert static_values("XXZ4", table) == (0.0, 0.0, 0.0, 5.0, 20.0)


@pytest.mark.parametrize("symbol", ["SPY", "SPX", "QQQ", "GBPUSD", "XAUUSD", "BTCUSD", "AAPL"])
def test_no_silent_aliases_onto_futures(symbol: str) -> None:
    # Cash indices, ETFs, spot FX and crypto are not futures: no root, never ES's point value.
    with pytest.raises(DataError, match="unknown futures root"):
        contract_spec_of(symbol)


def test_a_contract_spec_is_the_instruments_numbers() -> None:
    inst = Instrument("ZZ", 0.5, 20.0, "USD", "metals", "cme_metals", 0.0, 1800.0)
    assert contract_spec(inst) == ContractSpec(
        0.5, 20.0, ASSET_CLASSES.index("metals"), inst.hours, 1800.0
    )
    assert inst.hours > 0 and ASSET_CLASSES.index("metals") == 2


def test_an_unknown_root_is_refused_with_the_way_out() -> None:
    with pytest.raises(DataError) as refused:
        contract_spec_of("QQQQ")
    assert str(refused.value) == (
        "symbol 'QQQQ': unknown futures root; pass --instruments FILE with this root "
        "(docs/data.md, Instruments)"
    )
