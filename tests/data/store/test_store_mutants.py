"""Contracts of the feature store and its window cache that ``test_store.py`` leaves unpinned.

Small stores (a few hundred bars per symbol) keep the whole file fast.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import torch

from foxhunt.config import DataConfig, RunConfig, TFTConfig
from foxhunt.data.features.table import FeatureSpec
from foxhunt.data.pipeline import prepare_training_data
from foxhunt.data.scale.scaler import fit_scaler
from foxhunt.data.sources.demo import demo_bars
from foxhunt.data.store import cache
from foxhunt.data.store.cache import SPLITS, _mapped, _NpyWriter, _row_ranges, _rows, cache_key
from foxhunt.data.store.manifest import (
    CACHE_DIR,
    MANIFEST,
    Manifest,
    ShardInfo,
    check_store,
    is_feature_store,
    read_manifest,
    read_store_closes,
)
from foxhunt.data.store.write import write_feature_store
from foxhunt.errors import DataError
from foxhunt.version import __version__

L, H = 16, 5


def _cfg(**data: object) -> RunConfig:
    model = TFTConfig(hidden=8, n_heads=2, encoder_length=L, horizon=H)
    return RunConfig(model=model, data=DataConfig(**data), preset="test")  # type: ignore[arg-type]


def _rerun(root: Path) -> str:
    return re.escape(f"; re-run `foxhunt features --bars BARS --out {root} --shards`")


@pytest.fixture(scope="module")
def bars_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bars") / "panel.parquet"
    cl = demo_bars(420, seed=1, symbol="CLZ4").filter(~pl.int_range(pl.len()).is_in([150, 260]))
    es = demo_bars(400, seed=2, symbol="ES")
    pl.concat([cl, es], how="vertical_relaxed").write_parquet(path)
    return path


@pytest.fixture(scope="module")
def store(bars_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("store") / "features"
    write_feature_store(bars_file, out, horizon=H)
    return out


def _copy_store(store: Path, dest: Path) -> Path:
    dest.mkdir()
    for p in store.iterdir():
        if p.is_file():
            (dest / p.name).write_bytes(p.read_bytes())
    return dest


def _raw(root: Path) -> dict[str, object]:
    return json.loads((root / MANIFEST).read_text())


# --- manifest ----------------------------------------------------------------------------------


def test_from_dict_refuses_non_manifests_with_the_path(tmp_path: Path) -> None:
    """Anything but a mapping with the store's format is 'not a ... manifest', naming the file."""
    where = tmp_path / MANIFEST
    for bad in ([], "x", {"format": "other"}):
        with pytest.raises(DataError, match=rf"^{re.escape(str(where))}: not a foxhunt feature-"):
            Manifest.from_dict(bad, where)  # type: ignore[arg-type]
    with pytest.raises(
        DataError, match=r"store format version 7, this foxhunt reads 1" + _rerun(tmp_path)
    ):
        Manifest.from_dict({"format": "foxhunt-feature-store", "format_version": 7}, where)


def test_from_dict_round_trips_bars_and_instruments(store: Path, tmp_path: Path) -> None:
    """``bars`` and each shard's instrument survive a round trip; a missing ``bars`` is ''."""
    raw = _raw(store)
    m = Manifest.from_dict(raw, store / MANIFEST)
    assert m.shards[0].instrument == raw["symbols"][0]["instrument"]  # type: ignore[index]
    assert m.shards[0].instrument is not None
    assert m.to_dict()["bars"] == raw["bars"] != ""
    assert Manifest.from_dict(m.to_dict(), store / MANIFEST) == m
    assert Manifest.from_dict({**raw, "bars": "somewhere"}, store).bars == "somewhere"
    no_bars = {k: v for k, v in raw.items() if k != "bars"}
    assert Manifest.from_dict(no_bars, store).bars == ""
    old = json.loads(json.dumps(raw))
    for s in old["symbols"]:
        del s["instrument"]
    m_old = Manifest.from_dict(old, store)
    assert [s.instrument for s in m_old.shards] == [None, None]
    assert m_old.instruments() is None
    assert set(m.instruments() or {}) == {"CLZ4", "ES"}
    assert m.instruments()["CLZ4"].calendar == raw["symbols"][0]["instrument"]["calendar"]  # type: ignore[index]


