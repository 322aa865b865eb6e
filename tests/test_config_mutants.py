"""``TFTConfig`` and ``DataConfig`` bounds at their edges (the last value accepted, the first
refused, the message word for word), ``RunConfig.from_dict``'s two bases and its errors,
``replace``, and the presets' values."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import pytest

from foxhunt.config import (
    RECIPE_DATA,
    TFT_QUANTILES,
    DataConfig,
    RunConfig,
    TFTConfig,
    TrainConfig,
    demo,
    fast,
    preset,
    tft_225,
)
from foxhunt.errors import ConfigError

MODEL_EDGES: list[tuple[dict[str, Any], dict[str, Any], str]] = [
    ({"n_static": 1}, {"n_static": 0}, "n_static must be >= 1, got 0"),
    ({"n_historical": 1}, {"n_historical": 0}, "n_historical must be >= 1, got 0"),
    ({"n_known": 1}, {"n_known": 0}, "n_known must be >= 1, got 0"),
    ({"hidden": 1, "n_heads": 1}, {"hidden": 0, "n_heads": 1}, "hidden must be >= 1, got 0"),
    ({"n_heads": 1}, {"n_heads": 0}, "n_heads must be >= 1, got 0"),
    (
        {"hidden": 12, "n_heads": 3},
        {"hidden": 12, "n_heads": 5},
        "hidden (12) must be divisible by n_heads (5)",
    ),
    ({"lstm_layers": 1}, {"lstm_layers": 0}, "lstm_layers must be >= 1, got 0"),
    ({"encoder_length": 1}, {"encoder_length": 0}, "encoder_length must be >= 1, got 0"),
    ({"horizon": 1}, {"horizon": 0}, "horizon must be >= 1, got 0"),
    ({"quantiles": (0.5,)}, {"quantiles": ()}, "quantiles must not be empty"),
    (
        {"quantiles": (1e-9, 1 - 1e-9)},
        {"quantiles": (0.0, 0.5)},
        "quantiles must lie in (0, 1), got (0.0, 0.5)",
    ),
    (
        {"quantiles": (0.5, 0.9)},
        {"quantiles": (0.5, 1.0)},
        "quantiles must lie in (0, 1), got (0.5, 1.0)",
    ),
    ({"quantiles": (0.1, 0.2)}, {"quantiles": (0.2, 0.2)}, "quantiles must increase: (0.2, 0.2)"),
    ({"dropout": 0.0}, {"dropout": -0.1}, "dropout must be in [0, 1), got -0.1"),
    ({"dropout": 0.99}, {"dropout": 1.0}, "dropout must be in [0, 1), got 1.0"),
    ({"vsn_mode": "faithful"}, {"vsn_mode": "wide"}, "unknown vsn_mode 'wide'"),
    ({"variable_width": 1}, {"variable_width": 0}, "variable_width must be >= 1, got 0"),
    ({"vsn_chunk": 1}, {"vsn_chunk": 0}, "vsn_chunk must be >= 1, got 0"),
    (
        {"location": "fixed", "monotone_quantiles": True},
        {"location": "median"},
        "location must be 'conditional' or 'fixed', got 'median'",
    ),
    (
        {"location": "fixed", "monotone_quantiles": True, "quantiles": (0.1, 0.5)},
        {"location": "fixed", "monotone_quantiles": False},
        "location 'fixed' needs monotone_quantiles and the quantile level 0.5",
    ),
    (
        {"location": "conditional", "monotone_quantiles": False, "quantiles": (0.1, 0.9)},
        {"location": "fixed", "monotone_quantiles": True, "quantiles": (0.1, 0.9)},
        "location 'fixed' needs monotone_quantiles and the quantile level 0.5",
    ),
]

DATA_EDGES: list[tuple[dict[str, Any], dict[str, Any], str]] = [
    (
        {"target_scale_season": (1.0,) * 48},
        {"target_scale_season": (1.0,) * 47},
        "target_scale_season must be empty or 48 positive finite multipliers",
    ),
    (
        {"target_scale_season": (1e-9,) * 48},
        {"target_scale_season": (0.0,) + (1.0,) * 47},
        "target_scale_season must be empty or 48 positive finite multipliers",
    ),
    (
        {"target_scale_season": (1e300,) * 48},
        {"target_scale_season": (math.inf,) + (1.0,) * 47},
        "target_scale_season must be empty or 48 positive finite multipliers",
    ),
    (
        {"observed_cols": ("a",), "known_cols": ("b",), "static_cols": ("c",)},
        {"observed_cols": ("a",), "static_cols": ("a",)},
        "column 'a' is given twice as an input",
    ),
    (
        {"features": "minimal"},
        {"features": "all"},
        "features must be default, minimal or custom, got 'all'",
    ),
    (
        {"features": "custom", "feature_lines": ("obs__ret_lag0",)},
        {"features": "custom"},
        "feature_lines go with features='custom' (and only with it)",
    ),
    (
        {"features": "default"},
        {"features": "default", "feature_lines": ("x",)},
        "feature_lines go with features='custom' (and only with it)",
    ),
    ({"target": "return:r"}, {"target": "  "}, "target must name a column"),
    ({"val_fraction": 0.0}, {"val_fraction": -0.01}, "val_fraction out of range: -0.01"),
    (
        {"val_fraction": 0.5, "test_fraction": 0.0},
        {"val_fraction": 1.0},
        "val_fraction out of range: 1.0",
    ),
    ({"test_fraction": 0.0}, {"test_fraction": -0.01}, "test_fraction out of range: -0.01"),
    (
        {"test_fraction": 0.5, "val_fraction": 0.0},
        {"test_fraction": 1.0},
        "test_fraction out of range: 1.0",
    ),
    (
        {"val_fraction": 0.5, "test_fraction": 0.49},
        {"val_fraction": 0.5, "test_fraction": 0.5},
        "val_fraction + test_fraction must leave bars for training",
    ),
    ({"embargo": 0}, {"embargo": -1}, "embargo must be >= 0: -1"),
    ({"stride": 1}, {"stride": 0}, "stride must be >= 1, got 0"),
    (
        {"target_scale": "window"},
        {"target_scale": "local"},
        "target_scale must be 'global' or 'window', got 'local'",
    ),
    (
        {"target_scale_decay": 1e-9},
        {"target_scale_decay": 0.0},
        "target_scale_decay must be in (0, 1), got 0.0",
    ),
    (
        {"target_scale_decay": 0.999},
        {"target_scale_decay": 1.0},
        "target_scale_decay must be in (0, 1), got 1.0",
    ),
    (
        {"target_scale_reversion": 0.0},
        {"target_scale_reversion": -0.1},
        "target_scale_reversion must be in [0, 1], got -0.1",
    ),
    (
        {"target_scale_reversion": 1.0},
        {"target_scale_reversion": 1.01},
        "target_scale_reversion must be in [0, 1], got 1.01",
    ),
    (
        {"target_scale_estimator": "range"},
        {"target_scale_estimator": "hl"},
        "target_scale_estimator must be 'close' or 'range', got 'hl'",
    ),
    (
        {"target_scale_range_ratio": 1e-9},
        {"target_scale_range_ratio": 0.0},
        "target_scale_range_ratio must be positive, got 0.0",
    ),
    (
        {"target_scale_range_ratio": 1e300},
        {"target_scale_range_ratio": math.inf},
        "target_scale_range_ratio must be positive, got inf",
    ),
]


def _edge(kind: type, accepted: dict[str, Any], refused: dict[str, Any], message: str) -> None:
    config = kind(**accepted)
    for name, value in accepted.items():
        assert getattr(config, name) == value
    with pytest.raises(ConfigError) as caught:
        kind(**refused)
    assert str(caught.value) == message


@pytest.mark.parametrize(("accepted", "refused", "message"), MODEL_EDGES)
def test_model_bounds_at_their_edges(accepted: dict, refused: dict, message: str) -> None:
    _edge(TFTConfig, accepted, refused, message)


@pytest.mark.parametrize(("accepted", "refused", "message"), DATA_EDGES)
def test_data_bounds_at_their_edges(accepted: dict, refused: dict, message: str) -> None:
    _edge(DataConfig, accepted, refused, message)


def test_data_sequences_become_tuples_of_str_and_floats() -> None:
    data = DataConfig(
        observed_cols=["a"],  # type: ignore[arg-type]
        known_cols=["b"],  # type: ignore[arg-type]
        static_cols=["c"],  # type: ignore[arg-type]
        columns=["ts=DATE"],  # type: ignore[arg-type]
        features="custom",
        feature_lines=["x = 1"],  # type: ignore[arg-type]
        target_scale_season=[2] * 48,  # type: ignore[arg-type]
    )
    assert (data.observed_cols, data.known_cols, data.static_cols) == (("a",), ("b",), ("c",))
    assert data.columns == ("ts=DATE",) and data.feature_lines == ("x = 1",)
    assert data.target_scale_season == (2.0,) * 48
    assert all(type(x) is float for x in data.target_scale_season)


def test_model_derived_sizes() -> None:
    m = TFTConfig(hidden=48, n_heads=6, encoder_length=20, horizon=7, quantiles=(0.1, 0.5, 0.9))
    assert (m.head_dim, m.n_quantiles, m.total_length) == (8, 3, 27)


def test_from_dict_as_stored_fills_missing_fields_from_the_dataclass_defaults() -> None:
    d = {"preset": "demo", "train": {"lr": 0.01}}
    got = RunConfig.from_dict(d)
    assert got.preset == "demo"
    assert got.train == TrainConfig(lr=0.01)  # not demo's batch 64
    assert got.model == demo().model and got.data == demo().data  # missing sections: preset's


def test_from_dict_over_a_preset_fills_missing_fields_from_it() -> None:
    got = RunConfig.from_dict({"preset": "Demo", "train": {"lr": 0.01}}, over_preset=True)
    assert got.preset == "demo"
    assert got.train == dataclasses.replace(demo().train, lr=0.01)
    assert got.model == demo().model


def test_from_dict_without_a_known_preset_starts_from_the_defaults() -> None:
    got = RunConfig.from_dict({"preset": "mine", "model": {"hidden": 32, "n_heads": 4}})
    assert got.preset == "mine"
    assert got.model == TFTConfig(hidden=32, n_heads=4)
    assert got.data == DataConfig() and got.train == TrainConfig()
    assert RunConfig.from_dict({}).preset == "custom"
    assert RunConfig.from_dict({"preset": "tft_225"}).preset == "tft-225"


def test_from_dict_reads_quantiles_as_a_tuple_of_floats() -> None:
    got = RunConfig.from_dict({"model": {"quantiles": [0.1, 1 / 2, 0.9]}})
    assert got.model.quantiles == (0.1, 0.5, 0.9)
    got = RunConfig.from_dict({"model": {"quantiles": ["0.25", "0.75"]}}, over_preset=True)
    assert got.model.quantiles == (0.25, 0.75)


@pytest.mark.parametrize(
    ("d", "message"),
    [
        ({"extra": {}, "more": 1}, "invalid config: unknown section extra, more"),
        ({"train": [1]}, "invalid config: train must be a table"),
    ],
)
def test_from_dict_errors(d: dict, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        RunConfig.from_dict(d)
    assert str(caught.value) == message


@pytest.mark.parametrize("over_preset", [False, True])
def test_from_dict_names_an_unknown_field(over_preset: bool) -> None:
    with pytest.raises(ConfigError, match=r"^invalid config: .*'lrr'"):
        RunConfig.from_dict({"train": {"lrr": 1}}, over_preset=over_preset)


def test_save_and_load_round_trip_and_bad_json_names_the_file(tmp_path: Path) -> None:
    cfg = demo().replace(train={"seed": 4})
    cfg.save(tmp_path / "config.json")
    assert RunConfig.load(tmp_path / "config.json") == cfg
    (tmp_path / "bad.json").write_text('{"preset": "demo",\n  oops}')
    with pytest.raises(ConfigError) as caught:
        RunConfig.load(tmp_path / "bad.json")
    assert str(caught.value).startswith(f"{tmp_path / 'bad.json'}: not valid JSON (")
    assert str(caught.value).endswith(" at line 2)")


def test_replace_takes_whole_sections_or_fields() -> None:
    cfg = demo()
    got = cfg.replace(train={"lr": 0.5}, data=DataConfig(stride=3))
    assert got.train == dataclasses.replace(cfg.train, lr=0.5)
    assert got.data == DataConfig(stride=3)
    assert got.model == cfg.model and got.preset == "demo"


def test_the_presets() -> None:
    t = tft_225()
    assert t.preset == "tft-225"
    assert t.model == TFTConfig(monotone_quantiles=True, decoder_origin_inputs=True)
    assert t.model.quantiles == TFT_QUANTILES and t.data == RECIPE_DATA
    assert t.train == TrainConfig(batch_size=32)
    assert (RECIPE_DATA.target_scale, RECIPE_DATA.target_scale_decay) == ("window", 0.94)
    assert (RECIPE_DATA.target_scale_reversion, RECIPE_DATA.target_scale_search) == (0.9, True)
    d = demo()
    assert d.preset == "demo"
    assert (d.model.hidden, d.model.n_heads, d.model.lstm_layers) == (32, 4, 1)
    assert (d.model.encoder_length, d.model.horizon, d.model.dropout) == (32, 10, 0.1)
    assert (d.model.variable_width, d.model.monotone_quantiles) == (8, True)
    assert d.model.decoder_origin_inputs is True
    assert (d.train.batch_size, d.train.validation_batch_size, d.train.epochs) == (64, 256, 1)
    assert (d.train.lr, d.train.warmup_steps) == (3e-3, 20)
    assert d.data.stride == 2 and d.data.target_scale_search is True
    f = fast()
    assert f.preset == "fast"
    assert (f.model.encoder_length, f.model.variable_width, f.model.location) == (16, 4, "fixed")
    assert (f.train.batch_size, f.train.epochs, f.train.epoch_steps) == (256, 20, 500)
    assert f.train.warmup_steps == 50 and f.train.lr == 3e-3 and f.model.hidden == 32
    assert preset("TFT_225") == t and preset("fast") == f
    with pytest.raises(ConfigError) as caught:
        preset("big")
    assert str(caught.value) == "unknown preset 'big'; choose from demo, tft-225, fast"


def test_from_dict_keeps_a_custom_preset_name_as_written() -> None:
    """A known preset is named canonically; any other name stays as the file wrote it."""
    assert RunConfig.from_dict({"preset": "My_Sweep"}).preset == "My_Sweep"
    assert RunConfig.from_dict({"preset": "TFT_225"}).preset == "tft-225"
    assert RunConfig.from_dict({}).preset == "custom"
