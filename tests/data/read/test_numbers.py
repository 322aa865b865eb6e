"""Numbers as vendors write them (:mod:`foxhunt.data.read.numbers`), read through files."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.numbers import value_expr
from foxhunt.data.read.options import ReadOptions
from foxhunt.errors import DataError

_DAYS = ("12/31/2014", "12/30/2014", "12/29/2014", "12/26/2014", "12/24/2014", "12/23/2014")


def _marketwatch(path: Path, volumes: list[str]) -> Path:
    """MarketWatch's download: newest first, volumes quoted with thousands commas."""
    rows = [f'{d},53.87,54.02,52.44,53.27,"{v}"\n' for d, v in zip(_DAYS, volumes, strict=True)]
    path.write_text("Date,Open,High,Low,Close,Volume\n" + "".join(rows))
    return path


def test_a_volume_of_one_thousands_group_is_a_count(tmp_path: Path) -> None:
    """``"422,676"`` beside prices with a decimal point was refused naming --decimal comma, and
    --decimal comma then refused ``"1,013,407"``: no flag read the file."""
    volumes = ["422,676", "392,522", "1,013,407", "9,870", "512", "88,001"]
    bars = read_bars(_marketwatch(tmp_path / "CL.csv", volumes), min_bars=1)
    assert bars["volume"].to_list()[::-1] == [422676, 392522, 1013407, 9870, 512, 88001]


def test_decimal_point_reads_a_comma_as_thousands_in_prices(tmp_path: Path) -> None:
    path = tmp_path / "NQ.csv"
    path.write_text(
        "Date,Open,High,Low,Close\n"
        + "".join(f'{d},"4,234","4,250","4,201","4,240"\n' for d in _DAYS)
    )
    with pytest.raises(DataError, match=r"'4,234' \(a decimal comma or a comma between thousands"):
        read_bars(path, min_bars=1)
    bars = read_bars(path, min_bars=1, options=ReadOptions(decimal="point"))
    assert bars.row(0, named=True)["open"] == 4234.0


def test_decimal_point_names_no_decimal_comma_for_what_it_cannot_read(tmp_path: Path) -> None:
    path = tmp_path / "NQ.csv"
    path.write_text(
        "Date,Open,High,Low,Close\n" + "".join(f"{d},4234,4250,4201,4240\n" for d in _DAYS[1:])
    )
    with open(path, "a") as f:
        f.write(f'{_DAYS[0]},"42,34",4250,4201,4240\n')
    with pytest.raises(DataError, match=r"not a number '42,34'$"):
        read_bars(path, min_bars=1, options=ReadOptions(decimal="point"))


def test_a_volume_written_not_available_is_unreported(tmp_path: Path) -> None:
    """Bloomberg's ``#N/A N/A`` in the volume alone (a row of them is no bar): 0, as a blank or
    ``-`` volume is, with the warning (it was refused as not a number)."""
    volumes = ["422,676", "#N/A N/A", "1,013,407", "null", "512", "-"]
    bars = read_bars(_marketwatch(tmp_path / "CL.csv", volumes), min_bars=1)
    assert bars["volume"].to_list()[::-1] == [422676, 0, 1013407, 0, 512, 0]


def test_points_in_two_places_group_thousands_beside_decimal_points(tmp_path: Path) -> None:
    """A B3 export with prices ``37.50`` and share counts ``30.120.000``: until session 53 the
    count was refused as no number (read past before the counts were taken as the volume)."""
    path = tmp_path / "PETR4.csv"
    path.write_text(
        "Ativo;Data;Abertura;Máximo;Mínimo;Fechamento;Quantidade\n"
        "PETR4;03/01/2024;37.50;37.51;37.43;37.46;30.120.000\n"
        "PETR4;04/01/2024;37.46;37.57;37.42;37.53;1.667.000\n"
    )
    df = read_bars(path, min_bars=1)
    assert df.select("close", "volume").rows() == [(37.46, 30120000.0), (37.53, 1667000.0)]


_TEXTS = ["$2,052.50", "2 682,25", "1'234.5", "30.120.000", "53.64K", "12 34", "110,123", None, "-"]


@pytest.mark.parametrize(
    ("decimal_comma", "suffixes", "expected"),
    [
        (False, False, [2052.5, None, 1234.5, 30120000.0, None, None, None, None, None]),
        (False, True, [2052.5, None, 1234.5, 30120000.0, 53640.0, None, 110123.0, None, None]),
        (True, False, [None, 2682.25, 1234.5, 30120000.0, None, None, 110.123, None, None]),
    ],
)
def test_text_numbers_each_spelling_once_and_the_column_named_once(
    decimal_comma: bool, suffixes: bool, expected: list[float | None]
) -> None:
    """Each spelling read as before session 59, whose expression named the column 135 times
    (each step's input copied into its condition, its result and its fallback): 10 ms a
    column of five rows, 160-200 ms a file read as text."""
    expr = value_expr(Path("f.csv"), "x", pl.String, decimal_comma, suffixes)
    assert str(expr).count('col("x")') == 1
    got = pl.DataFrame({"x": _TEXTS}, schema={"x": pl.String}).select(expr)["x"].to_list()
    assert got == expected
