"""The leak rule at its edges: growth exactly at the floor or at the relative threshold is not a
leak, one epoch end after the baseline is no trend, a flat step breaks a trend, every number
is judged on its own (an earlier one skipped does not stop the rest), a number's own values
are its peak where no peak counter is logged, and flags (bools) are not numbers."""

from __future__ import annotations

from foxhunt.memory.leaks import MIN_GROWTH_BYTES, find_leaks, is_leak_metric

MIB = 2**20


def _ends(**series: list[object]) -> list[dict[str, object]]:
    """One epoch_end snapshot per epoch (1-based) holding each series' value."""
    n = len(next(iter(series.values())))
    return [
        {"point": "epoch_end", "epoch": e + 1, **{k: v[e] for k, v in series.items()}}
        for e in range(n)
    ]


def test_growth_at_the_floor_is_not_a_leak_and_a_byte_more_is() -> None:
    base = 1000 * MIB
    at = _ends(rss_bytes=[base, base + MIN_GROWTH_BYTES])
    assert find_leaks(at, peak_fraction=0.0) == []
    more = _ends(rss_bytes=[base, base + MIN_GROWTH_BYTES + 1])
    assert len(find_leaks(more, peak_fraction=0.0)) == 1


def test_growth_at_the_relative_threshold_is_not_a_leak() -> None:
    # the run's peak is the largest value logged (no peak counter for this number): 400 MiB;
    # growth of exactly 10 % of it (40 MiB) after one epoch is not reported, 41 MiB is
    assert find_leaks(_ends(live_tensor_bytes=[360 * MIB, 400 * MIB])) == []
    [line] = find_leaks(_ends(live_tensor_bytes=[359 * MIB, 400 * MIB]))
    assert "(10% of the run's peak 400.0 MiB)" in line


def test_a_trend_needs_two_epoch_ends_after_the_baseline_each_rising() -> None:
    big_peak = {"peak_rss_bytes": 10_000 * MIB}  # the relative rule stays out of the way
    one = _ends(rss_bytes=[100 * MIB, 140 * MIB])
    one[-1].update(big_peak)
    assert find_leaks(one) == []  # a single step after the baseline is not a trend
    rising = _ends(rss_bytes=[100 * MIB, 120 * MIB, 140 * MIB])
    rising[-1].update(big_peak)
    [line] = find_leaks(rising)
    assert "rising at each of 2 epoch ends" in line
    flat_then_up = _ends(rss_bytes=[100 * MIB, 100 * MIB, 140 * MIB])
    flat_then_up[-1].update(big_peak)
    assert find_leaks(flat_then_up) == []  # a flat epoch end breaks the trend
    by_one_byte = _ends(rss_bytes=[100 * MIB, 100 * MIB + 1, 140 * MIB])
    by_one_byte[-1].update(big_peak)
    assert len(find_leaks(by_one_byte)) == 1  # any rise at every end is a trend


def test_each_number_is_judged_even_after_one_that_is_skipped() -> None:
    records = _ends(
        a_bytes=["n/a", "n/a"],  # not a number: skipped
        b_bytes=[100 * MIB, 101 * MIB],  # under the floor: skipped
        c_bytes=[100 * MIB, 100 * MIB],  # flat: skipped
        e_bytes=[100 * MIB, None],  # not logged at a later epoch end: skipped
        d_bytes=[100 * MIB, 300 * MIB],  # a leak
    )
    [line] = find_leaks(records)
    assert line.startswith("possible leak: d_bytes grew by 200.0 MiB")
    # with a large peak logged earlier (a step snapshot), only the steady riser is reported
    trend = [
        {"point": "step", "epoch": 1, "a_bytes": 10_000 * MIB, "d_bytes": 10_000 * MIB},
        *_ends(
            a_bytes=[100 * MIB, 150 * MIB, 140 * MIB],  # up then down: no trend
            d_bytes=[100 * MIB, 120 * MIB, 140 * MIB],  # a trend
        ),
    ]
    assert [x.split()[2] for x in find_leaks(trend)] == ["d_bytes"]


def test_flags_are_not_numbers_and_maxima_are_not_followed() -> None:
    assert find_leaks(_ends(x_bytes=[True, True])) == []
    assert not is_leak_metric("max_rss_bytes") and not is_leak_metric("rss_max_bytes")
    assert not is_leak_metric("cuda_total_bytes") and not is_leak_metric("cuda_free_bytes")
    assert is_leak_metric("rss_bytes")
