"""Ctrl-C and SIGTERM during training: the first asks the loop to stop cleanly after the
current optimizer step (complete epochs stay on disk, ``--resume`` continues); a second aborts
at once."""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Iterator
from typing import Any

log = logging.getLogger(__name__)


@contextlib.contextmanager
def stop_on_signals(stop: threading.Event) -> Iterator[None]:
    """First SIGINT/SIGTERM: set ``stop`` (the loop ends cleanly); a second: stop at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        log.warning(
            "%s: stopping after this step (again to abort now)", signal.Signals(signum).name
        )

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back while the block runs; one that arrived meanwhile is
    handled, by the handler in force before, as the block ends.

    For the import of a C extension after the loop (matplotlib's, for the report): a second
    Ctrl-C that raised ``KeyboardInterrupt`` inside the extension's initialisation left it half
    made, and the interpreter aborted at exit (SIGABRT, -6) instead of exiting 130. The block's
    own handlers only note the signal. (A signal mask of the main thread, session 50's form,
    did not hold: the kernel hands a process's signal to any thread that does not block it,
    torch's worker threads among them, and Python then runs the handler in the main thread
    wherever it is, inside the import too: a CI run failed so.) A no-op off the main thread,
    where Python runs no handlers.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []

    def note(signum: int, frame: Any) -> None:
        arrived.append(signum)

    held = (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.signal(s, note) for s in held}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        for signum in arrived:  # in the order they came, to the handlers in force again
            signal.raise_signal(signum)


# --- artefacts -------------------------------------------------------------------------------
