"""``foxhunt export``, ``foxhunt serve`` and the quantize bench's child entry point, in process
with their heavy work replaced by recorders: what each passes on, prints and refuses (the
real work is tested where it lives; the subprocess tests of these commands are invisible to
``make mutate``)."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from tests.commands.conftest import ESCAPE

from foxhunt.cli import build_parser
from foxhunt.commands import export as export_cmd
from foxhunt.commands import qbench
from foxhunt.commands import serve as serve_cmd
from foxhunt.errors import InputError


def _args(argv: list[str]) -> argparse.Namespace:
    return build_parser().parse_args(argv)


# --- foxhunt export ---------------------------------------------------------------------------


def test_export_passes_the_model_and_prints_what_it_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[tuple[Any, ...]] = []

    def fake_export(model: Path, out: Path, fmt: str) -> dict[str, Any]:
        print("exporter chatter on stdout")
        calls.append((model, out, fmt))
        shapes = {"static": [1, 5], "historical": [1, 32, 210], "known": [1, 42, 10]}
        return {
            "out": str(out),
            "bytes": 1_234_567,
            "shapes": shapes | {"quantiles": [1, 10, 9]},
            "max_abs_diff": 3.25e-7,
        }

    monkeypatch.setattr("foxhunt.infer.export.export_model", fake_export)
    monkeypatch.setenv("COLUMNS", "300")
    a = _args(["export", "--model", str(tmp_path / "run"), "--out", str(tmp_path / "m.onnx")])
    assert a.func is export_cmd.run and a.format == "onnx"
    with caplog_debug():
        a.func(a)
    assert calls == [(tmp_path / "run", tmp_path / "m.onnx", "onnx")]
    out = capsys.readouterr().out
    assert "exporter chatter" not in out
    assert out == (
        f"wrote {tmp_path / 'm.onnx'} (1.23 MB; inputs static [1, 5], historical [1, 32, 210], "
        "known [1, 42, 10] -> quantiles [1, 10, 9], scaled); onnxruntime matches PyTorch: max abs "
        "diff 3.25e-07\n"
    )


class caplog_debug:  # noqa: N801 - a small context manager, named as it reads
    """foxhunt's loggers at DEBUG for the block (the exporter's chatter goes to the log)."""

    def __enter__(self) -> None:
        self.level = logging.getLogger("foxhunt").level
        logging.getLogger("foxhunt").setLevel(logging.DEBUG)

    def __exit__(self, *exc: object) -> None:
        logging.getLogger("foxhunt").setLevel(self.level)


def test_export_keeps_the_exporters_chatter_for_the_debug_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def fake_export(model: Path, out: Path, fmt: str) -> dict[str, Any]:
        print("pass 1 of the exporter")
        shapes = {k: [1] for k in ("static", "historical", "known", "quantiles")}
        return {"out": str(out), "bytes": 1, "shapes": shapes, "max_abs_diff": 0.0}

    monkeypatch.setattr("foxhunt.infer.export.export_model", fake_export)
    a = _args(["export", "--model", str(tmp_path / "run"), "--out", str(tmp_path / "m.onnx")])
    with caplog.at_level(logging.DEBUG, logger="foxhunt.commands.export"):
        a.func(a)
    assert "pass 1 of the exporter" in caplog.text


def test_export_refuses_to_write_over_the_model(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text("{}")
    a = _args(["export", "--model", str(run), "--out", str(run / "config.json")])
    with pytest.raises(InputError) as e:
        a.func(a)
    assert str(e.value) == (
        f"--out {run / 'config.json'} is the input --model {run / 'config.json'}; write the "
        "output somewhere else"
    )


def test_export_prints_paths_as_written_on_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No rich markup read into a path (``[v2]``), no wrapping at the terminal's width."""
    out = tmp_path / "[bold]v2[/bold]" / "m.onnx"

    def fake_export(model: Path, out: Path, fmt: str) -> dict[str, Any]:
        shapes = {k: [1] for k in ("static", "historical", "known", "quantiles")}
        return {"out": str(out), "bytes": 2_000_000, "shapes": shapes, "max_abs_diff": 0.0}

    monkeypatch.setattr("foxhunt.infer.export.export_model", fake_export)
    monkeypatch.setenv("COLUMNS", "40")
    a = _args(["export", "--model", str(tmp_path / "run"), "--out", str(out)])
    a.func(a)
    printed = capsys.readouterr().out
    assert printed.count("\n") == 1 and f"wrote {out} (2.00 MB;" in printed


