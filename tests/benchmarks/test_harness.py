"""Smoke tests of the benchmark harness plumbing (benchmarks/): not of the numbers it measures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import harness  # noqa: E402
import runner  # noqa: E402
import table  # noqa: E402

TINY = [
    "--batch-size", "2", "--n-historical", "6", "--n-known", "3", "--hidden", "8", "--heads", "2",
    "--lstm-layers", "1", "--encoder-length", "5", "--horizon", "3", "--warmup", "1", "--steps", "2",
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.subprocess
def test_foxhunt_step_prints_one_valid_json_record() -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCH / "foxhunt_step.py"), *TINY, "--variable-width", "4"],
        env=runner.worker_env(1),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    record = runner.last_json_line(proc.stdout)
    assert record is not None
    assert record["library"] == "foxhunt"
    assert record["mode"] == "train" and record["batch_size"] == 2
    assert record["n_historical"] == 6 and record["encoder_length"] == 5
    assert record["steps"] == 2 and len(record["times_s"]) == 2
    assert record["samples_per_s"] == pytest.approx(2 / record["median_s"])
    assert record["params"] > 0
    assert record["peak_rss_over_baseline_bytes"] > 0
    assert record["saved_activation_bytes"] > 0
    # The LSTM FLOPs are counted from shapes: 1 layer, hidden 8, (B=2) x (T_enc 5 + T_dec 3)
    # steps, forward 2*B*T*4h*(in+h), backward twice that, plus any forward recomputation.
    lstm_forward = 2 * 2 * (5 + 3) * 32 * (8 + 8)
    assert record["lstm_flops"] % lstm_forward == 0
    assert record["lstm_flops"] >= 3 * lstm_forward
    assert record["flops_per_step"] > record["lstm_flops"]


def test_last_json_line_skips_noise() -> None:
    text = 'warning: something\n{"a": 1}\nnot json {\n{"b": 2}\ntrailing text\n'
    assert runner.last_json_line(text) == {"b": 2}
    assert runner.last_json_line("nothing here") is None


def test_time_calls_drops_warmup_and_counts_steps() -> None:
    calls: list[int] = []
    times = harness.time_calls(lambda: calls.append(1), warmup=3, steps=4)
    assert len(calls) == 7
    assert len(times) == 4


def test_main_table_alternates_libraries_and_pins_sizes() -> None:
    jobs = table.jobs(rounds=2, batches=(8, 32))
    assert len(jobs) == 2 * 2 * 2 * 5
    variants = [j.tags["variant"] for j in jobs]
    assert variants[:10] == ["foxhunt", "foxhunt-lean", "foxhunt-bf16", "pf-hcs16", "pf-hcs256"] * 2
    for j in jobs:
        args = dict(zip(j.args[::2], j.args[1::2], strict=True))
        assert args["--n-historical"] == "210" and args["--hidden"] == "256"
        assert args["--encoder-length"] == "50" and args["--horizon"] == "10"
        assert j.python == (
            runner.MAIN_PYTHON if j.tags["variant"].startswith("foxhunt") else runner.BENCH_PYTHON
        )
        assert ("--allocator" in args) == (j.tags["variant"] == "foxhunt-lean")


def test_aggregate_takes_medians_and_ratios() -> None:
    def rec(variant: str, median_s: float, peak: int, rnd: int) -> dict:
        return {
            "section": "table", "variant": variant, "mode": "train", "batch_size": 32,
            "round": rnd, "median_s": median_s, "peak_rss_over_baseline_bytes": peak, "params": 10,
        }  # fmt: skip

    records = [
        rec("foxhunt", 0.2, 100, 0),
        rec("pf-hcs16", 6.0, 5000, 0),
        rec("foxhunt", 0.4, 300, 1),
        rec("pf-hcs16", 7.0, 7000, 1),
        {
            "section": "table",
            "variant": "pf-hcs256",
            "mode": "train",
            "batch_size": 32,
            "error": "x",
        },
    ]
    rows = table.aggregate(records)
    fox = next(r for r in rows if r["variant"] == "foxhunt")
    assert fox["median_s"] == pytest.approx(0.3) and fox["samples_per_s"] == pytest.approx(32 / 0.3)
    assert fox["peak_rss_over_baseline_bytes"] == 200
    failed = next(r for r in rows if r["variant"] == "pf-hcs256")
    assert failed["runs"] == 0 and failed["errors"] == ["x"]
    (ratio,) = table.ratios(rows)
    assert ratio["speedup"] == pytest.approx(6.5 / 0.3)
    assert ratio["memory_fraction"] == pytest.approx(200 / 6000)


def test_write_json_is_atomic(tmp_path: Path) -> None:
    path = tmp_path / "out" / "r.json"
    runner.write_json(path, {"x": [1, 2]})
    assert json.loads(path.read_text()) == {"x": [1, 2]}
    assert not (tmp_path / "out" / "r.json.tmp").exists()


def test_cpu_isa_records_the_caps_in_force(monkeypatch: pytest.MonkeyPatch) -> None:
    """A result measured under make test-avx2's caps says so; one without says none."""
    for k in harness.ISA_CAPS:
        monkeypatch.delenv(k, raising=False)
    assert harness.cpu_isa()["isa_caps"] == {}
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "avx2")
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    isa = harness.cpu_isa()
    assert isa["isa_caps"] == {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
    with open("/proc/cpuinfo") as f:
        assert isa["avx512_bf16"] == ("avx512_bf16" in f.read())


def test_the_step_census_counts_written_bytes_not_views_or_allocations() -> None:
    """``step_cpu.bytes_written``: a fill and an in-place sum write their tensor each; a view,
    a fresh allocation and a read (``sum`` writes one value) add nothing or their output only."""
    import torch

    import step_cpu

    def work() -> None:
        x = torch.ones(1000)  # 4,000 bytes written
        x.add_(1)  # 4,000 more, in place
        x.view(10, 100).t()  # views: nothing
        torch.empty(500)  # allocated, not written
        x.sum()  # one float32

    assert step_cpu.bytes_written(work) == 8004


def test_the_flop_count_takes_in_place_gemms_as_their_out_of_place_forms() -> None:
    """The weighted lift adds its parts with ``addmm_``, which FlopCounterMode alone counts as
    nothing: the step's share of the GEMM peak fell from 0.65 to 0.61 at the same time."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    import foxhunt_step  # noqa: E402 - on the benchmarks' path above

    a, b = torch.randn(8, 3), torch.randn(3, 5)
    x, y = torch.randn(4, 8, 3), torch.randn(4, 3, 5)
    counts = []
    for mapping in ({}, foxhunt_step.lstm_flop_mapping()):
        with FlopCounterMode(display=False, custom_mapping=mapping) as counter:
            torch.zeros(8, 5).addmm_(a, b)
            torch.zeros(4, 8, 5).baddbmm_(x, y)
        counts.append(counter.get_total_flops())
    assert counts == [0, 2 * 8 * 3 * 5 + 2 * 4 * 8 * 3 * 5]


def test_the_large_block_count_takes_tensors_from_the_floor_up() -> None:
    """Allocations of 4 MiB and more count, smaller ones and frees do not, and an in-place op
    allocates nothing."""
    import torch

    import step_cpu

    def work() -> None:
        big = torch.zeros(2**20)  # 4 MiB exactly
        torch.zeros(2**20 - 1)  # a value under
        big.add_(1)
        torch.empty(3 * 2**20, dtype=torch.uint8)  # 3 MiB

    assert step_cpu.large_block_bytes(work) == 4 * 2**20
    assert step_cpu.large_block_bytes(work, floor=3 * 2**20) == 2**22 + (2**22 - 4) + 3 * 2**20
