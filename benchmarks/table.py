"""The main table: foxhunt vs pytorch-forecasting at TFT-225, batch 8 and 32, train and infer.

Settings (each one fresh process):

- ``foxhunt``: foxhunt's shipped defaults (``TFTConfig()``), fp32, no checkpointing, glibc's
  allocator as it comes;
- ``foxhunt-lean``: the same with ``tune_cpu_allocator()`` (glibc mmap/trim thresholds 1 MiB),
  as ``foxhunt train`` runs it: less memory, slower steps (page faults on every large tensor);
- ``foxhunt-bf16``: the default with bf16 autocast (``--precision bf16``), glibc's allocator;
- ``pf-hcs16`` / ``pf-hcs256``: pytorch-forecasting's TFT at ``hidden_continuous_size`` 16
  (comparable to foxhunt's ``variable_width`` 16) and 256 (= hidden, the width pytorch-forecasting
  gives each variable when a user sets only ``hidden_size``-sized embeddings).

The schedule alternates libraries within each (batch, mode) and repeats the whole sweep
``rounds`` times: foxhunt, pf-hcs16, pf-hcs256, foxhunt, pf-hcs16, pf-hcs256, ... so slow drift
of the machine (other load, thermal state) hits both libraries alike. Each aggregated cell is the
median over rounds.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from typing import Any

from runner import BENCH_DIR, BENCH_PYTHON, MAIN_PYTHON, Job

#: TFT-225 sizes, passed explicitly to both workers so the table never depends on a default.
TFT_225 = {
    "--n-static": "5",
    "--n-historical": "210",
    "--n-known": "10",
    "--hidden": "256",
    "--heads": "8",
    "--lstm-layers": "2",
    "--encoder-length": "50",
    "--horizon": "10",
}
#: A tiny stand-in for smoke runs of the plumbing (``--quick``).
QUICK = {**TFT_225, "--n-historical": "20", "--hidden": "16", "--heads": "2", "--lstm-layers": "1"}

VARIANTS: tuple[tuple[str, str, dict[str, str]], ...] = (
    ("foxhunt", "foxhunt", {}),
    ("foxhunt-lean", "foxhunt", {"--allocator": "tuned"}),
    ("foxhunt-bf16", "foxhunt", {"--precision": "bf16"}),
    ("pf-hcs16", "pytorch-forecasting", {"--hidden-continuous-size": "16"}),
    ("pf-hcs256", "pytorch-forecasting", {"--hidden-continuous-size": "256"}),
)


def _flags(d: dict[str, str]) -> tuple[str, ...]:
    return tuple(x for kv in d.items() for x in kv)


def jobs(
    rounds: int = 1,
    batches: Iterable[int] = (8, 32),
    variants: Iterable[str] = ("foxhunt", "foxhunt-lean", "foxhunt-bf16", "pf-hcs16", "pf-hcs256"),
    quick: bool = False,
    step_budget_s: float = 60.0,
) -> list[Job]:
    """The main-table jobs in run order (A B A B ...).

    Args:
        rounds: Repeats of the whole sweep.
        batches: Batch sizes.
        variants: Which of :data:`VARIANTS` to run.
        quick: Tiny sizes and 2 timed steps (plumbing check, not a measurement).
        step_budget_s: Time budget for the timed steps of one setting (see ``--max-seconds``).
    """
    sizes = QUICK if quick else TFT_225
    wanted = set(variants)
    out: list[Job] = []
    for r in range(rounds):
        for batch in batches:
            for mode in ("train", "infer"):
                for variant, library, extra in VARIANTS:
                    if variant not in wanted:
                        continue
                    is_fox = library == "foxhunt"
                    if quick:
                        steps, warmup = ("2", "1")
                    elif mode == "train":
                        steps, warmup = ("10", "2") if is_fox else ("5", "1")
                    else:
                        steps, warmup = ("20", "2") if is_fox else ("10", "1")
                    quick_extra = {"--hidden-continuous-size": "4"} if quick and not is_fox else {}
                    args = {
                        **sizes,
                        **extra,
                        **quick_extra,
                        "--mode": mode,
                        "--batch-size": str(batch),
                        "--steps": steps,
                        "--warmup": warmup,
                        "--max-seconds": str(step_budget_s),
                    }
                    out.append(
                        Job(
                            name=f"table-{variant}-{mode}-b{batch}-r{r}",
                            python=MAIN_PYTHON if is_fox else BENCH_PYTHON,
                            script=BENCH_DIR / ("foxhunt_step.py" if is_fox else "pf_step.py"),
                            args=_flags(args),
                            tags={
                                "section": "table",
                                "variant": variant,
                                "mode": mode,
                                "batch_size": batch,
                                "round": r,
                                "quick": quick,
                            },
                            timeout_s=120 + 12 * step_budget_s,
                        )
                    )
    return out


def aggregate(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (variant, mode, batch): medians over rounds; failures listed, not hidden."""
    groups: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    for r in records:
        if r.get("section") != "table":
            continue
        key = (r["variant"], r["mode"], int(r["batch_size"]))
        groups.setdefault(key, []).append(r)
    rows = []
    order = {v[0]: i for i, v in enumerate(VARIANTS)}
    for (variant, mode, batch), runs in sorted(
        groups.items(), key=lambda kv: (kv[0][1] != "train", kv[0][2], order[kv[0][0]])
    ):
        ok = [r for r in runs if "error" not in r]
        row: dict[str, Any] = {
            "variant": variant,
            "mode": mode,
            "batch_size": batch,
            "runs": len(ok),
            "errors": [r["error"] for r in runs if "error" in r],
        }
        if ok:
            med_s = statistics.median(r["median_s"] for r in ok)
            row.update(
                params=ok[0]["params"],
                median_s=med_s,
                samples_per_s=batch / med_s,
                peak_rss_over_baseline_bytes=int(
                    statistics.median(r["peak_rss_over_baseline_bytes"] for r in ok)
                ),
                loadavg=max(r.get("loadavg_after", 0.0) for r in ok),
            )
            for key in ("saved_activation_bytes", "flops_per_step", "lstm_flops"):
                if key in ok[0]:
                    row[key] = int(statistics.median(r[key] for r in ok))
            if "flops_per_step" in row:
                row["flops_per_s"] = row["flops_per_step"] / med_s
        rows.append(row)
    return rows


def ratios(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each foxhunt variant against each pytorch-forecasting variant: speed-up, memory fraction."""
    by = {(r["variant"], r["mode"], r["batch_size"]): r for r in rows if "median_s" in r}
    out = []
    for (variant, mode, batch), pf in by.items():
        if variant.startswith("foxhunt"):
            continue
        for fox_variant in ("foxhunt", "foxhunt-lean", "foxhunt-bf16"):
            fox = by.get((fox_variant, mode, batch))
            if fox is None:
                continue
            out.append(
                {
                    "foxhunt": fox_variant,
                    "against": variant,
                    "mode": mode,
                    "batch_size": batch,
                    "speedup": fox["samples_per_s"] / pf["samples_per_s"],
                    "memory_fraction": fox["peak_rss_over_baseline_bytes"]
                    / max(pf["peak_rss_over_baseline_bytes"], 1),
                }
            )
    return out
