"""Fixtures shared by the command tests."""

from __future__ import annotations

import re

import pytest

ESCAPE = re.compile(r"\x1b\[")
"""The start of a terminal escape sequence (colour, cursor movement)."""


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """rich's consoles as on a 60-column colour terminal: a line a command prints whole (soft
    wrap) stays one line, and any highlighting, colour or status spinner shows as escape codes in
    the stream it went to (captured by ``capsys`` as usual)."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("COLUMNS", "60")
    monkeypatch.delenv("NO_COLOR", raising=False)
