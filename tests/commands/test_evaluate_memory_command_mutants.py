"""``foxhunt evaluate`` and ``foxhunt memory``, in process with their heavy work replaced by
recorders: what each passes on, prints, returns and refuses. The real evaluation is tested on
trained runs (``slow``), the real estimates in test_memory.py and the measurement in a
subprocess (``slow``); ``make mutate`` runs none of those."""

from __future__ import annotations

import argparse
import copy
import json
import re
import types
from pathlib import Path
from typing import Any

import pytest
import torch
from rich.console import Console

from foxhunt.cli import build_parser, main
from foxhunt.commands import evaluate as evaluate_cmd
from foxhunt.commands import memory as memory_cmd
from foxhunt.config import RunConfig, demo
from foxhunt.errors import InputError


def _args(argv: list[str]) -> argparse.Namespace:
    return build_parser().parse_args(argv)


@pytest.fixture
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    """rich's consoles as wide as any line the tests print (one line each)."""
    monkeypatch.setenv("COLUMNS", "400")


def _lines(text: str) -> list[str]:
    """What is printed outside the tables' grids (titles, verdicts, sentences), stripped."""
    return [line.strip() for line in text.splitlines() if line.strip() and line[0] not in "┏┃┡│└"]


def _tables(text: str, raw: bool = False) -> dict[str, list[list[str]]]:
    """Each table printed: its title -> its rows, the header first; each cell stripped (``raw``:
    as laid out, without the one space of padding either side)."""
    tables: dict[str, list[list[str]]] = {}
    title = ""
    for line in text.splitlines():
        if line[:1] in ("┃", "│"):
            cells = [c[1:-1] for c in re.split("[┃│]", line)[1:-1]]
            tables[title].append(cells if raw else [c.strip() for c in cells])
        elif line[:1] == "┏":
            tables[title] = []
        elif line[:1] not in ("┡", "└"):
            title = line.strip()
    return tables


def _alignment(rows: list[list[str]]) -> str:
    """One mark per column of a table's raw rows: ``>`` where every cell's text ends at the
    column's right edge, ``<`` where it does not (the columns tested have cells of several
    widths, so a left-aligned one has one that ends short)."""
    return "".join(
        ">" if all(not c.endswith(" ") for c in col if c.strip()) else "<"
        for col in zip(*rows, strict=True)
    )


# --- foxhunt evaluate: the tables ------------------------------------------------------------

H = 10
TRAINING = {
    "served": "epoch",
    "epoch": 2,
    "epochs_trained": 3,
    "start_val_loss": 0.5,
    "served_val_loss": 0.45,
    "change": -0.1,
}


def _verdicts(*marks: tuple[str, int]) -> list[dict[str, str]]:
    return [{"verdict": v} for v, n in marks for _ in range(n)]


def _evaluation() -> dict[str, Any]:
    """An evaluation as ``evaluate_model`` returns it: the TFT, two baselines and one without a
    display name ("mystery"), horizon 10 (each comparison holds one horizon more, to be left
    out), the three verdicts, two symbols."""

    def scores(bp: float, q_risk: dict[str, float], coverage: dict[str, float]) -> dict[str, Any]:
        per_h = [(bp - 2 + h) / 1e4 for h in range(H)]
        return {"mean_pinball": bp / 1e4, "q_risk": q_risk, "coverage": coverage} | {
            "pinball_per_horizon": per_h
        }

    def compared(relative: float, dm: float, p: float, verdict: str, per_h: Any) -> dict:
        pooled = {"relative": relative, "dm_statistic": dm, "p_value": p, "verdict": verdict}
        return {"pooled": pooled, "per_horizon": per_h}

    none = "no significant difference"
    return {
        "model": "runs/demo",
        "bars": "bars.csv",
        "split": "test split of the training bars",
        "n_windows": 12_345,
        "horizon": H,
        "training": TRAINING,
        "scores": {
            "tft": scores(12.0, {"P50": 0.1234, "P90": 0.05}, {"10-90": 0.8, "2-98": 0.96}),
            "zero": scores(22.0, {"P50": 1.0, "P90": 1.0}, {"10-90": 0.0}),
            "ewma": scores(14.5, {"P50": 0.13, "P90": 0.0625}, {"10-90": 0.75, "2-98": 0.9}),
            "mystery": scores(17.0, {}, {}),  # no risk, no interval: not its levels
        },
        "comparisons": {
            "zero": compared(
                -0.4, -3.21, 0.00123, "win", _verdicts(("win", 8), (none, 1), ("lose", 2))
            ),
            "ewma": compared(-0.04, -1.2, 0.23, none, _verdicts((none, 11))),
            "mystery": compared(0.05, 2.5, 0.0125, "lose", _verdicts(("lose", 5), ("win", 6))),
        },
        "per_symbol": {
            "ES": {
                "n_windows": 1_234,
                "tft": 0.0011,
                "coverage": {"10-90": 0.8},
                "comparisons": {
                    "zero": {"relative": -0.5, "verdict": "win"},
                    "ewma": {"relative": 0.02, "verdict": none},
                    "mystery": {"relative": 0.1, "verdict": "lose"},
                },
            },
            "NQ": {
                "n_windows": 56,
                "tft": 0.0013,
                "coverage": {},
                "comparisons": {
                    "zero": {"relative": -0.25, "verdict": "win"},
                    "ewma": {"relative": -0.1, "verdict": "win"},
                    "mystery": {"relative": 0.0, "verdict": none},
                },
            },
        },
        "tft_beats": {"zero": True, "ewma": False, "mystery": False},
    }


