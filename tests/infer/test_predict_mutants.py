"""Exact behaviour of ``foxhunt.infer.predict`` (the mutation survivors' cases): the schemas and
column names, every number and null ``write_forecasts`` writes (the model's forward replaced by
a recorder of known quantiles), what it hands ``tft_quantiles``, the progress it reports, the
origin closes, and every argument ``predict_to_file`` passes on to its collaborators (each
replaced by a recorder), with its refusals word for word. One slow test runs the demo run."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

import foxhunt.infer.predict as predict_mod
from foxhunt.data.windows.dataset import WindowDataset
from foxhunt.errors import DataError, InputError
from foxhunt.infer.predict import (
    _arrow,
    _utc,
    forecast_frame,
    forecast_schema,
    origin_closes,
    predict_schema,
    predict_to_file,
    quantile_columns,
    write_forecasts,
)
from foxhunt.model.tft import TFT

from .forward_fakes import (
    T0,
    FakeProgress,
    ForwardRecorder,
    H,
    assert_forwarded_in_sevens,
    recording,
    tiny_config,
    windows,
)

QUANTILES = (0.1, 0.5, 0.9)
UTC_US = ("us", "UTC")  # pa.timestamp(*UTC_US) in the tests: no pyarrow work at import


def _windows(rows_per_symbol: int = 15) -> WindowDataset:
    return windows(rows_per_symbol, with_target=False)


def _loaded(precision: str = "bf16") -> SimpleNamespace:
    """What ``write_forecasts`` reads of a ``LoadedModel``: the config and the model (left in
    training mode: ``write_forecasts`` must put it in eval mode itself)."""
    torch.manual_seed(0)
    cfg = tiny_config(QUANTILES)
    return SimpleNamespace(
        config=SimpleNamespace(model=cfg, train=SimpleNamespace(precision=precision)),
        model=TFT(cfg).train(),
    )


def _targets(windows: WindowDataset, closes: np.ndarray) -> pl.DataFrame:
    """Targets 5 minutes apart; every other one realised at 2 % over the origin's close."""
    origins = windows.origins()
    ts = [t + dt.timedelta(minutes=5 * h) for t in origins["ts"] for h in range(1, H + 1)]
    seen = [c * 1.02 if i % 2 else None for i, c in enumerate(np.repeat(closes, H))]
    return pl.DataFrame(
        {"target_ts": ts, "realised_close": seen},
        schema={"target_ts": pl.Datetime("us", "UTC"), "realised_close": pl.Float64},
    )


def _recorder(n: int, forward: Any = "ROWS") -> ForwardRecorder:
    """Window ``i``'s quantiles are ``table[i]`` (float32, unsorted on purpose)."""
    g = np.random.default_rng(7)
    table = (g.normal(size=(n, H, len(QUANTILES))) * 1e-2).astype(np.float32)
    return ForwardRecorder(torch.from_numpy(table), predict_mod, forward)


# ---------------------------------------------------------------- names and schemas


def test_quantile_columns_name_each_level_in_g_format() -> None:
    assert quantile_columns((0.02, 0.1, 0.5, 0.9, 0.98)) == (
        ["return_q0.02", "return_q0.1", "return_q0.5", "return_q0.9", "return_q0.98"],
        ["price_q0.02", "price_q0.1", "price_q0.5", "price_q0.9", "price_q0.98"],
    )
    assert quantile_columns((0.25,)) == (["return_q0.25"], ["price_q0.25"])


def test_forecast_schema_is_exactly_key_close_returns_prices() -> None:
    want = pa.schema(
        [
            ("symbol", pa.string()),
            ("origin_ts", pa.timestamp(*UTC_US)),
            ("horizon", pa.int16()),
            ("close", pa.float64()),
            ("return_q0.1", pa.float64()),
            ("return_q0.5", pa.float64()),
            ("return_q0.9", pa.float64()),
            ("price_q0.1", pa.float64()),
            ("price_q0.5", pa.float64()),
            ("price_q0.9", pa.float64()),
        ]
    )
    got = forecast_schema(QUANTILES)
    assert got.equals(want, check_metadata=True)
    assert got.field("origin_ts").type.tz == "UTC" and got.field("origin_ts").type.unit == "us"


