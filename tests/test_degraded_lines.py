"""The line layer on pastes degraded the ways samples/corpus-degraded shows (its README cites a real paste of
each): a journald or Jenkins prefix on every line, colour escapes in caret notation, frame lines cut by a
hard wrap. Each test reads a case of that set (a real torch recording, framed and degraded by
samples/corpus/degrade.py) and checks what a person would see: the lines as the program printed them, and
the culprit its label names."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from crashlens.cli.scan import run_scan
from crashlens.frame import frame_line
from crashlens.render.json import document

CASES = Path(__file__).resolve().parents[1] / "samples" / "corpus-degraded" / "cases"


def _case(stem: str) -> tuple[dict, str]:
    label = json.loads((CASES / f"{stem}.json").read_text())
    return label, gzip.decompress((CASES / f"{stem}.log.gz").read_bytes()).decode()


def _culprit(tmp_path: Path, text: str) -> dict | None:
    log = tmp_path / "paste.log"
    log.write_text(text)
    diags = [d for d in document(run_scan((str(log),), (), audit=False, jobs=1))["diagnoses"]
             if d["family"] == "dynamo"]
    assert diags, "the dynamo failure went undetected"
    return diags[0]["culprit"]


def _frame_lines(text: str) -> list[str]:
    return [frame_line("x", i, raw).text for i, raw in enumerate(text.splitlines(), 1)]


def _assert_culprit(tmp_path: Path, stem: str, kind: str) -> None:
    label, text = _case(stem)
    assert label["fragment"] == kind and label["culprit"]
    got = _culprit(tmp_path, text)
    want = label["culprit"]
    assert got and got["file"].replace("\\", "/").endswith(want["file_suffix"]) and got["line"] == want["line"]


def test_journald_prefix_comes_off_every_line(tmp_path):
    label, text = _case("case-0020")  # a plain run under `python[pid]: `
    assert label["fragment"] == "journald"
    lines = _frame_lines(text)
    assert "Traceback (most recent call last):" in lines
    assert not any(" python[" in ln or "]: " in ln[:60] and ln[:3] in ("Jan", "Mar", "Jun", "Aug", "Dec")
                   for ln in lines)
    _assert_culprit(tmp_path, "case-0020", "journald")


@pytest.mark.parametrize("stem", ["case-0068", "case-0056"])  # SGLang 8 ranks, vLLM 0.11 under journald
def test_journald_over_server_prefixes_keeps_the_server_framing(tmp_path, stem):
    _assert_culprit(tmp_path, stem, "journald")


def test_jenkins_bracketed_timestamp_comes_off(tmp_path):
    label, text = _case("case-0043")  # pytest's output under Jenkins' `[2025-06-24T12:46:03.005Z] `
    assert text.startswith("[20") and "Z] " in text.splitlines()[0]
    lines = _frame_lines(text)
    assert any(ln.startswith("FAILED ") for ln in lines)
    assert "Traceback (most recent call last):" in lines
    _assert_culprit(tmp_path, "case-0043", "ci-timestamps")


def test_caret_notation_escapes_are_removed():
    _, text = _case("case-0174")  # CPython 3.13's coloured traceback, escapes written `^[[35m`
    assert "^[[35m" in text
    lines = _frame_lines(text)
    assert not any("^[[" in ln for ln in lines)
    frames = [ln for ln in lines if ln.startswith('  File "')]
    assert frames and all('", line ' in ln and ", in " in ln for ln in frames)


@pytest.mark.parametrize("stem", ["case-0174", "case-0066", "case-0342"])  # plain, vLLM 0.9, Ray
def test_caret_notation_escapes_leave_the_culprit_readable(tmp_path, stem):
    _assert_culprit(tmp_path, stem, "ansi-caret")


def test_a_frame_line_cut_by_a_hard_wrap_is_read_whole():
    """`  File "/work/corpus/samples/repro/scenarios/co` + `mpiler_disable.py", line 14, in linear_fp8`:
    the rest of a frame line wrapped at the terminal's width, on the next physical line without the
    logger's prefix, is the same frame (case-0097: vLLM 0.11's workers wrapped at 120 columns)."""
    from crashlens.frame import frame_lines
    from crashlens.traceback import extract_records

    label, text = _case("case-0097")
    assert label["fragment"] == "wrap"
    cut = [ln for ln in text.splitlines() if ln.endswith('File "/work/corpus/samples/repro/scenarios/co')]
    assert cut, "the case holds the cut frame line"
    records = list(extract_records(frame_lines("x", text.splitlines())))
    frames = [f for r in records for blk in r.chain for f in blk.frames] + \
             [f for r in records if r.dynamo for f in r.dynamo.user_frames]
    assert any(f.file.endswith("scenarios/compiler_disable.py") and f.line == 14 for f in frames)
    assert not any(f.file.endswith("scenarios/co") for f in frames)


@pytest.mark.parametrize("stem", ["case-0097", "case-0218", "case-0350"])  # wrapped, wrapped and indented
def test_hard_wrapped_pastes_keep_their_culprit(tmp_path, stem):
    label, _ = _case(stem)
    _assert_culprit(tmp_path, stem, label["fragment"])


@pytest.mark.parametrize("stem", ["case-0132", "case-0300"])  # json.dumps, pathlib under pytest on Windows
def test_windows_standard_library_is_not_the_culprit(tmp_path, stem):
    """On Windows the standard library lives in `<prefix>\\Lib\\` (`...\\envs\\torch\\Lib\\json\\encoder.py`),
    with no `python3.x` folder: the user's frame that called it is the culprit, not the stdlib file."""
    _, text = _case(stem)
    assert "\\Lib\\site-packages\\torch\\" in text
    _assert_culprit(tmp_path, stem, "windows")


