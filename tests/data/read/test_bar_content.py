"""Quirks inside ordinary bar CSVs (``timestamp,open,high,low,close,volume``): numbers as
vendors write them, rows repeated or out of order, a high below its low. Tiny files; values
and times asserted, not only that the read passes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.options import ReadOptions
from foxhunt.errors import DataError

HEADER = "timestamp,open,high,low,close,volume\n"
START = datetime(2024, 3, 4, 14, 30)


def _bars(n: int = 40) -> list[tuple[datetime, float, float, float, float, float]]:
    """One-minute bars of a ~1234 price, each high above and low below its open and close."""
    out = []
    for i in range(n):
        o, c = 1234.5 + 0.25 * (i % 7), 1234.75 + 0.25 * ((i * 3) % 5)
        out.append(
            (START + timedelta(minutes=i), o, max(o, c) + 0.5, min(o, c) - 0.5, c, 100.0 + i)
        )
    return out


def _csv(rows: list[tuple[datetime, float, float, float, float, float]], fmt: str = "{}") -> str:
    return HEADER + "".join(
        f"{t:%Y-%m-%d %H:%M:%S}," + ",".join(fmt.format(x) for x in (o, h, lo, c)) + f",{v:g}\n"
        for t, o, h, lo, c, v in rows
    )


def test_a_high_below_its_low_in_one_row_is_named_as_written_the_other_way(
    tmp_path: Path,
) -> None:
    """One bar's high and low swapped by the vendor: the refusal named only ``high <
    max(open, close)``; it now says the high is below the low, in this row only."""
    rows = _bars()
    t, o, h, lo, c, v = rows[17]
    rows[17] = (t, o, lo, h, c, v)
    path = tmp_path / "ES.csv"
    path.write_text(_csv(rows))
    with pytest.raises(DataError) as e:
        read_bars(path)
    assert str(e.value) == (
        f"{path}: column 'high', row 17 (2024-03-04 14:47:00+00:00): high {lo} < max(open, close) "
        f"{max(o, c)} (and below its low {h}: high and low written the other way round in this "
        "row?)"
    )


def test_two_rows_so_written_are_counted(tmp_path: Path) -> None:
    rows = _bars()
    for i in (3, 30):
        t, o, h, lo, c, v = rows[i]
        rows[i] = (t, o, lo, h, c, v)
    path = tmp_path / "ES.csv"
    path.write_text(_csv(rows))
    with pytest.raises(DataError, match=r"row 3 .*other way round in 2 rows of the file, this one"):
        read_bars(path)


def test_a_high_below_its_low_on_every_bar_names_the_columns_that_read_it(
    tmp_path: Path,
) -> None:
    """A header naming the high and low columns the wrong way round (``Date,Open,Low,High``):
    every bar's high is below its low. The refusal names the two columns and the ``--columns``
    that reads them, and that reading gives the bars as written."""
    rows = _bars()
    path = tmp_path / "ES.csv"
    path.write_text(
        "Date,Open,Low,High,Close,Volume\n"
        + "".join(f"{t:%Y-%m-%d %H:%M:%S},{o},{h},{lo},{c},{v:g}\n" for t, o, h, lo, c, v in rows)
    )
    with pytest.raises(DataError) as e:
        read_bars(path)
    assert str(e.value).endswith(
        f"(and below its low {rows[0][2]}, as the high is on every bar of the file: its columns "
        "read as high ('High') and low ('Low') hold each other's values; --columns "
        "high=Low,low=High reads them)"
    )
    got = read_bars(path, options=ReadOptions(columns=("high=Low", "low=High")))
    assert got["high"].to_list() == [r[2] for r in rows]
    assert got["low"].to_list() == [r[3] for r in rows]


def test_a_low_above_its_close_with_a_high_below_its_low_is_named_too(tmp_path: Path) -> None:
    """A flat bar (open = close = the true low) with high and low swapped passes the high's
    check and fails the low's: the same words there."""
    rows = _bars()
    t, _, h, lo, _, v = rows[5]
    rows[5] = (t, lo, lo, h, lo, v)
    path = tmp_path / "ES.csv"
    path.write_text(_csv(rows))
    with pytest.raises(DataError, match=r"row 5 .*: low [\d.]+ > min\(open, close\) [\d.]+ \(and "):
        read_bars(path)


