"""One optimizer step in micro-batches is the whole batch's step: the mean loss and the
gradients of uneven micro-batches equal the full batch's; ``grad_weight`` scales only the
gradients; clipping only when asked, the norm reported before it; the hook sees the step
number and the complete gradients; none are left between steps."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from foxhunt.model import TFT, quantile_loss
from foxhunt.model.batch import random_batch
from foxhunt.train.resources.oom import MicroBatching
from foxhunt.train.step import output_is_constant, train_step, validate

from .train_fakes import tiny_config

CFG = dataclasses.replace(tiny_config().model, dropout=0.0)  # deterministic forwards


def _full(seed: int = 0) -> tuple[float, dict[str, torch.Tensor]]:
    """The whole batch's loss and gradients, by hand."""
    torch.manual_seed(seed)
    model = TFT(CFG)
    batch = random_batch(CFG, 5, seed=1)
    q = torch.tensor(CFG.quantiles)
    loss = quantile_loss(model(batch).quantiles.float(), batch.target, q)
    loss.backward()
    return float(loss.detach()), {n: p.grad.clone() for n, p in model.named_parameters()}


def _step(micro: int, *, grad_weight: float = 1.0, grad_clip: float = 0.0, seed: int = 0):
    torch.manual_seed(seed)
    model = TFT(CFG)
    batch = random_batch(CFG, 5, seed=1)
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    seen: dict[str, object] = {}

    def before(step: int) -> None:
        seen["step"] = step
        seen["grads"] = {n: p.grad.clone() for n, p in model.named_parameters()}

    loss, norm, messages = train_step(
        model,
        batch,
        opt,
        torch.amp.GradScaler("cpu", enabled=False),
        MicroBatching(5, micro),
        quantiles=torch.tensor(CFG.quantiles),
        precision="fp32",
        grad_clip=grad_clip,
        step=7,
        before_optimizer_step=before,
        **({} if grad_weight == 1.0 else {"grad_weight": grad_weight}),  # 1: the default
    )
    assert messages == []
    assert all(p.grad is None for p in model.parameters())  # nothing held between steps
    return loss, norm, seen


def _close(got: torch.Tensor, want: torch.Tensor) -> bool:
    """Equal up to float32 summation order: within 1e-4 of the tensor's norm."""
    return float((got - want).norm()) <= 1e-4 * float(want.norm()) + 1e-8


def _norm(grads: dict[str, torch.Tensor]) -> float:
    return float(torch.linalg.vector_norm(torch.stack([g.norm() for g in grads.values()])))


@pytest.mark.parametrize("micro", [5, 2, 3])
def test_uneven_micro_batches_give_the_whole_batchs_loss_and_gradients(micro: int) -> None:
    want_loss, want = _full()
    loss, norm, seen = _step(micro)
    assert loss == pytest.approx(want_loss, rel=1e-5)
    assert seen["step"] == 7
    for name, g in seen["grads"].items():  # type: ignore[union-attr]
        assert _close(g, want[name]), name
    assert norm == pytest.approx(_norm(want), rel=1e-4)


def test_grad_weight_scales_the_gradients_not_the_loss() -> None:
    want_loss, want = _full()
    loss, norm, seen = _step(2, grad_weight=2.0)
    assert loss == pytest.approx(want_loss, rel=1e-5)
    for name, g in seen["grads"].items():  # type: ignore[union-attr]
        assert _close(g, 2.0 * want[name]), name
    assert norm == pytest.approx(2.0 * _norm(want), rel=1e-4)


def test_clipping_only_when_asked_and_the_norm_reported_before_it() -> None:
    _, want = _full()
    full = _norm(want)
    assert full / 10 < 1.0  # the clip below is under 1 (a clip, not only a large one)
    _, norm, seen = _step(2, grad_clip=full / 10)
    assert norm == pytest.approx(full, rel=1e-4)  # before clipping
    assert _norm(seen["grads"]) == pytest.approx(full / 10, rel=1e-3)  # type: ignore[arg-type]
    _, norm, seen = _step(2, grad_clip=0.0)  # 0: no clipping
    assert norm == pytest.approx(full, rel=1e-4)
    assert _norm(seen["grads"]) == pytest.approx(full, rel=1e-4)  # type: ignore[arg-type]


# -- DDP, the TFT behind a wrapper, out of memory, validation's records --------------------------


@pytest.fixture
def one_rank_group(tmp_path):
    """A gloo process group of this process alone (DDP needs one; world size 1 averages over
    nothing, so the gradients stay the whole batch's)."""
    import torch.distributed as dist

    dist.init_process_group(
        "gloo", store=dist.FileStore(str(tmp_path / "store"), 1), rank=0, world_size=1
    )
    yield
    dist.destroy_process_group()


@pytest.mark.usefixtures("one_rank_group")
def test_ddp_all_reduces_only_in_the_last_micro_batchs_backward() -> None:
    """``no_sync`` around every micro-batch but the last: three micro-batches of 2, 2, 1."""
    from torch.nn.parallel import DistributedDataParallel

    _, want = _full()
    torch.manual_seed(0)
    inner = TFT(CFG)
    model = DistributedDataParallel(inner)
    forwards: list[int] = []
    inner.register_forward_pre_hook(lambda *_: forwards.append(1))
    entered: list[int] = []  # the forwards done when no_sync was entered
    real = model.no_sync

    def no_sync():  # type: ignore[no-untyped-def]
        entered.append(len(forwards))
        return real()

    model.no_sync = no_sync  # type: ignore[method-assign]
    seen: dict[str, torch.Tensor] = {}
    train_step(
        model,
        random_batch(CFG, 5, seed=1),
        torch.optim.SGD(model.parameters(), lr=0.0),
        torch.amp.GradScaler("cpu", enabled=False),
        MicroBatching(5, 2),
        quantiles=torch.tensor(CFG.quantiles),
        precision="fp32",
        grad_clip=0.0,
        step=1,
        before_optimizer_step=lambda _: seen.update(
            {n: p.grad.clone() for n, p in inner.named_parameters()}
        ),
    )
    assert len(forwards) == 3
    assert entered == [0, 1]
    for name, g in seen.items():
        assert _close(g, want[name]), name