def test_from_dict_reports_bad_instruments_and_fields(store: Path) -> None:
    """A non-object or incomplete instrument, or a missing field, is a 'malformed manifest'."""
    where = store / MANIFEST
    prefix = re.escape(f"{where}: malformed manifest (")
    raw = _raw(store)
    raw["symbols"][0]["instrument"] = [1]  # type: ignore[index]
    with pytest.raises(DataError, match=prefix + r"instrument must be an object, got list\)$"):
        Manifest.from_dict(raw, where)
    raw["symbols"][0]["instrument"] = {"root": "CL"}  # type: ignore[index]
    with pytest.raises(DataError, match=prefix + r"instrument 'shard': "):
        Manifest.from_dict(raw, where)
    del raw["horizon"]
    raw["symbols"][0]["instrument"] = None  # type: ignore[index]
    with pytest.raises(DataError, match=prefix + r"'horizon'\)$"):
        Manifest.from_dict(raw, where)


def test_read_manifest_errors_name_the_file_and_the_fix(store: Path, tmp_path: Path) -> None:
    """Missing, unreadable, other-version and other-spec manifests: exact messages."""
    with pytest.raises(DataError, match=rf"^{re.escape(str(tmp_path / MANIFEST))}: no such file"):
        read_manifest(tmp_path)
    (tmp_path / MANIFEST).write_text("{not json")
    with pytest.raises(DataError, match=rf"^{re.escape(str(tmp_path / MANIFEST))}: cannot read \("):
        read_manifest(tmp_path)
    old = _copy_store(store, tmp_path / "old")
    (old / MANIFEST).write_text(json.dumps({**_raw(store), "foxhunt_version": "0.0.1"}))
    with pytest.raises(DataError, match=rf"this is {re.escape(__version__)}" + _rerun(old) + "$"):
        read_manifest(old)
    spec = _copy_store(store, tmp_path / "spec")
    raw = _raw(store)
    raw["spec"]["warmup"] += 1  # type: ignore[index]
    (spec / MANIFEST).write_text(json.dumps(raw))
    msg = re.escape(f"{spec / MANIFEST}: feature spec differs from this foxhunt's at horizon {H}")
    with pytest.raises(DataError, match="^" + msg + _rerun(spec) + "$"):
        read_manifest(spec)


def test_check_store_and_shard_messages(store: Path, tmp_path: Path) -> None:
    """No symbols, missing, unreadable, foreign and short shards: exact messages with the fix."""
    empty = _copy_store(store, tmp_path / "empty")
    (empty / MANIFEST).write_text(json.dumps({**_raw(store), "symbols": []}))
    with pytest.raises(
        DataError, match=rf"^{re.escape(str(empty / MANIFEST))}: the store lists no"
    ):
        check_store(empty)
    gone = _copy_store(store, tmp_path / "gone")
    (gone / "ES.parquet").unlink()
    with pytest.raises(DataError, match=r"is missing" + _rerun(gone) + "$"):
        check_store(gone)
    junk = _copy_store(store, tmp_path / "junk")
    (junk / "ES.parquet").write_bytes(b"not a parquet file at all")
    try:
        pl.read_parquet_metadata(junk / "ES.parquet")
    except Exception as e:  # noqa: BLE001 - the message polars gives
        first = str(e).splitlines()[0]
    with pytest.raises(DataError) as info:
        check_store(junk)
    assert str(info.value) == f"{junk / 'ES.parquet'}: cannot read shard ({first})"
    foreign = _copy_store(store, tmp_path / "foreign")
    raw = _raw(store)
    real = raw["symbols"][1]["fingerprint"]  # type: ignore[index]
    raw["symbols"][1]["fingerprint"] = "0123456789abcdef0123"  # type: ignore[index]
    (foreign / MANIFEST).write_text(json.dumps(raw))
    want = f"(fingerprint {real[:12]} vs 0123456789ab)"
    with pytest.raises(DataError, match=re.escape(want) + _rerun(foreign) + "$"):
        check_store(foreign)
    short = _copy_store(store, tmp_path / "short")
    raw = _raw(store)
    raw["symbols"][0]["rows"] += 1  # type: ignore[index]
    (short / MANIFEST).write_text(json.dumps(raw))
    with pytest.raises(DataError, match=r"records \d+" + _rerun(short) + "$"):
        check_store(short)


