"""Ctrl-C and SIGTERM while training: the first sets the stop flag (logged), a second aborts
at once, the previous handlers come back afterwards, and off the main thread nothing is
installed (Python allows signal handlers only there)."""

from __future__ import annotations

import logging
import signal
import threading

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
def test_a_signal_while_held_is_handled_as_the_block_ends(signum: signal.Signals) -> None:
    """``signals_held`` (around the report's import after the loop): the second Ctrl-C is not
    raised inside the block, but right after it, and the signal mask is as it was."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    stop = threading.Event()
    inside: list[bool] = []
    with pytest.raises(KeyboardInterrupt), stop_on_signals(stop):
        stop.set()  # the first signal came already: the next one aborts
        with signals_held():
            signal.pthread_kill(threading.get_ident(), signum)
            for _ in range(1000):  # bytecodes on which a handler would run
                inside.append(True)
        pytest.fail("the held signal was not handled as the block ended")
    assert len(inside) == 1000
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == before


def test_off_the_main_thread_signals_are_not_held() -> None:
    masks: list[set[int]] = []

    def run() -> None:
        with signals_held():
            masks.append(set(signal.pthread_sigmask(signal.SIG_BLOCK, [])))

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    assert signal.SIGINT not in masks[0]