def test_predict_schema_wide_by_default_and_long_on_request() -> None:
    head = [
        ("symbol", pa.string()),
        ("origin_ts", pa.timestamp(*UTC_US)),
        ("horizon", pa.int16()),
        ("target_ts", pa.timestamp(*UTC_US)),
        ("close", pa.float64()),
    ]
    tail = [("realised_close", pa.float64()), ("realised_return", pa.float64())]
    wide = pa.schema(
        head
        + [(f"return_q{q:g}", pa.float64()) for q in QUANTILES]
        + [(f"price_q{q:g}", pa.float64()) for q in QUANTILES]
        + tail
    )
    long = pa.schema(
        head
        + [("quantile", pa.float64()), ("return", pa.float64()), ("price", pa.float64())]
        + tail
    )
    assert predict_schema(QUANTILES).equals(wide)
    assert predict_schema(QUANTILES, long=False).equals(wide)
    assert predict_schema(QUANTILES, long=True).equals(long)
    assert predict_schema(QUANTILES).field("target_ts").type.tz == "UTC"


def test_arrow_passes_arrow_arrays_through_and_converts_numpy() -> None:
    arr = pa.array([1.5, 2.5])
    assert _arrow(arr) is arr
    got = _arrow(np.array([3, 4], dtype=np.int64))
    assert isinstance(got, pa.Array) and got.type == pa.int64() and got.to_pylist() == [3, 4]


def test_utc_reads_microseconds_since_the_epoch_as_utc_times() -> None:
    got = _utc(np.array([0, 1_704_153_600_000_001], dtype=np.int64))
    assert got.type == pa.timestamp(*UTC_US)
    assert got.to_pylist() == [
        dt.datetime(1970, 1, 1, tzinfo=dt.UTC),
        dt.datetime(2024, 1, 2, 0, 0, 0, 1, tzinfo=dt.UTC),
    ]
    # read as int64 whatever the array holds: whole microseconds as floats convert too
    # (arrow has no cast from double to timestamp)
    floats = _utc(np.array([0.0, 1_000_000.0]))
    assert floats.type == pa.timestamp(*UTC_US)
    assert floats.to_pylist() == [
        dt.datetime(1970, 1, 1, tzinfo=dt.UTC),
        dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=dt.UTC),
    ]


# ---------------------------------------------------------------- forecast_frame


def test_forecast_frame_is_float64_whatever_the_input_precision() -> None:
    """float32 quantiles and closes (as a model and a bar table give them) still make the
    schema's float64 columns; the horizon runs 1..H for every symbol."""
    q = (np.arange(2 * 4 * 3, dtype=np.float32).reshape(2, 4, 3) - 10) / 64  # exact in fp32
    closes = np.array([4000.25, 17000.5], dtype=np.float32)
    origins = [1_704_200_000_000_000, 1_704_200_300_000_000]
    got = forecast_frame(["ES", "NQ"], np.asarray(origins), closes, q, QUANTILES)
    assert got.schema == pl.Schema(forecast_schema(QUANTILES))
    assert got["horizon"].to_list() == [1, 2, 3, 4] * 2
    assert got["symbol"].to_list() == ["ES"] * 4 + ["NQ"] * 4
    assert (
        got["origin_ts"].to_list()
        == [dt.datetime(2024, 1, 2, 12, 53, 20, tzinfo=dt.UTC)] * 4
        + [dt.datetime(2024, 1, 2, 12, 58, 20, tzinfo=dt.UTC)] * 4
    )
    flat = q.reshape(8, 3).astype(np.float64)
    close = np.repeat([4000.25, 17000.5], 4)
    assert got["close"].to_list() == close.tolist()
    np.testing.assert_array_equal(got.select("^return_q.*$").to_numpy(), flat)
    # the exponential is taken at the quantiles' own precision (float32 here)
    price = close[:, None] * np.exp(q.reshape(8, 3)).astype(np.float64)
    np.testing.assert_allclose(got.select("^price_q.*$").to_numpy(), price, rtol=1e-15)


def test_forecast_frame_of_no_symbol_keeps_the_schema() -> None:
    got = forecast_frame([], np.zeros(0, np.int64), [], np.zeros((0, 2, 3)), QUANTILES)
    assert got.height == 0
    assert got.schema == pl.Schema(forecast_schema(QUANTILES))


# ---------------------------------------------------------------- write_forecasts


