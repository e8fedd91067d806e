"""Which fixes remove a finding, per compile context (fullgraph or not), from the [[fix]] entries of the rules."""

from __future__ import annotations

from .._struct import dataclass
from .model import Finding
from .rules import Rules

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms of start-up)
if TYPE_CHECKING:
    from typing import Any

CONTEXTS = ("fullgraph", "non-fullgraph")


@dataclass(frozen=True, slots=True)
class FixNote:
    """A fix for one finding in one context; `removes` is all | this | none (none: tried, does not help)."""

    id: str
    context: str
    removes: str
    label: str
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "removes": self.removes, "label": self.label, "text": self.text}


def entry_function(entry: str) -> str:
    """`pkg.mod:Class.method` → `method`, the name a traceback would show."""
    return entry.rsplit(":", 1)[-1].rsplit(".", 1)[-1]


def fixes_for(finding: Finding, entry: str, rules: Rules) -> dict[str, list[FixNote]]:
    entry_name = entry_function(entry)
    notes: dict[str, list[FixNote]] = {context: [] for context in CONTEXTS}
    for fix in rules.fixes:
        if "*" not in fix.categories and finding.category not in fix.categories:
            continue
        if fix.scope == "helper" and finding.function == entry_name:
            continue
        if fix.needs_cache and not finding.via_cache:
            continue
        for context in CONTEXTS if fix.context == "both" else (fix.context,):
            if context not in notes:
                continue
            notes[context].append(
                FixNote(
                    id=fix.id,
                    context=context,
                    removes=fix.removes,
                    label=fix.label.format(entry=entry_name, function=finding.function),
                    text=fix.text.format(entry=entry_name, function=finding.function),
                )
            )
    return notes


def fixes_for_all(entry: str, rules: Rules) -> dict[str, list[FixNote]]:
    """The fixes that remove every finding of the audit at once, per context."""
    entry_name = entry_function(entry)
    out: dict[str, list[FixNote]] = {context: [] for context in CONTEXTS}
    for fix in rules.fixes:
        if fix.removes != "all":
            continue
        for context in CONTEXTS if fix.context == "both" else (fix.context,):
            out[context].append(
                FixNote(fix.id, context, fix.removes, fix.label.format(entry=entry_name, function=entry_name),
                        fix.text.format(entry=entry_name, function=entry_name))
            )
    return out
