"""``measure_here`` in-process on a tiny TFT, and ``measure_in_subprocess`` with ``subprocess.run``
faked: every deterministic number the measurement reports (keys, batch and state bytes, saved
activations per block), that the config's switches reach what it runs, and the child's command
line, parsing and errors. RSS numbers are the machine's: only their types and order are checked.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

import pytest

from foxhunt.config import RunConfig, preset

TINY_MODEL = {
    "hidden": 8,
    "n_heads": 2,
    "n_static": 2,
    "n_historical": 3,
    "n_known": 2,
    "encoder_length": 4,
    "horizon": 2,
    "variable_width": 2,
    "vsn_chunk": 2,
    "quantiles": (0.1, 0.5, 0.9),
}

COMMON_KEYS = {
    "mode",
    "batch_size",
    "precision",
    "checkpointing",
    "recompute",
    "cpu_allocator",
    "threads",
    "batch_bytes",
    "baseline_rss_bytes",
    "peak_rss_bytes",
    "peak_delta_bytes",
}
STATE_KEYS = {"parameter_bytes", "buffer_bytes", "gradient_bytes", "optimizer_bytes"}


def tiny(**train: Any) -> RunConfig:
    """The demo preset shrunk to a few hundred microseconds per step: batch 4 in micro-batches
    of 2, fp32 unless ``train`` says otherwise."""
    base = {"batch_size": 4, "micro_batch_size": 2, "precision": "fp32"}
    return preset("demo").replace(model=TINY_MODEL, train={**base, **train})


@dataclass
class Record:
    """What one ``measure_here`` call did, seen through patched collaborators."""

    result: dict[str, Any] = field(default_factory=dict)
    events: list[str] = field(default_factory=list)
    models: list[Any] = field(default_factory=list)
    forwards: list[dict[str, Any]] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)


def measure(cfg: RunConfig, mode: str, **kwargs: Any) -> Record:
    """Run ``measure_here`` with its model class, ``train_step`` and RSS counters wrapped so the
    test sees the model's initial weights, every forward's context and batch, every step's
    arguments and the order of the counter calls (the real counters still answer)."""
    import torch

    import foxhunt.train.resources.measure as m
    from foxhunt.model.recompute import is_checkpointing
    from foxhunt.model.tft import TFT

    rec = Record()

    class RecordingTFT(TFT):
        def __init__(self, config: Any) -> None:
            super().__init__(config)
            rec.events.append("model")
            self.initial = {k: v.detach().clone() for k, v in self.state_dict().items()}
            rec.models.append(self)

        def forward(self, batch: Any, return_attention: bool = False) -> Any:
            rec.forwards.append(
                {
                    "training": self.training,
                    "grad": torch.is_grad_enabled(),
                    "inference": torch.is_inference_mode_enabled(),
                    "autocast": torch.is_autocast_enabled("cpu"),
                    "dtype": torch.get_autocast_dtype("cpu"),
                    "batch": batch,
                }
            )
            return super().forward(batch, return_attention)

    real_step = m.train_step

    def recording_step(model: Any, batch: Any, opt: Any, scaler: Any, micro: Any, **kw: Any):
        rec.events.append(f"step{kw['step']}")
        rec.steps.append(
            {
                **kw,
                "model": model,
                "batch": batch,
                "opt": opt,
                "groups": [(g["lr"], g["weight_decay"]) for g in opt.param_groups],
                "scaler_enabled": scaler.is_enabled(),
                "micro": (micro.batch_size, micro.micro),
                "checkpointing": is_checkpointing(model),
                "recompute": _recompute_flags(model),
                "training": model.training,
            }
        )
        return real_step(model, batch, opt, scaler, micro, **kw)

    def wrap(name: str, fn: Any) -> Any:
        def wrapped() -> Any:
            rec.events.append(name)
            return fn()

        return wrapped

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(m, "TFT", RecordingTFT)
        mp.setattr(m, "train_step", recording_step)
        mp.setattr(m, "rss_bytes", wrap("rss", m.rss_bytes))
        mp.setattr(m, "reset_peak_rss", wrap("reset", m.reset_peak_rss))
        mp.setattr(m, "peak_rss_bytes", wrap("peak", m.peak_rss_bytes))
        rec.result = m.measure_here(cfg, mode, **kwargs)  # type: ignore[arg-type]
    return rec


def _recompute_flags(model: Any) -> set[bool]:
    """The streaming flags of the time-varying VSNs and the LSTMs' recompute flags."""
    from foxhunt.model.lstm import LSTMBlock
    from foxhunt.model.vsn import VariableSelectionNetwork

    flags = set()
    for mod in model.modules():
        if isinstance(mod, VariableSelectionNetwork) and mod is not model.static_vsn:
            flags.add(mod.streaming)
        elif isinstance(mod, LSTMBlock):
            flags.add(mod.recompute)
    return flags


