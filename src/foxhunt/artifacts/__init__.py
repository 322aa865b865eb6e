"""Run directories: every file a run writes and reads (config, features, checkpoints, baselines, resume state)."""
