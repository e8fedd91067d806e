"""`crashlens mine` counts server runs: a log appended to across restarts holds one crash per run that hit it,
and two runs' crashes never fold into one (recorded tracebacks, the generator's SGLang framing)."""

from __future__ import annotations

import json
import sys

from conftest import ROOT, SAMPLES, run_cli

sys.path.insert(0, str(ROOT / "benchmarks"))
import gen_log  # noqa: E402

RAW = SAMPLES / "raw"


def _mine(*paths: object) -> dict:
    p = run_cli("mine", "--all", "--format", "json", "-j", "1", *map(str, paths))
    assert p.returncode == 0, p.stderr.decode()
    return json.loads(p.stdout)


def _log(path, *runs: list[str]) -> None:
    """One server's log: its start-up, then each run's lines as the fleet generator buries a crash (as
    printed, then the restart: every rank's start-up line again, SGLang's argument banner not repeated)."""
    lines = list(gen_log.HEADER)
    for n, run in enumerate(runs):
        lines += gen_log.crash_block(gen_log.Crash("", "verbatim", 0), run, None, gen_log._ts(9 * 3600 + 60 * n))
    path.write_text("\n".join(lines) + "\n")


def _alone(tmp_path, sample: str) -> dict[str, int]:
    d = tmp_path / sample
    d.mkdir()
    _log(d / "alone.log", gen_log.sample_lines(RAW / sample))
    return {g["id"]: g["count"] for g in _mine(d)["groups"]}


def test_a_crash_in_two_runs_of_one_log_counts_twice(tmp_path):
    crash = gen_log.sample_lines(RAW / "print-call.log")
    _log(tmp_path / "server.log", crash, [], crash)  # a healthy run between them
    got = _mine(tmp_path / "server.log")
    (g,) = got["groups"]
    assert g["signature"] == "print-call" and g["count"] == 2 and got["crashes"] == 2
    assert sorted({s["round"] for s in g["timeline"]}) == [1, 2]


def test_two_runs_crashes_do_not_fold_into_one(tmp_path):
    # run 1 hits the recompile limit under fullgraph (a warning, then FailOnRecompileLimitHit); after the
    # restart, run 2 hits it without fullgraph: only the warning, the same line that announced run 1's error
    full = _alone(tmp_path, "recompile-limit.log")
    eager = _alone(tmp_path, "recompile-limit-nofullgraph.log")
    assert set(full).isdisjoint(eager)
    for first, second in (("recompile-limit.log", "recompile-limit-nofullgraph.log"),
                          ("recompile-limit-nofullgraph.log", "recompile-limit.log")):
        d = tmp_path / f"then-{second}"
        d.mkdir()
        _log(d / "server.log", gen_log.sample_lines(RAW / first), gen_log.sample_lines(RAW / second))
        got = _mine(d)
        assert {g["id"]: g["count"] for g in got["groups"]} == {**full, **eager}, first
        assert got["crashes"] == 2
