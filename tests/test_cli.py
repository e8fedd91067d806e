"""End-to-end: the installed `crashlens` command, as a user runs it."""

from __future__ import annotations

import json

import pytest

from conftest import CORPUS, SAMPLES, needs_corpus, run_cli


def _a_crash_log() -> str:
    needs_corpus()
    return str(CORPUS / "case-011.log")


def test_missing_file_is_one_line_exit_2(tmp_path):
    p = run_cli(str(tmp_path / "nope.log"))
    assert p.returncode == 2
    err = p.stderr.decode()
    assert err.count("\n") == 1 and "no such file" in err
    assert "Traceback" not in err


def test_directory_is_one_line_exit_2(tmp_path):
    p = run_cli(str(tmp_path))
    assert p.returncode == 2
    assert "is a directory" in p.stderr.decode()
    assert "Traceback" not in p.stderr.decode()


def test_unknown_option_is_usage_error():
    p = run_cli("--no-such-option", "x.log")
    assert p.returncode == 2
    assert p.stderr.decode().startswith("crashlens: ")
    assert "Traceback" not in p.stderr.decode()


def test_clean_log_says_no_crashes_and_exits_0(tmp_path):
    log = tmp_path / "ok.log"
    log.write_text("[2025-11-30 11:18:05] INFO:     Application startup complete.\n" * 3)
    p = run_cli(str(log))
    assert p.returncode == 0
    assert "no crashes found in 3 lines" in p.stdout.decode()


def test_fatal_crash_exits_1_and_names_culprit():
    p = run_cli(_a_crash_log())
    assert p.returncode == 1
    out = p.stdout.decode()
    assert "diffusers/models/unet_2d_condition.py:762" in out
    assert "Fixes, best first" in out


def test_stdin_and_dash_read_the_same(tmp_path):
    log = _a_crash_log()
    data = open(log, "rb").read()
    a = run_cli("--format", "json", stdin=data)
    b = run_cli("scan", "--format", "json", "-", stdin=data)
    ja, jb = json.loads(a.stdout), json.loads(b.stdout)
    assert ja["diagnoses"] and [d["id"] for d in ja["diagnoses"]] == [d["id"] for d in jb["diagnoses"]]


def test_json_contract_fields():
    p = run_cli("--format", "json", _a_crash_log())
    doc = json.loads(p.stdout)
    assert doc["schema"] == "crashlens/v1"
    assert isinstance(doc["crashlens_version"], str)
    assert doc["sources"][0]["lines"] > 0
    d = doc["diagnoses"][0]
    for key, typ in [("id", str), ("family", str), ("title", str), ("confidence", float), ("fatal", bool),
                     ("chain", list), ("context", dict), ("occurrences", list), ("fixes", list)]:
        assert isinstance(d[key], typ), key
    assert set(d["context"]) >= {"fullgraph", "server", "versions"}
    assert set(d["occurrences"][0]) == {"source", "line", "rank", "round"}
    assert {"rank", "kind", "title", "detail", "file", "line"} <= set(d["fixes"][0])
    assert [f["rank"] for f in d["fixes"]] == list(range(1, len(d["fixes"]) + 1))


def test_json_stdout_is_only_json(tmp_path):
    p = run_cli("--format", "json", _a_crash_log())
    json.loads(p.stdout)  # nothing else on stdout


def test_version_and_help():
    p = run_cli("--version")
    assert p.returncode == 0 and b"crashlens" in p.stdout
    p = run_cli("--help")
    assert p.returncode == 0 and b"watch" in p.stdout


def test_readme_demo_sample_exists():
    readme = (SAMPLES.parent / "README.md").read_text()
    first = [ln for ln in readme.splitlines() if ln.strip().startswith("python3 -m venv")][:2]
    assert len(first) == 2
    demo = first[0].split("crashlens ")[-1].split()[0]
    assert (SAMPLES.parent / demo).is_file(), demo


def test_signatures_commands_show_the_catalog():
    p = run_cli("signatures", "list")
    assert p.returncode == 0 and b"subprocess-thread-lock" in p.stdout
    p = run_cli("signatures", "check")
    assert p.returncode == 0 and b" 0 failed" in p.stdout
    p = run_cli("explain", "subprocess-thread-lock")
    assert p.returncode == 0 and b"Fixes (best first" in p.stdout and b"custom-op" in p.stdout
    p = run_cli("explain", "no-such-signature")
    assert p.returncode == 2 and b"no signature with id" in p.stderr


def test_mine_clusters_crashes_no_signature_names(tmp_path):
    # two copies of a real recording whose failure only the generic fallback names (torch 2.1.2 writing
    # os.environ: "inline __setitem__", with no frame below the user's line)
    import gzip

    raw = gzip.decompress((SAMPLES / "corpus" / "raw" / "t2.1.2" / "os-environ-write.log.gz").read_bytes())
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    a.write_bytes(raw)
    b.write_bytes(raw)
    p = run_cli("mine", str(a), str(b), "--stub", "--format", "csv")
    out = p.stdout.decode()
    assert p.returncode == 0
    row = out.splitlines()[1].split(",")
    assert row[1] == "unknown" and row[3] == "2"
    assert f'id = "mined-{row[0]}"' in out


@pytest.mark.parametrize("width", [60, 100, 173])
def test_terminal_panels_are_boxes_of_the_asked_width_even_with_wide_characters(width):
    """Every line of a panel takes exactly the terminal's width (CJK characters count two columns,
    combining marks none), and no word of the report is lost to wrapping."""
    import io
    import unicodedata

    from crashlens.catalog import get_catalog
    from crashlens.pipeline import combine, scan_lines
    from crashlens.render.terminal import render

    def cells(s: str) -> int:
        return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
                   for c in s)

    cat = get_catalog([])
    text = next(e.text for e in cat.get("subprocess-thread-lock").examples if e.expect_match)
    text = text.replace("marked as skipped", "marked as skipped 模型加载失败：无法追踪 e\u0301te " + "長" * 90, 1)
    n, diags = scan_lines("log", text.splitlines(), cat)
    out = io.StringIO()
    render(combine([("log", n, diags)]), out, color=False, width=width)
    lines = out.getvalue().splitlines()
    box = [ln for ln in lines if ln[:1] in "╭│╰"]
    assert len(box) > 10 and {cells(ln) for ln in box} == {width}
    flat = "".join(ln[2:-2].strip() for ln in box if ln.startswith("│"))
    assert "模型加载失败：无法追踪" in flat and "長" * 90 in flat and "e\u0301te" in flat


def test_terminal_report_survives_an_output_encoding_without_box_characters():
    """On a Windows pipe (cp1252) or an ASCII-only stdout the panels fall back to ASCII borders, and
    characters the encoding lacks become `?`; the report is still printed whole, exit 1."""
    for encoding in ("ascii", "cp1252"):
        p = run_cli("--no-audit", str(SAMPLES / "sglang-1rank-pcg-fp4.log"),
                    env={"PYTHONIOENCODING": encoding, "COLUMNS": "90"})
        assert p.returncode == 1 and p.stderr == b""
        out = p.stdout.decode(encoding)
        assert out.splitlines()[1].startswith("+-") and "Fixes, best first" in out
        assert all(len(ln) == 90 for ln in out.splitlines() if ln[:1] in "+|")
