"""data/market/instruments.py, second pass of `make mutate instruments`: resolve_bars (which
symbols' prices are read, and from which columns), resolve_all's warnings at their thresholds
(``each``, 6 names shown), the exact warning line, a user table keyed by a full symbol, and the
pair/perpetual splits of the private helpers."""

from __future__ import annotations

import logging

import numpy as np
import polars as pl
import pytest

from foxhunt.data.market import bars_market, instruments
from foxhunt.data.market.bars_market import resolve_bars
from foxhunt.data.market.futures import FUTURES
from foxhunt.data.market.instrument import Instrument
from foxhunt.data.market.instruments import (
    _crypto,
    _head,
    _spot_fx,
    calendar_of,
    futures_root,
    infer_instrument,
    infer_tick_size,
    instruments_from_dict,
    lookup,
    resolve,
    resolve_all,
)
from foxhunt.errors import DataError

OHLC = ("open", "high", "low", "close")


def _bars(rows: dict[str, list[tuple[float, float, float, float]]]) -> pl.DataFrame:
    """A bars frame: symbol -> its (open, high, low, close) rows, symbols interleaved."""
    out: dict[str, list] = {"symbol": [], **{c: [] for c in OHLC}}
    longest = max(len(r) for r in rows.values())
    for i in range(longest):
        for sym, bars in rows.items():
            if i < len(bars):
                out["symbol"].append(sym)
                for c, v in zip(OHLC, bars[i], strict=True):
                    out[c].append(v)
    return pl.DataFrame(out)


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def _line(symbol: str, asset_class: str, tick: str, currency: str, calendar: str) -> str:
    return (
        f"symbol {symbol!r} is not in the instrument table: treated as {asset_class} (tick "
        f"{tick}, point value 1, currency {currency}, calendar {calendar}); pass --instruments "
        "FILE to set it"
    )


# Each symbol's tick shows only in its own rows: 0.5 (crypto), 0.05 (CFD), 0.2 (unknown); the
# others' rows have coarser steps.
MIXED = {
    "ES": [(4500.0, 4501.0, 4499.0, 4500.0), (4500.0, 4502.0, 4498.0, 4501.0)],
    "AAPL": [(190.0, 191.0, 189.0, 190.0), (190.0, 192.0, 188.0, 191.0)],
    "EURUSD": [(1.1, 1.2, 1.0, 1.1), (1.1, 1.3, 1.0, 1.2)],
    "BTCUSDT": [(100.0, 100.5, 99.5, 100.0), (100.0, 101.0, 99.0, 100.5)],
    "XAUUSD": [(2000.0, 2000.1, 1999.9, 2000.05), (2000.0, 2000.1, 1999.9, 2000.0)],
    "XYZ9": [(10.0, 10.4, 9.8, 10.2), (10.0, 10.4, 9.8, 10.0)],
}


def test_resolve_bars_infers_ticks_only_where_the_class_has_none() -> None:
    got = resolve_bars(_bars(MIXED))
    assert list(got) == sorted(MIXED)
    assert got["ES"] is FUTURES["ES"]
    assert got["AAPL"] == Instrument("AAPL", 0.01, 1.0, "USD", "stock", "xnys")
    assert got["EURUSD"] == Instrument("EURUSD", 1e-5, 1.0, "USD", "spot_fx", "fx_24x5")
    assert got["BTCUSDT"] == Instrument("BTCUSDT", 0.5, 1.0, "USD", "crypto", "24x7")
    assert got["XAUUSD"] == Instrument("XAUUSD", 0.05, 1.0, "USD", "metals", "fx_24x5")
    assert got["XYZ9"] == Instrument("XYZ9", 0.2, 1.0, "", "unknown", "24x7")


def test_resolve_bars_reads_prices_of_crypto_cfds_and_unknowns_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The docstring's promise: the data is read only for symbols that need a tick from it,
    and then the price columns of that symbol's rows only."""
    seen: list[dict] = []
    real = instruments.resolve_all

    def spy(prices_by_symbol, table=None, **kw):  # type: ignore[no-untyped-def]
        seen.append(dict(prices_by_symbol))
        return real(prices_by_symbol, table, **kw)

    monkeypatch.setattr(bars_market, "resolve_all", spy)
    table = {"XYZ9": Instrument("XYZ9", 0.25, 2.0, "EUR", "unknown", "24x7")}
    resolve_bars(_bars(MIXED), table)
    (prices,) = seen
    assert sorted(prices) == sorted(MIXED)
    read = {s for s, p in prices.items() if p is not None}
    assert read == {"BTCUSDT", "XAUUSD"}  # XYZ9 is in the user's table; ES, AAPL, EURUSD known
    for sym in read:  # row by row, open/high/low/close (the array's shape is no matter)
        want = np.array([v for row in MIXED[sym] for v in row])
        np.testing.assert_array_equal(np.ravel(prices[sym]), want)


