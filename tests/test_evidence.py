"""A dynamo failure is found from whatever part of it survived a bug-report paste, under any line prefix,
and one crash gives one report.

The failures are real recordings (samples/raw, see samples/README.md); what is done to them here is the
framing a paste adds or the damage it does (a prefix on every line, lost newlines, a quote inside another
error, a cut), written by hand as the tests below say. Short real pastes from public issues are kept
verbatim, with their address, in tests/fixtures/pastes/.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from conftest import SAMPLES

from crashlens.catalog import get_catalog
from crashlens.evidence import RECORD_START_MARKERS, RULES, is_compile_machinery
from crashlens.frame import frame_line, frame_physical
from crashlens.pipeline import combine, scan_lines
from crashlens.prefilter import Prefilter
from crashlens.records import Frame

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PASTES = Path(__file__).resolve().parent / "fixtures" / "pastes"
EXPECTED = tomllib.loads((SAMPLES / "expected.toml").read_text()) if (SAMPLES / "expected.toml").is_file() else {}
# Recordings of one fatal dynamo crash with a culprit in the reproducer (`# expect:` marker).
FATAL = sorted(k for k, v in EXPECTED.items()
               if v.get("kind") == "raw" and v.get("fatal") and v.get("culprit_marker") and v.get("signature"))


def _marker_line(file_suffix: str, marker: str) -> int:
    src = (SAMPLES / "repro" / file_suffix).read_text().splitlines()
    return next(i for i, ln in enumerate(src, 1) if re.search(rf"#\s*expect:\s*{re.escape(marker)}\s*$", ln))


def _recording(name: str) -> list[str]:
    """The recording's lines without the header line record.py adds."""
    lines = (SAMPLES / name).read_text(encoding="utf-8", errors="replace").splitlines()
    return [ln for ln in lines if not ln.startswith("# crashlens sample:")]


def _scan(lines: list[str]):
    """What `crashlens scan` reports for these lines: the diagnoses of one source, merged."""
    n, diags = scan_lines("paste", lines, get_catalog([]))
    return list(combine([("paste", n, diags)]).diagnoses)


def _dynamo(diags):
    return [d for d in diags if d.family == "dynamo"]


def _assert_same_crash(name: str, diags, shown: str | None = None) -> None:
    """One fatal report, with the signature and culprit the recording itself gets. `shown`: the text the
    fragment kept, where that is less than the recording; when the recording's culprit line is not in it
    (str(e) of a backend failure holds no frames), the same exception is what can be asked."""
    alone = [d for d in _scan(_recording(name)) if d.fatal]
    assert len(alone) == 1
    fatal = [d for d in diags if d.fatal]
    assert len(fatal) == 1, [(d.signature, d.exception) for d in fatal]
    d = fatal[0]
    c = alone[0].culprit
    if shown is not None and c is not None and f"line {c.line}" not in shown and f":{c.line}" not in shown:
        assert d.exception[0] == alone[0].exception[0], (d.signature, d.exception)
        return
    assert (d.signature, d.culprit) == (alone[0].signature, alone[0].culprit), (d.signature, d.exception)


# Hand-written line prefixes, one per way servers and tools frame every line, each as real logs show it.
# (SGLang prefixes only a record's first line: samples/sglang-*.log are framed that way.)
PREFIXES = {
    "vllm-worker": "(VllmWorker TP0 pid=1518511) ERROR 08-27 05:54:20 [multiproc_executor.py:602] ",
    "vllm-enginecore": "(EngineCore_DP0 pid=2439401) ",
    "ray-actor": "(RayWorkerWrapper pid=1990, ip=192.168.23.10) ",
    "docker-compose": "sglang-1  | ",
    "mpi": "0: ",
    "openmpi": "[1,0]<stderr>:",
    "kubectl": "[pod/sglang-0/server] ",
    "markdown-quote": "> ",
    "torchrun": "[rank0]: ",
    "torchelastic-role": "[trainer2][rank2]:",  # a log-line prefix template with the role name
    "indented-vllm": "    ERROR 08-27 05:54:20 [multiproc_executor.py:602] ",  # a paste indented as a whole
    "glog-no-time": "E0627 torch/_dynamo/convert_frame.py:1282] ",  # a paste that left out time and thread
    "torchdynamo-2022": "Torchdynamo: [WARNING] ",  # torchdynamo's own logger before it moved into torch
}


@pytest.mark.parametrize("name", FATAL)
def test_a_recorded_crash_with_a_shippers_key_value_tags_on_every_line_is_the_same_crash(name):
    tags = ' #torch_elastic_rank="2" #callSite="torch._dynamo.convert_frame"'
    _assert_same_crash(name, _scan([ln + tags if ln.strip() else ln for ln in _recording(name)]))


