"""The built-in futures table: ``_group`` builds each root's instrument from its row, and the
table's published specifications (spot checks against the exchanges' contract specs)."""

from __future__ import annotations

import pytest

from foxhunt.data.market.futures import FUTURES, _group
from foxhunt.data.market.instrument import Instrument


def test_a_group_gives_each_root_its_row_and_the_groups_fields() -> None:
    got = _group(
        "energy", "cme_energy", "USD", {"CL": (0.01, 1000.0, 72.0), "NG": (0.001, 1e4, 2.5)}
    )
    assert got == {
        "CL": Instrument("CL", 0.01, 1000.0, "USD", "energy", "cme_energy", 0.0, 72.0),
        "NG": Instrument("NG", 0.001, 1e4, "USD", "energy", "cme_energy", 0.0, 2.5),
    }
    assert list(got) == ["CL", "NG"]
    assert _group("rates", "eurex", "EUR", {}) == {}


@pytest.mark.parametrize(
    ("root", "tick", "point", "currency", "asset_class", "calendar"),
    [
        ("ES", 0.25, 50.0, "USD", "equity_index", "cme_equity"),
        ("CL", 0.01, 1000.0, "USD", "energy", "cme_energy"),
        ("GC", 0.1, 100.0, "USD", "metals", "cme_metals"),
        ("ZN", 1 / 64, 1000.0, "USD", "rates", "cme_rates"),
        ("6E", 0.00005, 125000.0, "USD", "currency", "cme_fx"),
        ("ZC", 0.25, 50.0, "USD", "agriculture", "cme_grains"),
        ("HE", 0.025, 400.0, "USD", "agriculture", "cme_livestock"),
        ("BTC", 5.0, 5.0, "USD", "crypto_future", "cme_crypto"),
        ("VX", 0.05, 1000.0, "USD", "volatility", "cme_equity"),
        ("FDAX", 0.5, 25.0, "EUR", "equity_index", "eurex"),
        ("FGBL", 0.01, 1000.0, "EUR", "rates", "eurex"),
        ("FSMI", 1.0, 10.0, "CHF", "equity_index", "eurex"),
        ("BRN", 0.01, 1000.0, "USD", "energy", "ice_europe"),
        ("KC", 0.05, 375.0, "USD", "agriculture", "ice_softs"),
        ("SB", 0.01, 1120.0, "USD", "agriculture", "ice_softs"),
        ("CC", 1.0, 10.0, "USD", "agriculture", "ice_softs"),
        ("CT", 0.01, 500.0, "USD", "agriculture", "ice_us"),
        ("DX", 0.005, 1000.0, "USD", "currency", "ice_us"),
    ],
)
def test_published_specifications(
    root: str, tick: float, point: float, currency: str, asset_class: str, calendar: str
) -> None:
    spec = FUTURES[root]
    assert (spec.root, spec.tick_size, spec.point_value) == (root, tick, point)
    assert (spec.currency, spec.asset_class, spec.calendar) == (currency, asset_class, calendar)
    assert spec.session_hours == 0.0 and spec.typical_price > 0


def test_every_key_is_its_roots_name() -> None:
    assert (
        all(k == v.root for k, v in FUTURES.items()) and len(FUTURES) == 78
    )  # 78 roots in 16 groups
