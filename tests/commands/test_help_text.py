"""Every command's ``--help``, as a user reads it, against its committed copy
(``tests/commands/help/<command>.txt``).

The help is part of the interface (README and docs quote it): a changed option, default,
metavar or sentence must be a decision, visible in the diff of the copy. After changing the
help on purpose, write the copies again and review them::

    FOXHUNT_WRITE_HELP=1 .venv/bin/python -m pytest tests/commands/test_help_text.py
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import pytest

from foxhunt.cli import build_parser

COPIES = Path(__file__).with_name("help")
WIDTH = "100"  # argparse wraps to $COLUMNS
WRITTEN_WITH = (3, 11)
pytestmark = pytest.mark.skipif(
    sys.version_info[:2] != WRITTEN_WITH,
    reason="argparse lays help out differently in each Python; the copies are 3.11's",
)


def _commands() -> dict[str, argparse.ArgumentParser]:
    """``name -> parser`` for ``foxhunt`` and every command and subcommand under it."""
    found: dict[str, argparse.ArgumentParser] = {}

    def walk(name: str, parser: argparse.ArgumentParser) -> None:
        found[name] = parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub, child in action.choices.items():
                    walk(f"{name}-{sub}", child)

    walk("foxhunt", build_parser())
    return found


def _help(parser: argparse.ArgumentParser, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COLUMNS", WIDTH)
    return parser.format_help()


def test_every_command_has_its_copy() -> None:
    names = set(_commands())
    copies = {p.stem for p in COPIES.glob("*.txt")}
    if os.environ.get("FOXHUNT_WRITE_HELP"):
        return
    assert names == copies, (sorted(names - copies), sorted(copies - names))
    assert {"foxhunt", "foxhunt-train", "foxhunt-data-inspect"} <= names


@pytest.mark.parametrize("name", sorted(_commands()))
def test_help_is_its_committed_copy(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = _help(_commands()[name], monkeypatch)
    copy = COPIES / f"{name}.txt"
    if os.environ.get("FOXHUNT_WRITE_HELP"):
        COPIES.mkdir(exist_ok=True)
        copy.write_text(text)
    assert copy.is_file(), f"{copy} missing: FOXHUNT_WRITE_HELP=1 writes it"
    assert text == copy.read_text(), f"{name} --help changed: FOXHUNT_WRITE_HELP=1 rewrites {copy}"
