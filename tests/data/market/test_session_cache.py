from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from session_arrays import session_arrays

from foxhunt.data.market import calendars
from foxhunt.data.market.session_cache import cache_dir, cache_path, cached_sessions

SPAN = ("2020-01-01", "2020-12-31")


_arrays = session_arrays


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


@pytest.mark.parametrize(
    "bad",
    [
        lambda a: (a[0], a[1][:-1], *a[2:]),  # lengths differ
        lambda a: (a[1], a[0], *a[2:]),  # opens after closes
        lambda a: (a[0][::-1], a[1][::-1], *a[2:]),  # not in time order
        lambda a: (a[0].astype(np.float64), *a[1:]),  # not int64 microseconds
        lambda a: tuple(x[:0] for x in a),  # no sessions
        lambda a: tuple(x[None] for x in a),  # not 1-D
    ],
)
def test_a_cache_file_that_is_not_sessions_is_recomputed_and_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: Callable
) -> None:
    monkeypatch.setenv("FOXHUNT_CACHE_DIR", str(tmp_path))
    path = cache_path("XNYS", SPAN)
    path.parent.mkdir(parents=True)
    fields = ("opens", "closes", "day", "day_open", "day_close")
    np.savez(path, **dict(zip(fields, bad(_arrays(3)), strict=True)))
    got = cached_sessions("XNYS", SPAN, lambda: _arrays(1))
    for a, b in zip(got, _arrays(1), strict=True):
        np.testing.assert_array_equal(a, b)
    again = cached_sessions("XNYS", SPAN, lambda: _arrays(2))  # the recomputed file is read back
    np.testing.assert_array_equal(again[0], _arrays(1)[0])


@pytest.mark.parametrize(
    "bad",
    [
        lambda a: tuple(x[:0] for x in a),  # an empty schedule
        lambda a: (a[1], a[0], *a[2:]),  # opens after closes
        lambda a: (a[0].astype(np.float64), *a[1:]),
    ],
)
def test_computed_sessions_that_are_not_well_formed_are_answered_but_not_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: Callable
) -> None:
    """What the library computes is checked before it is written: a file that the next call
    would refuse anyway is not written, and the next call computes again."""
    monkeypatch.setenv("FOXHUNT_CACHE_DIR", str(tmp_path))
    calls = []

    def compute() -> tuple[np.ndarray, ...]:
        calls.append(1)
        return bad(_arrays(1))

    got = cached_sessions("XNYS", SPAN, compute)
    for a, b in zip(got, bad(_arrays(1)), strict=True):
        np.testing.assert_array_equal(a, b)
    assert not cache_path("XNYS", SPAN).exists()
    assert not (tmp_path / "calendars").exists() or not list((tmp_path / "calendars").iterdir())
    cached_sessions("XNYS", SPAN, compute)
    assert len(calls) == 2
