"""``price_order``: a headerless file's four prices in the one vendor order its rows read as
bars in, told row by row (``data.read.price_order``; the files end to end are in
``test_unseen_vendors_2.py``)."""

from __future__ import annotations

from foxhunt.data.read.price_order import IQFEED_TAIL, price_order, vendor_order

NAMES = ("timestamp", "open", "high", "low", "close", "volume")
IQFEED = ["2024-01-02 09:31:00", "4780.00", "4779.25", "4780.00", "4779.25"]
"""High, low, open, close: as written, the 'high' (4779.25) is under the open."""


def test_rows_of_the_time_and_four_prices_alone_are_read_in_the_vendors_order() -> None:
    names = NAMES[:5]
    assert price_order(names, [IQFEED, IQFEED]) == ("timestamp", "high", "low", "open", "close")


def test_a_row_too_short_for_four_prices_is_left_out() -> None:
    rows = [[*IQFEED, "100"], ["2024-01-02 09:32:00", "4780.00"], [*IQFEED, "137"]]
    assert price_order(NAMES, rows)[1:5] == ("high", "low", "open", "close")


def test_the_field_after_the_prices_is_no_price() -> None:
    rows = [[*IQFEED, "ES"], [*IQFEED, "ES"]]  # a symbol after the prices: not read as one
    assert price_order(NAMES, rows)[1:5] == ("high", "low", "open", "close")


def test_a_price_that_is_no_number_keeps_the_usual_order() -> None:
    rows = [[*IQFEED, "100"], ["2024-01-02 09:32:00", "n/a", "4779", "4780", "4779", "7"]]
    assert price_order(NAMES, rows) == NAMES  # read as usual, its row then refused by name


def test_two_orders_that_read_the_rows_as_other_bars_keep_the_usual_order() -> None:
    """``10, 11, 11, 10``: Coinbase's order reads open 11, close 10; Bitfinex's open 10, close
    11. No one order is told: read as usual, and refused naming the order read."""
    rows = [["1704153600", "10", "11", "11", "10", "5"]] * 3
    assert price_order(NAMES, rows) == NAMES


def test_iqfeeds_names_after_the_prices_are_for_its_order_only() -> None:
    coinbase = ["1704153600", "42000", "42300", "42100", "42200", "1.5", "7", "9"]
    names = (*NAMES[:5], "column_6", "column_7", "column_8")
    assert price_order(names, [coinbase]) == (
        "timestamp", "low", "high", "open", "close", "column_6", "column_7", "column_8",
    )  # fmt: skip
    iqfeed = [*IQFEED, "100", "100", "9"]
    assert price_order(names, [iqfeed])[5:] == IQFEED_TAIL


def test_the_order_named_is_the_vendors_and_none_for_the_usual() -> None:
    assert vendor_order(NAMES) is None
    assert vendor_order(None) is None
    assert vendor_order(("t", "high", "low", "open", "close")) == (
        "high, low, open, close (IQFeed's)"
    )
    assert vendor_order(("t", "open", "close", "high", "low", "v")) == (
        "open, close, high, low (Bitfinex's)"
    )