def test_resolve_bars_uses_each_of_the_four_price_columns() -> None:
    """Four crypto symbols flat at 100 except one column each: dropping any column loses the
    only step of one symbol (its tick would fall back to 1e-8)."""
    rows = {}
    for sym, col in zip(("BTCUSD", "ETHUSD", "SOLUSD", "XRPUSD"), OHLC, strict=True):
        moved = tuple(100.5 if c == col else 100.0 for c in OHLC)
        rows[sym] = [(100.0, 100.0, 100.0, 100.0), moved]
    got = resolve_bars(_bars(rows))
    assert {s: i.tick_size for s, i in got.items()} == dict.fromkeys(rows, 0.5)


def test_resolve_bars_reads_whichever_price_columns_exist() -> None:
    bars = pl.DataFrame({"symbol": ["ETHUSD"] * 3 + ["XYZ9"] * 3, "close": [5.0, 5.25, 5.5] * 2})
    got = resolve_bars(bars)
    assert got["ETHUSD"].tick_size == 0.25 and got["XYZ9"].tick_size == 0.25


def test_resolve_bars_lets_a_user_table_override(caplog: pytest.LogCaptureFixture) -> None:
    mine = Instrument("ES", 0.5, 10.0, "USD", "equity_index", "cme_equity")
    idx = Instrument("XYZ9", 0.1, 5.0, "EUR", "cash_index", "eurex")
    with caplog.at_level(logging.WARNING):
        got = resolve_bars(_bars({s: MIXED[s] for s in ("ES", "XYZ9")}), {"ES": mine, "XYZ9": idx})
    assert got == {"ES": mine, "XYZ9": idx}
    assert _warnings(caplog) == []


