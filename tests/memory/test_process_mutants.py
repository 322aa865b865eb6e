"""The process-RSS model's contracts that ``make mutate`` (memory.process) found unguarded:
the measured baselines, the parts of a peak, and process_training_peak written out from its
docstring's terms (the estimate's, the allocator's slack factor, the overhead)."""

from __future__ import annotations

import dataclasses

import pytest

import foxhunt.memory.counters as counters
import foxhunt.memory.process as process
from foxhunt.config import RunConfig, TrainConfig
from foxhunt.memory.estimate import batch_bytes, estimate_memory
from foxhunt.memory.process import (
    COMPILER_IMPORT_BYTES,
    IMPORT_BASELINE_BYTES,
    ProcessPeak,
    measured_baseline,
    process_overhead,
    process_training_peak,
    resident_before_training,
)
from memory_helpers import TINY


def test_parts_name_every_term_and_their_sum() -> None:
    peak = ProcessPeak(1, 20, 300, 4000, 50000)
    assert peak.parts() == {
        "import_baseline": 1,
        "data": 20,
        "tensors": 300,
        "overhead": 4000,
        "allocator_slack": 50000,
        "total": 54321,
    }


@pytest.mark.parametrize("rss", [10, IMPORT_BASELINE_BYTES + 12345])
def test_measured_baseline_is_rss_or_the_constant(rss: int, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr(counters, "rss_bytes", lambda: rss)
    assert measured_baseline() == max(IMPORT_BASELINE_BYTES, rss)


def test_resident_before_training(monkeypatch) -> None:  # noqa: ANN001
    """Prepared here: the run's later imports are made and the data it read is subtracted;
    prepared by a child: no imports, nothing subtracted. Never below the constant."""
    import importlib

    imported: list[str] = []
    monkeypatch.setattr(importlib, "import_module", lambda name: imported.append(name))
    rss = IMPORT_BASELINE_BYTES + 10**6
    monkeypatch.setattr(counters, "rss_bytes", lambda: rss)
    assert resident_before_training(4000) == rss - 4000
    assert imported == list(process.RUN_IMPORTS)
    imported.clear()
    assert resident_before_training(4000, prepared_here=False) == rss
    assert imported == []
    assert resident_before_training(2 * 10**6) == IMPORT_BASELINE_BYTES


def _cfg(**train: object) -> RunConfig:
    base = {"batch_size": 16, "precision": "fp32", "cpu_allocator": "glibc"}
    return RunConfig(model=TINY, train=TrainConfig(**{**base, **train}))  # type: ignore[arg-type]


@pytest.mark.parametrize("recompute", [False, True])
@pytest.mark.parametrize("micro", [16, 4])
@pytest.mark.parametrize("checkpointing", [False, True])
def test_training_peak_written_out(recompute: bool, micro: int, checkpointing: bool) -> None:
    """baseline + data + tensors (resident state, the whole batch, the step's activations; when
    accumulating, every gradient and saved activation held through the later micro-batches)
    + overhead (+ torch._dynamo's import with checkpointing or recompute) + the slack factor's
    share of the activations."""
    cfg = _cfg(recompute=recompute, checkpointing=checkpointing)
    est = estimate_memory(
        TINY, micro, precision="fp32", checkpointing=checkpointing, recompute=recompute
    )
    resident = est.parameter_bytes + est.optimizer_bytes
    activations = est.training_peak_bytes - resident - est.batch_bytes
    static = resident + batch_bytes(TINY, 16)
    if micro < 16:
        held = est.gradient_bytes + est.saved_activation_bytes + est.backward_transient_bytes
        static += max(0, held - activations)
    factor = process.RECOMPUTE_ACTIVATION_RSS_FACTOR if recompute else 1.45  # glibc
    compiler = COMPILER_IMPORT_BYTES if checkpointing or recompute else 0
    got = process_training_peak(cfg, micro_batch=micro, data_bytes=777, import_baseline=123)
    assert got == ProcessPeak(
        123, 777, static + activations, process_overhead("fp32") + compiler,
        int((factor - 1) * activations),
    )  # fmt: skip
    # the settings given override the run's, and default to them when not given
    other = process_training_peak(
        dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, recompute=not recompute,
                            checkpointing=not checkpointing)),
        micro_batch=micro, data_bytes=777, import_baseline=123,
        checkpointing=checkpointing, recompute=recompute,
    )  # fmt: skip
    assert other == got


def test_default_data_is_none() -> None:
    assert process_training_peak(_cfg()).data == 0
