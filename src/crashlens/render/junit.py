"""JUnit XML: one test case per distinct finding. A fatal crash fails its test case with the diagnosis as its
body; a non-fatal graph break (or warning) is a passing test case with the diagnosis in <system-out>, so the
report is red exactly when the exit code is (`ci --fail-on`)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping

from ..cipaths import Location
from ..pipeline import ScanResult
from ..records import Diagnosis
from .text import headline_rows, no_workflow_commands

# Characters XML 1.0 does not allow even as references; ElementTree would write them and the file would not parse.
_ILLEGAL_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
MAX_BODY = 64 * 1024


def xml_text(s: str, limit: int = MAX_BODY) -> str:
    s = no_workflow_commands(_ILLEGAL_XML.sub("", _ANSI.sub("", s)))
    return s if len(s) <= limit else s[: limit - 1] + "…"


def body(d: Diagnosis, loc: Location | None) -> str:
    out = [d.title, "", d.summary.strip(), ""]
    out += [f"{(label.capitalize() + ':') if label else '':<10}{value}" for label, value in headline_rows(d)]
    if d.callee:
        out.append(f"Callee:   {d.callee}")
    for occ in d.occurrences[:20]:
        out.append(f"Log:      {occ.source}:{occ.line}" + (f" (rank {occ.rank})" if occ.rank else ""))
    if len(d.occurrences) > 20:
        out.append(f"          … {len(d.occurrences) - 20} more occurrences")
    if loc is not None and loc.path is not None:
        out.append(f"Location: {loc.path}:{loc.line} ({loc.kind})")
    out.append(f"Match:    {d.signature or d.family} · {'fatal' if d.fatal else 'graph break'}"
               f" · confidence {d.confidence:.2f} · id {d.id}")
    if d.fixes:
        out += ["", "Fixes, best first:"]
        for f in d.fixes:
            out.append(f"  {f.rank}. [{f.kind}] {f.title}")
            out += [f"     {ln}" for ln in f.detail.splitlines()]
    for w in d.warnings:
        out += ["", f"! {w}"]
    if d.why.strip():
        out += ["", "Why:", d.why.strip()]
    return "\n".join(out) + "\n"


def failing(d: Diagnosis, fail_on: str = "fatal") -> bool:
    """Whether a finding fails its test case: the same rule as the exit code of `ci --fail-on`, except that
    `never` still marks a fatal crash (the job stays green; the report says what crashed)."""
    return d.fatal or fail_on == "any"


def document(result: ScanResult, locations: Mapping[str, Location], fail_on: str = "fatal") -> ET.Element:
    ds = result.diagnoses
    n_fail = sum(1 for d in ds if failing(d, fail_on))
    n_tests = str(max(1, len(ds)))
    root = ET.Element("testsuites", name="crashlens", tests=n_tests, failures=str(n_fail),
                      errors="0", skipped="0", time="0")
    suite = ET.SubElement(root, "testsuite", name="crashlens", tests=n_tests, failures=str(n_fail),
                          errors="0", skipped="0", time="0")
    props = ET.SubElement(suite, "properties")
    for name, lines in result.sources:
        ET.SubElement(props, "property", name="log", value=xml_text(f"{name} ({lines} lines)", 4096))
    if not ds:
        ET.SubElement(suite, "testcase", classname="crashlens", name="no torch.compile crash in the logs", time="0")
    for d in ds:
        loc = locations.get(d.id)
        # The id keeps names unique: GitLab ignores a test case whose name repeats.
        attrs = {"classname": f"crashlens.{d.signature or d.family}", "name": xml_text(f"{d.title} [{d.id}]", 500),
                 "time": "0"}
        if loc is not None and loc.path is not None:
            attrs["file"] = xml_text(loc.path, 4096)
            attrs["line"] = str(loc.line)
        case = ET.SubElement(suite, "testcase", attrs)
        case_props = ET.SubElement(case, "properties")
        for name, value in (("severity", "fatal" if d.fatal else "graph break"), ("id", d.id),
                            ("signature", d.signature or d.family), ("confidence", f"{d.confidence:.2f}")):
            ET.SubElement(case_props, "property", name=name, value=xml_text(value, 500))
        if failing(d, fail_on):
            msg = d.title + (f": {d.exception[0] or 'error'}: {d.exception[1]}" if d.exception else "")
            failure = ET.SubElement(case, "failure", message=xml_text(" ".join(msg.split()), 1000),
                                    type=xml_text(d.signature or d.family, 200))
            failure.text = xml_text(body(d, loc))
        else:  # a finding, not a failure: the test passes and its output carries the diagnosis
            ET.SubElement(case, "system-out").text = xml_text(body(d, loc))
    return root


def render(result: ScanResult, locations: Mapping[str, Location], fail_on: str = "fatal") -> str:
    root = document(result, locations, fail_on)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
