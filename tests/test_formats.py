"""What the reports say and how they are shaped: JUnit for graph breaks, the format an --output file names,
words (counts, crashes vs findings, mistyped commands), `explain`'s placeholders, shell completion.
Every log here is a recording in samples/ (real tracebacks; framing written by samples/frame.py)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import SAMPLES, assert_one_line_error, crashlens_exe, run_cli
from crashlens.cli import main

GRAPH_BREAKS = SAMPLES / "sglang-torch-compile-graph-breaks.log"  # TORCH_LOGS=graph_breaks, no crash
FATAL = SAMPLES / "sglang-1rank-pcg-fp4.log"  # one fatal Unsupported under SGLang's piecewise CUDA graph
IMPORT_ERROR = SAMPLES / "sglang-import-error.log"


def _run_in(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "_CRASHLENS"))}
    e.update({"NO_COLOR": "1", "COLUMNS": "120", **(env or {})})
    return subprocess.run([*crashlens_exe(), *args], cwd=cwd, capture_output=True, timeout=60, env=e,
                          stdin=subprocess.DEVNULL)


# --- JUnit: a graph break is a finding, not a failure -------------------------------------------------------------


def _junit(tmp_path: Path, *logs: Path, fail_on: str = "fatal") -> tuple[int, ET.Element]:
    out = tmp_path / "report.xml"
    p = _run_in(tmp_path, "ci", *map(str, logs), "-f", "junit", "-o", str(out), "--fail-on", fail_on)
    return p.returncode, ET.fromstring(out.read_bytes())


def test_junit_graph_breaks_are_passing_cases_while_the_exit_code_is_0(tmp_path: Path) -> None:
    rc, root = _junit(tmp_path, GRAPH_BREAKS)
    cases = root.findall(".//testcase")
    assert rc == 0
    assert len(cases) >= 2, "each graph break is still one test case (the count stays honest)"
    assert root.get("tests") == str(len(cases)) and root.get("failures") == "0"
    for case in cases:
        assert case.find("failure") is None and case.find("error") is None
        out = case.findtext("system-out") or ""
        assert "Fixes, best first" in out and "graph break" in out
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        assert props["severity"] == "graph break"


def test_junit_fails_exactly_the_fatal_crash(tmp_path: Path) -> None:
    rc, root = _junit(tmp_path, FATAL, GRAPH_BREAKS)
    cases = root.findall(".//testcase")
    failed = [c for c in cases if c.find("failure") is not None]
    assert rc == 1
    assert len(failed) == 1 and "subprocess" in failed[0].get("name", "")
    assert root.get("failures") == "1" and root.get("tests") == str(len(cases)) and len(cases) > 1


def test_junit_follows_fail_on_any(tmp_path: Path) -> None:
    rc, root = _junit(tmp_path, GRAPH_BREAKS, fail_on="any")
    cases = root.findall(".//testcase")
    assert rc == 1 and all(c.find("failure") is not None for c in cases)
    assert root.get("failures") == str(len(cases))


# --- ci --output FILE with no --format: the extension names the format, or the run is refused --------------------


@pytest.mark.parametrize(("name", "check"), [
    ("crashlens.sarif", lambda t: json.loads(t)["version"] == "2.1.0"),
    ("x.sarif.json", lambda t: json.loads(t)["version"] == "2.1.0"),
    ("report.xml", lambda t: ET.fromstring(t).tag == "testsuites"),
    ("crashlens.json", lambda t: json.loads(t)["schema"] == "crashlens/v1"),
    ("summary.md", lambda t: t.startswith("## crashlens: 1 crash in 1 log")),
    ("page.html", lambda t: t.startswith("<!doctype html>")),
])
def test_ci_output_extension_names_the_format(tmp_path: Path, name: str, check) -> None:
    out = tmp_path / name
    p = _run_in(tmp_path, "ci", str(FATAL), "-o", str(out))
    assert p.returncode == 1, p.stderr
    assert check(out.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["summary.txt", "report"])
def test_ci_output_whose_name_names_no_format_is_refused(tmp_path: Path, name: str) -> None:
    out = tmp_path / name
    p = _run_in(tmp_path, "ci", str(FATAL), "-o", str(out))
    assert_one_line_error(p, 2, f"--output {out}", "--format")
    assert not out.exists()


def test_ci_explicit_format_still_wins_over_the_extension(tmp_path: Path) -> None:
    out = tmp_path / "summary.txt"
    p = _run_in(tmp_path, "ci", str(FATAL), "-f", "markdown", "-o", str(out))
    assert p.returncode == 1 and out.read_text(encoding="utf-8").startswith("## crashlens:")


# --- words --------------------------------------------------------------------------------------------------------


def test_one_crash_is_singular_and_graph_breaks_are_not_crashes(tmp_path: Path) -> None:
    one = _run_in(tmp_path, str(FATAL)).stdout.decode().splitlines()[0]
    assert one == "crashlens: 1 crash in 223 lines"
    breaks = _run_in(tmp_path, str(GRAPH_BREAKS)).stdout.decode().splitlines()[0]
    assert re.fullmatch(r"crashlens: no crash, \d+ non-fatal graph breaks in \d+ lines", breaks), breaks
    both = _run_in(tmp_path, "ci", str(FATAL), str(GRAPH_BREAKS), "-f", "markdown").stdout.decode()
    assert re.match(r"## crashlens: 1 crash and \d+ non-fatal graph breaks in 2 logs, \d+ lines\n", both), both
    for text in (one, breaks, both):
        assert "(es)" not in text and "(s)" not in text and "distinct crash" not in text


def test_no_crash_line_has_the_crashlens_prefix(tmp_path: Path) -> None:
    p = _run_in(tmp_path, str(SAMPLES / "sglang-healthy.log"))
    assert p.returncode == 0 and p.stdout.decode() == "crashlens: no crashes found in 27 lines\n"


@pytest.mark.parametrize(("word", "hint"), [
    ("help", "`crashlens --help`"),
    ("wach", "`crashlens watch`"),
    ("sigantures", "`crashlens signatures`"),
    ("expalin", "`crashlens explain`"),
])
def test_a_mistyped_command_is_no_such_command_with_the_nearest(tmp_path: Path, word: str, hint: str) -> None:
    for args in ([word], [word, "server.log"], [word, "--follow"]):
        err = assert_one_line_error(_run_in(tmp_path, *args), 2, f"{word}: no such command", hint)
        assert "no such file" not in err


def test_a_file_named_like_a_command_is_still_scanned(tmp_path: Path) -> None:
    shutil.copy(SAMPLES / "sglang-healthy.log", tmp_path / "help")
    p = _run_in(tmp_path, "help")
    assert p.returncode == 0 and b"no crashes found" in p.stdout
    # and a missing file with a file's name is a missing file
    assert_one_line_error(_run_in(tmp_path, "server.log"), 2, "server.log: no such file")


def test_an_import_error_does_not_talk_about_graph_breaks(tmp_path: Path) -> None:
    p = _run_in(tmp_path, str(IMPORT_ERROR))
    out = p.stdout.decode()
    assert p.returncode == 1 and "import" in out.lower()
    assert "cannot break" not in out and "fullgraph" not in out
    md = _run_in(tmp_path, "ci", str(IMPORT_ERROR), "-f", "markdown").stdout.decode()
    assert "fullgraph" not in md and "graph breaks allowed" not in md


# --- explain: placeholders are said in words ----------------------------------------------------------------------


def test_explain_shows_no_raw_placeholders() -> None:
    p = run_cli("explain", "subprocess-thread-lock")
    out = p.stdout.decode()
    assert p.returncode == 0
    assert not re.search(r"\{[a-z_][a-z0-9_.]*\}", out), re.findall(r"\{[a-z_.]+\}", out)
    legend = out.split("Filled in from each crash", 1)[1]
    for name in ("entry.qualified", "caller.where", "callee"):
        assert f"<{name}>" in out
        line = next(ln for ln in legend.splitlines() if f"<{name}>" in ln)
        assert len(line.split(f"<{name}>", 1)[1].strip()) > 10, line  # says what it stands for


def test_every_placeholder_in_the_catalog_is_explained() -> None:
    from crashlens.catalog import get_catalog
    from crashlens.render.explain import PLACEHOLDERS, placeholders

    cat = get_catalog()
    used = set(placeholders(*(t for s in cat.signatures for f in s.fixes for t in (f.title, f.detail))))
    extracted = {n for s in cat.signatures for p in s.extract for n in p.groupindex}
    unexplained = used - set(PLACEHOLDERS) - extracted - {u for u in used if u.startswith("version.")}
    assert not unexplained


# --- shell completion ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("shell", "needle"), [
    ("bash", "complete -o nosort -F _crashlens_completion crashlens"),
    ("zsh", "#compdef crashlens"),
    ("fish", "complete --no-files --command crashlens"),
])
def test_completion_prints_the_script_without_reading_stdin(tmp_path: Path, shell: str, needle: str) -> None:
    e = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    e["_CRASHLENS_COMPLETE"] = f"{shell}_source"
    # stdin is a pipe that stays open: a command that reads it (today's fast path did) would hang
    p = subprocess.Popen(crashlens_exe(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=e, cwd=tmp_path)
    try:
        out, err = p.communicate(timeout=20)
    finally:
        p.kill()
    assert p.returncode == 0, err
    assert needle in out.decode()


def _complete(shell: str, words: str, cword: int, tmp_path: Path) -> list[str]:
    p = _run_in(tmp_path, env={"_CRASHLENS_COMPLETE": f"{shell}_complete", "COMP_WORDS": words,
                               "COMP_CWORD": str(cword)})
    assert p.returncode == 0, p.stderr
    return p.stdout.decode().split()


def test_completion_offers_commands_options_and_values(tmp_path: Path) -> None:
    assert "plain,watch" in _complete("bash", "crashlens wa", 1, tmp_path)
    assert {"plain,scan", "plain,ci", "plain,signatures"} <= set(_complete("bash", "crashlens ", 1, tmp_path))
    assert "plain,--format" in _complete("bash", "crashlens ci logs/ --fo", 3, tmp_path)
    assert "plain,sarif" in _complete("bash", "crashlens ci logs/ --format ", 4, tmp_path)
    assert _complete("bash", "crashlens samp", 1, tmp_path) == ["file,samp"]  # a log name: the shell completes it
    assert "watch" in _complete("zsh", "crashlens wa", 1, tmp_path)
    for cmd in ("watch", "ci"):  # their log arguments complete as file names too
        assert _complete("bash", f"crashlens {cmd} samp", 2, tmp_path) == ["file,samp"]
    assert _complete("bash", "crashlens explain subprocess-thr", 2, tmp_path) == ["plain,subprocess-thread-lock"]


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completion_works_in_bash(tmp_path: Path) -> None:
    exe = Path(crashlens_exe()[0])
    if exe.name != "crashlens":
        pytest.skip("the crashlens console script is not installed")
    script = (
        'eval "$(_CRASHLENS_COMPLETE=bash_source crashlens)"\n'
        'COMP_WORDS=(crashlens wa); COMP_CWORD=1; COMPREPLY=(); _crashlens_completion crashlens; '
        'echo "1:${COMPREPLY[*]}"\n'
        'COMP_WORDS=(crashlens ci x.log --fail-on ""); COMP_CWORD=4; COMPREPLY=(); _crashlens_completion crashlens;'
        ' echo "2:${COMPREPLY[*]}"\n')
    env = {**os.environ, "PATH": f"{exe.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    p = subprocess.run(["bash", "--norc", "-c", script], capture_output=True, timeout=60, env=env, cwd=tmp_path,
                       stdin=subprocess.DEVNULL)
    lines = dict(ln.split(":", 1) for ln in p.stdout.decode().splitlines() if ln[:2] in ("1:", "2:"))
    assert lines["1"] == "watch", p.stderr
    assert lines["2"].split() == ["fatal", "any", "never"]


def test_an_unknown_completion_instruction_is_one_line(tmp_path: Path) -> None:
    p = _run_in(tmp_path, env={"_CRASHLENS_COMPLETE": "tcsh_source"})
    assert_one_line_error(p, 2, "_CRASHLENS_COMPLETE=tcsh_source", "bash_source")


# --- Markdown: code examples are code, @ is not a mention, | does not end a table cell -----------------------------


def _markdown_tokens(text: str) -> list:
    markdown_it = pytest.importorskip("markdown_it")  # installed with rich
    md = markdown_it.MarkdownIt("commonmark").enable("table")
    return md.parse(text)


def _walk(tokens: list):
    for t in tokens:
        yield t
        yield from _walk(t.children or [])


def test_markdown_code_examples_are_fenced_code_blocks(tmp_path: Path) -> None:
    text = _run_in(tmp_path, "ci", str(FATAL), "-f", "markdown").stdout.decode()
    fences = [t for t in _markdown_tokens(text) if t.type == "fence"]
    assert fences, "the custom-op example is a code block"
    code = fences[0].content
    assert fences[0].info == "python"
    # the example as written: decorator, signature and fake, one per line, nothing escaped
    assert '@torch.library.custom_op("mylib::fp4_quantize", mutates_args=())\n' in code
    assert "\ndef fp4_quantize_op(x: torch.Tensor" in code and "\n@fp4_quantize_op.register_fake\n" in code
    assert "\\_" not in code and "&lt;" not in code


def test_markdown_makes_no_mentions(tmp_path: Path) -> None:
    # the catalog's prose says @torch.compiler.disable; log text can say @someone
    log = tmp_path / "at.log"
    log.write_text(FATAL.read_text(encoding="utf-8").replace(
        "Attempted to call function marked as skipped", "Attempted to call function marked as skipped cc @oncall", 1),
        encoding="utf-8")
    texts = []
    for path in (log, GRAPH_BREAKS):
        md = _run_in(tmp_path, "ci", str(path), "-f", "markdown").stdout.decode()
        assert "@torch.compiler.disable" in md or "@torch.library" in md
        texts += [t.content for t in _walk(_markdown_tokens(md)) if t.type == "text"]
    mentions = [t for t in texts if re.search(r"(?<![\w@])@\w", t)]
    assert not mentions  # every @word is inside code, where GitHub and GitLab make no mention


def test_markdown_table_cells_hold_a_pipe(tmp_path: Path) -> None:
    log = tmp_path / "server|rank0.log"  # the Where cell names the log (it lies in the repository root)
    shutil.copy(FATAL, log)
    md = _run_in(tmp_path, "ci", str(log), "-f", "markdown").stdout.decode()
    tokens = _markdown_tokens(md)
    rows, row = [], None
    for t in tokens:
        if t.type == "tr_open":
            row = []
        elif t.type == "inline" and row is not None:
            row.append(t.content)
        elif t.type == "tr_close":
            rows.append(row)
            row = None
    assert rows and all(len(r) == 5 for r in rows), rows
    assert rows[1][3].startswith("server|rank0.log:"), rows[1]


# --- no line of any report can run a workflow command where it is printed ------------------------------------------

_EVIL = "::add-mask::pwn ##[set-output name=x]y"


@pytest.mark.parametrize(("where", "old"), [
    ("culprit source line", 'txt = subprocess.check_output([compiler, "--version"], text=True)'),
    ("function name", "in get_cuda_version\n"),
    ("entry function", "in fp4_quantize\n"),
    ("exception message", "Attempted to call function marked as skipped\n"),
    ("file path", "/work/main/samples/repro/fakeinfer/jit/cpp_ext.py"),
])
def test_no_report_line_starts_a_workflow_command(tmp_path: Path, capfd: pytest.CaptureFixture[str], where: str,
                                                 old: str) -> None:
    from test_ci import check_github, run_ci  # check_github parses output as the Actions runner does

    new = {"function name": f"in {_EVIL}\n", "entry function": f"in {_EVIL}\n",
           "exception message": f"Attempted to call function marked as skipped\n  {_EVIL}\n",
           "file path": f"/x/{_EVIL}/cpp_ext.py"}.get(where, f"{_EVIL} x")
    text = FATAL.read_text(encoding="utf-8")
    assert old in text
    log = tmp_path / "evil.log"
    log.write_text(text.replace(old, new), encoding="utf-8")
    for fmt in ("markdown", "junit", "github", "json", "sarif", "gitlab"):
        rc, out, _ = run_ci(capfd, str(log), "-f", fmt, "--fail-on", "never", "--repo-root", str(tmp_path))
        assert rc == 0
        check_github(out)
    for fmt in ("json", "jsonl"):
        with pytest.raises(SystemExit):
            main(["--format", fmt, "--no-audit", str(log)])
        check_github(capfd.readouterr().out)