TITLE = "runs/demo on bars.csv — test split of the training bars, 12,345 windows"
BY_HORIZON = "mean pinball loss per horizon (bp)"
DM_TITLE = "TFT vs baseline: Diebold–Mariano test (HAC variance), 5 % level"
BY_SYMBOL = "per symbol: TFT − baseline, Diebold–Mariano at 5 % (W win, L lose)"
SCORES = [
    ["model", "mean pinball (bp)", "P50 q-risk", "P90 q-risk", "10–90 cover", "2–98 cover"],
    ["TFT", "12.000", "0.1234", "0.0500", "80.0 %", "96.0 %"],
    ["zero return", "22.000", "1.0000", "1.0000", "0.0 %", "—"],
    ["EWMA (RiskMetrics)", "14.500", "0.1300", "0.0625", "75.0 %", "90.0 %"],
    ["mystery", "17.000", "—", "—", "—", "—"],
]
PER_HORIZON = [["h", "TFT", "zero return", "EWMA (RiskMetrics)", "mystery"]] + [
    [str(h), f"{9 + h}.000", f"{19 + h}.000", f"{11 + h}.500", f"{14 + h}.000"]
    for h in range(1, H + 1)
]


def test_evaluate_prints_scores_horizons_verdicts_and_symbols(
    capsys: pytest.CaptureFixture[str], wide: None
) -> None:
    evaluate_cmd.print_tables(_evaluation(), Console())
    out = capsys.readouterr().out
    assert _lines(out) == [
        "served weights: trained epoch 2 of 3 (validation loss 0.45, -10.00% against the "
        "start's 0.5)",
        TITLE,
        BY_HORIZON,
        DM_TITLE,
        BY_SYMBOL,
        "TFT (mean pinball loss, 5 % level): significantly beats zero return; significantly "
        "loses to mystery; no significant difference from EWMA (RiskMetrics).",
    ]
    assert _tables(out) == {
        TITLE: SCORES,
        BY_HORIZON: PER_HORIZON,
        DM_TITLE: [
            ["baseline", "TFT − baseline", "DM", "p", "verdict", "per horizon"],
            ["zero return", "-40.00 %", "-3.21", "0.00123", "win", "WWWWWWWW·L"],
            ["EWMA (RiskMetrics)", "-4.00 %", "-1.20", "0.23", "no significant difference"]
            + ["··········"],
            ["mystery", "+5.00 %", "+2.50", "0.0125", "lose", "LLLLLWWWWW"],
        ],
        BY_SYMBOL: [
            ["symbol", "windows", "TFT (bp)", "10–90 cover", "zero return"]
            + ["EWMA (RiskMetrics)", "mystery"],
            ["ES", "1,234", "11.000", "80.0 %", "-50.00 % W", "+2.00 % ·", "+10.00 % L"],
            ["NQ", "56", "13.000", "—", "-25.00 % W", "-10.00 % W", "+0.00 % ·"],
            ["wins", "", "", "", "2 of 2", "1 of 2", "0 of 2"],
        ],
    }
    # names and verdicts read from the left, numbers from the right
    raw = _tables(out, raw=True)
    assert _alignment(raw[TITLE]) == "<>>>>>"
    assert _alignment(raw[BY_HORIZON]) == ">>>>>"
    assert _alignment(raw[DM_TITLE]) == "<>>><>"
    assert _alignment(raw[BY_SYMBOL]) == "<>>>>>>"


def test_evaluate_prints_an_older_evaluation_of_one_symbol(
    capsys: pytest.CaptureFixture[str], wide: None
) -> None:
    """No training record, no significance test (the verdict from ``tft_beats``), one symbol
    (no per-symbol table)."""
    result = _evaluation()
    del result["training"], result["comparisons"]
    result["per_symbol"] = {"ES": result["per_symbol"]["ES"]}
    result["tft_beats"] = {"zero": True, "ewma": False, "mystery": True}
    evaluate_cmd.print_tables(result, Console())
    out = capsys.readouterr().out
    assert _lines(out) == [
        TITLE,
        BY_HORIZON,
        "TFT beats zero return and mystery on mean pinball loss.",
    ]
    assert _tables(out) == {TITLE: SCORES, BY_HORIZON: PER_HORIZON}


def test_evaluate_verdict_sentence_groups_the_baselines() -> None:
    result = _evaluation()
    pooled = {k: c["pooled"] for k, c in result["comparisons"].items()}
    pooled["zero"]["verdict"] = pooled["ewma"]["verdict"] = "win"
    result["comparisons"]["garch"] = {"pooled": {"verdict": "lose"}}
    result["comparisons"]["tow_ewma"] = {"pooled": {"verdict": "no significant difference"}}
    result["comparisons"]["empirical"] = {"pooled": {"verdict": "no significant difference"}}
    assert evaluate_cmd.verdict_sentence(result) == (
        "TFT (mean pinball loss, 5 % level): significantly beats zero return, EWMA "
        "(RiskMetrics); significantly loses to mystery, garch; no significant difference from "
        "tow_ewma, empirical."
    )  # names: those of the scores (garch and the others here are not scored)
    result["comparisons"] = {"zero": {"pooled": {"verdict": "too few windows for a test"}}}
    assert evaluate_cmd.verdict_sentence(result) == (  # one window: no p-value, no "difference"
        "TFT (mean pinball loss, 5 % level): too few windows for a test against zero return."
    )
    for verdict in ("win", "lose"):
        result["comparisons"] = {"zero": {"pooled": {"verdict": verdict}}}
        assert evaluate_cmd.verdict_sentence(result) == (
            "TFT (mean pinball loss, 5 % level): significantly "
            + ("beats" if verdict == "win" else "loses to")
            + " zero return."
        )
    del result["comparisons"]
    result["tft_beats"] = {"zero": False, "garch": True}
    assert evaluate_cmd.verdict_sentence(result) == "TFT beats garch on mean pinball loss."
    result["tft_beats"] = {"zero": False}
    assert evaluate_cmd.verdict_sentence(result) == "TFT beats no baseline on mean pinball loss."
    del result["tft_beats"]
    assert evaluate_cmd.verdict_sentence(result) == "TFT beats no baseline on mean pinball loss."


