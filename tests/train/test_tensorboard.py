from __future__ import annotations

import json

import pytest

from foxhunt.cli import main
from foxhunt.data.sources.demo import write_demo_bars
from foxhunt.train.tensorboard import EVENT_GLOB, TensorBoardLog


def _scalars(logdir) -> dict[str, list[tuple[int, float]]]:
    # imported here: 0.3 s, paid by every xdist worker's collection when at the top
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(logdir))
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def test_records_become_scalars_at_their_step(tmp_path) -> None:
    with TensorBoardLog(tmp_path / "tb") as tb:
        tb({"kind": "memory", "point": "run_start", "epoch": 0, "step": 0, "rss_bytes": 1})
        tb({"kind": "step", "epoch": 1, "step": 2, "loss": 0.5, "lr": 1e-3, "grad_norm": 2.0,
            "samples_per_s": 100.0, "micro_batch": 8})  # fmt: skip
        tb({"kind": "memory", "point": "train_step", "epoch": 1, "step": 2,
            "rss_bytes": 250_000_000, "peak_rss_bytes": 300_000_000, "device": "cpu"})  # fmt: skip
        tb({"kind": "epoch", "epoch": 1, "step": 4, "train_loss": 0.25, "val_loss": 0.75,
            "best": True})  # fmt: skip
        tb({"kind": "oom", "epoch": 1, "step": 4, "message": "halved"})
    got = _scalars(tmp_path / "tb")
    assert got == {
        "train/loss": [(2, 0.5)],
        "train/lr": [(2, pytest.approx(1e-3))],
        "train/grad_norm": [(2, 2.0)],
        "train/samples_per_s": [(2, 100.0)],
        "memory/rss_MB": [(2, 250.0)],  # run_start is not a logged point
        "memory/peak_rss_MB": [(2, 300.0)],
        "epoch/train_loss": [(4, 0.25)],
        "epoch/val_loss": [(4, 0.75)],
    }


def test_no_record_no_file_and_a_fresh_run_clears_its_own_directory(tmp_path) -> None:
    with TensorBoardLog(tmp_path / "never"):
        pass
    assert not (tmp_path / "never").exists()
    logdir = tmp_path / "tb"
    for clears in (True, True, False):
        with TensorBoardLog(logdir, fresh_start_clears=clears) as tb:
            tb({"kind": "memory", "point": "run_start", "epoch": 0, "step": 0})
    assert len(list(logdir.glob(EVENT_GLOB))) == 2  # the second run removed the first's
    with TensorBoardLog(logdir, fresh_start_clears=True) as tb:  # a resumed run appends
        tb({"kind": "memory", "point": "run_start", "epoch": 2, "step": 10})
    assert len(list(logdir.glob(EVENT_GLOB))) == 3


TINY = """\
preset = "demo"
[model]
hidden = 8
n_heads = 2
encoder_length = 8
horizon = 2
variable_width = 4
quantiles = [0.1, 0.5, 0.9]
[train]
batch_size = 16
warmup_steps = 1
num_threads = 1
log_every = 1
"""


@pytest.mark.slow
@pytest.mark.subprocess
def test_train_tensorboard_holds_the_runs_metrics(tmp_path) -> None:
    bars, run, logdir = tmp_path / "ES.parquet", tmp_path / "run", tmp_path / "tb"
    write_demo_bars(bars, n_bars=800, seed=3)
    (tmp_path / "tiny.toml").write_text(TINY)
    args = ["train", "--config", str(tmp_path / "tiny.toml"), "--bars", str(bars), "--out"]
    args += [str(run), "--epochs", "2", "--max-steps", "4", "--tensorboard", str(logdir)]
    assert main(args) == 0
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    steps = [r for r in records if r["kind"] == "step"]
    epochs = [r for r in records if r["kind"] == "epoch"]
    got = _scalars(logdir)
    assert [s for s, _ in got["train/loss"]] == [r["step"] for r in steps] == [1, 2, 3, 4]
    assert [v for _, v in got["train/loss"]] == pytest.approx([r["loss"] for r in steps])
    assert [v for _, v in got["train/lr"]] == pytest.approx([r["lr"] for r in steps])
    assert got["epoch/val_loss"] == [
        (r["step"], pytest.approx(r["val_loss"], rel=1e-6)) for r in epochs
    ]
    assert len(got["memory/rss_MB"]) == 4 + len(epochs)  # every step (log_every 1) + epoch ends
    assert all(v > 0 for _, v in got["memory/rss_MB"])
    assert not (run / "tensorboard").exists()  # DIR given: nothing under the run


@pytest.mark.subprocess
def test_tensorboard_without_dir_logs_under_the_run(tmp_path) -> None:
    from foxhunt.cli import build_parser
    from foxhunt.commands.options import run_config
    from foxhunt.commands.train import _tensorboard

    parse = build_parser().parse_args
    a = parse(["train", "--preset", "demo", "--out", str(tmp_path / "run"), "--tensorboard"])
    with _tensorboard(a, run_config(a)) as listeners:
        assert [(tb.logdir, tb.fresh_start_clears) for tb in listeners] == [
            (tmp_path / "run" / "tensorboard", True)
        ]
    a = parse(["train", "--resume", str(tmp_path / "old"), "--tensorboard", str(tmp_path / "x")])
    with _tensorboard(a, run_config(a)) as listeners:
        assert [(tb.logdir, tb.fresh_start_clears) for tb in listeners] == [(tmp_path / "x", False)]
    with _tensorboard(parse(["train"]), run_config(parse(["train"]))) as listeners:
        assert listeners == []