def _write(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    batch_size: int,
    long: bool = False,
    progress: Any = None,
    forward: Any = "ROWS",
) -> tuple[pl.DataFrame, int, ForwardRecorder, WindowDataset, Any, np.ndarray, pl.DataFrame, Path]:
    windows, loaded = _windows(), _loaded()
    n = len(windows)
    rec = _recorder(n, forward)
    rec.install(monkeypatch)
    closes = np.linspace(100.0, 150.0, n)
    targets = _targets(windows, closes)
    out = tmp_path / ("long.parquet" if long else "wide.parquet")
    rows = write_forecasts(
        loaded,  # type: ignore[arg-type]
        windows,
        closes,
        targets,
        out,
        batch_size=batch_size,
        device=torch.device("cpu"),
        progress=progress,
        long=long,
    )
    return pl.read_parquet(out), rows, rec, windows, loaded, closes, targets, out


def test_write_forecasts_writes_every_number_of_the_wide_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fc, rows, rec, windows, _, closes, targets, out = _write(tmp_path, monkeypatch, batch_size=4)
    n = len(windows)
    assert n == 18 and rows == n * H == fc.height
    assert pq.ParquetFile(out).schema_arrow.equals(predict_schema(QUANTILES))
    assert pq.ParquetFile(out).num_row_groups == 5  # 4 + 4 + 4 + 4 + 2 windows
    assert [c["b"] for c in rec.calls] == [4, 4, 4, 4, 2]
    assert not (tmp_path / "wide.parquet.tmp").exists()
    origins = windows.origins()
    assert fc["symbol"].to_list() == np.repeat(origins["symbol"].to_numpy(), H).tolist()
    assert fc["origin_ts"].to_list() == [t for t in origins["ts"] for _ in range(H)]
    assert fc["horizon"].to_list() == [1, 2, 3] * n
    assert fc["target_ts"].to_list() == targets["target_ts"].to_list()
    close = np.repeat(closes, H)
    assert fc["close"].to_list() == close.tolist()
    q = rec.table.numpy().reshape(n * H, len(QUANTILES))
    ret = fc.select([f"return_q{v:g}" for v in QUANTILES]).to_numpy()
    np.testing.assert_array_equal(ret, q.astype(np.float64))  # as the forward gave them
    price = fc.select([f"price_q{v:g}" for v in QUANTILES]).to_numpy()
    np.testing.assert_allclose(price, close[:, None] * np.exp(q.astype(np.float64)), rtol=1e-6)
    seen = [c * 1.02 if i % 2 else None for i, c in enumerate(close)]
    assert fc["realised_close"].to_list() == seen
    want = [None if s is None else float(np.log(s / c)) for s, c in zip(seen, close, strict=True)]
    assert fc["realised_return"].null_count() == n * H // 2
    got = fc["realised_return"].to_list()
    assert [g is None for g in got] == [w is None for w in want]
    np.testing.assert_allclose(
        [g for g in got if g is not None], [w for w in want if w is not None], rtol=1e-12
    )


