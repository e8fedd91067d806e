"""`crashlens run -- CMD` reports each crash as it is diagnosed, while CMD still runs, as `--follow` does;
without torch: stand-in commands that replay recorded crashes (samples/raw), in a copy of the reproducer tree."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

from conftest import SAMPLES, crashlens_exe

RAW = SAMPLES / "raw"
PANEL_END = "fatal · subprocess-thread-lock"  # the foot of the live report's panel for the FP4 chain's crash

# A stand-in for `python fp4_rounds.py`: it prints the recorded round-1 crash and then waits, still running,
# until the test creates `go`; with the shim called at the entry point it prints the compiled result.
HOLD = textwrap.dedent('''
    import os, sys, time
    src = open("fp4_rounds.py").read()
    if os.environ.get("TORCHDYNAMO_DISABLE") == "1":
        print("eager fp4 path ran: 146948.0")
        sys.exit(0)
    if "_crashlens_fp4_rounds_fp4_quantize.fp4_quantize(x, input_scale_inv)" in src:
        print("compiled fp4 path ran: 146948.0")
        sys.exit(0)
    sys.stdout.write(open(sys.argv[1], encoding="utf-8").read())
    sys.stdout.flush()
    deadline = time.monotonic() + 60
    while not os.path.exists("go") and time.monotonic() < deadline:
        time.sleep(0.05)
    sys.exit(1)
''')

def _env() -> dict[str, str]:
    return {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}


def _lines_of(stream: object, into: queue.Queue[str | None]) -> threading.Thread:
    def pump() -> None:
        for line in stream:  # type: ignore[attr-defined]
            into.put(line)
        into.put(None)

    t = threading.Thread(target=pump, daemon=True)
    t.start()
    return t


def test_run_reports_the_crash_while_the_command_still_runs_and_keeps_the_trail(repro: Path) -> None:
    (repro / "hold.py").write_text(HOLD)
    log = RAW / "fp4-round-1.log"
    proc = subprocess.Popen([*crashlens_exe(), "run", "--fix", "--", sys.executable, "hold.py", str(log)],
                            cwd=repro, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    err: queue.Queue[str | None] = queue.Queue()
    out: queue.Queue[str | None] = queue.Queue()
    threads = [_lines_of(proc.stderr, err), _lines_of(proc.stdout, out)]
    seen: list[str] = []
    deadline = time.monotonic() + 90
    try:
        while not any(PANEL_END in ln for ln in seen):
            assert time.monotonic() < deadline, "no live report: " + "".join(seen)
            try:
                line = err.get(timeout=1)
            except queue.Empty:
                continue
            assert line is not None, "crashlens ended before reporting: " + "".join(seen)
            seen.append(line)
        # the report came while the command is still waiting for `go`: diagnosed as it came, not at exit
        assert proc.poll() is None and not (repro / "go").exists()
        live = "".join(seen)
        assert "crashlens run: round 1: " in live
        assert "round 1: #1 new" in live  # the round the crash is in
        assert "Culprit  fakeinfer/jit/cpp_ext.py:37 in get_cuda_version" in live
        assert "crashlens run: trail" not in live  # the trail comes at the end
    finally:
        (repro / "go").write_text("")
    assert proc.wait(timeout=120) == 0
    for t in threads:
        t.join(timeout=30)
    rest: list[str] = []
    while (line := err.get()) is not None:
        rest.append(line)
    stderr = "".join(seen + rest)
    stdout = "".join(iter(out.get, None))
    # the command's output passed through unchanged: round 1's crash, round 2's result; no report in it
    assert stdout == log.read_text() + "compiled fp4 path ran: 146948.0\n"
    assert stderr.count(PANEL_END) == 1  # one report of the crash, not a second one at the end
    trail = stderr.split("crashlens run: trail", 1)[1]
    assert "round 1: exit 1, crash subprocess-thread-lock" in trail and "fix: custom-op" in trail
    assert "round 2: exit 0" in trail and "converged" in trail


def test_a_crash_that_comes_back_after_the_fix_is_reported_again(repro: Path) -> None:
    """The same crash in the next launch: reported as `again` in round 2, its panel not repeated."""
    (repro / "always.py").write_text(textwrap.dedent('''
        import os, sys
        if os.environ.get("TORCHDYNAMO_DISABLE") == "1":
            sys.exit(0)
        sys.stdout.write(open(sys.argv[1], encoding="utf-8").read())
        sys.exit(1)
    '''))
    p = subprocess.run([*crashlens_exe(), "run", "--fix", "--", sys.executable, "always.py",
                        str(RAW / "fp4-round-1.log")], cwd=repro, capture_output=True, text=True, env=_env(),
                       timeout=120)
    assert p.returncode == 1
    live = p.stderr.split("crashlens run: trail", 1)[0]
    assert "round 1: #1 new" in live
    r2 = live.split("crashlens run: round 2: ", 1)[1]
    assert "round 2: #1 again: the last change did not help" in r2
    assert live.count(PANEL_END) == 1
    assert "did not help" in p.stderr.split("crashlens run: trail", 1)[1]


def test_the_next_blocker_after_a_fix_is_reported_as_the_next_round_with_what_is_gone(repro: Path) -> None:
    """Round 1 the FP4 chain; once its fix is in, round 2 crashes on a print in another file (the recorded
    print-call crash); once that is guarded, round 3 runs clean. Each crash is reported as it comes."""
    (repro / "chain.py").write_text(textwrap.dedent('''
        import os, sys
        if os.environ.get("TORCHDYNAMO_DISABLE") == "1":
            print("eager ran")
            sys.exit(0)
        fp4 = "_crashlens_fp4_rounds_fp4_quantize.fp4_quantize(" in open("fp4_rounds.py").read()
        guarded = "is_compiling()" in open(os.path.join("scenarios", "print_call.py")).read()
        if fp4 and guarded:
            print("compiled ran")
            sys.exit(0)
        log = sys.argv[2] if fp4 else sys.argv[1]
        sys.stdout.write(open(log, encoding="utf-8").read())
        sys.exit(1)
    '''))
    p = subprocess.run([*crashlens_exe(), "run", "--fix", "--", sys.executable, "chain.py",
                        str(RAW / "fp4-round-1.log"), str(RAW / "print-call.log")],
                       cwd=repro, capture_output=True, text=True, env=_env(), timeout=180)
    assert p.returncode == 0, p.stderr[-3000:]
    live, trail = p.stderr.split("crashlens run: trail", 1)
    r2 = live.split("crashlens run: round 2: ", 1)[1].split("crashlens run: round 3: ", 1)[0]
    assert "round 2: #1 gone · #2 new" in r2
    assert "print" in r2.split("round 2: #1 gone · #2 new", 1)[1].split("\n", 2)[1].lower()  # #2's panel title
    assert "round 3:" in trail and "converged" in trail
    assert p.stdout.endswith("compiled ran\n")


def test_the_live_report_names_the_next_blockers_of_the_library_the_command_loaded(repro: Path) -> None:
    """`run`'s panel has the scan panel's "Next in this chain": found statically in the culprit library's
    copy that the command ran (here the reproducer tree's FlashInfer-like package, on no interpreter's path),
    so the engineer sees the JIT loader's stat and lock before the next restart. The stand-in replays the
    recorded crash as this copy of the tree would print it (its paths rewritten to the copy)."""
    (repro / "always.py").write_text(textwrap.dedent('''
        import os, sys
        if os.environ.get("TORCHDYNAMO_DISABLE") == "1":
            sys.exit(0)
        sys.stdout.write(open(sys.argv[1], encoding="utf-8").read())
        sys.exit(1)
    '''))
    recorded = (RAW / "fp4-round-1.log").read_text(encoding="utf-8")
    (repro / "r1.log").write_text(recorded.replace("/work/main/samples/repro/", f"{repro}/"), encoding="utf-8")
    p = subprocess.run([*crashlens_exe(), "run", "--", sys.executable, "always.py", "r1.log"], cwd=repro,
                       capture_output=True, text=True, env=_env(), timeout=120)
    assert p.returncode == 1
    live = p.stderr.split("crashlens run: trail", 1)[0]
    assert live.count("Next in this chain") == 1
    nxt = live.split("Next in this chain", 1)[1]
    assert "jit/core.py" in nxt and "(filesystem)" in nxt and "jit/filelock.py" in nxt and "(lock)" in nxt
