"""``foxhunt memory``: estimate (and with ``--measure`` measure) memory against the budgets.

Exit codes: 0 when every budget (and, with ``--ensemble``, the co-residency check) passes, 1 when
one fails, 2 on bad input (raised as :class:`~foxhunt.errors.InputError`, printed by the CLI).

Budgets (DESIGN.md §5, decimal units): parameters < 50 MB, inference < 500 MB, training peak
< 1 GB. With ``--measure`` the budgets are judged on the measured values (CPU: peak RSS minus RSS
after imports and data, in a fresh process), otherwise on the estimates.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

from foxhunt.commands.options import add_config_args, run_config
from foxhunt.config import RunConfig
from foxhunt.errors import InputError
from foxhunt.memory.units import format_bytes, parse_bytes

BUDGETS: dict[str, int] = {
    "parameters": 50 * 10**6,
    "inference_peak": 500 * 10**6,
    "training_peak": 10**9,
}
"""Limits in bytes our users hold us to at TFT-225, batch 32."""

DEFAULT_MEMBERS: dict[str, int] = {"DQN": 6 * 10**6, "PPO": 145 * 10**6, "Mamba-2": 164 * 10**6}
"""Footprints of the other ensemble members (bytes)."""

MIN_FREE_BYTES = 10**9
"""The ensemble must leave more than this free on the device."""


def parse_members(members: list[str] | None) -> dict[str, int]:
    """``["PPO=145MB", ...]`` -> ``{"PPO": 145_000_000, ...}``; None gives the defaults.

    Raises:
        InputError: an entry is not ``NAME=SIZE``.
    """
    if not members:
        return dict(DEFAULT_MEMBERS)
    out: dict[str, int] = {}
    for item in members:
        name, sep, size = item.partition("=")
        if not sep or not name.strip():
            raise InputError(f"--member {item!r}: expected NAME=SIZE, e.g. PPO=145MB")
        out[name.strip()] = parse_bytes(size)
    return out


def _measure(cfg: RunConfig) -> dict[str, Any]:
    from foxhunt.train.resources.measure import measure_in_subprocess

    return {
        "train": measure_in_subprocess(cfg, "train"),
        "infer": measure_in_subprocess(cfg, "infer"),
    }


def build_report(
    cfg: RunConfig,
    *,
    measure: bool,
    ensemble: bool,
    device_memory: str,
    members: list[str] | None,
    seed_members: int = 1,
) -> dict[str, Any]:
    """Everything ``foxhunt memory`` prints, as a JSON-able dict.

    Args:
        cfg: the run config (model, batch size as micro-batch, precision, checkpointing, device).
        measure: also measure in fresh subprocesses (CPU).
        ensemble: add the co-residency check.
        device_memory: device size for the ensemble check, e.g. ``4GB``.
        members: ``NAME=SIZE`` overrides of the other members' footprints.
        seed_members: N of ``foxhunt train --ensemble N`` (1: a single TFT): adds the
            ``seed_ensemble`` entry (quoted, not judged against the budgets).

    Returns:
        ``{"config", "components", "budgets", "ensemble"?, "seed_ensemble"?, "measurement"?,
        "pass"}``.
    """
    t = cfg.train
    from foxhunt.memory.estimate import estimate_for_run, process_overhead_bytes, run_device_type

    device = run_device_type(cfg)
    est = estimate_for_run(cfg)
    estimated: dict[str, int] = {
        "parameters": est.parameter_bytes,
        "gradients": est.gradient_bytes,
        "optimizer": est.optimizer_bytes,
        **({"weight_average": est.average_bytes} if est.average_bytes else {}),
        **({"cuda_libraries": est.library_bytes} if est.library_bytes else {}),
        "batch": est.batch_bytes,
        **{f"saved.{k}": v for k, v in est.saved_by_block.items()},
        "saved_activations": est.saved_activation_bytes,
        "inference_peak": est.inference_peak_bytes + process_overhead_bytes(device, "infer"),
        "training_peak": est.training_peak_bytes + process_overhead_bytes(device, "train"),
    }
    if device == "cpu":  # what `top` shows: import baseline + tensors + overhead + allocator slack
        from foxhunt.memory.budget import training_peak

        estimated["process_peak_rss"] = training_peak(
            cfg, t.micro_batch, t.checkpointing, t.precision
        )
    measured: dict[str, int | None] = dict.fromkeys(estimated)
    report: dict[str, Any] = {
        "config": {
            "preset": cfg.preset,
            "batch_size": t.micro_batch,
            "precision": t.precision,
            "checkpointing": t.checkpointing,
            "recompute": t.recompute,
            "cpu_allocator": t.cpu_allocator,
            "device": device,
        },
    }
    if measure:
        if device != "cpu":
            raise InputError("--measure runs on CPU; use --device cpu (GPU checks: tests -m gpu)")
        m = _measure(cfg)
        train, infer = m["train"], m["infer"]
        state = train["state_bytes"]
        saved = train["saved_by_block"]
        measured.update(
            parameters=state["parameter_bytes"],
            gradients=state["gradient_bytes"],
            optimizer=state["optimizer_bytes"],
            batch=train["batch_bytes"],
            saved_activations=sum(saved.values()),
            inference_peak=infer["peak_delta_bytes"],
            training_peak=train["peak_delta_bytes"],
        )
        if "process_peak_rss" in measured:
            measured["process_peak_rss"] = train["peak_rss_bytes"]
        measured.update({f"saved.{k}": v for k, v in saved.items()})
        report["measurement"] = {
            "how": "CPU: peak RSS minus RSS after imports and data, fresh process "
            "(python -m foxhunt.commands.measure), glibc thresholds tuned as in foxhunt train; "
            "saved activations via saved_tensors_hooks, deduplicated by storage",
            "commands": [shlex.join(x["command"]) for x in (train, infer) if x.get("command")],
            "train": {k: v for k, v in train.items() if k not in ("saved_by_block", "state_bytes")},
            "infer": infer,
        }
    components: dict[str, dict[str, Any]] = {}
    for name, value in estimated.items():
        got = measured[name]
        entry: dict[str, Any] = {"estimated_bytes": value, "measured_bytes": got}
        if got is not None:
            entry["relative_error"] = None if got == 0 else round((value - got) / got, 4)
        components[name] = entry
    budgets: dict[str, dict[str, Any]] = {}
    for name, limit in BUDGETS.items():
        value = measured[name] if measured[name] is not None else estimated[name]
        budgets[name] = {
            "limit": limit,
            "value": value,
            "source": "measured" if measured[name] is not None else "estimated",
            "pass": value < limit,
        }
    report["components"] = components
    report["budgets"] = budgets
    ok = all(b["pass"] for b in budgets.values())
    if ensemble:
        size = parse_bytes(device_memory)
        others = parse_members(members)
        # On a GPU the TFT's footprint is its tensors: the estimate without CPU process overhead.
        tft = est.training_peak_bytes
        total = tft + sum(others.values())
        free = size - total
        report["ensemble"] = {
            "device_memory": size,
            "members": {"TFT (training peak)": tft, **others},
            "total": total,
            "free": free,
            "min_free": MIN_FREE_BYTES,
            "pass": free > MIN_FREE_BYTES,
        }
        ok = ok and free > MIN_FREE_BYTES
    if seed_members > 1:
        report["seed_ensemble"] = _seed_ensemble(seed_members, components)
    report["pass"] = ok
    return report


def _seed_ensemble(n: int, components: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``foxhunt train --ensemble N``: the members train one after another in one process, so
    training peaks at one member's; inference holds N members' weights and runs them one after
    another over the same batch (one member's activations)."""

    def value(name: str) -> int:
        c = components[name]
        return c["measured_bytes"] if c["measured_bytes"] is not None else c["estimated_bytes"]

    out: dict[str, Any] = {
        "members": n,
        "how": "members train one after another (the run's peak is one member's); inference "
        "holds every member's weights and runs them one after another over a batch",
        "training_peak_per_member": value("training_peak"),
        "extra_weights": (n - 1) * value("parameters"),
        "inference_peak": value("inference_peak") + (n - 1) * value("parameters"),
    }
    if "process_peak_rss" in components:
        out["process_peak_rss_per_member"] = value("process_peak_rss")
    return out


