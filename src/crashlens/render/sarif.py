"""SARIF 2.1.0 for GitHub code scanning: catalog signatures as rules, crashes as results at repository paths."""

from __future__ import annotations

import re
from collections.abc import Mapping
from importlib import metadata
from typing import Any
from urllib.parse import quote

from .. import __version__
from ..catalog import Catalog, Signature
from ..cipaths import Location
from ..diagnose import render_template, short_path
from ..pipeline import ScanResult
from ..records import Diagnosis
from .markdown import clean

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "crashlensId/v1"
MAX_TAGS = 10  # code scanning shows 10 tags per rule (20 accepted)
MAX_TEXT = 8000


def _information_uri() -> str | None:
    """The project's home page from the installed metadata; SARIF only takes a real URI, so none is invented."""
    try:
        urls = metadata.metadata("crashlens").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("homepage", "home", "repository", "source") and url.strip():
            return str(url.strip())
    return None


def _precision(confidence: float) -> str:
    if confidence >= 0.9:
        return "very-high"
    if confidence >= 0.8:
        return "high"
    if confidence >= 0.6:
        return "medium"
    return "low"


_UNFILLED = re.compile(r"\{[a-z_][a-z0-9_.]*\}")


def _template(text: str) -> str:
    """Catalog prose with its {placeholders} read as prose (no crash is at hand in a rule's help)."""
    return _UNFILLED.sub("…", render_template(text, {})).strip()


def rule(sig: Signature) -> dict[str, Any]:
    title = _template(sig.title)
    summary = _template(sig.summary)
    why = _template(sig.why)
    titles = dict.fromkeys(f"[{f.kind}] {_template(f.title)}" for f in sorted(sig.fixes, key=lambda f: f.rank))
    fixes = [f"{n}. {t}" for n, t in enumerate(titles, 1)]
    text = summary + (f"\n\n{why}" if why else "") + ("\n\nFixes, best first:\n" + "\n".join(fixes) if fixes else "")
    md = f"**{title}**\n\n{summary}" + (f"\n\n{why}" if why else "")
    if fixes:
        md += "\n\n**Fixes, best first**\n\n" + "\n".join(fixes)
    tags = list(dict.fromkeys(["torch.compile", sig.family, *sig.tags]))[:MAX_TAGS]
    return {
        "id": sig.id,
        "name": sig.name[:255],
        "shortDescription": {"text": title[:1024]},
        "fullDescription": {"text": summary},
        "help": {"text": text, "markdown": md},
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": tags, "precision": _precision(sig.confidence), "problem.severity": "error"},
    }


def _fallback_rule(rule_id: str, d: Diagnosis) -> dict[str, Any]:
    return {
        "id": rule_id,
        "name": rule_id,
        "shortDescription": {"text": f"{d.family} crash without a catalog signature"},
        "fullDescription": {"text": "A crash crashlens recognised by its shape but not by a signature in the catalog."},
        "help": {"text": "See the crash message and the log line it points at.",
                 "markdown": "See the crash message and the log line it points at."},
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["torch.compile", d.family]},
    }


def _message(d: Diagnosis, loc: Location | None) -> str:
    # Code scanning shows the first sentence when space is short: the title goes first.
    parts = [d.title.rstrip(".") + "."]
    if d.exception:
        parts.append(f"{d.exception[0] or 'Error'}: {d.exception[1]}")
    if d.culprit is not None:
        # Outside the repository the culprit cannot be the location: name its library file:line here.
        parts.append(f"Culprit: {short_path(d.culprit.file)}:{d.culprit.line} in {d.culprit.function}")
    if loc is not None:
        parts.append(f"Log: {loc.log}")
    if d.fixes:
        parts.append(f"Fix: {d.fixes[0].title}")
    return "\n".join(clean(p, MAX_TEXT) for part in parts for p in part.splitlines())


def _physical(path: str, line: int) -> dict[str, Any]:
    return {"physicalLocation": {
        "artifactLocation": {"uri": quote(path, safe="/"), "uriBaseId": SRCROOT},
        "region": {"startLine": max(1, line)},
    }}


def document(result: ScanResult, locations: Mapping[str, Location], cat: Catalog) -> dict[str, Any]:
    rules = [rule(s) for s in sorted(cat.signatures, key=lambda s: s.id)]
    index = {r["id"]: i for i, r in enumerate(rules)}
    results: list[dict[str, Any]] = []
    unlocated: list[dict[str, Any]] = []
    for d in result.diagnoses:
        rule_id = d.signature if d.signature is not None and d.signature in index else f"crashlens-{d.family}"
        if rule_id not in index:
            index[rule_id] = len(rules)
            rules.append(_fallback_rule(rule_id, d))
        loc = locations.get(d.id)
        level = "error" if d.fatal else "warning"
        text = _message(d, loc)
        if loc is None or loc.path is None:
            # Code scanning rejects the whole file for one result without a location: report it beside the results.
            unlocated.append({
                "level": level,
                "message": {"text": text},
                "associatedRule": {"id": rule_id, "index": index[rule_id]},
                "properties": {"crashlensId": d.id},
            })
            continue
        res: dict[str, Any] = {
            "ruleId": rule_id,
            "ruleIndex": index[rule_id],
            "level": level,
            "message": {"text": text},
            "locations": [_physical(loc.path, loc.line)],
            "partialFingerprints": {FINGERPRINT_KEY: d.id},
            "properties": {"confidence": d.confidence, "fatal": d.fatal, "locationKind": loc.kind},
        }
        if loc.kind == "culprit" and loc.log_path is not None:
            rel = _physical(loc.log_path, loc.log_line)
            rel["id"] = 1
            rel["message"] = {"text": "log line where the traceback begins"}
            res["relatedLocations"] = [rel]
        results.append(res)
    driver: dict[str, Any] = {"name": "crashlens", "version": __version__, "semanticVersion": __version__}
    uri = _information_uri()
    if uri:
        driver["informationUri"] = uri
    driver["rules"] = rules
    invocation: dict[str, Any] = {"executionSuccessful": True}
    if unlocated:
        invocation["toolExecutionNotifications"] = unlocated
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": driver},
            "invocations": [invocation],
            "results": results,
            "columnKind": "unicodeCodePoints",
        }],
    }


def render(result: ScanResult, locations: Mapping[str, Location], cat: Catalog) -> str:
    from .json import dumps

    return dumps(document(result, locations, cat), indent=2) + "\n"