def test_write_forecasts_hands_tft_quantiles_the_model_map_device_precision_and_forward(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, _, rec, windows, loaded, *_ = _write(tmp_path, monkeypatch, batch_size=7)
    assert_forwarded_in_sevens(rec, loaded, windows)


def test_write_forecasts_falls_back_to_the_plain_forward(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, _, rec, *_ = _write(tmp_path, monkeypatch, batch_size=100, forward=None)
    assert len(rec.calls) == 1 and rec.calls[0]["forward"] is predict_mod.plain_forward


def test_write_forecasts_reports_progress_per_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    progress = FakeProgress(7)
    _write(tmp_path, monkeypatch, batch_size=5, progress=progress)
    assert progress.tasks == [(("predict",), {"total": 18})]
    assert progress.updates == [((7,), {"advance": k}) for k in (5, 5, 5, 3)]


def test_write_forecasts_long_form_repeats_each_row_once_per_level(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fc, rows, rec, windows, _, closes, targets, out = _write(
        tmp_path, monkeypatch, batch_size=4, long=True
    )
    n, nq = len(windows), len(QUANTILES)
    assert rows == n * H * nq == fc.height
    assert pq.ParquetFile(out).schema_arrow.equals(predict_schema(QUANTILES, long=True))
    origins = windows.origins()
    assert fc["symbol"].to_list() == np.repeat(origins["symbol"].to_numpy(), H * nq).tolist()
    assert fc["origin_ts"].to_list() == [t for t in origins["ts"] for _ in range(H * nq)]
    assert fc["horizon"].to_list() == np.repeat(np.tile([1, 2, 3], n), nq).tolist()
    assert fc["target_ts"].to_list() == [t for t in targets["target_ts"] for _ in range(nq)]
    close = np.repeat(closes, H * nq)
    assert fc["close"].to_list() == close.tolist()
    assert fc["quantile"].to_list() == list(QUANTILES) * (n * H)
    q = rec.table.numpy().reshape(-1).astype(np.float64)
    np.testing.assert_array_equal(fc["return"].to_numpy(), q)
    np.testing.assert_allclose(fc["price"].to_numpy(), close * np.exp(q), rtol=1e-6)
    seen = np.repeat(
        [c * 1.02 if i % 2 else np.nan for i, c in enumerate(np.repeat(closes, H))], nq
    )
    assert fc["realised_close"].to_list() == [None if np.isnan(s) else s for s in seen]
    np.testing.assert_allclose(
        fc["realised_return"].fill_null(np.nan).to_numpy(), np.log(seen / close), rtol=1e-12
    )


def test_write_forecasts_refuses_targets_of_another_length(tmp_path: Path) -> None:
    windows = _windows()
    closes = np.ones(len(windows))
    targets = _targets(windows, closes).head(53)
    with pytest.raises(ValueError) as e:
        write_forecasts(
            _loaded(),  # type: ignore[arg-type]
            windows,
            closes,
            targets,
            tmp_path / "f.parquet",
            batch_size=4,
            device=torch.device("cpu"),
        )
    assert str(e.value) == "targets has 53 rows, expected 18 x 3"
    assert not list(tmp_path.iterdir())


# ---------------------------------------------------------------- origin_closes


class _Origins:
    def __init__(self, symbols: list[str], minutes: list[int]) -> None:
        self.symbols, self.minutes = symbols, minutes

    def origins(self) -> pl.DataFrame:
        return pl.DataFrame(
            {
                "symbol": self.symbols,
                "ts": [T0 + dt.timedelta(minutes=m) for m in self.minutes],
            },
            schema={"symbol": pl.String, "ts": pl.Datetime("us", "UTC")},
        )


def _bars() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "symbol": ["ES", "ES", "ES", "NQ", "NQ"],
            "ts": [T0 + dt.timedelta(minutes=m) for m in (0, 5, 10, 0, 5)],
            "open": [0.0] * 5,
            "close": [10.5, 11.25, 12.0, 20.5, 21.75],
        },
        schema={
            "symbol": pl.String,
            "ts": pl.Datetime("us", "UTC"),
            "open": pl.Float64,
            "close": pl.Float32,
        },
    )


def test_origin_closes_looks_each_origin_up_in_window_order() -> None:
    windows = _Origins(["NQ", "ES", "ES", "NQ", "ES"], [5, 10, 0, 0, 5])
    got = origin_closes(_bars(), windows)  # type: ignore[arg-type]
    assert got.dtype == np.float64
    assert got.tolist() == [21.75, 12.0, 10.5, 20.5, 11.25]


def test_origin_closes_names_the_first_origin_without_a_bar() -> None:
    windows = _Origins(["ES", "NQ", "ES"], [5, 10, 15])
    bars = _bars()
    with pytest.raises(DataError) as e:
        origin_closes(bars, windows)  # type: ignore[arg-type]
    assert str(e.value) == f"{bars}: no bar for origin NQ {T0 + dt.timedelta(minutes=10)}"


# ---------------------------------------------------------------- predict_to_file


class _Windows:
    def __init__(self, n: int) -> None:
        self.n = n
        self.calendars = {"ES": "CAL"}

    def __len__(self) -> int:
        return self.n

    def origins(self) -> str:
        return "ORIGINS"


def _fake_pipeline(
    monkeypatch: pytest.MonkeyPatch, *, n_windows: int = 5, allow_in_run: bool = False
) -> tuple[list[tuple[str, tuple[Any, ...], dict[str, Any]]], SimpleNamespace, Any]:
    """Replace every collaborator of ``predict_to_file`` by a recorder."""
    seen: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
    data = SimpleNamespace(allow_outliers=allow_in_run, target="TARGET")
    loaded = SimpleNamespace(
        config=SimpleNamespace(model=SimpleNamespace(encoder_length=4, horizon=3), data=data),
        spec="SPEC",
        scaler="SCALER",
        instruments="INSTRUMENTS",
        run="RUN",
    )
    frame = pl.DataFrame({"symbol": ["NQ", "ES", "NQ"]})
    windows = _Windows(n_windows)

    for name, result in {
        "parse_device": "DEV",
        "load_inference_model": "L0",
        "with_user_instruments": "L1",
        "with_read_flags": loaded,
        "inference_bars_needed": (77, "WHY"),
        "read_run_bars": (frame, "FUTURE"),
        "check_trained_symbols": [],
        "check_bar_interval": None,
        "scratch_for": "SCRATCH",
        "prepare_inference_data": windows,
        "_warn_in_sample": None,
        "target_base": frame,
        "origin_closes": "CLOSES",
        "forecast_targets": "TARGETS",
        "write_forecasts": 42,
    }.items():
        monkeypatch.setattr(predict_mod, name, recording(seen, name, result))
    return seen, loaded, frame


def test_predict_to_file_hands_every_argument_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen, loaded, frame = _fake_pipeline(monkeypatch)
    out = tmp_path / "f.parquet"
    got = predict_to_file(
        tmp_path / "run",
        tmp_path / "bars.csv",
        out,
        batch_size=9,
        device="cpu:0",
        progress="PROGRESS",  # type: ignore[arg-type]
        instruments=tmp_path / "inst.csv",
        strict=True,
        allow_outliers=False,
        long=True,
        read={"tz": "UTC"},
    )
    assert got == (42, 5, 3)
    calls = {name: (args, kw) for name, args, kw in seen}
    assert [name for name, *_ in seen] == [
        "parse_device",
        "load_inference_model",
        "with_user_instruments",
        "with_read_flags",
        "inference_bars_needed",
        "read_run_bars",
        "check_trained_symbols",
        "check_bar_interval",
        "scratch_for",
        "prepare_inference_data",
        "_warn_in_sample",
        "target_base",
        "origin_closes",
        "forecast_targets",
        "write_forecasts",
    ]
    assert calls["parse_device"] == (("cpu:0",), {})
    assert calls["load_inference_model"] == ((tmp_path / "run", "DEV"), {})
    assert calls["with_user_instruments"] == (("L0", tmp_path / "inst.csv"), {})
    assert calls["with_read_flags"] == (("L1", {"tz": "UTC"}), {})
    assert calls["inference_bars_needed"] == (("SPEC", 4, 3), {"with_target": False})
    assert calls["read_run_bars"] == (
        (tmp_path / "bars.csv", loaded.config.data),
        {
            "min_bars": 77,
            "reason": "WHY",
            "allow_outliers": False,
            "drop_short": True,
            "instruments": "INSTRUMENTS",  # the run's calendars judge the new bars
        },
    )
    (args, kw) = calls["check_trained_symbols"]
    assert args[0] is loaded and sorted(args[1]) == ["ES", "NQ"] and kw == {"strict": True}
    (args, kw) = calls["check_bar_interval"]
    assert args[0] == "RUN" and args[1] is frame and args[2] == tmp_path / "bars.csv" and not kw
    assert calls["scratch_for"] == ((tmp_path / "run",), {})
    assert isinstance(calls["scratch_for"][0][0], Path)
    (args, kw) = calls["prepare_inference_data"]
    assert args[0] is frame and args[1:] == ("SPEC", "SCALER", 4, 3)
    assert kw == {
        "with_target": False,
        "instruments": "INSTRUMENTS",
        "inputs": loaded.config.data,
        "future": "FUTURE",
        "spill": "SCRATCH",
    }
    (args, kw) = calls["_warn_in_sample"]
    assert args[0] is loaded and isinstance(args[1], _Windows) and not kw
    assert calls["target_base"] == ((frame, loaded.config.data.target), {})
    (args, kw) = calls["origin_closes"]
    assert args[0] is frame and isinstance(args[1], _Windows) and not kw
    (args, kw) = calls["forecast_targets"]
    assert args[0] is frame and args[1:] == ("ORIGINS", 3, {"ES": "CAL"}) and not kw
    (args, kw) = calls["write_forecasts"]
    assert args[0] is loaded and isinstance(args[1], _Windows)
    assert args[2:] == ("CLOSES", "TARGETS", out)
    assert kw == {"batch_size": 9, "device": "DEV", "progress": "PROGRESS", "long": True}


def test_predict_to_file_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen, _, _ = _fake_pipeline(monkeypatch)
    predict_to_file(
        tmp_path / "run", "bars.csv", str(tmp_path / "f.parquet"), batch_size=1, device="cpu"
    )
    calls = {name: (args, kw) for name, args, kw in seen}
    assert calls["with_user_instruments"][0][1] is None
    assert calls["with_read_flags"][0][1] is None
    assert calls["read_run_bars"][1]["allow_outliers"] is False
    assert calls["check_trained_symbols"][1] == {"strict": False}
    assert calls["write_forecasts"][0][4] == tmp_path / "f.parquet"
    assert isinstance(calls["write_forecasts"][0][4], Path)
    assert calls["write_forecasts"][1] == {
        "batch_size": 1,
        "device": "DEV",
        "progress": None,
        "long": False,
    }


@pytest.mark.parametrize(
    ("flag", "in_run", "want"),
    [(False, False, False), (True, False, True), (False, True, True), (True, True, True)],
)
def test_outliers_are_kept_on_request_or_when_the_run_kept_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: bool, in_run: bool, want: bool
) -> None:
    seen, _, _ = _fake_pipeline(monkeypatch, allow_in_run=in_run)
    predict_to_file(
        tmp_path, "b.csv", tmp_path / "f.pq", batch_size=2, device="cpu", allow_outliers=flag
    )
    kw = next(kw for name, _, kw in seen if name == "read_run_bars")
    assert kw["allow_outliers"] is want


