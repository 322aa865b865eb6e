"""Time splits: disjoint, ordered, embargoed, per symbol; too-short splits raise."""

from __future__ import annotations

import polars as pl
import pytest

from foxhunt.data.features.table import compute_features
from foxhunt.data.windows.splits import split_by_time, split_sizes
from foxhunt.errors import DataError


@pytest.fixture(scope="module")
def panel_features(panel_bars: pl.DataFrame) -> pl.DataFrame:
    return compute_features(panel_bars, 10)


def _positions(full: pl.DataFrame, part: pl.DataFrame, sym: str) -> list[int]:
    rows = full.filter(pl.col("symbol") == sym).with_row_index("i")
    return rows.join(part.select("ts", "symbol"), on=["ts", "symbol"], how="semi")["i"].to_list()


@pytest.mark.parametrize("embargo", [0, 42, 60])
def test_disjoint_ordered_and_embargoed(panel_features: pl.DataFrame, embargo: int) -> None:
    s = split_by_time(
        panel_features, val_fraction=0.15, test_fraction=0.2, embargo=embargo, min_rows=1
    )
    for sym in ("CLZ4", "ES"):
        n = panel_features.filter(pl.col("symbol") == sym).height
        tr, va, te = (_positions(panel_features, x, sym) for x in (s.train, s.val, s.test))
        # Contiguous blocks in time order: train, gap, val, gap, test (ending at the last row).
        assert tr == list(range(len(tr)))
        assert va == list(range(va[0], va[0] + len(va)))
        assert te == list(range(n - len(te), n))
        assert va[0] - tr[-1] - 1 == embargo
        assert te[0] - va[-1] - 1 == embargo
        assert (len(tr), len(va), len(te)) == split_sizes(
            n, val_fraction=0.15, test_fraction=0.2, embargo=embargo
        )
    total = s.train.height + s.val.height + s.test.height
    assert total == panel_features.height - 4 * embargo
    assert s.train.columns == panel_features.columns


def test_zero_fractions_have_no_embargo(panel_features: pl.DataFrame) -> None:
    s = split_by_time(panel_features, val_fraction=0.0, test_fraction=0.0, embargo=50)
    assert s.train.height == panel_features.height and s.val.height == s.test.height == 0


def test_too_short_split_raises(panel_features: pl.DataFrame) -> None:
    """Too short for every symbol (or the only one): one error naming the symbol and split."""
    with pytest.raises(DataError, match="for train"):
        split_by_time(panel_features, val_fraction=0.45, test_fraction=0.45, embargo=100)
    one = panel_features.filter(pl.col("symbol") == "CLZ4")
    with pytest.raises(DataError, match="symbol 'CLZ4': .* for validation"):
        split_by_time(one, val_fraction=0.05, test_fraction=0.2, embargo=60)


def test_a_short_symbol_among_many_is_left_out_with_a_warning(
    panel_features: pl.DataFrame, caplog: pytest.LogCaptureFixture
) -> None:
    """Pooled data (88 futures, one of which starts late): the symbols too short for the
    splits are left out of all three splits, named in one warning; the others split exactly as
    they would alone."""
    cut = pl.concat([
        panel_features.filter(pl.col("symbol") != "CLZ4"),
        panel_features.filter(pl.col("symbol") == "CLZ4").head(150),  # a late starter
    ]).sort("symbol", "ts")  # fmt: skip
    kw = {"val_fraction": 0.15, "test_fraction": 0.15, "embargo": 20}
    with caplog.at_level("WARNING", logger="foxhunt.data.windows.splits"):
        s = split_by_time(cut, **kw)
    assert "CLZ4 (150 rows)" in caplog.text and "left out" in caplog.text
    kept = set(panel_features["symbol"].unique()) - {"CLZ4"}
    assert kept
    for part in (s.train, s.val, s.test):
        assert set(part["symbol"].unique()) == kept
    alone = split_by_time(cut.filter(pl.col("symbol") != "CLZ4"), **kw)
    assert s.train.equals(alone.train) and s.val.equals(alone.val) and s.test.equals(alone.test)


