"""Records that flow out of an audit: findings, their call chains, and the errors a user can cause."""

from __future__ import annotations

from .._struct import dataclass, field

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms of start-up)
if TYPE_CHECKING:
    from typing import Any


@dataclass(frozen=True, slots=True)
class ChainFrame:
    """One call site on the way from the entry function to a finding, like a `from user code:` frame."""

    file: str
    line: int
    function: str

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "function": self.function}


@dataclass(frozen=True, slots=True)
class Finding:
    """A call that dynamo will reject, where tracing from the entry function would meet it."""

    file: str
    line: int
    function: str
    call: str
    category: str
    chain: tuple[ChainFrame, ...]
    reason: str = ""
    # path relative to the search root (site-packages), stable across machines: `flashinfer/jit/core.py`
    relpath: str = ""
    # whether the chain passes through a functools.cache / lru_cache wrapper (dynamo traces through it)
    via_cache: bool = False
    # every line of the enclosing function where the same call is written; `line` is the first
    lines: tuple[int, ...] = ()

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.file, self.line, self.call)

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "function": self.function,
            "call": self.call,
            "category": self.category,
            "chain": [frame.to_json() for frame in self.chain],
            "reason": self.reason,
            "relpath": self.relpath,
            "via_cache": self.via_cache,
            "lines": list(self.lines or (self.line,)),
        }


@dataclass(frozen=True, slots=True)
class AuditReport:
    """Everything `crashlens audit` found for one entry point, in tracing order."""

    entry: str
    entry_file: str
    findings: tuple[Finding, ...]
    functions_walked: int = 0
    truncated_at_depth: bool = False
    notes: tuple[str, ...] = field(default=())


class AuditError(Exception):
    """An audit the user asked for cannot run; the message is one line meant for the user."""


class BadEntrySpec(AuditError):
    """The entry is not written as PACKAGE.MODULE:FUNCTION."""


class ModuleNotFound(AuditError):
    """The entry's module has no Python source in the search paths."""


class EntryNotFound(AuditError):
    """The module exists but defines no such function."""
