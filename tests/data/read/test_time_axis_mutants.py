"""The time-axis checks (data/read/time_axis.py) at the edges its mutation run left untested:
the exact line of every rule (file, symbol, the column as written, the share with its format,
the ``--tz`` flag of the best zone), the rules' boundaries (1980-01-01, now + 1 day, three bars,
20 h, a quarter of the bars), which file a symbol's line names, every symbol judged on its own
and in order, naive versus zoned timestamps, and the small helpers (zone flags, candidate
zones, interval names, the zone search's sample and its shares).

Frames are built inside the tests (never at import: mutmut's forked workers hang on it).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from foxhunt.data.read.bars import LoadedBars, read_bars
from foxhunt.data.read.clock_zones import ZoneFit, candidate_zones, flag_for_zone, zone_fits
from foxhunt.data.read.options import ReadOptions
from foxhunt.data.read.time_axis import EARLIEST, FUTURE_SLACK, TimeAxisFindings, examine
from foxhunt.data.read.zones import parse_zone
from foxhunt.errors import DataError

NOW = datetime(2024, 6, 3, 12, tzinfo=UTC)
HOUR = timedelta(hours=1)
ODD = "or --allow-odd-times"
MISREAD_1980 = (
    "is misread (dates taken as epoch seconds, or the wrong epoch unit); --ts-format "
    f"(yyyymmdd, epoch-ms, '%Y%m%d %H%M%S', ...) reads it right, {ODD}"
)
MISREAD_FUTURE = (
    "is misread (wrong epoch unit or date order) or holds a typo; --ts-format reads it right, "
    f"{ODD}"
)
CLOSED_WHY = (
    "timestamps in another zone (--tz) or a market with other hours (--instruments FILE sets "
    f"its calendar), {ODD}"
)


def _t(day: int, hour: int = 0, minute: int = 0, month: int = 1, year: int = 2024) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def _every(start: datetime, n: int, step: timedelta = HOUR) -> list[datetime]:
    return [start + i * step for i in range(n)]


def _fx_open_hours(shift: timedelta = timedelta(0)) -> list[datetime]:
    """Two weeks of hourly FX bars, every hour the market is open (January: Sunday 22:00 to
    Friday 22:00 UTC, 120 bars a week), shifted by ``shift``: a clock ``shift`` ahead of UTC
    read as UTC."""
    weeks = (_t(7, 22), _t(14, 22))  # Sundays
    return [s + i * HOUR + shift for s in weeks for i in range(120)]


def _examine(
    series: dict[str, list[datetime]],
    *,
    file_of: dict[str, list[int]] | None = None,
    files: int = 1,
    spellings: tuple[dict[str, str], ...] | None = None,
    now: datetime = NOW,
    **fields: object,
) -> TimeAxisFindings:
    """examine() on hand-built bars: ``series`` per symbol (UTC), ``file_of`` the files each
    symbol's rows came from (file 0 by default), files named a.csv, b.csv, ..."""
    file_of = file_of or {}
    rows = [(s, f, t) for s in series for f in file_of.get(s, [0]) for t in series[s] or [None]]
    frame = pl.DataFrame(
        {
            "symbol": [s for s, _, _ in rows],
            "__file": [f for _, f, _ in rows],
            "ts": [t for _, _, t in rows],
        },
        schema={"symbol": pl.String, "__file": pl.Int64, "ts": pl.Datetime("us", "UTC")},
    )
    names = tuple(Path(f"{chr(ord('a') + i)}.csv") for i in range(files))
    loaded = LoadedBars(
        frame=frame,
        files=names,
        spellings=spellings if spellings is not None else tuple({"ts": "Date"} for _ in names),
        **fields,  # type: ignore[arg-type]
    )
    bars = pl.DataFrame(
        {
            "symbol": [s for s in sorted(series) for _ in series[s]],
            "ts": [t for s in sorted(series) for t in sorted(series[s])],
        },
        schema={"symbol": pl.String, "ts": pl.Datetime("us", "UTC")},
    )
    return examine(loaded, bars, now=now)


# --- the small helpers ---------------------------------------------------------------------