def test_a_window_of_inductor_and_aot_autograd_frames_alone_is_a_compile_failure():
    """What a vLLM paste keeps of a backend failure: the frames from inductor's compile_fx down through
    AOTAutograd, no exception line. Only torch.compile runs those frames."""
    lines = _recording("raw/t24-inductor-no-cxx.log")
    start = next(i for i, ln in enumerate(lines) if ln.endswith(", in compile_fx"))
    end = next(i for i, ln in enumerate(lines) if ln.endswith(", in create_aot_dispatcher_function"))
    window = ["ERROR 03-07 14:35:07 core.py:291] " + ln for ln in lines[start:end]]
    assert not any("Error" in ln or "Traceback" in ln for ln in window)
    fatal = [d for d in _dynamo(_scan(window)) if d.fatal]
    assert len(fatal) == 1 and fatal[0].exception is None


@pytest.mark.parametrize("framing", sorted(PREFIXES))
@pytest.mark.parametrize("name", FATAL)
def test_a_recorded_crash_under_any_line_prefix_is_the_same_crash(name, framing):
    prefix = PREFIXES[framing]
    _assert_same_crash(name, _scan([prefix + ln for ln in _recording(name)]))


@pytest.mark.parametrize("name", FATAL)
def test_a_paste_that_lost_its_newlines_is_split_back_where_the_prefix_repeats(name):
    prefix = PREFIXES["vllm-worker"]
    joined = " ".join(prefix + ln for ln in _recording(name))  # the paste's newlines became spaces
    _assert_same_crash(name, _scan([joined]))


@pytest.mark.parametrize("name", FATAL)
def test_a_traceback_that_lost_its_newlines_without_any_prefix_is_split_back(name):
    # `Traceback (most recent call last):   File "x.py", line 3, in f     foo() torch._dynamo...`
    _assert_same_crash(name, _scan(["Pasted from the worker:", " ".join(_recording(name))]))


def _mixed_prefixes(lines: list[str]) -> list[str]:
    """A server log as it looks with prefixes mixed (hand-written framing around the recording): other
    processes' vLLM-tagged lines, then the crash with an SGLang prefix on its first line only, as
    SGLang prints a record, then a Ray actor's line."""
    return ["(APIServer pid=61948) INFO 11-20 10:21:47 [api_server.py:1839] vLLM API server version 0.9.2",
            "(EngineCore_0 pid=61950) INFO 11-20 10:22:01 [core.py:77] Initializing a V1 LLM engine (v0.9.2)",
            f"[2026-05-18 20:47:47 TP0] Scheduler hit an exception: {lines[0]}", *lines[1:],
            "(RayWorkerWrapper pid=2651, ip=10.220.51.157) INFO worker exiting"]


@pytest.mark.parametrize("name", FATAL)
def test_a_paste_with_mixed_prefixes_that_lost_its_newlines_is_split_back(name):
    lines = _recording(name)
    _assert_same_crash(name, _scan([" ".join(_mixed_prefixes(lines))]))
    # the same paste with its newlines is the same crash, so the split gives back what the lines were
    assert [d.signature for d in _scan(_mixed_prefixes(lines)) if d.fatal] == \
        [d.signature for d in _scan([" ".join(_mixed_prefixes(lines))]) if d.fatal]


def _from_exception_line(lines: list[str]) -> list[str]:
    """What str(e) of the recording's dynamo exception printed: its exception line onwards."""
    i = max(i for i, ln in enumerate(lines) if ln.startswith(("torch._dynamo.exc.", "torch._inductor.exc.")))
    return lines[i:]


@pytest.mark.parametrize("name", FATAL)
def test_a_dynamo_error_quoted_with_escaped_newlines_inside_a_worker_error_is_that_crash(name):
    # vLLM-style re-raise around the recorded message, with repr's `\n` escapes (hand-written framing).
    quoted = "\\n".join(_from_exception_line(_recording(name)))
    line = (PREFIXES["vllm-worker"] + f"RuntimeError: Worker failed with error '{quoted}', "
            "please check the stack trace above for the root cause")
    _assert_same_crash(name, _scan([line]), shown=quoted)


@pytest.mark.parametrize("name", FATAL)
def test_a_dynamo_error_quoted_as_a_value_in_a_dict_repr_is_that_crash(name):
    # A test harness or a JSON log keeps the message as a value: `{'message': 'torch._dynamo.exc.X: ...\n...'}`
    # with repr's escapes (hand-written framing around the recorded message).
    quoted = "\\n".join(_from_exception_line(_recording(name))).replace("'", "\\'")
    _assert_same_crash(name, _scan(["> {'message': '" + quoted + "'}"]), shown=quoted)


