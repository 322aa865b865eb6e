"""columns.py where `make mutate` (session 50) found it loose: up- and down-volume read as the
volume only as a pair, an hour column taken as the time only beside a date, and a time found
only with other separators."""

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


def test_a_time_spelt_with_other_separators_is_the_time_beside_a_date() -> None:
    """``Time Of Day`` is ``time_of_day`` spelt with spaces: the time beside the date, found
    only by the squashed match (session 51: with the match's ``or`` turned to ``and`` on
    either side, the date alone was the time)."""
    cols = map_columns(["Date", "Time Of Day", "Open", "High", "Low", "Close", "Volume"])
    assert (cols.ts, cols.date, cols.time) == (None, "Date", "Time Of Day")
    exact = map_columns(["Date", "Time", "Open", "High", "Low", "Close", "Volume"])
    assert (exact.date, exact.time) == ("Date", "Time")
