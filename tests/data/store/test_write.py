"""Writing a feature store, detail by detail: the refusals of a bad ``--out`` and horizon word
for word, the read options passed to the reader, each of several symbols in its own shard
(whatever their count and lengths), the shard's parquet layout, the manifest's text, a shard
that went missing recomputed, one already deleted not fatal."""

from __future__ import annotations

import json
import logging
from datetime import timedelta
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from foxhunt.data.read.options import ReadOptions
from foxhunt.data.sources.demo import demo_bars
from foxhunt.data.store import write as store_write
from foxhunt.data.store.manifest import CLOSE, MANIFEST, read_manifest
from foxhunt.data.store.write import write_feature_store
from foxhunt.errors import DataError, InputError

H = 3


def _panel(lengths: dict[str, int]) -> pl.DataFrame:
    """Demo bars of each symbol, of its own length (the seeds differ too)."""
    frames = [demo_bars(n, seed=i, symbol=symbol) for i, (symbol, n) in enumerate(lengths.items())]
    return pl.concat(frames, how="vertical_relaxed")


def test_out_refusals_word_for_word(tmp_path: Path) -> None:
    bars = tmp_path / "bars" / "ES.parquet"
    bars.parent.mkdir()
    demo_bars(300, seed=0).write_parquet(bars)
    a_file = tmp_path / "out.txt"
    a_file.write_text("x")
    with pytest.raises(InputError) as caught:
        write_feature_store(bars, a_file)
    assert str(caught.value) == (
        f"--out {a_file}: exists and is not a directory (--shards writes a folder)"
    )
    orphan = tmp_path / "no" / "store"
    with pytest.raises(InputError) as caught:
        write_feature_store(bars, orphan)
    assert str(caught.value) == f"--out {orphan}: folder {orphan.parent} does not exist"
    demo_bars(300, seed=1, symbol="NQ").write_parquet(bars.parent / "NQ.parquet")
    with pytest.raises(InputError) as caught:  # the first of the bars files it holds
        write_feature_store(bars.parent, bars.parent)
    assert str(caught.value) == (
        f"--out {bars.parent}: holds the bars file ES.parquet; write the store to its own folder"
    )
    assert not (bars.parent / MANIFEST).exists()


def test_horizon_one_is_the_least(tmp_path: Path) -> None:
    bars = tmp_path / "ES.parquet"
    demo_bars(300, seed=0).write_parquet(bars)
    with pytest.raises(InputError) as caught:
        write_feature_store(bars, tmp_path / "s0", horizon=0)
    assert str(caught.value) == "--horizon must be >= 1, got 0"
    manifest, computed = write_feature_store(bars, tmp_path / "s1", horizon=1)
    assert (manifest.horizon, computed) == (1, 1)
    assert write_feature_store(bars, tmp_path / "s10")[0].horizon == 10  # the default


def test_each_symbol_gets_its_own_bars_whatever_their_count_and_lengths(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Symbols of different lengths, more than two: every shard's closes are its own bars'
    closes at its rows' times (a symbol cut at another's offset, or groups in another order,
    would mix them), in the manifest in the bars' order, and the log counts them from 1."""
    lengths = {"CL": 260, "ES": 310, "GC": 280, "NQ": 330, "YM": 270, "ZN": 290}
    bars = tmp_path / "panel.parquet"
    panel = _panel(lengths)
    panel.write_parquet(bars)
    with caplog.at_level(logging.INFO, logger="foxhunt.data.store.write"):
        manifest, computed = write_feature_store(bars, tmp_path / "store", horizon=H)
    assert computed == len(lengths)
    assert [s.symbol for s in manifest.shards] == sorted(lengths)
    assert {s.symbol: s.bars for s in manifest.shards} == lengths
    assert manifest.bars == str(bars)
    for shard in manifest.shards:
        got = pl.read_parquet(tmp_path / "store" / shard.file)
        own = panel.filter(pl.col("symbol") == shard.symbol).select("ts", "close")
        want = got.select("ts").join(own, on="ts", how="left", maintain_order="left")
        assert got.height == shard.rows > 0
        assert got[CLOSE].to_list() == want["close"].to_list(), shard.symbol
        assert got[CLOSE].null_count() == 0
    lines = [r.getMessage() for r in caplog.records if "features for" in r.getMessage()]
    assert lines == [f"{s} ({k}/6): features for {n} bars" for k, (s, n) in
                     enumerate(sorted(lengths.items()), start=1)]  # fmt: skip