@pytest.mark.parametrize("name", FATAL)
def test_a_servers_reraise_after_the_crash_is_not_a_second_report(name):
    # The crash, then the server quoting its message in its own exception (SGLang's PCG handler, vLLM's
    # worker): one crash, with both occurrences. The re-raise line is hand-written framing.
    lines = _recording(name)
    headline = _from_exception_line(lines)[0].split(": ", 1)[1]
    reraise = ["", "Traceback (most recent call last):",
               '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 3118, in run_scheduler_process',
               "    scheduler = Scheduler(",
               f"Exception: Piecewise CUDA Graph failed with error: {headline}"]
    diags = _scan(lines + reraise)
    _assert_same_crash(name, diags)
    alone = next(d for d in _scan(lines) if d.fatal)
    assert len(next(d for d in diags if d.fatal).occurrences) == len(alone.occurrences) + 1


@pytest.mark.parametrize("name", FATAL)
def test_a_wrapper_that_points_at_the_root_cause_above_is_not_a_second_report(name):
    # vLLM's API server after its engine core died (hand-written framing after the recorded crash).
    wrapper = ["Traceback (most recent call last):",
               '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core_client.py", line 80, in make_client',
               "    return AsyncMPClient(*client_args)",
               "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}"]
    _assert_same_crash(name, _scan(_recording(name) + wrapper))


# A 2.13 UserError's `User Stack` opens with `  (snipped, see stack below for prefix)`: at column 0 it no
# longer reads as part of the stack, and the record ends there (known limitation).
_UNINDENTED_KNOWN = {"raw/item-scalar.log"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="snipped User Stack"))
                                  if n in _UNINDENTED_KNOWN else n for n in FATAL])
def test_a_paste_that_lost_its_indentation_is_the_same_crash(name):
    # Rendered markdown drops leading blanks: frames, source lines and carets all start at column 0.
    _assert_same_crash(name, _scan([ln.lstrip() for ln in _recording(name)]))


@pytest.mark.parametrize("name", FATAL)
def test_pytests_summary_line_alone_is_a_dynamo_failure(name):
    exc = _from_exception_line(_recording(name))[0]
    diags = _scan([f"FAILED tests/test_compile.py::test_forward - {exc}"])
    assert [d.exception[0] for d in _dynamo(diags) if d.fatal] == [exc.split(": ", 1)[0]]


_EXC_LINE = re.compile(r"[\w.]*(?:Error|Exception|Unsupported)\b")


def _cut_in_dynamo_frames(lines: list[str]) -> list[str] | None:
    """The recording cut right after the last frame of dynamo's symbolic_convert that precedes its
    first exception line (a paste that ends inside dynamo's own traceback), if it has one."""
    first_exc = next((i for i, ln in enumerate(lines) if _EXC_LINE.match(ln)), len(lines))
    frames = [i for i, ln in enumerate(lines[:first_exc]) if "torch/_dynamo/symbolic_convert.py" in ln]
    return lines[: frames[-1] + 2] if frames else None


# Recordings whose crash shows dynamo's internal traceback (torch 2.1-2.6 print it all). Not those with
# torch's metrics-logging error: its traceback runs through _compile too, and a cut inside it cannot
# be told from a cut failure.
INTERNAL = sorted(p.name for p in (SAMPLES / "raw").glob("*.log")
                  if EXPECTED.get(f"raw/{p.name}", {}).get("fatal") and "metrics_context" not in p.read_text()
                  and _cut_in_dynamo_frames(_recording(f"raw/{p.name}")))


@pytest.mark.parametrize("name", INTERNAL)
def test_a_traceback_cut_inside_dynamos_own_frames_is_a_compile_failure_out_of_view(name):
    cut = _cut_in_dynamo_frames(_recording(f"raw/{name}"))
    assert cut is not None
    diags = _dynamo(_scan(cut))  # no exception line, no `from user code:`
    assert [d.signature for d in diags if d.fatal] == ["compile-error-out-of-view"]
    d = diags[0]
    assert "full exception" in d.summary
    assert any("full exception" in f.title.lower() for f in d.fixes)


def test_a_cut_traceback_without_compile_machinery_is_not_called_dynamo():
    lines = _recording("raw/runtime-error-in-compiled.log")
    frames_only = [ln for ln in lines if ln.startswith("  ") or ln.startswith("Traceback")][:6]
    assert frames_only and not _dynamo(_scan(frames_only))


@pytest.mark.parametrize("name", ["raw/builtin-open.log", "raw/t24-builtin-open.log"])
def test_dynamos_trailer_alone_is_a_compile_failure(name):
    lines = _recording(name)
    trailer = [ln for ln in lines if ln.startswith(("Set TORCH", "You can suppress"))]
    assert trailer
    diags = _dynamo(_scan(trailer[:1]))
    assert [d.signature for d in diags] == ["compile-error-out-of-view"] and diags[0].fatal


