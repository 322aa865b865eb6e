"""Bar files in UTF-16 (MetaTrader 5, Excel's "Unicode text") and Windows-1252 read as their
UTF-8 twins; a damaged byte is named by its row."""

from __future__ import annotations

import bz2
import codecs
import gzip
import zipfile
from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.csv_dialect import sniff_csv
from foxhunt.data.read.encoding import HEAD_BYTES, encoding_of, text_encoding, utf8_bytes
from foxhunt.data.read.options import ReadOptions
from foxhunt.errors import DataError

# MetaTrader 5's "Export bars": tab-separated, <...> names, dotted dates (UTF-16 as it comes)
MT5 = "<DATE>\t<TIME>\t<OPEN>\t<HIGH>\t<LOW>\t<CLOSE>\t<TICKVOL>\t<VOL>\t<SPREAD>\r\n" + "".join(
    f"2024.01.02\t14:{m:02d}:00\t1.1041{m % 10}\t1.10420\t1.10400\t1.10415\t55\t{m}\t2\r\n"
    for m in range(30)
)


@pytest.mark.parametrize(
    ("head", "encoding"),
    [
        (b"ts,close\n1,2\n", "utf-8"),
        (b"", "utf-8"),
        ("ts,Clôture\n".encode(), "utf-8"),
        ("ts,Cl\u00f4".encode()[:-1], "utf-8"),  # ends inside a character: not judged
        (b"a\x00b\x00", "utf-16-le"),  # four bytes are enough
        (b"\x00a\x00b", "utf-16-be"),
        (b"a\x00b\xe9", "utf-16-le"),  # half the odd bytes zero
        (b"\xe9a\x00b", "utf-16-be"),
        (b"a\x00b\x01c\x02", "utf-16-le"),  # one of three odd bytes: the half rounds down
        (b"\x00a\x01b\x02c", "utf-16-be"),
        (b"abcd", "utf-8"),  # no zero byte at all
        (b"\x01\x00a\x00", "utf-16-le"),  # a byte 1 is not a zero byte
        (b"\x00\x01\x00a", "utf-16-be"),
        ("ts,Cl\u00f4ture\n".encode("cp1252"), "cp1252"),
        (codecs.BOM_UTF16_LE + "ts,close\n".encode("utf-16-le"), "utf-16"),
        (codecs.BOM_UTF16_BE + "ts,close\n".encode("utf-16-be"), "utf-16"),
        ("ts,close\n".encode("utf-16-le"), "utf-16-le"),
        ("ts,close\n".encode("utf-16-be"), "utf-16-be"),
        (b"ts,\x00close\n", "utf-8"),  # one zero byte is no UTF-16
    ],
)
def test_encoding_of_the_first_bytes(head: bytes, encoding: str) -> None:
    assert encoding_of(head) == encoding


def _twins(tmp_path: Path, text: str, encoding: str, name: str = "EURUSD.csv") -> tuple[Path, Path]:
    plain = tmp_path / "utf8" / name
    other = tmp_path / encoding / name
    for p in (plain, other):
        p.parent.mkdir(parents=True, exist_ok=True)
    plain.write_bytes(text.encode())
    other.write_bytes(text.encode(encoding))
    return plain, other


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_a_utf16_metatrader_export_reads_as_its_utf8_twin(tmp_path: Path, encoding: str) -> None:
    plain, wide = _twins(tmp_path, MT5, encoding)
    assert text_encoding(wide) == ("utf-16" if encoding == "utf-16" else encoding)
    assert sniff_csv(wide) == sniff_csv(plain)
    a, b = read_bars(plain, tz="UTC", min_bars=1), read_bars(wide, tz="UTC", min_bars=1)
    assert b.height == 30
    assert b.equals(a)


