"""`crashlens ci`: real crash logs in, GitHub annotations / SARIF / JUnit / GitLab / Markdown out."""

from __future__ import annotations

from crashlens._struct import replace
import gzip
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from crashlens.catalog import get_catalog
from crashlens.cipaths import LocationMapper, expand_inputs, locate_all
from crashlens.cli import main
from crashlens.pipeline import ScanResult, combine, scan_lines
from crashlens.render import github, gitlab, junit, markdown, sarif

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from conftest import SHARED, needs_shared

PROJECT = Path(__file__).resolve().parents[1]
SARIF_SCHEMA = "data/sarif-schema-2.1.0.json"
DYNAMO_MESSAGES = SHARED / "research" / "dynamo-messages.md"
# Real recordings (samples/record.py); the path the scenarios were recorded under, mapped back onto this checkout.
SAMPLES = sorted((PROJECT / "samples" / "raw").glob("*.log")) + sorted((PROJECT / "samples").glob("*.log"))
RECORDED_ROOT = "/work/main"


def _example(sig: str, n: int = 0) -> str:
    """A real traceback quoted in a signature's [[examples]] (recorded from torch 2.13 / 2.5 runs)."""
    with open(PROJECT / "signatures" / f"{sig}.toml", "rb") as fh:
        text: str = tomllib.load(fh)["examples"][n]["text"]
    return text.strip("\n")


# The driver's frames around the dynamo report, as a CI job's server log prints them.
_DRIVER = """\
2025-06-01 10:00:00 INFO ci-job: starting compile test (fullgraph=True)
Traceback (most recent call last):
  File "/srv/dyn/run_case.py", line 30, in <module>
    out = compiled(x)
  File "/home/user/.venv/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py", line 655, in _fn
    return fn(*args, **kwargs)
"""
TRACEBACK_LINE = 2  # where the traceback begins in a log built by crash_log()


def crash_log(path: Path, tail: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_DRIVER + _example("subprocess-thread-lock") + "\n" + tail, encoding="utf-8")
    return path


