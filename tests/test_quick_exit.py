"""A fast-path scan run as the console script ends without the interpreter's teardown (cli.console, cli._exit):
nothing it writes or keeps is lost, and a program that calls main() keeps control."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import SAMPLES, crashlens_exe, run_cli

from crashlens.cli import main

LOG = SAMPLES / "sglang-1rank-pcg-fp4.log"  # one fatal crash


def _in_process(capsys, *args: str) -> tuple[int, str]:
    try:
        rc = main(list(args))
    except SystemExit as e:
        rc = e.code
    return rc, capsys.readouterr().out


def test_the_console_script_writes_its_whole_report_and_keeps_its_caches(tmp_path, capsys) -> None:
    """Through a pipe, a big JSON report arrives whole, with the exit code a crash gives, and the caches
    crashlens keeps between runs (atexit writes them) are there for the next run."""
    want_rc, want = _in_process(capsys, "scan", "--format", "json", str(LOG))
    p = run_cli("scan", "--format", "json", str(LOG), env={"XDG_CACHE_HOME": str(tmp_path)})
    assert p.returncode == want_rc == 1, p.stderr
    assert p.stdout.decode() == want and json.loads(p.stdout)["diagnoses"]
    kept = sorted(f.name.split("-")[0] for f in (tmp_path / "crashlens").iterdir())
    assert {"catalog", "re", "regex"} <= set(kept), kept
    again = run_cli("scan", "--format", "json", str(LOG), env={"XDG_CACHE_HOME": str(tmp_path)})
    assert again.returncode == 1 and again.stdout == p.stdout


def test_a_reader_that_leaves_early_gives_one_exit_code() -> None:
    """`crashlens LOG | head -1`: the same exit code every time, and no traceback."""
    codes = set()
    for _ in range(4):
        p = subprocess.Popen([*crashlens_exe(), str(LOG)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert p.stdout is not None and p.stderr is not None
        p.stdout.readline()
        p.stdout.close()
        err = p.stderr.read()
        codes.add(p.wait(timeout=60))
        assert b"Traceback" not in err
    assert len(codes) == 1, codes


def test_a_caller_of_main_gets_control_back() -> None:
    """Only the console script (cli.console) skips the teardown: a program that calls main(), with the
    command line in sys.argv as the script has it, gets control back after it, as before."""
    code = ("import sys\nfrom crashlens.cli import main\n"
            f"sys.argv = ['crashlens', 'scan', '--format', 'json', {str(LOG)!r}]\n"
            "try:\n    main()\nexcept SystemExit as e:\n    print('EXIT', e.code, file=sys.stderr)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    assert p.stderr.decode().strip().endswith("EXIT 1"), p.stderr
    assert json.loads(p.stdout)["diagnoses"]
