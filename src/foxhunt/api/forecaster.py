"""``TFTForecaster``: fit, predict, evaluate, save, load and stream from Python.

::

    import foxhunt
    bars = foxhunt.read_bars("ES_FUT.parquet")           # or a pandas / polars DataFrame
    model = foxhunt.TFTForecaster("demo", train={"max_steps": 200}).fit(bars)
    forecast = model.predict(bars)                       # origin_ts, target_ts, quantiles, ...
    model.evaluate(bars)["tft_beats"]
    model.save("runs/es")                                # the run directory the CLI writes

Every method runs the code the CLI runs (``train``, ``predict``, ``evaluate``): a run directory
written here is one ``foxhunt predict --model`` reads, and the reverse. Nothing process-wide
is changed: no allocator tuning, no logging configuration, no torch thread count (unless the
config sets ``train.num_threads``); foxhunt's logs go to the ``foxhunt`` logger as ever.
"""

from __future__ import annotations

import shutil
import tempfile
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from foxhunt.api.frames import (
    FRAME,
    BarsLike,
    as_kind,
    bars_path,
    checked_read,
    kind_of,
    python_words,
    reworded,
)
from foxhunt.artifacts.lock import LOCK_NAME
from foxhunt.artifacts.rundir import RunDir, read_config
from foxhunt.config import RunConfig, preset
from foxhunt.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

    from foxhunt.infer.forecaster import Forecaster


