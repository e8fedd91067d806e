"""The JSON Schema of the crashlens/v1 output, shipped with the package (crashlens-v1.json)."""

from __future__ import annotations

import os

SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "crashlens-v1.json")


def schema_text() -> str:
    with open(SCHEMA_FILE, encoding="utf-8") as fh:
        return fh.read()