def test_is_feature_store_needs_a_manifest(store: Path, tmp_path: Path) -> None:
    """A directory without ``manifest.json`` is not a store; a store is."""
    assert is_feature_store(store)
    assert not is_feature_store(tmp_path)
    assert not is_feature_store(store / MANIFEST)


def test_read_store_closes_gives_symbol_ts_close(store: Path) -> None:
    """Exactly the three columns of every shard, in manifest order."""
    m = read_manifest(store)
    closes = read_store_closes(store, m)
    assert closes.columns == ["symbol", "ts", "close"]
    want = pl.concat(
        [pl.read_parquet(store / s.file).select("symbol", "ts", "close") for s in m.shards]
    )
    assert closes.equals(want)


# --- cache -------------------------------------------------------------------------------------


def test_cache_key_hashes_named_parts(store: Path) -> None:
    """The key's parts under their names, and the key = first 16 hex of sha256(sorted JSON)."""
    m = read_manifest(store)
    for cfg, embargo in ((_cfg(), L + H), (_cfg(embargo=7, stride=2), 7)):
        key, parts = cache_key(m, cfg)
        want = {
            "cache_format": 1,
            "foxhunt_version": m.foxhunt_version,
            "fingerprint": m.fingerprint,
            "shards": [[s.symbol, s.rows, s.fingerprint] for s in m.shards],
            "instruments": [s.instrument for s in m.shards],
            "encoder_length": L,
            "horizon": H,
            "val_fraction": cfg.data.val_fraction,
            "test_fraction": cfg.data.test_fraction,
            "embargo": embargo,
            "stride": cfg.data.stride,
        }
        assert parts == want
        digest = hashlib.sha256(json.dumps(want, sort_keys=True).encode()).hexdigest()
        assert key == digest[:16]


def test_row_ranges_train_starts_at_row_zero() -> None:
    """Train rows start at 0; test rows run to the shard's end (never backwards)."""
    spec = FeatureSpec(historical=("a",), known=(), static=(), targets=("t",), warmup=0)
    m = Manifest(H, spec, "f", (ShardInfo("A", "A.parquet", 130, 100, "x"),))
    assert _row_ranges(m, {"A": (60, 70, 80, 90)}) == {
        "train": [(0, 60)],
        "val": [(70, 80)],
        "test": [(90, 100)],
    }