def test_a_high_equal_to_the_close_is_no_swap(tmp_path: Path) -> None:
    """A high below max(open, close) but not below the low (a bad print, not a swap): the
    refusal adds nothing about swapped columns."""
    rows = _bars()
    t, o, _, lo, c, v = rows[9]
    rows[9] = (t, o, min(o, c), lo, max(o, c) + 0.25, v)
    path = tmp_path / "ES.csv"
    path.write_text(_csv(rows))
    with pytest.raises(DataError) as e:
        read_bars(path)
    assert "row 9" in str(e.value) and "other way round" not in str(e.value)
    assert "each other's values" not in str(e.value)


def test_numbers_in_scientific_notation_and_eight_decimals_read_as_written(
    tmp_path: Path,
) -> None:
    """Prices ``1.234500E+03``, a crypto pair's as Python writes them (``9.99e-05`` beside
    ``0.0001001`` in one column) and with eight decimals, volumes ``2.5e+11`` and ``0.00345``:
    read to the digit."""
    rows = _bars()
    sci = tmp_path / "ES.csv"
    sci.write_text(_csv(rows, "{:.6E}"))
    got = read_bars(sci)
    assert got["close"].to_list() == [r[4] for r in rows]
    small = tmp_path / "SHIBUSDT.csv"
    small.write_text(
        HEADER
        + "".join(
            f"{START + timedelta(minutes=i):%Y-%m-%d %H:%M:%S},{p!r},{p * 1.01!r},{p * 0.99!r},"
            f"{p!r},{'2.5e+11' if i % 2 else '0.00345'}\n"
            for i, p in enumerate(round(0.0000995 + k * 0.0000001, 10) for k in range(40))
        )
    )
    text = small.read_text()
    assert ",9.95e-05," in text and ",0.0001," in text and ",0.0001001," in text
    got = read_bars(small)
    assert got["open"].to_list()[:7] == [
        9.95e-05,
        9.96e-05,
        9.97e-05,
        9.98e-05,
        9.99e-05,
        0.0001,
        0.0001001,
    ]
    assert got["volume"].to_list()[:2] == [0.00345, 2.5e11]
    eight = tmp_path / "PEPEUSDT.csv"
    eight.write_text(
        _csv(
            [(t, o * 1e-8, h * 1e-8, lo * 1e-8, c * 1e-8, v) for t, o, h, lo, c, v in rows],
            "{:.8f}",
        )
    )
    assert ",0.00001234," in eight.read_text()  # 1234.5e-8 written with its 8 decimals
    assert read_bars(eight)["open"][0] == 0.00001234


def test_a_newest_first_file_with_a_repeated_header_and_currency_signs(tmp_path: Path) -> None:
    """Newest bar first, ``$`` before every price, the header again halfway (two exports
    joined), a repeated last bar and blank lines at the end: the bars as written, in time
    order, each once."""
    rows = _bars()
    lines = [f"{t:%Y-%m-%d %H:%M:%S},${o},${h},${lo},${c},{v:g}\n" for t, o, h, lo, c, v in rows][
        ::-1
    ]
    path = tmp_path / "ES.csv"
    path.write_text(
        HEADER + "".join(lines[:20]) + HEADER + "".join(lines[20:]) + lines[-1] + "\n\n"
    )
    got = read_bars(path)
    assert got["ts"].to_list() == [r[0].replace(tzinfo=UTC) for r in rows]
    assert got["close"].to_list() == [r[4] for r in rows]
    assert got["volume"].to_list() == [r[5] for r in rows]


def test_a_bar_written_again_as_it_updated_names_what_changed(tmp_path: Path) -> None:
    """A live export's last bar written twice, first as it stood, then final: refused as a
    duplicate as before, and the refusal now says which values changed and which row to keep
    (it said only "same time as row 39")."""
    rows = _bars()
    t, o, h, lo, c, v = rows[-1]
    rows.append((t, o, h + 0.25, lo, c + 0.25, v + 9))
    path = tmp_path / "ES.csv"
    path.write_text(_csv(rows))
    with pytest.raises(DataError) as e:
        read_bars(path)
    assert str(e.value).endswith(
        f"(same time as {path} row 39): high {h} then {h + 0.25}, close {c} then {c + 0.25}, "
        f"volume {v} then {v + 9} (the bar written again as it updated, a live export's last "
        "bar?): keep the later row"
    )


def test_a_duplicate_far_apart_in_the_file_gets_no_update_hint(tmp_path: Path) -> None:
    rows = _bars()
    t, o, h, lo, c, v = rows[3]
    rows.append((t, o, h, lo, c + 0.25, v))
    path = tmp_path / "ES.csv"
    path.write_text(_csv(rows))
    with pytest.raises(DataError, match=r"same time as .* row 3\)$"):
        read_bars(path)