def test_the_tz_flag_of_a_zone_drops_utc_from_fixed_offsets_only() -> None:
    zones = ["UTC+05:30", "UTC-05:00", "UTC+14:00", "UTC", "America/New_York", "Etc/GMT+5"]
    flags = [flag_for_zone(z) for z in zones]
    assert flags == ["+05:30", "-05:00", "+14:00", "UTC", "America/New_York", "Etc/GMT+5"]
    assert [parse_zone(f).name for f in flags] == zones  # each flag reads the zone it names


def test_candidate_zones_are_the_zone_read_in_the_cities_then_utc_minus_12_to_plus_14() -> None:
    cities = ("UTC", "America/Chicago", "America/New_York", "Europe/London", "Europe/Berlin")
    broker = "America/New_York+07:00"  # the FX brokers' server clock, before the offsets
    west = tuple(f"UTC-{h:02d}:00" for h in range(12, 0, -1))
    east = tuple(f"UTC+{h:02d}:00" for h in range(1, 15))
    assert candidate_zones("Etc/GMT+5") == (
        "Etc/GMT+5", *cities, "Asia/Tokyo", broker, *west, *east
    )  # fmt: skip
    assert len(candidate_zones("Etc/GMT+5")) == 1 + 6 + 1 + 26  # UTC once: a city and offset 0
    # a candidate read in comes first, once
    assert candidate_zones("UTC-05:00") == (
        "UTC-05:00",
        *cities,
        "Asia/Tokyo",
        broker,
        *(z for z in west if z != "UTC-05:00"),
        *east,
    )
    assert candidate_zones("America/New_York")[:4] == (
        "America/New_York",
        "UTC",
        "America/Chicago",
        "Europe/London",
    )


def test_zone_fits_counts_every_bar_and_keeps_the_zone_read_in_on_a_tie() -> None:
    """Monday, Saturday noon, Tuesday on FX, read as UTC: 1 bar of 3 closed. No zone of
    UTC-12..+14 moves Saturday noon into the week (UTC+14 gives Friday 22:00 UTC, the close),
    so none does better (the far east ones worse: Monday 10:00 there is Sunday in UTC) and the
    zone read in stays the best; every bar counts (a sample of every other bar would see 0)."""
    ts = pl.Series("ts", [_t(8, 10), _t(13, 12), _t(16, 10)], dtype=pl.Datetime("us", "UTC"))
    assert zone_fits(ts, "UTC", "fx_24x5") == ZoneFit("UTC", 1 / 3, "UTC", 1 / 3)


def test_zone_fits_of_bars_all_in_open_hours_are_zero() -> None:
    ts = pl.Series("ts", _every(_t(8, 10), 5), dtype=pl.Datetime("us", "UTC"))
    assert zone_fits(ts, "UTC", "fx_24x5") == ZoneFit("UTC", 0.0, "UTC", 0.0)


def test_zones_where_no_wall_clock_time_exists_are_never_the_best_fit() -> None:
    """Sunday 02:00-02:40 on 2024-03-10, the hour New York and Chicago skip: no share there
    (every time is null), which must not count as 0 % closed; every other zone puts all three
    bars on the NYSE's Sunday."""
    ts = pl.Series("ts", [_t(10, 2, m, month=3) for m in (0, 20, 40)])
    fit = zone_fits(ts, "UTC", "xnys")
    assert fit == ZoneFit("UTC", 1.0, "UTC", 1.0) and not fit.clearly_better


def test_the_zone_search_looks_at_20000_evenly_spaced_bars() -> None:
    """40,000 bars, every other one on a Saturday: the search takes every second bar (the
    Monday ones), so it sees none closed."""
    mon, sat = _t(8, 10), _t(13, 10)
    sec = timedelta(seconds=1)
    ts = pl.Series("ts", [t for i in range(20_000) for t in (mon + i * sec, sat + i * sec)]).cast(
        pl.Datetime("us", "UTC")
    )
    assert ts.len() == 40_000
    assert zone_fits(ts, "UTC", "fx_24x5") == ZoneFit("UTC", 0.0, "UTC", 0.0)


# --- the years rule ------------------------------------------------------------------------


