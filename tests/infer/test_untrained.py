"""check_trained_symbols: symbols a model never saw are named in one warning, or refused with
``--strict``; training symbols the bars lack are named too; a run that records no symbols is
not checked."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from types import SimpleNamespace

import pytest

from foxhunt.artifacts.rundir import RunDir
from foxhunt.errors import InputError
from foxhunt.infer.untrained import check_trained_symbols


def _loaded(tmp_path: Path, symbols: list[str] | None) -> SimpleNamespace:
    if symbols is not None:
        (tmp_path / "run.json").write_text(json.dumps({"symbols": symbols}))
    return SimpleNamespace(run=RunDir(tmp_path))


def test_trained_symbols_pass_silently(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert check_trained_symbols(_loaded(tmp_path, ["NQ", "ES"]), ["ES", "NQ"]) == []
    assert caplog.records == []


def test_untrained_symbols_are_named_in_one_warning_and_returned(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    loaded = _loaded(tmp_path, ["NQ", "ES"])
    with caplog.at_level(logging.WARNING):
        assert check_trained_symbols(loaded, ["ES", "NQ", "YM", "CL"]) == ["CL", "YM"]
    assert [r.getMessage() for r in caplog.records] == [
        f"{tmp_path} was not trained on CL, YM (trained on ES, NQ): forecasts for them are "
        "extrapolation (--strict refuses them)"
    ]


def test_strict_refuses_them_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(InputError) as refused:
        check_trained_symbols(_loaded(tmp_path, ["ES"]), ["ES", "CL"], strict=True)
    assert str(refused.value) == (
        f"{tmp_path} was not trained on CL (trained on ES); --strict refuses untrained symbols"
    )
    assert check_trained_symbols(_loaded(tmp_path, ["ES"]), ["ES"], strict=True) == []


def test_training_symbols_the_bars_lack_are_named(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    trained = [f"S{i:02d}" for i in range(12)]
    with caplog.at_level(logging.WARNING):
        assert check_trained_symbols(_loaded(tmp_path, trained), ["S00"]) == []
    assert [r.getMessage() for r in caplog.records] == [
        "no bars of S01, S02, S03, S04, S05, S06, S07, S08, S09, S10, ... to score or "
        f"forecast (11 of the 12 symbols {tmp_path} was trained on)"
    ]
    caplog.clear()
    with caplog.at_level(logging.WARNING):  # no bars at all: nothing to say about coverage
        assert check_trained_symbols(_loaded(tmp_path, trained), []) == []
    assert caplog.records == []


def test_a_run_that_records_no_symbols_is_not_checked(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        assert check_trained_symbols(_loaded(tmp_path, None), ["ES", "CL"], strict=True) == []
    assert caplog.records == []
