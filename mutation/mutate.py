"""Mutation testing of the core modules: ``make mutate`` (docs/testing.md, issue 18).

For each core module, mutmut (pinned in the ``dev`` extra) mutates that one file and runs only
the fast test files that cover it: each module runs in its own scratch copy of ``src/`` and
``tests/`` under ``runs/mutate/<name>/`` with a generated ``[tool.mutmut]`` section, so the map
below is the whole configuration and the modules are whatever the working tree holds today.

    python mutation/mutate.py                 # every module, then the score table
    python mutation/mutate.py quantile vsn    # some modules
    python mutation/mutate.py --list          # the module -> tests map
    python mutation/mutate.py --report        # the table again, from the last runs
    python mutation/mutate.py --again quantile  # re-run only the survivors, after adding tests

Score = killed / (killed + survived + no tests): timeouts and crashes count as killed (the
mutant broke the code), mutants no selected test reaches count as survivors.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import re
import shutil
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "runs" / "mutate"
VERDICTS = ROOT / "mutation" / "verdicts"
"""Each module's last verdicts, one ``mutant: verdict`` line each, committed: the scores add up
across sessions and machines (``--report``, ``--missing``, ``--again`` read them)."""


@dataclass(frozen=True)
class Target:
    """One module to mutate and the test files (or test ids) that must kill its mutants."""

    source: str
    tests: tuple[str, ...]
    skip: tuple[str, ...] = ()
    """Test ids left out: minutes-long end-to-end checks that `make test` runs anyway."""
    marks: str = "not slow and not gpu"
    """The pytest ``-m`` selection; a module whose tests are all ``slow`` (they share the
    trained demo run) needs ``not gpu`` or no test reaches its mutants."""


FORECASTER_TESTS = (
    "tests/infer/test_forecaster.py",
    "tests/infer/test_forecaster_mutants.py",
    "tests/infer/test_forecaster_state.py",
    "tests/infer/incremental/test_graphs.py",  # the engine choice and the graph cache
)
"""The forecaster's tests (every one `slow`: the shared trained demo run)."""

FORECASTER_MINUTES_LONG = tuple(
    f"tests/infer/test_forecaster.py::test_streaming_{name}"
    for name in (
        "one_bar_at_a_time_equals_batch_predict",
        "equals_batch_after_the_tail_is_trimmed",
        "equals_batch_on_real_index_bars",
    )
)
"""The streaming-equals-batch checks of the forecaster: minutes each, `make test` runs them."""