def expected_saved(cfg: RunConfig, *, seed: int) -> dict[str, int]:
    """Saved activations per block of a fresh model of ``cfg`` on the first micro-batch of the
    measured batch, counted here (the bytes depend on shapes and dtypes, not on weights)."""
    import torch

    from foxhunt.memory.saved_tensors import saved_activations_by_block
    from foxhunt.model import TFT, quantile_loss, set_checkpointing
    from foxhunt.model.batch import random_batch
    from foxhunt.model.recompute import set_internal_recompute
    from foxhunt.runtime import autocast

    train = cfg.train
    model = TFT(cfg.model)
    model.train()
    set_checkpointing(model, train.checkpointing)
    set_internal_recompute(model, train.recompute)
    batch = random_batch(cfg.model, train.batch_size, seed=seed)
    micro = batch.slice(0, train.micro_batch)
    quantiles = torch.tensor(cfg.model.quantiles)

    def loss_fn() -> torch.Tensor:
        with autocast(torch.device("cpu"), train.precision):
            pred = model(micro).quantiles
        return quantile_loss(pred.float(), micro.target, quantiles)

    exclude = [batch.static, batch.historical, batch.known, batch.target]
    return saved_activations_by_block(model, loss_fn, exclude=exclude)


def expected_state(cfg: RunConfig) -> dict[str, int]:
    """State bytes with gradients and AdamW's two moments and step counter for every parameter
    (fp32 throughout), from the parameter count of an independently built model."""
    from foxhunt.model import TFT

    model = TFT(cfg.model)
    params = list(model.parameters())
    param_bytes = 4 * sum(p.numel() for p in params)
    return {
        "parameter_bytes": param_bytes,
        "buffer_bytes": 4 * sum(b.numel() for b in model.buffers()),
        "gradient_bytes": param_bytes,
        "optimizer_bytes": 2 * param_bytes + 4 * len(params),
    }


def batch_bytes(cfg: RunConfig, batch_size: int) -> int:
    c = cfg.model
    per_window = c.n_static + c.encoder_length * c.n_historical + c.total_length * c.n_known
    return 4 * batch_size * (per_window + c.horizon)


def assert_same_batch(got: Any, want: Any) -> None:
    import torch

    for name in ("static", "historical", "known", "target"):
        assert torch.equal(getattr(got, name), getattr(want, name)), name


def assert_initial_weights(rec: Record, cfg: RunConfig, seed: int) -> None:
    import torch

    from foxhunt.model import TFT

    torch.manual_seed(seed)
    want = TFT(cfg.model).state_dict()
    (model,) = rec.models
    assert model.initial.keys() == want.keys()
    assert all(torch.equal(model.initial[k], want[k]) for k in want)


# --- fixtures: each configuration measured for each test -------------------------------------
# Not module-scoped: mutmut ties a function to the test during which it runs, so a measurement
# made once in the first test's setup would leave every later test out of the mutants' runs.


@pytest.fixture
def plain() -> tuple[RunConfig, Record]:
    """fp32, no checkpointing, no recomputation; default steps and seed."""
    cfg = tiny()
    return cfg, measure(cfg, "train")