def test_the_trailer_printed_apart_from_its_crash_joins_that_crash():
    lines = _recording("raw/builtin-open.log")
    trailer = [ln for ln in lines if ln.startswith("Set TORCH")]
    body = [ln for ln in lines if not ln.startswith("Set TORCH")]
    diags = _scan([*body, "", "INFO server still starting", *trailer])
    _assert_same_crash("raw/builtin-open.log", diags)


@pytest.mark.parametrize("name", ["raw/recompile-limit.log", "raw/t24-recompile-limit.log"])
def test_recompiles_the_limit_warning_and_its_hard_failure_are_one_report(name):
    diags = _dynamo(_scan(_recording(name)))
    assert [(d.signature, d.fatal) for d in diags] == [("recompile-limit", True)]
    assert len(diags[0].occurrences) > 2  # the recompile lines and the warning are its occurrences
    assert diags[0].fixes[0].title.startswith("Stop the guard")  # the warning named the failing guard


@pytest.mark.parametrize("name", ["raw/recompile-limit-nofullgraph.log", "raw/t24-recompile-limit-nofullgraph.log"])
def test_recompile_lines_alone_are_a_non_fatal_recompile_finding(name):
    lines = [ln for ln in _recording(name) if "hit config" not in ln][:4]
    diags = _dynamo(_scan(lines))
    assert [(d.signature, d.fatal) for d in diags] == [("recompiling", False)]
    assert diags[0].culprit is not None and diags[0].culprit.file.endswith("scenarios/recompile_limit.py")


def _paste(name: str) -> list[str]:
    text = (PASTES / name).read_text()
    return [ln for ln in text.splitlines() if not ln.startswith("#")]


def test_failed_inlining_lines_alone_are_a_non_fatal_dynamo_finding():
    diags = _dynamo(_scan(_paste("torchao-601-failed-inlining.log")))
    assert len(diags) == 1 and not diags[0].fatal
    # innermost first in the log; the culprit is the library frame, not torch's parametrize
    assert diags[0].culprit is not None and diags[0].culprit.file.startswith("torchao/")


def test_an_inductor_codegen_critical_log_line_is_a_compile_failure():
    # inductor's scheduler logs `Error in codegen for ...` just before it raises: the backend failed, and
    # that is in view even though the exception line is not
    diags = _dynamo(_scan(_paste("pytorch-128147-codegen-critical.log")))
    assert [d.signature for d in diags] == ["backend-compiler-failed"] and diags[0].fatal


def test_a_glog_codegen_error_is_a_compile_failure():
    diags = _dynamo(_scan(_paste("gpt-fast-144-codegen-glog.log")))
    assert diags and diags[0].fatal


def test_a_jupyter_traceback_cut_in_dynamos_frames_is_a_compile_failure():
    diags = _dynamo(_scan(_paste("unsloth-1325-ipython-cut.log")))
    assert [(d.signature, d.fatal) for d in diags] == [("compile-error-out-of-view", True)]


@pytest.mark.parametrize("name", ["pytorch-128095-lowering-cut.log", "vllm-17018-inductor-codegen.log",
                                  "vllm-38884-aot-compile.log"])
def test_inductors_own_compile_frames_alone_are_a_compile_failure(name):
    # lowering.py / graph.py compile_to_module / compile_fx.py fx_codegen_and_compile run only while
    # inductor compiles a graph: the exception line is out of view, the failure is not.
    diags = _dynamo(_scan(_paste(name)))
    assert [(d.signature, d.fatal) for d in diags] == [("compile-error-out-of-view", True)]


def test_torch_20s_logger_line_and_the_traceback_it_logs_are_one_compile_failure():
    diags = _dynamo(_scan(_paste("pytorch-97137-lowering-log.log")))
    assert [(d.signature, d.fatal) for d in diags] == [("compile-error-out-of-view", True)]
    assert diags[0].occurrences[0].line == 1  # the `[ERROR] Error from lowering` line opens it


def test_colour_codes_that_lost_their_escape_byte_come_off_with_the_prefix():
    lines = _paste("vllm-12155-ray-sgr-remnants.log")
    framed = [frame_line("x", 1, ln) for ln in lines]
    assert all("[36m" not in ln.text and "[0m" not in ln.text for ln in framed)
    assert framed[0].rank == "VLLM_Qwen_Chat_Ray" and framed[0].text.lstrip().startswith('File "')
    diags = _dynamo(_scan(lines))  # convert_frame's frames alone: a compile failure
    assert [(d.signature, d.fatal) for d in diags] == [("compile-error-out-of-view", True)]


def test_dynamos_graph_break_user_warning_alone_is_a_non_fatal_finding_routed_on_its_callee():
    lines = _paste("pytorch-137068-graph-break-warning.log")
    diags = _dynamo(_scan(lines))
    assert [(d.signature, d.fatal, d.callee) for d in diags] == [("time-call", False, "time.time")]
    assert "warn_once" not in diags[0].exception[1]  # the warning's source line is not its message
    # under a server's prefix too, and a warning from the user's own file is not dynamo's
    assert [d.signature for d in _dynamo(_scan(["sglang-1  | " + ln for ln in lines]))] == ["time-call"]
    other = lines[0].replace("torch/_dynamo/variables/functions.py", "app/model.py")
    assert not _dynamo(_scan([other]))


