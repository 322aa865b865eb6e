"""Ctrl-C / SIGTERM during training: the first asks for a clean stop, a second aborts."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from foxhunt.train.signals import stop_on_signals


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_first_signal_stops_cleanly_second_aborts(sig: signal.Signals) -> None:
    before = signal.getsignal(sig)
    stop = threading.Event()
    with stop_on_signals(stop):
        os.kill(os.getpid(), sig)  # handled at once, in this (main) thread
        assert stop.is_set()  # the loop ends after this step; nothing raised yet
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), sig)
    assert signal.getsignal(sig) is before  # the previous handler is back
