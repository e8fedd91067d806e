"""Per-kernel tuning table, read from the package's JSON file on every lookup."""

import json
import os

_TABLE = os.path.join(os.path.dirname(__file__), "tuning.json")


def tuned_block_size(kernel: str, hidden: int) -> int:
    with open(_TABLE) as f:  # expect: fakelib-open
        table = json.load(f)
    return int(table.get(kernel, {}).get(str(hidden), 128))
