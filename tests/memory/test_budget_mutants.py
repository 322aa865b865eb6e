"""Budget-planner contracts that `make mutate` found unguarded (mutation/mutate.py, budget).

The planner's documented walk (precision -> allocator -> micro-batch -> recompute/checkpointing,
then the validation batch halved until it fits) is written out here from the estimates it reads
(:func:`training_peak`, :func:`estimate_memory`), and the plan and its ``reasons`` (the lines the
run logs to explain its settings) are compared with it, on CPU with each allocator, on CUDA, with
a switch to bf16 and with a validation batch that must shrink.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from foxhunt.config import RunConfig, TrainConfig
from foxhunt.errors import InputError
from foxhunt.memory.budget import _options, plan_budget, training_peak
from foxhunt.memory.estimate import estimate_memory, process_overhead_bytes
from foxhunt.memory.process import (
    ACTIVATION_RSS_FACTOR,
    IMPORT_BASELINE_BYTES,
    process_overhead,
)
from foxhunt.memory.units import format_bytes
from foxhunt.runtime import resolve_precision
from memory_helpers import TINY

WIDE = dataclasses.replace(TINY, encoder_length=6, hidden=64, n_historical=4)
"""Short encoder, wide state: checkpointing and recompute lower the peak at large micro-batches,
and at small ones the lean allocator's missing slack is what fits (found by the estimates)."""

LONG = dataclasses.replace(TINY, encoder_length=48, horizon=8)

ORDER = ((False, False), (False, True), (True, False), (True, True))