TARGETS: dict[str, Target] = {
    "features": Target(
        "src/foxhunt/data/features/table.py",
        (
            "tests/data/features/test_table_mutants.py",
            "tests/data/features/test_table.py",
            # the input choices compute_features carries out (feature set, covariates, target)
            "tests/data/features/test_sets.py",
            "tests/data/features/test_covariates.py",
            "tests/data/features/test_targets.py",
        ),
        # reads docs/features.md, which the scratch copy does not hold (mutmut's stats pass
        # failed on it); it checks the docs, not the module's behaviour
        skip=("tests/data/features/test_table.py::test_docs_list_every_feature_family",),
    ),
    "observed": Target(
        "src/foxhunt/data/features/observed.py",
        ("tests/data/features/test_observed_mutants.py", "tests/data/features/test_table.py"),
        skip=(
            "tests/data/features/test_table.py::test_docs_list_every_feature_family",
        ),  # as above
        # the formula check of all 210 features is `slow` (2 s on a loaded machine): without
        # it no mapped test compares a feature's values (205 of 578 mutants survived)
        marks="not gpu",
    ),
    "windows": Target(
        "src/foxhunt/data/windows/dataset.py",
        (
            "tests/data/windows/test_dataset.py",
            "tests/data/windows/test_dataset_gather_mutants.py",
            "tests/data/windows/test_dataset_calendar_subsets.py",
            # from_arrays against the constructor, and a table without rows
            "tests/data/windows/test_by_symbol.py",
            "tests/data/windows/test_split_arrays.py",
        ),
    ),
    "row_arrays": Target(
        "src/foxhunt/data/windows/row_arrays.py",
        ("tests/data/windows/test_dataset.py", "tests/data/windows/test_dataset_mutants.py"),
    ),
    "splits": Target(
        "src/foxhunt/data/windows/splits.py",
        (
            "tests/data/windows/test_splits.py",
            "tests/data/windows/test_splits_mutants.py",
            "tests/data/windows/test_split_arrays.py",  # the same warning, split per symbol
        ),
    ),
    "scaling": Target(
        "src/foxhunt/data/scale/scaler.py",
        ("tests/data/scale/test_scaler.py", "tests/data/scale/test_scaler_mutants.py"),
    ),
    "quantile": Target(
        "src/foxhunt/model/quantile.py",
        ("tests/model/test_quantile.py", "tests/model/test_quantile_mutants.py"),
    ),
    "vsn": Target(
        "src/foxhunt/model/vsn.py",
        (
            "tests/model/test_vsn.py",
            "tests/model/test_vsn_mutants.py",
            "tests/model/test_vsn_reparametrisation.py",
        ),
    ),
    "checkpoints": Target(
        "src/foxhunt/artifacts/checkpoints.py",
        ("tests/artifacts/test_checkpoints.py", "tests/artifacts/test_checkpoints_mutants.py"),
    ),
    "resume": Target(
        "src/foxhunt/artifacts/resume.py",
        (
            "tests/artifacts/test_checkpoints.py",
            "tests/artifacts/test_resume_mutants.py",
            "tests/artifacts/test_resume_survivors.py",
        ),
    ),
    "estimate": Target(
        "src/foxhunt/memory/estimate.py",
        (
            "tests/memory/test_estimate.py",
            "tests/memory/test_estimate_mutants.py",
            "tests/memory/test_cuda_libraries.py",  # the CUDA library buffers in the peaks
            "tests/memory/test_saved_exact.py",
        ),
        # the batch-8 step measures the same relation in half the time
        skip=(
            "tests/memory/test_estimate.py::test_training_step_tensor_peak_matches_the_estimate[32]",
        ),
    ),
    "budget": Target(
        "src/foxhunt/memory/budget.py",
        (
            "tests/memory/test_budget.py",
            "tests/memory/test_budget_mutants.py",
            "tests/memory/test_cuda_libraries.py",  # CUDA validation keeps training's buffers
        ),
    ),
    # QuantileScores moved from infer/evaluate.py to infer/scores.py; the evaluate tests that
    # train and score the demo run (seconds per mutant) are left out, `make test` runs them.
    "row_forward": Target(
        "src/foxhunt/infer/row_forward.py",
        ("tests/infer/test_row_forward.py",),  # the plain forward is the reference
    ),
    "by_symbol": Target(
        "src/foxhunt/data/windows/by_symbol.py",
        ("tests/data/windows/test_by_symbol.py", "tests/data/windows/test_split_arrays.py"),
    ),
    "split_arrays": Target(
        "src/foxhunt/data/windows/split_arrays.py",
        ("tests/data/windows/test_split_arrays.py",),  # the whole-table path is the reference
    ),
    "row_files": Target(
        "src/foxhunt/data/windows/row_files.py",
        (
            "tests/data/windows/test_row_files.py",
            "tests/data/windows/test_row_files_mutants.py",
            "tests/data/windows/test_split_arrays.py",  # files and memory give the same arrays
            "tests/data/windows/test_by_symbol.py",
        ),
    ),
    "scores": Target(
        "src/foxhunt/infer/scores.py",
        (
            "tests/infer/test_scores.py",
            "tests/infer/test_evaluate.py",
            "tests/infer/test_scores_mutants.py",
        ),
        skip=tuple(
            f"tests/infer/test_evaluate.py::test_{name}"
            for name in (
                "verdict_follows_the_significance_test",
                "a_run_from_before_the_classical_baselines_still_evaluates",
            )
        ),
    ),
    "significance": Target(
        "src/foxhunt/infer/significance.py",
        (
            "tests/infer/test_significance.py",
            "tests/infer/test_significance_audit.py",
            "tests/infer/test_significance_mutants.py",
        ),
    ),
    "calibration_choice": Target(
        "src/foxhunt/train/calibration/choice.py",
        (
            "tests/train/calibration/test_choice.py",
            "tests/train/calibration/test_choice_audit.py",
            "tests/train/calibration/test_choice_mutants.py",
        ),
    ),
    "forecaster": Target(
        "src/foxhunt/infer/forecaster.py",
        (*FORECASTER_TESTS, "tests/infer/test_forecaster_survivors.py"),
        marks="not gpu",  # every forecaster test is slow (the shared trained demo run)
        skip=FORECASTER_MINUTES_LONG,
    ),
    # the live state and the compiled graphs are reached through the forecaster (every test of
    # which is slow): with the default maps (their folder's fast tests) 527 of stream's 602
    # mutants and 280 of graphs' 364 were "no tests"
    **{
        f"infer.incremental.{name}": Target(
            f"src/foxhunt/infer/incremental/{name}.py",
            (*FORECASTER_TESTS, "tests/infer/incremental/test_selected.py", *extra),
            marks="not gpu",
            skip=FORECASTER_MINUTES_LONG,
        )
        for name, extra in (
            # the live state at its own level (fast, no trained run)
            ("stream", ("tests/infer/incremental/test_stream_survivors.py",)),
            ("graphs", ("tests/infer/incremental/test_graphs_survivors.py",)),
        )
    },
    "lock": Target(
        "src/foxhunt/artifacts/lock.py",
        (
            "tests/artifacts/test_lock.py",
            "tests/artifacts/test_lock_mutants.py",
            "tests/train/test_resolve.py",  # the run directory's owner, through run_lock
        ),
    ),
    "csv_dialect": Target(
        "src/foxhunt/data/read/csv_dialect.py",
        (
            "tests/data/read/test_csv_dialect_audit.py",
            "tests/data/read/test_csv_dialect_mutants.py",
            "tests/data/read/test_csv_dialect_survivors.py",
            "tests/data/read/test_csv_dialect_third_pass.py",
            "tests/data/read/test_vendor_csv.py",
            # CSV files read end to end: the dialect is what they go through first
            "tests/data/read/test_bars.py",
            "tests/data/read/test_files.py",
            "tests/data/read/test_vendor_files.py",
            "tests/data/read/test_row_count.py",
            "tests/data/read/test_time_axis.py",
            # vendors' exports (headerless digit clocks), encodings (UTF-16, Windows-1252, gzip)
            # and damaged files: session 37's dialect code, reached by none of the above
            "tests/data/read/test_vendor_exports.py",
            "tests/data/read/test_vendor_quirks.py",
            "tests/data/read/test_encoding.py",
            "tests/data/read/test_damaged_files.py",
            # bzip2/xz/zstd text, decompressed in memory by scan_csv_text
            "tests/data/read/test_compressed.py",
        ),
    ),
    # reached only through the readers (file_read.py splits a file of many contracts)
    "data.market.contracts": Target(
        "src/foxhunt/data/market/contracts.py",
        (
            "tests/data/read/test_vendor_csv.py",
            "tests/data/read/test_vendor_quirks.py",
            "tests/data/read/test_dbn.py",
            "tests/data/read/test_databento_csv.py",  # spreads beside outright contracts
        ),
    ),
    # moved out of the pipeline (torch-free, for data inspect): reached through its tests
    "data.windows.needs": Target(
        "src/foxhunt/data/windows/needs.py",
        (
            "tests/data/test_pipeline_mutants.py",
            "tests/data/read/test_inspection_mutants.py",  # each preset's bars, exactly
            "tests/infer/test_backtest.py",
        ),
    ),
    "data.market.calendar_fit": Target(
        "src/foxhunt/data/market/calendar_fit.py",
        (
            "tests/data/market/test_calendar_fit.py",
            "tests/data/market/test_calendar_fit_survivors.py",
            "tests/data/market/test_extended_hours.py",
            "tests/data/market/test_rule_moves.py",  # round_the_clock
            "tests/data/market/test_zone_fit.py",
            "tests/data/read/test_naive_guess.py",  # zone_fit's broker clock
        ),
    ),
    # which symbols' bars decide their calendar, and resolve_bars
    "data.market.bars_market": Target(
        "src/foxhunt/data/market/bars_market.py",
        (
            "tests/data/market/test_calendar_fit.py",
            "tests/data/market/test_calendar_fit_survivors.py",
            "tests/data/market/test_extended_hours.py",
            "tests/data/market/test_instruments_survivors.py",
            "tests/data/read/test_time_axis.py",
            "tests/data/read/test_naive_guess.py",
            "tests/data/read/test_vendor_names.py",
            "tests/data/market/test_rule_moves.py",  # FX week, 24x7, crypto roots
            "tests/data/market/test_index_moves.py",  # an index's future or CFD
        ),
    ),
    "instruments": Target(
        "src/foxhunt/data/market/instruments.py",
        (
            "tests/data/market/test_instruments.py",
            "tests/data/market/test_instruments_audit.py",
            "tests/data/market/test_instrument_table.py",
            "tests/data/market/test_instruments_mutants.py",
            "tests/data/market/test_instruments_survivors.py",
            "tests/data/features/test_static.py",  # the static features of each instrument
            "tests/data/read/test_vendor_files.py",  # symbols resolved from vendor files
            "tests/data/read/test_vendor_names.py",  # AAPL.US, CL.US, OKX's BTC-USDT-SWAP
            "tests/data/market/test_rule_moves.py",  # on_calendar's classes and ticks
            "tests/data/market/test_index_moves.py",  # on_calendar's currencies
        ),
    ),
    "plausibility": Target(
        "src/foxhunt/data/read/plausibility.py",
        (
            "tests/data/read/test_plausibility.py",
            "tests/data/read/test_plausibility_audit.py",
            "tests/data/read/test_plausibility_mutants.py",
        ),
    ),
    "calendar_decoder": Target(
        "src/foxhunt/data/features/calendar_decoder.py",
        (
            "tests/data/features/test_calendar_decoder_audit.py",
            "tests/data/features/test_calendar_decoder_mutants.py",
            "tests/data/windows/test_dataset.py",  # the windows whose decoder rows it computes
        ),
    ),
    # the target scale every forecast is standardised by (issue 26), and its bars' variance
    "target_scale": Target(
        "src/foxhunt/data/scale/target.py",
        (
            "tests/data/scale/test_target.py",
            "tests/data/scale/test_target_anchor.py",
            "tests/data/scale/test_target_range.py",
            "tests/data/scale/test_target_reversion.py",
            "tests/data/scale/test_target_season.py",
            "tests/data/scale/test_target_mutants.py",
            "tests/data/scale/test_choice_scoring.py",  # TargetScale.parts and scale_of
        ),
    ),
    # the training-split search: the season tests (slow-marked, ~4 s together) are its only
    # route into fit_season and the cross-fitted branch
    "data.scale.choice": Target(
        "src/foxhunt/data/scale/choice.py",
        (
            "tests/data/scale/test_choice.py",
            "tests/data/scale/test_choice_scoring.py",
            "tests/data/scale/test_target_anchor.py",
            "tests/data/scale/test_target_range.py",
            "tests/data/scale/test_target_reversion.py",
            "tests/data/scale/test_target_season.py",
        ),
        marks="not gpu",
    ),
    "volatility": Target(
        "src/foxhunt/data/scale/volatility.py",
        (
            "tests/data/scale/test_volatility.py",
            "tests/data/scale/test_volatility_mutants.py",
            "tests/data/scale/test_target.py",
        ),
    ),
    "preparation": Target(
        "src/foxhunt/memory/preparation.py", ("tests/memory/test_preparation.py",)
    ),
    "head_init": Target("src/foxhunt/train/head_init.py", ("tests/train/test_head_init.py",)),
    # what decides how long a run trains and on which windows
    "schedule": Target(
        "src/foxhunt/train/optimizer/schedule.py", ("tests/train/optimizer/test_schedule.py",)
    ),
    "deadline": Target("src/foxhunt/train/deadline.py", ("tests/train/test_deadline.py",)),
    "sampling": Target("src/foxhunt/train/sampling.py", ("tests/train/test_sampling.py",)),
    "averaging": Target("src/foxhunt/train/averaging.py", ("tests/train/test_averaging.py",)),
    "loop_state": Target("src/foxhunt/train/loop_state.py", ("tests/train/test_loop_state.py",)),
    "units": Target("src/foxhunt/memory/units.py", ("tests/memory/test_units.py",)),
    # the network's composition: the model tests and the fast callers of its parts (the rest
    # of the default map trains networks, minutes per mutant)
    "model.tft": Target(
        "src/foxhunt/model/tft.py",
        (
            "tests/model/test_tft.py",
            "tests/model/test_tft_mutants.py",
            "tests/model/test_recompute.py",
            "tests/model/test_fixed_location.py",
            "tests/model/test_batch.py",
            "tests/model/test_summary.py",
            "tests/infer/test_row_forward.py",
            "tests/quantize/test_model.py",
            "tests/train/test_head_init.py",
        ),
    ),
    "infer_quantiles": Target("src/foxhunt/infer/quantiles.py", ("tests/infer/test_quantiles.py",)),
    "empirical": Target(
        "src/foxhunt/baselines/empirical.py", ("tests/baselines/test_empirical.py",)
    ),
    "adamw": Target(
        "src/foxhunt/train/optimizer/adamw.py", ("tests/train/optimizer/test_adamw.py",)
    ),
    # the follower's end-to-end tests are `slow` (they share the trained demo run) but take
    # seconds, and only they reach its strict mode and restarts
    "follow": Target(
        "src/foxhunt/infer/follow.py",
        (
            "tests/infer/test_follow_state.py",
            "tests/infer/test_follow.py",
            "tests/infer/test_follow_audit.py",
            "tests/infer/test_follow_survivors.py",
        ),
        marks="not gpu",
    ),
    "follow_state": Target(
        "src/foxhunt/infer/follow_state.py",
        (
            "tests/infer/test_follow_state.py",
            "tests/infer/test_follow.py",
            "tests/infer/test_follow_audit.py",
        ),
        marks="not gpu",
    ),
    "data.store.write": Target(
        "src/foxhunt/data/store/write.py",
        (
            "tests/data/store/test_write.py",
            "tests/data/store/test_store.py",
            "tests/data/store/test_store_mutants.py",
        ),
        # re-runs that keep, recompute and drop shards are `slow` (a second or two each)
        marks="not gpu",
    ),
    # every test that runs the quantize command is `slow` (it quantizes the trained demo run):
    # with the default marks no test reached a mutant and all were scored "no tests"
    "quantize.recipe": Target(
        "src/foxhunt/quantize/recipe.py",
        (
            "tests/quantize/test_recipe.py",
            "tests/quantize/test_quantize.py",
            "tests/infer/test_export.py",
        ),
        marks="not gpu",
    ),
    # every test that writes or loads a quantised directory quantises the trained demo run
    # (`slow`): 207 of 485 mutants survived without them (session 36's first run); the
    # quantize folder's tests only (the forecaster's and the ensembles' would run for minutes
    # on every mutant of the loader)
    "quantize.model": Target(
        "src/foxhunt/quantize/model.py",
        tuple(
            f"tests/quantize/test_{name}.py"
            for name in (
                "model_mutants",
                "model",
                "quantize",
                "recipe",
                "bench",
                "layers",
                "layers_units",
                "tensors",
            )
        ),
        marks="not gpu",
    ),
    # the follower's tests (test_follow*.py) poll the file for seconds: a mutant that stalls
    # the reader made them run minutes each (session 36 stopped the run); the reader's own
    "infer.feed": Target(
        "src/foxhunt/infer/feed.py",
        ("tests/infer/test_feed.py", "tests/infer/test_feed_mutants.py"),
    ),
    # the preparing child's tests are `slow` (each prepares demo bars in a child process): with
    # the default marks 240 of 279 mutants were "no tests"; the subprocess tests kill a parent.
    # The child's own functions are called in this process by test_prepare_mutants.py
    "train.prepare": Target(
        "src/foxhunt/train/prepare.py",
        ("tests/train/test_prepare.py", "tests/train/test_prepare_mutants.py"),
        skip=(
            "tests/train/test_prepare.py::"
            "test_the_training_process_never_imports_data_preparation_or_the_compiler",
            "tests/train/test_prepare.py::test_a_killed_parent_leaves_no_child_running_and_no_file",
        ),
        marks="not gpu",
    ),
    # the service's tests serve the trained demo run (`slow`): with the default marks only the
    # bad-request and Arrow tests reached it; the SIGTERM test runs `foxhunt serve` in a child
    "infer.service": Target(
        "src/foxhunt/infer/service.py",
        ("tests/infer/test_service.py", "tests/infer/test_service_mutants.py"),
        skip=("tests/infer/test_service.py::test_foxhunt_serve_saves_its_state_on_sigterm",),
        marks="not gpu",
    ),
    "quantize.bench": Target(
        "src/foxhunt/quantize/bench.py",
        ("tests/quantize/test_bench.py", "tests/quantize/test_quantize.py"),
        marks="not gpu",
    ),
    # the notebook API's forecaster is reached by tests/test_api.py (every test `slow`: the
    # trained demo run); the default map (the api folder's tests) reached none of its 189
    "api.forecaster": Target(
        "src/foxhunt/api/forecaster.py",
        (
            "tests/api/test_forecaster_mutants.py",
            "tests/test_api.py",
            "tests/api/test_frames.py",
            "tests/api/test_read_bars_options.py",
        ),
        marks="not gpu",
    ),
    # Each of these is reached mostly by tests of the trained demo run (`slow`; under `make
    # mutate` the run is trained once and copied: FOXHUNT_TEST_DEMO_RUN_CACHE) or by
    # trainings of a few steps; the default maps (their folder's fast tests) left them unscored.
    # Their own test files, the mutants tests that reach them, and `not gpu`:
    "infer.export": Target(
        "src/foxhunt/infer/export.py",
        ("tests/infer/test_export.py", "tests/infer/test_export_mutants.py"),
        marks="not gpu",
    ),
    "infer.predict": Target(
        "src/foxhunt/infer/predict.py",
        (
            "tests/infer/test_predict.py",
            "tests/infer/test_predict_mutants.py",
            "tests/infer/test_bar_interval.py",
            "tests/infer/test_forecaster_mutants.py",
            "tests/api/test_forecaster_mutants.py",
        ),
        marks="not gpu",
    ),
    "infer.evaluate": Target(
        "src/foxhunt/infer/evaluate.py",
        (
            "tests/infer/test_evaluate.py",
            "tests/infer/test_evaluate_mutants.py",
            "tests/infer/test_bar_interval.py",
            "tests/api/test_forecaster_mutants.py",
        ),
        marks="not gpu",
    ),
    "infer.backtest": Target(
        "src/foxhunt/infer/backtest.py",
        (
            "tests/infer/test_backtest.py",
            "tests/infer/test_backtest_ensemble.py",
            "tests/infer/test_backtest_plot.py",
            "tests/infer/test_backtest_mutants.py",
        ),
        marks="not gpu",
    ),
    "train.ensemble": Target(
        "src/foxhunt/train/ensemble.py",
        (
            "tests/train/test_ensemble.py",
            "tests/train/test_ensemble_mutants.py",
            "tests/commands/test_train_tune_command_mutants.py",
            "tests/api/test_forecaster_mutants.py",
        ),
        marks="not gpu",
    ),
    "train.tune": Target(
        "src/foxhunt/train/tune.py",
        (
            "tests/train/test_tune.py",
            "tests/train/test_tune_mutants.py",
            "tests/commands/test_tune.py",
            "tests/commands/test_train_tune_command_mutants.py",
        ),
        marks="not gpu",
    ),
    "classical": Target(
        "src/foxhunt/baselines/classical.py",
        (
            "tests/baselines/test_classical_mutants.py",
            "tests/baselines/test_classical.py",
            "tests/baselines/test_vol_paths.py",
        ),
    ),
}

