"""Fixes ranked by who can change what, in the torch the log shows (real recordings of samples/repro/issue13)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import SAMPLES
from crashlens.catalog import get_catalog
from crashlens.cli.scan import run_scan
from crashlens.diagnose import api_forms, render_template
from crashlens.records import Context

RAW = SAMPLES / "raw" / "issue13"
REPRO = SAMPLES / "repro" / "issue13"
VERSIONS = sorted(p.name for p in RAW.iterdir()) if RAW.is_dir() else []


def _log(version: str, case: str) -> Path:
    p = RAW / version / f"{case}.log"
    if not p.is_file():
        pytest.skip(f"no recording {p}")
    return p


def _dynamo(path: Path):
    return [d for d in run_scan((str(path),), (), audit=False).diagnoses if d.family == "dynamo"]


def _marker(marker: str) -> tuple[str, int]:
    for rel in ("cases.py", "site-packages/fakepkg/__init__.py"):
        for i, line in enumerate((REPRO / rel).read_text().splitlines(), 1):
            if re.search(rf"# expect: {re.escape(marker)}\s*$", line):
                return rel, i
    raise AssertionError(marker)


CULPRITS = {"tp-quantize": "tp-subprocess", "tp-flag": "tp-platform", "tp-lock": "tp-lock",
            "param-in-forward": "param-in-forward", "bincount": "bincount", "nonzero": "nonzero",
            "device-mismatch": "device-mismatch", "shape-mismatch": "shape-mismatch",
            "next-no-default": "next-no-default", "zip-strict": "zip-strict", "no-cuda": "no-cuda",
            "environ-read": "environ-read", "per-call-hash": "per-call-hash"}


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", sorted(CULPRITS))
def test_culprit_is_the_marked_line(version, case):
    path = _log(version, case)
    if "exit 0" in path.read_text().splitlines()[0]:
        pytest.skip("this torch compiles it")
    diags = _dynamo(path)
    assert diags, "not detected"
    rel, line = _marker(CULPRITS[case])
    assert diags[0].culprit is not None
    assert (diags[0].culprit.file.endswith(rel), diags[0].culprit.line) == (True, line)


@pytest.mark.parametrize("version", VERSIONS)
def test_third_party_culprit_gets_a_fix_the_user_can_make_first(version):
    (d,) = _dynamo(_log(version, "tp-quantize"))
    first = d.fixes[0]
    assert first.kind == "custom-op"
    assert first.file is not None and first.file.endswith("issue13/cases.py")  # the user's call site
    for f in d.fixes:
        if f.file and "site-packages/fakepkg/" in f.file:
            assert f.title.startswith("Library patch: "), f.title


@pytest.mark.parametrize("version", VERSIONS)
def test_no_enter_it_outside_for_a_lock_the_library_takes(version):
    (d,) = _dynamo(_log(version, "tp-lock"))
    assert not any("context manager outside" in f.title for f in d.fixes)
    assert d.fixes[0].kind == "custom-op"


@pytest.mark.parametrize("version", VERSIONS)
def test_a_flag_that_steers_python_is_moved_to_init_not_wrapped_in_an_op(version):
    path = _log(version, "tp-flag")
    if "exit 0" in path.read_text().splitlines()[0]:
        pytest.skip("this torch traces platform.machine")
    (d,) = _dynamo(path)
    assert "__init__" in d.fixes[0].title and d.fixes[0].file.endswith("issue13/cases.py")
    assert not any(f.kind == "custom-op" for f in d.fixes)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(("case", "kind"), [("no-cuda", "environment"), ("device-mismatch", "rewrite"),
                                            ("shape-mismatch", "rewrite"), ("next-no-default", "rewrite"),
                                            ("zip-strict", "rewrite")])
def test_failures_that_happen_in_eager_too_get_the_code_or_environment_fix_first(version, case, kind):
    diags = _dynamo(_log(version, case))
    assert diags
    d = diags[0]
    assert d.fixes[0].kind == kind, [f.title for f in d.fixes]
    assert not any(f.kind == "custom-op" for f in d.fixes[:1])
    assert d.signature != "missing-fake-impl"  # a plain torch op's error is not a missing fake kernel


@pytest.mark.parametrize("version", VERSIONS)
def test_per_call_data_is_never_computed_once(version):
    diags = _dynamo(_log(version, "per-call-hash"))
    assert diags
    assert "eager caller" in diags[0].fixes[0].title or "outside the compiled function" in diags[0].fixes[0].title
    assert not any(" once" in f.title for f in diags[0].fixes)
    assert not any(f.kind == "custom-op" for f in diags[0].fixes)


@pytest.mark.parametrize("version", VERSIONS)
def test_eager_traceback_calling_torch_cuda_is_no_dynamo_crash(version):
    assert _dynamo(_log(version, "eager-cuda")) == []


@pytest.mark.parametrize(("torch", "needle", "absent"), [
    ("2.13.0", "@torch.library.custom_op", "impl_abstract"),
    ("2.4.1", "register_fake", "impl_abstract"),
    ("2.3.1", "impl_abstract", "custom_op"),
    ("2.2.0", "impl_abstract", "register_fake"),
    ("2.1.2", '"Meta"', "impl_abstract"),
])
def test_custom_op_code_is_written_for_the_torch_in_the_log(torch, needle, absent):
    forms = api_forms(get_catalog(), Context(versions=(("torch", torch),)))
    assert needle in forms["api.custom_op"] and absent not in forms["api.custom_op"]
    want = "torch.compiler.is_compiling()" if tuple(map(int, torch.split(".")[:2])) >= (2, 3) \
        else "torch._dynamo.is_compiling()"
    assert forms["api.is_compiling"] == want


def test_without_a_version_the_code_says_what_each_release_needs():
    forms = api_forms(get_catalog(), Context())
    text = forms["api.custom_op"]
    assert "@torch.library.custom_op" in text and "2.4 or later" in text and '"Meta"' in text
    assert "2.3 or later" in forms["api.is_compiling"]


def test_a_missing_variable_reads_as_prose_never_as_a_placeholder():
    out = render_template("dynamo rejects `{callee}` below {culprit.where}; see {reason}", {})
    assert "{" not in out and "`" not in out
    assert "the call dynamo rejected" not in out


def test_recompile_limit_fatal_keeps_its_first_fix_without_the_reason():
    p = SAMPLES / "raw" / "recompile-limit.log"
    fatal = [d for d in _dynamo(p) if d.fatal]
    assert fatal and fatal[0].fixes[0].title.startswith("Stop the guard")
    assert all("{" not in f.title + f.detail for f in fatal[0].fixes)


def test_next_in_this_chain_is_said_once():
    """Two FlashInfer rules (fp4_quantize's and the JIT loader's) both know the next blockers: one note."""
    body = (SAMPLES / "raw" / "fakeserve-pcg-fp4.log").read_text(errors="replace")
    moved = body.replace("/work/main/samples/repro/fakeinfer/", "/usr/local/lib/python3.12/dist-packages/flashinfer/")
    from crashlens.pipeline import scan_lines

    _n, diags = scan_lines("x.log", moved.splitlines(), get_catalog())
    (d,) = [d for d in diags if d.fatal]
    assert sum(w.startswith("Next in this chain") for w in d.warnings) == 1


@pytest.mark.parametrize("version", VERSIONS)
def test_a_crash_suppress_errors_swallowed_is_not_fatal(version):
    """suppress_errors logs the exception under WARNING "WON'T CONVERT ... due to:" and the run goes on."""
    path = _log(version, "suppressed-backend")
    assert "exit 0" in path.read_text().splitlines()[0]
    diags = _dynamo(path)
    assert diags and not any(d.fatal for d in diags)
    if "# expect: suppressed-backend" in path.read_text():  # torch 2.1 prints no frame below dynamo's here
        rel, line = _marker("suppressed-backend")
        assert diags[0].culprit.file.endswith(rel) and diags[0].culprit.line == line


PASTES = Path(__file__).resolve().parent / "fixtures" / "pastes"
_SWITCH = "torch._dynamo.config.ignore_logger_methods.add("


@pytest.mark.parametrize("name,switch_first", [("logging-call.log", True), ("t24-logging-call.log", False)])
def test_dynamos_logger_switch_comes_first_in_the_torch_that_has_it(name, switch_first):
    # recorded on torch 2.13 (the switch exists: 2.6+) and 2.4 (it does not)
    (d,) = _dynamo(SAMPLES / "raw" / name)
    assert d.signature == "logging-call"
    titles = [f.title for f in d.fixes]
    assert (_SWITCH in titles[0]) is switch_first
    assert sum(_SWITCH in t for t in titles) == (1 if switch_first else 0)  # said once, never on 2.4
    if not switch_first:
        assert titles[0].startswith("Move the log call outside the compiled region")


def test_dynamos_logger_switch_comes_first_where_the_message_recommends_it(tmp_path):
    log = tmp_path / "paste.log"
    log.write_text("".join(ln + "\n" for ln in (PASTES / "sglang-19573-logger-hint.log").read_text().splitlines()
                           if not ln.startswith("#")))
    (d,) = _dynamo(log)
    titles = [f.title for f in d.fixes]
    assert d.signature == "logging-call" and _SWITCH in titles[0]
    assert sum(_SWITCH in t for t in titles) == 1


# The recorded corpus's raw runs (samples/corpus/raw/t<version>/<repro>.log.gz): there the library (fakeinfer)
# is a checkout beside the user's code (scenarios/), not an installed release.
CORPUS_RAW = SAMPLES / "corpus" / "raw"
CORPUS_VERSIONS = sorted(p.name for p in CORPUS_RAW.iterdir()) if CORPUS_RAW.is_dir() else []


def _corpus_log(version: str, repro: str) -> Path:
    p = CORPUS_RAW / version / f"{repro}.log.gz"
    if not p.is_file():
        pytest.skip(f"no recording {p}")
    return p


@pytest.mark.parametrize("version", CORPUS_VERSIONS)
@pytest.mark.parametrize("repro", ["lib-environ", "lib-time", "lib-logging"])
def test_a_library_checkout_the_user_calls_into_is_not_the_users_to_edit(version, repro):
    diags = _dynamo(_corpus_log(version, repro))
    if not diags:
        pytest.skip("this torch compiles it")
    d = diags[0]
    assert d.culprit is not None and d.culprit.file.endswith("fakeinfer/sampling.py")
    first = d.fixes[0]
    # first something the user does without editing fakeinfer: a custom op at their call site, or a
    # dynamo config switch
    assert first.kind in ("custom-op", "config"), [f.title for f in d.fixes]
    if first.kind == "custom-op":
        assert first.file is not None and first.file.endswith(f"scenarios/{repro.replace('-', '_')}.py")
    for f in d.fixes:
        if f.file == d.culprit.file and f.kind in ("precompute", "rewrite", "decorate"):
            assert f.title.startswith("Library patch: "), f.title


@pytest.mark.parametrize("version", CORPUS_VERSIONS)
@pytest.mark.parametrize(("repro", "file"), [("os-environ-read", "scenarios/os_environ_read.py"),
                                             ("time-call", "scenarios/time_call.py")])
def test_the_users_own_line_keeps_its_direct_fix_first(version, repro, file):
    diags = _dynamo(_corpus_log(version, repro))
    if not diags:
        pytest.skip("this torch compiles it")
    d = diags[0]
    assert d.culprit is not None and d.culprit.file.endswith(file)
    assert d.fixes[0].kind != "custom-op" and not d.fixes[0].title.startswith("Library patch: ")
    assert d.fixes[0].file is not None and d.fixes[0].file.endswith(file)


def test_a_crash_whose_log_lacks_every_fixs_values_still_gets_fixes_in_fallback_wording():
    # a real paste (pytorch#137411): dynamo's warning alone, no frames, no culprit, no version
    paste = SAMPLES / "pastes" / "case-033.log"
    if not paste.is_file():
        pytest.skip("no samples/pastes")
    (d,) = _dynamo(paste)
    assert d.culprit is None and d.fixes
    for f in d.fixes:
        assert "{" not in f.title + f.detail, f.title
    assert not any(f.kind == "flag" for f in d.fixes)  # a server flag is never guessed
