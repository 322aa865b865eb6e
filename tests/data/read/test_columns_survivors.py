"""columns.py where `make mutate` (session 50) found it loose: up- and down-volume read as the
volume only as a pair, and an hour column taken as the time only beside a date."""

from __future__ import annotations

from foxhunt.data.read.columns import map_columns, up_down_volume


def test_up_and_down_volume_are_the_volume_only_as_a_pair() -> None:
    both = map_columns(["Date", "Time", "Open", "High", "Low", "Close", "Up", "Down"])
    assert up_down_volume(both) == ("Up", "Down")
    for lone in ("Up", "Down"):
        one = map_columns(["Date", "Time", "Open", "High", "Low", "Close", lone])
        assert up_down_volume(one) is None


def test_an_hour_column_is_the_time_only_beside_a_date() -> None:
    dated = map_columns(["Date", "Hour", "Open", "High", "Low", "Close", "Volume"])
    assert (dated.date, dated.time) == ("Date", "Hour")
    alone = map_columns(["Hour", "Open", "High", "Low", "Close", "Volume"])
    assert (alone.ts, alone.date, alone.time) == (None, None, None)  # no time: refused later
