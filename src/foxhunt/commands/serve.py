"""``foxhunt serve``: live forecasts over HTTP (FastAPI on uvicorn), state saved on shutdown
and every ``--save-every`` seconds."""

from __future__ import annotations

import argparse
import logging
import socket
from pathlib import Path

from foxhunt.commands.options import add_engine_arg
from foxhunt.errors import InputError

log = logging.getLogger(__name__)


def add_parser(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser(
        "serve",
        help="serve live forecasts over HTTP: POST bars, GET forecasts (docs/inference.md)",
    )
    s.add_argument("--model", type=Path, required=True, help="model directory (fp32 or quantised)")
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default loopback)")
    s.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    s.add_argument(
        "--state",
        type=Path,
        default=None,
        help="stream state file: resumed at start when it exists, saved at shutdown and "
        "every --save-every seconds",
    )
    s.add_argument(
        "--save-every",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="with --state, also save the state after an update once this many seconds have "
        "passed since the last save, so a killed server loses at most that much (default 60; "
        "0: only at shutdown)",
    )
    s.add_argument(
        "--symbols",
        default=None,
        help="comma-separated symbols served (default: the training symbols)",
    )
    s.add_argument("--device", default="cpu", help="torch device (default cpu)")
    add_engine_arg(s)
    s.set_defaults(func=run)


def run(a: argparse.Namespace) -> None:
    try:
        import uvicorn
    except ImportError as e:
        raise InputError(
            "foxhunt serve needs fastapi and uvicorn: pip install 'foxhunt[serve]'"
        ) from e

    from foxhunt.infer.forecaster import Forecaster
    from foxhunt.infer.service import make_app
    from foxhunt.runtime import parse_device

    if not 0 < a.port < 65536:
        raise InputError(f"--port must be in 1..65535, got {a.port}")
    if a.save_every < 0:
        raise InputError(f"--save-every must be 0 or more seconds, got {a.save_every:g}")
    if a.state is not None and not a.state.parent.is_dir():
        raise InputError(
            f"--state {a.state}: its directory {a.state.parent} does not exist (the state is "
            "written there)"
        )
    _listenable(a.host, a.port)
    symbols = [s.strip() for s in a.symbols.split(",") if s.strip()] if a.symbols else None
    state = a.state if a.state is not None and a.state.exists() else None
    fc = Forecaster.load(
        a.model, symbols=symbols, device=parse_device(a.device), state=state, engine=a.engine
    )
    if not fc.incremental:
        raise InputError(
            f"--model {a.model}: its inputs need the bar-tail forecaster; serve needs the incremental one"
        )
    if state is not None:
        log.info("resumed %d symbols from %s", len(fc.symbols), state)
    app = make_app(fc, a.state, a.save_every)
    log.info("serving %s on http://%s:%d (engine %s)", a.model, a.host, a.port, fc.engine)
    uvicorn.run(app, host=a.host, port=a.port, log_level="warning")


def _listenable(host: str, port: int) -> None:
    """Refuse a port another process holds before the model loads (until session 54 the
    server said it was serving, then uvicorn's ``[Errno 98]`` and exit 3).

    Raises:
        InputError: the address cannot be bound.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind((host, port))
        except OSError as e:
            raise InputError(
                f"--port {port}: cannot listen on {host}:{port} ({e.strerror}: another server "
                "holds it?); choose another --port"
            ) from None