def graph_break_log(path: Path) -> Path:
    """The real TORCH_LOGS=graph_breaks capture A.52 (a non-fatal graph break) from the shared research notes."""
    if not DYNAMO_MESSAGES.is_file():
        pytest.skip(f"{DYNAMO_MESSAGES} not available (../shared beside the checkout, or set CRASHLENS_SHARED)")
    text = DYNAMO_MESSAGES.read_text(encoding="utf-8")
    m = re.search(r"^#### A\.52 .*?^```text\n(.*?)^```", text, re.DOTALL | re.MULTILINE)
    if m is None:
        pytest.skip("capture A.52 not found in dynamo-messages.md")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(m.group(1), encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE", "CI_PROJECT_DIR", "CRASHLENS_SIGNATURES"):
        monkeypatch.delenv(var, raising=False)


def run_ci(capfd: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(["ci", *args])
    out, err = capfd.readouterr()
    return int(e.value.code or 0), out, err


def _scan(*paths: Path, repo_root: Path, path_map: tuple[str, ...] = ()) -> tuple[ScanResult, dict]:
    cat = get_catalog()
    per = []
    for p in paths:
        with open(p, encoding="utf-8", errors="replace") as fh:
            n, ds = scan_lines(str(p), (ln.rstrip("\n") for ln in fh), cat)
        per.append((str(p), n, ds))
    result = combine(per)
    return result, locate_all(result.diagnoses, LocationMapper.create(str(repo_root), path_map))


# --- checks shared by the tests: what GitHub, code scanning, GitLab and a Markdown renderer would accept -----------

_OWN_COMMAND = re.compile(r"^::(?:error|warning)(?: [^:]*)?::")


def _unescape(s: str) -> str:
    return s.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def check_github(text: str) -> list[tuple[str, dict[str, str], str]]:
    """Parse output the way the runner does; fail on anything that would run a command crashlens did not write."""
    annotations = []
    fence: str | None = None
    for line in text.split("\n"):
        assert "\r" not in line
        if fence is not None:
            if line.strip() == f"::{fence}::":
                fence = None
            else:
                assert fence not in line
            continue
        lead = line.lstrip()
        assert "##[" not in line, line
        if not lead.startswith("::"):
            continue
        m = re.match(r"^::stop-commands::([0-9a-f]{32})$", lead)
        if m:
            fence = m.group(1)
            continue
        m = _OWN_COMMAND.match(lead)
        assert m, f"unexpected workflow command: {line!r}"
        head, _, data = lead[2:].partition("::")
        kind, _, prop_text = head.partition(" ")
        props = {}
        for pair in filter(None, prop_text.split(",")):
            k, sep, v = pair.partition("=")
            assert sep and k in ("file", "line", "title", "col", "endLine", "endColumn"), pair
            assert ":" not in v and "," not in v
            props[k] = _unescape(v)
        # Data escaping is exact: every % starts %25, %0D or %0A.
        assert all(data[i : i + 3] in ("%25", "%0D", "%0A") for i in range(len(data)) if data[i] == "%"), data
        annotations.append((kind, props, _unescape(data)))
    assert fence is None, "stop-commands fence left open"
    return annotations


def check_sarif(text: str) -> dict:
    """What code scanning needs of a SARIF file (the 2.1.0 schema itself: test_sarif_follows_the_2_1_0_schema)."""
    doc = json.loads(text)
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    for res in run["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["locations"], "code scanning rejects a file with a location-less result"
        art = res["locations"][0]["physicalLocation"]["artifactLocation"]
        assert art["uriBaseId"] == "%SRCROOT%"
        assert not art["uri"].startswith(("/", "../", "file:")) and ".." not in art["uri"].split("/")
        assert res["partialFingerprints"]["crashlensId/v1"]
    return doc


def check_junit(text: str) -> ET.Element:
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == "testsuites"
    return root


def check_gitlab(text: str) -> list[dict]:
    findings = json.loads(text)
    assert isinstance(findings, list)
    assert not text.startswith("\ufeff")
    fps = [f["fingerprint"] for f in findings]
    assert len(set(fps)) == len(fps)
    for f in findings:
        assert f["description"] and f["check_name"] and f["severity"] in ("info", "minor", "major", "critical", "blocker")
        path = f["location"]["path"]
        assert not path.startswith(("/", "../")) and f["location"]["lines"]["begin"] >= 1
    return findings


_OWN_TAGS = re.compile(r"</?(?:details|summary)>")


_FENCE_OPEN = re.compile(r"^( *)(`{3,})python$")


def check_markdown(text: str) -> str:
    """No HTML but crashlens's own tags, not even inside code spans (some Markdown consumers are not CommonMark).
    Fenced code blocks (code examples) are inert text in every CommonMark renderer and keep code as written; each
    closes with its own fence, and nothing inside could close it earlier."""
    prose: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        if fence is not None:
            if line.strip() == fence:
                fence = None
            else:
                assert "`" * len(fence) not in line and "~~~" not in line, line
            continue
        m = _FENCE_OPEN.match(line)
        if m:
            fence = m.group(2)
            continue
        prose.append(line)
    assert fence is None, "a code fence left open"
    rest = _OWN_TAGS.sub("", "\n".join(prose))
    assert "<" not in rest, [ln for ln in rest.splitlines() if "<" in ln]
    return rest


# --- the command on real logs --------------------------------------------------------------------------------------


@pytest.mark.parametrize("sample", SAMPLES, ids=[p.name for p in SAMPLES])
def test_every_format_valid_on_recorded_logs(sample: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    out = {f: tmp_path / f"out.{f}" for f in ("sarif", "junit", "gitlab", "markdown", "json")}
    args = [str(sample), "--repo-root", str(PROJECT), "--path-map", f"{RECORDED_ROOT}=.", "--fail-on", "never"]
    for fmt, path in out.items():
        args += ["--format", fmt, "--output", str(path)]
    rc, gh, _ = run_ci(capfd, *args, "--format", "github")
    assert rc == 0
    annotations = check_github(gh)
    doc = check_sarif(out["sarif"].read_text(encoding="utf-8"))
    cases = check_junit(out["junit"].read_text(encoding="utf-8")).findall(".//testcase")
    findings = check_gitlab(out["gitlab"].read_text(encoding="utf-8"))
    check_markdown(out["markdown"].read_text(encoding="utf-8"))
    diagnoses = json.loads(out["json"].read_text(encoding="utf-8"))["diagnoses"]
    n_fatal = sum(1 for d in diagnoses if d["fatal"])
    assert len(annotations) == min(n_fatal, 10) + min(len(diagnoses) - n_fatal, 10)
    assert len(doc["runs"][0]["results"]) + len(doc["runs"][0]["invocations"][0].get("toolExecutionNotifications", [])) \
        == len(diagnoses)
    if diagnoses:
        assert len(cases) == len(diagnoses)
        # A fatal crash fails its test case; a graph break passes, with the diagnosis in its output.
        fatal_ids = {d["id"] for d in diagnoses if d["fatal"]}
        for c in cases:
            is_fatal = c.get("name", "").rsplit("[", 1)[-1].rstrip("]") in fatal_ids
            assert (c.find("failure") is not None) == is_fatal
            assert (c.find("system-out") is not None) == (not is_fatal)
        # The recording is part of this repository: every crash has a location here.
        assert len(findings) == len(diagnoses)


def test_recorded_culprit_mapped_into_the_repository(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    sample = PROJECT / "samples" / "raw" / "builtin-open.log"
    if not sample.is_file():
        pytest.skip("samples/raw/builtin-open.log not recorded yet")
    rc, out, _ = run_ci(capfd, str(sample), "--format", "github", "--repo-root", str(PROJECT),
                        "--path-map", f"{RECORDED_ROOT}=.")
    assert rc == 1
    (kind, props, msg), *_ = check_github(out)
    assert kind == "error"
    assert props["file"].startswith("samples/repro/scenarios/") and (PROJECT / props["file"]).is_file()
    assert int(props["line"]) >= 1
    assert "Unsupported" in msg


def test_console_script_end_to_end(tmp_path: Path) -> None:
    log = crash_log(tmp_path / "artifacts" / "server.log")
    script = Path(sys.executable).with_name("crashlens")
    cmd = [str(script)] if script.exists() else [sys.executable, "-c", "from crashlens.cli import main; main()"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI_PROJECT"))}
    proc = subprocess.run([*cmd, "ci", str(tmp_path / "artifacts"), "--repo-root", str(tmp_path),
                           "--format", "sarif", "--output", str(tmp_path / "crashlens.sarif"), "--format", "markdown"],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 1, proc.stderr
    doc = check_sarif((tmp_path / "crashlens.sarif").read_text(encoding="utf-8"))
    (res,) = doc["runs"][0]["results"]
    assert res["ruleId"] == "subprocess-thread-lock"
    assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "artifacts/server.log"
    assert res["locations"][0]["physicalLocation"]["region"]["startLine"] == TRACEBACK_LINE
    assert "subprocess" in proc.stdout and proc.stdout.startswith("## crashlens")
    assert log.is_file()


# --- GitHub --------------------------------------------------------------------------------------------------------


def test_github_escaping_rules() -> None:
    assert github.escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert github.escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    line = github.command("error", [("file", "src/a,b.py"), ("line", "3"), ("title", "x: y")], "m1\nm2 %0A")
    assert line == "::error file=src/a%2Cb.py,line=3,title=x%3A y::m1%0Am2 %250A"


def test_github_annotation_points_at_artifact_and_names_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capfd: pytest.CaptureFixture[str]) -> None:
    crash_log(tmp_path / "logs" / "a.log")
    monkeypatch.chdir(tmp_path)
    rc, out, _ = run_ci(capfd, "logs", "--format", "github", "--repo-root", str(tmp_path))
    assert rc == 1
    ((kind, props, msg),) = check_github(out)
    assert kind == "error"
    assert props == {"file": "logs/a.log", "line": str(TRACEBACK_LINE), "title": props["title"]}
    assert props["title"].startswith("crashlens: A subprocess call is traced")
    assert "Culprit: dyn/lib_helpers.py:7 in get_git_rev" in msg


def test_github_limit_of_ten_per_kind_most_important_first(tmp_path: Path) -> None:
    result, locs = _scan(crash_log(tmp_path / "a.log"), repo_root=tmp_path)
    base = result.diagnoses[0]
    ds = [replace(base, id=f"f{i:015d}", title=f"fatal crash {i}", fatal=True, confidence=1 - i / 100)
          for i in range(14)]
    ds += [replace(base, id=f"w{i:015d}", title=f"graph break {i}", fatal=False) for i in range(12)]
    many = ScanResult(result.sources, tuple(ds))
    locs = {d.id: locs[base.id] for d in ds}
    annotations = check_github(github.render(many, locs))
    errors = [p["title"] for k, p, _ in annotations if k == "error"]
    warnings = [p["title"] for k, p, _ in annotations if k == "warning"]
    assert errors == [f"crashlens: fatal crash {i}" for i in range(10)]
    assert len(warnings) == 10
    summary = github.summary(many, locs)
    assert all(d.id in summary for d in ds)
    assert "at most 10 annotations" in summary


def test_step_summary_appended_and_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capfd: pytest.CaptureFixture[str]) -> None:
    crash_log(tmp_path / "a.log")
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step output\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    rc, out, _ = run_ci(capfd, str(tmp_path / "a.log"))  # github is the default under Actions
    assert rc == 1
    assert check_github(out)[0][1]["file"] == "a.log"
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("# earlier step output\n") and "## crashlens: 1 crash in 1 log" in text
    check_markdown(text)


def test_summary_size_limit() -> None:
    big = "x" * 50_000
    ds = []
    result, _ = _scan_example()
    for i in range(100):
        ds.append(replace(result.diagnoses[0], id=f"{i:016d}", summary=big, why=big))
    many = ScanResult(result.sources, tuple(ds))
    text = markdown.render(many, {}, max_bytes=200_000)
    assert len(text.encode()) <= 200_000
    assert "more findings not shown here" in text
    assert len(markdown.render(many, {}).encode()) < 1024 * 1024


def _scan_example() -> tuple[ScanResult, dict]:
    n, ds = scan_lines("a.log", (_DRIVER + _example("subprocess-thread-lock")).splitlines(), get_catalog())
    result = combine([("a.log", n, ds)])
    return result, {}


# --- log text must not inject --------------------------------------------------------------------------------------

PAYLOAD = "::set-output name=x::y ::add-mask::secret %0A ]]> <script>alert(1)</script> \x1b[31mred\x1b[0m \x07 \x00 ##[error]x"


def _hostile_log(path: Path) -> Path:
    """The real subprocess traceback with hostile text where a log controls it: the message and a source line."""
    text = _DRIVER + _example("subprocess-thread-lock")
    text = text.replace("Attempted to call function marked as skipped", f"Attempted to call function {PAYLOAD}", 1)
    text = text.replace('check_output(["echo", "abc"]).strip()', f'check_output(["echo", "abc"]).strip()  # {PAYLOAD}')
    data = text.encode("utf-8").replace(b"\x00", b"\xff\xfe\xc3\x28 \x00")  # invalid UTF-8 next to the NUL
    data += b"::set-output name=z::w\n::add-mask::secret\n\xff\xfe\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_log_text_cannot_inject(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    log = _hostile_log(tmp_path / "logs" / "evil.log")
    files = {f: tmp_path / f"out.{f}" for f in ("sarif", "junit", "gitlab", "markdown")}
    args = [str(log), "--repo-root", str(tmp_path), "--path-map", f"/srv/dyn={tmp_path}/nowhere"]
    for fmt, p in files.items():
        args += ["--format", fmt, "--output", str(p)]
    rc, out, _ = run_ci(capfd, *args, "--format", "github")
    assert rc == 1
    annotations = check_github(out)
    assert len(annotations) == 1
    _, props, msg = annotations[0]
    assert "::set-output name=x::y" in msg and "%0A" in msg  # shown as text, not run and not decoded
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", msg + props["title"])
    assert "set-output" in out.split("::stop-commands::", 1)[1]  # the echoed report is inside the fence

    check_sarif(files["sarif"].read_text(encoding="utf-8"))
    root = check_junit(files["junit"].read_text(encoding="utf-8"))
    body = root.find(".//failure").text or ""
    assert "]]>" in body and "<script>" in body and "\x07" not in body and "\x00" not in body
    check_gitlab(files["gitlab"].read_text(encoding="utf-8"))
    md = files["markdown"].read_text(encoding="utf-8")
    check_markdown(md)
    assert "<script" not in md and "&lt;script&gt;alert(1)&lt;/script&gt;" in md
    assert "\x1b" not in md and "\x07" not in md and "\x00" not in md


def test_markdown_code_span_survives_backticks() -> None:
    assert markdown.code("a ``b`` c") == "```a ``b`` c```"
    assert markdown.code("`x`") == "`` `x` ``"
    assert markdown.inline("<b>|*x*|") == "&lt;b&gt;\\|\\*x\\*\\|"
    assert markdown.prose("- `a_b` & <i>") == "\\- `a_b` &amp; &lt;i&gt;"
    assert markdown.code("<script>") == "&lt;script&gt;"
    assert markdown.prose("unpaired ` tick <x>") == "unpaired \\` tick &lt;x&gt;"


# --- locations -----------------------------------------------------------------------------------------------------


def _repo_with_culprit(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "dyn").mkdir(parents=True)
    (repo / "dyn" / "lib_helpers.py").write_text("import subprocess\n" * 10, encoding="utf-8")
    return repo


def test_path_map_points_at_culprit_in_repo(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    repo = _repo_with_culprit(tmp_path)
    crash_log(repo / "logs" / "a.log")
    sarif_out = tmp_path / "out.sarif"
    rc, out, _ = run_ci(capfd, str(repo / "logs"), "--repo-root", str(repo), "--path-map", "/srv/dyn=dyn",
                        "--format", "github", "--format", "sarif", "--output", str(sarif_out))
    assert rc == 1
    ((_, props, msg),) = check_github(out)
    assert (props["file"], props["line"]) == ("dyn/lib_helpers.py", "7")
    assert "Log: " in msg and "a.log:2" in msg
    (res,) = check_sarif(sarif_out.read_text(encoding="utf-8"))["runs"][0]["results"]
    loc = res["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "dyn/lib_helpers.py" and loc["region"]["startLine"] == 7
    related = res["relatedLocations"][0]["physicalLocation"]
    assert related["artifactLocation"]["uri"] == "logs/a.log" and related["region"]["startLine"] == TRACEBACK_LINE


@pytest.mark.parametrize("spec", ["srv/dyn=dyn", "/srv=.", "/srv/dyn/=dyn/"])
def test_path_map_forms(tmp_path: Path, spec: str) -> None:
    repo = _repo_with_culprit(tmp_path)
    if spec == "/srv=.":
        (repo / "dyn").rename(repo / "x")
        (repo / "dyn").mkdir()
        (repo / "x" / "lib_helpers.py").rename(repo / "dyn" / "lib_helpers.py")
    mapper = LocationMapper.create(str(repo), [spec])
    assert mapper.repo_path("/srv/dyn/lib_helpers.py") == "dyn/lib_helpers.py"
    assert LocationMapper.create(str(repo), ["site-packages/mylib=dyn"]).repo_path(
        "/usr/lib/python3.11/site-packages/mylib/lib_helpers.py") == "dyn/lib_helpers.py"


def test_never_a_location_outside_the_repository(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "lib_helpers.py").write_text("x = 1\n" * 10, encoding="utf-8")
    log = crash_log(tmp_path / "ci-logs" / "a.log")  # the artifact is outside the checkout too
    files = {f: tmp_path / f"out.{f}" for f in ("sarif", "gitlab", "junit")}
    args = [str(log), "--repo-root", str(repo), "--path-map", f"/srv/dyn={outside}", "--path-map", "/srv=../outside"]
    for fmt, p in files.items():
        args += ["--format", fmt, "--output", str(p)]
    rc, out, err = run_ci(capfd, *args, "--format", "github")
    assert rc == 1
    ((_, props, msg),) = check_github(out)
    assert "file" not in props and "line" not in props
    assert "Culprit: dyn/lib_helpers.py:7" in msg and f"Log: {log}:{TRACEBACK_LINE}" in msg
    run = check_sarif(files["sarif"].read_text(encoding="utf-8"))["runs"][0]
    assert run["results"] == []
    (note,) = run["invocations"][0]["toolExecutionNotifications"]
    assert note["associatedRule"]["id"] == "subprocess-thread-lock" and "lib_helpers.py:7" in note["message"]["text"]
    assert check_gitlab(files["gitlab"].read_text(encoding="utf-8")) == []
    case = check_junit(files["junit"].read_text(encoding="utf-8")).find(".//testcase")
    assert case is not None and "file" not in case.attrib
    assert "outside the repository" in err


def test_gitlab_fingerprints_unique_per_finding(tmp_path: Path) -> None:
    result, locs = _scan(crash_log(tmp_path / "a.log"), crash_log(tmp_path / "b.log"), repo_root=tmp_path)
    base = result.diagnoses[0]
    ds = (base, replace(base, id="0" * 16), replace(base, id="1" * 16))
    locs = {d.id: locs[base.id] for d in ds}
    findings = check_gitlab(gitlab.render(ScanResult(result.sources, ds), locs))
    assert len(findings) == 3
    assert {f["location"]["path"] for f in findings} == {"a.log"}


def test_junit_one_case_per_distinct_crash(tmp_path: Path) -> None:
    # The same crash in two artifacts is one distinct crash with two occurrences.
    result, locs = _scan(crash_log(tmp_path / "a.log"), crash_log(tmp_path / "b.log"), repo_root=tmp_path)
    root = check_junit(junit.render(result, locs))
    (case,) = root.findall(".//testcase")
    failure = case.find("failure")
    assert failure is not None and failure.get("type") == "subprocess-thread-lock"
    assert "Unsupported" in (failure.get("message") or "")
    assert "a.log:2" in (failure.text or "") and "b.log:2" in (failure.text or "")
    assert "Fixes, best first" in (failure.text or "")


def test_sarif_rules_from_catalog(tmp_path: Path) -> None:
    result, locs = _scan(crash_log(tmp_path / "a.log"), repo_root=tmp_path)
    doc = check_sarif(sarif.render(result, locs, get_catalog()))
    rules = {r["id"]: r for r in doc["runs"][0]["tool"]["driver"]["rules"]}
    assert set(rules) >= {s.id for s in get_catalog().signatures}
    r = rules["subprocess-thread-lock"]
    assert r["help"]["text"] and r["help"]["markdown"] and "subprocess" in r["properties"]["tags"]
    assert r["shortDescription"]["text"] and r["fullDescription"]["text"]


# --- inputs, outputs, exit codes -------------------------------------------------------------------------------------


def test_inputs_directories_globs_and_gz(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    crash_log(tmp_path / "art" / "nested" / "deep" / "server.log")
    gz = tmp_path / "art" / "worker.log.gz"
    gz.write_bytes(gzip.compress(crash_log(tmp_path / "plain" / "w.log").read_bytes()))
    (tmp_path / "art" / "model.bin").write_bytes(b"\x00\x01" * 100)
    files = expand_inputs([str(tmp_path / "art"), str(tmp_path / "plain" / "*.log")])
    assert sorted(Path(f).name for f in files) == ["server.log", "w.log", "worker.log.gz"]
    rc, out, _ = run_ci(capfd, str(tmp_path / "art"), "--format", "json")
    doc = json.loads(out)
    assert rc == 1
    assert {s["name"].rsplit("/", 1)[-1] for s in doc["sources"]} == {"server.log", "worker.log.gz"}
    assert len(doc["diagnoses"]) == 1 and len(doc["diagnoses"][0]["occurrences"]) == 2


def test_fail_on_exit_codes(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    fatal = crash_log(tmp_path / "fatal.log")
    clean = tmp_path / "clean.log"
    clean.write_text("INFO server ready\nINFO 200 OK\n", encoding="utf-8")
    assert run_ci(capfd, str(fatal))[0] == 1
    assert run_ci(capfd, str(fatal), "--fail-on", "fatal")[0] == 1
    assert run_ci(capfd, str(fatal), "--fail-on", "never")[0] == 0
    assert run_ci(capfd, str(clean), "--fail-on", "any")[0] == 0
    gb = graph_break_log(tmp_path / "gb.log")
    assert run_ci(capfd, str(gb), "--fail-on", "fatal")[0] == 0
    assert run_ci(capfd, str(gb), "--fail-on", "any")[0] == 1


def test_graph_break_is_a_warning_annotation(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    gb = graph_break_log(tmp_path / "gb.log")
    rc, out, _ = run_ci(capfd, str(gb), "--format", "github", "--repo-root", str(tmp_path))
    assert rc == 0
    ((kind, props, _),) = check_github(out)
    assert kind == "warning" and props["file"] == "gb.log"


def test_outputs_pair_with_their_format(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    log = crash_log(tmp_path / "logs" / "a.log")
    a, b = tmp_path / "a.sarif", tmp_path / "b.xml"
    rc, out, _ = run_ci(capfd, str(log), "--format", "sarif", "--output", str(a), "--format", "junit",
                        "--output", str(b), "--format", "gitlab")
    assert rc == 1
    check_sarif(a.read_text(encoding="utf-8"))
    check_junit(b.read_text(encoding="utf-8"))
    check_gitlab(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.sarif", "b.xml", "logs"]  # no temp files left


@pytest.mark.parametrize("extra, message", [
    (["--format", "sarif", "--format", "junit"], "stdout"),
    (["--output", "x.sarif", "--format", "sarif"], "after the --format"),
    (["--format", "sarif", "--output", "LOG"], "input artifact"),
    (["--format", "sarif", "--output", "missing-dir/x.sarif"], "does not exist"),
    (["--path-map", "nomapping"], "FROM=TO"),
    (["--repo-root", "no-such-dir"], "not a directory"),
])
def test_usage_errors_are_one_line_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capfd: pytest.CaptureFixture[str], extra: list[str], message: str) -> None:
    log = crash_log(tmp_path / "a.log")
    before = log.read_bytes()
    monkeypatch.chdir(tmp_path)
    rc, _, err = run_ci(capfd, str(log), *[str(log) if x == "LOG" else x for x in extra])
    assert rc == 2
    assert len(err.strip().splitlines()) == 1 and message in err
    assert log.read_bytes() == before


@pytest.mark.parametrize("args", [["missing.log"], ["*.nothing"], ["emptydir"]])
def test_missing_inputs_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str],
                               args: list[str]) -> None:
    (tmp_path / "emptydir").mkdir()
    monkeypatch.chdir(tmp_path)
    rc, _, err = run_ci(capfd, *args)
    assert rc == 2 and len(err.strip().splitlines()) == 1


def test_output_inside_scanned_directory_is_not_read_back(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    crash_log(tmp_path / "art" / "a.log")
    report = tmp_path / "art" / "report.txt"
    for _ in range(2):  # the second run must not scan the first run's report
        _, out, _ = run_ci(capfd, str(tmp_path / "art"), "--format", "markdown", "--output", str(report),
                            "--format", "json")
        assert [s["name"] for s in json.loads(out)["sources"]] == [str(tmp_path / "art" / "a.log")]


def test_truncated_gz_artifact_is_read_up_to_the_cut(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    data = gzip.compress(crash_log(tmp_path / "src.log").read_bytes() + b"INFO after\n" * 2000)
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(data[: len(data) - 40])
    rc, out, err = run_ci(capfd, str(cut), "--format", "json")
    assert rc == 1 and "stopped reading" in err
    assert len(json.loads(out)["diagnoses"]) == 1


def test_no_crash_outputs_stay_valid(tmp_path: Path) -> None:
    result = ScanResult((("clean.log", 2),), ())
    assert check_github(github.render(result, {})) == []
    check_sarif(sarif.render(result, {}, get_catalog()))
    assert len(check_junit(junit.render(result, {})).findall(".//testcase")) == 1
    assert check_gitlab(gitlab.render(result, {})) == []
    assert "No torch.compile crash" in markdown.render(result, {})


# --- SARIF 2.1.0 schema (from ../shared/data; skipped, saying why, where it is absent) -----------------------------


def _sarif_validator():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(needs_shared(SARIF_SCHEMA).read_text(encoding="utf-8"))
    return jsonschema.validators.validator_for(schema)(schema)


def test_sarif_follows_the_2_1_0_schema(tmp_path: Path) -> None:
    """Every recorded sample, one run of all of them, a crash outside the repository and a clean log."""
    validator = _sarif_validator()
    cat = get_catalog()
    docs = [sarif.render(*_scan(s, repo_root=PROJECT, path_map=(f"{RECORDED_ROOT}=.",)), cat) for s in SAMPLES]
    docs.append(sarif.render(*_scan(*SAMPLES, repo_root=PROJECT, path_map=(f"{RECORDED_ROOT}=.",)), cat))
    (tmp_path / "elsewhere").mkdir()
    docs.append(sarif.render(*_scan(crash_log(tmp_path / "a.log"), repo_root=tmp_path / "elsewhere"), cat))
    docs.append(sarif.render(ScanResult((("clean.log", 2),), ()), {}, cat))
    for text in docs:
        doc = check_sarif(text)
        errors = list(validator.iter_errors(doc))
        assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:3]]


def test_without_the_shared_data_the_schema_test_says_it_skipped(tmp_path: Path) -> None:
    env = {**os.environ, "CRASHLENS_SHARED": str(tmp_path / "no-shared")}
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                        f"{Path(__file__).name}::test_sarif_follows_the_2_1_0_schema"],
                       cwd=Path(__file__).parent, capture_output=True, timeout=300, env=env)
    out = p.stdout.decode()
    assert p.returncode == 0 and "1 skipped" in out, out[-2000:]
    assert "sarif-schema-2.1.0.json is not present" in out and "CRASHLENS_SHARED" in out