def test_windows_lib_folder_is_stdlib_only_for_stdlib_modules():
    from crashlens.culprit import is_stdlib

    assert is_stdlib(r"C:\python38\lib\contextlib.py")  # as pytorch/pytorch#142321 printed it
    assert is_stdlib(r"C:\Users\dev\miniconda3\envs\torch\Lib\json\encoder.py")
    assert not is_stdlib(r"D:\ProgramData\Anaconda3\envs\sam2\lib\site-packages\torch\utils\_contextlib.py")
    assert not is_stdlib(r"E:\proj\lib\model_utils.py")  # a project's own lib folder


def test_smart_quotes_are_read_as_the_straight_quotes_printed():
    label, text = _case("case-0480")
    assert label["fragment"] == "smart-quotes" and "File \u201c" in text
    lines = _frame_lines(text)
    frames = [ln for ln in lines if ln.lstrip().startswith("File ")]
    assert frames and all(ln.lstrip().startswith('File "') and '", line ' in ln for ln in frames)


@pytest.mark.parametrize("stem", ["case-0480", "case-0482", "case-0485"])
def test_smart_quoted_pastes_keep_their_culprit(tmp_path, stem):
    _assert_culprit(tmp_path, stem, "smart-quotes")


def test_smart_quoted_wont_convert_is_found_by_both_scan_paths():
    """`WON’T CONVERT` (case-0593, a run that went on after dynamo's warning, its paste smart-quoted): framed
    as dynamo printed it, found by the fast path's markers, and the fast path's result is the per-line one."""
    import io

    from crashlens.catalog import get_catalog
    from crashlens.pipeline import combine, scan_chunks, scan_lines
    from crashlens.prefilter import Prefilter
    from crashlens.read import iter_line_chunks, iter_lines
    from crashlens.render.json import render

    _, text = _case("case-0593")
    raw = next(ln for ln in text.splitlines() if "WON\u2019T CONVERT" in ln)
    assert "WON'T CONVERT" in frame_line("x", 1, raw).text
    cat = get_catalog([])
    assert any(m in raw.encode() for m in Prefilter(cat).markers)
    data = text.encode()
    n, fast = scan_chunks("log", iter_line_chunks(io.BytesIO(data), 64 << 10), cat)
    _, slow = scan_lines("log", iter_lines(io.BytesIO(data)), cat)
    assert render(combine([("log", n, fast)])) == render(combine([("log", n, slow)]))
    assert any(d.signature for d in slow), "dynamo's warning is reported"


# -- a terminal's hard wrap cuts every kind of line, not only frame lines (traceback.Rewrap) ----------------

def _fatal(tmp_path: Path, text: str) -> list[dict]:
    log = tmp_path / "paste.log"
    log.write_text(text)
    return [d for d in document(run_scan((str(log),), (), audit=False, jobs=1))["diagnoses"] if d["fatal"]]


# SGLang 2 ranks (a message cut mid-word: `Dynamic contro` + `l flow ...`), docker, vLLM 0.6, Ray (the
# exception line cut after its first letter, function names cut: `in compile_inn` + `er`), SGLang 1 rank,
# plain (`in _` + `fn` before any cut showed the width), vLLM 0.11
@pytest.mark.parametrize("stem", ["case-0013", "case-0109", "case-0157", "case-0169", "case-0205", "case-0301",
                                  "case-0433", "case-0133"])
def test_a_hard_wrapped_crash_is_one_fatal_report_with_its_culprit(tmp_path, stem):
    label, text = _case(stem)
    assert label["fragment"] == "wrap"
    fatal = _fatal(tmp_path, text)
    assert len(fatal) == 1, [(d["signature"], d["exception"]) for d in fatal]
    want = label["culprit"]
    got = fatal[0]["culprit"]
    assert got and got["file"].endswith(want["file_suffix"]) and got["line"] == want["line"]