def test_the_graph_break_warning_before_its_fullgraph_crash_is_one_report():
    diags = _dynamo(_scan(_recording("raw/t24-builtin-open.log")))  # torch 2.4 warns, then raises
    assert [(d.signature, d.fatal) for d in diags] == [("filesystem-stat", True)]
    assert [o.line for o in diags[0].occurrences][:2] == [1, 3]


# torch 2.1-2.6 recordings of one fatal crash that dynamo announced with its graph-break warning
WARNED = sorted(p.relative_to(SAMPLES).as_posix() for p in (SAMPLES / "raw").rglob("*.log")
                if ": UserWarning: Graph break" in p.read_text(errors="replace")
                and EXPECTED.get(p.relative_to(SAMPLES).as_posix(), {}).get("fatal")
                and EXPECTED.get(p.relative_to(SAMPLES).as_posix(), {}).get("distinct_crashes", 1) == 1)


@pytest.mark.parametrize("name", WARNED)
def test_a_warned_graph_break_and_its_fullgraph_crash_are_one_report_whatever_signature_routes_it(name):
    diags = _dynamo(_scan(_recording(name)))
    assert [d.fatal for d in diags] == [True], [(d.signature, d.fatal) for d in diags]


def test_a_fake_tensor_run_message_cut_from_its_type_is_that_failure():
    diags = _dynamo(_scan(_paste("comfyui-sdnq-2-fake-device.log")))
    assert [(d.signature, d.fatal) for d in diags] == [("fake-device-mismatch", True)]
    d = diags[0]
    assert d.culprit is not None and (d.culprit.line, d.culprit.function) == (255, "forward_int8")
    assert ".to(x.device)" in d.fixes[0].title and "cuda:0, cpu" in d.fixes[0].title


@pytest.mark.parametrize("version", ["2.1.2", "2.4.1", "2.7.1", "2.13.0"])
def test_a_recorded_fake_tensor_failure_without_its_exception_type_is_the_same_crash(version):
    name = f"raw/issue13/{version}/device-mismatch.log"
    if not (SAMPLES / name).is_file():
        pytest.skip(f"no recording {name}")
    lines = _from_exception_line(_recording(name))
    msg = lines[0].split(": ", 1)[1]
    if not msg.startswith(("Failed running call_", "Dynamo failed to run FX node")):
        pytest.skip(f"torch {version} words this failure differently: {msg[:40]}")
    _assert_same_crash(name, _scan([msg, *lines[1:]]))  # the paste lost `torch._dynamo.exc.X: `


@pytest.mark.parametrize("framing", ["vllm-worker", "ray-actor", "markdown-quote"])
@pytest.mark.parametrize("name", FATAL)
def test_dynamos_exception_line_alone_is_a_fatal_dynamo_failure(name, framing):
    # a paste that keeps only the re-raise's source line and the exception line (no Traceback, no frames)
    exc = _from_exception_line(_recording(name))[0]
    lines = ["    raise e.with_traceback(None) from e.__cause__  # User compiler error", exc]
    diags = _dynamo(_scan([PREFIXES[framing] + ln for ln in lines]))
    assert [d.fatal for d in diags] == [True], [(d.signature, d.fatal) for d in diags]


def test_torch_20s_logger_prefix_names_its_logger():
    line = frame_line("x", 1, "[2023-03-20 07:29:05,653] torch._inductor.graph: [ERROR] Error from lowering")
    assert (line.level, line.logger, line.text) == ("ERROR", "torch._inductor.graph", "Error from lowering")


def test_inductor_wrappers_that_run_every_call_are_not_compile_machinery():
    cfx = "/x/site-packages/torch/_inductor/compile_fx.py"
    assert is_compile_machinery(Frame(cfx, 1, "fx_codegen_and_compile"))
    assert not is_compile_machinery(Frame(cfx, 1, "run"))  # cudagraphify's wrapper around the compiled call
    aot = "/x/site-packages/torch/_dynamo/aot_compile.py"
    assert is_compile_machinery(Frame(aot, 1, "aot_compile_fullgraph"))
    assert not is_compile_machinery(Frame(aot, 1, "__call__"))  # the loaded artifact running
    assert is_compile_machinery(Frame("/x/torch/_inductor/graph.py", 2584, "GraphLowering._compile_to_module_lines"))


