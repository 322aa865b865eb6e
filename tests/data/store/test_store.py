"""The feature store (``foxhunt features --shards``) and training from it (mmapped cache)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import torch

from foxhunt.cli import main
from foxhunt.config import DataConfig, RunConfig, TFTConfig
from foxhunt.data.features.table import compute_features, feature_spec
from foxhunt.data.pipeline import PreparedData, bars_fingerprint, prepare_training_data
from foxhunt.data.read.resample import aggregate_bars
from foxhunt.data.sources.demo import demo_bars
from foxhunt.data.store.cache import ARRAYS, SPLITS, cache_key
from foxhunt.data.store.manifest import (
    CACHE_DIR,
    CLOSE,
    MANIFEST,
    check_store,
    read_manifest,
    shard_file_name,
)
from foxhunt.data.store.write import write_feature_store
from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.errors import DataError

L, H = 16, 5
SYMBOLS = ("CLZ4", "ES")


def _bars(es_volume_bump: float = 0.0) -> pl.DataFrame:
    es = demo_bars(760, seed=2, symbol="ES")
    es = es.with_columns(
        pl.when(pl.int_range(pl.len()) == 600)
        .then(pl.col("volume") + es_volume_bump)
        .otherwise(pl.col("volume"))
        .alias("volume")
    )
    # Two missing CLZ4 bars (in the train and validation rows): windows whose next H rows skip
    # the gap take their decoder inputs from the calendar side array, which must match too.
    cl = demo_bars(700, seed=1, symbol="CLZ4").filter(~pl.int_range(pl.len()).is_in([450, 580]))
    return pl.concat([cl, es], how="vertical_relaxed")


def _cfg(**data: object) -> RunConfig:
    model = TFTConfig(hidden=8, n_heads=2, encoder_length=L, horizon=H)
    return RunConfig(model=model, data=DataConfig(**data), preset="test")  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def bars_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bars") / "panel.parquet"
    _bars().write_parquet(path)
    return path


@pytest.fixture(scope="module")
def store(bars_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("store") / "features"
    write_feature_store(bars_file, out, horizon=H)
    return out


def test_shards_are_compute_features_per_symbol(bars_file: Path, store: Path) -> None:
    bars = pl.read_parquet(bars_file).with_columns(pl.col("volume").cast(pl.Float64))
    m = read_manifest(store)
    assert m.horizon == H and m.spec == feature_spec(H)
    assert m.fingerprint == bars_fingerprint(bars.sort("symbol", "ts"))
    assert [s.symbol for s in m.shards] == list(SYMBOLS)
    for info in m.shards:
        sym_bars = bars.filter(pl.col("symbol") == info.symbol)
        shard = pl.read_parquet(store / info.file)
        want = compute_features(sym_bars, H)
        assert info.file == f"{info.symbol}.parquet"
        assert (info.bars, info.rows) == (sym_bars.height, want.height)
        assert info.fingerprint == bars_fingerprint(sym_bars)
        assert shard.drop(CLOSE).equals(want)  # unscaled, exactly the features
        closes = sym_bars.slice(m.spec.warmup, want.height)
        assert shard.select("ts", CLOSE).equals(closes.select("ts", CLOSE))
    assert not list(store.rglob("*.tmp"))
    assert shard_file_name("ES.c.0") == "ES.c.0.parquet"
    assert shard_file_name("ES/FUT") == "ES%2FFUT.parquet"


def _assert_same(a: PreparedData, b: PreparedData) -> None:
    assert a.spec == b.spec and a.fingerprint == b.fingerprint
    assert a.scaler == b.scaler  # bit-equal floats
    for name in SPLITS:
        x, y = getattr(a, name), getattr(b, name)
        assert (len(x), x.symbols, x.stride) == (len(y), y.symbols, y.stride), name
        for arr in ("historical", "known", "static", "target"):
            assert torch.equal(getattr(x, arr), getattr(y, arr)), (name, arr)
        assert np.array_equal(x.origin_rows(), y.origin_rows())
        assert x.origins().equals(y.origins())
        assert x.calendar_windows == y.calendar_windows
        if name != "test":
            assert x.calendar_windows > 0, name  # the gaps exercise the side array
        idx = np.arange(len(x))
        bx, by = x.batch(idx), y.batch(idx)
        for field in ("static", "historical", "known", "target"):
            assert torch.equal(getattr(bx, field), getattr(by, field)), (name, field)


@pytest.mark.slow
def test_training_from_store_equals_training_from_bars(
    bars_file: Path, store: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cfg = _cfg(stride=3)
    from_bars = prepare_training_data(bars_file, cfg)
    with caplog.at_level(logging.INFO, logger="foxhunt.data.store.cache"):
        from_store = prepare_training_data(store, cfg)
    _assert_same(from_bars, from_store)
    assert from_store.train.symbols == SYMBOLS and len(from_store.train) > 0
    # the bars' interval is recorded as from the bars (it was None: no check at inference)
    assert from_store.bar_interval_s == from_bars.bar_interval_s == 300.0
    # The arrays are read-only memory maps of the cache, built once for this config.
    key, _ = cache_key(read_manifest(store), cfg)
    cache = store / CACHE_DIR / key
    files = sorted(p.name for p in cache.iterdir())
    assert files == sorted(["meta.json", *(f"{s}.{a}.npy" for s in SPLITS for a in ARRAYS)])
    hist = np.load(cache / "train.historical.npy", mmap_mode="r")
    assert hist.shape == tuple(from_bars.train.historical.shape)
    # batches read their windows from the cache's files (row_files.py), nothing held
    for ds in (from_store.train, from_store.val, from_store.test):
        assert ds.mapped_arrays == ("historical", "known", "static", "target")
        assert ds.nbytes < ds.file_bytes
    assert "window cache" in caplog.text and "written" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="foxhunt.data.store.cache"):
        again = prepare_training_data(store, cfg)
    assert "reusing" in caplog.text
    _assert_same(from_bars, again)
    # Another config gets its own cache, still equal to the bars path.
    other = _cfg(stride=1, embargo=30)
    _assert_same(prepare_training_data(bars_file, other), prepare_training_data(store, other))
    assert len(list((store / CACHE_DIR).iterdir())) == 2


@pytest.mark.slow
def test_rerun_skips_unchanged_symbols(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    bars = tmp_path / "bars.parquet"
    _bars().write_parquet(bars)
    out = tmp_path / "store"
    assert (
        main(["features", "--bars", str(bars), "--out", str(out), "--shards", "--horizon", "5"])
        == 0
    )
    assert "2 symbols (2 computed, 0 unchanged)" in capsys.readouterr().out
    (out / CACHE_DIR / "stale").mkdir(parents=True)
    # A kept shard is not rewritten: same inode (os.replace would give a new file).
    inodes = {p.name: p.stat().st_ino for p in out.glob("*.parquet")}
    es_bytes = (out / "ES.parquet").read_bytes()
    with caplog.at_level(logging.INFO, logger="foxhunt.data.store.write"):
        write_feature_store(bars, out, horizon=H)
    assert "CLZ4: bars unchanged" in caplog.text and "ES: bars unchanged" in caplog.text
    assert {p.name: p.stat().st_ino for p in out.glob("*.parquet")} == inodes
    assert (out / CACHE_DIR).is_dir()  # nothing changed: caches stay valid
    # One ES bar changes: only ES is recomputed, and caches of the old features go.
    _bars(es_volume_bump=1.0).write_parquet(bars)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="foxhunt.data.store.write"):
        m, _ = write_feature_store(bars, out, horizon=H)
    assert "CLZ4: bars unchanged" in caplog.text and "ES: bars unchanged" not in caplog.text
    assert (out / "CLZ4.parquet").stat().st_ino == inodes["CLZ4.parquet"]
    assert (out / "ES.parquet").read_bytes() != es_bytes
    assert not (out / CACHE_DIR).exists()
    assert check_store(out, horizon=H) == m
    # A symbol that left the bars loses its shard.
    _bars().filter(pl.col("symbol") == "ES").write_parquet(bars)
    write_feature_store(bars, out, horizon=H)
    assert sorted(p.name for p in out.glob("*.parquet")) == ["ES.parquet"]


def test_out_folder_holding_the_bars_is_refused(tmp_path: Path) -> None:
    bars = tmp_path / "ES.parquet"
    demo_bars(300, seed=0).write_parquet(bars)
    assert main(["features", "--bars", str(bars), "--out", str(tmp_path), "--shards"]) == 2
    assert not (tmp_path / MANIFEST).exists()


def _copy_store(store: Path, dest: Path) -> Path:
    dest.mkdir()
    for p in store.iterdir():
        if p.is_file():
            (dest / p.name).write_bytes(p.read_bytes())
    return dest


def _edit_manifest(root: Path, **fields: object) -> None:
    raw = json.loads((root / MANIFEST).read_text())
    raw.update(fields)
    (root / MANIFEST).write_text(json.dumps(raw))


def test_bad_stores_raise_data_error_naming_the_file(store: Path, tmp_path: Path) -> None:
    cfg = _cfg()
    wrong_h = _cfg().replace(model={"horizon": H + 1})
    with pytest.raises(
        DataError, match=r"manifest\.json: features have horizon 5, the model needs 6"
    ):
        prepare_training_data(store, wrong_h)

    old = _copy_store(store, tmp_path / "old_version")
    _edit_manifest(old, foxhunt_version="0.0.1")
    with pytest.raises(DataError, match=r"manifest\.json: features computed by foxhunt 0\.0\.1"):
        prepare_training_data(old, cfg)
    fmt = _copy_store(store, tmp_path / "format")
    _edit_manifest(fmt, format_version=99)
    with pytest.raises(DataError, match=r"manifest\.json: store format version 99"):
        prepare_training_data(fmt, cfg)

    missing = _copy_store(store, tmp_path / "missing")
    (missing / "ES.parquet").unlink()
    with pytest.raises(DataError, match=r"missing/ES\.parquet: shard of symbol 'ES' .* is missing"):
        prepare_training_data(missing, cfg)

    swapped = _copy_store(store, tmp_path / "swapped")  # ES's shard replaced by CLZ4's
    (swapped / "ES.parquet").write_bytes((swapped / "CLZ4.parquet").read_bytes())
    with pytest.raises(DataError, match=r"swapped/ES\.parquet: shard was computed from other bars"):
        prepare_training_data(swapped, cfg)

    short = _copy_store(store, tmp_path / "short")
    raw = json.loads((short / MANIFEST).read_text())
    with pytest.raises(DataError, match="'CLZ4' has 698 bars; need at least 751"):
        prepare_training_data(short, _cfg().replace(model={"encoder_length": 546}))
    raw["symbols"][0]["rows"] += 1
    (short / MANIFEST).write_text(json.dumps(raw))
    with pytest.raises(DataError, match=r"short/CLZ4\.parquet: shard has 493 rows, .* records 494"):
        check_store(short)


class _Rank:
    """A stand-in for ``World``: records barriers; a non-main rank never builds."""

    def __init__(self, is_main: bool) -> None:
        self.is_main = is_main
        self.barriers = 0

    def barrier(self) -> None:
        self.barriers += 1


def test_only_the_main_rank_builds_the_cache(store: Path, tmp_path: Path) -> None:
    fresh = _copy_store(store, tmp_path / "fresh")  # no cache yet
    other = _Rank(is_main=False)
    with pytest.raises(DataError, match="window cache missing after the main process built it"):
        prepare_training_data(fresh, _cfg(), coordinator=other)
    assert other.barriers == 1 and not (fresh / CACHE_DIR).exists()
    main_rank = _Rank(is_main=True)
    built = prepare_training_data(fresh, _cfg(), coordinator=main_rank)
    other = _Rank(is_main=False)
    _assert_same(built, prepare_training_data(fresh, _cfg(), coordinator=other))
    assert main_rank.barriers == other.barriers == 1


def test_from_arrays_wraps_given_rows_and_checks_their_shapes() -> None:
    spec, n = feature_spec(H), 60
    ts = np.datetime64("2024-01-03T15:00") + np.arange(n) * np.timedelta64(5, "m")
    rows = {
        "historical": torch.zeros(n, len(spec.historical)),
        "known": torch.zeros(n, len(spec.known)),
        "static": torch.zeros(n, len(spec.static)),
        "target": torch.ones(n, H),
        "ts": ts.astype("datetime64[us]").astype(np.int64),
    }
    ds = WindowDataset.from_arrays(spec, L, H, **rows, symbols=["ES"], lengths=[n], stride=2)
    assert len(ds) == len(range(L - 1, n - H, 2)) and ds.historical is rows["historical"]
    assert torch.equal(ds.batch([0, 1]).target, torch.ones(2, H))
    bad = {**rows, "historical": torch.zeros(n, 3)}
    with pytest.raises(DataError, match=r"historical rows have shape \(60, 3\), need \(60, 210\)"):
        WindowDataset.from_arrays(spec, L, H, **bad, symbols=["ES"], lengths=[n])


def test_evaluate_and_predict_refuse_a_store_with_a_clear_error(store: Path) -> None:
    from foxhunt.data.pipeline import prepare_inference_data
    from foxhunt.data.scale.scaler import ScalerParams

    spec = feature_spec(H)
    scaler = ScalerParams(columns=(), mean=(), std=(), target_std=())
    for with_target in (True, False):
        with pytest.raises(DataError, match="is a feature store .* pass the bars"):
            prepare_inference_data(store, spec, scaler, L, H, with_target=with_target)


def _fx_panel(path: Path) -> Path:
    """A spot-FX symbol (calendar fx_24x5, not globex) with two missing bars, and ES."""
    fx = demo_bars(700, seed=5, symbol="ES").with_columns(symbol=pl.lit("EURUSD"))
    fx = fx.with_columns(pl.col(c) / 4000.0 for c in ("open", "high", "low", "close"))
    fx = fx.filter(~pl.int_range(pl.len()).is_in([450, 580]))
    pl.concat([fx, demo_bars(700, seed=2, symbol="ES")], how="vertical_relaxed").write_parquet(path)
    return path


@pytest.mark.slow
def test_a_store_computes_and_keeps_each_symbols_instrument_as_the_bars_path(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Features on the symbol's own calendar (not the globex rule), the resolved instruments in
    the manifest, and a store-trained run's windows and instruments equal to the bars path's;
    a changed instrument table recomputes the symbol."""
    from foxhunt.data.market.bars_market import resolve_bars

    bars_path = _fx_panel(tmp_path / "fx.parquet")
    bars = pl.read_parquet(bars_path).with_columns(pl.col("volume").cast(pl.Float64))
    out = tmp_path / "store"
    write_feature_store(bars_path, out, horizon=H)
    m = read_manifest(out)
    resolved = resolve_bars(bars)
    assert m.instruments() == resolved
    assert resolved["EURUSD"].calendar != resolved["ES"].calendar
    fx = bars.filter(pl.col("symbol") == "EURUSD")
    shard = pl.read_parquet(out / "EURUSD.parquet").drop(CLOSE)
    assert shard.equals(compute_features(fx, H, instruments=resolved))
    assert not shard.equals(compute_features(fx, H))  # the globex rule gives other features
    cfg = _cfg()
    from_bars = prepare_training_data(bars_path, cfg)
    from_store = prepare_training_data(out, cfg)
    _assert_same(from_bars, from_store)
    assert from_store.instruments == from_bars.instruments == resolved
    # Another instrument table: EURUSD gets recomputed with it, ES is kept.
    table = tmp_path / "instruments.csv"
    table.write_text(
        "root,tick_size,point_value,currency,asset_class,calendar\n"
        "EURUSD,0.00001,100000,USD,spot_fx,globex\n"
    )
    with caplog.at_level(logging.INFO, logger="foxhunt.data.store.write"):
        m2, computed = write_feature_store(bars_path, out, horizon=H, instruments=table)
    assert computed == 1 and "EURUSD: recomputing (its instrument changed)" in caplog.text
    assert m2.instruments()["EURUSD"].calendar == "globex"
    # A store written before stores kept instruments: None, every symbol on globex, as before.
    raw = json.loads((out / MANIFEST).read_text())
    for s in raw["symbols"]:
        del s["instrument"]
    (out / MANIFEST).write_text(json.dumps(raw))
    assert read_manifest(out).instruments() is None


def test_a_store_of_symbols_of_different_intervals_is_refused(tmp_path: Path) -> None:
    """The bars path refuses them; through a store they trained, and the run recorded no
    interval for evaluate and predict to check."""
    es = demo_bars(760, seed=2, symbol="ES")
    hourly = aggregate_bars(demo_bars(9000, seed=1, symbol="NQ"), 60)
    bars = tmp_path / "mixed.parquet"
    pl.concat([es, hourly], how="vertical_relaxed").write_parquet(bars)
    out = tmp_path / "features"
    write_feature_store(bars, out, horizon=H)
    with pytest.raises(DataError, match=r"symbols of different bar intervals: NQ holds 1-hour"):
        prepare_training_data(out, _cfg())
