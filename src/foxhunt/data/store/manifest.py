"""The feature store's format: its layout, ``manifest.json``, and the checks that a store is whole.

A store written by ``foxhunt features --bars BARS --out DIR --shards`` (see
:mod:`foxhunt.data.store.write`) is::

    DIR/manifest.json        what the store is: format, foxhunt version, horizon, feature spec,
                             and per symbol its shard file, bar count, row count, the
                             fingerprint of its bars and its resolved instrument (calendar,
                             static values; written last)
    DIR/<SYMBOL>.parquet     that symbol's ``compute_features`` output, unscaled (ts, symbol,
                             observed, known, static, targets) plus the bar's ``close`` (for
                             the report's fan chart); the bars' fingerprint is in the parquet
                             key-value metadata
    DIR/cache/               derived data (training's window arrays, see
                             :mod:`foxhunt.data.store.cache`)

This module reads and checks a store: the manifest against this foxhunt's version and feature
spec, every shard's footer against the manifest. It writes nothing.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from foxhunt.data.features.table import FeatureSpec, feature_spec
from foxhunt.data.market.instruments import Instrument, instruments_from_dict
from foxhunt.errors import DataError
from foxhunt.version import __version__

FORMAT = "foxhunt-feature-store"
"""``format`` field of every manifest."""

FORMAT_VERSION = 1
"""Layout version; a manifest with another is refused."""

MANIFEST = "manifest.json"
"""The manifest's file name inside a store directory."""

CLOSE = "close"
"""Extra shard column: the bar's close (the fan chart needs price levels, not only returns)."""

CACHE_DIR = "cache"
"""Sub-directory for derived data (training's window arrays); deleted when shards change."""

SHARD_ROW_GROUP = 32_768
"""Rows per parquet row group of a shard."""

META_FINGERPRINT = "foxhunt.bars_fingerprint"
"""Parquet key-value metadata of a shard: the fingerprint of the bars it was computed from."""

META_SYMBOL = "foxhunt.symbol"
"""Parquet key-value metadata of a shard: its symbol."""

_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_RERUN = "re-run `foxhunt features --bars BARS --out {root} --shards`"


@dataclass(frozen=True)
class ShardInfo:
    """One symbol's entry in the manifest.

    Attributes:
        symbol: The symbol.
        file: Shard file name inside the store directory.
        bars: Bars the features were computed from.
        rows: Feature rows in the shard (bars minus warm-up and the last H).
        fingerprint: :func:`foxhunt.data.pipeline.bars_fingerprint` of the symbol's bars.
        instrument: The symbol's resolved instrument (``asdict`` of
            :class:`~foxhunt.data.market.instruments.Instrument`) its features were computed
            with: its calendar drives the known features and the session VWAP. None in a store
            written before stores kept it (its features follow the ``globex`` rule).
    """

    symbol: str
    file: str
    bars: int
    rows: int
    fingerprint: str
    instrument: dict[str, Any] | None = None


@dataclass(frozen=True)
class Manifest:
    """The contents of ``manifest.json``.

    Attributes:
        horizon: H, the number of targets.
        spec: Feature names and warm-up.
        fingerprint: Fingerprint of all the bars together (what a run records, the same as
            training from the bars file gives).
        shards: One entry per symbol, in (symbol) table order.
        foxhunt_version: Version that computed the features.
        bars: Where the bars were read from (informational).
    """

    horizon: int
    spec: FeatureSpec
    fingerprint: str
    shards: tuple[ShardInfo, ...]
    foxhunt_version: str = __version__
    bars: str = ""

    def instruments(self) -> dict[str, Instrument] | None:
        """``{symbol: instrument}`` the shards were computed with; None when a shard predates
        stored instruments (then every symbol was computed on the ``globex`` rule)."""
        rows = {s.symbol: s.instrument for s in self.shards}
        if any(v is None for v in rows.values()):
            return None
        return instruments_from_dict({k: v for k, v in rows.items() if v is not None})

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict."""
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "foxhunt_version": self.foxhunt_version,
            "horizon": self.horizon,
            "spec": self.spec.to_dict(),
            "fingerprint": self.fingerprint,
            "bars": self.bars,
            "symbols": [vars(s) for s in self.shards],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: Path) -> Manifest:
        """Inverse of :meth:`to_dict`.

        Args:
            d: The parsed JSON.
            where: The manifest's path, for error messages.

        Raises:
            DataError: Not a manifest, another format version, or a malformed field.
        """
        if not isinstance(d, Mapping) or d.get("format") != FORMAT:
            raise DataError(f"{where}: not a foxhunt feature-store manifest")
        if d.get("format_version") != FORMAT_VERSION:
            raise DataError(
                f"{where}: store format version {d.get('format_version')!r}, this foxhunt "
                f"reads {FORMAT_VERSION}; {_RERUN.format(root=where.parent)}"
            )
        try:
            shards = tuple(
                ShardInfo(
                    symbol=str(s["symbol"]),
                    file=str(s["file"]),
                    bars=int(s["bars"]),
                    rows=int(s["rows"]),
                    fingerprint=str(s["fingerprint"]),
                    instrument=_instrument(s.get("instrument")),
                )
                for s in d["symbols"]
            )
            return cls(
                horizon=int(d["horizon"]),
                spec=FeatureSpec.from_dict(d["spec"]),
                fingerprint=str(d["fingerprint"]),
                shards=shards,
                foxhunt_version=str(d["foxhunt_version"]),
                bars=str(d.get("bars", "")),
            )
        except (KeyError, TypeError, ValueError, DataError) as e:
            raise DataError(f"{where}: malformed manifest ({e})") from e


def _instrument(d: Any) -> dict[str, Any] | None:
    """A shard's stored instrument, checked (None: an older store without one)."""
    if d is None:
        return None
    if not isinstance(d, Mapping):
        raise TypeError(f"instrument must be an object, got {type(d).__name__}")
    instruments_from_dict({"shard": d})  # raises DataError on a bad row
    return dict(d)


