"""A seed ensemble against its own members: the table of docs/evaluation.md, "Ensembles".

Reads the ``foxhunt evaluate --json --out`` files of the ensemble and of each member (mean
pinball, coverage, the Diebold–Mariano verdicts against EWMA and GARCH), the ensemble's
``run.json`` (seconds and peak RSS per member) and, with ``--bars``, scores the ensemble and
each member again on the same windows to test the ensemble against each member
(Diebold–Mariano on the per-window pinball losses, HAC variance, 5 %).

Usage (after ``foxhunt train ... --ensemble 3 --out ENS`` and one evaluate per model)::

    python benchmarks/experiments/ensemble_table.py --ensemble ENS --bars BARS \\
        --evals ENS-eval.json M0-eval.json M1-eval.json M2-eval.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import torch

from foxhunt.data.pipeline import evaluation_data
from foxhunt.infer.evaluate import score
from foxhunt.infer.significance import compare
from foxhunt.quantize.model import load_inference_model

CPU = torch.device("cpu")


def _verdict(c: dict[str, Any]) -> str:
    p = c["pooled"]
    word = {"win": "win", "lose": "**lose**"}.get(p["verdict"], "n.s.")
    return f"{p['relative'] * 100:+.2f} % {word} (p {p['p_value']:.2g})"


def _row(name: str, ev: dict[str, Any], extra: str = "") -> str:
    tft = ev["scores"]["tft"]
    cov = tft["coverage"]
    cmp = ev["comparisons"]
    return (
        f"| {name} | {tft['mean_pinball'] * 1e4:.4f} | {cov['10-90'] * 100:.1f} % / "
        f"{cov['2-98'] * 100:.1f} % | {_verdict(cmp['ewma'])} | {_verdict(cmp['garch'])} |"
        f"{extra}"
    )


def _ensemble_vs_members(ensemble: Path, bars: Path, members: int) -> list[str]:
    """DM of the ensemble's per-window losses against each member's, on the same windows."""
    loaded = load_inference_model(ensemble, CPU)
    windows, _, _ = evaluation_data(
        bars, loaded.config, loaded.spec, loaded.scaler, loaded.fingerprint, loaded.instruments
    )
    _, ens, _ = score(loaded, windows, {}, batch_size=256, device=CPU)
    out = []
    for k in range(members):
        member = load_inference_model(ensemble / "members" / str(k), CPU)
        _, mine = score(member, windows, {}, batch_size=256, device=CPU)
        out.append(_verdict(compare(ens["tft"].numpy(), mine["tft"].numpy())))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ensemble", type=Path, required=True)
    p.add_argument("--bars", type=Path, help="also test the ensemble against each member")
    p.add_argument("--evals", type=Path, nargs="+", required=True, help="ensemble's, then members'")
    a = p.parse_args()
    evals = [json.loads(f.read_text()) for f in a.evals]
    info = json.loads((a.ensemble / "run.json").read_text())
    members = info["members"]
    dm = _ensemble_vs_members(a.ensemble, a.bars, len(members)) if a.bars else None
    print(f"{evals[0]['n_windows']:,} test windows; {evals[0]['split']}")
    print()
    print("| model | mean pinball (bp) | 10–90 / 2–98 coverage | vs EWMA | vs GARCH(1,1) |"
          + (" ensemble vs this member |" if dm else ""))  # fmt: skip
    print("|---|---|---|---|---|" + ("---|" if dm else ""))
    print(_row(f"ensemble of {len(members)}", evals[0], " |" if dm else ""))
    for k, (m, ev) in enumerate(zip(members, evals[1:], strict=True)):
        extra = f" {dm[k]} |" if dm else ""
        print(_row(f"member {k} (seed {m['seed']})", ev, extra))
    mean = sum(e["scores"]["tft"]["mean_pinball"] for e in evals[1:]) / len(evals[1:])
    print()
    print(f"mean of the members' mean pinball: {mean * 1e4:.4f} bp")
    print(
        "training: "
        + ", ".join(
            f"member {m['index']} {m['seconds']:.0f} s, peak RSS {m['peak_rss_bytes'] / 1e6:.0f} MB"
            for m in members
        )  # fmt: skip
        + f"; total {info['seconds']:.0f} s"
    )


if __name__ == "__main__":
    main()
