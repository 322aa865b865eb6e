from __future__ import annotations

import dataclasses

import pytest
import torch

from foxhunt.config import RunConfig, TrainConfig
from foxhunt.errors import InputError
from foxhunt.memory.budget import plan_budget, training_peak
from foxhunt.memory.estimate import estimate_memory, process_overhead_bytes
from foxhunt.memory.saved_tensors import saved_activation_bytes
from foxhunt.memory.state import state_bytes
from foxhunt.model import TFT, quantile_loss, set_checkpointing
from foxhunt.model.batch import random_batch
from memory_helpers import TINY

CFG = RunConfig(
    model=dataclasses.replace(TINY, encoder_length=48, horizon=8),
    train=TrainConfig(batch_size=64, validation_batch_size=32, precision="fp32"),
    preset="test",
)


def test_generous_budget_keeps_the_fastest_settings() -> None:
    plan = plan_budget(CFG, 10**10, allow_precision_change=False)
    assert (plan.micro_batch, plan.accumulation, plan.checkpointing, plan.precision) == (
        64,
        1,
        False,
        "fp32",
    )
    assert (plan.recompute, plan.cpu_allocator) == (False, "balanced")  # the default settings
    assert plan.validation_batch_size == 32
    assert plan.estimated_peak == training_peak(CFG, 64, False, "fp32") <= plan.budget
    assert plan.reasons and "fits" in plan.reasons[-1]


