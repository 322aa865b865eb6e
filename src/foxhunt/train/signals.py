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


# --- artefacts -------------------------------------------------------------------------------
