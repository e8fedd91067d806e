"""Log text is untrusted: printed as text (no rich markup, no escape or OSC sequences), escaped in every output
format, and never used as a path to write to or a command to run."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from conftest import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from crashlens.catalog import load_catalog
from crashlens.frame import frame_line, strip_controls

SIG = "subprocess-thread-lock"
MARKUP = "[bold red]x[/] [link=http://evil.example]click[/link] :skull: [/]"
ESCAPES = ("\x1b]8;;http://evil.example\x07here\x1b]8;;\x07 \x1b[2J\x1b[H \x1b]0;pwned-title\x07 \x9b31m"
           " \x9d8;;http://evil.example\x9c \x1bP+q\x1b\\ \x07\x08\x7f \u202eevil\u202c \u2028")
# Anything a terminal would act on: ESC, C0/C1 controls other than tab/newline, bidi overrides, separators.
_DANGEROUS = re.compile(r"[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _fragment() -> str:
    sig = load_catalog().get(SIG)
    assert sig is not None
    return next(e.text for e in sig.examples if e.expect_match)


def _hostile_log(tmp_path: Path) -> Path:
    """The real fragment with markup and escape sequences in the message, the explanation and a source line."""
    text = _fragment()
    text = text.replace("Attempted to call function marked as skipped",
                        f"Attempted to call function marked as skipped {MARKUP} {ESCAPES}", 1)
    text = text.replace("rev = L.get_git_rev()", f"rev = L.get_git_rev()  # {MARKUP} {ESCAPES}", 1)
    log = tmp_path / "hostile.log"
    log.write_bytes(text.encode("utf-8"))
    return log


def _log_escapes(out: str) -> list[str]:
    """Escape sequences in output that did not come from crashlens's own colouring (SGR `ESC[...m`)."""
    own_sgr = re.compile(r"\x1b\[[0-9;]*m")
    rest = own_sgr.sub("", out)
    return [m.group() for m in re.finditer(r"\x1b.{0,12}|[\x07\x08\x7f-\x9f\u202a-\u202e\u2028]", rest)]


@pytest.mark.parametrize("color", ["--color", "--no-color"])
def test_terminal_prints_markup_as_text_and_drops_escapes(tmp_path, color):
    p = run_cli("--no-audit", color, str(_hostile_log(tmp_path)), env={"COLUMNS": "400"})
    assert p.returncode == 1, p.stderr
    out = p.stdout.decode()
    assert "[bold red]x[/]" in out and "[link=http://evil.example]click[/link]" in out
    assert ":skull:" in out  # no emoji substitution either
    assert _log_escapes(out) == []
    assert "pwned-title" not in out and "\x1b]" not in out


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_json_escapes_log_text(tmp_path, fmt):
    p = run_cli("--no-audit", "--format", fmt, str(_hostile_log(tmp_path)))
    assert p.returncode == 1, p.stderr
    raw = p.stdout.decode()
    assert not _DANGEROUS.search(raw) and "\x1b" not in raw
    docs = [json.loads(raw)] if fmt == "json" else [json.loads(ln) for ln in raw.splitlines()]
    blob = json.dumps(docs)
    assert "[bold red]x[/]" in blob  # kept, as text
    for d in docs:
        diags = d["diagnoses"] if fmt == "json" else [d["diagnosis"]]
        msg = diags[0]["exception"]["message"]
        assert MARKUP in msg and "\x1b" not in msg


def _ci(*args: str, env: dict[str, str] | None = None):
    if run_cli("ci", "--help").returncode != 0:
        pytest.skip("ci is not in this build")
    return run_cli("ci", *args, env=env)


@pytest.mark.parametrize("fmt", ["markdown", "github", "sarif", "json"])
def test_ci_formats_escape_log_text(tmp_path, fmt):
    log = _hostile_log(tmp_path)
    p = _ci(str(log), "--format", fmt, "--fail-on", "never")
    assert p.returncode == 0, p.stderr
    out = p.stdout.decode()
    assert "\x1b" not in out and not _DANGEROUS.search(out)
    if fmt in ("sarif", "json"):
        json.loads(out)


