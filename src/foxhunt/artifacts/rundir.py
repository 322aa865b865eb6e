"""The run directory: what a training run writes, and how a model is loaded back from it.

::

    runs/<name>/
      config.json         the full resolved RunConfig
      features.json       feature names per group, scaler params, data fingerprint, versions
      run.json            where the bars came from and where they end per symbol (data_end:
                          evaluate scores other bars from there on), versions, status
      baselines.json      empirical return quantiles of recent training windows (for evaluate)
      checkpoints/        see foxhunt.artifacts.checkpoints
      metrics.jsonl       one line per logged step, per epoch, per OOM back-off
      memory.jsonl        one line per memory snapshot
      interpretation.json last validation window forecast + mean variable selection weights
      evaluation.json     the first `foxhunt evaluate` result recorded here (if run);
      evaluation-N.json   later ones, beside it (the report shows the highest N)
      report.md + *.png   the report
      .lock               held by the one process writing the directory (artifacts.lock)

A run directory someone else wrote is data, not a program: :func:`load_model_dir` reads JSON and
safetensors only and checks that the features the model expects are the ones this version of
foxhunt computes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foxhunt import runtime
from foxhunt.config import ConfigError, RunConfig
from foxhunt.errors import DataError, ModelDirError
from foxhunt.version import __version__

if TYPE_CHECKING:  # torch (and checkpoints, which need it) load where a model is read
    import torch

    from foxhunt.data.features.table import FeatureSpec
    from foxhunt.data.market.instrument import Instrument
    from foxhunt.data.scale.scaler import ScalerParams
    from foxhunt.model.tft import TFT

FEATURES_FORMAT = 1
"""Version of the features.json schema."""

ENSEMBLE_FILE = "ensemble.json"
"""Marks a seed ensemble's directory (:mod:`foxhunt.artifacts.ensemble`)."""


@dataclass(frozen=True)
class RunDir:
    """Paths inside one run directory (nothing is created until :meth:`create`)."""

    root: Path

    @property
    def config(self) -> Path:
        """``config.json``."""
        return self.root / "config.json"

    @property
    def features(self) -> Path:
        """``features.json``."""
        return self.root / "features.json"

    @property
    def run_info(self) -> Path:
        """``run.json``."""
        return self.root / "run.json"

    @property
    def baselines(self) -> Path:
        """``baselines.json``."""
        return self.root / "baselines.json"

    @property
    def calibration(self) -> Path:
        """``calibration.json``: conformal offsets per horizon and quantile (absent: none)."""
        return self.root / "calibration.json"

    @property
    def instruments(self) -> Path:
        """``instruments.json``: each trained symbol's resolved instrument (and calendar)."""
        return self.root / "instruments.json"

    @property
    def checkpoints(self) -> Path:
        """``checkpoints/``."""
        return self.root / "checkpoints"

    @property
    def metrics(self) -> Path:
        """``metrics.jsonl``."""
        return self.root / "metrics.jsonl"

    @property
    def memory(self) -> Path:
        """``memory.jsonl``."""
        return self.root / "memory.jsonl"

    @property
    def interpretation(self) -> Path:
        """``interpretation.json``."""
        return self.root / "interpretation.json"

    @property
    def evaluation(self) -> Path:
        """``evaluation.json``: the first evaluation recorded here."""
        return self.root / "evaluation.json"

    def evaluations(self) -> list[Path]:
        """The recorded evaluations, oldest first: ``evaluation.json``, ``evaluation-2.json``..."""
        found = [p for p in self.root.glob("evaluation*.json") if _evaluation_number(p)]
        return sorted(found, key=_evaluation_number)

    def next_evaluation(self) -> Path:
        """Where the next evaluation goes: ``evaluation.json`` if none exists, else beside it
        as ``evaluation-<N>.json`` (N one past the highest), never over an earlier one."""
        done = self.evaluations()
        if not done:
            return self.evaluation
        return self.root / f"evaluation-{_evaluation_number(done[-1]) + 1}.json"

    @property
    def report(self) -> Path:
        """``report.md``."""
        return self.root / "report.md"

    def png(self, name: str) -> Path:
        """``<name>.png`` in the run directory."""
        return self.root / f"{name}.png"

    def model_files(self) -> list[Path]:
        """The files a model is loaded from (inputs a command's ``--out`` must never replace)."""
        names = (*_DESCRIPTION, "quantization.json")
        files = [self.root / n for n in names if (self.root / n).is_file()]
        if self.checkpoints.is_dir():
            files += sorted(p for p in self.checkpoints.iterdir() if p.is_file())
        return files

    def clear(self) -> None:
        """Delete what a training run wrote here (``foxhunt train --overwrite``).

        Only the run's own files go: anything else in the directory (the bars, say) stays.
        """
        import shutil

        for name in (*_DESCRIPTION, *_LOGS, "quantization.json"):
            (self.root / name).unlink(missing_ok=True)
        for name in _PLOTS:
            self.png(name).unlink(missing_ok=True)
        for p in self.root.glob("memory.rank*.jsonl"):
            p.unlink()
        for p in self.evaluations():
            p.unlink()
        shutil.rmtree(self.checkpoints, ignore_errors=True)
        shutil.rmtree(self.root / "members", ignore_errors=True)  # a seed ensemble's

    def create(self) -> None:
        """Make the directory and ``checkpoints/``; remove temp files and window files a killed
        run left."""
        from foxhunt.data.windows.row_files import remove_stale_rows

        self.checkpoints.mkdir(parents=True, exist_ok=True)
        runtime.remove_stale_tmp(self.root)
        remove_stale_rows(self.root)
        runtime.remove_stale_tmp(self.checkpoints)


