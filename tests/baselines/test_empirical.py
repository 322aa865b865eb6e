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


def test_read_in_float64_exactly() -> None:
    base = EmpiricalQuantiles.from_dict(_record())
    assert base.quantiles == (0.1, 0.5, 0.9) and all(type(q) is float for q in base.quantiles)
    assert base.pooled.dtype == torch.float64 and base.per_symbol["ES"].dtype == torch.float64
    record = _record()
    record["pooled"] = [[-0.1, 0.0, 0.1], [-0.2, 0.0, 0.2]]  # not exact in float32
    assert EmpiricalQuantiles.from_dict(record).pooled[0, 2].item() == 0.1
    assert base.recent_windows == 100 and type(base.recent_windows) is int
    empty = base.predict([])
    assert empty.shape == (0, 2, 3) and empty.dtype == torch.float64


@pytest.mark.parametrize("fmt", [None, 0, 3, "1"])
def test_unknown_formats_are_refused(fmt: object) -> None:
    record = {**_record(), "format": fmt}
    if fmt is None:
        del record["format"]
    with pytest.raises(ValueError, match=rf"format {fmt!r} is not one of \(1, 2\)"):
        EmpiricalQuantiles.from_dict(record)


def test_pooled_shape_must_match_horizon_and_levels() -> None:
    with pytest.raises(ValueError, match=r"pooled quantiles have shape \(2, 2\)"):
        EmpiricalQuantiles.from_dict({**_record(), "pooled": [[0.0, 1.0], [0.0, 1.0]]})
    with pytest.raises(ValueError, match=r"pooled quantiles have shape \(2, 3\)"):
        EmpiricalQuantiles.from_dict({**_record(), "horizon": 3})


def test_load_baselines_returns_the_classical_record(tmp_path) -> None:
    from foxhunt.baselines.empirical import load_baselines

    path = tmp_path / "baselines.json"
    path.write_text(json.dumps(_record()))
    assert load_baselines(path, (0.1, 0.5, 0.9), 2)[1] == {}  # format 1: none
    classical = {"ewma": {"per_symbol": {}, "fallback": "ES"}}
    path.write_text(json.dumps({**_record(), "format": 2, "classical": classical}))
    base, got = load_baselines(path, [0.1, 0.5, 0.9], 2)
    assert got == classical and base.pooled.shape == (2, 3)
    path.write_text(json.dumps({**_record(), "format": 2, "classical": [1]}))
    with pytest.raises(ModelDirError, match=r"baselines.json: unreadable baselines \(classical is"):
        load_baselines(path, (0.1, 0.5, 0.9), 2)
    path.write_text(json.dumps({**_record(), "format": 9}))
    with pytest.raises(ModelDirError, match=r"baselines.json: unreadable baselines \(format 9"):
        load_baselines(path, (0.1, 0.5, 0.9), 2)
    path.write_text(json.dumps(_record()))
    with pytest.raises(
        ModelDirError,
        match=r"baselines are for quantiles \(0\.1, 0\.5, 0\.9\) and horizon 2, the model has "
        r"\(0\.2, 0\.5, 0\.8\) and 2",
    ):
        load_baselines(path, (0.2, 0.5, 0.8), 2)
    path.write_text(json.dumps({**_record(), "per_symbol": []}))
    with pytest.raises(ModelDirError, match="unreadable baselines"):
        load_baselines(path, (0.1, 0.5, 0.9), 2)


def test_missing_or_corrupt_file_is_named_as_baselines(tmp_path) -> None:
    path = tmp_path / "b.json"
    with pytest.raises(ModelDirError, match=r"b\.json: baselines\.json is missing$"):
        load_empirical(path, (0.1, 0.5, 0.9), 2)
    path.write_text("{")
    with pytest.raises(ModelDirError, match=r"b\.json: baselines\.json is corrupt \(not valid"):
        load_empirical(path, (0.1, 0.5, 0.9), 2)