def test_github_workflow_commands_cannot_be_injected(tmp_path):
    text = _fragment().replace("Attempted to call function marked as skipped",
                               "x %0A::add-mask::secret ::set-env name=X::y ::error file=/etc/passwd::pwn", 1)
    log = tmp_path / "inject.log"
    log.write_text(text)
    p = _ci(str(log), "--format", "github", "--fail-on", "never")
    for line in p.stdout.decode().splitlines():
        assert not line.startswith(("::add-mask", "::set-env", "::error file=/etc/passwd")), line


# -- never a path to write to, never a command to run -----------------------------------------------------------


def _bait_log(tmp_path: Path) -> tuple[Path, list[Path]]:
    targets = [tmp_path / f"pwned{i}" for i in range(6)]
    text = _fragment()
    bait = (f"--output {targets[0]} -o {targets[1]} $(touch {targets[2]}) `touch {targets[3]}` ; touch {targets[4]}"
            f" | tee {targets[5]}")
    text = text.replace("Attempted to call function marked as skipped", bait, 1)
    text = text.replace('"/srv/dyn/lib_helpers.py"', f'"{targets[0]}"', 1)  # a culprit "file" to be tempted by
    text = text.replace("rev = L.get_git_rev()", f"os.system('touch {targets[2]}')", 1)
    log = tmp_path / "bait.log"
    log.write_text(text)
    return log, targets


def test_log_text_is_never_a_path_or_a_command(tmp_path):
    log, targets = _bait_log(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    runs = [run_cli("--no-audit", str(log)), run_cli("--format", "json", str(log)),
            run_cli("--format", "jsonl", str(log)), run_cli("--no-audit", "-", stdin=log.read_bytes())]
    if run_cli("ci", "--help").returncode == 0:
        for fmt in ("markdown", "github", "sarif", "junit", "gitlab", "json"):
            runs.append(run_cli("ci", str(log), "--format", fmt, "--fail-on", "never",
                                env={"GITHUB_STEP_SUMMARY": "", "GITHUB_ACTIONS": ""}))
    for p in runs:
        assert b"Traceback" not in p.stderr, p.stderr
    assert not any(t.exists() for t in targets)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_diagnosis_from_bait_still_reads_as_text(tmp_path):
    log, targets = _bait_log(tmp_path)
    p = run_cli("--format", "json", "--no-audit", str(log))
    doc = json.loads(p.stdout)
    assert f"$(touch {targets[2]})" in doc["diagnoses"][0]["exception"]["message"]


# -- the framing stage: one place neutralises, for every renderer -------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec=None), max_size=300))
def test_framed_text_never_carries_a_control_character(raw):
    line = frame_line("x.log", 1, raw.replace("\n", ""))
    assert not _DANGEROUS.search(line.text) and "\x1b" not in line.text
    assert line.rank is None or not _DANGEROUS.search(line.rank)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cf", "Zl", "Zp", "Cs")), max_size=200))
def test_plain_text_is_left_alone(text):
    assert strip_controls(text) == text


@pytest.mark.parametrize("seq,visible", [
    ("\x1b[31mred\x1b[0m", "red"),
    ("\x1b]8;;http://evil\x07link\x1b]8;;\x07", "link"),
    ("\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "link"),
    ("\x1b]0;title\x07after", "after"),
    ("a\x1b[2J\x1b[Hb", "ab"),
    ("a\x9b2Jb", "ab"),
    ("a\u202eb\u2066c", "abc"),
    ("tab\tkept", "tab\tkept"),
    ("\x1b]unterminated osc", ""),
])
def test_escape_sequences_are_removed_whole(seq, visible):
    assert strip_controls(seq) == visible


def test_prefix_parsing_survives_colour(tmp_path):
    """Neutralising keeps frame's parsing: a coloured SGLang prefix still yields its rank."""
    line = frame_line("x", 1, "\x1b[32m[2025-11-30 11:18:05 TP3]\x1b[0m Traceback (most recent call last):")
    assert line.rank == "TP3" and line.text == "Traceback (most recent call last):"