@pytest.fixture
def switched() -> tuple[RunConfig, Record]:
    """Every switch the measurement reads turned the other way, other steps and seed."""
    cfg = tiny(
        precision="bf16",
        checkpointing=True,
        recompute=True,
        cpu_allocator="lean",
        lr=0.0123,
        weight_decay=0.034,
        grad_clip=0.5,
    )
    return cfg, measure(cfg, "train", steps=3, seed=3)


@pytest.fixture
def inferred() -> tuple[RunConfig, Record]:
    """Inference with ``auto`` precision, default seed."""
    cfg = tiny(precision="auto")
    return cfg, measure(cfg, "infer")


# --- measure_here: train ---------------------------------------------------------------------


def test_train_reports_exactly_these_keys(plain, switched) -> None:  # noqa: ANN001
    for _, rec in (plain, switched):
        assert set(rec.result) == COMMON_KEYS | {"state_bytes", "saved_by_block"}
        assert set(rec.result["state_bytes"]) == STATE_KEYS


def test_train_echoes_the_config_and_the_whole_batch(plain, switched) -> None:  # noqa: ANN001
    import torch

    for cfg, rec in (plain, switched):
        r = rec.result
        assert r["mode"] == "train"
        assert r["batch_size"] == 4  # the whole step's batch, not the micro-batch
        assert r["precision"] == cfg.train.precision
        assert r["checkpointing"] is cfg.train.checkpointing
        assert r["recompute"] is cfg.train.recompute
        assert r["cpu_allocator"] == cfg.train.cpu_allocator
        assert r["threads"] == torch.get_num_threads()
        assert r["batch_bytes"] == batch_bytes(cfg, 4) == 448
        json.dumps(r)  # JSON-able, as the child prints it
    assert plain[1].result["cpu_allocator"] == "balanced"
    assert switched[1].result["cpu_allocator"] == "lean"


def test_train_rss_numbers_are_ints(plain, switched) -> None:  # noqa: ANN001
    for _, rec in (plain, switched):
        r = rec.result
        for key in ("baseline_rss_bytes", "peak_rss_bytes", "peak_delta_bytes"):
            assert type(r[key]) is int, key
        # positive, but in no fixed order here: in a busy test process RSS can fall between
        # the baseline and the reset of the peak (the fresh child of the real use has no
        # such neighbours)
        assert r["peak_rss_bytes"] > 0 and r["baseline_rss_bytes"] > 0
        assert r["peak_delta_bytes"] == r["peak_rss_bytes"] - r["baseline_rss_bytes"]


def test_train_takes_the_baseline_before_the_model_and_the_peak_after_the_steps(
    plain,  # noqa: ANN001
    switched,  # noqa: ANN001
) -> None:
    assert plain[1].events == ["rss", "reset", "model", "step0", "step1", "peak"]
    assert switched[1].events == ["rss", "reset", "model", "step0", "step1", "step2", "peak"]


def test_steps_below_two_still_run_two() -> None:
    rec = measure(tiny(micro_batch_size=None), "train", steps=1)
    assert [s["step"] for s in rec.steps] == [0, 1]
    assert rec.steps[0]["micro"] == (4, 4)
    # the state is read in the last step: optimizer state from the first one is there
    assert rec.result["state_bytes"]["optimizer_bytes"] > 0


def test_state_bytes_are_parameters_gradients_and_adamw_state(plain, switched) -> None:  # noqa: ANN001
    for cfg, rec in (plain, switched):
        assert rec.result["state_bytes"] == expected_state(cfg)
    assert plain[1].result["state_bytes"] == {
        "parameter_bytes": 17220,
        "buffer_bytes": 4,
        "gradient_bytes": 17220,
        "optimizer_bytes": 35004,
    }


def test_saved_activations_per_block_are_the_first_micro_batchs(plain, switched) -> None:  # noqa: ANN001
    assert plain[1].result["saved_by_block"] == expected_saved(plain[0], seed=0)
    assert switched[1].result["saved_by_block"] == expected_saved(switched[0], seed=3)