def test_resolve_bars_warns_as_resolve_all_does(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        resolve_bars(_bars({s: MIXED[s] for s in ("ES", "BTCUSDT", "XYZ9")}))
    assert _warnings(caplog) == [
        _line("BTCUSDT", "crypto", "0.5", "USD", "24x7"),
        _line("XYZ9", "unknown", "0.2", "unknown", "24x7"),
    ]


def test_the_inferred_line_word_for_word(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        resolve("XYZ9", prices=np.array([10.0, 10.05, 10.1]))
        resolve("AAPL")
    assert _warnings(caplog) == [
        _line("XYZ9", "unknown", "0.05", "unknown", "24x7"),
        _line("AAPL", "stock", "0.01", "USD", "xnys"),
    ]


def _quantiacs(n: int) -> dict[str, None]:
    """Quantiacs codes of no US future (F_QA, F_QB, ...): all on fx_24x5."""
    return {f"F_Q{chr(ord('A') + i)}": None for i in range(n)}


def test_up_to_each_inferred_symbols_get_a_line_each(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        resolve_all({**_quantiacs(3), "ES": None})
    assert _warnings(caplog) == [
        _line(s, "unknown", "0.01", "USD", "fx_24x5") for s in ("F_QA", "F_QB", "F_QC")
    ]
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        resolve_all(_quantiacs(2), each=1)
    assert len(_warnings(caplog)) == 1


def _group(names: str, n: int) -> str:
    return (
        f"{n} symbols are not in the instrument table ({names}): treated as unknown, calendar "
        "fx_24x5, tick sizes inferred from their prices; pass --instruments FILE to set them"
    )


@pytest.mark.parametrize(
    ("n", "names"),
    [
        (4, "F_QA, F_QB, F_QC, F_QD"),  # one over the default each=3: grouped
        (6, "F_QA, F_QB, F_QC, F_QD, F_QE, F_QF"),  # six are all named
        (7, "F_QA, F_QB, F_QC, F_QD, F_QE, F_QF, ..."),
        (9, "F_QA, F_QB, F_QC, F_QD, F_QE, F_QF, ..."),
    ],
)
def test_more_than_each_get_one_line_per_group(
    caplog: pytest.LogCaptureFixture, n: int, names: str
) -> None:
    with caplog.at_level(logging.WARNING):
        out = resolve_all(_quantiacs(n))
    assert _warnings(caplog) == [_group(names, n)]
    assert out["F_QA"] == Instrument("F_QA", 0.01, 1.0, "USD", "unknown", "fx_24x5")


def test_a_group_of_one_gets_the_single_symbol_line(caplog: pytest.LogCaptureFixture) -> None:
    prices = {**_quantiacs(4), "BTCUSD": np.array([1.0, 1.5]), "EURUSD": None}
    with caplog.at_level(logging.WARNING):
        resolve_all(prices)
    assert _warnings(caplog) == [
        _line("BTCUSD", "crypto", "0.5", "USD", "24x7"),
        _line("EURUSD", "spot_fx", "1e-05", "USD", "fx_24x5"),
        _group("F_QA, F_QB, F_QC, F_QD", 4),
    ]


def test_resolve_all_takes_the_users_table_and_the_prices(
    caplog: pytest.LogCaptureFixture,
) -> None:
    mine = Instrument("XYZ9", 0.5, 20.0, "USD", "equity_index", "cme_equity")
    with caplog.at_level(logging.WARNING):
        out = resolve_all(
            {"XYZ9": np.array([1.0, 2.0]), "ABC1": np.array([10.0, 10.05])}, {"XYZ9": mine}
        )
    assert out == {"ABC1": Instrument("ABC1", 0.05, 1.0, "", "unknown", "24x7"), "XYZ9": mine}
    assert _warnings(caplog) == [_line("ABC1", "unknown", "0.05", "unknown", "24x7")]


def test_calendar_of_never_warns(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG):
        assert calendar_of("XYZ9") == "24x7"
        assert calendar_of("GBPUSD") == "fx_24x5"
        assert calendar_of("ESZ4") == "cme_equity"
    assert caplog.records == []


def test_a_user_row_keyed_by_a_full_symbol_is_found() -> None:
    """Keys that are no futures root (a dotted ticker, a slashed pair) match exactly,
    whatever the case and padding of the symbol."""
    brk = Instrument("BRK.B", 0.01, 1.0, "USD", "stock", "xnys")
    pair = Instrument("EUR/USD", 0.0001, 1.0, "USD", "spot_fx", "fx_24x5")
    table = {"BRK.B": brk, "EUR/USD": pair}
    assert lookup("brk.b", table) is brk
    assert lookup(" EUR/USD ", table) is pair
    assert resolve("eur/usd", table, warn=False) is pair


def test_a_row_that_is_no_instrument_names_its_key() -> None:
    with pytest.raises(DataError, match=r"^instrument 'ES': .*missing 5 required"):
        instruments_from_dict({"ES": {"root": "ES"}})
    with pytest.raises(DataError, match=r"^instrument 'NQ': .*unexpected keyword argument 'tick'"):
        instruments_from_dict({"NQ": {**vars(FUTURES["NQ"]), "tick": 0.25}})


def test_infer_instrument_maps_busd_to_usd() -> None:
    assert infer_instrument("ETHBUSD") == Instrument("ETHBUSD", 1e-8, 1.0, "USD", "crypto", "24x7")
    assert infer_instrument("eth/busd", 0.01).currency == "USD"


@pytest.mark.parametrize(
    ("symbol", "want"),
    [
        ("SOL-PERP", ("SOL", "USD")),
        ("ETHUSDC-PERP", ("ETH", "USDC")),
        ("ETH/USDC", ("ETH", "USDC")),
        ("xbt/btc/2024", ("XBT", "BTC")),
        ("BTCUSDT", ("BTC", "USDT")),
        ("DOGEFDUSD", ("DOGE", "FDUSD")),
        ("BTC-US-DT", ("BTC", "USDT")),  # separators inside the quote are ignored
        ("FOO/ETH", None),  # a quote alone does not make a pair
        ("BTC/XYZ", None),  # nor a base alone
        ("USD", None),
        ("", None),
    ],
)
def test_crypto_splits_base_and_quote(symbol: str, want: tuple[str, str] | None) -> None:
    assert _crypto(symbol) == want


@pytest.mark.parametrize(
    ("symbol", "want"),
    [
        ("GBP/USD", ("GBP", "USD")),
        ("eurusd", ("EUR", "USD")),
        ("EU/RUSD", ("EUR", "USD")),  # separators are ignored in the six-letter form
        ("EUR/BTC", None),
        ("EUR/USD/X", None),
        ("USD", None),
        ("", None),
    ],
)
def test_spot_fx_splits_base_and_quote(symbol: str, want: tuple[str, str] | None) -> None:
    assert _spot_fx(symbol) == want


@pytest.mark.parametrize("symbol", ["FOO/ETH", "BTC/XYZ", "EUR/BTC", "EUR/USD/X"])
def test_half_a_pair_is_unknown(symbol: str) -> None:
    assert infer_instrument(symbol) == Instrument(symbol, 0.01, 1.0, "", "unknown", "24x7")


def test_a_symbol_without_leading_letters_or_digits() -> None:
    assert _head("  es.c.0") == "ES"
    assert _head("-") == "" and _head("") == ""
    assert futures_root("-", FUTURES) is None
    assert resolve("-", warn=False) == Instrument("-", 0.01, 1.0, "", "unknown", "24x7")
    assert infer_instrument("^") == Instrument("", 0.01, 1.0, "", "cash_index", "24x7")


def test_infer_tick_size_rounds_to_ten_significant_digits() -> None:
    assert infer_tick_size([1.0, 1.5, 1.5000000003]) == 0.5


def test_infer_tick_size_takes_any_iterable() -> None:
    assert infer_tick_size(p for p in (1.0, 1.25, 2.0)) == 0.25
    assert infer_tick_size(pl.Series([1.0, None, 1.25])) == 0.25  # a null is skipped
    assert infer_tick_size([2.0, None, 2.5]) == 0.5
    assert infer_tick_size(np.array(1.5)) is None  # a single (0-d) price