def test_a_bar_before_1980_names_the_file_symbol_time_and_column_as_written() -> None:
    found = _examine({"AAPL": _every(datetime(1970, 1, 1, tzinfo=UTC), 5, timedelta(seconds=1))})
    assert found == TimeAxisFindings(
        (
            "a.csv: symbol 'AAPL': first bar 1970-01-01 00:00:00+00:00 is before 1980: column "
            f"'Date' {MISREAD_1980}",
        )
    )


def test_bars_from_1980_01_01_are_not_before_1980() -> None:
    days = _every(EARLIEST, 10, timedelta(days=1))  # daily: days before 1985 are not judged
    assert _examine({"AAPL": days}) == TimeAxisFindings()
    early = [EARLIEST - timedelta(seconds=1), *days[1:]]
    (line,) = _examine({"AAPL": early}).problems
    assert line.startswith("a.csv: symbol 'AAPL': first bar 1979-12-31 23:59:59+00:00 is before")


def test_the_column_is_called_ts_when_the_spellings_lack_it() -> None:
    old = _every(datetime(1970, 1, 1, tzinfo=UTC), 3, timedelta(seconds=1))
    future = _every(NOW + timedelta(days=400), 3)
    found = _examine({"AAPL": old, "MSFT": future}, spellings=({},))
    assert found.problems == (
        "a.csv: symbol 'AAPL': first bar 1970-01-01 00:00:00+00:00 is before 1980: column 'ts' "
        f"{MISREAD_1980}",
        "a.csv: symbol 'MSFT': last bar 2025-07-08 14:00:00+00:00 is after tomorrow: column "
        f"'ts' {MISREAD_FUTURE}",
    )


def test_bars_up_to_now_plus_one_day_are_not_after_tomorrow() -> None:
    """24x7 hourly bars (no closed hours) ending at now, and at exactly now + 1 day: fine; one
    second later: refused."""
    upto_now = _every(NOW - 9 * HOUR, 10)
    assert _examine({"BTCUSD": upto_now}) == TimeAxisFindings()
    edge = _every(NOW + FUTURE_SLACK - 9 * HOUR, 10)
    assert _examine({"BTCUSD": edge}) == TimeAxisFindings()
    late = [*edge[:-1], edge[-1] + timedelta(seconds=1)]
    assert _examine({"BTCUSD": late}).problems == (
        "a.csv: symbol 'BTCUSD': last bar 2024-06-04 12:00:01+00:00 is after tomorrow: column "
        f"'Date' {MISREAD_FUTURE}",
    )


# --- the interval rule ---------------------------------------------------------------------


def test_three_bars_are_enough_for_the_interval_rule_two_are_not() -> None:
    """Daily bars in a file whose name claims minutes: one bar per trading day."""
    days = _every(_t(8), 3, timedelta(days=1))
    found = _examine({"AAPL": days}, claims=(timedelta(minutes=1),))
    assert found.problems == (
        "a.csv: symbol 'AAPL': bars are 1d apart (one bar per trading day where the name's bars "
        "would give hundreds) but the file name says 1min: the timestamps are misread "
        "(--ts-format) or the file is not what its name says (--allow-odd-times)",
    )
    assert _examine({"AAPL": days[:2]}, claims=(timedelta(minutes=1),)) == TimeAxisFindings()


def test_bars_20_hours_apart_are_daily_and_a_claim_of_20_hours_is_not_intraday() -> None:
    twenty = timedelta(hours=20)
    found = _examine({"AAPL": _every(_t(8, 12), 4, twenty)}, claims=(timedelta(hours=1),))
    assert found.problems == (
        "a.csv: symbol 'AAPL': bars are 20h apart (one bar per trading day where the name's "
        "bars would give hundreds) but the file name says 1h: the timestamps are misread "
        "(--ts-format) or the file is not what its name says (--allow-odd-times)",
    )
    found = _examine({"AAPL": _every(_t(8), 4, timedelta(days=1))}, claims=(twenty,))
    assert found.problems == (
        "a.csv: symbol 'AAPL': bars are 1d apart but the file name says 20h: the timestamps are "
        "misread (--ts-format) or the file is not what its name says (--allow-odd-times)",
    )


def test_bars_20_hours_apart_are_judged_by_their_trading_days_not_their_clock() -> None:
    """Monday 12:00 UTC to Friday 16:00 UTC, 20 h apart: six New York weekdays (valid), though
    four of the six bars are outside the NYSE's hours."""
    bars = _every(_t(8, 12), 6, timedelta(hours=20))
    assert bars[-1] == _t(12, 16)
    assert _examine({"AAPL": bars}) == TimeAxisFindings()


