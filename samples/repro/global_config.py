"""Process-wide mutable settings (a top-level module, like sglang/global_config.py)."""

last_batch_size = 0
enable_flashinfer_fp4 = True