def test_the_read_options_reach_the_reader(tmp_path: Path) -> None:
    """``tz``, ``allow_outliers`` and ``options`` (a one-symbol file's ``--symbol``)."""
    bars = demo_bars(300, seed=0).with_columns(pl.col("ts").dt.replace_time_zone(None))
    spike = bars.with_columns(
        pl.when(pl.int_range(pl.len()) == 150)
        .then(pl.col("high") * 20)
        .otherwise(pl.col("high"))
        .alias("high")
    ).drop("symbol")
    path = tmp_path / "bars.csv"
    spike.write_csv(path)
    with pytest.raises(DataError, match="allow-outliers keeps it"):
        write_feature_store(path, tmp_path / "refused", horizon=H, options=ReadOptions(symbol="ES"))
    manifest, _ = write_feature_store(
        path,
        tmp_path / "store",
        horizon=H,
        tz="America/New_York",
        allow_outliers=True,
        options=ReadOptions(symbol="NQ"),
    )
    (shard,) = manifest.shards
    assert shard.symbol == "NQ"
    as_utc, _ = write_feature_store(
        path, tmp_path / "utc", horizon=H, allow_outliers=True, options=ReadOptions(symbol="NQ")
    )
    new_york = pl.read_parquet(tmp_path / "store" / shard.file)["ts"]
    utc = pl.read_parquet(tmp_path / "utc" / as_utc.shards[0].file)["ts"]
    assert new_york.len() == utc.len() > 0
    # the same naive wall clock, read in New York: 4 or 5 hours later in UTC
    assert set((new_york - utc).unique().to_list()) <= {timedelta(hours=4), timedelta(hours=5)}


def test_shard_layout_and_manifest_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_write, "SHARD_ROW_GROUP", 100)
    bars = tmp_path / "ES.parquet"
    demo_bars(400, seed=0).write_parquet(bars)
    manifest, _ = write_feature_store(bars, tmp_path / "store", horizon=H)
    (shard,) = manifest.shards
    meta = pq.ParquetFile(tmp_path / "store" / shard.file).metadata
    groups = [meta.row_group(i) for i in range(meta.num_row_groups)]
    full, rest = divmod(shard.rows, 100)
    assert shard.rows > 100
    assert [g.num_rows for g in groups] == [100] * full + ([rest] if rest else [])
    column = groups[0].column(0)
    assert column.compression == "ZSTD"
    assert column.is_stats_set and column.statistics.has_min_max
    text = (tmp_path / "store" / MANIFEST).read_text()
    assert text == json.dumps(manifest.to_dict(), indent=1) + "\n"  # one space per level
    assert read_manifest(tmp_path / "store") == manifest


def test_a_missing_shard_is_recomputed_and_a_deleted_one_of_a_gone_symbol_is_no_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bars = tmp_path / "panel.parquet"
    _panel({"CL": 260, "GC": 270}).write_parquet(bars)
    out = tmp_path / "store"
    manifest, _ = write_feature_store(bars, out, horizon=H)
    (out / "CL.parquet").unlink()  # gone from the store, still in the bars
    with caplog.at_level(logging.INFO, logger="foxhunt.data.store.write"):
        again, computed = write_feature_store(bars, out, horizon=H)
    assert computed == 1 and (out / "CL.parquet").is_file()
    assert "CL: recomputing (" in caplog.text and "is missing" in caplog.text
    assert again == manifest
    (out / "GC.parquet").unlink()  # deleted by hand, and GC leaves the bars too
    _panel({"CL": 260}).write_parquet(bars)
    last, computed = write_feature_store(bars, out, horizon=H)
    assert [s.symbol for s in last.shards] == ["CL"] and computed == 0
