from __future__ import annotations

import optuna
import pytest

from foxhunt.config import demo, tft_225
from foxhunt.errors import InputError
from foxhunt.train.tune import TuneSettings, apply_params, pruning_listener, suggest, tune

optuna.logging.set_verbosity(optuna.logging.WARNING)


def _sampled(seed: int, base=None, n: int = 6) -> list[dict]:
    base = base or demo()
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed))
    seen: list[dict] = []

    def objective(trial: optuna.Trial) -> float:
        params = suggest(trial, base)
        seen.append(params)
        return params["train.lr"] * params["model.hidden"]  # any deterministic score

    study.optimize(objective, n_trials=n)
    return seen


def test_the_search_is_deterministic_for_a_seed() -> None:
    assert _sampled(7) == _sampled(7)
    assert _sampled(7) != _sampled(8)


@pytest.mark.parametrize("base", [demo(), tft_225()])
def test_every_sample_is_a_valid_config_around_the_base(base) -> None:
    for params in _sampled(0, base, n=10):
        cfg = apply_params(base, params)  # the dataclasses validate (hidden % n_heads ...)
        assert cfg.model.hidden in (
            base.model.hidden // 2,
            base.model.hidden,
            base.model.hidden * 2,
        )
        assert cfg.model.encoder_length in (
            base.model.encoder_length // 2,
            base.model.encoder_length,
        )
        assert base.train.lr / 10 <= cfg.train.lr <= base.train.lr * 10
        assert 0.0 <= cfg.model.dropout <= 0.3 and 1e-4 <= cfg.train.weight_decay <= 0.1
        assert cfg.train.micro_batch == cfg.train.batch_size
        assert cfg.model.horizon == base.model.horizon and cfg.preset == base.preset


def test_apply_params_resets_the_micro_batch_only_with_a_new_batch() -> None:
    base = demo().replace(train={"micro_batch_size": 16})
    assert apply_params(base, {"train.batch_size": 32}).train.micro_batch_size is None
    assert apply_params(base, {"train.lr": 0.01}).train.micro_batch_size == 16


class _Trial:
    def __init__(self, prune_at: int) -> None:
        self.reported: list[tuple[float, int]] = []
        self.prune_at = prune_at

    def report(self, value: float, step: int) -> None:
        self.reported.append((value, step))

    def should_prune(self) -> bool:
        return len(self.reported) >= self.prune_at


def test_the_pruning_listener_reports_epoch_losses_and_stops_when_told() -> None:
    trial, losses = _Trial(prune_at=2), []
    listen = pruning_listener(trial, losses)  # type: ignore[arg-type]
    listen({"kind": "step", "step": 1, "loss": 9.0})
    listen({"kind": "memory", "point": "epoch_end"})
    listen({"kind": "epoch", "epoch": 1, "val_loss": 0.5, "train_loss": 0.7})
    with pytest.raises(optuna.TrialPruned, match="after epoch 2"):
        listen({"kind": "epoch", "epoch": 2, "val_loss": 0.6, "train_loss": 0.6})
    assert trial.reported == [(0.5, 1), (0.6, 2)] and losses == [0.5, 0.6]


def test_trials_over_the_budget_are_skipped_and_recorded(tmp_path) -> None:
    seen = []
    with pytest.raises(InputError, match=r"no trial completed \(over budget, over budget\)"):
        tune(
            demo(),
            tmp_path / "never-read.parquet",  # no trial gets as far as reading bars
            tmp_path / "out",
            TuneSettings(trials=2, memory_budget="1MB"),
            on_trial=seen.append,
        )
    assert [r.state for r in seen] == ["over budget", "over budget"]
    assert all("memory budget 1.00 MB is too small" in r.message for r in seen)
    assert all(r.estimated_peak > 1_000_000 and r.epochs == 0 for r in seen)
    assert not (tmp_path / "out" / "trials").exists()


def test_trials_are_planned_with_the_trainers_cpu_margin() -> None:
    """A budget the unplanned trial's estimate fills to between 90 % and 100 % does not hold it
    as configured: like ``foxhunt train``, tune fits the estimate into 90 % of the budget."""
    from foxhunt.memory.budget import plan_budget
    from foxhunt.memory.units import format_bytes, parse_bytes
    from foxhunt.train.resources.plan import CPU_PLAN_MARGIN
    from foxhunt.train.tune import _trial_config

    cfg = demo().replace(train={"precision": "fp32"})
    roomy = plan_budget(cfg, 10 * 2**30, allow_precision_change=False)  # the fastest settings
    text = format_bytes(roomy.estimated_peak / 0.95)  # fits at margin 1, not at 0.9
    budget = parse_bytes(text)
    whole = plan_budget(cfg, budget, allow_precision_change=False)
    assert whole.apply(cfg) == roomy.apply(cfg)
    planned = _trial_config(cfg, {}, text)
    assert planned != roomy.apply(cfg)
    expected = plan_budget(cfg, budget, allow_precision_change=False, margin=CPU_PLAN_MARGIN)
    assert planned == expected.apply(cfg)