SRC = ROOT / "src" / "foxhunt"
TESTS = ROOT / "tests"


def module_name(source: Path) -> str:
    """``src/foxhunt/data/read/vendors.py`` -> ``data.read.vendors`` (the default map's names)."""
    return ".".join(source.relative_to(SRC).with_suffix("").parts)


def _imports(text: str, dotted: str) -> bool:
    """Whether a test file's text imports ``foxhunt.<dotted>`` (or names it from its package)."""
    return f"foxhunt.{dotted}" in _imported(text)


_IMPORT_LINE = re.compile(r"^\s*(from|import)\s+(foxhunt(?:\.\w+)*)\b", re.MULTILINE)
_FROM_LINE = re.compile(r"^\s*from\s+(foxhunt(?:\.\w+)*)\s+import\s+(\([^)]*\)|.*$)", re.MULTILINE)


@functools.cache
def _imported(text: str) -> frozenset[str]:
    """The dotted names a test file's text reaches: each module it imports from or imports, with
    its packages (``foxhunt.data.read.bars`` reaches ``foxhunt.data.read``), and each name it
    imports from a package (``from foxhunt.data.read import bars`` reaches
    ``foxhunt.data.read.bars``). Parsed once per file: the map asks it of every module (130
    modules x 320 files of regular expressions took 4.5 s a map)."""
    names: set[str] = set()
    for match in _IMPORT_LINE.finditer(text):
        parts = match.group(2).split(".")
        names.update(".".join(parts[:end]) for end in range(1, len(parts) + 1))
    for match in _FROM_LINE.finditer(text):
        names.update(f"{match.group(1)}.{word}" for word in re.findall(r"\w+", match.group(2)))
    return frozenset(names)


