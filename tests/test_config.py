from __future__ import annotations

import pytest

from foxhunt.config import ConfigError, RunConfig, TFTConfig, demo, fast, preset, tft_225


def test_tft_225_sizes() -> None:
    m = tft_225().model
    assert (m.n_static, m.n_historical, m.n_known) == (5, 210, 10)
    assert (m.hidden, m.n_heads, m.lstm_layers, m.encoder_length, m.horizon) == (256, 8, 2, 50, 10)
    assert m.quantiles == (0.02, 0.1, 0.25, 0.4, 0.5, 0.6, 0.75, 0.9, 0.98)
    assert m.dropout == 0.1 and m.head_dim == 32 and m.total_length == 60
    assert tft_225().train.batch_size == 32


def test_fast_is_the_demo_network_narrowed_for_many_windows() -> None:
    """The preset README names for a year of 1-minute bars: demo's inputs, width and heads,
    a 16-bar encoder, 4-wide variable GRNs, batch 256, 500-step epochs (docs/recipe.md)."""
    f, d = fast(), demo()
    assert preset("fast") == f and f.preset == "fast"
    assert (f.model.n_static, f.model.n_historical, f.model.n_known) == (5, 210, 10)
    assert (f.model.hidden, f.model.n_heads, f.model.lstm_layers) == (32, 4, 1)
    assert (f.model.encoder_length, f.model.variable_width, f.model.horizon) == (16, 4, 10)
    assert (f.train.batch_size, f.train.epoch_steps, f.train.epochs) == (256, 500, 20)
    assert f.train.lr == d.train.lr and f.data == d.data
    from foxhunt.model.tft import TFT

    assert sum(p.numel() for p in TFT(f.model).parameters()) == 177_409


def test_roundtrip(tmp_path) -> None:
    cfg = demo().replace(train={"lr": 0.01})
    cfg.save(tmp_path / "config.json")
    assert RunConfig.load(tmp_path / "config.json") == cfg


@pytest.mark.parametrize(
    "kwargs",
    [{"hidden": 30, "n_heads": 8}, {"quantiles": (0.5, 0.1)}, {"dropout": 1.0}, {"horizon": 0}],
)
def test_invalid_model_config(kwargs) -> None:
    with pytest.raises(ConfigError):
        TFTConfig(**kwargs)


def test_unknown_preset_and_field() -> None:
    with pytest.raises(ConfigError, match="unknown preset"):
        preset("tft-9000")
    with pytest.raises(ConfigError, match="invalid config"):
        RunConfig.from_dict({"model": {"hiden": 3}})
    assert preset("tft_225") == tft_225()


@pytest.mark.subprocess
def test_cpu_allocator_flag_and_validation() -> None:
    from foxhunt.cli import build_parser
    from foxhunt.commands.options import run_config as _run_config
    from foxhunt.config import TrainConfig

    assert tft_225().train.cpu_allocator == "balanced"  # fast by default; budgets may pick lean
    args = build_parser().parse_args(["train", "--preset", "demo", "--cpu-allocator", "lean"])
    assert _run_config(args).train.cpu_allocator == "lean"
    with pytest.raises(ConfigError, match="cpu_allocator"):
        TrainConfig(cpu_allocator="jemalloc")  # type: ignore[arg-type]
    # Configs written before the field existed still load, with the default.
    old = demo().to_dict()
    del old["train"]["cpu_allocator"]
    assert RunConfig.from_dict(old).train.cpu_allocator == "balanced"


def test_recipe_fields_default_to_the_old_behaviour_and_presets_opt_in() -> None:
    """A config.json written before the recipe (no fields) loads as global scale and a plain
    head; both presets train with the window scale and the monotone head; bad values refuse."""
    from foxhunt.config import DataConfig

    old = RunConfig.from_dict({"data": {"stride": 2}, "model": {"hidden": 32, "n_heads": 4}})
    assert old.data.target_scale == "global" and not old.model.monotone_quantiles
    assert not old.model.decoder_origin_inputs  # the paper's forward, as those runs trained
    for cfg in (demo(), tft_225(), fast()):
        assert cfg.data.target_scale == "window" and cfg.model.monotone_quantiles
        assert cfg.model.decoder_origin_inputs
        assert RunConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ConfigError, match="target_scale"):
        DataConfig(target_scale="daily")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="target_scale_decay"):
        DataConfig(target_scale_decay=1.0)
