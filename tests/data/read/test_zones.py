"""Zones of naive timestamps: the spellings of UTC and of fixed offsets, the offsets' range, the
canonical names, and wall clock <-> UTC across daylight saving (a repeated hour reads as its
first occurrence, a skipped one is null)."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from foxhunt.data.read.zones import Zone, fixed_offset_name, local_to_utc, parse_zone, utc_to_local
from foxhunt.errors import DataError


@pytest.mark.parametrize("text", ["UTC", "utc", " GMT ", "gmt", "Z", "z"])
def test_every_spelling_of_utc_is_the_zero_offset(text: str) -> None:
    assert parse_zone(text) == Zone("UTC", 0)


@pytest.mark.parametrize(
    ("text", "name", "minutes"),
    [
        ("-05:00", "UTC-05:00", -300),
        ("+0530", "UTC+05:30", 330),
        ("UTC-5", "UTC-05:00", -300),
        ("gmt+05:30", "UTC+05:30", 330),
        ("-12:00", "UTC-12:00", -720),  # the ends of the range
        ("+14:00", "UTC+14:00", 840),
        ("+00:01", "UTC+00:01", 1),
        ("-00:01", "UTC-00:01", -1),
        ("+05:59", "UTC+05:59", 359),
        ("+00:00", "UTC", 0),
    ],
)
def test_fixed_offsets_and_their_canonical_names(text: str, name: str, minutes: int) -> None:
    assert parse_zone(text) == Zone(name, minutes)
    assert fixed_offset_name(minutes) == name


@pytest.mark.parametrize("text", ["-12:01", "+14:01", "-13", "+05:60", "+05:99"])
def test_offsets_beyond_the_range_or_with_60_minutes_are_refused(text: str) -> None:
    with pytest.raises(DataError) as refused:
        parse_zone(text)
    assert str(refused.value) == f"time zone {text!r}: offsets run from -12:00 to +14:00"


def test_an_unknown_name_is_refused_with_the_spellings_that_work() -> None:
    with pytest.raises(DataError) as refused:
        parse_zone("Mars/Olympus")
    assert str(refused.value) == (
        "unknown time zone 'Mars/Olympus' (use an IANA name such as America/Chicago, a fixed "
        "offset such as -05:00 or UTC-5, or a zone moved by hours: America/New_York+07:00)"
    )
    assert parse_zone("America/New_York") == Zone("America/New_York", None)
    with pytest.raises(DataError, match="unknown time zone 'Mars/Olympus\\+07:00'"):
        parse_zone("Mars/Olympus+07:00")


@pytest.mark.parametrize(
    "spelling", ["America/New_York+07:00", "America/New_York+7", "America/New_York+0700"]
)
def test_a_zone_moved_by_hours_is_the_brokers_server_clock(spelling: str) -> None:
    """MetaTrader brokers' GMT+2 / GMT+3 with New York's daylight-saving dates: midnight on the
    server is New York's 17:00 close, in winter (22:00 UTC) and in summer (21:00 UTC), and in
    the three weeks of March when New York has moved and Europe has not."""
    zone = parse_zone(spelling)
    assert zone == Zone("America/New_York+07:00", None, 420)
    assert zone.base == "America/New_York"
    wall = pl.DataFrame(
        {"w": [dt.datetime(2018, 1, 8), dt.datetime(2018, 3, 12), dt.datetime(2018, 7, 9)]}
    )
    utc = wall.select(local_to_utc(pl.col("w"), spelling).alias("u"))
    assert utc["u"].to_list() == [
        dt.datetime(2018, 1, 7, 22, tzinfo=dt.UTC),
        dt.datetime(2018, 3, 11, 21, tzinfo=dt.UTC),
        dt.datetime(2018, 7, 8, 21, tzinfo=dt.UTC),
    ]
    back = utc.select(utc_to_local(pl.col("u"), spelling).alias("w"))
    assert back["w"].to_list() == wall["w"].to_list()
    assert parse_zone("Etc/GMT+5") == Zone("Etc/GMT+5", None)  # an IANA name, not moved
    assert parse_zone("America/New_York+00:00") == Zone("America/New_York", None)
    with pytest.raises(DataError, match="offsets run from -12:00 to \\+14:00"):
        parse_zone("America/New_York+15")


def _naive(*stamps: str) -> pl.DataFrame:
    return pl.DataFrame({"t": [dt.datetime.fromisoformat(s) for s in stamps]})


def test_wall_clock_to_utc_across_daylight_saving() -> None:
    # New York 2024: 01:30 on 3 Nov happens twice (EDT, then EST); 02:30 on 10 Mar never
    frame = _naive("2024-11-03T01:30", "2024-03-10T02:30", "2024-07-01T09:30", "2024-01-02T09:30")
    utc = frame.select(local_to_utc(pl.col("t"), "America/New_York"))["t"]
    assert utc.dtype == pl.Datetime("us", "UTC")
    assert utc.to_list() == [
        dt.datetime(2024, 11, 3, 5, 30, tzinfo=dt.UTC),  # the first 01:30 (EDT, UTC-4)
        None,  # skipped
        dt.datetime(2024, 7, 1, 13, 30, tzinfo=dt.UTC),
        dt.datetime(2024, 1, 2, 14, 30, tzinfo=dt.UTC),
    ]
    back = pl.DataFrame({"u": utc}).select(utc_to_local(pl.col("u"), "America/New_York"))["u"]
    assert back.dtype == pl.Datetime("us") and back.to_list()[::2] == frame["t"].to_list()[::2]


def test_a_fixed_offset_shifts_all_year() -> None:
    frame = _naive("2024-07-01T09:30", "2024-01-02T09:30")
    utc = frame.select(local_to_utc(pl.col("t"), "-05:00"))["t"]
    assert utc.dtype == pl.Datetime("us", "UTC")
    assert utc.to_list() == [
        dt.datetime(2024, 7, 1, 14, 30, tzinfo=dt.UTC),  # no daylight saving: 09:30 + 5 h
        dt.datetime(2024, 1, 2, 14, 30, tzinfo=dt.UTC),
    ]
    back = pl.DataFrame({"u": utc}).select(utc_to_local(pl.col("u"), "UTC-5"))["u"]
    assert back.to_list() == frame["t"].to_list()
    # a zone-aware input in another zone is converted to UTC first
    tokyo = pl.DataFrame({"u": utc}).with_columns(pl.col("u").dt.convert_time_zone("Asia/Tokyo"))
    assert tokyo.select(utc_to_local(pl.col("u"), "-05:00"))["u"].to_list() == frame["t"].to_list()