# --- foxhunt serve ----------------------------------------------------------------------------


class _FakeForecaster:
    loads: list[dict[str, Any]] = []

    def __init__(self, incremental: bool) -> None:
        self.incremental = incremental
        self.symbols = ["ES", "NQ"]
        self.engine = "compiled"

    @classmethod
    def loader(cls, incremental: bool = True) -> Any:
        def load(model: Path, **kw: Any) -> _FakeForecaster:
            cls.loads.append({"model": model, **kw})
            return cls(incremental)

        return load


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """uvicorn, the app and the forecaster replaced by recorders."""
    seen: dict[str, Any] = {}
    _FakeForecaster.loads = []
    monkeypatch.setitem(
        sys.modules,
        "uvicorn",
        types.SimpleNamespace(run=lambda app, **kw: seen.update(app=app, run=kw)),
    )
    monkeypatch.setattr("foxhunt.infer.forecaster.Forecaster.load", _FakeForecaster.loader())

    def make_app(fc: Any, state: Path | None, save_every: float | None = None) -> str:
        seen.update(fc=fc, state=state, save_every=save_every)
        return "the app"

    monkeypatch.setattr("foxhunt.infer.service.make_app", make_app)
    monkeypatch.setattr(
        serve_cmd, "_listenable", lambda host, port: seen.update(probe=(host, port))
    )
    return seen


def test_serve_refuses_a_port_another_process_holds(tmp_path: Path) -> None:
    """Before the model loads, in one line (until session 54 the server said it was serving,
    then uvicorn's ``[Errno 98]``, exit 3)."""
    import socket

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        a = _args(["serve", "--model", str(tmp_path / "run"), "--port", str(port)])
        with pytest.raises(InputError) as refused:
            serve_cmd.run(a)
    assert str(refused.value) == (
        f"--port {port}: cannot listen on 127.0.0.1:{port} (Address already in use: another "
        "server holds it?); choose another --port"
    )
    serve_cmd._listenable("127.0.0.1", port)  # free once closed