def test_fit_scaler_in_many_passes_equals_one_fit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Columns fitted a few at a time on the train rows only equal one fit on the whole table."""
    rng = np.random.default_rng(0)
    spec = FeatureSpec(
        historical=("a", "b", "c"), known=("k",), static=(), targets=("t1", "t2"), warmup=3
    )
    shards = []
    frames = []
    for i, sym in enumerate(("A", "B")):
        n = 40 + 10 * i
        df = pl.DataFrame({c: rng.normal(i, 1 + i, n) for c in ("a", "b", "c", "k", "t1", "t2")})
        df = df.with_columns(pl.col("t2") * 10)
        df.write_parquet(tmp_path / f"{sym}.parquet")
        shards.append(ShardInfo(sym, f"{sym}.parquet", n, n, sym))
        frames.append(df.slice(0, 30))  # train rows (then garbage rows the fit must skip)
    m = Manifest(2, spec, "f", tuple(shards))
    want = fit_scaler(pl.concat(frames), spec)
    monkeypatch.setattr(cache, "SCALER_PASS_BYTES", 4 * 60 * 5)  # 5 columns, then 1
    got = cache._fit_scaler(tmp_path, m, [(0, 30), (0, 30)])
    assert got.columns == want.columns == ("a", "b", "c", "k")
    assert np.allclose(got.mean, want.mean, rtol=1e-12) and np.allclose(got.std, want.std)
    assert np.allclose(got.target_std, want.target_std) and len(got.target_std) == 2


def test_npy_writer_checks_blocks_and_row_count(tmp_path: Path) -> None:
    """A block of another dtype (or width) is refused; closing short says rows written vs header."""
    path = tmp_path / "a.npy"
    w = _NpyWriter(path, np.dtype(np.float32), (3, 2))
    with pytest.raises(ValueError, match=re.escape(f"{path}: block float64(1, 2) vs (3, 2)")):
        w.append(np.zeros((1, 2), np.float64))
    with pytest.raises(ValueError, match=re.escape(f"{path}: block float32(1, 4) vs (3, 2)")):
        w.append(np.zeros((1, 4), np.float32))
    w.append(np.ones((2, 2), np.float32))
    with pytest.raises(RuntimeError, match=re.escape(f"{path}: wrote 2 rows of 3") + "$"):
        w.close()


def test_mapped_reads_lazily_handles_empty_and_missing_files(tmp_path: Path) -> None:
    """A map of the file (later writes show), an empty split as an empty tensor, a clear error."""
    path = tmp_path / "x.npy"
    np.save(path, np.arange(6, dtype=np.float32).reshape(3, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = _mapped(path)
    assert torch.equal(t, torch.arange(6, dtype=torch.float32).reshape(3, 2))
    np.lib.format.open_memmap(path, mode="r+")[0, 0] = 42.0  # change the file under the map
    assert float(t[0, 0]) == 42.0
    empty = tmp_path / "e.npy"
    np.save(empty, np.zeros((0, 4), np.float32))
    assert tuple(_mapped(empty).shape) == (0, 4)
    missing = tmp_path / "none.npy"
    with pytest.raises(
        DataError, match=rf"^{re.escape(str(missing))}: cannot read window cache \("
    ):
        _mapped(missing)
    with pytest.raises(
        DataError, match=rf"^{re.escape(str(missing))}: cannot read window cache \("
    ):
        _rows(missing)


def test_open_reports_an_unreadable_meta(store: Path, tmp_path: Path) -> None:
    """A broken ``meta.json`` is a DataError naming it."""
    dest = tmp_path / "k"
    dest.mkdir()
    (dest / "meta.json").write_text("{")
    m = read_manifest(store)
    with pytest.raises(
        DataError, match=rf"^{re.escape(str(dest / 'meta.json'))}: cannot read window"
    ):
        cache._open(dest, m, _cfg(), closes=pl.DataFrame())


def test_store_training_equals_bars_training_and_writes_meta(
    bars_file: Path, store: Path, tmp_path: Path
) -> None:
    """Same spec, scaler, fingerprint, instruments, closes and windows (val/test stride 1) as the
    bars path; ``meta.json`` records the format and the key's parts."""
    root = _copy_store(store, tmp_path / "s")
    cfg = _cfg(stride=3)
    a = prepare_training_data(bars_file, cfg)
    b = cache.prepare_store_data(root, cfg)
    assert b.spec == a.spec and b.scaler == a.scaler and b.fingerprint == a.fingerprint
    m = read_manifest(root)
    assert b.instruments == a.instruments == m.instruments() is not None
    assert b.closes.equals(read_store_closes(root, m))
    for name in SPLITS:
        x, y = getattr(a, name), getattr(b, name)
        assert (len(x), x.symbols, x.stride) == (len(y), y.symbols, y.stride), name
        assert x.calendar_windows == y.calendar_windows
        idx = np.arange(len(x))
        bx, by = x.batch(idx), y.batch(idx)
        for field in ("static", "historical", "known", "target"):
            assert torch.equal(getattr(bx, field), getattr(by, field)), (name, field)
    assert (b.val.stride, b.test.stride, b.train.stride) == (1, 1, 3)
    assert a.train.calendar_windows > 0
    key, parts = cache_key(m, cfg)
    meta = json.loads((root / CACHE_DIR / key / "meta.json").read_text())
    assert meta["format"] == 1 and meta["key"] == parts
    assert meta["scaler"] == b.scaler.to_dict()