@functools.cache
def _test_texts() -> dict[Path, str]:
    return {path: path.read_text(encoding="utf-8") for path in sorted(TESTS.rglob("test_*.py"))}


HEAP_PROBES = (
    "tests/memory/test_allocator.py::test_a_large_block_is_mapped_and_its_memory_returns_on_free",
    "tests/memory/test_allocator.py::test_inference_heap_keeps_freed_heap_memory_inside_and_returns_it_after",
)
"""Left out of every default map but ``memory.allocator``'s: they read glibc's heap in a fresh
interpreter that imports the scratch tree (and inherits mutmut's environment). With ``config``
mutated the tuned 8 MiB block measured 0 mapped bytes there, though the same tests pass in
``memory.allocator``'s scratch tree and in the repository: the clean run failed and nothing was
scored. Not traced further; they test the allocator, not the modules whose maps import it."""


def default_target(source: Path) -> Target:
    """The tests of a module no entry of :data:`TARGETS` names: the test files that mirror it
    (``tests/<package path>/test_<stem>*.py``), every test file that imports it, and every test
    file of its folder (the readers are reached through ``read_bars``, the commands through the
    CLI).

    mutmut's stats pass then keeps, for each mutant, only the tests that reach its function, so a
    wide list costs one pass over it, not one per mutant.
    """
    dotted = module_name(source)
    relative = source.relative_to(SRC)
    if relative.stem == "__init__":  # a package's own code: the tests that import from it
        package = "foxhunt" + "".join(f".{part}" for part in relative.parent.parts)
        pattern = re.compile(
            rf"^\s*(from\s+{re.escape(package)}\s+import|import\s+{re.escape(package)}$)", re.M
        )
        found = {path for path, text in _test_texts().items() if pattern.search(text)}
    else:
        found = set((TESTS / relative.parent).glob(f"test_{relative.stem}*.py"))
        found |= {path for path, text in _test_texts().items() if _imports(text, dotted)}
    # and its folder's tests: the modules of a package are mostly reached through its entry
    # points (the readers through read_bars, the commands through the CLI); for a module no
    # test imports, also the package's own test file (tests/test_api.py for api/)
    found |= set((TESTS / relative.parent).glob("test_*.py"))
    if not found and relative.parent.parts:
        found |= set((TESTS / relative.parent.parent).glob(f"test_{relative.parent.name}*.py"))
    # the architecture checks read the source files' text (sizes, imports), which mutmut's
    # trampolines rewrite: a mutated module is hundreds of lines over the size limit, so the
    # clean run failed and nothing was scored (train_config)
    found.discard(TESTS / "test_architecture.py")
    tests = tuple(sorted(str(path.relative_to(ROOT)) for path in found))
    probes = () if dotted == "memory.allocator" else HEAP_PROBES
    skip = tuple(t for t in probes if t.split("::")[0] in tests)
    return Target(str(source.relative_to(ROOT)), tests, skip=skip)


