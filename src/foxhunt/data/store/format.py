"""The feature store's names as callers imported them before the split, re-exported.

* :mod:`foxhunt.data.store.manifest`: the layout, ``manifest.json`` and the checks that a store
  is whole (reading only);
* :mod:`foxhunt.data.store.write`: ``foxhunt features --shards``, writing shards and manifest.

New code imports from those modules; this one keeps older imports working.
"""

from __future__ import annotations

from foxhunt.data.store.manifest import (
    CACHE_DIR,
    CLOSE,
    FORMAT,
    FORMAT_VERSION,
    MANIFEST,
    SHARD_ROW_GROUP,
    Manifest,
    ShardInfo,
    check_store,
    is_feature_store,
    read_manifest,
    read_store_closes,
    shard_file_name,
)
from foxhunt.data.store.write import write_feature_store

__all__ = [
    "CACHE_DIR",
    "CLOSE",
    "FORMAT",
    "FORMAT_VERSION",
    "MANIFEST",
    "SHARD_ROW_GROUP",
    "Manifest",
    "ShardInfo",
    "check_store",
    "is_feature_store",
    "read_manifest",
    "read_store_closes",
    "shard_file_name",
    "write_feature_store",
]
