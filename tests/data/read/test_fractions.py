"""Prices in 32nds and 8ths of a point (bond and grain futures' quotes) read as their value;
Swiss-grouped thousands (``131'290`` = 131,290) stay thousands unless the whole column is 32nds
(:mod:`foxhunt.data.read.fractions`)."""

from __future__ import annotations

import logging
from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.fractions import fraction_value
from foxhunt.data.read.options import ReadOptions
from foxhunt.errors import DataError


def _daily(tmp_path: Path, name: str, quotes: list[tuple[str, str, str, str]]) -> Path:
    days = pl.date_range(pl.date(2024, 1, 1), pl.date(2024, 12, 31), "1d", eager=True)
    days = days.filter(days.dt.weekday() <= 5)
    rows = [f"{d},{o},{h},{lo},{c},100" for d, (o, h, lo, c) in zip(days, quotes, strict=False)]
    path = tmp_path / name
    path.write_text("Date,Open,High,Low,Close,Volume\n" + "\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("131'29", 131 + 29 / 32),
        ("131-29", 131 + 29 / 32),
        ("131'290", 131 + 29 / 32),
        ("131'295", 131 + 29.5 / 32),
        ("124'302", 124 + 30.25 / 32),
        ("124'307", 124 + 30.75 / 32),
        ("131-29+", 131 + 29.5 / 32),
        ("131'00", 131.0),
        ("706'2", 706.25),
        ("706'6", 706.75),
        ("425-2", 425.25),  # Barchart's grains: a dash before the 8ths
        ("425-8", None),
        ("131'32", None),  # a 32nd count of 32: no such price
        ("131'293", None),  # a third digit other than 0, 2, 5, 7
        ("706'8", None),  # no 8th of 8
        ("2'682.25", None),  # Swiss thousands, with decimals
        ("131.5", None),
        ("-131'29", None),
    ],
)
def test_the_value_of_a_price_in_32nds_or_8ths(text: str, value: float | None) -> None:
    got = pl.select(fraction_value(pl.lit(text))).item()
    assert got == value