def test_jupyter_frames_take_the_arrowed_line_as_their_source():
    from crashlens.frame import frame_lines
    from crashlens.traceback import extract_records

    (rec,) = extract_records(frame_lines("x", _paste("unsloth-1325-ipython-cut.log")))
    frames = rec.chain[0].frames
    assert [(f.line, f.function, f.source) for f in frames] == [
        (1116, "CatchErrorsWrapper.__call__", "return self._torchdynamo_orig_callable("),
        (472, "ConvertFrameAssert.__call__", "return _compile("),
    ]


def test_a_suppressed_error_is_a_non_fatal_finding():
    lines = ["WARNING:torch._dynamo.convert_frame:WON'T CONVERT forward /app/model.py line 12 "]
    diags = _dynamo(_scan(lines))
    assert len(diags) == 1 and not diags[0].fatal
    assert diags[0].culprit == Frame("/app/model.py", 12, "forward")


def test_benign_compile_logger_errors_are_not_failures():
    lines = _recording("raw/fp4-round-10.log")  # a metrics-logging error, then the run goes on
    assert not _dynamo(_scan(lines))


# -- the units --------------------------------------------------------------------------------------

def test_every_rule_has_markers_the_prefilter_keeps():
    pf = Prefilter(get_catalog([]))
    for rule in RULES:
        if rule.covered_by is None:
            for m in rule.markers:
                if m != b".":
                    assert m in RECORD_START_MARKERS
                    assert any(a in m for a in pf.markers), m


def test_compile_machinery_frames_need_their_function_or_source_line():
    ev = "/x/site-packages/torch/_dynamo/eval_frame.py"
    assert is_compile_machinery(Frame(ev, 1, "compile_wrapper", "raise e.with_traceback(None) from e.__cause__"))
    assert not is_compile_machinery(Frame(ev, 1, "compile_wrapper", "return fn(*args, **kwargs)"))
    assert is_compile_machinery(Frame("/x/torch/_dynamo/symbolic_convert.py", 9, "step"))
    assert not is_compile_machinery(Frame("/x/torch/_dynamo/utils.py", 9, "call"))


@pytest.mark.parametrize("raw,rank", [
    ("(RayWorkerWrapper pid=1990, ip=192.168.23.10) Traceback (most recent call last):", "RayWorkerWrapper pid=1990"),
    ("3: Traceback (most recent call last):", "rank3"),
    ("[1,2]<stderr>:Traceback (most recent call last):", "rank2"),
    ("> Traceback (most recent call last):", None),
    ("> > Traceback (most recent call last):", None),
])
def test_prefixes_come_off_and_say_the_rank(raw, rank):
    line = frame_line("x", 1, raw)
    assert line.text == "Traceback (most recent call last):" and line.rank == rank


def test_python_logging_prefix_gives_level_and_logger():
    line = frame_line("x", 1, "CRITICAL:torch._inductor.scheduler:Error in codegen for ComputedBuffer(name='buf7')")
    assert (line.level, line.logger, line.text) == ("CRITICAL", "torch._inductor.scheduler",
                                                     "Error in codegen for ComputedBuffer(name='buf7')")


def test_an_ordinary_long_line_is_one_line():
    raw = "[2026-02-28 15:04:30 TP0] Decode batch. #running-req: 1, #token: 77, token usage: 0.00, gen throughput: 1.2"
    assert len(frame_physical("x", 1, raw + " [1, 2, 3] " * 9)) == 1
    assert len(frame_physical("x", 1, "INFO " + "a\\nb " * 50)) == 1  # escapes, but no traceback in them
    # one traceback word in a long line is prose, not a paste that lost its newlines
    for raw in ['[2026-02-28 15:04:30 TP0] Worker restarted; the last error was in File "/app/serve.py", line 41, '
                'in <module>; RuntimeError: see the worker log, rank 1 printed it first',
                "WARNING 08-27 05:54:20 [utils.py:12] a Traceback (most recent call last): was logged by rank 1; "
                "torch._dynamo.exc.Unsupported: counts as a compile failure in the dashboard, see [rank1]: above"]:
        assert [ln.text for ln in frame_physical("x", 1, raw)] == [frame_line("x", 1, raw).text]