def _first_fit(cfg: RunConfig, budget: int) -> tuple[int, bool, bool]:
    """The documented walk, written out: at each micro-batch (recompute, checkpointing) in the
    order (off, off), (off, on), (on, off), (on, on), each only where it lowers the peak below
    the ones before; then halve the micro-batch."""
    micro = cfg.train.micro_batch
    while True:
        best = None
        for rec, ckpt in ((False, False), (False, True), (True, False), (True, True)):
            peak = training_peak(cfg, micro, ckpt, "fp32", recompute=rec)
            if best is not None and peak >= best:
                continue
            best = peak
            if peak <= budget:
                return micro, ckpt, rec
        micro = -(-micro // 2)


def test_the_walk_starts_at_the_configured_micro_batch() -> None:
    """A micro-batch the user set is where the planner starts (it only ever makes the step
    smaller), even when the whole batch would fit."""
    cfg = CFG.replace(train={"micro_batch_size": 16})
    plan = plan_budget(cfg, 10**10, allow_precision_change=False)
    assert (plan.micro_batch, plan.accumulation) == (16, 4)
    assert plan.reasons[0].startswith("micro-batch 16, checkpointing off, recompute off, fp32")


@pytest.mark.parametrize("fraction", [0.9, 0.6, 0.3])
def test_walk_order_and_accumulation(fraction: float) -> None:
    lo = training_peak(CFG, 1, True, "fp32", recompute=True)
    hi = min(  # the least micro-batch 64 can do: below it the micro-batch must shrink
        training_peak(CFG, 64, c, "fp32", recompute=r) for c in (False, True) for r in (False, True)
    )
    budget = int(lo + fraction * (hi - lo))
    plan = plan_budget(CFG, budget, allow_precision_change=False)
    assert (plan.micro_batch, plan.checkpointing, plan.recompute) == _first_fit(CFG, budget)
    assert plan.micro_batch < 64 and plan.accumulation == -(-64 // plan.micro_batch)
    assert plan.estimated_peak <= budget
    assert any("exceeds" in r for r in plan.reasons)
    assert any("accumulation" in r for r in plan.reasons)
    assert plan.apply(CFG).train.micro_batch == plan.micro_batch


def test_checkpointing_is_chosen_when_it_lowers_the_peak() -> None:
    """The planner tries checkpointing before a smaller micro-batch. A short encoder with a wide
    hidden state is where recomputation lowers the estimated peak (for the presets the VSN's
    own chunked recompute dominates, so it never does: see docs/memory.md); device "cuda" drops
    the CPU process overhead from the sums, no GPU is used. The CUDA libraries' buffers and
    cuDNN's LSTM workspace (20 MiB and more) are in both sums, so the batch is large enough for
    the activations to outweigh them."""
    b = 2048
    cfg = RunConfig(
        model=dataclasses.replace(TINY, encoder_length=6, hidden=64, n_historical=4),
        train=TrainConfig(batch_size=b, validation_batch_size=b, device="cuda", precision="fp32"),
    )
    plain, ckpt = training_peak(cfg, b, False, "fp32"), training_peak(cfg, b, True, "fp32")
    assert ckpt < 0.9 * plain
    plan = plan_budget(cfg, ckpt, allow_precision_change=False)
    assert (plan.micro_batch, plan.accumulation, plan.checkpointing) == (b, 1, True)
    assert plan.apply(cfg).train.checkpointing


def test_refuses_with_a_clear_message() -> None:
    smallest = min(
        training_peak(CFG, 1, c, "fp32", allocator="lean", recompute=r)
        for c in (False, True)
        for r in (False, True)
    )
    with pytest.raises(
        InputError,
        match=r"too small.*micro-batch 1, .*fp32.* needs an estimated.*--allow-precision-change",
    ):
        plan_budget(CFG, smallest - 1, allow_precision_change=False)
    with pytest.raises(InputError, match="must be positive"):
        plan_budget(CFG, 0, allow_precision_change=False)


@pytest.mark.parametrize("avx512", [False, True])
def test_switches_to_bf16_only_when_allowed(avx512: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A budget just under every fp32 plan: bf16 fits where it is allowed, on a CPU whose process
    overhead is the same in both precisions (AVX2). On an AVX-512 one bf16's overhead is 50 MiB
    more (memory/process.py): this small model's activations save less, so nothing fits."""
    import foxhunt.runtime

    monkeypatch.setattr(foxhunt.runtime, "cpu_has_avx512", lambda: avx512)
    cfg = RunConfig(
        model=dataclasses.replace(TINY, encoder_length=300, horizon=8),
        train=TrainConfig(batch_size=2, validation_batch_size=2, precision="fp32"),
    )
    budget = (
        min(
            training_peak(cfg, 1, c, "fp32", allocator="lean", recompute=r)
            for c in (False, True)
            for r in (False, True)
        )
        - 1
    )
    with pytest.raises(InputError):
        plan_budget(cfg, budget, allow_precision_change=False)
    if avx512:
        with pytest.raises(InputError):
            plan_budget(cfg, budget, allow_precision_change=True)
        return
    plan = plan_budget(cfg, budget, allow_precision_change=True)
    assert plan.precision == "bf16" and plan.estimated_peak <= budget


def test_validation_batch_is_reduced_when_needed() -> None:
    cfg = CFG.replace(train={"validation_batch_size": 4096})
    budget = training_peak(cfg, 64, False, "fp32") + 1
    plan = plan_budget(cfg, budget, allow_precision_change=False)
    assert plan.validation_batch_size < 4096
    assert any("validation batch" in r for r in plan.reasons)


def test_plan_when_run_measures_within_budget() -> None:
    """Run one real step at the chosen settings; its deterministic bytes fit the budget."""
    budget = training_peak(CFG, 16, False, "fp32")
    plan = plan_budget(CFG, budget, allow_precision_change=False)
    assert plan.estimated_peak <= budget
    torch.manual_seed(0)
    model = TFT(CFG.model).train()
    set_checkpointing(model, plan.checkpointing)
    opt = torch.optim.AdamW(model.parameters())
    batch = random_batch(CFG.model, CFG.train.batch_size)
    q = torch.tensor(CFG.model.quantiles)
    micro = batch.slice(0, plan.micro_batch)
    tensors = [batch.static, batch.historical, batch.known, batch.target]

    def fn() -> torch.Tensor:
        return quantile_loss(model(micro).quantiles, micro.target, q)

    saved = saved_activation_bytes(fn, exclude=[*model.parameters(), *tensors])
    fn().backward()
    opt.step()
    state = state_bytes(model, opt)
    batch_nbytes = sum(t.numel() * 4 for t in tensors)
    measured = saved + sum(state.values()) + batch_nbytes
    est = estimate_memory(CFG.model, plan.micro_batch, checkpointing=plan.checkpointing)
    assert saved == est.saved_activation_bytes  # the plan's own numbers are exact ...
    assert measured <= plan.estimated_peak - process_overhead_bytes("cpu") <= budget  # ... and fit


def test_the_cpu_budget_is_the_process() -> None:
    """On CPU the planned peak is the whole process's RSS: import baseline, data, tensors."""
    from foxhunt.memory.process import IMPORT_BASELINE_BYTES, process_training_peak

    est = estimate_memory(CFG.model, 64, precision="fp32")
    peak = training_peak(CFG, 64, False, "fp32", data_bytes=10**6)
    assert peak == process_training_peak(CFG, micro_batch=64, data_bytes=10**6).total
    assert peak >= IMPORT_BASELINE_BYTES + 10**6 + est.training_peak_bytes


def test_a_budget_below_the_import_baseline_is_refused() -> None:
    from foxhunt.memory.process import IMPORT_BASELINE_BYTES

    with pytest.raises(InputError, match=r"below .*import baseline of 257 MB"):
        plan_budget(CFG, IMPORT_BASELINE_BYTES - 1, allow_precision_change=True)
    with pytest.raises(InputError, match=r"import baseline .* plus 1\.05 MB of prepared data"):
        plan_budget(CFG, IMPORT_BASELINE_BYTES + 1, allow_precision_change=True, data_bytes=2**20)


def test_checkpointing_is_skipped_where_it_does_not_lower_the_peak() -> None:
    """TFT-225 with the VSNs streamed: their chunk recompute dominates, so checkpointing the
    blocks lowers no estimate and the planner never pays for it there; with every activation
    kept, checkpointing lowers the peak where it saves more than the compiler it imports
    (``torch.utils.checkpoint`` loads torch._dynamo): at micro-batch 128, not at 32."""
    from foxhunt.config import tft_225
    from foxhunt.memory.budget import _options

    cfg = tft_225().replace(train={"batch_size": 32, "precision": "fp32"})
    on = [training_peak(cfg, 32, c, "fp32", recompute=True) for c in (False, True)]
    off = [training_peak(cfg, 128, c, "fp32", recompute=False) for c in (False, True)]
    off_32 = [training_peak(cfg, 32, c, "fp32", recompute=False) for c in (False, True)]
    assert on[1] >= on[0] and off[1] < off[0] and off_32[1] > off_32[0]
    options = [(rec, ckpt) for rec, ckpt, _ in _options(cfg, 32, "fp32", "glibc", 0)]
    assert options == [(False, False), (True, False)]
    options = [(rec, ckpt) for rec, ckpt, _ in _options(cfg, 128, "fp32", "glibc", 0)]
    assert options == [(False, False), (False, True), (True, False)]
    plan = plan_budget(cfg, on[0], allow_precision_change=False)
    assert (plan.micro_batch, plan.checkpointing, plan.recompute) == (32, False, True)
    assert plan.apply(cfg).train.recompute


@pytest.mark.subprocess
def test_train_refuses_a_budget_below_the_import_baseline(tmp_path, capsys, monkeypatch) -> None:  # noqa: ANN001
    """``foxhunt train --memory-budget 200MB``: exit 2, one line quoting the baseline the process
    measured (here pinned to 300 MiB: pytest's own RSS is not a CLI's), before any data is read
    or any file written."""
    import foxhunt.train.run as run_module
    from foxhunt.cli import main
    from foxhunt.data.sources.demo import write_demo_bars

    monkeypatch.setattr(run_module, "measured_baseline", lambda: 300 * 2**20)
    bars = tmp_path / "ES.parquet"
    write_demo_bars(bars, n_bars=300, seed=0)
    out = tmp_path / "run"
    argv = ["train", "--preset", "tft-225", "--bars", str(bars), "--out", str(out)]
    assert main([*argv, "--memory-budget", "310MB"]) == 2
    err = capsys.readouterr().err
    assert "import baseline of 315 MB" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not (out / "config.json").exists()


@pytest.mark.slow
@pytest.mark.subprocess
def test_cli_quotes_its_own_measured_baseline(tmp_path) -> None:  # noqa: ANN001
    """The real command in a fresh process: 200MB is below any torch process; the quoted
    baseline is what that process measured, at least the constant's 257 MB."""
    import re
    import subprocess
    import sys

    from foxhunt.data.sources.demo import write_demo_bars

    bars = tmp_path / "ES.parquet"
    write_demo_bars(bars, n_bars=300, seed=0)
    out = tmp_path / "run"
    argv = ["train", "--preset", "tft-225", "--bars", str(bars), "--out", str(out)]
    r = subprocess.run(
        [sys.executable, "-m", "foxhunt", *argv, "--memory-budget", "200MB"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert r.returncode == 2, r.stderr
    m = re.search(r"import baseline of ([\d.]+) MB", r.stderr)
    assert m is not None and float(m.group(1)) >= 257, r.stderr
    assert "Traceback" not in r.stderr and not out.exists()


def test_a_margin_plans_below_the_budget_and_quotes_what_to_ask_for() -> None:
    """``foxhunt train`` on CPU plans to ``CPU_PLAN_MARGIN`` of its budget: a budget whose
    whole fits the smallest plan is refused once the margin is kept, and the refusal names the
    budget that would fit with it."""
    import math

    from foxhunt.memory.units import format_bytes

    cfg = CFG.replace(train={"device": "cpu", "precision": "bf16"})
    floor = min(
        training_peak(cfg, 1, ckpt, "bf16", "lean", 0, rec)
        for ckpt in (False, True)
        for rec in (False, True)
    )
    plan = plan_budget(cfg, floor, allow_precision_change=False)  # the whole budget: fits
    assert plan.estimated_peak <= floor
    with pytest.raises(InputError) as e:
        plan_budget(cfg, floor, allow_precision_change=False, margin=0.9)
    assert f"at least {format_bytes(math.ceil(floor / 0.9))} (with the planner's 10 % margin)" in (
        str(e.value)
    )
    wide = plan_budget(cfg, math.ceil(floor / 0.9), allow_precision_change=False, margin=0.9)
    assert wide.estimated_peak <= 0.9 * math.ceil(floor / 0.9)
