"""An output folder a command fills in whole (``foxhunt tune``, ``foxhunt backtest``): refused
when it already holds that command's results, cleared first with ``--overwrite``.

A second search or backtest into the same folder would replace its summary (``best.toml``,
``backtest.json``) but leave the first one's trials or folds beside the new ones, mixed in.
Only the command's own outputs (``names``, glob patterns) count and are deleted: anything else
in the folder is neither a reason to refuse nor touched.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from foxhunt.errors import InputError


def held_outputs(out: Path, names: Sequence[str]) -> list[Path]:
    """The paths in ``out`` matching ``names`` (glob patterns), sorted."""
    if not out.is_dir():
        return []
    return sorted({p for pattern in names for p in out.glob(pattern)})


def refuse_held_outputs(out: Path, names: Sequence[str], what: str, overwrite: bool) -> None:
    """Refuse ``out`` if it holds outputs named ``names`` and ``overwrite`` is not given.

    Raises:
        InputError: One line naming the folder, what it holds and ``--overwrite``.
    """
    held = held_outputs(out, names)
    if held and not overwrite:
        shown = ", ".join(p.name for p in held[:3]) + (", ..." if len(held) > 3 else "")
        raise InputError(
            f"{out} already holds a {what} ({shown}); replace it with --overwrite or choose "
            "another --out"
        )


def clear_outputs(out: Path, names: Sequence[str]) -> None:
    """Delete the paths in ``out`` matching ``names`` (files and folders)."""
    for p in held_outputs(out, names):
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()
