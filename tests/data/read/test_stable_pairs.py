"""Any crypto asset quoted in a dollar stablecoin (``INJ-USDT``, ``1INCH-USDT``, as OKX and
KuCoin name their files): the pair, on the 24x7 calendar. Until session 61 only the assets of
``CRYPTO``'s short list were read as pairs; another was the symbol ``INJ``, guessed a US stock
on the NYSE's calendar, and its weekend bars were refused as closed hours."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from foxhunt.data.market.instruments import infer_instrument
from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.pair_names import stable_pair
from foxhunt.data.read.vendors import guess_from_name


@pytest.mark.parametrize(
    ("name", "symbol", "interval"),
    [
        ("INJ-USDT.csv", "INJUSDT", None),
        ("okx_INJ-USDT_1m.csv", "INJUSDT", timedelta(minutes=1)),
        ("kucoin_1inch-usdt_5min.csv", "1INCHUSDT", timedelta(minutes=5)),
        ("1000PEPE_USDT.csv", "1000PEPEUSDT", None),
        ("WIF-USDC.csv", "WIFUSDC", None),
        ("RNDR-FDUSD-1h.csv", "RNDRFDUSD", timedelta(hours=1)),
        ("BTC-USDT.csv", "BTCUSDT", None),  # a listed asset: as before
        ("SEI-USDT-SWAP.csv", "SEI-USDT-SWAP", None),  # a perpetual keeps its name
    ],
)
def test_an_asset_before_a_stablecoin_is_the_pair(
    name: str, symbol: str, interval: timedelta | None
) -> None:
    guess = guess_from_name(Path(name))
    assert (guess.symbol, guess.interval) == (symbol, interval)


@pytest.mark.parametrize("stem", ["INJ-USD", "1000-USDT", "A-USDT", "AAPL", "INJUSDT", "INJ-USDTX"])
def test_no_stablecoin_after_a_separator_is_no_such_pair(stem: str) -> None:
    """``-USD`` could be a share class or a stock's currency; digits alone are no asset; a
    joined name is the pair already; ``USDTX`` is no stablecoin."""
    assert stable_pair(stem) is None


@pytest.mark.parametrize(
    "symbol", ["INJUSDT", "1INCHUSDT", "1000PEPEUSDC", "SEI-USDT-SWAP", "INJUSDT-PERP"]
)
def test_an_unlisted_asset_in_a_stablecoin_is_crypto_in_dollars(symbol: str) -> None:
    inst = infer_instrument(symbol)
    assert (inst.asset_class, inst.calendar, inst.currency) == ("crypto", "24x7", "USD")


@pytest.mark.parametrize("symbol", ["XYZ-PERP", "1000USDT"])
def test_no_asset_before_a_stablecoin_stays_unknown(symbol: str) -> None:
    assert infer_instrument(symbol).asset_class == "unknown"


def test_weekend_bars_of_an_unlisted_coin_read_as_a_24x7_market(tmp_path: Path) -> None:
    start = datetime(2024, 1, 6)  # a Saturday: closed hours for a stock
    lines = ["timestamp,open,high,low,close,volume"]
    for i in range(1500):
        p = 20 + 0.001 * i
        t = start + timedelta(minutes=i)
        lines.append(f"{t:%Y-%m-%d %H:%M:%S},{p:.3f},{p + 0.01:.3f},{p - 0.01:.3f},{p:.3f},10")
    path = tmp_path / "okx_INJ-USDT_1m.csv"
    path.write_text("\n".join(lines) + "\n")
    df = read_bars(path)
    assert df["symbol"].unique().to_list() == ["INJUSDT"]
    assert df.height == 1500


@pytest.mark.parametrize(
    ("name", "symbol"),
    [
        ("ES_USDT.csv", "ES"),  # a future's root before it: CME's, as before
        ("NQ-USDT.csv", "NQ"),
        ("EURUSD_usdc.csv", "EURUSD"),  # a currency pair before it
        ("data_usdt.csv", "USDT"),  # a generic word is no asset (as before session 61)
        ("kline_usdt.csv", "USDT"),
        ("1h-USDT.csv", "USDT"),  # an interval is no asset
    ],
)
def test_no_coin_before_the_stablecoin_is_no_pair(name: str, symbol: str) -> None:
    """Found by the review of session 61: these became ``ESUSDT`` and the like, crypto."""
    assert guess_from_name(Path(name)).symbol == symbol


@pytest.mark.parametrize("symbol", ["ES_USDT", "NQUSDT", "EURUSD_USDC", "EURUSDUSDC"])
def test_a_future_or_a_pair_before_a_stablecoin_is_no_crypto(symbol: str) -> None:
    assert infer_instrument(symbol).asset_class != "crypto"
