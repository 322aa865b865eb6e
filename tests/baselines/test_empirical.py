from __future__ import annotations

import json

import pytest
import torch

from foxhunt.baselines.empirical import EmpiricalQuantiles, load_empirical, zero_forecast
from foxhunt.errors import ModelDirError


def _record() -> dict[str, object]:
    return {
        "format": 1,
        "quantiles": [0.1, 0.5, 0.9],
        "horizon": 2,
        "recent_windows": 100,
        "per_symbol": {"ES": [[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0]]},
        "pooled": [[-3.0, 0.0, 3.0], [-4.0, 0.0, 4.0]],
    }


def test_zero_forecast() -> None:
    z = zero_forecast(3, 2, 5)
    assert z.shape == (3, 2, 5) and not z.any()


def test_per_symbol_with_pooled_fallback() -> None:
    base = EmpiricalQuantiles.from_dict(_record())
    out = base.predict(["ES", "NQ", "ES"])
    assert out.shape == (3, 2, 3)
    assert out[0, 1].tolist() == [-2.0, 0.0, 2.0] and out[1, 0].tolist() == [-3.0, 0.0, 3.0]
    assert torch.equal(out[0], out[2])


def test_load_checks_quantiles_horizon_and_corruption(tmp_path) -> None:
    path = tmp_path / "baselines.json"
    path.write_text(json.dumps(_record()))
    assert load_empirical(path, (0.1, 0.5, 0.9), 2).recent_windows == 100
    with pytest.raises(ModelDirError, match="quantiles"):
        load_empirical(path, (0.2, 0.5, 0.8), 2)
    with pytest.raises(ModelDirError, match="horizon"):
        load_empirical(path, (0.1, 0.5, 0.9), 3)
    path.write_text("{")
    with pytest.raises(ModelDirError, match="corrupt"):
        load_empirical(path, (0.1, 0.5, 0.9), 2)
    path.write_text(json.dumps({**_record(), "pooled": [[1.0]]}))
    with pytest.raises(ModelDirError, match="unreadable"):
        load_empirical(path, (0.1, 0.5, 0.9), 2)
    with pytest.raises(ModelDirError, match="missing"):
        load_empirical(tmp_path / "nope.json", (0.1, 0.5, 0.9), 2)
