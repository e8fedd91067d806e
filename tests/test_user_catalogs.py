"""User catalogs (`--signatures DIR`, $CRASHLENS_SIGNATURES): they override built-ins by id, and a malformed,
duplicated or hostile signature file is rejected with its file, field and reason (one line, exit 2)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from conftest import ROOT, assert_one_line_error, run_cli

from crashlens import catalog
from crashlens.catalog import CatalogError, compile_pattern, load_catalog, search

BUILTIN = ROOT / "signatures"
SIG = "subprocess-thread-lock"


def _builtin_text(sig_id: str = SIG) -> str:
    return (BUILTIN / f"{sig_id}.toml").read_text()


def _crash_log(tmp_path: Path, sig_id: str = SIG) -> Path:
    """The built-in signature's first positive example: a real torch log fragment it must match."""
    sig = load_catalog(builtin=True).get(sig_id)
    assert sig is not None
    text = next(e.text for e in sig.examples if e.expect_match)
    log = tmp_path / "crash.log"
    log.write_text(text)
    return log


def _user_dir(tmp_path: Path, files: dict[str, str | bytes]) -> Path:
    d = tmp_path / "mysigs"
    d.mkdir(exist_ok=True)
    for name, body in files.items():
        p = d / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            p.write_bytes(body)
        else:
            p.write_text(body)
    return d


# -- overriding and adding ---------------------------------------------------------------------------------


def test_user_signature_overrides_builtin_by_id(tmp_path):
    log = _crash_log(tmp_path)
    mine = _builtin_text().replace('title = "A subprocess call is traced', 'title = "MY TEAM: subprocess traced', 1)
    d = _user_dir(tmp_path, {f"{SIG}.toml": mine})
    p = run_cli("--format", "json", "--no-audit", "--signatures", str(d), str(log))
    assert p.returncode == 1, p.stderr
    titles = [x["title"] for x in __import__("json").loads(p.stdout)["diagnoses"]]
    assert titles and titles[0].startswith("MY TEAM: subprocess traced")


def test_environment_variable_adds_catalogs_too(tmp_path):
    log = _crash_log(tmp_path)
    mine = _builtin_text().replace('title = "A subprocess call is traced', 'title = "FROM ENV: subprocess', 1)
    d = _user_dir(tmp_path, {f"{SIG}.toml": mine})
    p = run_cli("--format", "json", "--no-audit", str(log), env={"CRASHLENS_SIGNATURES": str(d)})
    assert p.returncode == 1, p.stderr
    assert "FROM ENV: subprocess" in p.stdout.decode()


def test_user_catalog_is_listed_by_signatures_list(tmp_path):
    mine = _builtin_text().replace(f'id = "{SIG}"', 'id = "my-own-signature"', 1)
    d = _user_dir(tmp_path, {"mine.toml": mine})
    p = run_cli("signatures", "list", "--signatures", str(d))
    assert p.returncode == 0, p.stderr
    assert "my-own-signature" in p.stdout.decode()
    assert SIG in p.stdout.decode()  # built-ins stay


# -- rejected files: file, field, reason ---------------------------------------------------------------------


def _mutate(old: str, new: str) -> str:
    text = _builtin_text()
    assert old in text, old
    return text.replace(old, new, 1)