def test_evaluate_tables_name_a_baseline_without_a_label_by_its_key(
    capsys: pytest.CaptureFixture[str], wide: None
) -> None:
    result = _evaluation()
    names = {"tft": "TFT", "zero": "zero return"}
    console = Console()
    console.print(evaluate_cmd.verdict_table(result["comparisons"], names, 3))
    console.print(evaluate_cmd.symbol_table(result["per_symbol"], names))
    tables = _tables(capsys.readouterr().out)
    assert [r[0] for r in tables[DM_TITLE]] == ["baseline", "zero return", "ewma", "mystery"]
    assert [r[-1] for r in tables[DM_TITLE]] == ["per horizon", "WWW", "···", "LLL"]
    assert tables[BY_SYMBOL][0][4:] == ["zero return", "ewma", "mystery"]


# --- foxhunt evaluate: the command -----------------------------------------------------------


@pytest.fixture
def evaluated(monkeypatch: pytest.MonkeyPatch) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """``evaluate_model`` replaced by a recorder; its progress bar recorded as (disabled, on
    stderr, transient)."""
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def evaluate_model(*args: Any, **kw: Any) -> dict[str, Any]:
        p = kw["progress"]
        kw["progress"] = (p.disable, p.console.stderr, p.live.transient)
        calls.append((args, kw))
        return _evaluation()

    monkeypatch.setattr("foxhunt.infer.evaluate.evaluate_model", evaluate_model)
    return calls