# --- several symbols and files -------------------------------------------------------------


def test_every_symbol_is_judged_on_its_own_in_symbol_order() -> None:
    """One symbol per rule; a problem (or a daily or short symbol) ends only that symbol's
    checks, and the lines come in the bars' symbol order."""
    series = {
        "AAA": _every(datetime(1970, 1, 1, tzinfo=UTC), 3, timedelta(seconds=1)),  # years
        "BBB": _every(NOW + timedelta(days=400), 3),  # years: after tomorrow
        "CCC": _every(_t(8, 15), 2),  # two bars: not judged
        "DDD": _every(_t(8, 15), 5, timedelta(minutes=5)),  # claims 1 min
        "EEE": _every(_t(8), 5, timedelta(days=1)),  # daily, Monday to Friday: fine
        "FFF": _every(_t(8), 24),  # a Monday (UTC) on the NYSE: 6 of 24 open
        "GGG": _every(datetime(1975, 1, 1, tzinfo=UTC), 3, timedelta(seconds=1)),
    }
    file_of = {s: [i] for i, s in enumerate(series)}
    claims = (None, None, None, timedelta(minutes=1), None, None, None)
    found = _examine(series, file_of=file_of, files=7, claims=claims, naive=(False,) * 7)
    assert found.problems == (
        "a.csv: symbol 'AAA': first bar 1970-01-01 00:00:00+00:00 is before 1980: column 'Date' "
        f"{MISREAD_1980}",
        "b.csv: symbol 'BBB': last bar 2025-07-08 14:00:00+00:00 is after tomorrow: column "
        f"'Date' {MISREAD_FUTURE}",
        "d.csv: symbol 'DDD': bars are 5min apart but the file name says 1min: the timestamps "
        "are misread (--ts-format) or the file is not what its name says (--allow-odd-times)",
        f"f.csv: symbol 'FFF': 75% of the bars fall in the closed hours of calendar xnys: "
        f"{CLOSED_WHY} (the market of 'FFF' is a guess, stock on calendar xnys: if it trades "
        "elsewhere, --instruments FILE names its calendar and the clock may be right)",
        "g.csv: symbol 'GGG': first bar 1975-01-01 00:00:00+00:00 is before 1980: column 'Date' "
        f"{MISREAD_1980}",
    )


def test_lines_come_in_symbol_order_however_many_symbols() -> None:
    symbols = [f"{c}{c}X" for c in "ABCDEFGHIJKL"]
    old = _every(datetime(1970, 1, 1, tzinfo=UTC), 3, timedelta(seconds=1))
    found = _examine(dict.fromkeys(reversed(symbols), old))
    assert [p.split("'")[1] for p in found.problems] == symbols


def test_a_symbols_line_names_the_first_file_it_came_from_and_its_spelling() -> None:
    old = _every(datetime(1970, 1, 1, tzinfo=UTC), 3, timedelta(seconds=1))
    found = _examine(
        {"AAPL": old, "MSFT": old},
        file_of={"AAPL": [0], "MSFT": [2, 1, 2]},
        files=3,
        spellings=({"ts": "Date"}, {"ts": "Time"}, {"ts": "Stamp"}),
    )
    assert [p.split(": first bar")[0] for p in found.problems] == [
        "a.csv: symbol 'AAPL'",
        "b.csv: symbol 'MSFT'",
    ]
    assert "column 'Time' is misread" in found.problems[1]


def test_a_symbol_missing_from_the_loaded_rows_is_put_at_the_first_file() -> None:
    """Bars handed to examine() with a symbol the loaded frame lacks: named after file 0."""
    old = _every(datetime(1970, 1, 1, tzinfo=UTC), 3, timedelta(seconds=1))
    loaded = LoadedBars(
        frame=pl.DataFrame(
            {"symbol": ["MSFT"], "__file": [1], "ts": [NOW]},
            schema={"symbol": pl.String, "__file": pl.Int64, "ts": pl.Datetime("us", "UTC")},
        ),
        files=(Path("a.csv"), Path("b.csv")),
        spellings=({"ts": "Date"}, {"ts": "Time"}),
    )
    bars = pl.DataFrame(
        {"symbol": ["AAPL"] * 3, "ts": old},
        schema={"symbol": pl.String, "ts": pl.Datetime("us", "UTC")},
    )
    (line,) = examine(loaded, bars, now=NOW).problems
    assert line.startswith("a.csv: symbol 'AAPL': first bar 1970-01-01 00:00:00+00:00 is before")
    assert "column 'Date'" in line


