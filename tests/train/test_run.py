from __future__ import annotations

import pytest


@pytest.mark.slow
def test_a_run_records_the_precision_it_resolved(demo_run) -> None:  # noqa: ANN001
    import json

    import torch

    from foxhunt.config import RunConfig
    from foxhunt.runtime import resolve_precision

    cfg = RunConfig.load(demo_run.run / "config.json")
    used = resolve_precision("auto", torch.device("cpu"))
    assert cfg.train.precision == used  # resolved once, so resume/evaluate/predict reuse it
    info = json.loads((demo_run.run / "run.json").read_text())
    assert info["precision"] == {"requested": "auto", "used": used}
    assert info["cpu_allocator"] == "balanced"