def test_evaluate_passes_every_flag_and_prints_json(
    tmp_path: Path,
    evaluated: list[tuple[tuple[Any, ...], dict[str, Any]]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    a = _args(
        ["evaluate", "--model", str(tmp_path / "run"), "--bars", str(tmp_path / "b.csv")]
        + ["--batch-size", "64", "--device", "cuda:1", "--instruments", str(tmp_path / "i.toml")]
        + ["--out", str(tmp_path / "ev.json"), "--strict", "--allow-outliers", "--windows", "all"]
        + ["--symbol", "ES", "--tz", "America/Chicago", "--bar-minutes", "5"]
        + ["--ts-format", "epoch-s", "--columns", "ts=time,close=px", "--allow-odd-times"]
        + ["--json"]
    )
    assert a.func is evaluate_cmd.run
    assert a.func(a) is None
    assert evaluated == [
        (
            (tmp_path / "run", tmp_path / "b.csv"),
            {
                "batch_size": 64,
                "device": "cuda:1",
                "progress": (True, True, True),  # no progress bar under --json
                "instruments": tmp_path / "i.toml",
                "out": tmp_path / "ev.json",
                "strict": True,
                "allow_outliers": True,
                "scope": "all",
                "read": {
                    "symbol": "ES",
                    "columns": ("ts=time", "close=px"),
                    "ts_format": "epoch-s",
                    "tz": "America/Chicago",
                    "bar_minutes": 5,
                    "allow_odd_times": True,
                },
            },
        )
    ]
    assert capsys.readouterr().out == json.dumps(_evaluation(), indent=2) + "\n"


def test_evaluate_defaults_and_prints_the_tables(
    tmp_path: Path,
    evaluated: list[tuple[tuple[Any, ...], dict[str, Any]]],
    capsys: pytest.CaptureFixture[str],
    wide: None,
) -> None:
    assert main(["evaluate", "--model", str(tmp_path / "run"), "--bars", str(tmp_path)]) == 0
    assert evaluated == [
        (
            (tmp_path / "run", tmp_path),
            {
                "batch_size": 256,
                "device": "cpu",
                "progress": (False, True, True),  # a transient bar on stderr
                "instruments": None,
                "out": None,
                "strict": False,
                "allow_outliers": False,
                "scope": None,
                "read": {},
            },
        )
    ]
    out = capsys.readouterr().out
    lines = _lines(out)
    assert lines[0].startswith("served weights: trained epoch 2 of 3") and lines[1] == TITLE
    assert lines[-1].startswith("TFT (mean pinball loss, 5 % level): significantly beats")
    assert list(_tables(out)) == [TITLE, BY_HORIZON, DM_TITLE, BY_SYMBOL]


@pytest.mark.parametrize("windows", ["new", "test", "all"])
def test_evaluate_passes_the_windows_to_score(
    tmp_path: Path, evaluated: list[tuple[tuple[Any, ...], dict[str, Any]]], windows: str
) -> None:
    argv = ["evaluate", "--model", str(tmp_path), "--bars", str(tmp_path), "--json"]
    a = _args([*argv, "--windows", windows])
    a.func(a)
    assert evaluated[-1][1]["scope"] == windows


@pytest.mark.parametrize("missing", ["--model", "--bars"])
def test_evaluate_needs_a_model_and_bars(
    evaluated: list[tuple[tuple[Any, ...], dict[str, Any]]],
    capsys: pytest.CaptureFixture[str],
    missing: str,
) -> None:
    given = {"--model": "run", "--bars": "b.csv"}
    del given[missing]
    with pytest.raises(SystemExit) as e:
        main(["evaluate", *given.popitem()])
    assert e.value.code == 2 and evaluated == []
    assert f"the following arguments are required: {missing}" in capsys.readouterr().err


def test_evaluate_refuses_an_out_over_its_bars_or_model(
    tmp_path: Path,
    evaluated: list[tuple[tuple[Any, ...], dict[str, Any]]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    bars = tmp_path / "b.csv"
    bars.write_text("x\n")
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text("{}")
    argv = ["evaluate", "--model", str(run), "--bars", str(bars), "--json", "--out"]
    assert main([*argv, str(bars)]) == 2
    assert capsys.readouterr().err == (
        f"foxhunt: error: --out {bars} is the input --bars {bars}; write the output somewhere "
        "else\n"
    )
    a = _args([*argv, str(run / "config.json")])
    with pytest.raises(InputError) as e:
        a.func(a)
    assert str(e.value) == (
        f"--out {run / 'config.json'} is the input --model {run / 'config.json'}; write the "
        "output somewhere else"
    )
    assert evaluated == [] and capsys.readouterr().out == ""


# --- foxhunt memory: the members -------------------------------------------------------------


def test_memory_members_default_and_override() -> None:
    defaults = {"DQN": 6_000_000, "PPO": 145_000_000, "Mamba-2": 164_000_000}
    assert memory_cmd.parse_members(None) == defaults
    assert memory_cmd.parse_members([]) == defaults
    assert memory_cmd.parse_members([" PPO =145MB", "Big= 1.5 GB", "Tiny=4096"]) == {
        "PPO": 145_000_000,
        "Big": 1_500_000_000,
        "Tiny": 4096,
    }


@pytest.mark.parametrize("item", ["PPO", " =1GB", "=1GB"])
def test_memory_refuses_a_member_without_a_name_and_size(item: str) -> None:
    with pytest.raises(InputError) as e:
        memory_cmd.parse_members(["PPO=145MB", item])
    assert str(e.value) == f"--member {item!r}: expected NAME=SIZE, e.g. PPO=145MB"


def test_memory_member_name_ends_at_the_first_equals_sign() -> None:
    with pytest.raises(InputError, match="not a byte size: '1GB=2GB'"):
        memory_cmd.parse_members(["PPO=1GB=2GB"])  # not a member named "PPO=1GB"


# --- foxhunt memory: the report --------------------------------------------------------------

CPU_ESTIMATE: dict[str, Any] = {
    "parameter_bytes": 12_000_000,
    "gradient_bytes": 12_000_000,
    "optimizer_bytes": 24_000_000,
    "average_bytes": 12_000_000,
    "library_bytes": 0,
    "batch_bytes": 1_500_000,
    "saved_by_block": {"historical_vsn": 30_000_000, "post_attention_gate": 20_000_000},
    "saved_activation_bytes": 50_000_000,
    "inference_peak_bytes": 100_000_000,
    "training_peak_bytes": 400_000_000,
}
"""What the fake estimate says (a run with weight averaging, on the CPU)."""

CUDA_ESTIMATE = CPU_ESTIMATE | {"average_bytes": 0, "library_bytes": 70_000_000}

OVERHEAD = {
    ("cpu", "infer"): 150_000_000,
    ("cpu", "train"): 300_000_000,
    ("cuda", "infer"): 0,
    ("cuda", "train"): 0,
}
PROCESS_PEAK_RSS = 900_000_000
COMMAND = ["python", "-m", "foxhunt.commands.measure", "--config-json", '{"preset": "demo"}']
MEASURED: dict[str, dict[str, Any]] = {
    "train": {
        "state_bytes": {
            "parameter_bytes": 11_000_000,
            "gradient_bytes": 12_000_000,
            "optimizer_bytes": 24_000_000,
        },
        "batch_bytes": 1_000_000,
        "saved_by_block": {"historical_vsn": 0, "post_attention_gate": 30_000_000},
        "peak_delta_bytes": 600_000_000,
        "peak_rss_bytes": 1_200_000_000,
        "steps": 2,
        "command": [*COMMAND, "--mode", "train"],
    },
    "infer": {"peak_delta_bytes": 200_000_000, "peak_rss_bytes": 500_000_000},  # no command
}
MEASURED_HOW = (
    "CPU: peak RSS minus RSS after imports and data, fresh process (python -m "
    "foxhunt.commands.measure), glibc thresholds tuned as in foxhunt train; saved activations "
    "via saved_tensors_hooks, deduplicated by storage"
)
CPU_NOTE = (
    "estimates: live tensor bytes + CPU process overhead for the peaks; 'other' is the loss; "
    "see docs/memory.md"
)
CUDA_NOTE = (
    "estimates: what torch.cuda.max_memory_allocated counts (tensors, cuBLAS workspaces, "
    "cuDNN's buffers); 'other' is the loss; see docs/memory.md"
)


@pytest.fixture
def estimates(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The estimate, the CPU process terms, the subprocess measurement and the precision
    ``auto`` resolves to (bf16, as on a CPU with native bf16) replaced by recorders: the calls
    are kept under their names; ``estimate`` is what the estimate says (change it per test)."""
    seen: dict[str, Any] = {"estimate": dict(CPU_ESTIMATE)}
    for name in ("estimated", "overhead", "rss", "measured", "precision"):
        seen[name] = []

    def estimate_for_run(cfg: RunConfig) -> types.SimpleNamespace:
        seen["estimated"].append(cfg)
        return types.SimpleNamespace(**seen["estimate"])

    def process_overhead_bytes(device: str, mode: str) -> int:
        seen["overhead"].append((device, mode))
        return OVERHEAD[device, mode]

    def training_peak(cfg: RunConfig, micro_batch: int, checkpointing: bool, precision: str) -> int:
        seen["rss"].append((cfg, micro_batch, checkpointing, precision))
        return PROCESS_PEAK_RSS

    def measure_in_subprocess(cfg: RunConfig, mode: str) -> dict[str, Any]:
        seen["measured"].append((cfg, mode))
        return copy.deepcopy(MEASURED[mode])

    def resolve_precision(precision: str, device: torch.device) -> str:
        seen["precision"].append((precision, device))
        return "bf16" if precision == "auto" else precision

    monkeypatch.setattr("foxhunt.memory.estimate.estimate_for_run", estimate_for_run)
    monkeypatch.setattr("foxhunt.memory.estimate.process_overhead_bytes", process_overhead_bytes)
    monkeypatch.setattr("foxhunt.memory.budget.training_peak", training_peak)
    monkeypatch.setattr(
        "foxhunt.train.resources.measure.measure_in_subprocess", measure_in_subprocess
    )
    monkeypatch.setattr("foxhunt.runtime.resolve_precision", resolve_precision)
    return seen


def _estimated(**values: int) -> dict[str, dict[str, Any]]:
    return {k: {"estimated_bytes": v, "measured_bytes": None} for k, v in values.items()}


CPU_COMPONENTS = _estimated(
    parameters=12_000_000,
    gradients=12_000_000,
    optimizer=24_000_000,
    weight_average=12_000_000,
    batch=1_500_000,
    **{"saved.historical_vsn": 30_000_000, "saved.post_attention_gate": 20_000_000},
    saved_activations=50_000_000,
    inference_peak=250_000_000,  # + the CPU inference overhead
    training_peak=700_000_000,  # + the CPU training overhead
    process_peak_rss=PROCESS_PEAK_RSS,
)


def _budgets(parameters: int, inference: int, training: int, source: str = "estimated") -> dict:
    limits = {"parameters": 50 * 10**6, "inference_peak": 500 * 10**6, "training_peak": 10**9}
    values = {"parameters": parameters, "inference_peak": inference, "training_peak": training}
    return {
        k: {"limit": limits[k], "value": values[k], "source": source, "pass": values[k] < limits[k]}
        for k in limits
    }


def _cpu_config() -> RunConfig:
    train = {"batch_size": 64, "micro_batch_size": 16, "precision": "bf16", "checkpointing": True}
    return demo().replace(train=train | {"recompute": True, "cpu_allocator": "lean"})


def _report(cfg: RunConfig, **kw: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "measure": False,
        "ensemble": False,
        "device_memory": "4GB",
        "members": None,
    }
    return memory_cmd.build_report(cfg, **(args | kw))


def test_memory_report_of_cpu_estimates(estimates: dict[str, Any]) -> None:
    cfg = _cpu_config()
    report = _report(cfg)
    assert report == {
        "config": {
            "preset": "demo",
            "batch_size": 16,  # the micro-batch: what one forward holds
            "precision": "bf16",
            "checkpointing": True,
            "recompute": True,
            "cpu_allocator": "lean",
            "device": "cpu",
        },
        "components": CPU_COMPONENTS,
        "budgets": _budgets(12_000_000, 250_000_000, 700_000_000),
        "pass": True,
    }
    assert list(report["components"]) == list(CPU_COMPONENTS)  # the table's order
    assert estimates["estimated"] == [cfg]
    assert estimates["overhead"] == [("cpu", "infer"), ("cpu", "train")]
    assert estimates["rss"] == [(cfg, 16, True, "bf16")]
    assert estimates["measured"] == []


def test_memory_report_of_cuda_estimates(estimates: dict[str, Any]) -> None:
    """No weight averaging, CUDA's library buffers, no CPU process terms or peak RSS."""
    estimates["estimate"] = dict(CUDA_ESTIMATE)
    cfg = demo().replace(train={"device": "cuda:0", "precision": "fp32"})
    report = _report(cfg, seed_members=2)
    assert report["config"] == {
        "preset": "demo",
        "batch_size": 64,
        "precision": "fp32",
        "checkpointing": False,
        "recompute": False,
        "cpu_allocator": "balanced",
        "device": "cuda",
    }
    assert report["components"] == _estimated(
        parameters=12_000_000,
        gradients=12_000_000,
        optimizer=24_000_000,
        cuda_libraries=70_000_000,
        batch=1_500_000,
        **{"saved.historical_vsn": 30_000_000, "saved.post_attention_gate": 20_000_000},
        saved_activations=50_000_000,
        inference_peak=100_000_000,
        training_peak=400_000_000,
    )
    assert list(report["components"])[3] == "cuda_libraries"
    assert report["budgets"] == _budgets(12_000_000, 100_000_000, 400_000_000)
    assert report["seed_ensemble"] == {
        "members": 2,
        "how": "members train one after another (the run's peak is one member's); inference "
        "holds every member's weights and runs them one after another over a batch",
        "training_peak_per_member": 400_000_000,
        "extra_weights": 12_000_000,
        "inference_peak": 112_000_000,
    }
    assert estimates["overhead"] == [("cuda", "infer"), ("cuda", "train")]
    assert estimates["rss"] == []


def test_memory_budgets_fail_at_their_limits(estimates: dict[str, Any]) -> None:
    estimates["estimate"] |= {
        "parameter_bytes": 50_000_000,  # at the limit: fails
        "inference_peak_bytes": 349_999_999,  # + 150 MB overhead: a byte under it
        "training_peak_bytes": 700_000_000,  # + 300 MB overhead: at it
    }
    report = _report(_cpu_config())
    assert report["budgets"] == _budgets(50_000_000, 499_999_999, 10**9)
    assert [b["pass"] for b in report["budgets"].values()] == [False, True, False]
    assert report["pass"] is False
    # the ensemble fits, the budgets still fail
    report = _report(_cpu_config(), ensemble=True)
    assert report["ensemble"]["pass"] is True and report["pass"] is False


def test_memory_ensemble_needs_more_than_a_gigabyte_free(estimates: dict[str, Any]) -> None:
    report = _report(_cpu_config(), ensemble=True)
    assert report["ensemble"] == {
        "device_memory": 4 * 10**9,
        # the TFT's tensors, without the CPU process overhead
        "members": {
            "TFT (training peak)": 400_000_000,
            "DQN": 6_000_000,
            "PPO": 145_000_000,
            "Mamba-2": 164_000_000,
        },
        "total": 715_000_000,
        "free": 3_285_000_000,
        "min_free": 10**9,
        "pass": True,
    }
    assert report["pass"] is True and "seed_ensemble" not in report
    report = _report(_cpu_config(), ensemble=True, device_memory="2GB", members=["PPO=600MB"])
    assert report["ensemble"] == {
        "device_memory": 2 * 10**9,
        "members": {"TFT (training peak)": 400_000_000, "PPO": 600_000_000},
        "total": 10**9,
        "free": 10**9,  # exactly the minimum: not enough
        "min_free": 10**9,
        "pass": False,
    }
    assert report["pass"] is False
    report = _report(
        _cpu_config(), ensemble=True, device_memory="2000000001", members=["PPO=600MB"]
    )
    assert report["ensemble"]["free"] == 10**9 + 1 and report["ensemble"]["pass"] is True
    assert report["pass"] is True


def _measured_report(estimates: dict[str, Any], cfg: RunConfig) -> dict[str, Any]:
    estimates["estimate"]["training_peak_bytes"] = 800_000_000  # estimated 1.1 GB: would fail
    return _report(cfg, measure=True, seed_members=3)


MEASURED_COMPONENTS = {
    "parameters": (12_000_000, 11_000_000, 0.0909),
    "gradients": (12_000_000, 12_000_000, 0.0),
    "optimizer": (24_000_000, 24_000_000, 0.0),
    "weight_average": (12_000_000, None, None),  # not measured: no error
    "batch": (1_500_000, 1_000_000, 0.5),
    "saved.historical_vsn": (30_000_000, 0, None),  # measured nothing: no relative error
    "saved.post_attention_gate": (20_000_000, 30_000_000, -0.3333),
    "saved_activations": (50_000_000, 30_000_000, 0.6667),
    "inference_peak": (250_000_000, 200_000_000, 0.25),
    "training_peak": (1_100_000_000, 600_000_000, 0.8333),
    "process_peak_rss": (PROCESS_PEAK_RSS, 1_200_000_000, -0.25),
}


def test_memory_measures_train_and_infer_and_judges_the_measured(
    estimates: dict[str, Any],
) -> None:
    cfg = _cpu_config()
    report = _measured_report(estimates, cfg)
    assert estimates["measured"] == [(cfg, "train"), (cfg, "infer")]
    expected = {}
    for name, (value, got, error) in MEASURED_COMPONENTS.items():
        expected[name] = {"estimated_bytes": value, "measured_bytes": got}
        if got is not None:
            expected[name]["relative_error"] = error
    assert report["components"] == expected
    assert report["budgets"] == _budgets(11_000_000, 200_000_000, 600_000_000, "measured")
    assert report["pass"] is True  # on the measured training peak
    train = dict(MEASURED["train"])
    del train["saved_by_block"], train["state_bytes"]  # in the components
    assert report["measurement"] == {
        "how": MEASURED_HOW,
        "commands": [
            'python -m foxhunt.commands.measure --config-json \'{"preset": "demo"}\' --mode train'
        ],
        "train": train,
        "infer": MEASURED["infer"],
    }
    assert report["seed_ensemble"] == {
        "members": 3,
        "how": "members train one after another (the run's peak is one member's); inference "
        "holds every member's weights and runs them one after another over a batch",
        "training_peak_per_member": 600_000_000,
        "extra_weights": 22_000_000,
        "inference_peak": 222_000_000,
        "process_peak_rss_per_member": 1_200_000_000,
    }


def test_memory_seed_ensemble_quotes_the_estimates_when_nothing_was_measured(
    estimates: dict[str, Any],
) -> None:
    report = _report(_cpu_config(), seed_members=3)
    se = report["seed_ensemble"]
    assert (se["training_peak_per_member"], se["extra_weights"], se["inference_peak"]) == (
        700_000_000,
        24_000_000,
        274_000_000,
    )
    assert se["process_peak_rss_per_member"] == PROCESS_PEAK_RSS
    assert "seed_ensemble" not in _report(_cpu_config(), seed_members=1)


def test_memory_measure_is_refused_on_cuda(estimates: dict[str, Any]) -> None:
    with pytest.raises(InputError) as e:
        _report(demo().replace(train={"device": "cuda"}), measure=True)
    assert str(e.value) == "--measure runs on CPU; use --device cpu (GPU checks: tests -m gpu)"
    assert estimates["measured"] == []


# --- foxhunt memory: the printout ------------------------------------------------------------


def test_memory_prints_the_measured_components_and_the_seed_ensemble(
    estimates: dict[str, Any], capsys: pytest.CaptureFixture[str], wide: None
) -> None:
    memory_cmd._print_table(_measured_report(estimates, _cpu_config()), Console())
    out = capsys.readouterr().out
    title = "foxhunt memory: demo, batch 16, bf16, checkpointing on, cpu"
    assert _tables(out) == {
        title: [
            ["component", "estimated", "measured", "error"],
            ["parameters", "12.0 MB", "11.0 MB", "+9.1%"],
            ["gradients", "12.0 MB", "12.0 MB", "+0.0%"],
            ["optimizer", "24.0 MB", "24.0 MB", "+0.0%"],
            ["weight_average", "12.0 MB", "-", ""],
            ["batch", "1.50 MB", "1.00 MB", "+50.0%"],
            ["saved: historical_vsn", "30.0 MB", "0 B", ""],
            ["saved: post_attention_gate", "20.0 MB", "30.0 MB", "-33.3%"],
            ["saved_activations", "50.0 MB", "30.0 MB", "+66.7%"],
            ["inference_peak", "250 MB", "200 MB", "+25.0%"],
            ["training_peak", "1.10 GB", "600 MB", "+83.3%"],
            ["process_peak_rss", "900 MB", "1.20 GB", "-25.0%"],
        ]
    }
    raw = _tables(out, raw=True)[title]
    assert _alignment(raw) == "<>>>"
    assert raw[6][0].startswith("  saved: historical_vsn")  # indented under the component
    assert _lines(out) == [
        title,
        "PASS parameters: 11.0 MB (measured) < 50.0 MB",
        "PASS inference_peak: 200 MB (measured) < 500 MB",
        "PASS training_peak: 600 MB (measured) < 1.00 GB",
        "seed ensemble of 3 (foxhunt train --ensemble): members train one after another, so "
        "the run peaks at one member's: training peak 600 MB, process peak RSS 1.20 GB; "
        "inference holds every member's weights (+22.0 MB) and runs them one after another: "
        "peak 222 MB (quoted, not judged against the budgets)",
        f"measured: {MEASURED_HOW}",
        CPU_NOTE,
    ]


def test_memory_prints_the_peaks_in_bold(
    estimates: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    memory_cmd._print_table(
        _report(_cpu_config()), Console(force_terminal=True, color_system="standard", width=400)
    )
    rows = [line for line in capsys.readouterr().out.splitlines() if "│" in line]
    bold = {
        re.sub(r"\x1b\[[0-9;]*m", "", line).split("│")[1].strip(): "\x1b[1m" in line
        for line in rows
    }
    assert bold == {
        "parameters": False,
        "gradients": False,
        "optimizer": False,
        "weight_average": False,
        "batch": False,
        "saved: historical_vsn": False,
        "saved: post_attention_gate": False,
        "saved_activations": True,
        "inference_peak": True,
        "training_peak": True,
        "process_peak_rss": True,
    }


# --- foxhunt memory: the command -------------------------------------------------------------


def test_memory_command_defaults_print_the_estimates(
    estimates: dict[str, Any], capsys: pytest.CaptureFixture[str], wide: None
) -> None:
    assert main(["memory"]) == 0
    (cfg,) = estimates["estimated"]
    assert (cfg.preset, cfg.train.device, cfg.train.precision) == ("tft-225", "cpu", "bf16")
    assert estimates["precision"] == [("auto", torch.device("cpu"))]  # auto: what this machine
    assert estimates["measured"] == []
    out = capsys.readouterr().out
    title = "foxhunt memory: tft-225, batch 32, bf16, checkpointing off, cpu"
    assert _tables(out) == {
        title: [["component", "estimated", "measured", "error"]]
        + [
            [name, est, "-", ""]
            for name, est in (
                ("parameters", "12.0 MB"),
                ("gradients", "12.0 MB"),
                ("optimizer", "24.0 MB"),
                ("weight_average", "12.0 MB"),
                ("batch", "1.50 MB"),
                ("saved: historical_vsn", "30.0 MB"),
                ("saved: post_attention_gate", "20.0 MB"),
                ("saved_activations", "50.0 MB"),
                ("inference_peak", "250 MB"),
                ("training_peak", "700 MB"),
                ("process_peak_rss", "900 MB"),
            )
        ]
    }
    assert _lines(out) == [
        title,
        "PASS parameters: 12.0 MB (estimated) < 50.0 MB",
        "PASS inference_peak: 250 MB (estimated) < 500 MB",
        "PASS training_peak: 700 MB (estimated) < 1.00 GB",
        CPU_NOTE,
    ]


def test_memory_command_on_cuda_with_a_failing_ensemble(
    estimates: dict[str, Any], capsys: pytest.CaptureFixture[str], wide: None
) -> None:
    estimates["estimate"] = dict(CUDA_ESTIMATE)
    argv = ["memory", "--preset", "demo", "--device", "cuda", "--checkpointing", "--ensemble"]
    argv += ["--device-memory", "2GB", "--member", "PPO=600MB", "--seed-ensemble", "2"]
    assert main(argv) == 1
    (cfg,) = estimates["estimated"]
    assert (cfg.train.device, cfg.train.checkpointing) == ("cuda", True)
    # an estimate needs no GPU: auto resolves for a CUDA device
    assert estimates["precision"] == [("auto", torch.device("cuda"))]
    out = capsys.readouterr().out
    assert _lines(out) == [
        "foxhunt memory: demo, batch 64, bf16, checkpointing on, cuda",
        "PASS parameters: 12.0 MB (estimated) < 50.0 MB",
        "PASS inference_peak: 100 MB (estimated) < 500 MB",
        "PASS training_peak: 400 MB (estimated) < 1.00 GB",
        "FAIL ensemble on 2.00 GB: TFT (training peak) 400 MB, PPO 600 MB; total 1.00 GB, free "
        "1.00 GB (needs > 1.00 GB)",
        "seed ensemble of 2 (foxhunt train --ensemble): members train one after another, so "
        "the run peaks at one member's: training peak 400 MB; inference holds every member's "
        "weights (+12.0 MB) and runs them one after another: peak 112 MB (quoted, not judged "
        "against the budgets)",
        CUDA_NOTE,
    ]
    assert main([*argv, "--device-memory", "2001MB"]) == 0  # a megabyte more than the minimum
    assert "PASS ensemble on 2.00 GB: TFT (training peak) 400 MB, PPO 600 MB; total" in (
        capsys.readouterr().out
    )


def test_memory_command_fails_a_budget_with_exit_1(
    estimates: dict[str, Any], capsys: pytest.CaptureFixture[str], wide: None
) -> None:
    estimates["estimate"]["parameter_bytes"] = 50_000_000
    assert main(["memory", "--preset", "demo"]) == 1
    assert "FAIL parameters: 50.0 MB (estimated) < 50.0 MB" in _lines(capsys.readouterr().out)


def test_memory_command_passes_every_flag_and_prints_json(
    estimates: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["memory", "--preset", "demo", "--batch-size", "8", "--precision", "fp32"]
    argv += ["--device", "cpu"]
    argv += ["--measure", "--ensemble", "--device-memory", "3GB", "--member", "PPO=145MB"]
    argv += ["--member", "Big=1GB", "--seed-ensemble", "2", "--json"]
    assert main(argv) == 0
    (cfg,) = estimates["estimated"]
    assert [c for c, _ in estimates["measured"]] == [cfg, cfg]
    assert estimates["precision"] == [("fp32", torch.device("cpu"))]
    assert cfg.train.device == "cpu"
    out = capsys.readouterr().out
    report = json.loads(out)
    assert out == json.dumps(report, indent=2) + "\n"
    assert report["config"]["batch_size"] == 8 and report["config"]["precision"] == "fp32"
    assert report["measurement"]["how"] == MEASURED_HOW
    assert report["ensemble"]["device_memory"] == 3 * 10**9
    assert report["ensemble"]["members"] == {
        "TFT (training peak)": 400_000_000,
        "PPO": 145_000_000,
        "Big": 10**9,
    }
    assert report["seed_ensemble"]["members"] == 2 and report["pass"] is True


def test_memory_command_refuses_bad_input_with_exit_2(
    estimates: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["memory", "--seed-ensemble", "0"]) == 2
    assert capsys.readouterr().err == "foxhunt: error: --seed-ensemble must be >= 1, got 0\n"
    assert estimates["estimated"] == []  # refused before anything was estimated
    with pytest.raises(InputError) as e:
        memory_cmd.memory_command(
            demo(),
            measure=False,
            as_json=True,
            ensemble=False,
            device_memory="4GB",
            members=None,
            seed_members=-1,
        )
    assert str(e.value) == "--seed-ensemble must be >= 1, got -1"
    assert estimates["estimated"] == [] and capsys.readouterr().out == ""
    # without seed_members: a single TFT
    assert (
        memory_cmd.memory_command(
            demo(), measure=False, as_json=True, ensemble=False, device_memory="4GB", members=None
        )
        == 0
    )
    assert "seed_ensemble" not in json.loads(capsys.readouterr().out)
    estimates["estimated"].clear()
    assert main(["memory", "--device", "cuda", "--measure"]) == 2
    assert capsys.readouterr().err == (
        "foxhunt: error: --measure runs on CPU; use --device cpu (GPU checks: tests -m gpu)\n"
    )
    assert main(["memory", "--ensemble", "--member", "PPO"]) == 2
    assert capsys.readouterr().err == (
        "foxhunt: error: --member 'PPO': expected NAME=SIZE, e.g. PPO=145MB\n"
    )
    assert estimates["measured"] == [] and capsys.readouterr().out == ""


def test_memory_device_flag_applies_only_when_given() -> None:
    cfg = demo()
    assert memory_cmd._on_device(cfg, None) is cfg
    cuda = memory_cmd._on_device(cfg, "cuda")
    assert cuda.train.device == "cuda" and cuda == cfg.replace(train={"device": "cuda"})
