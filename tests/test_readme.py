"""The README runs as written: every ``foxhunt`` command of its usage block, in order, through
the CLI entry, and its notebook example, in a fresh directory.

What the test changes, and only that: ``data demo --bars N`` writes 1,000 bars, and the presets
are shrunk (a tiny network, two optimizer steps) so the whole block runs in about a minute on a
quiet 2-core machine. A command needing what this machine lacks (CUDA; the ``onnx`` or ``arch``
packages) is skipped, and only that one.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

import polars as pl
import pytest

from foxhunt import config
from foxhunt.cli import main

README = Path(__file__).resolve().parents[1] / "README.md"
BARS = "1000"


def _section(title: str) -> str:
    text = README.read_text()
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.DOTALL)


def usage_commands() -> list[list[str]]:
    """The argument lists of every ``foxhunt`` line of the usage section's shell blocks."""
    commands = []
    for block in _blocks(_section("Usage"), "bash"):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words:
                assert words[0] == "foxhunt", f"not a foxhunt command: {line}"
                commands.append(words[1:])
    return commands


def _tiny(make: config.RunConfig) -> config.RunConfig:
    return make.replace(
        model={"hidden": 8, "n_heads": 2, "encoder_length": 12, "horizon": 3, "variable_width": 2},
        train={"batch_size": 8, "max_steps": 2, "warmup_steps": 1, "validation_batch_size": 256},
    )


@pytest.fixture
def shrunk_presets(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name, make in list(config.PRESETS.items()):
        monkeypatch.setitem(config.PRESETS, name, lambda make=make: _tiny(make()))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _needs(argv: list[str]) -> str | None:
    """Why ``argv`` cannot run here, or None."""
    if "--device" in argv and "cuda" in argv[argv.index("--device") + 1]:
        return "CUDA"
    if argv[0] == "export" and importlib.util.find_spec("onnx") is None:
        return "the onnx package"
    if argv[:2] == ["data", "index-daily"] and importlib.util.find_spec("arch") is None:
        return "the arch package"
    return None


def _arg(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv else None


def test_every_input_of_the_usage_block_is_written_by_a_line_above_it() -> None:
    commands = usage_commands()
    assert len(commands) >= 15
    written: set[str] = set()
    for argv in commands:
        reads = (
            [] if argv[:2] == ["data", "demo"] else [_arg(argv, "--bars"), _arg(argv, "--model")]
        )
        reads += [argv[2]] if argv[:2] == ["data", "inspect"] else []
        reads += [_arg(argv, "--follow")]
        for path in filter(None, reads):
            assert path in written, f"foxhunt {' '.join(argv)}: {path} is not written above"
        written.add(_arg(argv, "--out") or "")
    assert "ES_FUT.parquet" in written


@pytest.mark.slow
def test_every_usage_command_runs(shrunk_presets: Path) -> None:
    skipped = []
    for argv in usage_commands():
        if argv[:2] == ["data", "demo"]:
            argv[argv.index("--bars") + 1] = BARS
        if (why := _needs(argv)) is not None:
            skipped.append(f"{' '.join(argv)}: needs {why}")
            continue
        assert main(argv) == 0, f"foxhunt {' '.join(argv)}"
    for out in ("ES_FUT.parquet", "forecast.parquet", "runs/es/config.json", "runs/es_int8"):
        assert (shrunk_presets / out).exists(), out
    fc = pl.read_parquet(shrunk_presets / "forecast.parquet")
    assert "target_ts" in fc.columns and fc.height > 0
    assert len(skipped) <= 2, skipped  # at most export and index-daily, where absent


@pytest.mark.slow
def test_the_notebook_example_returns_forecasts_with_target_times(shrunk_presets: Path) -> None:
    (code,) = _blocks(_section("Usage"), "python")
    assert len(code.strip().splitlines()) <= 8
    assert main(["data", "demo", "--bars", BARS, "--seed", "0", "--out", "ES_FUT.parquet"]) == 0
    scope: dict[str, object] = {}
    exec(compile(code, "README.md", "exec"), scope)  # noqa: S102 - our own README
    forecast = scope["forecast"]
    assert isinstance(forecast, pl.DataFrame) and forecast.height > 0
    assert (forecast["target_ts"] > forecast["origin_ts"]).all()
    assert scope["scores"]["split"] == "test split of the training bars"  # type: ignore[index]
    assert (shrunk_presets / "runs/notebook/config.json").is_file()
    assert scope["latest"].height == 3  # type: ignore[attr-defined]