def test_a_joined_traceback_keeps_its_lines():
    """The lines a lost-newline paste is cut back into: each frame, its source line (indented), the
    carets dropped as lines of their own, the exception line, dynamo's sections at column 0."""
    raw = ('Traceback (most recent call last):   File "/app/run.py", line 19, in <module>     sys.exit(main())'
           '              ^^^^^^   File "/app/model.py", line 12, in forward     return self.proj(x)  # note: ok'
           ' torch._dynamo.exc.Unsupported: Attempted to call function marked as skipped'
           '   Explanation: Dynamo developers have intentionally marked that the function `check_output` should'
           ' not be traced.   Hint: Avoid calling the function `check_output`.  from user code:'
           '    File "/app/model.py", line 12, in forward     return self.proj(x)'
           '  Set TORCH_LOGS="+dynamo" and TORCHDYNAMO_VERBOSE=1 for more information')
    assert [ln.text for ln in frame_physical("x", 1, raw)] == [
        "Traceback (most recent call last):",
        '  File "/app/run.py", line 19, in <module>',
        "    sys.exit(main())",
        "             ^^^^^^",
        '  File "/app/model.py", line 12, in forward',
        "    return self.proj(x)  # note: ok",
        "torch._dynamo.exc.Unsupported: Attempted to call function marked as skipped",
        "  Explanation: Dynamo developers have intentionally marked that the function `check_output` should not be traced.",
        "  Hint: Avoid calling the function `check_output`.",
        "from user code:",
        '   File "/app/model.py", line 12, in forward',
        "    return self.proj(x)",
        'Set TORCH_LOGS="+dynamo" and TORCHDYNAMO_VERBOSE=1 for more information',
    ]


RECORDED = SAMPLES / "corpus" / "raw"


def _recorded(release: str, name: str) -> list[str]:
    import gzip

    path = RECORDED / release / f"{name}.log.gz"
    if not path.is_file():
        pytest.skip(f"{path} not recorded here")
    lines = gzip.decompress(path.read_bytes()).decode("utf-8", "replace").splitlines()
    return [ln for ln in lines if not ln.startswith("# crashlens sample:")]


def test_frames_after_an_exception_dynamo_did_not_raise_are_not_its_user_code():
    """A script reading a config option its torch lacks (recorded on 2.1.2: `torch._dynamo.config.
    ignore_logging_functions does not exist`), pasted as markdown whose `...` elided the head of the
    second copy: frames right after the blank are that copy's, not dynamo's `from user code:`. And
    SGLang quoting the message (hand-written framing) is no dynamo failure either."""
    tb = _recorded("t2.1.2", "fp4-round-8")
    tb = tb[next(i for i, ln in enumerate(tb) if ln.startswith("Traceback")):]
    second = next(i for i, ln in enumerate(tb) if ln.startswith("Traceback") and i > 0)
    paste = ["I get this:", "", *("> " + ln for ln in [*tb, "", *tb[second + 1:]]), "", "Any idea?"]
    diags = _scan(paste)
    assert _dynamo(diags) == []
    quoted = "[2026-08-27 21:37:53 TP6] Piecewise CUDA Graph failed with error: " + tb[-1].split(": ", 1)[1]
    assert _dynamo(_scan([quoted])) == []


def test_a_data_dependent_errors_caused_by_line_is_the_culprit_when_the_frames_are_cut():
    # A window of the recording (2.13) from its exception line to before the user stack: symbolic_shapes'
    # `Caused by: SOURCE  # FILE:LINE in FUNC (...)` still says where dynamo was.
    lines = _recording("raw/item-scalar.log")
    start = next(i for i, ln in enumerate(lines) if ln.startswith("torch._dynamo.exc."))
    stop = next(i for i, ln in enumerate(lines) if ln.startswith("User Stack"))
    assert not any(ln.lstrip().startswith("File ") for ln in lines[start:stop])
    fatal = [d for d in _scan(lines[start:stop]) if d.fatal]
    assert len(fatal) == 1 and fatal[0].culprit is not None
    c = fatal[0].culprit
    assert (c.file.endswith("scenarios/item_scalar.py"), c.line, c.function) == (True, 10, "gather_kv")


def test_frames_of_dynamos_fake_tensor_run_are_a_compile_failure_out_of_view():
    # A window of a recording (2.4.1) holding only get_fake_value / wrap_fake_exception / run_node frames:
    # only dynamo's tracing runs them, so it is a torch.compile failure whose exception is out of view.
    lines = _recorded("t2.4.1", "torch-cuda-query")
    start = next(i for i, ln in enumerate(lines) if "in get_fake_value" in ln)
    stop = next(i for i, ln in enumerate(lines) if ln.startswith("torch._dynamo.exc."))
    window = lines[start:stop]
    assert all("_dynamo/utils.py" in ln or not ln.lstrip().startswith("File ") for ln in window[:12])
    got = _dynamo(_scan(window[:12]))
    assert got and got[0].fatal


def test_an_old_ipython_traceback_of_dynamos_compile_is_a_compile_failure():
    """IPython before 8.0 (Colab, old notebooks) prints `PATH in FUNC(ARGS)` frames, the line number only on
    the `-->` source line; this real paste (pytorch#90540, quoted with `> ` and wrapped) is dynamo calling
    the backend, its exception line out of view."""
    log = Path(__file__).resolve().parents[1] / "samples" / "pastes-heldout" / "case-010.log"
    fatal = [d for d in _dynamo(_scan(log.read_text().splitlines())) if d.fatal]
    assert len(fatal) == 1 and fatal[0].exception is None