def test_the_saved_activations_forward_runs_on_the_first_micro_batch(plain, switched) -> None:  # noqa: ANN001
    import torch

    from foxhunt.model.batch import random_batch

    for (cfg, rec), seed, dtype in ((plain, 0, None), (switched, 3, torch.bfloat16)):
        last = rec.forwards[-1]
        assert_same_batch(last["batch"], random_batch(cfg.model, 4, seed=seed).slice(0, 2))
        assert last["training"] and last["grad"] and not last["inference"]
        assert last["autocast"] is (dtype is not None)
        if dtype is not None:
            assert last["dtype"] == dtype
        # two forwards per step (micro-batches of 2 out of 4), then the counting one
        assert len(rec.forwards) == 2 * len(rec.steps) + 1


def test_checkpointing_and_recompute_lower_the_saved_bytes(plain) -> None:  # noqa: ANN001
    from foxhunt.model.recompute import CHECKPOINTED_BLOCKS

    base = plain[1].result["saved_by_block"]
    ckpt = expected_saved(tiny(checkpointing=True), seed=0)
    rec = expected_saved(tiny(recompute=True), seed=0)
    for name in CHECKPOINTED_BLOCKS:
        assert ckpt[name] <= base[name]
    assert sum(ckpt.values()) < sum(base.values())
    for name in ("historical_vsn", "known_vsn", "lstm_encoder", "lstm_decoder"):
        assert rec[name] < base[name]


def test_steps_get_the_configs_settings(plain, switched) -> None:  # noqa: ANN001
    import torch

    from foxhunt.model.batch import random_batch
    from foxhunt.model.tft import TFT
    from foxhunt.train.optimizer.optim import build_optimizer

    for (cfg, rec), seed in ((plain, 0), (switched, 3)):
        train = cfg.train
        want_groups = [
            (g["lr"], g["weight_decay"])
            for g in build_optimizer(
                TFT(cfg.model), lr=train.lr, weight_decay=train.weight_decay
            ).param_groups
        ]
        want_batch = random_batch(cfg.model, 4, seed=seed)
        (model,) = rec.models
        for i, s in enumerate(rec.steps):
            assert s["step"] == i
            assert s["model"] is model
            assert s["training"] is True
            assert s["precision"] == train.precision
            assert s["grad_clip"] == train.grad_clip
            assert torch.equal(s["quantiles"], torch.tensor(cfg.model.quantiles))
            assert s["scaler_enabled"] is False
            assert s["micro"] == (4, 2)
            assert s["checkpointing"] is train.checkpointing
            assert s["recompute"] == {train.recompute}
            assert s["groups"] == want_groups
            assert {id(p) for g in s["opt"].param_groups for p in g["params"]} == {
                id(p) for p in model.parameters()
            }
            assert s["opt"] is rec.steps[0]["opt"]
            assert_same_batch(s["batch"], want_batch)
            assert callable(s["before_optimizer_step"])
        assert len({id(s["batch"]) for s in rec.steps}) == 1  # one batch for every step
        assert {k for k in rec.steps[0] if k in ("memory", "grad_weight")} == set()
    assert [g[0] for g in switched[1].steps[0]["groups"]] == [0.0123, 0.0123]
    assert sorted(g[1] for g in switched[1].steps[0]["groups"]) == [0.0, 0.034]
    assert plain[1].steps[0]["quantiles"].dtype == torch.float32


def test_the_model_is_built_from_the_seed(plain, switched) -> None:  # noqa: ANN001
    assert_initial_weights(plain[1], plain[0], 0)
    assert_initial_weights(switched[1], switched[0], 3)


# --- measure_here: infer ---------------------------------------------------------------------


def test_infer_reports_exactly_these_keys(inferred) -> None:  # noqa: ANN001
    assert set(inferred[1].result) == COMMON_KEYS