def is_feature_store(path: str | Path) -> bool:
    """Whether ``path`` is a directory holding a feature-store ``manifest.json``."""
    p = Path(path)
    return p.is_dir() and (p / MANIFEST).is_file()


def shard_file_name(symbol: str) -> str:
    """``<SYMBOL>.parquet``; symbols with other characters than letters, digits, ``._-`` are
    percent-encoded so every symbol maps to one plain file name."""
    name = symbol if _SAFE_NAME.fullmatch(symbol) else urllib.parse.quote(symbol, safe="")
    return f"{name}.parquet"


def read_manifest(root: Path) -> Manifest:
    """Read ``root/manifest.json`` and check it was written by this foxhunt.

    Args:
        root: The store directory.

    Returns:
        The manifest.

    Raises:
        DataError: Missing or unreadable manifest, another format or foxhunt version, or a
            feature spec this version does not compute.
    """
    path = Path(root) / MANIFEST
    try:
        raw = json.loads(path.read_text())
    except FileNotFoundError as e:
        raise DataError(f"{path}: no such file (not a feature store)") from e
    except (OSError, ValueError) as e:
        raise DataError(f"{path}: cannot read ({e})") from e
    m = Manifest.from_dict(raw, path)
    if m.foxhunt_version != __version__:
        raise DataError(
            f"{path}: features computed by foxhunt {m.foxhunt_version}, this is {__version__}; "
            f"{_RERUN.format(root=root)}"
        )
    if m.spec != feature_spec(m.horizon):
        raise DataError(
            f"{path}: feature spec differs from this foxhunt's at horizon {m.horizon}; "
            f"{_RERUN.format(root=root)}"
        )
    return m


def check_store(root: Path, horizon: int | None = None) -> Manifest:
    """Read the manifest and check every shard against it (parquet footers only).

    Args:
        root: The store directory.
        horizon: The H the caller needs, or None for any.

    Returns:
        The manifest.

    Raises:
        DataError: See :func:`read_manifest`; another horizon; a shard missing, unreadable,
            made from other bars than the manifest records, or with another row count.
    """
    root = Path(root)
    m = read_manifest(root)
    if horizon is not None and m.horizon != horizon:
        raise DataError(
            f"{root / MANIFEST}: features have horizon {m.horizon}, the model needs {horizon}; "
            f"re-run `foxhunt features ... --shards --horizon {horizon}`"
        )
    if not m.shards:
        raise DataError(f"{root / MANIFEST}: the store lists no symbols")
    for info in m.shards:
        check_shard(root, info)
    return m


def check_shard(root: Path, info: ShardInfo) -> None:
    path = root / info.file
    if not path.is_file():
        raise DataError(
            f"{path}: shard of symbol {info.symbol!r} listed in {root / MANIFEST} is missing; "
            f"{_RERUN.format(root=root)}"
        )
    try:
        meta = pl.read_parquet_metadata(path)
        rows = pl.scan_parquet(path).select(pl.len()).collect().item()
    except Exception as e:  # polars raises several types for unreadable files
        raise DataError(f"{path}: cannot read shard ({str(e).splitlines()[0]})") from e
    found = meta.get(META_FINGERPRINT)
    if found != info.fingerprint:
        raise DataError(
            f"{path}: shard was computed from other bars than {root / MANIFEST} records "
            f"(fingerprint {str(found)[:12]} vs {info.fingerprint[:12]}); "
            f"{_RERUN.format(root=root)}"
        )
    if rows != info.rows:
        raise DataError(
            f"{path}: shard has {rows} rows, {root / MANIFEST} records {info.rows}; "
            f"{_RERUN.format(root=root)}"
        )


def read_store_closes(root: Path, manifest: Manifest) -> pl.DataFrame:
    """``symbol``, ``ts``, ``close`` of every feature row in the store (for the fan chart).

    Args:
        root: The store directory.
        manifest: Its manifest.

    Returns:
        The three columns, sorted by (symbol, ts).
    """
    scans = [
        pl.scan_parquet(Path(root) / s.file).select("symbol", "ts", CLOSE) for s in manifest.shards
    ]
    return pl.concat(scans).collect()
