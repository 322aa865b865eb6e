"""The public Python API (``foxhunt.read_bars``, ``foxhunt.TFTForecaster``): the caller's kind
in and out, the CLI's run directory, streaming with pandas, no process-wide side effects."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pytest
import torch

import foxhunt
from foxhunt.data.sources.demo import demo_bars
from foxhunt.errors import DataError, InputError

TINY = {
    "model": {
        "hidden": 8,
        "n_heads": 2,
        "lstm_layers": 1,
        "encoder_length": 12,
        "horizon": 3,
        "quantiles": (0.1, 0.5, 0.9),
        "variable_width": 2,
    },
    "train": {"batch_size": 32, "epochs": 1, "max_steps": 3, "warmup_steps": 1},
}
KEY = ["symbol", "origin_ts", "horizon"]


def _pandas_bars(n: int, seed: int) -> pd.DataFrame:
    """Demo bars as a notebook may hold them: pandas, a ``timestamp`` column, capitalised."""
    df = demo_bars(n, seed=seed).to_pandas()
    return df.rename(columns={"ts": "timestamp", "open": "Open", "close": "Close"})


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory) -> foxhunt.TFTForecaster:
    return foxhunt.TFTForecaster("demo", **TINY).fit(_pandas_bars(700, seed=1))


@pytest.mark.slow
def test_pandas_in_pandas_out_with_target_times(fitted: foxhunt.TFTForecaster) -> None:
    bars = _pandas_bars(260, seed=2)
    fc = fitted.predict(bars)
    assert isinstance(fc, pd.DataFrame)
    origins = fc[["symbol", "origin_ts"]].drop_duplicates()
    assert len(fc) == 3 * len(origins) > 0
    assert (fc["target_ts"] > fc["origin_ts"]).all()
    assert fc["origin_ts"].max() == bars["timestamp"].max()
    assert str(fc["target_ts"].dt.tz) == "UTC"
    assert {"return_q0.5", "price_q0.9", "realised_close", "realised_return"} <= set(fc.columns)


@pytest.mark.slow
def test_polars_and_path_give_polars_and_the_same_numbers(
    fitted: foxhunt.TFTForecaster, tmp_path: Path
) -> None:
    pdf = _pandas_bars(260, seed=2)
    frame = pl.from_pandas(pdf)
    path = tmp_path / "ES_new.parquet"
    frame.write_parquet(path)
    a, b = fitted.predict(frame), fitted.predict(path)
    assert isinstance(a, pl.DataFrame) and isinstance(b, pl.DataFrame)
    assert a.equals(b)
    c = pl.from_pandas(fitted.predict(pdf))
    np.testing.assert_array_equal(c["return_q0.5"].to_numpy(), a["return_q0.5"].to_numpy())
    long = fitted.predict(frame, long=True)
    assert long.height == 3 * a.height and set(long["quantile"]) == {0.1, 0.5, 0.9}


@pytest.mark.slow
def test_evaluate_on_the_training_frame_scores_its_test_split(
    fitted: foxhunt.TFTForecaster,
) -> None:
    result = fitted.evaluate(_pandas_bars(700, seed=1))
    assert result["split"] == "test split of the training bars" and result["n_windows"] > 0
    assert set(result["tft_beats"]) >= {"empirical", "zero"}
    assert not list(fitted.run_dir.glob("evaluation*.json"))  # nothing written into the run


@pytest.mark.slow
def test_save_and_load_round_trip_the_cli_run_directory(
    fitted: foxhunt.TFTForecaster, tmp_path: Path
) -> None:
    saved = fitted.save(tmp_path / "run")
    assert (saved / "config.json").is_file() and list((saved / "checkpoints").glob("tft_final*"))
    again = foxhunt.TFTForecaster.load(saved)
    assert again.config == fitted.config
    bars = pl.from_pandas(_pandas_bars(240, seed=3))
    assert again.predict(bars).equals(fitted.predict(bars))
    with pytest.raises(InputError, match="not an empty directory"):
        fitted.save(saved)


@pytest.mark.slow
def test_streaming_takes_pandas_with_a_timestamp_column(fitted: foxhunt.TFTForecaster) -> None:
    pdf = _pandas_bars(240, seed=4)
    a, b = fitted.stream(), fitted.stream()
    out_pd = a.update(pdf)
    out_pl = b.update(demo_bars(240, seed=4))  # canonical polars columns
    assert out_pd.height == 3 and out_pd.equals(out_pl)
    indexed = _pandas_bars(241, seed=4).set_index("timestamp").tail(1)  # a DatetimeIndex
    assert a.update(indexed).height == 3


def test_unfitted_and_bad_input_say_what_is_wrong() -> None:
    model = foxhunt.TFTForecaster("demo")
    with pytest.raises(InputError, match="not fitted"):
        model.predict(demo_bars(10))
    with pytest.raises(InputError, match="no symbol column"):
        foxhunt.read_bars(demo_bars(10).drop("symbol"))
    bad = _pandas_bars(50, seed=0)
    bad.loc[7, "Close"] = -1.0
    with pytest.raises(DataError, match=r"^DataFrame: .*row 7") as e:
        foxhunt.read_bars(bad)
    assert "foxhunt-" not in str(e.value)  # the scratch file is not named
    with pytest.raises(InputError, match="expected a path"):
        foxhunt.read_bars([1, 2, 3])  # type: ignore[arg-type]


def test_read_bars_keeps_the_callers_kind_and_adds_a_symbol() -> None:
    pdf = _pandas_bars(30, seed=0).drop(columns="symbol")
    got = foxhunt.read_bars(pdf, symbol="NQ")
    assert isinstance(got, pd.DataFrame) and set(got["symbol"]) == {"NQ"}
    assert list(got.columns[:7]) == ["ts", "symbol", "open", "high", "low", "close", "volume"]
    assert isinstance(foxhunt.read_bars(pl.from_pandas(pdf), symbol="NQ"), pl.DataFrame)


@pytest.mark.slow
def test_no_process_wide_side_effects(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import ctypes

    import matplotlib

    calls: list[str] = []
    monkeypatch.setattr(matplotlib, "use", lambda *a, **k: calls.append("matplotlib.use"))
    monkeypatch.setattr(torch, "set_num_threads", lambda n: calls.append("set_num_threads"))
    real_cdll = ctypes.CDLL

    class WatchedLibc:
        """libc whose mallopt (a process-wide allocator setting) is recorded; malloc_trim,
        which only returns free pages to the OS, passes through."""

        def __init__(self, *a: object, **k: object) -> None:
            self._lib = real_cdll(*a, **k)

        def __getattr__(self, name: str) -> object:
            if name == "mallopt":
                return lambda *a: calls.append("mallopt") or 1
            return getattr(self._lib, name)

    monkeypatch.setattr(ctypes, "CDLL", WatchedLibc)
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    model = foxhunt.TFTForecaster("demo", **TINY, run_dir=tmp_path / "run")
    model.fit(demo_bars(700, seed=1))
    model.predict(demo_bars(240, seed=2))
    assert calls == []
    assert root.handlers == handlers and root.level == level


@pytest.mark.slow
@pytest.mark.subprocess
def test_import_foxhunt_stays_light_until_the_api_is_used() -> None:
    import subprocess
    import sys

    code = (
        "import sys, foxhunt; assert 'torch' not in sys.modules, 'torch at import'; "
        "foxhunt.TFTForecaster; assert 'torch' in sys.modules; print(foxhunt.__version__)"
    )
    src = str(Path(__file__).resolve().parents[1] / "src")
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONPATH": src}
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == foxhunt.__version__


@pytest.mark.slow
def test_predict_and_evaluate_take_the_readers_arguments_and_name_them_in_python(
    fitted: foxhunt.TFTForecaster,
) -> None:
    """``tz=`` reads a frame's naive New York times (ES's closed hours refused them as UTC,
    naming ``--tz``, a flag no method took); the refusal names ``tz=`` now; ``strict`` and
    ``windows`` as ``--strict`` and ``--windows``."""
    bars = _pandas_bars(260, seed=2)
    aware = fitted.predict(bars)
    naive = bars.assign(
        timestamp=bars["timestamp"].dt.tz_convert("America/New_York").dt.tz_localize(None)
    )
    local = fitted.predict(naive, tz="America/New_York")
    np.testing.assert_array_equal(local["return_q0.5"].to_numpy(), aware["return_q0.5"].to_numpy())
    assert local["origin_ts"].tolist() == aware["origin_ts"].tolist()
    with pytest.raises(DataError) as e:
        fitted.predict(naive)
    assert "tz='America/New_York'" in str(e.value) and "--tz" not in str(e.value)
    with pytest.raises(InputError, match="--strict|strict=True"):
        fitted.predict(bars.assign(symbol="NQ"), strict=True)
    scored = fitted.evaluate(bars, windows="all")
    assert 0 < scored["n_windows"] <= len(aware) // 3  # all windows: in-sample ones too
    with pytest.raises(InputError, match="windows must be new, test or all, got 'every'"):
        fitted.evaluate(bars, windows="every")
    with pytest.raises(TypeError):
        fitted.predict(bars, tzz="UTC")


@pytest.mark.slow
def test_fit_takes_the_readers_arguments_into_the_run() -> None:
    bars = _pandas_bars(700, seed=1)
    naive = bars.assign(
        timestamp=bars["timestamp"].dt.tz_convert("America/New_York").dt.tz_localize(None)
    )
    model = foxhunt.TFTForecaster("demo", **TINY).fit(naive, tz="America/New_York")
    assert model.config.data.tz == "America/New_York"
    assert foxhunt.TFTForecaster.load(model.run_dir).config.data.tz == "America/New_York"


@pytest.mark.slow
def test_predict_and_evaluate_leave_no_scratch_file_and_name_the_frame(
    fitted: foxhunt.TFTForecaster,
) -> None:
    """Each call wrote the frame into the object's scratch directory and kept it: a loop over
    large frames filled /tmp; evaluate's result named that scratch file."""
    before = sorted(fitted.work_dir.glob("dataframe-*.parquet"))
    bars = _pandas_bars(260, seed=2)
    fitted.predict(bars)
    assert fitted.evaluate(bars, windows="all")["bars"] == "DataFrame"
    assert sorted(fitted.work_dir.glob("dataframe-*.parquet")) == before


def test_a_failed_fit_keeps_the_config_and_an_unknown_keyword_names_the_method() -> None:
    """``fit(df, tz=...)`` changed the object's config before training: after a failed fit a
    plain one read in that zone; ``tzz=`` named the internal ``read_fields()``."""
    model = foxhunt.TFTForecaster("demo", **TINY)
    with pytest.raises(DataError):
        model.fit(_pandas_bars(100, seed=1), tz="America/Chicago")  # too few bars
    assert model.config.data.tz is None
    with pytest.raises(TypeError, match=r"^fit\(\) got an unexpected keyword argument 'tzz'$"):
        model.fit(_pandas_bars(100, seed=1), tzz="UTC")
