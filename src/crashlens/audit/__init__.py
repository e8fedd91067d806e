"""Static audit of a library's call chain for every call torch._dynamo will reject (`crashlens audit`)."""

from __future__ import annotations

from .blockers import next_blockers
from .model import (
    AuditError,
    AuditReport,
    BadEntrySpec,
    ChainFrame,
    EntryNotFound,
    Finding,
    ModuleNotFound,
)
from .rules import load_rules, rules_path
from .runner import audit, default_search_paths, parse_entry

__all__ = [
    "AuditError",
    "AuditReport",
    "BadEntrySpec",
    "ChainFrame",
    "EntryNotFound",
    "Finding",
    "ModuleNotFound",
    "audit",
    "default_search_paths",
    "load_rules",
    "next_blockers",
    "parse_entry",
    "rules_path",
]