_DESCRIPTION = (
    "config.json",
    "features.json",
    "run.json",
    "baselines.json",
    "instruments.json",
    ENSEMBLE_FILE,
)
_LOGS = ("metrics.jsonl", "memory.jsonl", "interpretation.json", "report.md")
_PLOTS = (
    "loss_curves",
    "fan_chart",
    "variable_importance",
    "memory_timeline",
    "reliability",
    "pit_histogram",
)
"""The report's plots (``train.report.write_report``), ``<name>.png``."""


def _evaluation_number(path: Path) -> int:
    """1 for ``evaluation.json``, N for ``evaluation-N.json``, 0 for any other name."""
    stem = path.name.removesuffix(".json")
    if stem == "evaluation":
        return 1
    n = stem.removeprefix("evaluation-")
    return int(n) if n != stem and n.isdigit() and int(n) > 1 else 0


def features_record(spec: FeatureSpec, scaler: ScalerParams, fingerprint: str) -> dict[str, Any]:
    """The content of ``features.json`` (also embedded in every checkpoint sidecar)."""
    return {
        "format": FEATURES_FORMAT,
        "foxhunt_version": __version__,
        "spec": spec.to_dict(),
        "scaler": scaler.to_dict(),
        "fingerprint": fingerprint,
    }


@dataclass
class LoadedModel:
    """A model directory read back for inference.

    Attributes:
        run: The run directory.
        config: Its RunConfig.
        spec: Feature names per group the model expects.
        scaler: Frozen scaling params (targets are divided by ``target_std`` per horizon).
        fingerprint: Fingerprint of the bars the model was trained on.
        model: The TFT in eval mode, on the requested device.
        weights: The weights file that was loaded.
        sidecar: That file's sidecar.
        instruments: Each trained symbol's instrument (``instruments.json``); None for a run
            without one (trained before calendars, or from a feature store): every symbol
            then follows the ``globex`` calendar, as it did in training.
    """

    run: RunDir
    config: RunConfig
    spec: FeatureSpec
    scaler: ScalerParams
    fingerprint: str
    model: TFT
    weights: Path
    sidecar: dict[str, Any]
    instruments: dict[str, Instrument] | None = None


def read_config(run: RunDir) -> RunConfig:
    """Read ``config.json``, turning problems into :class:`ModelDirError`."""
    if not run.config.is_file():
        raise ModelDirError(f"{run.root}: not a run directory (config.json is missing)")
    try:
        return RunConfig.load(run.config)
    except ConfigError as e:
        raise ModelDirError(f"{run.config}: {e}") from e


def read_features(run: RunDir, cfg: RunConfig) -> tuple[FeatureSpec, ScalerParams, str]:
    """Read ``features.json`` and check it against ``cfg`` and this foxhunt's feature code.

    Returns:
        ``(spec, scaler, fingerprint)``.

    Raises:
        ModelDirError: Missing/corrupt file, newer format, or feature names that differ from
            what this version of foxhunt computes (the message names the first differences).
    """
    from foxhunt.data.features.table import FeatureSpec, feature_spec
    from foxhunt.data.scale.scaler import ScalerParams
    from foxhunt.errors import DataError

    rec = runtime.read_json(run.features, "features.json")
    if not isinstance(rec, dict) or rec.get("format") != FEATURES_FORMAT:
        raise ModelDirError(
            f"{run.features}: format {rec.get('format') if isinstance(rec, dict) else None!r} is "
            f"not {FEATURES_FORMAT} (written by another foxhunt version?)"
        )
    try:
        spec = FeatureSpec.from_dict(rec["spec"])
        scaler = ScalerParams.from_dict(rec["scaler"])
    except (KeyError, TypeError, ValueError, DataError) as e:
        raise ModelDirError(f"{run.features}: unreadable feature spec or scaler ({e})") from e
    current = feature_spec(cfg.model.horizon, cfg.data)
    for group in ("static", "historical", "known"):
        want, have = tuple(getattr(spec, group)), tuple(getattr(current, group))
        if want != have:
            missing = [n for n in want if n not in have][:3]
            extra = [n for n in have if n not in want][:3]
            raise ModelDirError(
                f"{run.features}: the model's {group} features do not match what foxhunt "
                f"{__version__} computes (model-only: {missing or 'none'}, "
                f"new: {extra or 'none'}, order differs: {not missing and not extra}); "
                f"model written by foxhunt {rec.get('foxhunt_version')}"
            )
    sizes = (len(spec.static), len(spec.historical), len(spec.known))
    m = cfg.model
    if sizes != (m.n_static, m.n_historical, m.n_known):
        raise ModelDirError(
            f"{run.features}: {sizes} static/historical/known features but config.json says "
            f"{(m.n_static, m.n_historical, m.n_known)}"
        )
    return spec, scaler, str(rec.get("fingerprint", ""))