SLOW_REACHED: dict[str, str] = {
    # every test of the kept selected rows runs the trained demo run's forecaster (`slow`):
    # with the default marks 427 of 509 mutants were "no tests"
    "infer.incremental.selected": "not gpu",
    # the report's tests that write a whole report run the trained demo run: 589 of 1,010
    # mutants survived without them (session 35, not recorded)
    "train.reporting.report": "not gpu",
}
"""Modules with the default map whose tests are all ``slow``: their ``-m`` selection."""


def all_targets() -> dict[str, Target]:
    """Every module under ``src/foxhunt``: the hand-made entries of :data:`TARGETS` first, then
    the rest under their dotted names with :func:`default_target`'s tests."""
    mapped = {target.source for target in TARGETS.values()}
    targets = dict(TARGETS)
    for source in sorted(SRC.rglob("*.py")):
        relative = str(source.relative_to(ROOT))
        if relative in mapped:
            continue
        if not re.search(r"^\s*(async\s+)?def ", source.read_text(encoding="utf-8"), re.M):
            continue  # re-exports or constants only: mutmut mutates inside functions only
        name = module_name(source)
        target = default_target(source)
        if name in SLOW_REACHED:
            target = dataclasses.replace(target, marks=SLOW_REACHED[name])
        targets[name] = target
    return targets


