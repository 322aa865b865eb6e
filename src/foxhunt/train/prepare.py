"""A run's data: prepared in this process, or in a child so the trainer never holds its imports.

Preparing a run reads the bars, computes the features and the calendars behind the known
inputs (polars, pandas, pandas_market_calendars), chooses the target scale and fits the
classical baselines (scipy, arch). Done in the training process, that leaves about 230 MB
resident for the whole run that no step uses: the modules themselves, and what polars' and
pandas' arenas keep (docs/memory.md). ``foxhunt train`` therefore prepares in a spawned child
(:func:`prepare_in_child`): the child writes the window arrays to files in the run directory
(:func:`rows_folder`, :mod:`foxhunt.data.windows.row_files`), saves the rest of the prepared data
with ``torch.save`` (the datasets pickle their files' names) and exits, its memory going back to
the OS; the trainer loads it (``torch.load(mmap=True)``), opens the files, reads each batch's
windows from them, and deletes the files (open files stay readable). The child's log records are handled by this
process's loggers; its errors are raised here with their own message. A child whose parent is
gone (killed during preparation: SIGTERM, SIGKILL, OOM) deletes its file and exits within
:data:`PARENT_POLL_S`, so nothing keeps computing or is left in the run directory.

The child starts by :data:`START_METHOD`: ``spawn`` (a fresh interpreter that imports what it
needs: about 5 s of imports and first calls per run on the 2-core machine, docs/testing.md
"Session 14") unless a caller that trains
many runs in one process sets ``forkserver``: one server per process imports :data:`PRELOAD`
once, and each later child is forked from it (the test suite does; tests/conftest.py).

Under torchrun, from a feature store (windows already in its cache files) or from the library
(:func:`foxhunt.train.run.run_training` with ``isolate=False``, its default) the data is
prepared in-process (:func:`prepare`).
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import logging.handlers
import multiprocessing
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foxhunt.artifacts.data_end import data_end, data_start
from foxhunt.baselines.fit import fit_baselines
from foxhunt.config import RunConfig
from foxhunt.data.pipeline import PreparedData, calendars_of, prepare_training_data
from foxhunt.data.scale.choice import resolve_target_scale
from foxhunt.data.store.cache import Coordinator
from foxhunt.data.windows.row_files import host_tag
from foxhunt.errors import DataError, InputError
from foxhunt.memory.counters import peak_rss_bytes
from foxhunt.memory.preparation import preparation_peak
from foxhunt.memory.units import format_bytes

log = logging.getLogger(__name__)

PARENT_POLL_S = 0.25
"""How often the child checks that its parent is still there."""

START_METHOD = "spawn"
"""How :func:`prepare_in_child` starts its child: ``spawn`` or ``forkserver`` (see the module
doc). A process-wide setting for callers that train many runs in one process, not a run option:
it changes how long a child takes to start, not what it computes."""

PRELOAD = ("foxhunt.train.prepare", "pandas_market_calendars", "arch")
"""What a ``forkserver`` imports once for all its children: this module (and with it torch,
polars, pandas and the data pipeline), the calendars and the GARCH fit."""


@dataclass(frozen=True)
class RunData:
    """What a run gets from its bars.

    Attributes:
        data: The prepared windows, spec, scaler and fingerprint.
        cfg: The config with the target scale chosen (when asked).
        baselines: The ``baselines.json`` record (when asked), else None.
        peak_rss: The preparing process's peak RSS in bytes, measured when it was done.
        ends: Where the bars end per symbol (``data_end`` in ``run.json``), with the
            baselines; computed where the data is prepared, so that a parent that trains
            never runs polars' group-by (its code pages: ~17 MB of RSS, docs/memory.md).
    """

    data: PreparedData
    cfg: RunConfig
    baselines: dict[str, Any] | None
    peak_rss: int = 0
    ends: dict[str, str] | None = None
    starts: dict[str, str] | None = None
    """Where the bars start per symbol (``data_start``), computed with ``ends``."""


def prepare(
    bars: Path,
    cfg: RunConfig,
    *,
    choose_scale: bool,
    baselines: bool,
    coordinator: Coordinator | None = None,
    spill: Path | None = None,
) -> RunData:
    """Prepare a run's data in this process.

    Args:
        bars: Bars file, directory, glob or feature store.
        cfg: The run config.
        choose_scale: Choose the target scale on the training split (a fresh run).
        baselines: Fit the baselines (the process that writes a fresh run's files).
        coordinator: Under torchrun the rank's world (see :func:`prepare_training_data`).
        spill: A folder the window arrays are written to and mapped from, not held
            (:func:`spill_folder`; see :func:`prepare_training_data`).

    Raises:
        DataError: Bad bars, or a split without windows.
    """
    if baselines:  # the GARCH fit's import (arch, scipy: ~3 s) overlaps reading the bars
        threading.Thread(target=importlib.import_module, args=("arch",), daemon=True).start()
    data = prepare_training_data(bars, cfg, coordinator=coordinator, spill=spill)
    for name, ds in (("training", data.train), ("validation", data.val)):
        if len(ds) == 0:
            raise DataError(
                f"{bars}: no {name} windows (too few bars for the encoder length and horizon)"
            )
    if choose_scale:
        cfg = resolve_target_scale(cfg, data.train, data.spec, data.scaler)
    record = None
    if baselines:
        record = fit_baselines(
            data.train,
            data.val,
            data.closes,
            data.scaler,
            cfg.model.quantiles,
            calendars_of(data.instruments),
            classical=cfg.data.target == "close",  # they model the close's returns
        )
    for ds in (data.train, data.val, data.test):  # pages the baselines' reads mapped
        ds.release_pages()
    largest = int(data.closes.group_by("symbol").len()["len"].max() or 0)  # type: ignore[arg-type]
    estimate = preparation_peak(
        data.closes.height, len(data.spec.inputs), cfg.model.horizon, largest
    )
    peak = peak_rss_bytes()
    log.info(
        "data preparation: %d bars, peak RSS %s (estimated %s; docs/memory.md)",
        data.closes.height, format_bytes(peak), format_bytes(estimate),
    )  # fmt: skip
    ends = data_end(data.closes) if baselines else None
    starts = data_start(data.closes) if baselines else None
    return RunData(data, cfg, record, peak, ends, starts)


def prepare_in_child(
    bars: Path, cfg: RunConfig, *, choose_scale: bool, baselines: bool, scratch: Path
) -> RunData:
    """:func:`prepare` in a spawned child process; the windows come back as the child's files.

    Args:
        bars: Bars file, directory or glob.
        cfg: The run config.
        choose_scale: As for :func:`prepare`.
        baselines: As for :func:`prepare`.
        scratch: A directory of this run (the run directory) for the child's file.

    Raises:
        InputError: What the child raised (bad bars, too few windows), with its message.
    """
    import torch

    path = scratch / f".prepared.{os.getpid()}.pt"
    rows = rows_folder(path)  # made by the child (_child_setup), deleted here or by its watchdog
    ctx = multiprocessing.get_context(START_METHOD)
    if START_METHOD == "forkserver":
        ctx.set_forkserver_preload(list(PRELOAD))  # read when the server starts (once)
    records = ctx.Queue()
    relay = threading.Thread(target=_relay, args=(records,), daemon=True)
    relay.start()
    try:
        # the root's level and foxhunt's (the CLI: WARNING for libraries, INFO for foxhunt)
        levels = (
            logging.getLogger().getEffectiveLevel(),
            logging.getLogger("foxhunt").getEffectiveLevel(),
        )
        with ProcessPoolExecutor(
            1,
            mp_context=ctx,
            initializer=_child_setup,
            initargs=(records, levels, os.getpid(), path),
        ) as pool:
            pool.submit(_child, bars, cfg, choose_scale, baselines, path).result()
        # weights_only=False: our own file, written by the child a moment ago. The window
        # arrays are the child's files in ``rows``, mapped again here as they are unpickled.
        saved = torch.load(path, mmap=True, weights_only=False)
    except BrokenProcessPool as e:
        raise InputError(f"{bars}: data preparation died in its child process ({e})") from e
    finally:
        records.put(None)
        relay.join(timeout=5)
        path.unlink(missing_ok=True)  # the mapped pages stay readable
        shutil.rmtree(rows, ignore_errors=True)
    return RunData(
        saved["data"],
        saved["cfg"],
        saved["baselines"],
        saved["peak_rss"],
        saved["ends"],
        saved["starts"],
    )


def _child(bars: Path, cfg: RunConfig, choose_scale: bool, baselines: bool, path: Path) -> None:
    """The child's work: warn when the bars are large for this machine, prepare, then save
    everything for the parent to map."""
    import torch

    if torch.device(cfg.train.device).type == "cpu":
        from foxhunt.train.resources.plan import warn_large_preparation

        warn_large_preparation(cfg, bars)
    prepared = prepare(
        bars, cfg, choose_scale=choose_scale, baselines=baselines, spill=rows_folder(path)
    )
    tmp = path.with_name(path.name + ".tmp")
    saved = {"data": prepared.data, "cfg": prepared.cfg, "baselines": prepared.baselines}
    spans = {"ends": prepared.ends, "starts": prepared.starts}
    torch.save(saved | {"peak_rss": prepared.peak_rss} | spans, tmp)
    tmp.replace(path)


def _child_setup(records: Any, levels: tuple[int, int], parent: int, path: Path) -> None:
    """In the child: every log record at the parent's levels (``levels``: the root logger's and
    ``foxhunt``'s) goes to the parent through ``records``, the window files' folder is made
    (:func:`rows_folder`), and a watchdog ends the child when the parent is gone
    (:func:`exit_with_parent`). ``parent`` is the pid
    the parent gave, not ``os.getppid()`` here: the parent may already be gone by the time the
    child has imported enough to run this, and a forkserver's child has the server as its
    parent."""
    root = logging.getLogger()
    root.handlers[:] = [logging.handlers.QueueHandler(records)]
    root.setLevel(levels[0])
    logging.getLogger("foxhunt").setLevel(levels[1])
    # the window files' folder, made before the watchdog starts: if the parent is already gone,
    # the watchdog deletes it, and nothing here makes it again afterwards
    rows_folder(path).mkdir(exist_ok=True)
    threading.Thread(
        target=exit_with_parent, args=(parent, path), daemon=True, name="parent-watch"
    ).start()


def exit_with_parent(
    parent: int,
    path: Path,
    *,
    poll_s: float = PARENT_POLL_S,
    exit: Callable[[int], object] = os._exit,
) -> None:
    """Wait until process ``parent`` is gone, then delete ``path``, its ``.tmp`` and its
    window files (:func:`rows_folder`) and exit (the parent was killed: nobody will read or
    delete them).

    Gone: no such process or a zombie (killed but not yet reaped), or this process was
    reparented since the watch began (its parent, ``parent`` itself or a forkserver that
    ``parent`` started, exited; the check that cannot be fooled by a reused pid).

    Args:
        parent: The pid of the process that started the preparation.
        path: The file the child writes.
        poll_s: Seconds between checks.
        exit: How to end the process (``os._exit``: no cleanup that could wait on the parent).
    """
    first = os.getppid()
    while os.getppid() == first and _running(parent):
        time.sleep(poll_s)
    for p in (path.with_name(path.name + ".tmp"), path):
        p.unlink(missing_ok=True)
    # renamed first: the preparation may still be writing into the folder by its name (a file
    # it creates after the rename fails to open; one already open is deleted with the rest)
    gone = Path(tempfile.mkdtemp(prefix=f"{path.stem}.gone.", dir=path.parent))
    with contextlib.suppress(OSError):
        rows_folder(path).rename(gone)  # onto the empty folder mkdtemp made
    shutil.rmtree(gone, ignore_errors=True)
    shutil.rmtree(rows_folder(path), ignore_errors=True)  # when the rename failed
    exit(1)


def rows_folder(path: Path) -> Path:
    """Where the child writes the window arrays of ``path`` (``.prepared.PID.rows``)."""
    return path.with_suffix(".rows")


@contextmanager
def spill_folder(root: Path) -> Iterator[Path]:
    """A fresh folder in ``root`` for a preparation's window arrays
    (:mod:`foxhunt.data.windows.row_files`), deleted on leaving: the datasets mapped from it
    keep their data (Linux frees a deleted file's pages once it is no longer mapped). A process
    killed meanwhile leaves it; the next run in the directory deletes it
    (:func:`~foxhunt.data.windows.row_files.remove_stale_rows`)."""
    folder = root / f".rows.{host_tag()}.{os.getpid()}"  # one per process, on any machine
    folder.mkdir(parents=True)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:  # NoSuchProcess, or AccessDenied: not ours
        return False


def _relay(records: Any) -> None:
    """In the parent: hand the child's records to this process's loggers until ``None``."""
    while (record := records.get()) is not None:
        logging.getLogger(record.name).handle(record)