def _print_table(report: dict[str, Any], console: Console) -> None:
    c = report["config"]
    table = Table(
        title=f"foxhunt memory: {c['preset']}, batch {c['batch_size']}, {c['precision']}, "
        f"checkpointing {'on' if c['checkpointing'] else 'off'}, {c['device']}"
    )
    table.add_column("component")
    table.add_column("estimated", justify="right")
    table.add_column("measured", justify="right")
    table.add_column("error", justify="right")
    for name, e in report["components"].items():
        got = e["measured_bytes"]
        err = e.get("relative_error")
        style = (
            "bold"
            if name in ("saved_activations", "inference_peak", "training_peak", "process_peak_rss")
            else None
        )
        table.add_row(
            name.replace("saved.", "  saved: ") if name.startswith("saved.") else name,
            format_bytes(e["estimated_bytes"]),
            "-" if got is None else format_bytes(got),
            "" if err is None else f"{err:+.1%}",
            style=style,
        )
    console.print(table)
    for name, b in report["budgets"].items():
        verdict = "[green]PASS[/green]" if b["pass"] else "[red]FAIL[/red]"
        console.print(
            f"{verdict} {name}: {format_bytes(b['value'])} ({b['source']}) < {format_bytes(b['limit'])}"
        )
    if "ensemble" in report:
        e = report["ensemble"]
        verdict = "[green]PASS[/green]" if e["pass"] else "[red]FAIL[/red]"
        parts = ", ".join(f"{k} {format_bytes(v)}" for k, v in e["members"].items())
        console.print(
            f"{verdict} ensemble on {format_bytes(e['device_memory'])}: {parts}; total "
            f"{format_bytes(e['total'])}, free {format_bytes(e['free'])} (needs > "
            f"{format_bytes(e['min_free'])})"
        )
    if "seed_ensemble" in report:
        se = report["seed_ensemble"]
        rss = se.get("process_peak_rss_per_member")
        console.print(
            f"seed ensemble of {se['members']} (foxhunt train --ensemble): members train one "
            f"after another, so the run peaks at one member's: training peak "
            f"{format_bytes(se['training_peak_per_member'])}"
            + (f", process peak RSS {format_bytes(rss)}" if rss is not None else "")
            + f"; inference holds every member's weights (+{format_bytes(se['extra_weights'])}) "
            f"and runs them one after another: peak {format_bytes(se['inference_peak'])} "
            "(quoted, not judged against the budgets)"
        )
    if "measurement" in report:
        console.print(f"measured: {report['measurement']['how']}")
    console.print(
        "estimates: live tensor bytes + CPU process overhead for the peaks; "
        "'other' is the loss; see docs/memory.md"
        if report["config"]["device"] == "cpu"
        else "estimates: what torch.cuda.max_memory_allocated counts (tensors, cuBLAS "
        "workspaces, cuDNN's buffers); 'other' is the loss; see docs/memory.md"
    )


