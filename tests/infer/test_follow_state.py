"""The follower's record (``OUT.follow.json``): what is saved, read back and refused."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from foxhunt.errors import InputError
from foxhunt.infer.follow_state import MAX_ERRORS, FollowState, sidecar_path
from foxhunt.infer.screen import REASONS, Reject

T = datetime(2024, 1, 5, 13, 35, tzinfo=UTC)
T_US = 1_704_461_700_000_000  # T in microseconds since 1970 (UTC)


def test_sidecar_sits_beside_the_output() -> None:
    assert sidecar_path(Path("runs/f.parquet")) == Path("runs/f.parquet.follow.json")


def test_a_missing_record_is_a_fresh_one(tmp_path: Path) -> None:
    source = tmp_path / "ES.csv"
    state = FollowState.open(tmp_path / "f.follow.json", source, "bytes")
    assert (state.source, state.unit, state.position, state.bars) == (
        str(source.resolve()),
        "bytes",
        0,
        0,
    )
    assert state.skipped == dict.fromkeys(REASONS, 0) and state.last_origin == {}
    assert FollowState.open(None, source, "rows").path is None


def test_saved_record_reads_back_exactly(tmp_path: Path) -> None:
    path, source = tmp_path / "f.follow.json", tmp_path / "ES.csv"
    state = FollowState.open(path, source, "bytes")
    state.position, state.bars, state.forecast_rows = 183_342, 2_291, 40
    state.last_origin = {"NQ": T_US + 1, "ES": T_US}
    state.record(Reject(2280, "duplicate", "same time"))
    state.save()
    saved = json.loads(path.read_text())
    assert saved["last_origin"] == {
        "ES": "2024-01-05T13:35:00+00:00",
        "NQ": "2024-01-05T13:35:00.000001+00:00",
    }
    assert list(saved["last_origin"]) == ["ES", "NQ"]  # sorted
    assert saved["last_errors"] == [{"line": 2280, "reason": "duplicate", "detail": "same time"}]
    assert saved["skipped"]["duplicate"] == 1 and saved["source"] == str(source.resolve())
    back = FollowState.open(path, source, "bytes")
    assert back == state


def test_naive_origin_times_read_as_utc(tmp_path: Path) -> None:
    path, source = tmp_path / "f.follow.json", tmp_path / "ES.csv"
    record = {"source": str(source.resolve()), "unit": "bytes", "position": 7, "last_origin": {}}
    path.write_text(json.dumps(record | {"last_origin": {"ES": "2024-01-05T13:35:00"}}))
    state = FollowState.open(path, source, "bytes")
    assert state.last_origin == {"ES": T_US}
    assert isinstance(state.last_origin["ES"], int)
    # the optional counters default to zero
    assert (state.bars, state.forecast_rows, state.last_errors) == (0, 0, [])
    assert state.skipped == dict.fromkeys(REASONS, 0)
    path.write_text(json.dumps(record | {"last_origin": {"ES": "2024-01-05T14:35:00+01:00"}}))
    assert FollowState.open(path, source, "bytes").last_origin == {"ES": T_US}


@pytest.mark.parametrize(
    "broken",
    [
        {"unit": "bytes", "position": 1, "last_origin": {}},  # no source
        {"source": "S", "unit": "bytes", "last_origin": {}},  # no position
        {"source": "S", "unit": "bytes", "position": "x", "last_origin": {}},
        {"source": "S", "unit": "bytes", "position": 1, "last_origin": {"ES": "soon"}},
        {"source": "S", "unit": "bytes", "position": 1, "last_origin": []},
    ],
)
def test_a_corrupt_record_is_refused_by_name(tmp_path: Path, broken: dict) -> None:
    path, source = tmp_path / "f.follow.json", tmp_path / "ES.csv"
    broken = {k: (str(source.resolve()) if v == "S" else v) for k, v in broken.items()}
    path.write_text(json.dumps(broken))
    with pytest.raises(InputError, match=r"f\.follow\.json: follow record is corrupt"):
        FollowState.open(path, source, "bytes")


def test_a_record_of_another_file_or_unit_is_refused(tmp_path: Path) -> None:
    path, source = tmp_path / "f.follow.json", tmp_path / "ES.csv"
    FollowState.open(path, source, "bytes").save()
    with pytest.raises(InputError, match=r"follow record is for .*ES\.csv, not .*NQ\.csv; use"):
        FollowState.open(path, tmp_path / "NQ.csv", "bytes")
    with pytest.raises(InputError, match="follow record is for"):
        FollowState.open(path, source, "rows")


def test_record_counts_and_keeps_the_newest_errors(tmp_path: Path) -> None:
    state = FollowState.open(None, tmp_path / "ES.parquet", "rows")
    for k in range(MAX_ERRORS + 5):
        state.record(Reject(k, REASONS[k % len(REASONS)], f"bad {k}"))
    assert sum(state.skipped.values()) == MAX_ERRORS + 5
    assert state.skipped["malformed"] == 5 and state.skipped["out_of_order"] == 5
    assert len(state.last_errors) == MAX_ERRORS
    assert state.last_errors[0] == {"row": 5, "reason": REASONS[0], "detail": "bad 5"}
    assert state.last_errors[-1]["row"] == MAX_ERRORS + 4
    state.save()  # no path: nothing written
    assert list(tmp_path.iterdir()) == []


def test_a_record_that_is_not_json_is_named(tmp_path: Path) -> None:
    path = tmp_path / "f.follow.json"
    path.write_text('{"source": ')  # a torn write (the record is written atomically, but)
    with pytest.raises(InputError, match=r"f\.follow\.json: follow record is corrupt \(not valid"):
        FollowState.open(path, tmp_path / "ES.csv", "bytes")


def test_follow_refuses_a_negative_wait_or_no_polls_before_reading_anything(
    tmp_path: Path,
) -> None:
    from foxhunt.infer.follow import follow_path

    out = tmp_path / "f.parquet"
    with pytest.raises(InputError, match=r"^--poll-seconds must be >= 0, got -1\.0$"):
        follow_path(tmp_path / "run", tmp_path / "ES.csv", out, poll_seconds=-1.0)
    with pytest.raises(InputError, match=r"^--max-polls must be >= 1, got 0$"):
        follow_path(tmp_path / "run", tmp_path / "ES.csv", out, max_polls=0)
    assert list(tmp_path.iterdir()) == []
