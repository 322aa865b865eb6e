"""The instrument table's refusals word for word, and what a row may leave out: an empty
optional field takes its default, a TOML table may name its root, the root is kept as read."""

from __future__ import annotations

from pathlib import Path

import pytest

from foxhunt.data.market.instrument_table import load_instruments
from foxhunt.errors import DataError

HEADER = "root,tick_size,point_value,currency,asset_class,calendar,session_hours"


def _refused(path: Path) -> str:
    with pytest.raises(DataError) as refused:
        load_instruments(path)
    return str(refused.value)


def test_each_refusal_word_for_word(tmp_path: Path) -> None:
    missing = tmp_path / "none.csv"
    assert _refused(missing) == f"{missing}: instrument table not found"
    p = tmp_path / "t.csv"
    p.write_text(f"{HEADER}\n,0.25,50,USD,equity_index,cme_equity,\n")
    assert _refused(p) == f"{p}: row 2, field 'root' is empty"
    p.write_text(f"{HEADER}\nES,0.25,50,USD,equity_index,cme_equity,,extra\n")
    assert _refused(p) == f"{p}: row 2, more values than header fields"
    p.write_bytes(f"{HEADER}\nES,0.25,50,US\xff,equity_index,cme_equity,\n".encode("latin-1"))
    assert _refused(p).startswith(f"{p}: not UTF-8 text: 'utf-8' codec can't decode byte 0xff")
    t = tmp_path / "t.toml"
    t.write_text("ES = 5\n")
    assert _refused(t) == f"{t}: [ES] should be a table of fields, got 5"
    t.write_text('[ES]\ntick_size = 0.25\npoint_value = 50\nasset_class = "equity_index"\n'
                 'calendar = "cme_equity"\ntick = 1\n')  # fmt: skip
    assert _refused(t) == (
        f"{t}: [ES], unknown field 'tick' (fields: root, tick_size, point_value, asset_class, "
        "calendar, currency, session_hours, typical_price)"
    )


def test_an_empty_optional_field_takes_its_default(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text(f"{HEADER}\nes,0.25,50,,equity_index,cme_equity,\n")
    es = load_instruments(p)["ES"]
    assert (es.root, es.currency) == ("ES", "")
    assert es.session_hours == 0.0  # unset (not float("")): the calendar's hours apply
    assert es.hours == 23.0


def test_a_toml_table_may_name_its_root(tmp_path: Path) -> None:
    t = tmp_path / "t.toml"
    t.write_text('[mini]\nroot = "mes"\ntick_size = 0.25\npoint_value = 5\n'
                 'asset_class = "equity_index"\ncalendar = "cme_equity"\n')  # fmt: skip
    table = load_instruments(t)
    assert list(table) == ["MES"] and table["MES"].root == "MES" and table["MES"].point_value == 5
