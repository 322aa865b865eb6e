"""Ctrl-C and SIGTERM while training: the first sets the stop flag (logged), a second aborts
at once, the previous handlers come back afterwards, and off the main thread nothing is
installed (Python allows signal handlers only there)."""

from __future__ import annotations

import logging
import signal
import threading

import pytest

from foxhunt.train.signals import stop_on_signals


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_the_first_signal_asks_to_stop_and_the_second_aborts(
    signum: signal.Signals, caplog: pytest.LogCaptureFixture
) -> None:
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    stop = threading.Event()
    with caplog.at_level(logging.WARNING, logger="foxhunt.train.signals"):
        with pytest.raises(KeyboardInterrupt), stop_on_signals(stop):
            assert signal.getsignal(signal.SIGINT) is signal.getsignal(signal.SIGTERM)
            assert signal.getsignal(signum) is not before[signum]
            signal.raise_signal(signum)
            assert stop.is_set()
            signal.raise_signal(signum)  # again: at once
            pytest.fail("the second signal did not abort")
    assert [r.getMessage() for r in caplog.records] == [
        f"{signum.name}: stopping after this step (again to abort now)"
    ]
    assert {s: signal.getsignal(s) for s in before} == before


def test_off_the_main_thread_nothing_is_installed() -> None:
    before = signal.getsignal(signal.SIGTERM)
    seen: list[object] = []

    def run() -> None:
        with stop_on_signals(threading.Event()):
            seen.append(signal.getsignal(signal.SIGTERM))

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    assert seen == [before]