def test_bars_exactly_enough_pass_the_bars_check(store: Path, tmp_path: Path) -> None:
    """A symbol with exactly warm-up + L + H bars passes; one bar fewer is refused."""
    root = _copy_store(store, tmp_path / "s")
    m = read_manifest(root)
    need = m.spec.warmup + L + H
    raw = _raw(root)
    raw["symbols"][0]["bars"] = need  # type: ignore[index]
    (root / MANIFEST).write_text(json.dumps(raw))

    class Other:
        is_main = False

        def barrier(self) -> None:
            return None

    msg = re.escape(f"{root / CACHE_DIR}") + r"/\w+: window cache missing after the main process "
    msg += re.escape("built it (every rank must see the same store folder)") + "$"
    with pytest.raises(DataError, match="^" + msg):
        cache.prepare_store_data(root, _cfg(), coordinator=Other())
    raw["symbols"][0]["bars"] = need - 1  # type: ignore[index]
    (root / MANIFEST).write_text(json.dumps(raw))
    with pytest.raises(DataError, match=f"has {need - 1} bars; need at least {need}"):
        cache.prepare_store_data(root, _cfg(), coordinator=Other())


def test_build_replaces_stale_tmp_and_keeps_a_finished_cache(store: Path, tmp_path: Path) -> None:
    """A stale tmp folder of this pid is cleared; a cache another process finished first is
    kept; a non-empty destination without ``meta.json`` raises; no tmp folder is left."""
    root = _copy_store(store, tmp_path / "s")
    cfg = _cfg()
    m = check_store(root, horizon=H)
    dest, parts, bounds = cache.cache_plan(root, m, cfg)
    stale = dest.with_name(f"{dest.name}.{os.getpid()}.tmp")
    stale.mkdir(parents=True)
    (stale / "junk").write_text("x")
    cache._build(root, m, bounds, cfg, dest, parts)
    assert (dest / "meta.json").is_file() and not (dest / "junk").exists()
    theirs = (dest / "meta.json").read_text()
    cache._build(root, m, bounds, cfg, dest, parts)  # dest exists and is complete: kept
    assert (dest / "meta.json").read_text() == theirs
    assert not list((root / CACHE_DIR).glob("*.tmp"))
    broken = root / CACHE_DIR / "broken"
    broken.mkdir()
    (broken / "other").write_text("x")
    with pytest.raises(OSError):
        cache._build(root, m, bounds, cfg, broken, parts)
    assert not list((root / CACHE_DIR).glob("*.tmp"))


def test_a_split_without_rows_trains_as_from_the_bars(
    bars_file: Path, store: Path, tmp_path: Path
) -> None:
    """``test_fraction=0``: the bars path gives an empty test split; the store path did not
    open at all ("no symbols: from_arrays needs at least one block of rows", found by a helper
    reading the mutation survivors). Both now give the same empty split."""
    root = _copy_store(store, tmp_path / "s")
    cfg = _cfg(test_fraction=0.0)
    a = prepare_training_data(bars_file, cfg)
    b = cache.prepare_store_data(root, cfg)
    assert (len(b.test), b.test.symbols) == (len(a.test), a.test.symbols) == (0, ())
    assert (len(b.train), len(b.val)) == (len(a.train), len(a.val)) and len(b.train) > 0