class TFTForecaster:
    """A Temporal Fusion Transformer quantile forecaster, as a notebook object.

    Args:
        config: A preset name (``demo``, ``tft-225``) or a :class:`~foxhunt.config.RunConfig`.
        model: Field overrides of the model section, e.g. ``{"horizon": 5}``.
        data: Field overrides of the data section, e.g. ``{"tz": "America/Chicago"}``.
        train: Field overrides of the train section, e.g. ``{"max_steps": 200, "epochs": 1}``.
        run_dir: Where :meth:`fit` writes the run directory; default a temporary directory that
            lives as long as this object (:meth:`save` copies it somewhere lasting).
        device: Where :meth:`predict` and :meth:`evaluate` run (training: ``train.device``).

    Raises:
        ConfigError: An unknown preset or an invalid field value.
    """

    def __init__(
        self,
        config: RunConfig | str = "demo",
        *,
        model: dict[str, Any] | None = None,
        data: dict[str, Any] | None = None,
        train: dict[str, Any] | None = None,
        run_dir: str | Path | None = None,
        device: str = "cpu",
    ) -> None:
        cfg = preset(config) if isinstance(config, str) else config
        sections = {k: v for k, v in (("model", model), ("data", data), ("train", train)) if v}
        self.config: RunConfig = cfg.replace(**sections) if sections else cfg
        self.device = device
        self._work = tempfile.TemporaryDirectory(prefix="foxhunt-")
        self._run_dir = Path(run_dir) if run_dir is not None else None
        self._fitted = False

    @property
    def run_dir(self) -> Path:
        """The run directory (written by :meth:`fit`, or the one :meth:`load` read)."""
        return self._run_dir if self._run_dir is not None else Path(self._work.name) / "run"

    @property
    def work_dir(self) -> Path:
        """This object's private scratch directory (bars given as DataFrames, outputs)."""
        return Path(self._work.name)

    def _require_fitted(self) -> Path:
        if not self._fitted:
            raise InputError("TFTForecaster: not fitted; call fit(bars) or TFTForecaster.load(dir)")
        return self.run_dir

    def fit(
        self,
        bars: BarsLike,
        *,
        symbol: str | None = None,
        overwrite: bool = False,
        ensemble: int = 1,
        **read: Any,
    ) -> TFTForecaster:
        """Train on ``bars`` (train/validation/test split by time, as ``foxhunt train``).

        Args:
            bars: A bars file, directory or glob, or a polars or pandas DataFrame (columns as
                in a bars file; a pandas ``DatetimeIndex`` is the time column).
            symbol: The symbol of a DataFrame without a symbol column.
            overwrite: Replace a finished run already in a ``run_dir`` you named (the default
                temporary one is replaced on every call: fitting again refits).
            ensemble: N > 1 trains a seed ensemble (``foxhunt train --ensemble N``): N
                members with seeds ``seed .. seed + N - 1``, one after another; predict,
                evaluate and stream then average their calibrated quantiles.
            **read: How to read the bars, as :func:`foxhunt.read_bars` takes it (``tz``,
                ``columns``, ``ts_format``, ``stamps``, ``decimal``, ``bar_minutes``,
                ``allow_odd_times``, ``allow_outliers``): stored in the run, as the CLI's flags.

        Returns:
            ``self``, trained. Bars given as a DataFrame are stored in this object's scratch
            directory, which the run's ``run.json`` names: resuming such a run from the CLI
            after the object is gone needs ``--bars``.

        Raises:
            InputError: Bad bars (naming ``DataFrame`` or the file, column and row), a bad
                config, or a finished run in ``run_dir`` without ``overwrite``.
        """
        from foxhunt.train.ensemble import train_ensemble
        from foxhunt.train.run import run_training

        if ensemble < 1:
            raise InputError(f"TFTForecaster.fit: ensemble must be >= 1, got {ensemble}")
        train = run_training if ensemble == 1 else partial(train_ensemble, n=ensemble)
        fields = checked_read("fit", read)
        config = self.config.replace(data=fields) if fields else self.config  # kept if it fails
        with (
            reworded(python_words),
            bars_path(bars, self.work_dir, symbol, columns=read.get("columns")) as path,
        ):
            train(
                config,
                bars=path,
                out=self.run_dir,
                resume=None,
                memory_budget=None,
                allow_precision_change=False,
                overwrite=overwrite or self._run_dir is None,
            )
        self.config = read_config(RunDir(self.run_dir))
        self._fitted = True
        return self

    def predict(
        self,
        bars: BarsLike,
        *,
        symbol: str | None = None,
        long: bool = False,
        batch_size: int = 256,
        strict: bool = False,
        **read: Any,
    ) -> pl.DataFrame | pd.DataFrame:
        """Quantile forecasts from every origin in ``bars`` (as ``foxhunt predict``).

        Args:
            bars: As for :meth:`fit`; no future needed (the last bar is an origin too).
            symbol: The symbol of a DataFrame without a symbol column.
            long: One row per quantile level instead of one column per level.
            batch_size: Windows per forward pass.
            strict: Refuse symbols the model was not trained on (else one warning).
            **read: How to read the bars, as :func:`foxhunt.read_bars` takes it, over the
                run's own (``foxhunt predict --tz ...``).

        Returns:
            pandas for pandas bars, else polars: one row per symbol x origin x horizon with
            ``origin_ts``, ``target_ts`` (the bar forecast: the h-th next bar in ``bars``,
            past the last one the instrument's calendar's, on the bars' own grid),
            ``close``, ``return_q*``/``price_q*`` and ``realised_close``/``realised_return``
            where the bars hold the target bar (docs/inference.md, "Forecast files").
        """
        from foxhunt.infer.predict import predict_to_file

        run = self._require_fitted()
        fields = checked_read("predict", read)  # before the frame is written
        out = Path(tempfile.mkdtemp(dir=self.work_dir)) / "forecast.parquet"
        with (
            reworded(python_words),
            bars_path(bars, self.work_dir, symbol, keep=False, columns=read.get("columns")) as path,
        ):
            predict_to_file(
                run,
                path,
                out,
                batch_size=batch_size,
                device=self.device,
                long=long,
                strict=strict,
                read=fields,
            )
        frame = pl.read_parquet(out)
        shutil.rmtree(out.parent)
        return as_kind(frame, kind_of(bars))

    def evaluate(
        self,
        bars: BarsLike,
        *,
        symbol: str | None = None,
        batch_size: int = 256,
        strict: bool = False,
        windows: str | None = None,
        **read: Any,
    ) -> dict[str, Any]:
        """Score the quantiles on ``bars`` against the baselines (as ``foxhunt evaluate``).

        On the bars the model was trained on, only their test split is scored (``windows``:
        ``new``, ``test`` or ``all``, as ``--windows``). ``strict`` refuses symbols the model
        was not trained on; ``**read`` as for :meth:`predict`. Nothing is written into the run
        directory.

        Returns:
            The evaluation: ``split``, ``n_windows``, ``scores`` per model (``tft``,
            baselines: mean pinball, q-risk, coverage, per horizon) and ``tft_beats``; a number
            that is undefined is None, as in ``evaluation.json`` (a relative difference against
            a baseline whose loss is 0, the q-risk of a price that never moved).
        """
        from foxhunt.infer.evaluate import evaluate_model

        run = self._require_fitted()
        if windows not in (None, "new", "test", "all"):
            raise InputError(f"evaluate: windows must be new, test or all, got {windows!r}")
        fields = checked_read("evaluate", read)  # before the frame is written
        out = Path(tempfile.mkdtemp(dir=self.work_dir)) / "evaluation.json"
        with (
            reworded(python_words),
            bars_path(bars, self.work_dir, symbol, keep=False, columns=read.get("columns")) as path,
        ):
            result = evaluate_model(
                run,
                path,
                batch_size=batch_size,
                device=self.device,
                out=out,
                strict=strict,
                scope=windows,  # type: ignore[arg-type]
                read=fields,
            )
        shutil.rmtree(out.parent)
        if kind_of(bars) != "path":  # the scratch file it was read from is gone
            result["bars"] = FRAME
        return result

    def save(self, path: str | Path) -> Path:
        """Copy the run directory to ``path`` (new or empty), readable by the CLI and :meth:`load`.

        Raises:
            InputError: not fitted, or ``path`` exists and is not an empty directory.
        """
        run = self._require_fitted()
        dest = Path(path)
        if dest.resolve() == run.resolve():
            return dest
        if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
            raise InputError(f"save: {dest} exists and is not an empty directory")
        shutil.copytree(run, dest, ignore=shutil.ignore_patterns(LOCK_NAME), dirs_exist_ok=True)
        return dest

    @classmethod
    def load(cls, path: str | Path, *, device: str = "cpu") -> TFTForecaster:
        """A forecaster over an existing run directory (``foxhunt train`` or :meth:`save`).

        Raises:
            ModelDirError: ``path`` is not a run directory.
        """
        config = read_config(RunDir(Path(path)))
        self = cls(config, run_dir=path, device=device)
        self._fitted = True
        return self

    def stream(
        self,
        *,
        symbols: list[str] | None = None,
        history: int | None = None,
        engine: str = "torch",
        tz: str | None = None,
    ) -> Forecaster:
        """A streaming forecaster over this model: ``update(bars)`` with new bars (polars or
        pandas) returns forecasts from each symbol's latest bar
        (:class:`foxhunt.infer.forecaster.Forecaster`; ``engine="onnx"`` or ``"auto"`` runs its
        forward in onnxruntime graphs built once into the run directory, faster at a few
        symbols per update: docs/inference.md). Naive bar times are read in ``tz`` (an IANA
        zone or an offset); without it as UTC, with one warning."""
        from foxhunt.infer.forecaster import Forecaster

        run = self._require_fitted()
        return Forecaster.load(
            run, symbols=symbols, history=history, device=self.device, engine=engine, tz=tz
        )

    def __repr__(self) -> str:
        state = f"run_dir={str(self.run_dir)!r}" if self._fitted else "not fitted"
        return f"TFTForecaster(preset={self.config.preset!r}, {state})"