@pytest.fixture(autouse=True)
def _no_fixed_cuda_buffers(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests read CUDA's estimate as a tensor-only model of small networks (no process
    overhead). The buffers CUDA's libraries hold whatever the batch (cuBLAS workspaces, cuDNN's
    dropout state, the fixed 18-20 MiB of cuDNN's LSTM workspace) would dwarf their activations;
    they are zeroed here and tested in tests/memory/test_cuda_libraries.py."""
    import foxhunt.memory.activation_formulas as formulas
    import foxhunt.memory.budget as budget
    import foxhunt.memory.estimate as estimate

    for module in (estimate, budget):
        monkeypatch.setattr(module, "cuda_library_bytes", lambda config, mode="train": 0)
    monkeypatch.setattr(formulas, "CUDNN_LSTM_WORKSPACE_FIXED", {4: 0, 2: 0})


def _validation_peak(
    cfg: RunConfig, size: int, precision: str, data_bytes: int, allocator: str | None = None
) -> int:
    """The validation model of memory/budget.py's docstring: on CPU the pass is sized at fp32
    (the end-of-run calibration pass runs fp32 there) with the allocator's slack on its
    activations and the training process's overhead; on CUDA at the run's precision, tensors
    only."""
    device = "cuda" if cfg.train.device.startswith("cuda") else "cpu"
    overhead = (
        process_overhead(precision) if device == "cpu" else process_overhead_bytes(device, "train")
    )
    if device == "cpu":
        precision = "fp32"
    est = estimate_memory(cfg.model, size, precision=precision, device=device)  # type: ignore[arg-type]
    fixed = IMPORT_BASELINE_BYTES + data_bytes if device == "cpu" else 0
    peak = est.inference_peak_bytes + est.optimizer_bytes + est.parameter_bytes + overhead + fixed
    if device == "cpu":
        factor = ACTIVATION_RSS_FACTOR[allocator or cfg.train.cpu_allocator]
        peak += int(
            (est.inference_peak_bytes - est.parameter_bytes - est.batch_bytes) * (factor - 1)
        )
    return peak


def _reference(
    cfg: RunConfig, budget: int, allow: bool, data_bytes: int = 0
) -> tuple[dict[str, object], list[str]]:
    """The walk of memory/budget.py's docstring, from the estimates: (plan fields, reasons)."""
    device = "cuda" if cfg.train.device.startswith("cuda") else "cpu"
    precision = resolve_precision(cfg.train.precision, torch.device(device))
    precisions = [precision, "bf16"] if allow and precision == "fp32" else [precision]
    allocators = [cfg.train.cpu_allocator]
    if device == "cpu":  # the configured allocator, then each leaner one
        leaner = ["glibc", "balanced", "lean"]
        allocators = leaner[leaner.index(cfg.train.cpu_allocator) :]
    text, reasons = format_bytes(budget), []
    for p in precisions:
        for a in allocators:
            micro = cfg.train.batch_size
            while True:
                best = None
                for rec, ckpt in ORDER:
                    peak = training_peak(cfg, micro, ckpt, p, a, data_bytes, recompute=rec)  # type: ignore[arg-type]
                    if best is not None and peak >= best:
                        continue
                    best = peak
                    what = (
                        f"micro-batch {micro}, checkpointing {'on' if ckpt else 'off'}, "
                        f"recompute {'on' if rec else 'off'}, {p}"
                        + (f", {a} allocator" if len(allocators) > 1 else "")
                    )
                    verdict = "fits" if peak <= budget else "exceeds"
                    reasons.append(f"{what}: estimated peak {format_bytes(peak)} {verdict} {text}")
                    if peak <= budget:
                        accumulation = -(-cfg.train.batch_size // micro)
                        if accumulation > 1:
                            reasons.append(
                                f"gradient accumulation over {accumulation} micro-batches keeps "
                                f"the effective batch at {cfg.train.batch_size}"
                            )
                        val = cfg.train.validation_batch_size
                        while (v := _validation_peak(cfg, val, p, data_bytes, a)) > budget:
                            reasons.append(
                                f"validation batch {val}: estimated {format_bytes(v)} does not fit"
                            )
                            assert val > 1
                            val = -(-val // 2)
                        if val != cfg.train.validation_batch_size:
                            reasons.append(
                                f"validation batch {val}: estimated {format_bytes(v)} (with the "
                                "optimizer state) fits"
                            )
                        fields = {
                            "micro_batch": micro,
                            "accumulation": accumulation,
                            "checkpointing": ckpt,
                            "recompute": rec,
                            "precision": p,
                            "cpu_allocator": a,
                            "validation_batch_size": val,
                            "estimated_peak": peak,
                            "budget": budget,
                        }
                        return fields, reasons
                if micro == 1:
                    break
                micro = -(-micro // 2)
    raise AssertionError("nothing fits")


def _check(cfg: RunConfig, budget: int, allow: bool = False, data_bytes: int = 0) -> None:
    plan = plan_budget(cfg, budget, allow_precision_change=allow, data_bytes=data_bytes)
    fields, reasons = _reference(cfg, budget, allow, data_bytes)
    got = {key: getattr(plan, key) for key in fields}
    assert got == fields
    assert type(plan.accumulation) is int and type(plan.validation_batch_size) is int
    assert plan.reasons == reasons
    applied = plan.apply(cfg).train
    assert (applied.micro_batch_size, applied.cpu_allocator, applied.recompute) == (
        plan.micro_batch,
        plan.cpu_allocator,
        plan.recompute,
    )


def _cfg(model=WIDE, **train: object) -> RunConfig:  # noqa: ANN001
    base = {"batch_size": 64, "validation_batch_size": 64, "precision": "fp32"}
    return RunConfig(model=model, train=TrainConfig(**{**base, **train}), preset="test")  # type: ignore[arg-type]


def test_cpu_walk_reaches_the_lean_allocator_at_the_budget_boundary() -> None:
    """glibc and balanced cannot fit even micro-batch 1; the lean allocator (no slack) fits
    exactly at the budget (``peak <= budget``), named in the reasons because three allocators
    were tried."""
    cfg = _cfg(cpu_allocator="glibc")
    budget = training_peak(cfg, 1, False, "fp32", "lean")
    for alloc in ("glibc", "balanced"):
        assert budget < min(training_peak(cfg, 1, c, "fp32", alloc) for c in (False, True))
    _check(cfg, budget)
    plan = plan_budget(cfg, budget, allow_precision_change=False)
    assert plan.cpu_allocator == "lean" and plan.micro_batch < 64
    assert plan.reasons[0].startswith(
        "micro-batch 64, checkpointing off, recompute off, fp32, glibc allocator: estimated peak "
    )


def test_cpu_walk_counts_the_prepared_data() -> None:
    cfg = _cfg()
    data = 3 * 10**6
    peaks = [p for _, _, p in _options(cfg, 64, "fp32", "lean", data)]
    assert peaks == [
        training_peak(cfg, 64, c, "fp32", "lean", data, recompute=r)
        for r, c in ORDER
        if (r, c) in {(r2, c2) for r2, c2, _ in _options(cfg, 64, "fp32", "lean", data)}
    ]
    assert peaks[0] == training_peak(cfg, 64, False, "fp32", "lean") + data
    _check(cfg, training_peak(cfg, 32, True, "fp32", recompute=True) + data, data_bytes=data)


def test_a_lean_run_walks_one_allocator_and_names_none() -> None:
    cfg = _cfg(cpu_allocator="lean")
    budget = training_peak(cfg, 16, True, "fp32", "lean")
    _check(cfg, budget)
    plan = plan_budget(cfg, budget, allow_precision_change=False)
    assert plan.cpu_allocator == "lean"
    assert not any("allocator" in line for line in plan.reasons)


def test_cuda_walk_tries_recompute_with_checkpointing_and_no_allocator() -> None:
    """On CUDA (estimates only, no GPU used) the allocator plays no part; at micro-batch 128 the
    fourth option, recompute and checkpointing together, is the one that fits (at micro-batch 64
    cuDNN's LSTM workspace, the same in every option, outweighs what checkpointing saves)."""
    cfg = _cfg(device="cuda", batch_size=128)
    options = _options(cfg, 128, "fp32", "glibc", 0)
    assert [(r, c) for r, c, _ in options] == list(ORDER)
    budget = options[-1][2]
    _check(cfg, budget)
    plan = plan_budget(cfg, budget, allow_precision_change=False)
    assert (plan.micro_batch, plan.recompute, plan.checkpointing) == (128, True, True)
    assert plan.cpu_allocator == cfg.train.cpu_allocator  # as configured: not a CUDA setting
    assert not any("allocator" in line for line in plan.reasons)


def test_accumulation_rounds_up_and_validation_halves_rounding_up() -> None:
    """CUDA estimates (no GPU used): batch 90 halves to 45, then 23 (ceil(90 / 23) = 4
    micro-batches); the validation batch halves 1000, 500, 250, 125, then 63, the first that
    fits exactly at the budget."""
    cfg = _cfg(batch_size=90, validation_batch_size=1000, device="cuda")
    budget = min(p for _, _, p in _options(cfg, 23, "fp32", "glibc", 0))
    assert min(p for _, _, p in _options(cfg, 45, "fp32", "glibc", 0)) > budget
    assert _validation_peak(cfg, 125, "fp32", 0) > budget >= _validation_peak(cfg, 63, "fp32", 0)
    _check(cfg, budget)
    plan = plan_budget(cfg, budget, allow_precision_change=False)
    assert (plan.micro_batch, plan.accumulation, plan.validation_batch_size) == (23, 4, 63)


@pytest.mark.parametrize("offset", [0, -1])
def test_cpu_validation_counts_baseline_and_data(offset: int) -> None:
    """On CPU a validation batch of 8192 needs more than training at micro-batch 8: its peak
    holds the import baseline and the prepared data too; exactly at the budget it fits."""
    cfg = _cfg(batch_size=8, validation_batch_size=8192)
    data = 2 * 10**6
    budget = _validation_peak(cfg, 4096, "fp32", data) + offset
    assert min(p for _, _, p in _options(cfg, 8, "fp32", "glibc", data)) <= budget
    _check(cfg, budget, data_bytes=data)
    plan = plan_budget(cfg, budget, allow_precision_change=False, data_bytes=data)
    assert plan.validation_batch_size == (4096 if offset == 0 else 2048)


def test_validation_is_sized_at_the_chosen_precision() -> None:
    """After a switch to bf16 the validation batch is sized with bf16 activations (at fp32 only
    batch 1 would fit this budget; in bf16 batch 2 does)."""
    cfg = _cfg(model=dataclasses.replace(LONG, encoder_length=300), batch_size=2, device="cuda",
               validation_batch_size=512)  # fmt: skip
    # 2.0 MB before the per-variable GRNs ran feature-major (one normalised state kept, not
    # two), 2.2 before the VSN folded its embedding into fc1, 2.4 with float masks
    budget = 1_877_000
    assert min(p for _, _, p in _options(cfg, 1, "fp32", "glibc", 0)) > budget
    assert min(p for _, _, p in _options(cfg, 1, "bf16", "glibc", 0)) <= budget
    assert _validation_peak(cfg, 2, "fp32", 0) > budget >= _validation_peak(cfg, 2, "bf16", 0)
    _check(cfg, budget, allow=True)
    plan = plan_budget(cfg, budget, allow_precision_change=True)
    assert (plan.precision, plan.micro_batch, plan.validation_batch_size) == ("bf16", 1, 2)


def test_validation_tries_batch_one_before_giving_up() -> None:
    """Validation at 4 and 2 does not fit, at 1 it does (training at micro-batch 1 fits)."""
    cfg = _cfg(model=LONG, batch_size=1, validation_batch_size=4, device="cuda")
    budget = min(p for _, _, p in _options(cfg, 1, "fp32", "glibc", 0))
    assert _validation_peak(cfg, 2, "fp32", 0) > budget >= _validation_peak(cfg, 1, "fp32", 0)
    _check(cfg, budget)
    assert plan_budget(cfg, budget, allow_precision_change=False).validation_batch_size == 1


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_auto_precision_resolves_on_the_runs_device(device: str, monkeypatch) -> None:  # noqa: ANN001
    """``precision: auto`` is resolved for the run's device before any estimate: with a CPU that
    has native bf16, a CPU run plans in bf16 and a CUDA run on a machine without a GPU in fp32."""
    import foxhunt.runtime

    monkeypatch.delenv(foxhunt.runtime.FORCE_FP32_ENV, raising=False)
    monkeypatch.setattr(foxhunt.runtime, "_cpu_has_native_bf16", lambda: True)
    cfg = _cfg(precision="auto", device=device)
    want = resolve_precision("auto", torch.device(device))
    if device == "cuda" and torch.cuda.is_available():
        pytest.skip("a GPU decides for itself")
    assert want == ("bf16" if device == "cpu" else "fp32")
    plan = plan_budget(cfg, 10**10, allow_precision_change=False)
    assert plan.precision == want
    assert plan.reasons[0].startswith(f"micro-batch 64, checkpointing off, recompute off, {want}")


def test_the_refusal_names_the_smallest_setting_tried() -> None:
    cfg = _cfg(model=LONG, batch_size=4, validation_batch_size=4)
    tried = [
        (training_peak(cfg, m, c, "fp32", a, recompute=r), m, c, r, a)
        for a in ("glibc", "lean")
        for m in (4, 2, 1)
        for r, c in ORDER
    ]
    smallest = min(t[0] for t in tried)
    with pytest.raises(InputError) as err:
        plan_budget(cfg, smallest - 1, allow_precision_change=False)
    message = str(err.value)
    assert message.startswith(
        f"memory budget {format_bytes(smallest - 1)} is too small for this model: even micro-batch 1"
    )
    assert message.endswith(
        f"needs an estimated {format_bytes(smallest)}; raise --memory-budget to at least "
        f"{format_bytes(smallest)} or allow bf16 with --allow-precision-change"
    )
    bf16 = cfg.replace(train={"precision": "bf16"})
    with pytest.raises(InputError) as err:
        plan_budget(bf16, IMPORT_BASELINE_BYTES, allow_precision_change=False)
    message = str(err.value)
    assert "--allow-precision-change" not in message and ", bf16, " in message
    figure = message.split("needs an estimated ")[1].split(";")[0]
    assert message.endswith(f"; raise --memory-budget to at least {figure}")  # and no hint


@pytest.mark.parametrize("allocator", ["glibc", "lean"])
def test_cpu_training_peak_is_the_process_peak_at_those_settings(allocator: str) -> None:
    """CPU: the planner's figure is the process-RSS model at exactly the settings asked for
    (allocator, data, precision, checkpointing, recompute), not the run's defaults."""
    from foxhunt.memory.process import process_training_peak

    cfg = _cfg(model=LONG)  # glibc and recompute on by default
    for micro, ckpt, precision, rec in ((64, False, "bf16", False), (16, True, "fp32", True)):
        got = training_peak(cfg, micro, ckpt, precision, allocator, 10**6, recompute=rec)  # type: ignore[arg-type]
        want = process_training_peak(
            cfg, micro_batch=micro, checkpointing=ckpt, precision=precision,  # type: ignore[arg-type]
            allocator=allocator, data_bytes=10**6, recompute=rec,  # type: ignore[arg-type]
        ).total  # fmt: skip
        assert got == want
    lean, glibc = (
        training_peak(cfg, 64, False, "fp32", a, recompute=False) for a in ("lean", "glibc")
    )
    assert lean < glibc  # the allocator argument is heard


@pytest.mark.parametrize("recompute", [True, False])
def test_cuda_training_peak_is_the_tensor_peak_with_the_whole_batch(recompute: bool) -> None:
    """CUDA: the tensor estimate on CUDA (its LSTM and attention terms differ from the CPU's)
    at the micro-batch, with the whole effective batch resident instead of one micro-batch's;
    ``recompute`` defaults to the run's setting."""
    from foxhunt.memory.estimate import batch_bytes

    cfg = _cfg(model=LONG, device="cuda", recompute=recompute)
    differs = []
    for micro, ckpt, precision in ((64, False, "fp32"), (16, True, "bf16")):
        est = estimate_memory(
            cfg.model, micro, precision=precision, checkpointing=ckpt, device="cuda",  # type: ignore[arg-type]
            recompute=recompute,
        )  # fmt: skip
        cpu = estimate_memory(
            cfg.model, micro, precision=precision, checkpointing=ckpt, device="cpu",  # type: ignore[arg-type]
            recompute=recompute,
        )  # fmt: skip
        differs.append(est.training_peak_bytes != cpu.training_peak_bytes)
        want = est.training_peak_bytes - batch_bytes(LONG, micro) + batch_bytes(LONG, 64)
        assert training_peak(cfg, micro, ckpt, precision) == want  # type: ignore[arg-type]
        assert training_peak(cfg, micro, ckpt, precision, recompute=recompute) == want  # type: ignore[arg-type]
    assert any(differs) or recompute  # with the LSTMs' activations kept, the device is heard
    assert training_peak(cfg, 16, False, "fp32") > training_peak(cfg, 16, False, "bf16")
    other = training_peak(cfg, 16, False, "fp32", recompute=not recompute)
    assert other != training_peak(cfg, 16, False, "fp32")


def test_the_baseline_check_at_its_edges() -> None:
    from foxhunt.memory.budget import check_above_baseline

    cpu, cuda = _cfg(), _cfg(device="cuda")
    check_above_baseline(cpu, IMPORT_BASELINE_BYTES)  # exactly the baseline: accepted
    check_above_baseline(cpu, IMPORT_BASELINE_BYTES + 5, data_bytes=5)
    check_above_baseline(cuda, 1)  # CUDA: any positive budget passes this check
    for bad in (0, -1):
        with pytest.raises(InputError, match=f"must be positive, got {bad} bytes"):
            check_above_baseline(cuda, bad)
    with pytest.raises(InputError) as err:
        check_above_baseline(cpu, IMPORT_BASELINE_BYTES - 1)
    assert str(err.value) == (
        f"memory budget {format_bytes(IMPORT_BASELINE_BYTES - 1)} is too small: below what the "
        f"process holds before training, an import baseline of "
        f"{format_bytes(IMPORT_BASELINE_BYTES)} (torch, polars, foxhunt); the budget bounds the "
        "whole process's peak RSS"
    )


def test_cuda_validation_exactly_at_the_budget_fits() -> None:
    """CUDA: nothing fixed is added to the validation peak; exactly at the budget it fits."""
    cfg = _cfg(batch_size=100, validation_batch_size=1000, device="cuda")
    budget = _validation_peak(cfg, 125, "fp32", 0)
    assert min(p for _, _, p in _options(cfg, 25, "fp32", "glibc", 0)) <= budget
    _check(cfg, budget)
    assert plan_budget(cfg, budget, allow_precision_change=False).validation_batch_size == 125


def test_validation_that_does_not_fit_even_at_batch_one() -> None:
    """The planner's last resort, called directly: training at micro-batch 1 needs more than
    validation at batch 1 in every configuration tried, so the walk itself never gets here."""
    from foxhunt.memory.budget import _fit_validation

    cfg = _cfg(model=LONG, batch_size=1, validation_batch_size=2, device="cuda")
    one = _validation_peak(cfg, 1, "fp32", 0)
    reasons: list[str] = []
    with pytest.raises(InputError) as err:
        _fit_validation(cfg, "fp32", one - 1, reasons, 0)
    assert str(err.value) == (
        f"memory budget {format_bytes(one - 1)} is too small: validation at batch 1 needs an "
        f"estimated {format_bytes(one)}"
    )
    assert [r.split(":")[0] for r in reasons] == ["validation batch 2", "validation batch 1"]


def test_a_measured_baseline_is_used_everywhere() -> None:
    """``foxhunt train`` passes the baseline it measured: the floor check, the training peaks
    of every option and the plan's figure all count it, not the import-baseline constant."""
    cfg = _cfg(batch_size=8, validation_batch_size=8)
    high = IMPORT_BASELINE_BYTES + 50 * 2**20
    base = training_peak(cfg, 8, False, "fp32", recompute=False)
    assert training_peak(cfg, 8, False, "fp32", recompute=False, baseline=high) == base + 50 * 2**20
    with pytest.raises(InputError, match=f"an import baseline of {format_bytes(high)}"):
        plan_budget(cfg, high - 1, allow_precision_change=False, baseline=high)
    budget = training_peak(cfg, 8, False, "fp32", recompute=False, baseline=high)
    plan = plan_budget(cfg, budget, allow_precision_change=False, baseline=high)
    assert (plan.micro_batch, plan.recompute, plan.estimated_peak) == (8, False, budget)


def test_the_margin_is_shown_beside_the_budget() -> None:
    """With a margin the reasons quote the budget and the share of it planned for."""
    cfg = _cfg(batch_size=8, validation_batch_size=8)
    budget = 4 * 10**9
    plan = plan_budget(cfg, budget, allow_precision_change=False, margin=0.9)
    want = f"fits {format_bytes(budget)} (90 %: {format_bytes(int(budget * 0.9))})"
    assert plan.reasons[0].endswith(want)


def test_the_weight_average_counts_in_training_and_validation() -> None:
    """CUDA estimates (no GPU used): a run averaging its weights holds one more parameter copy
    in every training step and every validation pass."""
    plain = _cfg(batch_size=16, validation_batch_size=16, device="cuda")
    averaged = plain.replace(train={"weight_average": 0.99})
    params = estimate_memory(plain.model, 1).parameter_bytes
    for ckpt in (False, True):
        assert (
            training_peak(averaged, 16, ckpt, "fp32") - training_peak(plain, 16, ckpt, "fp32")
            == params
        )
    from foxhunt.memory.budget import _fit_validation

    need = _validation_peak(plain, 16, "fp32", 0) + params
    assert _fit_validation(averaged, "fp32", need, [], 0) == 16
    assert _fit_validation(averaged, "fp32", need - 1, [], 0) == 8


def test_cuda_validation_runs_at_the_runs_precision() -> None:
    """On CUDA the validation pass runs in the run's precision (on the CPU it is sized at fp32,
    for the calibration pass): a bf16 run's validation fits a budget its fp32 pass would not."""
    from foxhunt.memory.budget import _fit_validation

    cfg = _cfg(model=LONG, batch_size=16, validation_batch_size=64, device="cuda")
    need = _validation_peak(cfg, 64, "bf16", 0)
    assert _validation_peak(cfg, 64, "fp32", 0) > need
    assert _fit_validation(cfg, "bf16", need, [], 0) == 64


def test_cpu_validation_is_sized_at_fp32_whatever_the_run() -> None:
    """On the CPU the validation batch is sized at fp32 even for a bf16 run: the end-of-run
    calibration pass (and ``foxhunt evaluate``) run fp32 at that batch size."""
    from foxhunt.memory.budget import _fit_validation

    cfg = _cfg(batch_size=8, validation_batch_size=64, precision="bf16")
    need = _validation_peak(cfg, 64, "bf16", 0)  # sized at fp32 on the CPU
    est = estimate_memory(cfg.model, 64, precision="bf16")
    # (the bf16 estimate differs from the fp32 one: sizing at bf16 would give another batch)
    assert est.inference_peak_bytes != estimate_memory(cfg.model, 64).inference_peak_bytes
    assert _fit_validation(cfg, "bf16", need, [], 0) == 64
    assert _fit_validation(cfg, "bf16", need - 1, [], 0) == 32


def test_the_plans_validation_counts_the_measured_baseline() -> None:
    """The validation batch is sized with the baseline ``foxhunt train`` measured: a budget
    where batch 4096 fits under the constant baseline fits only 2048 under a larger one."""
    cfg = _cfg(batch_size=8, validation_batch_size=4096)
    extra = _validation_peak(cfg, 4096, "fp32", 0) - _validation_peak(cfg, 2048, "fp32", 0)
    extra += 2**20
    budget = _validation_peak(cfg, 2048, "fp32", extra)
    assert (
        _validation_peak(cfg, 4096, "fp32", 0)
        <= budget
        < _validation_peak(cfg, 4096, "fp32", extra)
    )
    high = IMPORT_BASELINE_BYTES + extra
    assert training_peak(cfg, 8, False, "fp32", recompute=False, baseline=high) <= budget
    plan = plan_budget(cfg, budget, allow_precision_change=False, baseline=high)
    assert plan.validation_batch_size == 2048
