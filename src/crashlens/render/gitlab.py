"""GitLab Code Quality report: one finding per distinct crash, at a repository path, with a unique fingerprint."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from ..cipaths import Location
from ..diagnose import short_path
from ..pipeline import ScanResult
from ..records import Diagnosis
from .markdown import clean

MAX_DESCRIPTION = 2000


def fingerprint(d: Diagnosis, loc: Location) -> str:
    """GitLab merges findings with equal fingerprints: the crash id plus where it is reported keeps them apart."""
    key = f"crashlens|{d.id}|{loc.path}|{loc.line}"
    return hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()


def description(d: Diagnosis, loc: Location) -> str:
    parts = [d.title]
    if d.exception:
        parts.append(f"{d.exception[0] or 'error'}: {d.exception[1]}")
    if d.culprit is not None and loc.kind != "culprit":
        parts.append(f"culprit {short_path(d.culprit.file)}:{d.culprit.line} in {d.culprit.function}")
    if d.fixes:
        parts.append(f"fix: {d.fixes[0].title}")
    return clean(" · ".join(" ".join(p.split()) for p in parts), MAX_DESCRIPTION)


def findings(result: ScanResult, locations: Mapping[str, Location]) -> list[dict[str, Any]]:
    """Crashes located inside the repository; GitLab drops a finding without a path, so the others are left out."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for d in result.diagnoses:
        loc = locations.get(d.id)
        if loc is None or loc.path is None:
            continue
        fp = fingerprint(d, loc)
        if fp in seen:
            continue
        seen.add(fp)
        out.append({
            "type": "issue",
            "check_name": d.signature or f"crashlens-{d.family}",
            "description": description(d, loc),
            "categories": ["Bug Risk"],
            "fingerprint": fp,
            "severity": "critical" if d.fatal else "minor",
            "location": {"path": loc.path, "lines": {"begin": max(1, loc.line)}},
        })
    return out


def render(result: ScanResult, locations: Mapping[str, Location]) -> str:
    from .json import dumps

    return dumps(findings(result, locations), indent=2) + "\n"
