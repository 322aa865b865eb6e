"""Behaviour of the on-disk cache of library trading calendars (``session_cache``) that the
mutation run found unchecked: the cache directory's precedence and exact default path
(``FOXHUNT_CACHE_DIR``, then ``XDG_CACHE_HOME``, then ``~/.cache``), the cache file's exact
name (the ``pandas_market_calendars`` version, ``none`` when it is missing, unsafe characters
replaced by ``_``), the atomic write (a ``.npz.tmp`` sibling renamed into place, nested folders
created, nothing left behind), a compute of the wrong arity refused, and an unreadable cache or
a failed write answered with the computed arrays."""

from __future__ import annotations

import os
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest
from session_arrays import session_arrays

from foxhunt.data.market import session_cache
from foxhunt.data.market.session_cache import cache_dir, cache_path, cached_sessions

SPAN = ("2020-01-01", "2020-12-31")
FIELDS = ("opens", "closes", "day", "day_open", "day_close")


_arrays = session_arrays


def _fake_version(installed: dict[str, str]) -> Callable[[str], str]:
    """A stand-in for ``importlib.metadata.version`` knowing only ``installed`` (names
    normalised as the real lookup does: case and ``-``/``_`` do not matter)."""

    def version(name: str) -> str:
        key = name.lower().replace("-", "_")
        if key in installed:
            return installed[key]
        raise metadata.PackageNotFoundError(name)

    return version


def _no_cache_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FOXHUNT_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)


# --- the cache directory ---------------------------------------------------------------------


def test_without_any_setting_the_cache_is_under_home_dot_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_cache_env(monkeypatch)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache_dir() == tmp_path / ".cache" / "foxhunt"
    assert cache_dir().is_absolute()


def test_empty_settings_fall_through_to_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FOXHUNT_CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "foxhunt"
    monkeypatch.setenv("XDG_CACHE_HOME", "")
    assert cache_dir() == tmp_path / "home" / ".cache" / "foxhunt"


def test_foxhunt_cache_dir_wins_over_xdg_and_home_and_is_used_as_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("FOXHUNT_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"  # no "foxhunt" appended


def test_the_default_cache_file_is_written_under_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_cache_env(monkeypatch)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(metadata, "version", _fake_version({"pandas_market_calendars": "5.5.0"}))
    cached_sessions("XNYS", SPAN, lambda: _arrays(0))
    expected = tmp_path / ".cache" / "foxhunt" / "calendars"
    assert [p.name for p in expected.iterdir()] == ["XNYS_2020-01-01_2020-12-31_pmc5.5.0.npz"]


# --- the cache file's name --------------------------------------------------------------------


def test_the_file_name_carries_the_installed_library_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOXHUNT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(metadata, "version", _fake_version({"pandas_market_calendars": "4.2.1"}))
    assert cache_path("XNYS", SPAN) == (
        tmp_path / "calendars" / "XNYS_2020-01-01_2020-12-31_pmc4.2.1.npz"
    )
    # a new library version is a new file, computed afresh
    monkeypatch.setattr(metadata, "version", _fake_version({"pandas_market_calendars": "4.3.0"}))
    assert cache_path("XNYS", SPAN).name == "XNYS_2020-01-01_2020-12-31_pmc4.3.0.npz"


def test_the_file_name_with_the_real_library_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOXHUNT_CACHE_DIR", str(tmp_path))
    version = metadata.version("pandas_market_calendars")
    assert cache_path("XNYS", SPAN).name == f"XNYS_2020-01-01_2020-12-31_pmc{version}.npz"


def test_without_the_library_the_version_is_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOXHUNT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(metadata, "version", _fake_version({}))
    assert cache_path("XNYS", SPAN) == (
        tmp_path / "calendars" / "XNYS_2020-01-01_2020-12-31_pmcnone.npz"
    )


def test_unsafe_characters_become_one_underscore_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOXHUNT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(
        metadata, "version", _fake_version({"pandas_market_calendars": "5.0+local/dev"})
    )
    path = cache_path("CME Globex/Crypto:x", ("2020 01 01", "2020-12-31"))
    assert path == tmp_path / "calendars" / (
        "CME_Globex_Crypto_x_2020_01_01_2020-12-31_pmc5.0_local_dev.npz"
    )
    # letters, digits, "_", "." and "-" are kept as they are
    kept = cache_path("Ab9_.-z", SPAN)
    assert kept.name == "Ab9_.-z_2020-01-01_2020-12-31_pmc5.0_local_dev.npz"


# --- the write --------------------------------------------------------------------------------


def test_the_write_renames_a_npz_tmp_sibling_into_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOXHUNT_CACHE_DIR", str(tmp_path))
    renames: list[tuple[Path, Path]] = []
    real_replace = os.replace

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        renames.append((Path(src), Path(dst)))
        assert Path(src).exists() and not Path(dst).exists()  # written first, then renamed
        real_replace(src, dst)

    monkeypatch.setattr(session_cache.os, "replace", replace)
    got = cached_sessions("XNYS", SPAN, lambda: _arrays(4))
    path = cache_path("XNYS", SPAN)
    assert len(renames) == 1
    src, dst = renames[0]
    assert dst == path
    assert src.parent == path.parent  # same folder, so the rename is atomic
    assert src.name.endswith(".npz.tmp") and src != path
    assert not src.exists()
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]
    with np.load(path) as z:
        assert sorted(z.files) == sorted(FIELDS)
        for field, want in zip(FIELDS, got, strict=True):
            np.testing.assert_array_equal(z[field], want)


