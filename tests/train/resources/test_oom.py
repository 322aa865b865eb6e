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


def test_back_off_from_two_reaches_one_and_the_refusal_says_what_to_try() -> None:
    mb = MicroBatching(batch_size=8, micro=2)
    mb.back_off(step=3, device=torch.device("cpu"))
    assert (mb.micro, mb.accumulation) == (1, 8)  # micro-batch 1 is tried before giving up
    with pytest.raises(OutOfMemoryAtMicroBatchOne) as refused:
        mb.back_off(step=4, device=torch.device("cpu"))
    assert str(refused.value) == (
        "out of memory at step 4 even with micro-batch 1 on cpu; try --recompute, "
        "--checkpointing, --precision bf16, a smaller model or --memory-budget"
    )


@pytest.mark.parametrize(("device", "cuda_calls", "heap_calls"), [("cpu", 0, 1), ("meta", 0, 0)])
def test_empty_cache_returns_the_heap_on_cpu_only(
    monkeypatch: pytest.MonkeyPatch, device: str, cuda_calls: int, heap_calls: int
) -> None:
    """On CPU the free heap goes back to the OS; CUDA's cache is emptied only on CUDA (calling
    it elsewhere would initialise CUDA); other devices have neither."""
    from foxhunt.train.resources import oom

    calls = {"cuda": 0, "heap": 0}
    monkeypatch.setattr(oom.torch.cuda, "empty_cache", lambda: calls.__setitem__("cuda", 1))
    monkeypatch.setattr(oom, "release_free_heap", lambda: calls.__setitem__("heap", 1))
    oom.empty_cache(torch.device(device))
    assert calls == {"cuda": cuda_calls, "heap": heap_calls}


def test_empty_cache_on_cuda_empties_cudas_cache_not_the_heap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from foxhunt.train.resources import oom

    calls = {"cuda": 0, "heap": 0}
    monkeypatch.setattr(oom.torch.cuda, "empty_cache", lambda: calls.__setitem__("cuda", 1))
    monkeypatch.setattr(oom, "release_free_heap", lambda: calls.__setitem__("heap", 1))
    oom.empty_cache(torch.device("cuda"))
    assert calls == {"cuda": 1, "heap": 0}
