"""Every command's ``--help``, as a user reads it, against its committed copy
(``tests/commands/help/<command>.txt``).

The help is part of the interface (README and docs quote it): a changed option, default,
metavar or sentence must be a decision, visible in the diff of the copy. After changing the
help on purpose, write the copies again and review them::

    FOXHUNT_WRITE_HELP=1 .venv/bin/python -m pytest tests/commands/test_help_text.py
"""

from __future__ import annotations

import argparse
import json
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
    # the child processes of the quantize bench and of `foxhunt memory --measure`: not commands
    from foxhunt.commands import measure, qbench

    found["qbench-child"] = qbench.build_parser()
    found["measure-child"] = measure.build_parser()
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


def _options(parser: argparse.ArgumentParser) -> str:
    """What each option of ``parser`` does, beyond its help text: destination, type, default,
    choices, count, whether required, and the parser's own defaults (the command it runs)."""

    def name(x: object) -> str | None:
        if x is None:
            return None
        # __name__, not __qualname__: `make mutate` renames the function a lambda is defined in
        return getattr(x, "__name__", None) or repr(x)

    rows: list[dict[str, object]] = []
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):  # the subcommands: required, named where
            rows.append({"subcommands": sorted(a.choices), "dest": a.dest, "required": a.required})
            continue
        if isinstance(a, argparse._HelpAction):
            continue
        rows.append(
            {
                "options": a.option_strings or [a.dest],
                "dest": a.dest,
                "action": type(a).__name__,
                "type": name(a.type),
                "default": repr(a.default),
                "const": repr(a.const),
                "choices": None if a.choices is None else [repr(c) for c in a.choices],
                "nargs": a.nargs,
                "required": a.required,
                "metavar": a.metavar
                if isinstance(a.metavar, (str, type(None)))
                else list(a.metavar),
            }
        )
    defaults = {k: name(v) if callable(v) else repr(v) for k, v in sorted(parser._defaults.items())}
    return json.dumps({"options": rows, "defaults": defaults}, indent=1) + "\n"


@pytest.mark.parametrize("name", sorted(_commands()))
def test_options_are_their_committed_copy(name: str) -> None:
    """Types, defaults and choices that the help does not show (``--host``'s default, the type
    that turns ``--model`` into a path) are part of the interface too."""
    text = _options(_commands()[name])
    copy = COPIES / f"{name}.options.json"
    if os.environ.get("FOXHUNT_WRITE_HELP"):
        copy.write_text(text)
    assert copy.is_file(), f"{copy} missing: FOXHUNT_WRITE_HELP=1 writes it"
    assert text == copy.read_text(), (
        f"{name}'s options changed: FOXHUNT_WRITE_HELP=1 rewrites {copy}"
    )