# --- the zone and closed rules -------------------------------------------------------------


def test_a_fixed_offset_clock_read_as_utc_names_the_offset_as_the_tz_flag() -> None:
    """FX bars stamped UTC+3 read as UTC: 3 of 120 bars a week in the weekend (2.5 %)."""
    bars = {"EURUSD": _fx_open_hours(3 * HOUR)}
    line = (
        "a.csv: symbol 'EURUSD': 2.5% of the bars fall in the closed hours of calendar fx_24x5 "
        "with the naive timestamps read as UTC, 0.0% read as UTC+03:00: the file's clock is "
        f"likely UTC+03:00; --tz +03:00 reads it so, {ODD}"
    )
    assert _examine(bars, naive=(True,)) == TimeAxisFindings((line,))
    given = _examine(bars, naive=(True,), options=ReadOptions(tz="UTC"))
    assert given == TimeAxisFindings((), (f"--tz UTC kept as given: {line}",))


def test_a_utc_clock_read_as_a_vendors_zone_names_utc_as_the_tz_flag() -> None:
    """FX bars in UTC read as New York time (a vendor's clock): 5 of 120 a week in the
    weekend; UTC fits, and Europe/London as well in January: both named (session 42; UTC
    alone before, and a tie between Chicago and New York named Chicago alone)."""
    found = _examine(
        {"EURUSD": _fx_open_hours(5 * HOUR)}, naive=(True,), zones=("America/New_York",)
    )
    assert found.problems == (
        "a.csv: symbol 'EURUSD': 4.2% of the bars fall in the closed hours of calendar fx_24x5 "
        "with the naive timestamps read as America/New_York, 0.0% read as UTC: the file's clock "
        "is likely UTC or Europe/London; --tz UTC or --tz Europe/London reads it so (the bars "
        f"cannot tell them apart), {ODD}",
    )


@pytest.mark.parametrize("naive", [(False,), ()], ids=["zoned", "no-naive-flags"])
def test_zoned_timestamps_are_never_searched_for_a_better_zone(naive: tuple[bool, ...]) -> None:
    """The same UTC+3 bars with an offset in the file (or no naive flags at all): the time is
    what the file says, 2.5 % closed is under the limit."""
    found = _examine({"EURUSD": _fx_open_hours(3 * HOUR)}, naive=naive)
    assert found == TimeAxisFindings()


def test_a_quarter_of_the_bars_in_closed_hours_is_not_over_the_limit() -> None:
    """Friday 16:00-23:00 UTC, zoned: FX closes at 22:00, 2 of 8 bars closed (25 %): kept;
    one more bar closed (3 of 8): refused, the share rounded to whole percent."""
    bars = _every(_t(12, 16), 8)
    assert _examine({"EURUSD": bars}, naive=(False,)) == TimeAxisFindings(
        closed=(
            "a.csv: symbol 'EURUSD': 2 of 8 bars (25%) fall in the closed hours of calendar "
            "fx_24x5: read as given, each a bar and a target of the series (data inspect lists "
            "them; drop them, or --instruments FILE sets the market's calendar)",
        )
    )
    later = [*bars[1:], _t(13, 0)]  # 17:00 .. Saturday 00:00
    assert _examine({"EURUSD": later}, naive=(False,)).problems == (
        f"a.csv: symbol 'EURUSD': 38% of the bars fall in the closed hours of calendar fx_24x5: "
        f"{CLOSED_WHY}",
    )


def test_naive_bars_over_a_quarter_closed_in_every_zone_name_no_zone() -> None:
    """Every hour of two weeks on FX: 48 of 168 hours closed in any zone, none fits better."""
    every_hour = _every(_t(8), 14 * 24)
    found = _examine({"GBPUSD": every_hour}, naive=(True,))
    assert found.problems == (
        f"a.csv: symbol 'GBPUSD': 29% of the bars fall in the closed hours of calendar fx_24x5: "
        f"{CLOSED_WHY}",
    )