def test_utf16_inside_a_zip_and_a_gzip(tmp_path: Path) -> None:
    plain, _ = _twins(tmp_path, MT5, "utf-16")
    archive = tmp_path / "EURUSD_M1.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("EURUSD.csv", MT5.encode("utf-16"))
    packed = tmp_path / "EURUSD.csv.gz"
    packed.write_bytes(gzip.compress(MT5.encode("utf-16")))
    expected = read_bars(plain, tz="UTC", min_bars=1)
    for p in (archive, packed):
        got = read_bars(p, tz="UTC", min_bars=1)
        assert got.drop("symbol").equals(expected.drop("symbol")), p


def test_a_windows_1252_column_named_with_columns(tmp_path: Path) -> None:
    """A French export: a Windows-1252 header the aliases do not know, named by --columns as
    the user sees it."""
    text = "Date;Ouverture;Haut;Bas;Cl\u00f4ture;Volume\n" + "".join(
        f"02/01/2024 09:{m:02d};4700,25;4701;4699,5;4700;{m + 1}\n" for m in range(5)
    )
    _, latin = _twins(tmp_path, text, "cp1252", "FCE.csv")
    columns = ("ts=Date", "open=Ouverture", "high=Haut", "low=Bas", "close=Cl\u00f4ture")
    bars = read_bars(
        latin,
        options=ReadOptions(tz="Europe/Paris", columns=columns, allow_odd_times=True),
        min_bars=1,
    )
    assert bars["close"].to_list() == [4700.0] * 5
    assert bars["open"].to_list() == [4700.25] * 5
    assert bars["symbol"].unique().to_list() == ["FCE"]


def test_a_damaged_byte_past_the_head_is_named_by_its_row(tmp_path: Path) -> None:
    rows = [
        f"2024-01-02T{h:02d}:{m:02d}:00Z,1.5,2,1,1.5,{h * 60 + m}"
        for h in range(24)
        for m in range(60)
    ]
    body = ("ts,open,high,low,close,volume\n" + "\n".join(rows) + "\n").encode()
    while len(body) < 2 * HEAD_BYTES:
        body += body[body.index(b"\n") + 1 :]  # more rows (times repeat: the error comes first)
    at = body.index(b"Z,1.5,", HEAD_BYTES) + 1  # the comma before an open
    row = body[:at].count(b"\n") - 1
    path = tmp_path / "ES.csv"
    path.write_bytes(body[: at + 1] + b"\xff" + body[at + 2 :])  # "1.5" -> "\xff.5"
    assert text_encoding(path) == "utf-8"
    with pytest.raises(DataError) as refused:
        read_bars(path, min_bars=1)
    assert str(refused.value).startswith(f"{path}: column 'open', row {row} (")
    assert "not a number '\ufffd.5'" in str(refused.value)


def test_utf8_bytes_replaces_what_the_encoding_lacks(tmp_path: Path) -> None:
    p = tmp_path / "x.csv"
    p.write_bytes(b"a\x81b")  # 0x81 is no Windows-1252 character
    assert utf8_bytes(p, "cp1252") == "a\ufffdb".encode()


