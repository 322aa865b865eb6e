"""Epoch samples over all windows and the fixed validation subsample (train/sampling.py)."""

from __future__ import annotations

import torch

from foxhunt.model.tft import TFT
from foxhunt.train.loop import epoch_order
from foxhunt.train.sampling import (
    MIN_VALIDATION_WINDOWS,
    SampledWindows,
    epoch_sample,
    validation_size,
    validation_subset,
    validation_windows,
)

from .test_loop import Recorder, _fit
from .train_fakes import FakeWindows, tiny_config

torch.set_num_threads(1)


def test_epoch_sample_is_distinct_seeded_and_a_full_permutation_when_small() -> None:
    a = epoch_sample(1000, 64, seed=3, epoch=2)
    assert a.shape == (64,) and len(set(a.tolist())) == 64
    assert torch.equal(a, epoch_sample(1000, 64, seed=3, epoch=2))
    assert not torch.equal(a, epoch_sample(1000, 64, seed=3, epoch=3))
    # k >= n: the whole permutation, the order a full pass has always used
    assert epoch_sample(50, 80, seed=1, epoch=1).tolist() == epoch_order(50, seed=1, epoch=1)
    assert sorted(epoch_sample(50, 80, seed=1, epoch=1).tolist()) == list(range(50))


def test_an_epoch_of_a_few_steps_covers_every_symbol_and_the_whole_period() -> None:
    # 10 symbols of 10_000 windows each, stored symbol after symbol (as WindowDataset does)
    n_sym, per = 10, 10_000
    for epoch in range(1, 6):
        idx = epoch_sample(n_sym * per, 4 * 64, seed=0, epoch=epoch)  # 4 steps of 64
        symbols = set((idx // per).tolist())
        assert symbols == set(range(n_sym))
        position = (idx % per).float() / per  # where in each symbol's period
        assert position.min() < 0.1 and position.max() > 0.9


def test_validation_size_is_a_tenth_of_training_cost_with_a_floor() -> None:
    assert validation_size(100_000, None) == 30_000  # 0.1 / (1/3) of the epoch's samples
    assert validation_size(1_000, None) == MIN_VALIDATION_WINDOWS
    assert validation_size(1_000, 77) == 77


def test_validation_subset_is_fixed_sorted_and_none_when_all_fit() -> None:
    a = validation_subset(10_000, 500, seed=4)
    assert a is not None and a.shape == (500,) and len(set(a.tolist())) == 500
    assert torch.equal(a, torch.sort(a).values)
    assert torch.equal(a, validation_subset(10_000, 500, seed=4))
    assert validation_subset(500, 500, seed=4) is None


def test_sampled_windows_map_indices_to_the_source() -> None:
    cfg = tiny_config()
    src = FakeWindows(20, cfg.model)
    view = SampledWindows(src, torch.tensor([3, 7, 11]))
    assert len(view) == 3
    assert view.batch([2, 0]).static[:, 0].tolist() == [11.0, 3.0]


def test_fit_trains_epoch_steps_batches_and_validates_the_same_subsample(run_dir) -> None:
    cfg = tiny_config(epochs=3, epoch_steps=2, validation_windows=10)
    model = Recorder(TFT(cfg.model))
    _, result = _fit(run_dir, cfg, FakeWindows(480, cfg.model, 1), FakeWindows(40, cfg.model, 2),
                     model=model)  # fmt: skip
    assert result.state.step == 6 and result.state.epoch == 3
    trained = [c["ids"] for c in model.calls if c["training"]]
    assert len(trained) == 6 and all(len(ids) == 16 for ids in trained)
    per_epoch = [trained[i] + trained[i + 1] for i in (0, 2, 4)]
    assert all(len(set(ids)) == 32 for ids in per_epoch)  # distinct within an epoch
    assert per_epoch[0] != per_epoch[1]  # a fresh draw every epoch
    assert max(max(ids) for ids in per_epoch) > 32  # from all 480, not the first batches
    validated = [c for c in model.calls if not c["training"]]
    # the start and 3 epochs, each one batch of the same 10 of the 40 windows
    assert [len(c["ids"]) for c in validated] == [10, 10, 10, 10]
    assert all(c["ids"] == validated[0]["ids"] for c in validated)
    assert len(set(validated[0]["ids"])) == 10


def test_validation_windows_sizes_the_subsample_from_the_epoch_when_not_asked() -> None:
    # ``make mutate`` (sampling): only the requested size had been checked
    cfg = tiny_config()
    src = FakeWindows(100_000, cfg.model)
    view = validation_windows(src, 100_000, None, seed=1)
    assert len(view) == validation_size(100_000, None) == 30_000
    assert validation_windows(src, 1_000_000, None, seed=1) is src  # all of it fits
    assert len(validation_windows(src, 100_000, 77, seed=1)) == 77