def add_parser(sub: argparse._SubParsersAction) -> None:
    mm = sub.add_parser("memory", help="estimate (and measure) memory against the budgets")
    add_config_args(mm)
    mm.add_argument(
        "--device",
        choices=["cpu", "cuda"],
        help="estimate a run on this kind of device (default: the config's, cpu for the presets); "
        "cuda counts tensors and CUDA's library buffers, as max_memory_allocated does",
    )
    mm.add_argument("--measure", action="store_true", help="also run one real step and measure")
    mm.add_argument("--json", action="store_true", help="machine-readable output")
    mm.add_argument("--ensemble", action="store_true", help="check co-residency with other models")
    mm.add_argument("--device-memory", default="4GB", help="device size for --ensemble (4GB)")
    mm.add_argument(
        "--member",
        action="append",
        metavar="NAME=SIZE",
        help="ensemble member footprint, e.g. PPO=145MB (repeatable; replaces the defaults)",
    )
    mm.add_argument(
        "--seed-ensemble",
        type=int,
        default=1,
        metavar="N",
        help="also quote a seed ensemble of N TFTs (foxhunt train --ensemble N): training peak "
        "per member (they train one after another) and inference with N members' weights",
    )
    mm.set_defaults(
        func=lambda a: memory_command(
            _on_device(run_config(a), a.device),
            measure=a.measure,
            as_json=a.json,
            ensemble=a.ensemble,
            device_memory=a.device_memory,
            members=a.member,
            seed_members=a.seed_ensemble,
        )
    )


def _on_device(cfg: RunConfig, device: str | None) -> RunConfig:
    """``cfg`` with ``--device`` applied (kept as it is when the flag is not given)."""
    return cfg if device is None else cfg.replace(train={"device": device})


def memory_command(
    cfg: RunConfig,
    *,
    measure: bool,
    as_json: bool,
    ensemble: bool,
    device_memory: str,
    members: list[str] | None,
    seed_members: int = 1,
) -> int:
    """Run ``foxhunt memory``: print the component table (or JSON) and the budget verdicts.

    Args:
        cfg: the resolved run config; its batch size (micro-batch) is the one estimated.
        measure: also measure in fresh CPU subprocesses (one training run of 2 steps, one
            inference forward).
        as_json: print the JSON report instead of tables.
        ensemble: check co-residency with the other ensemble members.
        device_memory: device size for ``--ensemble``.
        members: ``NAME=SIZE`` entries replacing the default members.
        seed_members: N of ``foxhunt train --ensemble N``, quoted per member (1: none).

    Returns:
        0 when all budgets pass, 1 when any fails.

    Raises:
        InputError: bad sizes or members.
    """
    from foxhunt.runtime import parse_device, resolve_precision

    if seed_members < 1:
        raise InputError(f"--seed-ensemble must be >= 1, got {seed_members}")
    device = cfg.train.device
    if device.startswith("cuda"):  # an estimate needs no GPU here: auto is fp32 without one
        import torch

        target = torch.device("cuda")
    else:
        target = parse_device(device)
    precision = resolve_precision(cfg.train.precision, target)
    cfg = cfg.replace(train={"precision": precision})  # auto: what this machine would train in
    report = build_report(
        cfg,
        measure=measure,
        ensemble=ensemble,
        device_memory=device_memory,
        members=members,
        seed_members=seed_members,
    )
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        _print_table(report, Console())
    return 0 if report["pass"] else 1