def test_a_container_under_another_name_is_named_for_what_it_holds(tmp_path: Path) -> None:
    """A parquet, zip or bzip2 file named .csv was refused as 'a quote opens and does not
    close'; text named .parquet, .csv.gz or a gzip named .zip got the library's own words."""
    text = b"ts,open,high,low,close\n2024-01-02T09:30:00Z,1,2,0.5,1.5\n"
    frame = pl.DataFrame({"ts": ["2024-01-02T09:30:00Z"], "open": [1.0]})
    cases = {}
    frame.write_parquet(tmp_path / "a.csv")
    cases["a.csv"] = "a parquet file, though its name says a text table: name it .parquet"
    with zipfile.ZipFile(tmp_path / "b.csv", "w") as z:
        z.writestr("b.csv", text)
    cases["b.csv"] = "a zip archive (or an .xlsx workbook), though its name says a text table"
    (tmp_path / "c.csv").write_bytes(bz2.compress(text))
    cases["c.csv"] = "bzip2-compressed data, though its name says a text table: name it .csv.bz2"
    (tmp_path / "d.parquet").write_bytes(text)
    cases["d.parquet"] = "text (a CSV?), though its name says parquet: name it .csv"
    (tmp_path / "e.csv.gz").write_bytes(text)
    cases["e.csv.gz"] = "text (a CSV?), though its name says gzip-compressed data: name it .csv"
    (tmp_path / "f.zip").write_bytes(gzip.compress(text))
    cases["f.zip"] = "gzip-compressed data, though its name says a zip archive"
    (tmp_path / "g.xlsx").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600)
    cases["g.xlsx"] = "an Excel .xls workbook, though its name says .xlsx: name it .xls"
    for name, said in cases.items():
        with pytest.raises(DataError) as refused:
            read_bars(tmp_path / name, min_bars=1)
        assert str(refused.value).startswith(f"{tmp_path / name}: the file holds {said}"), name


_DAYS = ("2024/01/03", "2024/01/04", "2024/01/05")


@pytest.mark.parametrize(
    ("name", "codec", "header", "symbol"),
    [  # until session 53 read as Windows-1252: the names garbled, refused as missing 'open'
        ("SH#600519.txt", "gbk", "日期\t开盘\t最高\t最低\t收盘\t成交量", "600519.SH"),  # Tongdaxin
        ("7203_kabutan.csv", "cp932", "日付,始値,高値,安値,終値,出来高", "7203"),  # Shift-JIS
        ("005930.csv", "cp949", "일자,시가,고가,저가,종가,거래량", "005930"),  # KRX
    ],
)
def test_an_east_asian_code_page_is_told_by_its_column_names(
    tmp_path: Path, name: str, codec: str, header: str, symbol: str
) -> None:
    sep = "\t" if "\t" in header else ","
    rows = "".join(
        sep.join((d, "37.5", "37.51", "37.43", "37.46", "30120")) + "\r\n" for d in _DAYS
    )
    path = tmp_path / name
    path.write_bytes((header + "\r\n" + rows).encode(codec))
    assert text_encoding(path) == ("gb18030" if codec == "gbk" else codec)
    df = read_bars(path, min_bars=1)
    assert df["symbol"].to_list() == [symbol] * 3
    assert df.row(0)[2:] == (37.5, 37.51, 37.43, 37.46, 30120.0)


def test_latin_names_that_decode_as_east_asian_text_stay_windows_1252() -> None:
    """``Máximo`` in Windows-1252 decodes as GB18030 too (``M醲imo``): no East Asian name, so
    Windows-1252."""
    head = "Data;Abertura;Máximo;Mínimo;Fechamento\n03/01/2024;37,5;37,51;37,43;37,46\n"
    assert encoding_of(head.encode("cp1252")) == "cp1252"


def test_east_moneys_export_with_the_weekday_after_the_date(tmp_path: Path) -> None:
    """East Money's ``2024-01-03,三`` (GBK, tabs, the volume in lots as ``总手``): an
    unparsable timestamp until session 53."""
    header = "时间\t开盘\t最高\t最低\t收盘\t涨幅\t振幅\t总手\t金额\t换手%\t成交次数"
    rows = "".join(
        f"2024-01-0{d},{w}\t37.5\t37.51\t37.43\t37.46\t0.5%\t1.2%\t30120\t1128295200\t0.3%\t3012\n"
        for d, w in ((3, "三"), (4, "四"), (5, "五"))
    )
    path = tmp_path / "SZ000001.txt"
    path.write_bytes((header + "\n" + rows).encode("gbk"))
    df = read_bars(path, min_bars=1)
    assert [t.day for t in df["ts"]] == [3, 4, 5]
    assert df.row(0)[2:] == (37.5, 37.51, 37.43, 37.46, 30120.0)
