"""The feature store: per-symbol feature shards on disk and their memory-mapped window cache."""
