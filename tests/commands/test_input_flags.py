"""The shape and input flags of ``train``/``memory``: applied over the preset, followed by the
memory estimate; bad values exit 2 with one line."""

from __future__ import annotations

import argparse
import json

import pytest

from foxhunt.cli import main
from foxhunt.commands.options import add_config_args, run_config


def _cfg(*argv: str):
    p = argparse.ArgumentParser()
    add_config_args(p)
    return run_config(p.parse_args(list(argv)))


def test_shape_flags_apply_over_the_preset() -> None:
    cfg = _cfg("--preset", "demo", "--encoder-length", "12", "--horizon", "3", "--hidden", "24")
    m = cfg.model
    assert (m.encoder_length, m.horizon, m.hidden, m.n_heads) == (12, 3, 24, 4)
    assert cfg.preset == "demo" and m.lstm_layers == 1  # the rest is the preset's
    assert _cfg("--preset", "demo", "--heads", "2").model.n_heads == 2
    assert _cfg("--preset", "demo").model == _cfg("--preset", "demo").model


def test_location_flag_sets_the_median_over_the_preset() -> None:
    assert _cfg("--preset", "fast").model.location == "fixed"  # the preset's own
    assert _cfg("--preset", "demo").model.location == "conditional"
    assert _cfg("--preset", "demo", "--location", "fixed").model.location == "fixed"
    assert _cfg("--preset", "fast", "--location", "conditional").model.location == "conditional"
    with pytest.raises(SystemExit):
        _cfg("--preset", "fast", "--location", "median")


def _estimate(capsys: pytest.CaptureFixture[str], *flags: str) -> dict:
    rc = main(["memory", "--preset", "demo", "--batch-size", "8", "--json", *flags])
    assert rc in (0, 1)
    return json.loads(capsys.readouterr().out)["components"]


def test_memory_estimate_follows_the_shape(capsys: pytest.CaptureFixture[str]) -> None:
    base = _estimate(capsys)
    longer = _estimate(capsys, "--encoder-length", "64")
    wider = _estimate(capsys, "--hidden", "64")
    further = _estimate(capsys, "--horizon", "20")

    def saved(c: dict) -> int:
        return c["saved_activations"]["estimated_bytes"]

    def params(c: dict) -> int:
        return c["parameters"]["estimated_bytes"]

    assert saved(longer) > saved(base) and params(longer) == params(base)
    assert params(wider) > params(base) and saved(wider) > saved(base)
    assert saved(further) > saved(base)


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--hidden", "30", "--heads", "4"], "divisible by n_heads"),
        (["--horizon", "0"], "horizon must be >= 1"),
        (["--encoder-length", "0"], "encoder_length must be >= 1"),
    ],
)
def test_bad_shape_exits_2_with_one_line(capsys, flags, named) -> None:
    assert main(["memory", "--preset", "demo", *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert named in err and "\n" not in err and "Traceback" not in err
