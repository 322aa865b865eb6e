"""A volume column that is the day's running total (IQFeed's ``TotalVolume``): refused naming
the column and the file's other columns; each bar's volume passes, ``PeriodVolume`` is read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from foxhunt.data.read.bars import read_bars
from foxhunt.data.read.options import ReadOptions
from foxhunt.data.read.running_volume import (
    MAX_FALLS,
    MIN_PAIRS,
    MIN_RISES,
    check_running_volume,
    running_symbol,
)
from foxhunt.errors import DataError


def _days(per_day: int, days: int, seed: int = 0) -> tuple[list[datetime], np.ndarray]:
    """Times of ``days`` sessions of ``per_day`` one-minute bars (an hour's halt between them)
    and each bar's volume."""
    rng = np.random.default_rng(seed)
    start = datetime(2024, 1, 2, 14, tzinfo=UTC)
    ts = [start + timedelta(days=d, minutes=m) for d in range(days) for m in range(per_day)]
    return ts, rng.integers(1, 500, per_day * days)


def _frame(ts: list[datetime], volume: np.ndarray, restart: bool = True) -> pl.DataFrame:
    """One symbol's bars; ``restart``: one more bar a day after the last, its total started
    again (a fall across a gap, no pair one interval apart)."""
    if restart:
        ts, volume = [*ts, ts[-1] + timedelta(days=1)], np.append(volume, 0.0)
    return pl.DataFrame(
        {"symbol": ["ES"] * len(ts), "ts": ts, "volume": volume.astype(float), "__file": 0}
    )


def test_each_bars_volume_passes_and_the_days_running_total_is_found() -> None:
    ts, each = _days(60, 4)
    assert running_symbol(_frame(ts, each, restart=False)) is None
    total = np.concatenate([np.cumsum(each[d * 60 : (d + 1) * 60]) for d in range(4)])
    assert running_symbol(_frame(ts, total, restart=False)) == ("ES", 0, 236)  # 4 x 59 pairs


def test_a_volume_that_never_falls_is_no_running_total() -> None:
    """Made-up volumes 1, 2, 3 ... rise on every pair and never start again."""
    ts = [datetime(2024, 1, 2, tzinfo=UTC) + timedelta(minutes=m) for m in range(500)]
    assert running_symbol(_frame(ts, np.arange(1.0, 501.0), restart=False)) is None
    assert running_symbol(_frame(ts, np.arange(1.0, 501.0))) == ("ES", 0, 499)


def test_the_bounds_of_the_rule() -> None:
    n = MIN_PAIRS + 1
    ts = [datetime(2024, 1, 2, tzinfo=UTC) + timedelta(minutes=m) for m in range(n)]
    rising = np.arange(n, dtype=float)
    assert running_symbol(_frame(ts, rising)) is not None
    assert running_symbol(_frame(ts[:-1], rising[:-1])) is None  # 99 pairs
    falls = int(MAX_FALLS * 1000) + 1
    ts = [datetime(2024, 1, 2, tzinfo=UTC) + timedelta(minutes=m) for m in range(1001)]
    some = np.arange(1001, dtype=float)
    some[2 : 2 + 2 * falls : 2] = 0.0  # each zero falls from the bar before it
    assert running_symbol(_frame(ts, some)) is None
    some = np.arange(1001, dtype=float)
    some[2 : 2 * falls : 2] = 0.0
    assert running_symbol(_frame(ts, some)) is not None
    flat = np.zeros(1001)
    flat[: int(MIN_RISES * 1000) - 1] = np.arange(int(MIN_RISES * 1000) - 1)
    assert running_symbol(_frame(ts, flat)) is None  # rises on under half the pairs


def test_pairs_across_a_halt_are_not_judged() -> None:
    """The total starts again after the halt: that fall is not counted, and neither is any."""
    ts, each = _days(120, 2, seed=1)
    total = np.concatenate([np.cumsum(each[:120]), np.cumsum(each[120:])])
    assert running_symbol(_frame(ts, total, restart=False)) == ("ES", 0, 238)


def test_the_message_names_the_column_and_the_other_volume(tmp_path: Path) -> None:
    ts, each = _days(200, 1)
    with pytest.raises(DataError) as e:
        check_running_volume(
            _frame(ts, np.cumsum(each)),
            [tmp_path / "x.csv"],
            [{"volume": "TotalVolume"}],
            [("NumberOfTrades", "PeriodVolume")],
            "__file",
        )
    msg = str(e.value)
    assert msg.startswith(f"{tmp_path / 'x.csv'}: symbol 'ES': column 'TotalVolume' falls on 0")
    assert msg.endswith("--columns volume=COLUMN names each bar's volume (the file also has "
                        "'PeriodVolume')")  # fmt: skip


def test_iqfeeds_period_volume_is_read_and_its_total_refused(tmp_path: Path) -> None:
    ts, each = _days(150, 2)
    total = np.concatenate([np.cumsum(each[:150]), np.cumsum(each[150:])])
    rows = "".join(
        f"{t:%Y-%m-%d %H:%M:%S}+00:00,4701,4699,4700,4700.5,{v},{p},3\n"
        for t, v, p in zip(ts, total, each, strict=True)
    )
    path = tmp_path / "BTCUSD.csv"
    path.write_text(
        "TimeStamp,High,Low,Open,Close,TotalVolume,PeriodVolume,NumberOfTrades\n" + rows
    )
    assert read_bars(path, min_bars=1)["volume"].to_list() == [float(v) for v in each]
    with pytest.raises(DataError, match="column 'TotalVolume' falls on 0 of 298 .*'PeriodVolume'"):
        read_bars(path, min_bars=1, options=ReadOptions(columns=("volume=TotalVolume",)))


def _minutes(n: int) -> list[datetime]:
    return [datetime(2024, 1, 2, tzinfo=UTC) + timedelta(minutes=m) for m in range(n)]


def test_a_total_that_stands_still_or_grows_by_fractions_is_still_a_total() -> None:
    """Minutes without a trade leave the total where it was (no fall); a crypto total grows by
    fractions of a coin."""
    still = np.cumsum([0.0 if m % 10 == 0 else 3.0 for m in range(300)])
    assert running_symbol(_frame(_minutes(300), still)) == ("ES", 0, 299)
    fractions = np.cumsum(np.full(300, 0.25))
    assert running_symbol(_frame(_minutes(300), fractions)) == ("ES", 0, 299)


def test_rising_on_exactly_half_the_pairs_is_enough() -> None:
    half = np.cumsum([1.0 if m % 2 else 0.0 for m in range(201)])  # 100 rises in 200 pairs
    assert running_symbol(_frame(_minutes(201), half)) == ("ES", 0, 200)
    less = np.cumsum([1.0 if m % 2 and m > 2 else 0.0 for m in range(201)])  # 99 rises
    assert running_symbol(_frame(_minutes(201), less)) is None


def test_the_message_word_for_word_its_first_file_and_the_first_of_two_symbols(
    tmp_path: Path,
) -> None:
    total = np.cumsum(np.arange(1.0, 151.0))
    two = pl.concat(
        [_frame(_minutes(150), total).with_columns(symbol=pl.lit(s)) for s in ("NQ", "ES")]
    ).with_columns(  # each symbol's first bar from file 1, the rest from file 0
        pl.when(pl.int_range(pl.len()).over("symbol") == 0).then(1).otherwise(0).alias("__file")
    )
    files = [tmp_path / "rest.csv", tmp_path / "first.csv"]
    cases = {
        (): "",
        ("Trades",): " (the file also has 'Trades')",
        ("Trades", "PeriodVol"): " (the file also has 'PeriodVol')",
        ("a", "b", "c", "d", "e"): " (the file also has 'a', 'b', 'c', 'd')",
    }
    for extra, hint in cases.items():
        with pytest.raises(DataError) as e:
            check_running_volume(two, files, [{}, {}], [(), extra], "__file")
        assert str(e.value) == (
            f"{tmp_path / 'first.csv'}: symbol 'NQ': column 'volume' falls on 0 of 149 "
            "consecutive bars and rises on most: the day's running total of the volume (IQFeed's "
            f"TotalVolume), not each bar's; --columns volume=COLUMN names each bar's volume{hint}"
        )