def test_many_short_symbols_are_named_eight_then_counted(
    panel_features: pl.DataFrame, caplog: pytest.LogCaptureFixture
) -> None:
    """Ten late starters among the long symbols: the warning names the first eight, comma
    separated, and counts the other two."""
    long_sym = panel_features["symbol"].unique().sort()[0]
    base = panel_features.filter(pl.col("symbol") == long_sym)
    short = [
        base.head(40).with_columns(pl.lit(f"S{k}").alias("symbol")) for k in range(10)
    ]  # fmt: skip
    table = pl.concat([base, *short]).sort("symbol", "ts")
    with caplog.at_level("WARNING", logger="foxhunt.data.windows.splits"):
        s = split_by_time(table, val_fraction=0.15, test_fraction=0.15, embargo=20)
    named = ", ".join(f"S{k} (40 rows)" for k in range(8))
    assert "10 of 11 symbols left out" in caplog.text
    assert f"{named} and 2 more" in caplog.text and "S8 (" not in caplog.text
    assert set(s.train["symbol"].unique()) == {long_sym}


def test_rows_need_not_be_grouped_by_symbol(panel_features: pl.DataFrame) -> None:
    """Each row's split comes from its index within its own symbol, so rows interleaved by time
    split as the symbol-sorted table does (the mask is row-aligned, no join reorders it)."""
    kw = {"val_fraction": 0.2, "test_fraction": 0.1, "embargo": 30}
    by_symbol = split_by_time(panel_features.sort("symbol", "ts"), **kw)
    by_time = split_by_time(panel_features.sort("ts", "symbol"), **kw)
    for a, b in zip(
        (by_symbol.train, by_symbol.val, by_symbol.test),
        (by_time.train, by_time.val, by_time.test),
        strict=True,
    ):
        assert a.height > 0 and a.equals(b.sort("symbol", "ts"))


def test_a_short_symbol_is_told_how_many_bars_it_lacks() -> None:
    """The refusal said "use more bars"; it now says how many: 363 rows of 0.15/0.15 splits with
    42-row embargoes leave 41 for validation; 364 give every split 42."""
    from foxhunt.data.windows.splits import fewest_rows, split_bounds

    kw = {"val_fraction": 0.15, "test_fraction": 0.15, "embargo": 42}
    assert fewest_rows(42, **kw) == 364
    split_bounds([("EURUSD", 364)], min_rows=42, **kw)
    with pytest.raises(DataError) as refused:
        split_bounds([("EURUSD", 363)], min_rows=42, **kw)
    assert str(refused.value) == (
        "symbol 'EURUSD': 363 feature rows leave 41 for validation (need >= 42; embargo 42 x2, "
        "val 0.15, test 0.15): the splits need 364 feature rows, 1 more bar"
    )
    with pytest.raises(
        DataError,
        match=r"leave 0 for train .*: the splits need 364 feature rows, "
        r"332 more bars$",
    ):
        split_bounds([("EURUSD", 32)], min_rows=42, **kw)


@pytest.mark.parametrize("fractions", [(0.0, 0.0), (0.1, 0.0), (0.0, 0.2), (0.3, 0.45)])
@pytest.mark.parametrize("need", [1, 7, 42])
@pytest.mark.parametrize("embargo", [0, 5])
def test_fewest_rows_is_the_first_count_every_split_takes(
    fractions: tuple[float, float], need: int, embargo: int
) -> None:
    from foxhunt.data.windows.splits import fewest_rows

    val, test = fractions
    kw = {"val_fraction": val, "test_fraction": test, "embargo": embargo}

    def fits(n: int) -> bool:
        sizes = split_sizes(n, **kw)
        return all(g >= need for g, w in zip(sizes, (True, val > 0, test > 0), strict=True) if w)

    n = fewest_rows(need, **kw)
    assert fits(n) and not any(fits(m) for m in range(n))


def test_a_count_past_the_fewest_can_fail_and_says_how_many_more() -> None:
    """The train split is what the floors leave: 172 rows fit 0.4/0.4 splits of 36, 173 leave 35
    for train; its message named 172, "-1 more bars"."""
    from foxhunt.data.windows.splits import split_bounds

    kw = {"val_fraction": 0.4, "test_fraction": 0.4, "embargo": 0}
    split_bounds([("ES", 172)], min_rows=36, **kw)
    with pytest.raises(DataError) as refused:
        split_bounds([("ES", 173)], min_rows=36, **kw)
    more = str(refused.value).rsplit(": the splits need ", 1)[1]
    count, rest = more.split(" feature rows, ")
    assert int(count) > 173 and rest == f"{int(count) - 173} more bar" + (
        "s" if int(count) - 173 > 1 else ""
    )