KILLED = {"killed", "timeout", "segfault", "caught by type check", "suspicious"}
SURVIVED = {"survived", "no tests"}
RESULT_LINE = re.compile(r"^\s+(\S+): (.+)$")


STATS = "mutmut-stats.json"
"""mutmut's map of tests to the functions they reach, in ``mutants/``: rebuilt every run."""

ALSO_COPY_FOLDERS = ("docs",)
ALSO_COPY_FILES = ("README.md", "Makefile")
"""What tests read besides src/ and tests/ (the docs-match-the-code tests: a feature family
named in docs/features.md, the README's commands): copied into the scratch tree and, through
mutmut's ``also_copy``, into its ``mutants/`` copy, or those tests fail the clean run and
mutmut scores nothing ("failed to collect stats")."""


def _mutmut_section(target: Target, tests: tuple[str, ...]) -> str:
    def toml_list(items: tuple[str, ...] | list[str]) -> str:
        return "[" + ", ".join(f'"{item}"' for item in items) + "]"

    deselect = [arg for test in target.skip for arg in ("--deselect", test)]

    return (
        "\n[tool.mutmut]\n"
        'source_paths = ["src"]\n'
        f"also_copy = {toml_list([*ALSO_COPY_FOLDERS, *ALSO_COPY_FILES])}\n"
        f"only_mutate = {toml_list([target.source])}\n"
        f"pytest_add_cli_args_test_selection = {toml_list(tests)}\n"
        "pytest_add_cli_args = "
        + toml_list(["-p", "no:cacheprovider", "-q", "-m", target.marks] + deselect)
        + "\n"
        # torch is not fork-safe once it has run: fork each mutant from a clean server.
        'process_isolation = "forkserver"\n'
        # log lines: what they say is not behaviour (docs/testing.md, "Mutation testing")
        "do_not_mutate_patterns = ['^\\s*(log|logger)\\.(debug|info|warning|error|exception)\\(']\n"
        "use_git_change_detection = false\n"
        "timeout_multiplier = 10.0\n"
        # mutmut's limit is CPU seconds of the whole forked test session, collection and
        # imports included: a mutant reached only by millisecond tests got SIGXCPU on the loaded
        # machine (a false kill), so the constant leaves room for them
        "timeout_constant = 60.0\n"
    )


