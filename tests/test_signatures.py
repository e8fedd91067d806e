"""The signature catalog: every example passes, every issue family is covered, fuzzy fallback and fixes behave."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import SAMPLES
from crashlens.catalog import _tomllib, get_catalog
from crashlens.pipeline import scan_lines
from crashlens.sigcheck import check_catalog, lint

tomllib = _tomllib()
RAW = SAMPLES / "raw"
RAW_LOGS = sorted(RAW.glob("*.log")) if RAW.is_dir() else []

# The families of issue 3 and the signature ids that cover them (one family may need several ids).
FAMILIES: dict[str, tuple[str, ...]] = {
    "thread locks and threading": ("thread-lock",),
    "subprocess": ("subprocess-thread-lock",),
    "os/posix file system and pathlib": ("filesystem-stat",),
    "builtin open and io": ("builtin-open",),
    "logging": ("logging-call",),
    "warnings.warn": ("warnings-warn",),
    "print and sys.stdout": ("print-call",),
    "time": ("time-call",),
    "random": ("random-call",),
    "os.environ": ("os-environ-write",),
    "hashlib, json, pickle": ("hashlib-json-pickle",),
    "inspect": ("inspect-signature",),
    "importlib": ("importlib-call",),
    "ctypes": ("ctypes-call",),
    "platform": ("platform-call",),
    "other stdlib modules under the skip rules": ("skipped-function", "skipped-torch-internal"),
    "functools.cache and lru_cache": ("functools-cache-traced",),
    "C-extension or pybind calls": ("c-extension-call",),
    "torch.cuda queries": ("torch-cuda-query", "cuda-unavailable"),
    "unsupported object construction": ("namespace-construction",),
    "data-dependent control flow": ("data-dependent-branch", "item-scalar"),
    "data-dependent symbolic shapes": ("data-dependent-shape",),
    "guard-creation errors": ("guard-creation-error",),
    "generators and unsupported iterators": ("generator",),
    "observed exception": ("observed-exception",),
    "setattr and mutation on modules": ("module-setattr",),
    "hook registration inside forward": ("hook-registration",),
    "unsupported context managers": ("unsupported-context-manager",),
    "custom ops without a fake/meta implementation": ("missing-fake-impl",),
    "InternalTorchDynamoError": ("internal-dynamo-error",),
    "BackendCompilerFailed": ("backend-compiler-failed", "custom-backend-raised"),
    "recompilation limits": ("recompile-limit",),
    "torch.compiler.disable under fullgraph": ("compiler-disable-fullgraph",),
    "CUDA graphs": ("cuda-graph-capture", "cuda-graph-runner-failed"),
    "CUDA out of memory (not dynamo)": ("cuda-oom",),
    "NCCL (not dynamo)": ("nccl-timeout",),
    "import errors (not dynamo)": ("import-error",),
    "generic fallback": ("dynamo-generic",),
}
NOT_DYNAMO = {"cuda-graph-capture": "cuda-graph", "cuda-graph-runner-failed": "cuda-graph", "cuda-oom": "oom",
              "nccl-timeout": "nccl", "import-error": "import"}


def scan(text: str):
    _n, diags = scan_lines("<test>", text.strip("\n").splitlines(), get_catalog())
    return diags


def test_every_example_passes_and_the_catalog_lints_clean():
    cat = get_catalog()
    failures = [r for r in check_catalog(cat) if not r.ok]
    assert not failures, "\n".join(f"{r.signature}[{r.example}]: {r.reason} ({r.origin})" for r in failures)
    assert lint(cat) == []


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_issue_family_has_a_signature(family):
    cat = get_catalog()
    for sig_id in FAMILIES[family]:
        sig = cat.get(sig_id)
        assert sig is not None, f"{family}: no signature {sig_id!r}"
        assert any(e.expect_match for e in sig.examples) and any(not e.expect_match for e in sig.examples)


def test_non_dynamo_failures_carry_their_own_family():
    cat = get_catalog()
    for sig_id, family in NOT_DYNAMO.items():
        assert cat.get(sig_id).family == family  # type: ignore[union-attr]


def test_more_specific_signatures_rank_first():
    cat = get_catalog()
    prio = {s.id: s.priority for s in cat.signatures}
    assert prio["subprocess-thread-lock"] > prio["thread-lock"] > prio["skipped-function"] > prio["dynamo-generic"]
    assert prio["filesystem-stat"] > prio["skipped-function"]


def test_dynamo_signatures_have_real_text_from_two_eras():
    """Wording differs between torch 2.1-2.6 and 2.7+; a signature that only knows one era misses the other."""
    cat = get_catalog()
    # autograd-function-fallback: the speculate_subgraph WARNING is 2.1-2.3's; 2.4+ log it at INFO only
    single_era_ok = {"dynamo-generic", "functools-cache-traced", "data-dependent-branch-inferred", "autograd-function-fallback"}
    for sig in cat.signatures:
        if sig.family != "dynamo" or sig.id in single_era_ok:
            continue
        eras = {e.era for e in sig.examples if e.expect_match}
        assert len(eras) >= 2, f"{sig.id}: positive examples from one era only: {eras}"


DRIFTED_LOGGING = '''
torch._dynamo.exc.Unsupported: Logger method call not supported outside export
  Explanation: Calls to Logger methods are not supported when compiling for non-export cases.
  Hint: Add the logging method to `torch._dynamo.config.ignore_logging_functions`.

  Developer debug context: method: warning

from user code:
   File "/srv/dyn/lib_helpers.py", line 35, in log_something
    logger.warning("hello %s", x.shape)
'''

EXACT_LOGGING = '''
torch._dynamo.exc.Unsupported: logging.Logger method not supported for non-export cases
  Explanation: logging.Logger methods are not supported for non-export cases.
  Hint: Add the logging method to `torch._dynamo.config.ignore_logging_functions`.

  Developer debug context: method: <Logger mylib (WARNING)>.warning, args: [ConstantVariable(str: 'hello %s'), SizeVariable(length=1)], kwargs: {}

from user code:
   File "/srv/dyn/lib_helpers.py", line 35, in log_something
    logger.warning("hello %s", x.shape)
'''


def test_drifted_structured_wording_gets_dynamos_own_hint_not_the_nearest_family():
    # An invented but plausible future rewording of GB0291. A 2.7+ message names its graph break type; one no
    # rule matches is not given the nearest wording's family (on torch's own registry that was wrong for 5 of
    # 8 such types: benchmarks/gb_coverage.py), and the break's own Hint line is the first fix instead.
    (exact,) = scan(EXACT_LOGGING)
    (near,) = scan(DRIFTED_LOGGING)
    assert exact.signature == "logging-call" and exact.near_match is None
    assert near.signature == "dynamo-generic" and near.near_match is None
    assert "torch._dynamo.config.ignore_logging_functions" in near.fixes[0].title
    assert near.culprit is not None and near.culprit.line == 35


def test_unknown_failure_still_names_the_culprit():
    (d,) = scan('''
torch._dynamo.exc.Unsupported: Quantum flux capacitor misaligned
  Explanation: Dynamo could not align the flux capacitor of object FluxThing.

  Developer debug context: flux(FluxThing)

from user code:
   File "/srv/app/model.py", line 12, in forward
    y = self.flux(x)
  File "/srv/app/flux.py", line 40, in flux
    return capacitor.align(x)
''')
    assert d.family == "dynamo"
    assert d.culprit is not None and d.culprit.file.endswith("flux.py") and d.culprit.line == 40
    assert d.fixes


def _positive_examples():
    cat = get_catalog()
    return [(s.id, i, e.text) for s in cat.signatures for i, e in enumerate(s.examples) if e.expect_match]


@pytest.mark.parametrize(("sig_id", "idx", "text"), _positive_examples(), ids=lambda v: str(v)[:40])
def test_first_fix_under_fullgraph_is_never_a_decorator(sig_id, idx, text):
    for d in scan(text):
        if d.context.fullgraph and d.fixes:
            assert d.fixes[0].kind != "decorate", f"{sig_id}[{idx}]: {d.fixes[0].title}"


@pytest.mark.skipif(not RAW_LOGS, reason="samples/raw is not recorded")
@pytest.mark.parametrize("log", RAW_LOGS, ids=[p.name for p in RAW_LOGS])
def test_recorded_samples_never_lead_with_a_decorator_under_fullgraph(log):
    diags = scan(log.read_text(errors="replace"))
    for d in diags:
        if d.context.fullgraph and d.fixes:
            assert d.fixes[0].kind != "decorate", f"{log.name}: {d.signature}: {d.fixes[0].title}"


def _sample_expectations() -> list[tuple[Path, str]]:
    exp = SAMPLES / "expected.toml"
    if not exp.is_file():
        return []
    cat = get_catalog()
    out = []
    for name, want in tomllib.loads(exp.read_text()).items():
        sig = want.get("signature")
        path = SAMPLES / name
        if name.startswith("raw/") and sig and cat.get(sig) and path.is_file():
            out.append((path, sig))
    return out


SAMPLE_EXPECTATIONS = _sample_expectations()


@pytest.mark.skipif(not SAMPLE_EXPECTATIONS, reason="samples/expected.toml or the raw samples are not present")
@pytest.mark.parametrize(("log", "sig_id"), SAMPLE_EXPECTATIONS, ids=[p.name for p, _ in SAMPLE_EXPECTATIONS])
def test_recorded_sample_is_named_by_its_signature(log, sig_id):
    if sig_id in KNOWN_SAMPLE_DISAGREEMENTS.get(log.name, ()):
        pytest.xfail(KNOWN_SAMPLE_DISAGREEMENTS[log.name][sig_id])
    found = [d.signature for d in scan(log.read_text(errors="replace"))]
    assert sig_id in found, f"{log.name}: want {sig_id}, got {found}"


# Where the recorded-sample expectation and the catalog disagree on purpose (reported to the lead).
KNOWN_SAMPLE_DISAGREEMENTS: dict[str, dict[str, str]] = {
}


def test_lint_compiles_every_shipped_pattern():
    """The shipped catalog compiles its patterns only when used; the lint must catch a broken one."""
    from crashlens.catalog import CatalogPattern, load_catalog
    from crashlens.sigcheck import lint

    cat = load_catalog()
    assert not [p for p in lint(cat) if "does not compile" in p]
    cat.callee_patterns.append(CatalogPattern("(?P<callee>unclosed", "shipped.toml: callee[99].pattern"))
    assert any("shipped.toml: callee[99].pattern" in p for p in lint(cat))


def _texts_with_crashes() -> list[str]:
    """Every example text of the catalog and every recorded sample log, whole."""
    from conftest import CORPUS

    cat = get_catalog([])
    texts = [ex.text for sig in cat.signatures for ex in sig.examples]
    logs = [*SAMPLES.glob("*.log"), *(SAMPLES / "raw").glob("*.log")]
    if CORPUS.is_dir():
        logs += CORPUS.glob("*.log")
    return texts + [p.read_text(encoding="utf-8", errors="replace") for p in logs]


def test_a_pattern_is_ruled_out_only_where_it_cannot_match():
    """Patterns are skipped (not even compiled) when a text lacks all of their required literals:
    every match of every shipped pattern on real text holds one of them, so skipping changes nothing."""
    from crashlens.literals import required_literals

    cat = get_catalog([])
    texts = _texts_with_crashes()
    checked = analysed = 0
    for pat in cat.patterns():
        needs = required_literals(pat.source)
        if not needs:
            continue
        analysed += 1
        for text in texts:
            for m in pat.rx.finditer(text):
                assert any(s in m.group(0) for s in needs), (pat.source, needs, m.group(0))
                checked += 1
    assert checked > 500 and analysed > 0.9 * len(cat.patterns())


@pytest.mark.parametrize(("pattern", "needs"), [
    (r"Attempted to call function marked as skipped", ("Attempted to call function marked as skipped",)),
    (r"foo(bar)?baz", ("foo",)), (r"ab+cdef", ("cdef",)), (r"x\.y\(z\)", ("x.y(z)",)),
    (r"hello?world", ("world",)), (r"abc{0,2}de", None), (r"ab{2}cde", ("cde",)), (r"a|bcd", None),
    (r"(?i)hello", None), (r"[abc]xyz\d+qrs", ("xyz",)), (r"ncclSystemError|ncclRemoteError",
    ("ncclSystemError", "ncclRemoteError")), (r"^(?:posix|nt|os)\.(?:putenv|unsetenv)$", ("putenv", "unsetenv")),
    (r"(?P<exception>CppCompileError)", ("CppCompileError",)), (r"(?:abc)?defg", ("defg",)),
    (r"(?=lookahead)x", None), (r"\x41bcd", None), (r"(?:^|\.)(?:lock|Lock)$", ("lock", "Lock")),
])
def test_required_literals_are_conservative(pattern, needs):
    from crashlens.literals import required_literals

    assert required_literals(pattern) == needs


def test_a_fact_line_is_passed_over_only_where_no_pattern_can_match():
    """The fast path looks only for lines holding a fact pattern's covering literals: every match of
    every shipped pattern (facts and all others, as a wider check of the analysis) on real text holds one."""
    from crashlens.literals import covering_literals

    cat = get_catalog([])
    texts = _texts_with_crashes()
    facts = [r.pattern for r in cat.facts]
    checked = analysed = 0
    for pat in [*facts, *cat.patterns()]:
        cover = covering_literals(pat.source)
        if not cover:
            continue
        analysed += 1
        for text in texts:
            for m in pat.rx.finditer(text):
                assert any(s in m.group(0) for s in cover), (pat.source, cover, m.group(0))
                checked += 1
    assert checked > 500 and analysed > 0.9 * len(cat.patterns())
    assert all(covering_literals(p.source) for p in facts)


@pytest.mark.parametrize(("pattern", "cover"), [
    (r"\btorch(?:==|\s+version:?\s*|: | )v?(?P<v>2\.\d+\.\d+)",  # `Init torch distributed` holds none
     ("version", "torch 2.", "version:", "torch v2.", "torch: 2.", "torch==2.", "torch: v2.", "torch==v2.")),
    (r"foo(bar)?baz", ("foobaz", "foobarbaz")), (r"x[ab]yz", ("xayz", "xbyz")), (r"abc(?:d|e+f)gh", ("abce", "abcdgh")),
    (r"abcdefghijklmnopq(?:=True|=False)", ("abcdefghijklmnopq=",)),  # a long shared head stands for them all
    (r"a|bcd", None), (r"(?i)hello", None), (r"ab", None), (r"h\u00e9llo", None), (r"\w+\s+\d+", None),
    (r"(?=lookahead)xyz", ("xyz",)), (r"ab{2}cde", ("abbcde",)), (r"(?:ab|cd)\.(?:ef|gh)", ("ab.ef", "ab.gh", "cd.ef", "cd.gh")),
])
def test_covering_literals(pattern, cover):
    from crashlens.literals import covering_literals

    assert covering_literals(pattern) == cover


def test_no_fix_in_the_catalog_only_hides_the_failure() -> None:
    """A fix never only hides a failure: no fix offers fullgraph=False, suppress_errors or
    TORCHDYNAMO_DISABLE as what to do (a detail may still say not to)."""
    import re

    from crashlens.catalog import get_catalog

    hides = re.compile(r"fullgraph\s*=\s*False|suppress_errors\s*=\s*True|TORCHDYNAMO_DISABLE\s*=\s*1")
    offered = [(s.id, f.title) for s in get_catalog([]).signatures for f in s.fixes if hides.search(f.title)]
    assert offered == []