def test_infer_runs_one_micro_batch_forward_in_eval_and_inference_mode(inferred) -> None:  # noqa: ANN001
    import torch

    from foxhunt.model.batch import random_batch
    from foxhunt.runtime import resolve_precision

    cfg, rec = inferred
    resolved = resolve_precision("auto", torch.device("cpu"))
    r = rec.result
    assert r["mode"] == "infer"
    assert r["precision"] == resolved != "auto"
    assert r["batch_size"] == 2  # the micro-batch
    assert r["batch_bytes"] == batch_bytes(cfg, 2) == 224
    assert r["checkpointing"] is False and r["recompute"] is False
    assert r["cpu_allocator"] == "balanced"
    assert r["threads"] == torch.get_num_threads()
    assert rec.steps == []
    assert rec.events == ["rss", "reset", "model", "peak"]
    (fwd,) = rec.forwards
    assert fwd["training"] is False
    assert fwd["inference"] is True and fwd["grad"] is False
    assert fwd["autocast"] is (resolved != "fp32")
    if resolved == "bf16":
        assert fwd["dtype"] == torch.bfloat16
    assert_same_batch(fwd["batch"], random_batch(cfg.model, 2, seed=0))
    assert_initial_weights(rec, cfg, 0)
    for key in ("baseline_rss_bytes", "peak_rss_bytes", "peak_delta_bytes"):
        assert type(r[key]) is int, key
    assert r["peak_rss_bytes"] > 0 and r["baseline_rss_bytes"] > 0  # no order in-process
    assert r["peak_delta_bytes"] == r["peak_rss_bytes"] - r["baseline_rss_bytes"]
    json.dumps(r)


def test_infer_uses_the_seed_for_batch_and_weights() -> None:
    from foxhunt.model.batch import random_batch

    cfg = tiny(precision="fp32")
    rec = measure(cfg, "infer", seed=5)
    (fwd,) = rec.forwards
    assert fwd["autocast"] is False
    assert rec.result["precision"] == "fp32"
    assert_same_batch(fwd["batch"], random_batch(cfg.model, 2, seed=5))
    assert_initial_weights(rec, cfg, 5)


# --- measure_in_subprocess -------------------------------------------------------------------


