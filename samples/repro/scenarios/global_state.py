"""Module-level state written by model code (stands in for a server's global_config)."""

last_batch_size = 0