def test_a_treasury_file_in_half_32nds_reads_as_its_value(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    quotes = [
        ("131'290", "132'045", "131'290", "132'045"),
        ("131'310", "131'310", "131'195", "131'200"),
    ]
    quotes += [("131'200", "131'215", "131'190", "131'205")] * 40
    path = _daily(tmp_path, "TY.csv", quotes)
    with caplog.at_level(logging.INFO):
        bars = read_bars(path)
    assert bars.row(0, named=True)["open"] == 131 + 29 / 32
    assert bars.row(0, named=True)["close"] == 132 + 4.5 / 32
    assert bars.row(1, named=True)["low"] == 131 + 19.5 / 32
    assert any("32nds or 8ths" in r.getMessage() for r in caplog.records)


def test_grains_in_8ths_and_notes_in_32nds_with_a_dash(tmp_path: Path) -> None:
    corn = _daily(tmp_path, "ZC.csv", [("706'2", "708'4", "705'0", "707'6")] * 30)
    assert read_bars(corn).row(0)[2:6] == (706.25, 708.5, 705.0, 707.75)
    note = _daily(tmp_path, "ZN.csv", [("110-16", "110-16+", "110-01", "110-10")] * 30)
    assert read_bars(note).row(0)[2:6] == (110.5, 110 + 16.5 / 32, 110 + 1 / 32, 110 + 10 / 32)


def test_barcharts_grains_with_a_dash_before_the_eighths(tmp_path: Path) -> None:
    """Barchart's daily corn: ``Last`` the close, ``425-2`` 425 cents and 2/8, the change
    written alike (``0-4``, not a price); refused as no number '425-2' until session 59."""
    path = tmp_path / "ZCH24_daily.csv"
    days = pl.date_range(pl.date(2024, 1, 2), pl.date(2024, 2, 29), "1d", eager=True)
    rows = [
        f"{d:%m/%d/%Y},425-2,426-0,425-0,425-6,0-4,+0.12%,153200,456000"
        for d in days.filter(days.dt.weekday() <= 5)
    ]
    header = 'Time,Open,High,Low,Last,Change,%Chg,Volume,"Open Int"\n'
    path.write_text(header + "\n".join(rows) + "\n")
    bars = read_bars(path)
    assert bars.row(0, named=True)["open"] == 425.25
    assert bars.row(0)[2:6] == (425.25, 426.0, 425.0, 425.75)


def test_swiss_thousands_stay_thousands_unless_every_price_is_in_32nds(tmp_path: Path) -> None:
    """An index of about 2,100 points in Swiss spelling whose opens all happen to pass as 32nds
    (``2'120``, ``2'125``) while its highs do not (``2'183``): the four columns are judged
    together, so all stay thousands (judged one by one, the opens read 2.375)."""
    quotes = [("2'120", "2'183", "2'100", "2'150"), ("2'125", "2'194", "2'110", "2'162")] * 20
    bars = read_bars(_daily(tmp_path, "SMI.csv", quotes))
    assert bars.row(0)[2:6] == (2120.0, 2180.0 + 3, 2100.0, 2150.0)
    assert bars.row(1)[2:6] == (2125.0, 2194.0, 2110.0, 2162.0)


def test_an_apostrophe_in_the_volume_says_the_prices_are_swiss_thousands(tmp_path: Path) -> None:
    """Every price passes as 32nds (an index ticking in 5 points between 2,100 and 2,319), but
    the volume is written ``12'345``: the apostrophes group thousands in this file."""
    quotes = [("2'120", "2'125", "2'100", "2'115"), ("2'115", "2'130", "2'105", "2'120")] * 20
    path = _daily(tmp_path, "SMI.csv", quotes)
    path.write_text(path.read_text().replace(",100\n", ",12'345\n"))
    bars = read_bars(path)
    assert bars.row(0)[2:7] == (2120.0, 2125.0, 2100.0, 2115.0, 12345.0)
    plain = _daily(tmp_path, "SMI2.csv", quotes)  # without that evidence: read as 32nds
    assert read_bars(plain).row(0)[2] == 2 + 12 / 32


def test_prices_only_in_the_form_swiss_thousands_share_warn_and_decimal_point_reads_thousands(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``101'200`` .. ``101'310`` on a tick of 10 (Lindt's shares, Swiss-grouped, a narrow
    range) pass as 32nds: read so, but with a warning naming ``--decimal point``, which reads
    them as thousands; the unambiguous forms (``110-16``) warn of nothing."""
    quotes = [("101'200", "101'310", "101'200", "101'250")] * 30
    path = _daily(tmp_path, "LISN.csv", quotes)
    with caplog.at_level(logging.WARNING):
        assert read_bars(path).row(0)[2] == 101 + 20 / 32
    warned = [r.getMessage() for r in caplog.records if "32nds" in r.getMessage()]
    assert warned == [
        f'{path}: prices such as 101.625 written "101\'200" read as 32nds of a point; if the '
        "apostrophes group thousands (Swiss), --decimal point reads them so"
    ]
    thousands = read_bars(path, options=ReadOptions(decimal="point"))
    assert thousands.row(0)[2:6] == (101200.0, 101310.0, 101200.0, 101250.0)
    caplog.clear()
    note = _daily(tmp_path, "ZN.csv", [("110-16", "110-16+", "110-01", "110-10")] * 30)
    with caplog.at_level(logging.WARNING):
        read_bars(note)
    assert not any("32nds" in r.getMessage() for r in caplog.records)


def test_a_column_in_fractions_only_in_part_is_read_as_numbers(tmp_path: Path) -> None:
    """``131.5`` beside ``131'29``: not a file in 32nds; the price that is no number is named."""
    quotes = [("131.5", "131.6", "131.4", "131.5"), ("131'29", "131.6", "131.4", "131.5")] * 20
    with pytest.raises(DataError, match=r"column 'Open', row 1 .*not a number \"131'29\""):
        read_bars(_daily(tmp_path, "TY.csv", quotes))


def test_the_swiss_lookalike_warning_reads_the_first_price_written(tmp_path: Path) -> None:
    """A blank first open failed the warning itself (a TypeError formatting None); the row is
    refused as the reader refuses any missing price."""
    quotes = [("", "101'310", "101'200", "101'250")] + [
        ("101'200", "101'310", "101'200", "101'250")
    ] * 30
    with pytest.raises(DataError, match=r"column 'Open', row 0 .*missing value"):
        read_bars(_daily(tmp_path, "LISN.csv", quotes))


def test_a_file_of_32nds_with_no_other_text_column(tmp_path: Path) -> None:
    """No volume and no other column: nothing says the apostrophes group thousands, so the
    prices are 32nds (make mutate, session 59: a flag taken as set without other columns
    read every such file as thousands or refused it)."""
    days = pl.date_range(pl.date(2024, 1, 2), pl.date(2024, 2, 29), "1d", eager=True)
    rows = [f"{d},110'16,110'20,110'08,110'12" for d in days.filter(days.dt.weekday() <= 5)]
    path = tmp_path / "ZN.csv"
    path.write_text("Date,Open,High,Low,Close\n" + "\n".join(rows) + "\n")
    assert read_bars(path).row(0)[2:6] == (110.5, 110.625, 110.25, 110.375)
