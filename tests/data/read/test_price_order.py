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
    assert price_order(names, [IQFEED] * 3) == ("timestamp", "high", "low", "open", "close")


def test_a_row_too_short_for_four_prices_is_left_out() -> None:
    rows = [[*IQFEED, "100"], ["2024-01-02 09:32:00", "4780.00"], *[[*IQFEED, "137"]] * 2]
    assert price_order(NAMES, rows)[1:5] == ("high", "low", "open", "close")


def test_the_field_after_the_prices_is_no_price() -> None:
    rows = [[*IQFEED, "ES"]] * 3  # a symbol after the prices: not read as one
    assert price_order(NAMES, rows)[1:5] == ("high", "low", "open", "close")


def test_a_price_that_is_no_number_keeps_the_usual_order() -> None:
    rows = [*[[*IQFEED, "100"]] * 3, ["2024-01-02 09:32:00", "n/a", "4779", "4780", "4779", "7"]]
    assert price_order(NAMES, rows) == NAMES  # read as usual, its row then refused by name


def test_two_orders_that_read_the_rows_as_other_bars_keep_the_usual_order() -> None:
    """``10, 11, 11, 10``: Coinbase's order reads open 11, close 10; Bitfinex's open 10, close
    11. No one order is told: read as usual, and refused naming the order read."""
    rows = [["1704153600", "10", "11", "11", "10", "5"]] * 3
    assert price_order(NAMES, rows) == NAMES


def test_iqfeeds_names_after_the_prices_are_for_its_order_only() -> None:
    coinbase = ["1704153600", "42000", "42300", "42100", "42200", "1.5", "7", "9"]
    names = (*NAMES[:5], "column_6", "column_7", "column_8")
    assert price_order(names, [coinbase] * 3) == (
        "timestamp", "low", "high", "open", "close", "column_6", "column_7", "column_8",
    )  # fmt: skip
    iqfeed = [*IQFEED, "100", "100", "9"]
    assert price_order(names, [iqfeed] * 3)[5:] == IQFEED_TAIL


def test_the_order_named_is_the_vendors_and_none_for_the_usual() -> None:
    assert vendor_order(NAMES) is None
    assert vendor_order(None) is None
    assert vendor_order(("t", "high", "low", "open", "close")) == (
        "high, low, open, close (IQFeed's)"
    )
    assert vendor_order(("t", "open", "close", "high", "low", "v")) == (
        "open, close, high, low (Bitfinex's)"
    )


def test_one_bad_bar_among_bars_that_do_not_tell_keeps_the_usual_order() -> None:
    """The review's ``ZZZ_1min.csv``: a bad first bar (low over the open), then bars whose open
    is their low, which Coinbase's order reads too: read as written, the bad bar refused by
    name (until the review its columns were swapped in every row)."""
    rows = [
        ["2024-01-02 09:30:00", "100.0", "101.0", "100.5", "100.8", "1000"],
        ["2024-01-02 09:31:00", "100.8", "101.2", "100.8", "101.0", "900"],
        ["2024-01-02 09:32:00", "101.0", "101.5", "101.0", "101.4", "800"],
        ["2024-01-02 09:33:00", "101.4", "101.6", "101.4", "101.5", "700"],
    ]
    assert price_order(NAMES, rows) == NAMES
    flat = ["2024-01-02 09:34:00", "7.0", "7.0", "7.0", "7.0", "0"]
    assert price_order(NAMES, [*[flat] * 60, [*IQFEED, "100"]]) == NAMES  # one row tells


def test_two_rows_only_the_vendors_order_reads_tell_it() -> None:
    """Rows it reads alike (flat, or opening at their low in Coinbase's order) tell nothing:
    two rows of the vendor's order among them are enough, one is not."""
    flat = ["2024-01-02 09:34:00", "7.0", "7.0", "7.0", "7.0", "0"]
    iqfeed = [*IQFEED, "100"]
    assert price_order(NAMES, [*[flat] * 60, *[iqfeed] * 2])[1:5] == (
        "high", "low", "open", "close",
    )  # fmt: skip
    # Coinbase's candles of a coin bouncing between two prices: half open at their low
    up = ["1709251200", "100.00", "100.01", "100.00", "100.01", "5"]
    down = ["1709251260", "100.00", "100.01", "100.01", "100.00", "5"]
    assert price_order(NAMES, [up, down] * 10)[1:5] == ("low", "high", "open", "close")
    assert price_order(NAMES, [*[up] * 10, down]) == NAMES  # one row tells: the usual order


def test_a_vendor_order_must_read_every_bars_close_under_its_high() -> None:
    """IQFeed's order reads ``100, 99, 99.5, 100.5`` as a close over its high: no bar, so no
    order reads every row."""
    rows = [*[[*IQFEED, "100"]] * 3, ["2024-01-02 09:36:00", "100", "99", "99.5", "100.5", "1"]]
    assert price_order(NAMES, rows) == NAMES
