"""A bar's volume under a longer name is the volume (session 52's sweep: Cboe CFE's ``Total
Volume``, niftyindices.com's ``Shares Traded``, CME's ``Est. Volume`` ... were read past, the
volume 0 with a warning), before a tick count; IQFeed's running ``TotalVolume`` stays unread."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from foxhunt.data.read.bars import read_bars

DAYS = ("2024-01-08", "2024-01-09", "2024-01-10", "2024-01-11", "2024-01-12")
VOLUMES = (30000, 28000, 31000, 27500, 29000)


@pytest.mark.parametrize(
    "name",
    [
        "Total Volume",
        "Trade Volume",
        "Trading Volume",
        "Traded Volume",
        "Total Traded Volume",
        "Shares Traded",
        "Share Volume",
        "Est. Volume",
        "Estimated Volume",
        "Real Volume",
        "Base Volume",
    ],
)
def test_a_longer_name_of_the_volume_is_read(tmp_path: Path, name: str) -> None:
    text = f"Date,Open,High,Low,Close,{name},Tick Volume\n" + "".join(
        f"{d},14.1,14.5,13.9,14.2,{v},7\n" for d, v in zip(DAYS, VOLUMES, strict=True)
    )
    path = tmp_path / "VX.csv"
    path.write_text(text)
    assert read_bars(path, min_bars=1)["volume"].to_list() == [float(v) for v in VOLUMES]


def test_iqfeeds_running_total_volume_is_not_taken_for_total_volume(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """IQFeed's ``TotalVolume`` (no space) without its ``PeriodVolume``: the day's running
    total, not Cboe's ``Total Volume``; read past as before (volume 0, the columns named)."""
    rows = "".join(
        f"2024-01-03 15:{m:02d}:00,4780.25,4781,4779.5,4780,{1000 + 25 * m}\n" for m in range(40)
    )
    path = tmp_path / "ES.csv"
    path.write_text("TimeStamp,Open,High,Low,Close,TotalVolume\n" + rows)
    with caplog.at_level(logging.WARNING):
        bars = read_bars(path, min_bars=1)
    assert set(bars["volume"]) == {0.0}
    assert f"ignored columns in {path}: TotalVolume" in caplog.text


@pytest.mark.parametrize(
    ("header", "volume"),
    [  # until session 53: the euros read as the volume, or no volume at all
        ("Datum;Erster;Hoch;Tief;Schlusskurs;Stücke;Volumen", "3540000"),  # Börse Frankfurt
        ("Datum;Erster;Hoch;Tief;Schlusskurs;Stuecke;Volumen", "3540000"),  # ariva
        ("Datum;Eröffnung;Hoch;Tief;Schlusskurs;Umsatz in Stück;Umsatz in Euro", "3540000"),
        ("Data;Abertura;Máximo;Mínimo;Fechamento;Quantidade", "3540000"),  # B3 (Profit)
        ("Date;Open;High;Low;Close;Number of Shares;Number of Trades;Turnover", "3540000"),
    ],
)
def test_the_shares_traded_are_the_volume_not_their_value(
    tmp_path: Path, header: str, volume: str
) -> None:
    extra = ";486042000,00" if header.count(";") == 6 else ""
    extra = ";3540;486042000,00" if "Turnover" in header else extra
    rows = "".join(f"{d};137,32;137,36;137,29;137,30;{volume}{extra}\n" for d in DAYS)
    path = tmp_path / "SAP.csv"
    path.write_text(header + "\n" + rows, encoding="utf-8")
    assert read_bars(path, min_bars=1, allow_outliers=True)["volume"].to_list() == [3540000.0] * 5


@pytest.mark.parametrize("name", ["TickVolume", "tickVolume", "<TICKVOL>", "Tick Volume"])
def test_a_tick_volume_alone_is_the_volume(tmp_path: Path, name: str) -> None:
    """A broker's FX bars with their tick count and no other volume (``TickVolume``, as
    MetaTrader-based exports write it camel-cased): read past until session 57, volume 0."""
    text = f"Date,Open,High,Low,Close,{name},Spread\n" + "".join(
        f"{d},1.1,1.2,1.0,1.15,{v},0\n" for d, v in zip(DAYS, VOLUMES, strict=True)
    )
    path = tmp_path / "EURUSD.csv"
    path.write_text(text)
    assert read_bars(path, min_bars=1)["volume"].to_list() == [float(v) for v in VOLUMES]