# --- end to end ----------------------------------------------------------------------------


def _csv(path: Path, times: list[datetime], fmt: str) -> Path:
    rows = "".join(f"{t:{fmt}},1.1,1.2,1.0,1.1,10\n" for t in times)
    path.write_text("Time,Open,High,Low,Close,Volume\n" + rows)
    return path


def test_read_bars_refuses_a_naive_utc_plus_3_clock_and_reads_it_with_the_named_flag(
    tmp_path: Path,
) -> None:
    times = _fx_open_hours(3 * HOUR)
    path = _csv(tmp_path / "EURUSD.csv", times, "%Y-%m-%d %H:%M:%S")
    with pytest.raises(DataError) as e:
        read_bars(path)
    assert str(e.value) == (
        f"{path}: symbol 'EURUSD': 2.5% of the bars fall in the closed hours of calendar "
        "fx_24x5 with the naive timestamps read as UTC, 0.0% read as UTC+03:00: the file's "
        f"clock is likely UTC+03:00; --tz +03:00 reads it so, {ODD}"
    )
    bars = read_bars(path, options=ReadOptions(tz="+03:00"))
    assert bars["ts"][0] == _t(7, 22) and bars.height == 240
    (tmp_path / "zoned").mkdir()
    zoned = _csv(tmp_path / "zoned" / "EURUSD.csv", times, "%Y-%m-%dT%H:%M:%SZ")
    with pytest.raises(DataError) as e:  # the same clock marked UTC: named with --force-tz
        read_bars(zoned)
    assert str(e.value).endswith(
        "with the timestamps marked UTC read as such, 0.0% read as UTC+03:00: the file's "
        f"clock is likely UTC+03:00; --tz +03:00 --force-tz reads it so, {ODD}"
    )
    bars = read_bars(zoned, options=ReadOptions(tz="+03:00", force_tz=True))
    assert bars["ts"][0] == _t(7, 22) and bars.height == 240
    offset = _csv(tmp_path / "zoned" / "EURUSD.csv", times, "%Y-%m-%dT%H:%M:%S+01:00")
    assert read_bars(offset)["ts"][0] == _t(8, 0)  # an offset not UTC's: as written


def test_bars_in_closed_hours_under_the_limit_are_warned_of_by_every_reader() -> None:
    """5 % or fewer closed: silent; over 5 % (the share at which data inspect says suspicious),
    one warning per symbol where train, predict and evaluate read the bars (silent until
    session 57: a stock's junk weekend bars trained as bars and targets)."""
    week = _every(_t(8), 5 * 24)  # Monday 00:00 .. Friday 23:00 UTC: FX closes at 22:00 Friday
    assert _examine({"EURUSD": week}, naive=(False,)).closed == ()  # 2 of 120: 1.7 %
    weekend = [*week, *_every(_t(13, 9), 8)]  # and 8 Saturday bars: 10 of 128, 7.8 %
    assert _examine({"EURUSD": weekend}, naive=(False,)).closed == (
        "a.csv: symbol 'EURUSD': 10 of 128 bars (8%) fall in the closed hours of calendar "
        "fx_24x5: read as given, each a bar and a target of the series (data inspect lists "
        "them; drop them, or --instruments FILE sets the market's calendar)",
    )


def test_daily_bars_on_closed_days_under_the_limit_are_warned_of() -> None:
    """ES's daily bars of four weeks (Globex trades Sunday evening to Friday: a Monday .. Friday
    bar each week), and two Saturday bars: 2 of 22, 9 %."""
    every = [_t(8) + timedelta(days=d) for d in range(26)]
    days = [d for d in every if d.weekday() < 5][:20]
    found = _examine({"ES": [*days, _t(13), _t(20)]}, naive=(False,))
    assert found.problems == ()
    assert found.closed == (
        "a.csv: symbol 'ES': 2 of 22 bars (9%) fall on days calendar cme_equity does not trade: "
        "read as given, each a bar and a target of the series (data inspect lists them; drop "
        "them, or --instruments FILE sets the market's calendar)",
    )
