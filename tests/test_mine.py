"""`crashlens mine`: many logs in, one group per distinct crash out, with what a fleet owner reads."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES, run_cli

sys.path.insert(0, str(ROOT / "benchmarks"))


def _mine_json(*args: str) -> dict:
    p = run_cli("mine", "--format", "json", *args)
    assert p.returncode == 0, p.stderr.decode()
    return json.loads(p.stdout)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    import gen_fleet

    out = tmp_path_factory.mktemp("fleet")
    doc = gen_fleet.fleet(str(out), files=24, size=40_000, crashes=3, seed=7)
    return out, doc


def test_fleet_groups_count_every_buried_crash_once(fleet):
    out, doc = fleet
    got = _mine_json("--all", str(out))
    counts = {g["id"]: g["count"] for g in got["groups"]}
    assert counts == doc["expected"]
    assert got["crashes"] == sum(doc["expected"].values())
    assert got["files"] == 24


def test_groups_say_where_and_when(fleet):
    out, _ = fleet
    got = _mine_json("--all", "-j", "1", str(out))
    for g in got["groups"]:
        assert g["sources"] and all(Path(s).exists() for s in g["sources"])
        assert g["first_seen"]["time"] is not None  # the scheduler's prefix, or the line before the crash
        assert (g["first_seen"]["time"], g["first_seen"]["source"]) <= (g["last_seen"]["time"], g["last_seen"]["source"])
        src = Path(g["example"]["source"])
        assert src.exists() and g["example"]["line"] >= 1
    # most frequent first
    assert [g["count"] for g in got["groups"]] == sorted((g["count"] for g in got["groups"]), reverse=True)


def test_jobs_do_not_change_the_groups(fleet):
    out, _ = fleet
    one = _mine_json("--all", "-j", "1", str(out))
    two = _mine_json("--all", "-j", "2", str(out))
    assert one["groups"] == two["groups"]


def test_copies_in_ranks_and_re_raises_are_one_crash(tmp_path):
    # the 8-rank recording: every rank prints the traceback, SGLang re-raises it: one crash, eight ranks
    for i in range(3):
        (tmp_path / f"node{i}.log").write_bytes((SAMPLES / "sglang-8rank-pcg-fp4.log").read_bytes())
    got = _mine_json("--all", str(tmp_path))
    (g,) = got["groups"]
    assert g["signature"] == "subprocess-thread-lock" and g["count"] == 3
    assert {f"TP{r}" for r in range(8)} <= set(g["ranks"])
    assert len(g["sources"]) == 3
    assert g["first_seen"]["time"] == "2026-04-16T10:57:20" or g["first_seen"]["time"].startswith("2026-04-16")


def test_unknown_only_by_default_and_gz_read(tmp_path):
    raw = (SAMPLES / "raw" / "runtime-error-in-compiled.log").read_bytes()
    known = (SAMPLES / "raw" / "print-call.log").read_bytes()
    (tmp_path / "a.log").write_bytes(raw)
    with gzip.open(tmp_path / "b.log.gz", "wb") as fh:
        fh.write(raw)
    (tmp_path / "c.log").write_bytes(known)
    got = _mine_json(str(tmp_path))
    assert [g["signature"] for g in got["groups"]] == ["unknown"]
    assert got["groups"][0]["count"] == 2 and got["hidden_known"] == 1
    assert sorted(Path(s).name for s in got["groups"][0]["sources"]) == ["a.log", "b.log.gz"]


def test_truncated_gz_is_read_up_to_the_cut_with_a_warning(tmp_path):
    raw = (SAMPLES / "raw" / "runtime-error-in-compiled.log").read_bytes()
    filler = b"".join(b"[2026-04-16 10:23:%02d] INFO: 10.0.0.%d - \"POST /generate HTTP/1.1\" 200 OK\n" % (i % 60, i % 250)
                      for i in range(20000))
    data = gzip.compress(raw + filler + raw)
    (tmp_path / "cut.log.gz").write_bytes(data[: len(data) - 20])
    p = run_cli("mine", "--format", "json", str(tmp_path / "cut.log.gz"))
    assert p.returncode == 0
    assert b"cut.log.gz" in p.stderr and b"warning" in p.stderr
    assert json.loads(p.stdout)["groups"][0]["count"] >= 1


def test_csv_has_a_row_per_group_and_no_formula_from_log_text(tmp_path):
    raw = (SAMPLES / "raw" / "runtime-error-in-compiled.log").read_bytes()
    (tmp_path / "=cmd.log").write_bytes(raw)
    p = run_cli("mine", "--format", "csv", str(tmp_path / "=cmd.log"))
    import csv
    import io

    rows = list(csv.reader(io.StringIO(p.stdout.decode())))
    assert rows[0][:4] == ["id", "signature", "known", "count"]
    assert len(rows) == 2 and rows[1][3] == "1"
    assert not any(c.startswith("=") for c in rows[1])


def test_output_file_and_refusing_to_overwrite_an_input(tmp_path):
    raw = (SAMPLES / "raw" / "runtime-error-in-compiled.log").read_bytes()
    (tmp_path / "a.log").write_bytes(raw)
    p = run_cli("mine", str(tmp_path / "a.log"), "-o", str(tmp_path / "a.log"))
    assert p.returncode == 2 and b"refusing to overwrite" in p.stderr
    assert (tmp_path / "a.log").read_bytes() == raw
    p = run_cli("mine", "--format", "json", str(tmp_path / "a.log"), "-o", str(tmp_path / "out.json"))
    assert p.returncode == 0 and p.stdout == b""
    assert json.loads((tmp_path / "out.json").read_text())["schema"] == "crashlens/v1"


def test_missing_path_is_one_line_exit_2(tmp_path):
    p = run_cli("mine", str(tmp_path / "nope"))
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1


def test_ray_engine_without_ray_says_how_to_install(tmp_path, monkeypatch):
    (tmp_path / "a.log").write_bytes((SAMPLES / "raw" / "print-call.log").read_bytes())
    # a sitecustomize that hides ray, as a machine without the extra
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(
        "import sys\nclass _No:\n    def find_spec(self, name, *a, **k):\n"
        "        if name == 'ray' or name.startswith('ray.'):\n            raise ImportError('no ray')\n"
        "sys.meta_path.insert(0, _No())\n")
    import os

    env = {"PYTHONPATH": str(hide) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    p = run_cli("mine", "--engine", "ray", str(tmp_path / "a.log"), env=env)
    assert p.returncode == 2
    assert p.stderr.decode().strip() == "crashlens: --engine ray needs Ray: pip install 'crashlens[ray]'"


def test_signatures_new_drafts_a_signature_that_check_passes(tmp_path):
    raw = (SAMPLES / "raw" / "runtime-error-in-compiled.log").read_bytes()
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.log").write_bytes(raw)
    (logs / "b.log").write_bytes((SAMPLES / "raw" / "print-call.log").read_bytes())
    (gid,) = [g["id"] for g in _mine_json(str(logs))["groups"]]
    sigs = tmp_path / "sigs"
    sigs.mkdir()
    p = run_cli("signatures", "new", "--from", gid, str(logs), "-o", str(sigs / f"mined-{gid}.toml"))
    assert p.returncode == 0, p.stderr.decode()
    p = run_cli("signatures", "check", "--signatures", str(sigs))
    assert p.returncode == 0, p.stdout.decode()
    # with it, the crash is known: mine no longer lists it
    assert _mine_json("--signatures", str(sigs), str(logs))["groups"] == []
    p = run_cli("signatures", "new", "--from", "0000000000000000", str(logs))
    assert p.returncode == 2 and b"no group" in p.stderr


def test_stub_from_a_pipe_is_not_wrapped_and_passes_check(tmp_path):
    raw = (SAMPLES / "raw" / "runtime-error-in-compiled.log").read_bytes()
    (tmp_path / "a.log").write_bytes(raw)
    p = run_cli("mine", "--stub", str(tmp_path / "a.log"), env={"COLUMNS": "40"})
    text = p.stdout.decode()
    stub = text[text.index("id = "):]
    sigs = tmp_path / "sigs"
    sigs.mkdir()
    (sigs / "stub.toml").write_text(stub)
    p = run_cli("signatures", "check", "--signatures", str(sigs))
    assert p.returncode == 0, p.stdout.decode()


def test_no_line_of_any_format_starts_a_workflow_command(tmp_path):
    # a crash message that is a GitHub workflow command, long enough to be wrapped at any width
    raw = (SAMPLES / "raw" / "runtime-error-in-compiled.log").read_text()
    hostile = raw.replace("IndexError: index out of range in self",
                          "IndexError: " + "x " * 30 + "::add-mask::secret ::error::boom " + "y " * 40)
    assert hostile != raw
    (tmp_path / "a.log").write_text(hostile)
    # and a message whose second line is one
    (tmp_path / "b.log").write_text(raw.replace("IndexError: index out of range in self",
                                                "IndexError: index out of range in self\n::add-mask::secret2"))
    for fmt in ("table", "json", "csv", "html"):
        for cols in ("40", "80", "120"):
            p = run_cli("mine", "--all", "--format", fmt, str(tmp_path), env={"COLUMNS": cols})
            assert p.returncode == 0
            for line in p.stdout.decode().splitlines():
                assert not line.lstrip().startswith("::"), (fmt, cols, line)


def test_ray_engine_gives_the_local_engines_groups(fleet):
    pytest.importorskip("ray", reason="Ray is not installed (pip install '.[ray]')")
    out, doc = fleet
    local = _mine_json("--all", str(out))
    p = run_cli("mine", "--format", "json", "--all", "--engine", "ray", str(out), timeout=300)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    ray = json.loads(p.stdout)
    assert ray["groups"] == local["groups"]
    assert {g["id"]: g["count"] for g in ray["groups"]} == doc["expected"]


def _lines(path: Path, n: int) -> str:
    return "".join(path.read_text().splitlines(keepends=True)[:n])


def test_a_log_cut_off_mid_traceback_counts_with_its_crash(tmp_path):
    rec = SAMPLES / "raw" / "print-call.log"
    (tmp_path / "a.log").write_bytes(rec.read_bytes())
    (tmp_path / "b.log").write_text(_lines(rec, 12))  # the same crash, the log cut before its exception line
    got = _mine_json("--all", str(tmp_path))
    (g,) = got["groups"]
    assert g["signature"] == "print-call" and g["count"] == 2 and len(g["sources"]) == 2
    assert len(g["merged_ids"]) == 1 and got["crashes"] == 2


def test_a_cut_copy_two_crashes_could_own_stays_apart(tmp_path):
    # only the launcher's frames survived: print-call's or time-call's, nobody can tell
    (tmp_path / "a.log").write_bytes((SAMPLES / "raw" / "print-call.log").read_bytes())
    (tmp_path / "b.log").write_bytes((SAMPLES / "raw" / "time-call.log").read_bytes())
    (tmp_path / "c.log").write_text(_lines(SAMPLES / "raw" / "print-call.log", 6))
    got = _mine_json("--all", str(tmp_path))
    assert sorted(g["signature"] for g in got["groups"]) == ["print-call", "time-call", "unknown"]
    assert got["crashes"] == 3


def test_near_duplicate_unknown_crashes_are_one_group(tmp_path):
    # FX names generated code <eval_with_key>.N with a counter that depends on what compiled before:
    # the same crash in two runs names two generated files, one message. (The culprit is the user's frame
    # above the generated code, so the ids agree already; where they did not, rapidfuzz would merge them.)
    raw = (SAMPLES / "raw" / "runtime-error-in-compiled.log").read_text()
    other = raw.replace("<eval_with_key>.1", "<eval_with_key>.3")
    assert other != raw
    (tmp_path / "a.log").write_text(raw)
    (tmp_path / "b.log").write_text(other)
    got = _mine_json(str(tmp_path))
    (g,) = got["groups"]
    assert g["count"] == 2 and len(g["merged_ids"]) <= 1 and len(g["sources"]) == 2