def test_nested_missing_cache_folders_are_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "a" / "b" / "c"
    monkeypatch.setenv("FOXHUNT_CACHE_DIR", str(root))
    calls: list[int] = []

    def compute() -> tuple[np.ndarray, ...]:
        calls.append(1)
        return _arrays(5)

    cached_sessions("XNYS", SPAN, compute)
    path = cache_path("XNYS", SPAN)
    assert path.parent == root / "calendars" and path.is_file()
    assert list(path.parent.glob("*.tmp")) == []
    again = cached_sessions("XNYS", SPAN, compute)
    assert len(calls) == 1
    np.testing.assert_array_equal(again[4], _arrays(5)[4])


def test_a_compute_of_the_wrong_arity_is_refused_and_not_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOXHUNT_CACHE_DIR", str(tmp_path))
    with pytest.raises(ValueError):
        cached_sessions("XNYS", SPAN, lambda: _arrays(6)[:4])
    with pytest.raises(ValueError):
        cached_sessions("XNYS", SPAN, lambda: (*_arrays(6), _arrays(7)[0]))
    assert not cache_path("XNYS", SPAN).exists()
    assert not list(cache_path("XNYS", SPAN).parent.glob("*.tmp"))  # nor a temp file


def test_a_failed_rename_still_returns_the_computed_arrays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOXHUNT_CACHE_DIR", str(tmp_path))

    def replace(src: str, dst: str) -> None:
        raise PermissionError(13, "denied", dst)

    monkeypatch.setattr(session_cache.os, "replace", replace)
    got = cached_sessions("XNYS", SPAN, lambda: _arrays(8))
    for a, b in zip(got, _arrays(8), strict=True):
        np.testing.assert_array_equal(a, b)
    assert not cache_path("XNYS", SPAN).exists()
    assert not list(cache_path("XNYS", SPAN).parent.glob("*.tmp"))  # the temp file is removed


# --- the read ---------------------------------------------------------------------------------


def test_an_unreadable_cache_entry_is_recomputed_and_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOXHUNT_CACHE_DIR", str(tmp_path))
    path = cache_path("XNYS", SPAN)
    path.mkdir(parents=True)  # a folder where the file should be: neither read nor replaced
    got = cached_sessions("XNYS", SPAN, lambda: _arrays(9))
    for a, b in zip(got, _arrays(9), strict=True):
        np.testing.assert_array_equal(a, b)
    assert path.is_dir()


def test_a_cache_file_missing_a_field_is_recomputed_and_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOXHUNT_CACHE_DIR", str(tmp_path))
    path = cache_path("XNYS", SPAN)
    path.parent.mkdir(parents=True)
    with path.open("wb") as f:
        np.savez(f, opens=_arrays(1)[0], closes=_arrays(1)[1])
    got = cached_sessions("XNYS", SPAN, lambda: _arrays(10))
    np.testing.assert_array_equal(got[3], _arrays(10)[3])
    again = cached_sessions("XNYS", SPAN, lambda: _arrays(11))
    for a, b in zip(again, _arrays(10), strict=True):
        np.testing.assert_array_equal(a, b)