@pytest.mark.parametrize("name", ["f.parquet", "f.pq", "F.PARQUET", "f.Pq"])
def test_parquet_suffixes_are_taken_in_any_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    _fake_pipeline(monkeypatch)
    assert predict_to_file(tmp_path, "b.csv", tmp_path / name, batch_size=1, device="cpu") == (
        42,
        5,
        3,
    )


def test_refusals_word_for_word(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen, _, _ = _fake_pipeline(monkeypatch)
    out = tmp_path / "f.parquet"
    with pytest.raises(InputError) as e:
        predict_to_file(tmp_path, "b.csv", out, batch_size=0, device="cpu")
    assert str(e.value) == "--batch-size must be >= 1, got 0"
    for bad in ("f.csv", "f.parquet.gz", "parquet"):
        with pytest.raises(InputError) as e:
            predict_to_file(tmp_path, "b.csv", tmp_path / bad, batch_size=1, device="cpu")
        assert (
            str(e.value) == f"--out {tmp_path / bad}: predictions are written as Parquet (.parquet)"
        )
    missing = tmp_path / "nowhere" / "f.parquet"
    with pytest.raises(InputError) as e:
        predict_to_file(tmp_path, "b.csv", missing, batch_size=1, device="cpu")
    assert str(e.value) == f"--out {missing}: directory {tmp_path / 'nowhere'} does not exist"
    assert seen == []  # refused before anything was loaded


def test_too_few_bars_for_a_window_is_refused_before_forecasting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen, _, _ = _fake_pipeline(monkeypatch, n_windows=0)
    with pytest.raises(DataError) as e:
        predict_to_file(tmp_path, "bars.csv", tmp_path / "f.parquet", batch_size=1, device="cpu")
    assert str(e.value) == "bars.csv: fewer bars than one 4-bar encoder window after the warm-up"
    assert [name for name, *_ in seen][-1] == "prepare_inference_data"


@pytest.mark.slow
def test_predict_to_file_on_the_demo_run(demo_run: Any, tmp_path: Path) -> None:
    """The real chain: one row per origin and horizon, the realised values where the bars hold
    the target bar, the tuple returned."""
    bars = pl.read_parquet(demo_run.bars).tail(400)  # the last 400 bars: a few seconds
    path = tmp_path / "ES_tail.parquet"
    bars.write_parquet(path)
    out = tmp_path / "f.parquet"
    rows, n, h = predict_to_file(demo_run.run, path, out, batch_size=100, device="cpu")
    fc = pl.read_parquet(out)
    assert h == 4 and rows == n * 4 == fc.height and n > 100
    assert fc.schema == pl.Schema(predict_schema((0.02, 0.1, 0.5, 0.9, 0.98)))
    assert fc["origin_ts"].max() == bars["ts"].max()  # the last bar is an origin too
    last = fc.filter(pl.col("origin_ts") == pl.col("origin_ts").max())
    assert last["realised_close"].null_count() == 4  # the last bar's future is not in the bars
    first = fc.head(4)
    closes = dict(zip(bars["ts"].to_list(), bars["close"].to_list(), strict=True))
    assert first["close"].to_list() == [closes[first["origin_ts"][0]]] * 4
    assert first["realised_close"].to_list() == [closes[t] for t in first["target_ts"]]
    np.testing.assert_allclose(
        first["realised_return"].to_numpy(),
        np.log(first["realised_close"].to_numpy() / first["close"].to_numpy()),
        rtol=1e-12,
    )
    assert (np.diff(fc.select("^return_q.*$").to_numpy(), axis=1) >= 0).all()