BAD_FILES = {
    "not-toml": ("this is [not toml", "not valid TOML"),
    "duplicate-toml-key": ('id = "again"\n' + _builtin_text(), "not valid TOML"),
    "missing-id": (_mutate(f'id = "{SIG}"\n', ""), "missing field 'id'"),
    "bad-id": (_mutate(f'id = "{SIG}"', 'id = "../../etc/passwd"'), "field 'id'"),
    "priority-not-int": (_mutate("priority = 90", 'priority = "high"'), "field 'priority'"),
    "priority-huge": (_mutate("priority = 90", "priority = 99999999999999"), "field 'priority'"),
    "confidence-out-of-range": (_mutate("confidence = 0.95", "confidence = 7"), "field 'confidence'"),
    "confidence-nan": (_mutate("confidence = 0.95", "confidence = nan"), "field 'confidence'"),
    "unknown-field": (_mutate("[match]", "[mtach]"), "unknown field 'mtach'"),
    "unknown-match-field": (_mutate("[match]", "[match]\nmesage = 'x'"), "match.mesage"),
    "pattern-not-compiling": (_mutate("[match]", "[match]\nmessage = '(unclosed'"), "does not compile"),
    "pattern-not-string": (_mutate("[match]", "[match]\nmessage = [1, 2]"), "match.message"),
    "nested-repeat": (_mutate("[match]", "[match]\nmessage = '(\\w+\\s?)+$'"), "nests unbounded repetition"),
    "nested-repeat-braces": (_mutate("[match]", "[match]\nmessage = '(?:x{1,}y?)*z'"), "nests unbounded"),
    "pattern-too-long": (_mutate("[match]", "[match]\nmessage = '" + "a" * 5000 + "'"), "characters long"),
    "escape-in-title": (_mutate('title = "A subprocess', 'title = "\\u001b[2J\\u001b]8;;http://evil\\u0007A'),
                        "control character"),
    "bidi-in-fix": (_mutate('title = "A subprocess', 'title = "\\u202eA'), "control character"),
    "bad-fix-kind": (_builtin_text() + '\n[[fixes]]\nrank = 1\nkind = "rm -rf"\ntitle = "x"\n', "kind"),
    "fix-unknown-field": (_builtin_text() + '\n[[fixes]]\nrank = 1\nkind = "flag"\ntitle = "x"\nshell = "x"\n',
                          "unknown field 'shell'"),
    "fix-file-not-string": (_builtin_text() + '\n[[fixes]]\nrank = 1\nkind = "flag"\ntitle = "x"\nfile = 3\n',
                            "field 'file'"),
    "bad-hint-condition": (_builtin_text() + '\n[[fixes]]\nrank = 1\nkind = "flag"\ntitle = "x"\n'
                           'when = { dynamo_hint = ["maybe"] }\n', "dynamo_hint"),
    "match-any-not-tables": (_mutate("[match]", "[match]\nany = 'x'"), "match.any"),
    "match-any-without-patterns": (_mutate("[match]", "[match]\nany = [{ dynamo = true }]"), "match.any[0]"),
    "fixes-not-array": (_mutate("[match]", 'fixes = "all of them"\n[match]'), "fixes"),
    "unknown-fixset": (_mutate('fixsets = ["opaque-op"', 'fixsets = ["no-such-set"'), "no fix set named"),
    "not-utf8": (b"id = \"x\"\ntitle = \"\xff\xfe\"\n", "not UTF-8"),
    "deep-nesting": ("a = " + "[" * 5000 + "]" * 5000 + "\n", "not valid TOML"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_signature_file_is_one_line_with_file_field_reason(tmp_path, case):
    body, reason = BAD_FILES[case]
    log = _crash_log(tmp_path)
    d = _user_dir(tmp_path, {"broken.toml": body})
    p = run_cli("--no-audit", "--signatures", str(d), str(log))
    assert_one_line_error(p, 2, "broken.toml", reason)


def test_a_hint_kind_crashlens_does_not_know_is_one_line(tmp_path):
    d = _user_dir(tmp_path, {"ok.toml": _builtin_text(),
                             "context.toml": '[[hints]]\nkind = "gospel"\npattern = "Hint"\n'})
    p = run_cli("--no-audit", "--signatures", str(d), str(_crash_log(tmp_path)))
    assert_one_line_error(p, 2, "context.toml", "kind", "eager-error")


def test_match_table_without_patterns_must_be_a_fallback(tmp_path):
    text = _builtin_text()
    start = text.index("[match]")
    end = text.index("[[examples]]")
    body = text[:start] + "[match]\ndynamo = true\n\n" + text[end:]
    d = _user_dir(tmp_path, {"catchall.toml": body})
    p = run_cli("--no-audit", "--signatures", str(d), str(_crash_log(tmp_path)))
    assert_one_line_error(p, 2, "catchall.toml", "field 'match'", "fallback")


def test_duplicated_id_in_one_catalog_names_both_files(tmp_path):
    d = _user_dir(tmp_path, {"a.toml": _builtin_text(), "b.toml": _builtin_text()})
    p = run_cli("--no-audit", "--signatures", str(d), str(_crash_log(tmp_path)))
    assert_one_line_error(p, 2, "b.toml", "field 'id'", "a.toml")


def test_fifo_named_like_a_signature_does_not_hang(tmp_path):
    d = _user_dir(tmp_path, {"good.toml": _builtin_text()})
    os.mkfifo(d / "pipe.toml")
    p = run_cli("--no-audit", "--signatures", str(d), str(_crash_log(tmp_path)), timeout=30)
    assert_one_line_error(p, 2, "pipe.toml", "not a regular file")


def test_huge_signature_file_is_refused_unread(tmp_path):
    d = _user_dir(tmp_path, {"huge.toml": "# " + "x" * (catalog.MAX_FILE_BYTES + 10) + "\n"})
    p = run_cli("--no-audit", "--signatures", str(d), str(_crash_log(tmp_path)))
    assert_one_line_error(p, 2, "huge.toml", "larger than")


@pytest.mark.parametrize("how", ["option", "env"])
def test_missing_catalog_directory_is_one_line(tmp_path, how):
    log = _crash_log(tmp_path)
    missing = str(tmp_path / "no-such-dir")
    if how == "option":
        p = run_cli("--signatures", missing, str(log))
        assert_one_line_error(p, 2, "no-such-dir", "not found", "--signatures")
    else:
        p = run_cli(str(log), env={"CRASHLENS_SIGNATURES": missing})
        assert_one_line_error(p, 2, "no-such-dir", "not found", "CRASHLENS_SIGNATURES")


def test_catalog_directory_without_signatures_is_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    p = run_cli("--signatures", str(tmp_path / "empty"), str(_crash_log(tmp_path)))
    assert_one_line_error(p, 2, "empty", "no *.toml")


def test_bad_catalog_is_reported_by_every_command(tmp_path):
    d = _user_dir(tmp_path, {"broken.toml": "this is [not toml"})
    for args in (["signatures", "list"], ["signatures", "check"], ["explain", SIG]):
        p = run_cli(*args, "--signatures", str(d))
        assert_one_line_error(p, 2, "broken.toml", "not valid TOML")


def test_bad_catalog_leaves_the_builtin_catalog_usable(tmp_path):
    """The documented behaviour: a bad user catalog stops that run (exit 2); without it, the same log scans."""
    log = _crash_log(tmp_path)
    d = _user_dir(tmp_path, {"broken.toml": "this is [not toml"})
    bad = run_cli("--no-audit", "--signatures", str(d), str(log))
    assert bad.returncode == 2 and bad.stdout == b""
    good = run_cli("--no-audit", str(log))
    assert good.returncode == 1 and b"Traceback" not in good.stderr


# -- regex safety --------------------------------------------------------------------------------------------


def test_slow_user_pattern_times_out_once_and_the_scan_goes_on(tmp_path):
    """(?:a|a)*b passes the nesting lint but backtracks exponentially: the time limit catches it."""
    body = _mutate(f'id = "{SIG}"', 'id = "slow-one"').replace("priority = 90", "priority = 1000", 1)
    start, end = body.index("[match]"), body.index("[[examples]]")
    body = body[:start] + "[match]\nmessage = '(?:a|a)*b'\n\n" + body[end:]
    d = _user_dir(tmp_path, {"slow.toml": body})
    crash = _crash_log(tmp_path).read_text()
    # Two crashes whose message makes the pattern backtrack; the real fragment after them still diagnoses.
    evil = "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\nValueError: " + "a" * 60 + " c b\n"
    log = tmp_path / "slow.log"
    log.write_text(evil + evil.replace("ValueError", "KeyError") + crash)
    t0 = time.monotonic()
    p = run_cli("--format", "json", "--no-audit", "--signatures", str(d), str(log), timeout=60)
    assert time.monotonic() - t0 < 30
    err = p.stderr.decode()
    assert "Traceback" not in err
    assert err.count("timed out") + err.count("took over") == 1, err
    assert "slow.toml" in err and "skipped" in err
    assert p.returncode == 1
    ids = [d["signature"] for d in __import__("json").loads(p.stdout)["diagnoses"]]
    assert SIG in ids and "slow-one" not in ids


def test_timed_out_negative_pattern_excludes_rather_than_admits(capsys):
    pos = compile_pattern("(?:a|a)*b", "x.toml: match.message")
    neg = compile_pattern("(?:a|a)*b", "x.toml: match.not_message", negative=True)
    text = "a" * 60 + " c b"
    assert not search(pos, text)
    assert search(neg, text)  # counts as a hit: the signature is skipped, not matched
    assert "x.toml" in capsys.readouterr().err


@pytest.mark.parametrize("pat", [
    "(a+)+", "(a*)*", "(.*x)*", r"(\w{2,})+", "((a+)?)*", "(?:a|b+)*", "((a)+)+", "(x+){2,}",
    "([^]]+)+", r"(\p{L}+)+", "(?P<n>a+)*", "(a{1,500})+", r"(?:\s*,\s*\w+)*", "(?:[[:alpha:]]+)+",
    r"(?:(?:a+b)|c)*",
])
def test_lint_rejects_nested_unbounded_repetition(pat):
    assert catalog._nested_unbounded(pat)
    with pytest.raises(CatalogError, match="nests unbounded"):
        compile_pattern(pat, "x.toml: match.message")


@pytest.mark.parametrize("pat", [
    "(a+)", "a+b+", "(ab)+", r"[(]+)+", "(a+){2}", r"\(a+\)+", r"(?:\d+\.)?\d+", "[a+]+", "(a)+",
    "(?#(a+)+)x", "([^]]+)", "a{2,}b", "(a{2})+", "(?:foo|bar)+", r"x\{1,\}", "(a{1,5})+",
])
def test_lint_accepts_bounded_shapes(pat):
    assert not catalog._nested_unbounded(pat)


def test_builtin_catalog_passes_the_hardened_loader():
    cat = load_catalog()
    assert cat.signatures and all(s.path for s in cat.signatures)
