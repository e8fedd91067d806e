"""cli/fastpath.py reads the commonest command lines without click: it must read each one it accepts
exactly as click does, and leave everything else to click."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import run_cli
from crashlens.cli import app, fastpath

TOKENS = [
    "a.log", "b.log", "-", "", "x y.log", "scan", "watch", "ci", "--", "--help", "-h", "--version",
    "--format", "--format=json", "--format=", "--format=JSON", "json", "jsonl", "terminal", "xml",
    "--signatures", "--signatures=dir", "--signatures=", "sigs/",
    "--audit", "--no-audit", "--audit=1", "--color", "--no-color", "--follow",
    "-j", "-j2", "-j0", "-jx", "-j=3", "--jobs", "--jobs=4", "--jobs=", "2", "007", "0", "+3", "-1", "1_0", "٣",
    "--bogus", "-x", "--form",
]


def click_params(args: list[str]) -> dict[str, object] | None:
    """The scan command's parameters as click parses them (through the default-scan group), or None
    where click refuses the line."""
    rest = args[1:] if args[:1] == ["scan"] else args
    try:
        ctx = app.scan.make_context("scan", list(rest))
    except (app.click.exceptions.UsageError, app.click.exceptions.Exit):
        return None
    return dict(ctx.params)


@pytest.fixture
def piped_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=7))
def test_every_line_the_fast_path_reads_is_read_as_click_reads_it(args):
    sys.stdin, saved = io.StringIO(""), sys.stdin
    try:
        plan = fastpath.parse(list(args))
    finally:
        sys.stdin = saved
    if plan is None:
        return
    if plan == fastpath.VERSION:
        assert args == ["--version"]
        return
    assert args[:1] not in (["watch"], ["ci"], ["--help"], ["--version"])
    assert plan == click_params(list(args))


@pytest.mark.parametrize("args", [
    ["x.log"],
    ["scan", "x.log", "y.log"],
    ["--format", "json", "x.log"],
    ["--format=jsonl", "--no-audit", "-j", "2", "x.log"],
    ["-j3", "--signatures", "mysigs", "--color", "-"],
])
def test_common_lines_take_the_fast_path(args, piped_stdin):
    plan = fastpath.parse(args)
    assert isinstance(plan, dict)
    assert plan == click_params(args)


@pytest.mark.parametrize("args", [
    ["--help"], ["scan", "--help"], ["watch", "x.log"], ["--", "-x.log"], ["--follow"], ["-j", "0", "x"],
    ["--format", "xml", "x"], ["--version", "x"], ["x", "--version"], ["--signatures"],
])
def test_the_rest_is_left_to_click(args, piped_stdin):
    assert fastpath.parse(args) is None


def test_no_file_on_a_terminal_is_left_to_click(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stdin", Tty())
    assert fastpath.parse(["--format", "json"]) is None  # click says "no log file given"
    assert isinstance(fastpath.parse(["--format", "json", "x.log"]), dict)


def test_it_knows_every_option_of_the_click_scan_command():
    # (The subcommands, group words and formats are one table in cli/__init__.py, read by both.)
    options = {opt for p in app.scan.params for opt in (*p.opts, *p.secondary_opts) if opt.startswith("-")}
    assert options == set(fastpath._FLAGS) | set(fastpath._VALUED)


def test_version_is_what_click_writes():
    fast = run_cli("--version")
    slow = subprocess.run([sys.executable, "-c", "from crashlens.cli.app import cli; cli(['--version'])"],
                          capture_output=True, check=False)
    assert fast.returncode == slow.returncode == 0
    assert fast.stdout == slow.stdout and fast.stdout.startswith(b"crashlens, version ")