class _Wrapped(torch.nn.Module):
    """A model behind a wrapper's ``module`` attribute, as DDP holds it."""

    def __init__(self, module: torch.nn.Module) -> None:
        super().__init__()
        self.module = module


def test_output_is_constant_looks_through_a_wrapper_at_the_tfts_output_layer() -> None:
    torch.manual_seed(0)
    tft = TFT(CFG)
    assert not output_is_constant(tft) and not output_is_constant(_Wrapped(tft))
    with torch.no_grad():
        tft.output.weight.zero_()
    assert output_is_constant(tft) and output_is_constant(_Wrapped(tft))
    assert not output_is_constant(torch.nn.Linear(2, 2))  # no `output` layer at all


class _Records:
    """A memory log and a progress display that record what they are told."""

    def __init__(self, model: torch.nn.Module | None = None) -> None:
        self.model = model
        self.calls: list[tuple] = []

    def snapshot(self, event: str, **fields: object) -> None:
        grads_none = (
            None if self.model is None else all(p.grad is None for p in self.model.parameters())
        )
        self.calls.append(("snapshot", event, fields, grads_none))

    def start_validation(self, total: int) -> None:
        self.calls.append(("start_validation", total))

    def validation_step(self) -> None:
        self.calls.append(("validation_step",))


def test_an_oom_retries_with_no_gradient_left_and_says_where() -> None:
    """The second micro-batch of 3 runs out of memory once: the gradients of the first are
    dropped (None, not zeros: the retry allocates them anew), the step and the new micro-batch
    are recorded, and the retried step is the whole batch's."""
    _, want = _full()
    torch.manual_seed(0)
    model = TFT(CFG)
    sizes: list[int] = []

    def oom_once(_module, args):  # type: ignore[no-untyped-def]
        sizes.append(args[0].size)
        if len(sizes) == 2:
            raise torch.OutOfMemoryError("CPU out of memory (a test)")

    model.register_forward_pre_hook(oom_once)
    memory = _Records(model)
    seen: dict[str, torch.Tensor] = {}
    micro = MicroBatching(5, 3)
    _, _, messages = train_step(
        model,
        random_batch(CFG, 5, seed=1),
        torch.optim.SGD(model.parameters(), lr=0.0),
        torch.amp.GradScaler("cpu", enabled=False),
        micro,
        quantiles=torch.tensor(CFG.quantiles),
        precision="fp32",
        grad_clip=0.0,
        step=7,
        memory=memory,  # type: ignore[arg-type]
        before_optimizer_step=lambda _: seen.update(
            {n: p.grad.clone() for n, p in model.named_parameters()}
        ),
    )
    assert sizes == [3, 2, 1, 1, 1, 1, 1]
    assert memory.calls == [("snapshot", "oom_retry", {"step": 7, "micro_batch": 1}, True)]
    assert len(messages) == 1 and messages[0].startswith("out of memory at step 7 ")
    assert micro.micro == 1
    for name, g in seen.items():
        assert _close(g, want[name]), name


def _val_source(n: int):  # type: ignore[no-untyped-def]
    """``n`` validation windows of the tiny config."""
    batch = random_batch(CFG, n, seed=3)

    class Source:
        def __len__(self) -> int:
            return n

        def batch(self, rows: list[int]):  # type: ignore[no-untyped-def]
            return batch.slice(rows[0], rows[-1] + 1)

    return Source(), batch


@pytest.mark.parametrize("n", [1, 5])
def test_validate_is_the_float64_mean_and_records_its_start_and_end(n: int) -> None:
    torch.manual_seed(0)
    model = TFT(CFG)
    source, batch = _val_source(n)
    q = torch.tensor(CFG.quantiles)
    with torch.no_grad():
        per_window = [
            float(
                quantile_loss(
                    model(batch.slice(i, i + 1)).quantiles.float(), batch.slice(i, i + 1).target, q
                )
            )
            for i in range(n)
        ]
    records = _Records()
    loss = validate(
        model,
        source,  # type: ignore[arg-type]
        batch_size=2,
        quantiles=q,
        precision="fp32",
        memory=records,  # type: ignore[arg-type]
        epoch=3,
        step=40,
        progress=records,  # type: ignore[arg-type]
    )
    assert loss == pytest.approx(sum(per_window) / n, rel=1e-6)
    batches = -(-n // 2)
    assert records.calls == [
        ("snapshot", "validation_start", {"epoch": 3, "step": 40}, None),
        ("start_validation", batches),
        *[("validation_step",)] * batches,
        ("snapshot", "validation_end", {"epoch": 3, "step": 40, "val_loss": loss}, None),
    ]
    assert model.training


def test_validate_sums_in_float64() -> None:
    """Batch losses summed in float32 lose the last digits of a long validation set."""
    torch.manual_seed(0)
    model = TFT(CFG)
    source, batch = _val_source(5)
    q = torch.tensor(CFG.quantiles)
    with torch.no_grad():
        losses = [
            quantile_loss(
                model(batch.slice(i, i + 1)).quantiles.float(), batch.slice(i, i + 1).target, q
            )
            for i in range(5)
        ]
    want = sum(float(x) for x in losses) / 5  # Python floats: float64
    got = validate(model, source, batch_size=1, quantiles=q, precision="fp32")  # type: ignore[arg-type]
    assert got == want
