"""The user's instrument table: TOML and CSV, one-line errors naming file, row and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from foxhunt.data.market.instrument_table import load_instruments
from foxhunt.data.market.instruments import resolve
from foxhunt.errors import DataError

TOML = """
[ES]
tick_size = 0.25
point_value = 50
currency = "USD"
asset_class = "equity_index"
calendar = "cme_equity"

[GOOG]
tick_size = 0.01
point_value = 1
asset_class = "stock"
calendar = "xnys"
"""

CSV = "root,tick_size,point_value,currency,asset_class,calendar\nmyx,0.5,20,EUR,energy,eurex\n"


def test_toml_and_csv(tmp_path: Path) -> None:
    (tmp_path / "i.toml").write_text(TOML)
    table = load_instruments(tmp_path / "i.toml")
    assert set(table) == {"ES", "GOOG"} and table["GOOG"].currency == ""
    assert resolve("ESZ4", table).calendar == "cme_equity"
    (tmp_path / "i.csv").write_text(CSV)
    table = load_instruments(tmp_path / "i.csv")
    assert resolve("MYXZ4", table).point_value == 20.0  # keys are upper-cased, roots match


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("a.csv", CSV.replace("0.5,20", "abc,20"), r"a.csv: row 2, field 'tick_size': not a"),
        ("a.csv", CSV.replace(",energy,", ",,"), r"a.csv: row 2, field 'asset_class' is missing"),
        ("a.csv", CSV.replace("eurex", "moon"), r"a.csv: row 2, calendar 'moon' is unknown"),
        ("a.csv", CSV.replace("0.5,20", "-1,20"), r"a.csv: row 2, tick_size must be > 0"),
        ("a.csv", CSV + CSV.splitlines()[1] + "\n", r"a.csv: row 3, root 'MYX' appears twice"),
        ("a.csv", "x,tick_size\n", r"a.csv: the header needs a 'root' column"),
        ("a.toml", TOML.replace("tick_size = 0.01", "tick = 0.01"), r"\[GOOG\], unknown field"),
        ("a.toml", "[ES\n", r"a.toml: not valid TOML"),
        ("a.json", "{}", r"must be .toml or .csv"),
    ],
)
def test_errors_are_one_line(tmp_path: Path, name: str, text: str, message: str) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(DataError, match=message) as e:
        load_instruments(tmp_path / name)
    assert "\n" not in str(e.value)
