"""`crashlens schema`: print the JSON Schema of the crashlens/v1 output (shipped in the package)."""

from __future__ import annotations

import sys

import click

from ..schema import schema_text


@click.command("schema")
def schema() -> None:
    """Print the JSON Schema (draft 2020-12) that every crashlens/v1 JSON output follows."""
    sys.stdout.write(schema_text())
