"""`crashlens fix` and `crashlens run`, without torch: recorded logs, a copy of the reproducer tree, and a
stand-in command that replays a recorded crash until the fix is in place."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import SAMPLES, cl, crashlens_exe

RAW = SAMPLES / "raw"
REPRO = SAMPLES / "repro"


def tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


# --- crashlens fix LOG ------------------------------------------------------------------------------


def test_fix_prints_a_diff_of_the_opaque_op_at_the_entry_point_and_writes_nothing(repro):
    before = tree_digest(repro)
    p = cl("fix", str(RAW / "fp4-round-1.log"), cwd=repro)
    assert p.returncode == 0, p.stderr
    diff = p.stdout
    # the call site in the user's file, not the probe deep inside the library
    assert "--- a/fp4_rounds.py" in diff and "+++ b/fp4_rounds.py" in diff
    assert "-    x_fp4, x_sf = fakeinfer.fp4_quantize(x, input_scale_inv)" in diff
    assert "+    x_fp4, x_sf = _crashlens_fp4_rounds_fp4_quantize.fp4_quantize(x, input_scale_inv)" in diff
    assert "cpp_ext.py" not in diff.split("+++ b/_crashlens")[0]  # the library is not patched
    assert "--- /dev/null" in diff and "+++ b/_crashlens_fp4_rounds_fp4_quantize.py" in diff
    assert "+@torch.library.custom_op(\"crashlens::fp4_rounds_fp4_quantize\"" in diff
    assert "register_fake" in diff and "shape rule" in diff  # the catalog's fp4_quantize rule, not a guess
    assert tree_digest(repro) == before


def test_apply_backs_up_records_and_is_idempotent_and_revert_is_byte_for_byte(repro):
    before = tree_digest(repro)
    p = cl("fix", str(RAW / "fp4-round-1.log"), "--apply", cwd=repro)
    assert p.returncode == 0, p.stderr
    assert "changed fp4_rounds.py" in p.stderr
    shim = repro / "_crashlens_fp4_rounds_fp4_quantize.py"
    assert shim.exists()
    ast.parse(shim.read_text())
    ast.parse((repro / "fp4_rounds.py").read_text())
    record = json.loads((repro / ".crashlens" / "applied.json").read_text())
    assert [a["kind"] for a in record["applied"]] == ["custom-op"]
    backups = list((repro / ".crashlens" / "backups").iterdir())
    assert [b.read_bytes() for b in backups] == [(REPRO / "fp4_rounds.py").read_bytes()]
    patched = tree_digest(repro)
    again = cl("fix", str(RAW / "fp4-round-1.log"), "--apply", cwd=repro)
    assert again.returncode == 0 and "already applied" in again.stderr
    assert tree_digest(repro) == patched
    r = cl("fix", "--revert", cwd=repro)
    assert r.returncode == 0, r.stderr
    assert tree_digest(repro) == before
    assert not (repro / ".crashlens").exists() and not shim.exists()


def test_json_plan_names_files_and_carries_the_diff(repro):
    p = cl("fix", str(RAW / "print-call.log"), "--format", "json", cwd=repro)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["schema"] == "crashlens/v1" and doc["kind"] == "guard" and doc["status"] == "planned"
    assert doc["files"] == [str(repro / "scenarios" / "print_call.py")]
    assert "+    if not torch.compiler.is_compiling():" in doc["diff"]


@pytest.mark.parametrize("log, kind, must", [
    ("print-call", "guard", ["if not torch.compiler.is_compiling():", "print("]),
    ("time-call", "guard", ["tic = time.time()", "FORWARD_TIMES.append(tic)"]),
    ("custom-op-nofake", "register-fake", ["import _crashlens_fake_fakekern_rms_norm"]),
    ("compiler-disable", "custom-op", ["_crashlens_compiler_disable_quantize_activation.quantize_activation("]),
    ("builtin-open", "assume-constant", ["@torch.compiler.assume_constant_result"]),
    ("dynamo-generic", "move-to-module", ["class LogitsOutput:"]),
    ("namespace-construction", "move-to-module", ["_CRASHLENS_GET_SAMPLING_MODULE = get_sampling_module()"]),
    ("data-dependent-branch", "where", ["logits = torch.where((penalties != 1.0).sum() > 0,"]),
])
def test_each_kind_of_fix_from_its_recorded_log(repro, log, kind, must):
    p = cl("fix", str(RAW / f"{log}.log"), "--apply", "--format", "json", cwd=repro)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["kind"] == kind, doc
    text = "".join(Path(f).read_text() for f in doc["files"])
    for m in must:
        assert m in text, (m, text[:2000])
    for f in doc["files"]:
        ast.parse(Path(f).read_text())  # every file it wrote is still Python


def test_register_fake_is_imported_after_the_op_is_defined(repro):
    p = cl("fix", str(RAW / "custom-op-nofake.log"), "--apply", cwd=repro)
    assert p.returncode == 0, p.stderr
    lines = (repro / "scenarios" / "custom_op_nofake.py").read_text().splitlines()
    imp = next(i for i, ln in enumerate(lines) if "_crashlens_fake_fakekern_rms_norm" in ln)
    define = next(i for i, ln in enumerate(lines) if "fakekern::rms_norm" in ln)
    assert imp > define


def test_older_torch_gets_library_define_impl_and_a_meta_kernel(repro):
    p = cl("fix", str(RAW / "fp4-round-1.log"), "--torch", "2.1.2", cwd=repro)
    assert p.returncode == 0, p.stderr
    assert "torch.library.Library(\"crashlens\", \"FRAGMENT\")" in p.stdout
    assert "\"Meta\")" in p.stdout and "custom_op(" not in p.stdout


@pytest.mark.parametrize("log", ["random-call", "generator", "item-scalar"])
def test_no_mechanical_fix_means_needs_a_person_exit_1_and_nothing_written(repro, log):
    before = tree_digest(repro)
    p = cl("fix", str(RAW / f"{log}.log"), "--apply", cwd=repro)
    assert p.returncode == 1
    assert "needs a person" in p.stderr and "ranked advice" in p.stderr
    assert "Traceback" not in p.stderr
    assert tree_digest(repro) == before and not (repro / ".crashlens").exists()


def test_a_fix_never_hides_the_failure(repro):
    """No fullgraph=False, suppress_errors, TORCHDYNAMO_DISABLE or force_eager in any plan."""
    for log in sorted(RAW.glob("*.log")):
        p = cl("fix", str(log), "--format", "json", cwd=repro)
        if p.returncode != 0 or not p.stdout.strip():
            continue
        doc = json.loads(p.stdout)
        added = "\n".join(ln for ln in doc.get("diff", "").splitlines() if ln.startswith("+"))
        for bad in ("fullgraph=False", "suppress_errors", "TORCHDYNAMO_DISABLE", "force_eager"):
            assert bad not in added, (log.name, bad)


def test_the_line_moved_in_the_installed_version(repro):
    f = repro / "fp4_rounds.py"
    f.write_text("# one line more at the top\n" + f.read_text())
    p = cl("fix", str(RAW / "fp4-round-1.log"), cwd=repro)
    assert p.returncode == 0, p.stderr
    assert "installed version differs" in p.stderr and "fp4_rounds.py:100" in p.stderr


def test_the_line_is_gone_in_the_installed_version(repro):
    f = repro / "fp4_rounds.py"
    f.write_text(f.read_text().replace("x_fp4, x_sf = fakeinfer.fp4_quantize(x, input_scale_inv)",
                                       "x_fp4, x_sf = fakeinfer.nvfp4_quantize(x, input_scale_inv)"))
    p = cl("fix", str(RAW / "fp4-round-1.log"), cwd=repro)
    assert p.returncode == 1
    assert "installed version differs" in p.stderr and "quantize_block" in p.stderr


def test_fix_usage_errors(repro, tmp_path):
    assert cl("fix", cwd=repro).returncode == 2
    p = cl("fix", str(tmp_path / "missing.log"), cwd=repro)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
    ok = tmp_path / "ok.log"
    ok.write_text("server started\nall good\n")
    p = cl("fix", str(ok), cwd=repro)
    assert p.returncode == 0 and "nothing to fix" in p.stderr
    assert cl("fix", "--revert", cwd=repro).returncode == 0  # nothing to revert is not an error


# --- crashlens run ------------------------------------------------------------------------------------

# A stand-in for `python fp4_rounds.py`: it replays the recorded round-1 crash until the call site calls
# the shim, then prints what the compiled program would. TORCHDYNAMO_DISABLE=1 (the eager check) runs.
REPLAY = textwrap.dedent('''
    import os, sys
    here = os.path.dirname(os.path.abspath(__file__))
    src = open(os.path.join(here, "fp4_rounds.py")).read()
    if os.environ.get("TORCHDYNAMO_DISABLE") == "1" and not os.environ.get("FAILS_IN_EAGER"):
        print("eager fp4 path ran: 146948.0")
        sys.exit(0)
    if "_crashlens_fp4_rounds_fp4_quantize.fp4_quantize(x, input_scale_inv)" in src:
        print("compiled fp4 path ran: 146948.0")
        sys.exit(0)
    sys.stdout.write(open(sys.argv[1], encoding="utf-8").read())
    sys.exit(1)
''')


@pytest.fixture
def replay(repro):
    (repro / "replay.py").write_text(REPLAY)
    return [sys.executable, "replay.py", str(RAW / "fp4-round-1.log")]


def test_run_fix_converges_after_one_fix_at_the_entry_point(repro, replay):
    before = tree_digest(repro)
    p = cl("run", "--fix", "--", *replay, cwd=repro)
    assert p.returncode == 0, p.stderr
    # the command's output passes through unchanged: round 1's crash, then round 2's success
    recorded = (RAW / "fp4-round-1.log").read_text()
    assert p.stdout == recorded + "compiled fp4 path ran: 146948.0\n"
    err = p.stderr
    assert "round 1: exit 1, crash subprocess-thread-lock" in err
    assert "fix: custom-op" in err and "changed fp4_rounds.py" in err
    assert "round 2: exit 0" in err and "converged" in err
    assert (repro / "_crashlens_fp4_rounds_fp4_quantize.py").exists()
    assert cl("fix", "--revert", cwd=repro).returncode == 0
    assert tree_digest(repro) == before


def test_run_json_trail_has_rounds(repro, replay):
    p = cl("run", "--fix", "--format", "json", "--", *replay, cwd=repro)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)  # stdout is the document; the command's output went to stderr
    assert doc["schema"] == "crashlens/v1" and doc["converged"] is True and doc["exit_code"] == 0
    assert [r["outcome"] for r in doc["rounds"]] == ["fixed", "converged"]
    r1 = doc["rounds"][0]
    assert r1["crash"]["signature"] == "subprocess-thread-lock"
    assert r1["crash"]["culprit"]["function"] == "get_cuda_version"
    assert r1["fix"]["kind"] == "custom-op"
    assert sorted(Path(f).name for f in r1["fix"]["files"]) == ["_crashlens_fp4_rounds_fp4_quantize.py", "fp4_rounds.py"]
    assert doc["eager_check"] == "passes"
    assert "Attempted to call function marked as skipped" in p.stderr


def test_run_changes_nothing_when_the_program_fails_in_eager_too(repro, replay):
    before = tree_digest(repro)
    p = cl("run", "--fix", "--format", "json", "--", *replay, cwd=repro, env={"FAILS_IN_EAGER": "1"})
    assert p.returncode == 1
    doc = json.loads(p.stdout)
    assert doc["eager_check"] == "fails"
    assert doc["rounds"][-1]["outcome"] == "needs-a-person"
    assert "without torch.compile too" in doc["rounds"][-1]["reason"]
    assert tree_digest(repro) == before and not (repro / ".crashlens").exists()


def test_run_without_fix_reports_and_exits_1(repro, replay):
    before = tree_digest(repro)
    p = cl("run", "--", *replay, cwd=repro)
    assert p.returncode == 1
    assert "crashed" in p.stderr and "--fix" in p.stderr
    assert tree_digest(repro) == before


def test_run_stops_when_the_same_crash_comes_back(repro):
    # a stand-in that crashes the same way whatever is changed: one fix, then "it did not help"
    (repro / "always.py").write_text(textwrap.dedent('''
        import os, sys
        if os.environ.get("TORCHDYNAMO_DISABLE") == "1":
            sys.exit(0)
        sys.stdout.write(open(sys.argv[1], encoding="utf-8").read())
        sys.exit(1)
    '''))
    p = cl("run", "--fix", "--rounds", "3", "--format", "json", "--", sys.executable, "always.py",
           str(RAW / "fp4-round-1.log"), cwd=repro)
    assert p.returncode == 1
    doc = json.loads(p.stdout)
    assert [r["outcome"] for r in doc["rounds"]] == ["fixed", "needs-a-person"]
    assert "did not help" in doc["rounds"][-1]["reason"]
    assert cl("fix", "--revert", cwd=repro).returncode == 0


def test_run_exit_codes_for_a_clean_command_and_usage(repro):
    p = cl("run", "--", sys.executable, "-c", "print('hello')", cwd=repro)
    assert p.returncode == 0 and p.stdout == "hello\n"
    assert cl("run", cwd=repro).returncode == 2
    p = cl("run", "--", str(repro / "no-such-program"), cwd=repro)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.splitlines()[-1].startswith("crashlens: ") and "cannot run" in p.stderr


def test_ctrl_c_stops_the_command_and_leaves_changes_revertible(repro):
    import signal
    import time

    (repro / "slow.py").write_text("import time, sys\nprint('started', flush=True)\ntime.sleep(60)\n")
    e = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.Popen([*crashlens_exe(), "run", "--fix", "--", sys.executable, "slow.py"], cwd=repro,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)
    assert proc.stdout is not None
    assert proc.stdout.readline() == "started\n"
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "interrupted" in err and "Traceback" not in err


def test_an_unannotated_entry_takes_the_return_type_of_what_it_returns(repro):
    """nvfp4_quantize has no annotation and returns fp4_quantize(...): the op returns its (Tensor, Tensor)."""
    p = cl("fix", str(SAMPLES / "fix" / "fp4-layer-cold.log"), cwd=repro)
    assert p.returncode == 0, p.stderr
    assert "--- a/models/fp4_layer_cold.py" in p.stdout
    assert "-> (Tensor, Tensor)\")" in p.stdout
    assert "DERIVED" in p.stdout  # no shape rule for nvfp4_quantize: the shim says its fake is derived


def test_fix_from_an_eight_rank_sglang_log_patches_the_server_call_site(repro):
    """A framed server log (8 ranks interleaved, ANSI, CRLF): the one crash, fixed where fakeserve calls FP4."""
    p = cl("fix", str(SAMPLES / "sglang-8rank-pcg-fp4.log"), cwd=repro)
    assert p.returncode == 0, p.stderr
    assert "+++ b/fakeserve/layers/quantization/modelopt_quant.py" in p.stdout
    assert "+from . import _crashlens_modelopt_quant_fp4_quantize" in p.stdout  # a package: relative import
    assert "+++ b/fakeserve/layers/quantization/_crashlens_modelopt_quant_fp4_quantize.py" in p.stdout


def test_run_stopped_by_sigterm_stops_the_command_and_writes_its_trail(tmp_path: Path) -> None:
    """docker/Kubernetes/systemd stop `crashlens run` with SIGTERM: the command is stopped with it, the JSON
    trail is still written, and the exit code says SIGTERM (143), as for watch and --follow."""
    import signal
    import time

    from conftest import crashlens_exe

    pidfile = tmp_path / "pid"
    child = tmp_path / "serve.py"
    child.write_text("import os, time\n"
                     f"open({str(pidfile)!r}, 'w').write(str(os.getpid()))\n"
                     "print('serving', flush=True)\n"
                     "time.sleep(120)\n", encoding="utf-8")
    p = subprocess.Popen([*crashlens_exe(), "run", "--format", "json", "--", sys.executable, str(child)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    deadline = time.monotonic() + 60
    while not (pidfile.exists() and pidfile.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pidfile.exists(), "the command did not start"
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 143, err.decode()
    doc = json.loads(out)
    assert doc["schema"] == "crashlens/v1" and doc["rounds"][-1]["outcome"] == "interrupted"
    with pytest.raises(ProcessLookupError):
        os.kill(int(pidfile.read_text()), 0)  # stopped and reaped, not left running
