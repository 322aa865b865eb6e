"""What the user sees while training: rich progress bars (epoch, batch, loss, samples/s,
memory) and one summary line per epoch.

The loop calls four methods; with ``enabled=False`` (tests, pipes) they do nothing but the
epoch lines still go to the log.
"""

from __future__ import annotations

import logging
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from foxhunt.memory.units import format_bytes

log = logging.getLogger(__name__)


class TrainProgress:
    """Two bars: epochs of the run, and batches of the current epoch (or validation).

    Args:
        epochs: Total epochs of the run.
        first_epoch: Epoch the run starts at (> 1 when resuming).
        enabled: Draw bars (False: only log the per-epoch lines).
        console: Where to draw; default a rich Console on stderr.
    """

    def __init__(
        self,
        epochs: int,
        *,
        first_epoch: int = 1,
        enabled: bool = True,
        console: Console | None = None,
    ) -> None:
        self.enabled = enabled
        self.console = console or Console(stderr=True)
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[status]}"),
            console=self.console,
            disable=not enabled,
            transient=False,
        )
        self._epochs: TaskID = self._progress.add_task(
            "epochs", total=epochs, completed=first_epoch - 1, status=""
        )
        self._batches: TaskID | None = None

    def __enter__(self) -> TrainProgress:
        self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._progress.stop()

    def _new_bar(self, description: str, total: int) -> None:
        if self._batches is not None:
            self._progress.remove_task(self._batches)
        self._batches = self._progress.add_task(description, total=total, status="")

    def start_epoch(self, epoch: int, n_batches: int) -> None:
        """A new batch bar for epoch ``epoch`` with ``n_batches`` optimizer steps."""
        self._new_bar(f"epoch {epoch}", n_batches)

    def step(self, *, loss: float, samples_per_s: float, memory_bytes: int | None) -> None:
        """Advance the batch bar by one optimizer step and show its numbers."""
        mem = f" · mem {format_bytes(memory_bytes)}" if memory_bytes is not None else ""
        status = f"loss {loss:.4f} · {samples_per_s:,.0f} samples/s{mem}"
        if self._batches is not None:
            self._progress.update(self._batches, advance=1, status=status)

    def start_validation(self, n_batches: int) -> None:
        """A batch bar for the validation pass."""
        self._new_bar("validation", n_batches)

    def validation_step(self) -> None:
        """Advance the validation bar by one batch."""
        if self._batches is not None:
            self._progress.update(self._batches, advance=1)

    def end_epoch(self, line: str) -> None:
        """Advance the epoch bar and print ``line`` above the bars (or log it)."""
        self._progress.update(self._epochs, advance=1)
        if self.enabled:
            self._progress.console.print(line)
        else:
            log.info(line)

    def note(self, line: str) -> None:
        """Print a one-off message (e.g. an OOM back-off) above the bars."""
        if self.enabled:
            self._progress.console.print(f"[yellow]{line}")