class FakeRun:
    """Stands in for ``subprocess.run``: records the call, answers with a canned process."""

    def __init__(self, stdout: str = "", stderr: str = "", returncode: int = 0) -> None:
        self.done = subprocess.CompletedProcess([], returncode, stdout, stderr)
        self.calls: list[tuple[list[str], dict[str, Any]]] = []

    def __call__(self, cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        self.calls.append((cmd, kwargs))
        return self.done


def _fake(monkeypatch: pytest.MonkeyPatch, **kwargs: Any) -> FakeRun:
    fake = FakeRun(**kwargs)
    monkeypatch.setattr(subprocess, "run", fake)
    return fake


def _head(cfg: RunConfig) -> list[str]:
    return [
        sys.executable,
        "-m",
        "foxhunt.commands.measure",
        "--config-json",
        json.dumps(cfg.to_dict()),
    ]


def test_subprocess_command_and_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    from foxhunt.train.resources.measure import measure_in_subprocess

    fake = _fake(monkeypatch, stdout='{"peak_delta_bytes": 7}\n')
    cfg = tiny()
    assert measure_in_subprocess(cfg, "train") == {"peak_delta_bytes": 7}
    ((cmd, kwargs),) = fake.calls
    assert cmd == [*_head(cfg), "--mode", "train", "--steps", "2"]
    assert kwargs == {"capture_output": True, "text": True, "timeout": 600.0, "check": False}
    # the child rebuilds the same config from the JSON on its command line
    assert RunConfig.from_dict(json.loads(cmd[4])) == cfg


def test_subprocess_passes_mode_steps_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    from foxhunt.train.resources.measure import measure_in_subprocess

    fake = _fake(monkeypatch, stdout="{}")
    cfg = tiny()
    measure_in_subprocess(cfg, "infer", steps=5, timeout_s=12.5)
    ((cmd, kwargs),) = fake.calls
    assert cmd == [*_head(cfg), "--mode", "infer", "--steps", "5"]
    assert kwargs["timeout"] == 12.5


@pytest.mark.parametrize(
    ("cfg_threads", "num_threads", "flag"),
    [(None, None, []), (3, None, ["3"]), (3, 5, ["5"]), (None, 7, ["7"]), (None, 0, ["0"])],
)
def test_subprocess_threads(
    monkeypatch: pytest.MonkeyPatch,
    cfg_threads: int | None,
    num_threads: int | None,
    flag: list[str],
) -> None:
    from foxhunt.train.resources.measure import measure_in_subprocess

    fake = _fake(monkeypatch, stdout="{}")
    cfg = tiny(num_threads=cfg_threads)
    measure_in_subprocess(cfg, "train", num_threads=num_threads)
    ((cmd, _),) = fake.calls
    tail = ["--num-threads", *flag] if flag else []
    assert cmd == [*_head(cfg), "--mode", "train", "--steps", "2", *tail]


def test_subprocess_parses_the_last_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from foxhunt.train.resources.measure import measure_in_subprocess

    stdout = 'warning: something\n{"a": 1}\n{"mode": "infer", "peak_delta_bytes": 123}\n\n  \n'
    _fake(monkeypatch, stdout=stdout, stderr="noise")
    got = measure_in_subprocess(tiny(), "infer")
    assert got == {"mode": "infer", "peak_delta_bytes": 123}


def test_subprocess_bad_json_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    from foxhunt.train.resources.measure import measure_in_subprocess

    _fake(monkeypatch, stdout='{"a": 1}\nnot json\n', stderr="warned\n")
    with pytest.raises(RuntimeError) as e:
        measure_in_subprocess(tiny(), "train")
    assert str(e.value) == (
        "memory measurement (train) printed 'not json' where its JSON result was expected: warned"
    )
    _fake(monkeypatch, stdout="  \n", stderr="")
    with pytest.raises(RuntimeError) as e:
        measure_in_subprocess(tiny(), "infer")
    assert str(e.value) == (
        "memory measurement (infer) printed nothing where its JSON result was expected: "
    )


def test_subprocess_failure_raises_with_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    from foxhunt.train.resources.measure import measure_in_subprocess

    _fake(monkeypatch, stdout='{"a": 1}\n', stderr="  Traceback: boom\n", returncode=1)
    with pytest.raises(RuntimeError) as e:
        measure_in_subprocess(tiny(), "infer")
    assert str(e.value) == "memory measurement (infer) failed: Traceback: boom"


def test_subprocess_failure_keeps_the_last_2000_characters(monkeypatch: pytest.MonkeyPatch) -> None:
    from foxhunt.train.resources.measure import measure_in_subprocess

    stderr = "".join(chr(ord("a") + i % 26) for i in range(3000)) + "\n"
    _fake(monkeypatch, stderr=stderr, returncode=-9)
    with pytest.raises(RuntimeError) as e:
        measure_in_subprocess(tiny(), "train")
    assert str(e.value) == "memory measurement (train) failed: " + stderr.strip()[-2000:]
    assert str(e.value).endswith(stderr[2999 - 1999 : 3000])
    assert len(str(e.value)) == len("memory measurement (train) failed: ") + 2000


def test_subprocess_names_at_most_200_characters_of_the_last_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from foxhunt.train.resources.measure import measure_in_subprocess

    last = "x" * 150 + "y" * 150
    _fake(monkeypatch, stdout=f"first\nsecond\n{last}\n", stderr="e" * 1000 + "f" * 2000)
    with pytest.raises(RuntimeError) as e:
        measure_in_subprocess(tiny(), "train")
    assert str(e.value) == (
        f"memory measurement (train) printed {'x' * 150 + 'y' * 50!r} where its JSON result "
        f"was expected: {'f' * 2000}"
    )