# `kubectl logs --prefix` over vLLM 0.11's prefix: ~120 columns of prefix, so at 80/100 columns every line is
# cut inside it (`... (Worker_TP1 pid=26615) ERROR 10-18 10:22:33 [` + `multiproc_executor.py:671] Traceback ...`),
# wrapped and wrapped-indented (the blank the wrap cut at kept: `..., line` + `   13, in quantized_linear`)
@pytest.mark.parametrize("stem", ["case-0049", "case-0313", "case-0445", "case-0110", "case-0242", "case-0374"])
def test_lines_cut_inside_their_log_prefix_are_read_whole(tmp_path, stem):
    label, text = _case(stem)
    assert label["framing"] == "kubectl" and label["fragment"].startswith("wrap")
    _assert_culprit(tmp_path, stem, label["fragment"])


def test_a_logged_graph_break_whose_glog_prefix_the_wrap_cut_is_a_finding_not_a_crash(tmp_path):
    """Ray over torch's glog (`... torch/_dynamo/symbolic_convert.py:5` + `    34] [0/0] [__graph_breaks] ...`):
    the graph_breaks logger's lines, once whole, are a logged graph break of a run that went on."""
    label, text = _case("case-0098")
    assert label["fragment"] == "wrap-indent" and not label["is_dynamo_failure"]
    log = tmp_path / "paste.log"
    log.write_text(text)
    diags = document(run_scan((str(log),), (), audit=False, jobs=1))["diagnoses"]
    assert diags and not any(d["fatal"] for d in diags)
    assert diags[0]["signature"].startswith("compiler-disable")


def test_the_blank_a_wrap_indent_cut_at_is_kept(tmp_path):
    """A handler that indents what it wraps (8 blanks here): a rest that starts with a ninth blank is the
    message's own (`recompilations,` + `         enable`); pytest's summary line and the traceback then
    hold one message, one report (case-0254). Dropping every leading blank made the joined summary line read
    `recompilations,enable`: two messages, two reports."""
    label, text = _case("case-0254")
    assert "recompilations,\n         enable" in text
    fatal = _fatal(tmp_path, text)
    assert len(fatal) == 1, [(d["signature"], d["exception"]) for d in fatal]


def test_a_message_cut_at_the_wrap_width_is_read_whole():
    """The exception's message, cut mid-word at the terminal's width, is the message torch printed (the
    signature's pattern reads it), in the SGLang piecewise-CUDA-graph line and in the traceback's copy."""
    from crashlens.frame import frame_lines
    from crashlens.traceback import extract_records

    label, text = _case("case-0013")
    assert "Dynamic contro\nl flow" in text
    records = [r for r in extract_records(frame_lines("x", text.splitlines())) if r.chain]
    messages = [b.message for r in records for b in r.chain if b.message]
    assert messages and all(m.startswith("Dynamic control flow is not supported at the moment. Please use "
                                         "functorch.experimental.control_flow.cond") for m in messages)


def test_a_traceback_header_and_function_names_cut_by_the_wrap_are_read_whole():
    """`Traceback (most recent call last)` + `:`, `in compile_inn` + `er`: one traceback from the first line,
    every frame with its whole function name (case-0433, Ray workers wrapped at 80 columns)."""
    from crashlens.frame import frame_lines
    from crashlens.traceback import extract_records

    label, text = _case("case-0433")
    lines = text.splitlines()
    assert lines[1] == ":" and "in compile_inn" in text and "\ner\n" in text
    records = list(extract_records(frame_lines("x", lines)))
    first = min(records, key=lambda r: r.start_line)
    assert first.start_line == 1 and first.kind == "traceback"
    functions = [f.function for b in first.chain for f in b.frames]
    assert "compile_inner" in functions and "compile_inn" not in functions
    assert [b.type for b in first.chain] == ["torch._dynamo.exc.TorchRuntimeError"]


def _wrapped_cases() -> list[str]:
    return sorted(p.name[:-len(".json")] for p in CASES.glob("case-*.json")
                  if json.loads(p.read_text())["fragment"] in ("wrap", "wrap-indent"))


@pytest.mark.parametrize("stem", _wrapped_cases())
def test_hard_wrapped_logs_read_the_same_on_every_path(stem):
    """A line held for its rest (Rewrap) counts as an open record, so the fast paths feed its rest too: each
    path gives the per-line path's document, byte for byte."""
    from test_scale import _all_equal, _every_path

    data = gzip.decompress((CASES / f"{stem}.log.gz").read_bytes())
    _all_equal(_every_path(data))
    _all_equal(_every_path(data, 1 << 12))


def test_a_copy_cut_before_the_wrap_width_was_known_is_the_whole_copys(tmp_path):
    """SGLang 2 ranks, wrapped and indented: TP0's `Piecewise CUDA Graph failed with error: torch._dynamo.` is
    cut before any certain cut showed the wrap's width, TP1's copy is read whole: one crash, one report, with
    the whole message (case-0206)."""
    label, text = _case("case-0206")
    assert label["fragment"] == "wrap-indent" and "error: torch._dynamo.\n" in text
    fatal = _fatal(tmp_path, text)
    assert len(fatal) == 1, [(d["signature"], d["exception"]) for d in fatal]
    assert fatal[0]["exception"]["message"] == "torch._dynamo.config.ignore_logging_functions does not exist"