def test_serve_loads_listens_and_resumes(
    tmp_path: Path, served: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    import torch

    state = tmp_path / "state.npz"
    argv = [
        "serve",
        "--model",
        str(tmp_path / "run"),
        "--symbols",
        " ES, ,NQ ",
        "--state",
        str(state),
    ]
    a = _args(argv)
    assert a.func is serve_cmd.run and (a.host, a.port, a.device) == ("127.0.0.1", 8080, "cpu")
    with caplog.at_level(logging.INFO, logger="foxhunt.commands.serve"):
        a.func(a)
    (load,) = _FakeForecaster.loads
    assert load == {
        "model": tmp_path / "run",
        "symbols": ["ES", "NQ"],
        "device": torch.device("cpu"),
        "state": None,  # not there yet: a fresh start, saved there at shutdown
        "engine": a.engine,
    }
    assert served["state"] == state and served["app"] == "the app"
    assert served["save_every"] == 60.0
    assert isinstance(served["fc"], _FakeForecaster)  # the app serves the loaded forecaster
    assert served["run"] == {"host": "127.0.0.1", "port": 8080, "log_level": "warning"}
    assert f"serving {tmp_path / 'run'} on http://127.0.0.1:8080 (engine compiled)" in caplog.text
    assert "resumed" not in caplog.text
    state.write_bytes(b"saved")
    a = _args([*argv, "--host", "0.0.0.0", "--port", "9000"])
    with caplog.at_level(logging.INFO, logger="foxhunt.commands.serve"):
        a.func(a)
    assert _FakeForecaster.loads[-1]["state"] == state
    assert f"resumed 2 symbols from {state}" in caplog.text
    assert served["run"] == {"host": "0.0.0.0", "port": 9000, "log_level": "warning"}


def test_serve_refuses_a_state_in_a_missing_directory_and_a_negative_save_every(
    tmp_path: Path, served: dict[str, Any]
) -> None:
    """Found at the start, not at shutdown with every bar of the session lost."""
    state = tmp_path / "nodir" / "x.npz"
    a = _args(["serve", "--model", str(tmp_path / "run"), "--state", str(state)])
    with pytest.raises(InputError) as e:
        a.func(a)
    assert str(e.value) == (
        f"--state {state}: its directory {tmp_path / 'nodir'} does not exist (the state is "
        "written there)"
    )
    a = _args(["serve", "--model", str(tmp_path / "run"), "--save-every", "-1"])
    with pytest.raises(InputError, match=r"^--save-every must be 0 or more seconds, got -1$"):
        a.func(a)
    assert _FakeForecaster.loads == []
    a = _args(["serve", "--model", str(tmp_path / "run"), "--save-every", "0"])
    a.func(a)
    assert served["save_every"] == 0.0


def test_serve_defaults_to_the_training_symbols(tmp_path: Path, served: dict[str, Any]) -> None:
    a = _args(["serve", "--model", str(tmp_path / "run")])
    a.func(a)
    assert _FakeForecaster.loads[-1]["symbols"] is None
    assert _FakeForecaster.loads[-1]["state"] is None and served["state"] is None


@pytest.mark.parametrize("port", ["0", "65536", "-1"])
def test_serve_refuses_a_port_out_of_range(
    tmp_path: Path, served: dict[str, Any], port: str
) -> None:
    a = _args(["serve", "--model", str(tmp_path / "run"), "--port", port])
    with pytest.raises(InputError) as e:
        a.func(a)
    assert str(e.value) == f"--port must be in 1..65535, got {port}"
    assert _FakeForecaster.loads == []


def test_serve_accepts_the_edges_of_the_port_range(tmp_path: Path, served: dict[str, Any]) -> None:
    for port in ("1", "65535"):
        a = _args(["serve", "--model", str(tmp_path / "run"), "--port", port])
        a.func(a)
        assert served["run"]["port"] == int(port)


def test_serve_refuses_a_model_without_the_incremental_forecaster(
    tmp_path: Path, served: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        "foxhunt.infer.forecaster.Forecaster.load", _FakeForecaster.loader(incremental=False)
    )
    a = _args(["serve", "--model", str(tmp_path / "run")])
    with pytest.raises(InputError) as e:
        a.func(a)
    assert str(e.value) == (
        f"--model {tmp_path / 'run'}: its inputs need the bar-tail forecaster; serve needs the "
        "incremental one"
    )
    assert "app" not in served


def test_serve_without_uvicorn_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # import fails
    a = _args(["serve", "--model", str(tmp_path / "run")])
    with pytest.raises(InputError) as e:
        a.func(a)
    assert str(e.value) == "foxhunt serve needs fastapi and uvicorn: pip install 'foxhunt[serve]'"


# --- python -m foxhunt.commands.qbench --------------------------------------------------------


@pytest.fixture
def measured(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    seen: dict[str, Any] = {"threads": [], "tuned": 0}

    def compare_preset(preset: str, precision: str, mode: str, **kw: Any) -> dict[str, Any]:
        seen["preset"] = (preset, precision, mode, kw)
        return {"compared": preset}

    def measure_here(model: Path, batches: list[int], repeats: int) -> dict[str, Any]:
        seen["model"] = (model, batches, repeats)
        return {"measured": str(model)}

    def tune() -> None:
        seen["tuned"] += 1

    monkeypatch.setattr(qbench, "compare_preset", compare_preset)
    monkeypatch.setattr(qbench, "measure_here", measure_here)
    monkeypatch.setattr("foxhunt.memory.allocator.tune_cpu_allocator", tune)
    monkeypatch.setattr(qbench.torch, "set_num_threads", seen["threads"].append)
    return seen


def test_qbench_measures_a_model_with_its_defaults(
    tmp_path: Path, measured: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert qbench.main(["--model", str(tmp_path)]) == 0
    assert measured["model"] == (tmp_path, [1, 32], 10)
    assert measured["threads"] == [1] and measured["tuned"] == 1
    assert capsys.readouterr().out == json.dumps({"measured": str(tmp_path)}) + "\n"
    argv = ["--model", str(tmp_path), "--batch-size", "4", "--batch-size", "8", "--repeats", "0"]
    assert qbench.main([*argv, "--num-threads", "0"]) == 0
    assert measured["model"] == (tmp_path, [4, 8], 1)  # at least one timed pass
    assert measured["threads"] == [1]  # 0: torch's own choice, not set


def test_qbench_compares_a_preset(
    measured: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert qbench.main(["--preset", "demo", "--precision", "bf16", "--repeats", "3"]) == 0
    assert measured["preset"] == ("demo", "bf16", "dynamic", {"repeats": 3, "num_threads": 1})
    assert json.loads(capsys.readouterr().out) == {"compared": "demo"}
    assert qbench.main(["--preset", "demo", "--num-threads", "2", "--repeats", "-5"]) == 0
    assert measured["preset"] == ("demo", "int8", "dynamic", {"repeats": 1, "num_threads": 2})
    assert measured["threads"][-1] == 2


def test_qbench_refusals(
    measured: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert qbench.main(["--preset", "demo", "--mode", "static"]) == 2
    assert capsys.readouterr().err == (
        "error: --preset measures random weights; static mode needs calibration\n"
    )
    assert "preset" not in measured

    def refuse(*a: Any, **kw: Any) -> dict[str, Any]:
        raise InputError("no such preset 'big'")

    monkeypatch.setattr(qbench, "compare_preset", refuse)
    assert qbench.main(["--preset", "big"]) == 2
    captured = capsys.readouterr()
    assert captured.err == "error: no such preset 'big'\n" and captured.out == ""
    with pytest.raises(SystemExit):
        qbench.main([])  # --model or --preset is required
    with pytest.raises(SystemExit):
        qbench.main(["--model", "x", "--preset", "demo"])  # not both


# --- foxhunt (the entry point) ----------------------------------------------------------------


def test_main_sets_foxhuntss_log_level_and_returns_the_commands_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from foxhunt import cli

    seen: list[int] = []

    def command(a: argparse.Namespace) -> int:
        seen.append(logging.getLogger("foxhunt").level)
        return 3

    parser = build_parser()
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    monkeypatch.setattr(
        parser, "parse_args", lambda argv: argparse.Namespace(verbose=False, func=command)
    )
    assert cli.main([]) == 3
    monkeypatch.setattr(
        parser, "parse_args", lambda argv: argparse.Namespace(verbose=True, func=command)
    )
    assert cli.main([]) == 3
    assert seen == [logging.INFO, logging.DEBUG]


def _main_interrupted(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """``foxhunt.cli`` whose parsed command raises KeyboardInterrupt (a Ctrl-C mid-run)."""
    from foxhunt import cli

    def interrupted(a: argparse.Namespace) -> None:
        raise KeyboardInterrupt

    parser = build_parser()
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    monkeypatch.setattr(
        parser, "parse_args", lambda argv: argparse.Namespace(verbose=False, func=interrupted)
    )
    return cli


def test_main_on_an_interrupt_says_so_and_exits_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cli = _main_interrupted(monkeypatch)
    assert cli.main([]) == 130
    captured = capsys.readouterr()
    assert captured.err == "foxhunt: interrupted\n" and captured.out == ""


def test_version_and_a_missing_command(capsys: pytest.CaptureFixture[str]) -> None:
    from foxhunt import __version__
    from foxhunt.cli import main

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out == f"foxhunt {__version__}\n"
    with pytest.raises(SystemExit) as e:
        main([])
    assert e.value.code == 2
    assert "the following arguments are required: COMMAND" in capsys.readouterr().err


def test_an_interrupted_console_script_ignores_a_further_ctrl_c(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second Ctrl-C that lands after the run stopped on the first used to kill the exiting
    process by the signal (exit -2, not 130); only the console script (no argv) ignores it."""
    import signal

    cli = _main_interrupted(monkeypatch)
    before = signal.getsignal(signal.SIGINT)
    try:
        assert cli.main([]) == 130
        assert signal.getsignal(signal.SIGINT) is before  # called with argv: left alone
        assert cli.main() == 130
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)


def test_export_on_a_terminal_spins_on_stderr_and_prints_its_line_plain(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    terminal: None,
) -> None:
    """On a colour terminal the status spinner goes to stderr, naming the model, and the
    summary line has no highlighting (numbers and paths as written, no escape codes); a size
    in MB is bytes / 10^6 (10^10 bytes: 10000.00, where 10^6 + 1 would print 9999.99)."""

    def fake_export(model: Path, out: Path, fmt: str) -> dict[str, Any]:
        shapes = {k: [1, 2] for k in ("static", "historical", "known", "quantiles")}
        return {"out": str(out), "bytes": 10**10, "shapes": shapes, "max_abs_diff": 1.5e-6}

    monkeypatch.setattr("foxhunt.infer.export.export_model", fake_export)
    a = _args(["export", "--model", str(tmp_path / "run"), "--out", str(tmp_path / "m.onnx")])
    a.func(a)
    streams = capsys.readouterr()
    assert ESCAPE.search(streams.out) is None, streams.out
    assert streams.out.startswith(f"wrote {tmp_path / 'm.onnx'} (10000.00 MB; inputs static [1, 2]")
    assert streams.out.endswith("max abs diff 1.50e-06\n")
    assert ESCAPE.search(streams.err)
    spun = "".join(streams.err.split())  # the status line wraps at 60 columns
    assert f"exporting{tmp_path / 'run'}toONNX" in spun
