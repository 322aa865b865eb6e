from __future__ import annotations

import pytest
import torch

from foxhunt.train.resources.oom import MicroBatching, OutOfMemoryAtMicroBatchOne, is_oom


def test_back_off_halves_micro_and_doubles_accumulation() -> None:
    mb = MicroBatching(batch_size=64, micro=64)
    assert mb.accumulation == 1 and mb.slices(64) == [(0, 64)]
    msg = mb.back_off(step=7, device=torch.device("cpu"))
    assert (mb.micro, mb.accumulation, mb.backoffs) == (32, 2, 1)
    assert "step 7" in msg and "micro-batch 64" in msg and "effective batch 64 unchanged" in msg
    assert mb.slices(64) == [(0, 32), (32, 64)]
    assert mb.slices(40) == [(0, 32), (32, 40)]  # short last batch: every sample still covered


def test_back_off_at_one_raises() -> None:
    mb = MicroBatching(batch_size=2, micro=1)
    with pytest.raises(OutOfMemoryAtMicroBatchOne, match="micro-batch 1"):
        mb.back_off(step=0, device=torch.device("cpu"))


def test_is_oom() -> None:
    assert is_oom(torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB"))
    assert is_oom(RuntimeError("MPS backend out of memory"))
    assert not is_oom(RuntimeError("shape mismatch"))
    assert not is_oom(ValueError("out of memory"))