def model_weights(run: RunDir) -> Path:
    """The weights to serve: the final checkpoint, else the best epoch, else the latest epoch.

    Raises:
        ModelDirError: If the run has no complete checkpoint.
    """
    from foxhunt.artifacts import checkpoints as ckpt

    final = ckpt.final_weights(run.checkpoints)
    if final is not None:
        return final
    best = ckpt.read_best(run.checkpoints)
    if best is not None:
        return ckpt.best_weights_path(run.checkpoints, int(best["epoch"]))
    epochs = ckpt.complete_epochs(run.checkpoints)
    if epochs:
        return ckpt.epoch_weights_path(run.checkpoints, epochs[-1])
    raise ModelDirError(f"{run.checkpoints}: no checkpoint (no epoch of training completed)")


def load_model_dir(path: Path, device: torch.device | str = "cpu") -> LoadedModel:
    """Load a run directory for inference without executing any code from it.

    Args:
        path: The run directory.
        device: Where to put the model.

    Returns:
        The loaded model (eval mode) and everything needed to turn bars into its inputs.

    Raises:
        ModelDirError: If anything is missing, corrupt or inconsistent.
    """
    from foxhunt.artifacts import checkpoints as ckpt
    from foxhunt.model.tft import TFT

    run = RunDir(Path(path))
    if not run.root.is_dir():
        raise ModelDirError(f"{run.root}: no such run directory")
    if (run.root / ENSEMBLE_FILE).is_file():  # evaluate/predict load these; nothing else can
        raise ModelDirError(
            f"{run.root}: a seed ensemble (ensemble.json), which this command cannot take; "
            f"give it one member's run directory, e.g. {run.root / 'members' / '0'}"
        )
    cfg = read_config(run)
    spec, scaler, fingerprint = read_features(run, cfg)
    weights = model_weights(run)
    state, sidecar = ckpt.load_weights(weights)
    model = TFT(cfg.model)
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as e:
        first = str(e).splitlines()[0] if str(e) else "shape or name mismatch"
        raise ModelDirError(f"{weights}: weights do not fit config.json ({first})") from e
    model.to(device).eval()
    instruments = read_instruments(run)
    return LoadedModel(run, cfg, spec, scaler, fingerprint, model, weights, sidecar, instruments)


def read_instruments(run: RunDir) -> dict[str, Instrument] | None:
    """The run's ``instruments.json``, or None when it has none."""
    from foxhunt.data.market.instruments import instruments_from_dict

    if not run.instruments.is_file():
        return None
    try:
        return instruments_from_dict(runtime.read_json(run.instruments, "instruments.json"))
    except DataError as e:
        raise ModelDirError(f"{run.instruments}: {e}") from e


def trained_symbols(run: RunDir) -> list[str] | None:
    """The symbols the model was trained on: ``run.json``'s ``symbols``, else the keys of
    ``instruments.json``; None when the directory records neither (a run from a feature
    store before run.json had them)."""
    if run.run_info.is_file():
        info = runtime.read_json(run.run_info, "run.json")
        symbols = info.get("symbols") if isinstance(info, dict) else None
        if isinstance(symbols, list) and symbols:
            return [str(s) for s in symbols]
    if run.instruments.is_file():
        table = runtime.read_json(run.instruments, "instruments.json")
        if isinstance(table, dict) and table:
            return sorted(str(s) for s in table)
    return None


def with_user_instruments(loaded: LoadedModel, table: Path | None) -> LoadedModel:
    """``loaded`` with the user's instrument table (``--instruments FILE``) added for symbols
    the run did not store; the stored ones win (they are what the model was trained with).

    A run without ``instruments.json`` (trained before calendars, or from a feature store)
    keeps none: its symbols follow ``globex``, as in training.
    """
    if table is None or loaded.instruments is None:
        return loaded
    from dataclasses import replace

    from foxhunt.data.market.instrument_table import load_instruments

    return replace(loaded, instruments={**load_instruments(table), **loaded.instruments})


def with_read_flags(loaded: LoadedModel, read: Mapping[str, Any] | None) -> LoadedModel:
    """``loaded`` reading bar files with the user's read flags (``--symbol``, ``--tz`` ...:
    ``DataConfig`` fields) over the ones the run stored: for later files from another source.
    Only how files are read changes; the model, features and scaler stay the run's."""
    if not read:
        return loaded
    from dataclasses import replace

    return replace(loaded, config=loaded.config.replace(data=dict(read)))
