"""`crashlens audit`: a library's call chain in, every call dynamo will reject out, in tracing order."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from crashlens.audit import (
    BadEntrySpec,
    EntryNotFound,
    Finding,
    ModuleNotFound,
    audit,
    load_rules,
    next_blockers,
    rules_path,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
REPRO = REPO / "samples" / "repro"
TRUTH = REPRO / "audit_truth.toml"

# A small library shaped like FlashInfer's FP4 path: a cached getter that builds a JIT spec (the
# cuda-version check runs while its arguments are evaluated), a registry that stamps the time, a
# property that stats a file, a module-level lock, an environment write, an FFI loader, and a
# SimpleNamespace of inner functions whose call goes into the loaded module. `# blocker: NAME`
# marks the lines dynamo would stop at, in the order a trace meets them.
SYNTH = {
    "synthlib/__init__.py": "",
    "synthlib/ops.py": '''
        import functools
        import os
        from types import SimpleNamespace

        from .jit import build as _build
        from .jit.toolchain import is_version_at_least as at_least
        from . import helpers

        raise SystemExit("the audit must never import this module")


        @functools.cache
        def get_module(backend: str = "100"):
            spec = _build.Spec("op_" + backend, ["-DFP4" if at_least("12.8") else ""])
            lib = spec.build_and_load()

            def run(x):
                return lib.kernel(x)  # blocker: ffi-call

            return SimpleNamespace(run=run)  # blocker: namespace


        def entry(x):
            print("quantizing", x)  # blocker: print
            helpers.scale(x)
            return get_module().run(helpers.scale(x))
    ''',
    "synthlib/helpers.py": '''
        import os.path


        def scale(x):
            name = os.path.join("a", "b")  # traced fine: pure string function
            return x
    ''',
    "synthlib/jit/__init__.py": "from . import build\n",
    "synthlib/jit/toolchain.py": '''
        import functools
        import subprocess


        @functools.lru_cache(maxsize=None)
        def get_version():
            txt = subprocess.check_output(["nvcc", "--version"], text=True)  # blocker: subprocess
            return txt


        def is_version_at_least(v):
            return get_version() >= v
    ''',
    "synthlib/jit/build.py": '''
        import ctypes
        import os
        import threading
        from datetime import datetime
        from pathlib import Path

        _LOCK = threading.Lock()


        class Registry:
            def add(self, spec):
                spec.created = datetime.now()  # blocker: datetime


        registry = Registry()


        class Spec:
            def __init__(self, name, flags):
                self.name = name
                registry.add(self)

            @property
            def path(self) -> Path:
                return Path("/tmp/synth") / self.name

            @property
            def is_built(self):
                return self.path.exists()  # blocker: stat

            def build_and_load(self):
                if not self.is_built:
                    with _LOCK:  # blocker: lock
                        os.environ["SYNTH_BUILT"] = "1"  # blocker: environ
                return ctypes.CDLL(str(self.path))  # blocker: loader
    ''',
}


def _write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))


def _markers(root: Path, tag: str = "blocker") -> dict[str, tuple[str, int]]:
    found: dict[str, tuple[str, int]] = {}
    for path in sorted(root.rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if f"# {tag}: " in line:
                name = line.split(f"# {tag}: ", 1)[1].split()[0]
                found[name] = (path.relative_to(root).as_posix(), number)
    return found


@pytest.fixture()
def synthlib(tmp_path: Path) -> Path:
    _write_tree(tmp_path, SYNTH)
    return tmp_path


def _index_of(findings: list[Finding] | tuple[Finding, ...], relpath: str, line: int) -> int:
    for i, finding in enumerate(findings):
        if finding.relpath == relpath and line in (finding.lines or (finding.line,)):
            return i
    raise AssertionError(f"{relpath}:{line} not reported; got {[(f.relpath, f.line, f.call) for f in findings]}")


def _run_cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.run(
        [sys.executable, "-m", "crashlens.cli.audit", *args],
        check=False, capture_output=True, text=True, env=env, cwd=cwd, timeout=120,
    )


# ---------------------------------------------------------------------------------------- synthetic library


def test_every_blocker_is_reported_in_tracing_order(synthlib: Path) -> None:
    report = audit("synthlib.ops:entry", [str(synthlib)])
    expected = ["print", "subprocess", "datetime", "stat", "lock", "environ", "loader", "namespace", "ffi-call"]
    marks = _markers(synthlib)
    positions = [_index_of(report.findings, *marks[name]) for name in expected]
    assert positions == sorted(positions), [report.findings[p].call for p in positions]
    assert len(report.findings) == len(expected)  # nothing else: os.path.join is allowed, helpers are clean


def test_findings_say_what_and_why(synthlib: Path) -> None:
    report = audit("synthlib.ops:entry", [str(synthlib)])
    by_call = {f.call: f for f in report.findings}
    assert by_call["subprocess.check_output"].category == "subprocess"
    assert by_call["subprocess.check_output"].function == "get_version"
    assert by_call["self.path.exists"].category == "filesystem"
    assert by_call["datetime.now"].category == "time"
    assert by_call["with _LOCK"].category == "lock"
    assert by_call["os.environ['SYNTH_BUILT'] = ..."].category == "environ"
    assert by_call["SimpleNamespace"].category == "namespace"
    assert by_call["lib.kernel"].category == "ffi"
    assert by_call["print"].category == "logging"
    # the chain runs from the entry function to the call, like dynamo's `from user code:` block
    chain = by_call["subprocess.check_output"].chain
    assert [frame.function for frame in chain] == ["entry", "get_module", "is_version_at_least", "get_version"]
    assert chain[0].file.endswith("synthlib/ops.py")
    assert chain[-1].line == by_call["subprocess.check_output"].line
    # reached through functools.cache / lru_cache wrappers, which dynamo traces through
    assert by_call["subprocess.check_output"].via_cache


def test_the_target_is_never_imported(synthlib: Path) -> None:
    # ops.py raises SystemExit at import time; the audit reads it and never runs it
    report = audit("synthlib.ops:entry", [str(synthlib)])
    assert report.findings
    assert "synthlib" not in sys.modules and "synthlib.ops" not in sys.modules


def test_a_call_met_twice_is_reported_once(tmp_path: Path) -> None:
    _write_tree(tmp_path, {
        "twice/__init__.py": "",
        "twice/m.py": '''
            import time

            def stamp():
                return time.time()

            def entry():
                a = stamp()
                b = stamp()
                return time.perf_counter() + time.perf_counter()
        ''',
    })
    report = audit("twice.m:entry", [str(tmp_path)])
    assert [(f.call, f.line) for f in report.findings] == [("time.time", 4), ("time.perf_counter", 9)]


def test_methods_properties_and_module_objects_resolve(tmp_path: Path) -> None:
    _write_tree(tmp_path, {
        "objs/__init__.py": "from .impl import Service as Service\n",
        "objs/impl.py": '''
            import logging
            import random
            from pathlib import Path

            logger = logging.getLogger(__name__)


            class Base:
                def log(self, msg):
                    logger.warning(msg)


            class Service(Base):
                def __init__(self, root: Path):
                    self.root = root

                @property
                def ready(self) -> bool:
                    return (self.root / "ready").is_file()

                def run(self, x):
                    if self.ready:
                        self.log("ready")
                    return x * random.random()
        ''',
    })
    report = audit("objs:Service.run", [str(tmp_path)])
    assert [(f.category, f.function) for f in report.findings] == [
        ("filesystem", "ready"), ("logging", "log"), ("random", "run"),
    ]


def test_compiler_disable_and_custom_ops_stop_the_walk(tmp_path: Path) -> None:
    _write_tree(tmp_path, {
        "esc/__init__.py": "",
        "esc/m.py": '''
            import subprocess
            import torch

            @torch.compiler.disable
            def hidden():
                return subprocess.run(["true"])

            @torch.library.custom_op("esc::op", mutates_args=())
            def op(x: torch.Tensor) -> torch.Tensor:
                subprocess.run(["true"])
                return x

            def entry(x):
                hidden()
                return op(x)
        ''',
    })
    report = audit("esc.m:entry", [str(tmp_path)])
    assert [(f.category, f.call) for f in report.findings] == [("compiler-disable", "hidden")]


def test_a_guard_clause_shortcut_comes_after_the_main_path(tmp_path: Path) -> None:
    # `if prebuilt: return load()` is the special case; the trace of a JIT build meets the
    # fall-through first (FlashInfer's build_and_load: is_aot → FileLock → build → load)
    _write_tree(tmp_path, {
        "guard/__init__.py": "",
        "guard/m.py": '''
            import os
            import time

            def load():
                return os.stat("/x")

            def entry(prebuilt):
                if prebuilt:
                    return load()
                time.sleep(0)
                return load()
        ''',
    })
    report = audit("guard.m:entry", [str(tmp_path)])
    assert [f.call for f in report.findings] == ["time.sleep", "os.stat"]


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        ("synthlib.ops.entry", BadEntrySpec),
        ("synthlib.ops:", BadEntrySpec),
        ("synthlib.nothere:entry", ModuleNotFound),
        ("synthlib.ops:nothere", EntryNotFound),
    ],
)
def test_bad_requests_raise_typed_errors(synthlib: Path, spec: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        audit(spec, [str(synthlib)])


# ---------------------------------------------------------------------------------------- command line


def test_json_output_has_the_documented_shape(synthlib: Path) -> None:
    result = _run_cli("synthlib.ops:entry", "--site-packages", str(synthlib), "--format", "json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["schema"] == "crashlens/v1"
    assert data["entry"] == "synthlib.ops:entry"
    assert data["findings"]
    for item in data["findings"]:
        assert isinstance(item["file"], str) and os.path.isabs(item["file"])
        assert isinstance(item["line"], int)
        assert isinstance(item["function"], str) and isinstance(item["call"], str)
        assert isinstance(item["category"], str)
        assert item["chain"] and all(set(frame) == {"file", "line", "function"} for frame in item["chain"])
        assert set(item["fixes"]) == {"fullgraph", "non_fullgraph"}
    first = data["findings"][0]
    # under fullgraph only a custom op around the entry removes everything at once
    fullgraph = {fix["id"]: fix["removes"] for fix in first["fixes"]["fullgraph"]}
    assert fullgraph["custom-op-around-entry"] == "all"
    assert fullgraph["compiler-disable-fullgraph"] == "none"
    non_fullgraph = {fix["id"]: fix["removes"] for fix in first["fixes"]["non_fullgraph"]}
    assert non_fullgraph["compiler-disable-entry"] == "all"


def test_terminal_output_groups_by_file_and_names_fixes(synthlib: Path) -> None:
    result = _run_cli("synthlib.ops:entry", "--site-packages", str(synthlib))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "synthlib/jit/build.py" in out and "synthlib/jit/toolchain.py" in out
    assert out.count("synthlib/jit/build.py  (") == 1  # one heading per file
    assert "custom op around entry" in out
    assert "torch.compiler.disable on entry or get_version" in out
    assert "precompute through functools.cache" in out  # said not to help for the cached chain


def test_source_text_is_not_read_as_markup(tmp_path: Path) -> None:
    _write_tree(tmp_path, {
        "mk/__init__.py": "",
        "mk/m.py": '''
            def entry(d):
                print("[bold red]x[/]")
                return d["[red]k"]
        ''',
    })
    result = _run_cli("mk.m:entry", "--site-packages", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "print" in result.stdout


@pytest.mark.parametrize("spec", ["no-colon-here", "synthlib.nothere:entry", "synthlib.ops:nothere"])
def test_user_errors_are_one_line_and_exit_2(synthlib: Path, spec: str) -> None:
    result = _run_cli(spec, "--site-packages", str(synthlib))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_missing_site_packages_dir_is_a_user_error(tmp_path: Path) -> None:
    result = _run_cli("synthlib.ops:entry", "--site-packages", str(tmp_path / "nope"))
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------------------------------- diagnosis hook


def test_next_blockers_maps_a_logged_path_from_another_machine(synthlib: Path) -> None:
    marks = _markers(synthlib)
    logged = "/usr/local/lib/python3.12/dist-packages/synthlib/jit/toolchain.py"
    line = marks["subprocess"][1]
    outer = [("/usr/local/lib/python3.12/dist-packages/synthlib/ops.py", "entry", 20)]
    found = next_blockers(logged, "get_version", line, [str(synthlib)], outer_frames=outer)
    calls = [f.call for f in found]
    assert calls[0] == "datetime.now"  # the next one after the culprit
    assert "subprocess.check_output" not in calls
    assert calls[-1] == "lib.kernel"


def test_next_blockers_climbs_a_unique_caller_chain(synthlib: Path) -> None:
    logged = "/opt/venv/lib/python3.11/site-packages/synthlib/jit/build.py"
    line = _markers(synthlib)["stat"][1]
    found = next_blockers(logged, "is_built", line, [str(synthlib)])
    # is_built ← build_and_load ← get_module ← entry: the rest of that chain comes back
    assert [f.category for f in found][:2] == ["lock", "environ"]
    assert found[-1].call == "lib.kernel"


def test_next_blockers_is_empty_when_the_library_is_not_installed(tmp_path: Path) -> None:
    assert next_blockers("/usr/lib/python3/dist-packages/flashinfer/jit/cpp_ext.py", "get_cuda_version", 73,
                         [str(tmp_path)]) == []
    assert next_blockers("", "", None, [str(tmp_path)]) == []
    assert next_blockers("<frozen os>", "__setitem__", 685, None) == []


def test_finding_is_a_frozen_record(synthlib: Path) -> None:
    finding = audit("synthlib.ops:entry", [str(synthlib)]).findings[0]
    with pytest.raises(AttributeError):
        finding.line = 1  # type: ignore[misc]
    assert json.loads(json.dumps(finding.to_json()))["call"] == finding.call


def test_rules_are_data() -> None:
    path = rules_path()
    assert path.name == "rejected_calls.toml" and path.is_file()
    rules = load_rules()
    assert rules.match("subprocess.check_output") is not None
    assert rules.match("os.path.exists") is not None
    assert rules.match("os.path.join") is None
    assert rules.match("os.environ.get") is None
    assert rules.match("pathlib.Path.exists") is not None
    assert rules.match("torch.cuda.get_device_capability") is None


# ---------------------------------------------------------------------------------------- recorded truth


def _truth() -> dict[str, Any]:
    return tomllib.loads(TRUTH.read_text()) if TRUTH.is_file() else {}


def _marker_line(rel: str, marker: str) -> int:
    lines = (REPRO / rel).read_text().splitlines()
    hits = [i for i, ln in enumerate(lines, 1) if ln.rstrip().endswith(f"# expect: {marker}")]
    assert len(hits) == 1, (rel, marker, hits)
    return hits[0]


def _locate(findings: tuple[Finding, ...], file: str, line: int) -> int:
    for i, finding in enumerate(findings):
        if (finding.relpath.endswith(file) or file.endswith(finding.relpath)) and line in (finding.lines or (finding.line,)):
            return i
    raise AssertionError(f"truth blocker {file}:{line} not reported; got {[(f.relpath, f.line) for f in findings]}")


@pytest.mark.skipif(not _truth(), reason="samples/repro/audit_truth.toml is not present")
def test_reproducer_truth_from_real_runs_is_found_in_order() -> None:
    """audit_truth.toml lists, in tracing order, the blockers real torch.compile(fullgraph=True) runs
    met one restart at a time (samples/raw/fp4-round-N.log). One static audit must report them all."""
    truth = _truth()
    file, func = str(truth["entry"]).split(":")
    module = file[: -len(".py")].replace("/", ".")
    report = audit(f"{module}:{func}", [str(REPRO)])
    blockers = [(b["file"], _marker_line(b["file"], b["marker"]), b["category"]) for b in truth["blocker"]]
    assert len(blockers) >= 5
    positions = [_locate(report.findings, f, ln) for f, ln, _ in blockers]
    assert positions[0] == min(positions), "the first blocker tracing meets must be reported first"
    for (f, ln, category), pos in zip(blockers, positions):
        assert report.findings[pos].category == category, (f, ln, report.findings[pos].category, category)
    assert len(report.findings) <= 25


def test_reproducer_expect_markers_are_all_found() -> None:
    if not (REPRO / "fakeinfer").is_dir():
        pytest.skip("samples/repro/fakeinfer not present")
    report = audit("fakeinfer.quantization.fp4_quantization:fp4_quantize", [str(REPRO)])
    marks = _markers(REPRO / "fakeinfer", tag="expect")
    # sampling.py holds the recorded corpus's library culprits (samples/corpus), not blockers of the FP4 path
    marks = {name: where for name, where in marks.items() if where[0] != "sampling.py"}
    assert marks
    reported = {(f.relpath, n) for f in report.findings for n in (f.lines or (f.line,))}
    missing = [name for name, (rel, line) in marks.items() if (f"fakeinfer/{rel}", line) not in reported]
    assert not missing, missing
    assert len(report.findings) <= 25


# ---------------------------------------------------------------------------------------- real FlashInfer

FLASHINFER_SITE = os.environ.get("CRASHLENS_AUDIT_FLASHINFER_SITE", "")


@pytest.mark.skipif(not FLASHINFER_SITE, reason="set CRASHLENS_AUDIT_FLASHINFER_SITE to an unpacked flashinfer 0.6.6 wheel")
def test_flashinfer_066_fp4_quantize_matches_the_gpu_run() -> None:
    started = time.perf_counter()
    report = audit("flashinfer.fp4_quantization:fp4_quantize", [FLASHINFER_SITE])
    assert time.perf_counter() - started < 10
    truth = [
        ("flashinfer/jit/cpp_ext.py", 73),
        ("flashinfer/jit/core.py", 171),
        ("flashinfer/jit/core.py", 261),
        ("flashinfer/fp4_quantization.py", 633),
        ("flashinfer/fp4_quantization.py", 215),
    ]
    positions = [_locate(report.findings, file, line) for file, line in truth]
    assert positions == sorted(positions)
    assert len(report.findings) <= 25