def _prepare(name: str, target: Target, fresh: bool = True) -> Path:
    """A scratch copy of the tree with the mutmut section for this one module.

    ``fresh=False`` keeps mutmut's cache (``mutants/``: the mutants and their verdicts) and only
    refreshes the copies of ``src/`` and ``tests/``: mutmut regenerates the mutants of functions
    that changed and re-checks only those (and any not checked yet, after an interrupted run).
    """
    work = WORK / name
    if fresh:
        shutil.rmtree(work, ignore_errors=True)
    # mutmut's stats (which tests reach which function) are only added to for *new* tests: a
    # function that is new or changed keeps the tests that reached it before, or only the new
    # ones, and its mutants run against too few tests (a default argument of a new helper
    # "survived" the test that kills it by hand). One full stats pass per run; the verdicts
    # of unchanged functions stay cached (mutmut keys them by the function's hash).
    (work / "mutants" / STATS).unlink(missing_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis", "*.egg-info")
    for folder in ("src", "tests", *ALSO_COPY_FOLDERS):
        shutil.rmtree(work / folder, ignore_errors=True)
        shutil.copytree(ROOT / folder, work / folder, ignore=ignore)
    for file in ALSO_COPY_FILES:
        shutil.copy2(ROOT / file, work / file)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    pyproject = pyproject.split("\n[tool.mutmut]")[0]
    (work / "pyproject.toml").write_text(pyproject + _section(target), encoding="utf-8")
    return work


def _section(target: Target) -> str:
    """The mutmut section of ``target``: its map (the test files that exist) and options."""
    tests = tuple(t for t in target.tests if (ROOT / t.split("::")[0]).exists())
    return _mutmut_section(target, tests)


def _map_changed(name: str, target: Target) -> bool:
    """Whether the module's scratch tree was last run with another map or options.

    mutmut keeps a cached verdict for every mutant of an unchanged function, whatever tests
    gave it: under a new map, "no tests" from the old one stood (``infer.feed``'s 92 parquet
    mutants, after session 37 gave it a map of the reader's own tests)."""
    saved = WORK / name / "pyproject.toml"
    if not saved.is_file():
        return False
    old = saved.read_text(encoding="utf-8").partition("\n[tool.mutmut]")[2]
    return old != _section(target).partition("\n[tool.mutmut]")[2]


def _mutmut(work: Path, *args: str) -> str:
    """Run one mutmut command in ``work``; return its output (also kept in mutmut.log)."""
    command = [sys.executable, "-m", "mutmut", *args]
    # the trained demo run of tests/conftest.py, trained once (unmutated) and copied per mutant
    # one torch/OpenMP thread per mutant process: the children already fill the cores
    env = {
        **os.environ,
        "FOXHUNT_TEST_DEMO_RUN_CACHE": str(WORK / "demo-run-cache"),
        "OMP_NUM_THREADS": "1",
    }
    done = subprocess.run(command, cwd=work, env=env, text=True, capture_output=True, check=False)
    with (work / "mutmut.log").open("a", encoding="utf-8") as log:
        log.write(f"$ mutmut {' '.join(args)}\n{done.stdout}{done.stderr}\n")
    return done.stdout


def _results(work: Path) -> dict[str, str]:
    status: dict[str, str] = {}
    for line in _mutmut(work, "results", "--all", "true").splitlines():
        match = RESULT_LINE.match(line)
        if match:
            status[match.group(1)] = match.group(2).strip()
    return status


def run_one(
    name: str, target: Target, children: int, again: bool = False, fresh: bool = False
) -> dict[str, str]:
    """Mutate one module; ``again``: re-run only its last survivors (after adding tests)."""
    if not target.tests:  # mutmut would run the whole suite for every mutant
        print(f"== {name}: no test file imports {target.source}; not run", flush=True)
        return {}
    if _map_changed(name, target) and not fresh:
        print(f"== {name}: its map changed since the cached run: every mutant again", flush=True)
        again, fresh = False, True
    previous = _load(name) if again else {}
    survivors = [key for key, value in previous.items() if value in SURVIVED]
    if again and not survivors:
        print(f"== {name}: no survivors to re-run", flush=True)
        return previous
    work = _prepare(name, target, fresh=fresh and not again)
    print(f"== {name}: {target.source} against {', '.join(target.tests)}", flush=True)
    log = work / "mutmut.log"
    start = log.stat().st_size if log.exists() else 0
    _mutmut(work, "run", "--max-children", str(children), *survivors)
    with log.open("rb") as f:  # this run's output, stdout and stderr
        f.seek(start)
        ran = f.read().decode("utf-8", "replace")
    if STATS_FAILED in ran:  # its verdicts are the last run's: recording them would hide it
        print(
            f"   {name}: NOT SCORED: the map's tests fail on the unmutated tree ({STATS_FAILED}); "
            f"run them in {work} to see which",
            flush=True,
        )
        return previous
    latest = _results(work)
    if NO_TEST_CASE in ran:  # mutmut stopped before running any: every mutant is untested
        latest = {key: "no tests" if value == "not checked" else value
                  for key, value in latest.items()}  # fmt: skip
    mutated = work / "mutants" / target.source
    if not latest and mutated.is_file() and "__mutmut_" not in mutated.read_text("utf-8"):
        # mutmut skips decorated functions (a @contextmanager): nothing here it can mutate
        VERDICTS.mkdir(exist_ok=True)
        (VERDICTS / f"{name}.txt").write_text(NOTHING_TO_MUTATE + "\n", encoding="utf-8")
        print(f"   no mutants: {NOTHING_TO_MUTATE}", flush=True)
        return {}
    if again:  # the other verdicts stand (mutmut lists mutants it did not re-run as not checked)
        latest = {**previous, **{key: latest[key] for key in survivors if key in latest}}
    return _record(work, latest)


def _record(work: Path, status: dict[str, str]) -> dict[str, str]:
    """Write ``results.txt`` and ``survivors.diff`` for one module's scratch copy, and the
    verdicts to :data:`VERDICTS`."""
    text = "".join(f"{key}: {value}\n" for key, value in sorted(status.items()))
    (work / "results.txt").write_text(text, encoding="utf-8")
    if any(value in KILLED | SURVIVED for value in status.values()):  # not a failed run
        VERDICTS.mkdir(exist_ok=True)
        (VERDICTS / f"{work.name}.txt").write_text(text, encoding="utf-8")
    survivors = [key for key, value in sorted(status.items()) if value in SURVIVED]
    # one `mutmut show` process per survivor (each imports mutmut): a few at once
    with ThreadPoolExecutor(max_workers=4) as pool:
        diffs = list(pool.map(lambda key: _mutmut(work, "show", key), survivors))
    (work / "survivors.diff").write_text("".join(diffs), encoding="utf-8")
    print(f"   {len(status)} mutants, {len(survivors)} survived: {work / 'survivors.diff'}")
    return status


STATS_FAILED = "failed to collect stats"
"""mutmut's words when the map's tests fail on the unmutated tree: it then runs no mutant and
``results`` lists the previous run's verdicts, which session 36 first recorded as this run's
(a new test that failed in the scratch tree left quantize.recipe's 70 survivors standing)."""

NO_TEST_CASE = "could not find any test case for any mutant"
"""mutmut's words when no selected test reaches any mutant (it then runs none and lists each as
"not checked"): those mutants count as untested, not as unscored."""

NOTHING_TO_MUTATE = "# mutmut generated no mutant of this module (its functions are decorated)"
"""The verdict file of a module mutmut ran and could not mutate: scored, with nothing to count."""


def _load(name: str) -> dict[str, str]:
    path = VERDICTS / f"{name}.txt"
    if not path.exists():
        return {}
    lines = path.read_text(encoding="utf-8").splitlines()
    pairs = (line.rsplit(": ", 1) for line in lines if not line.startswith("#"))
    return {key: value for key, value in pairs}


def _scored(name: str) -> bool:
    """Whether ``name`` has verdicts (or was run and had nothing to mutate)."""
    return (VERDICTS / f"{name}.txt").exists()


def report(names: list[str]) -> float:
    """Print the per-module and overall score; return the overall score in percent."""
    total_killed = total_counted = 0
    print(
        f"{'module':<12} {'mutants':>7} {'checked':>7} {'killed':>7} {'survived':>8} "
        f"{'no tests':>8} {'score':>7}"
    )
    not_run = []
    for name in names:
        status = _load(name)
        if not _scored(name):
            not_run.append(name)
            continue
        if not status:
            print(f"{name:<12} {0:>7}  (mutmut generated no mutant: decorated functions only)")
            continue
        killed = sum(value in KILLED for value in status.values())
        survived = sum(value == "survived" for value in status.values())
        untested = sum(value == "no tests" for value in status.values())
        counted = killed + survived + untested  # "not checked" (interrupted runs) is left out
        total_killed += killed
        total_counted += counted
        score = 100.0 * killed / counted if counted else 100.0
        print(
            f"{name:<12} {len(status):>7} {counted:>7} {killed:>7} {survived:>8} {untested:>8} "
            f"{score:>6.1f}%"
        )
        for key, value in sorted(status.items()):
            if value in SURVIVED:
                print(f"    {value:<9} {key}")
    overall = 100.0 * total_killed / total_counted if total_counted else 100.0
    print(
        f"{'overall':<12} {'':>7} {total_counted:>7} {total_killed:>7} {'':>8} {'':>8} "
        f"{overall:>6.1f}%"
    )
    if not_run:
        print(f"{len(names) - len(not_run)} of {len(names)} modules scored; not run yet:")
        print(
            textwrap.fill(
                " ".join(not_run), width=100, initial_indent="    ", subsequent_indent="    "
            )
        )
    return overall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "modules",
        nargs="*",
        help="module names from --list (default: every module under src/foxhunt)",
    )
    parser.add_argument(
        "--missing", action="store_true", help="only the modules with no verdicts yet"
    )
    parser.add_argument("--children", type=int, default=2, help="parallel mutants (default 2)")
    parser.add_argument("--list", action="store_true", help="print the module -> tests map")
    parser.add_argument("--report", action="store_true", help="only print the last scores")
    parser.add_argument(
        "--collect",
        action="store_true",
        help="record the verdicts of an interrupted run (unchecked mutants are not scored)",
    )
    parser.add_argument(
        "--fresh", action="store_true", help="forget mutmut's cache: every mutant again"
    )
    parser.add_argument(
        "--again", action="store_true", help="re-run only the last run's survivors (new tests)"
    )
    args = parser.parse_args(argv)
    targets = all_targets()
    unknown = [name for name in args.modules if name not in targets]
    if unknown:
        print(f"error: unknown module {unknown[0]!r}; --list names them", file=sys.stderr)
        return 2
    names = args.modules or list(targets)
    if args.missing:
        names = [name for name in names if not _scored(name)]
    if args.list:
        for name in names:
            tests = " ".join(targets[name].tests) or "(no test file imports it)"
            print(f"{name:<12} {targets[name].source}  <-  {tests}")
        return 0
    if args.collect:
        for name in names:
            if (WORK / name / "mutants").is_dir():
                _record(WORK / name, _results(WORK / name))
    elif not args.report:
        for name in names:
            run_one(name, targets[name], args.children, again=args.again, fresh=args.fresh)
    report(names)
    return 0


if __name__ == "__main__":
    sys.exit(main())
