"""Ctrl-C and SIGTERM while training: the first sets the stop flag (logged), a second aborts
at once, the previous handlers come back afterwards, and off the main thread nothing is
installed (Python allows signal handlers only there)."""

from __future__ import annotations

import logging
import os
import signal
import threading
import time

import pytest

from foxhunt.train.signals import signals_held, stop_on_signals


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


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("sender", ["main", "other thread"])
def test_a_signal_while_held_is_handled_as_the_block_ends(
    signum: signal.Signals, sender: str
) -> None:
    """``signals_held`` (around the report's import after the loop): the second Ctrl-C is not
    raised inside the block, but right after it, whichever thread the kernel hands it to (a
    thread made before the block, as torch's are, sends it to the process: session 50's
    signal mask of the main thread let it through), and the handlers are as they were."""
    stop, go = threading.Event(), threading.Event()
    inside: list[bool] = []

    def send() -> None:
        go.wait()
        os.kill(os.getpid(), signum)

    worker = threading.Thread(target=send)
    if sender == "other thread":
        worker.start()
    with pytest.raises(KeyboardInterrupt), stop_on_signals(stop):
        handler = signal.getsignal(signum)
        stop.set()  # the first signal came already: the next one aborts
        with signals_held():
            if sender == "main":
                signal.raise_signal(signum)
            else:
                go.set()
                worker.join()
            for _ in range(1000):  # bytecodes on which a handler would run
                inside.append(True)
            time.sleep(0.05)  # and a wait, in which a delivered signal's handler runs
        pytest.fail("the held signal was not handled as the block ended")
    assert len(inside) == 1000
    assert signal.getsignal(signum) is not handler  # stop_on_signals restored its own


def test_two_signals_while_held_are_handled_in_turn(caplog: pytest.LogCaptureFixture) -> None:
    """The first asks to stop (logged), the second aborts: as if the block were not there."""
    stop = threading.Event()
    with caplog.at_level(logging.WARNING, logger="foxhunt.train.signals"):
        with pytest.raises(KeyboardInterrupt), stop_on_signals(stop):
            with signals_held():
                signal.raise_signal(signal.SIGINT)
                signal.raise_signal(signal.SIGTERM)
                assert not stop.is_set()
            pytest.fail("the second held signal did not abort")
    assert stop.is_set()
    assert [r.getMessage() for r in caplog.records] == [
        "SIGINT: stopping after this step (again to abort now)"
    ]


def test_off_the_main_thread_signals_are_not_held() -> None:
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    seen: list[dict[int, object]] = []

    def run() -> None:
        with signals_held():
            seen.append({s: signal.getsignal(s) for s in before})

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    assert seen == [before]