def test_an_old_ipython_frame_takes_its_line_from_the_arrow():
    lines = ["ZeroDivisionError                         Traceback (most recent call last)",
             "<ipython-input-3-d766d9f4b6a6> in <module>()",  # hand-written, in IPython 7's format
             "      4 ",
             "----> 5 f(0)",
             "",
             "ZeroDivisionError: division by zero"]
    from crashlens.traceback import RecordExtractor

    ex = RecordExtractor()
    recs = []
    for i, text in enumerate(lines, 1):
        recs += [r for ln in frame_physical("nb", i, text) for r in ex.feed(ln)]
    recs += ex.finish()
    frames = [f for r in recs for b in r.chain for f in b.frames]
    assert [(f.file, f.line, f.function) for f in frames] == [("<ipython-input-3-d766d9f4b6a6>", 5, "<module>")]


@pytest.mark.parametrize("name", FATAL)
def test_pytests_short_summary_of_the_crash_is_not_a_second_report(name):
    # pytest --tb=native: the recorded traceback, then its summary line (hand-written framing) with the
    # exception's first line, which pytest cuts to the terminal's width.
    lines = _recording(name)
    exc = _from_exception_line(lines)[0]
    summary = ["=========================== short test summary info ============================",
               f"FAILED tests/test_compile.py::test_fullgraph_smoke - {exc[:120]}",
               "========================= 1 failed, 2 passed in 21.07s ========================="]
    diags = _scan(lines + summary)
    _assert_same_crash(name, diags)


@pytest.mark.parametrize("name", FATAL)
def test_a_servers_quote_printed_before_the_traceback_is_not_a_second_report(name):
    # SGLang logs `Piecewise CUDA Graph failed with error: <str(e)>` (its first line), then the
    # scheduler's traceback of the same exception (hand-written framing around the recording).
    lines = _recording(name)
    head = _from_exception_line(lines)[0].split(": ", 1)[1]
    quote = f"[2026-05-18 20:47:47 TP0] Piecewise CUDA Graph failed with error: {head}"
    diags = _scan([quote, "[2026-05-18 20:47:47 TP0] Scheduler hit an exception: " + lines[0], *lines[1:]])
    _assert_same_crash(name, diags)


PENDING = SAMPLES / "corpus" / "pending"  # recorded by samples/corpus/record.py --raw-dir, not yet in the corpus


@pytest.mark.parametrize("release", ["t2.1.2", "t2.4.1", "t2.7.1", "t2.13.0"])
def test_an_attribute_set_on_the_optimizer_in_the_compiled_step_in_every_releases_wording(release):
    """torch 2.1's `setattr(UserDefinedObjectVariable) <slot wrapper ...>`, 2.4-2.7's `setattr(OptimizerVariable
    (SGD), last_batch, ...)`: the same failure, its culprit the assignment; 2.13 compiles it (no report)."""
    import gzip
    import json

    folder = PENDING / release
    if not (folder / "index.json").is_file():
        pytest.skip("not recorded here")
    info = json.loads((folder / "index.json").read_text())["recordings"]["optimizer-setattr"]
    text = gzip.decompress((folder / "optimizer-setattr.log.gz").read_bytes()).decode()
    fatal = [d for d in _scan(text.splitlines()) if d.fatal]
    if info["exit_code"] == 0:
        assert fatal == []
        return
    assert [d.signature for d in fatal] == ["module-setattr"]
    c = fatal[0].culprit
    assert c is not None and c.file.endswith("scenarios/optimizer_setattr.py")
    assert c.line == _marker_line("scenarios/optimizer_setattr.py", "optimizer-setattr")
    first = fatal[0].fixes[0]
    assert "set it before the compiled call" in first.title and "{" not in first.title


@pytest.mark.parametrize("name", FATAL)
def test_a_recorded_crash_whose_lines_ray_deduplicated_is_the_same_crash(name):
    """Under Ray every worker prints the same traceback and Ray's log deduplication keeps one copy of a
    repeated line with ` [repeated Nx across cluster]` appended (the first one also with Ray's note on
    RAY_DEDUP_LOGS). Framing written by hand after real Ray logs: the suffix on every other line."""
    note = (" (Ray deduplicates logs by default. Set RAY_DEDUP_LOGS=0 to disable log deduplication, or see "
            "https://docs.ray.io/en/master/ray-observability/user-guides/configure-logging.html"
            "#log-deduplication for more options.)")
    prefix = PREFIXES["ray-actor"]
    lines, noted = [], False
    for i, ln in enumerate(_recording(name)):
        suffix = ""
        if ln.strip() and i % 2 == 0:
            suffix = f" [repeated {i % 7 + 2}x across cluster]" + ("" if noted else note)
            noted = True
        lines.append(prefix + ln + suffix)
    _assert_same_crash(name, _scan(lines))
