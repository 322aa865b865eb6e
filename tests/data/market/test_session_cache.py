from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from foxhunt.data.market import calendars
from foxhunt.data.market.session_cache import cache_dir, cache_path, cached_sessions

SPAN = ("2020-01-01", "2020-12-31")


def _arrays(seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    return tuple(np.sort(rng.integers(0, 10**12, 7)) for _ in range(5))


def test_the_first_call_computes_and_writes_later_ones_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOXHUNT_CACHE_DIR", str(tmp_path))
    calls = []

    def compute() -> tuple[np.ndarray, ...]:
        calls.append(1)
        return _arrays(0)

    first = cached_sessions("CME_Equity", SPAN, compute)
    second = cached_sessions("CME_Equity", SPAN, compute)
    assert len(calls) == 1
    for a, b, c in zip(first, second, _arrays(0), strict=True):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, c)
    path = cache_path("CME_Equity", SPAN)
    assert path.parent == tmp_path / "calendars" and path.exists()
    assert "CME_Equity_2020-01-01_2020-12-31_pmc" in path.name
    assert list(path.parent.glob("*.tmp")) == []  # written to a temporary file, then renamed
    # another span or source is another file
    cached_sessions("CME_Equity", ("2020-01-01", "2021-12-31"), compute)
    cached_sessions("CME Globex Crypto", SPAN, compute)
    assert len(calls) == 3 and len(list(path.parent.glob("*.npz"))) == 3


def test_a_damaged_cache_file_is_recomputed_and_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOXHUNT_CACHE_DIR", str(tmp_path))
    path = cache_path("XNYS", SPAN)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not an npz")
    got = cached_sessions("XNYS", SPAN, lambda: _arrays(1))
    np.testing.assert_array_equal(got[2], _arrays(1)[2])
    again = cached_sessions("XNYS", SPAN, lambda: _arrays(2))  # now read back, not recomputed
    np.testing.assert_array_equal(again[2], _arrays(1)[2])


def test_an_unwritable_cache_still_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache directory would be")
    monkeypatch.setenv("FOXHUNT_CACHE_DIR", str(blocker))
    got = cached_sessions("XNYS", SPAN, lambda: _arrays(3))
    np.testing.assert_array_equal(got[0], _arrays(3)[0])


def test_the_default_cache_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FOXHUNT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "foxhunt"


def test_library_sessions_from_the_cache_equal_the_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOXHUNT_CACHE_DIR", str(tmp_path))
    calendars.sessions.cache_clear()
    try:
        written = calendars.sessions("cme_equity")
        calendars.sessions.cache_clear()
        read = calendars.sessions("cme_equity")
    finally:
        calendars.sessions.cache_clear()
    direct = calendars._library_sessions("CME_Equity")
    assert isinstance(read, calendars.Sessions)
    for a, b, c in zip(written, read, direct, strict=True):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, c)
        assert b.dtype == np.int64
