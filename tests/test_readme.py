"""The README leads with what a user does, and the internals live in docs/; what it documents exists."""

from __future__ import annotations

import re

import pytest

from conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
HEADINGS = [m.group(2) for m in re.finditer(r"^(#{2,3}) (.+)$", README, re.M)]


def _index(prefix: str) -> int:
    return next(i for i, h in enumerate(HEADINGS) if h.startswith(prefix))


def test_the_user_sections_come_first_in_a_users_order() -> None:
    order = ["Install", "The three uses", "Reading a diagnosis", "Exit codes", "JSON output (crashlens/v1)",
             "CI set-up"]
    at = [_index(h) for h in order]
    assert at == sorted(at), list(zip(order, at))
    assert _index("Install") == 0  # right after the two commands


def test_internals_live_in_docs() -> None:
    for internal in ("AVX-512", "AVX2", "Teddy", "SIMD", "s/GB", "bench_scan.py --pairs", "os.pread"):
        assert internal not in README, internal
    perf = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    arch = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert "AVX-512" in perf and "benchmarks/bench_scan.py" in perf and "| log size |" in perf
    assert "traceback" in arch and "signatures/" in arch
    assert len(README.splitlines()) < 550


@pytest.mark.parametrize("link", sorted(set(re.findall(r"\]\(([^)#:]+)\)", README))))
def test_every_local_link_resolves(link: str) -> None:
    assert (ROOT / link).exists(), link


def test_every_action_input_is_documented() -> None:
    yaml = pytest.importorskip("yaml")
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    ci = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")  # the README's CI set-up links it
    table = ci.split("## GitHub Actions", 1)[1].split("\n## ", 1)[0]
    for name in list(action["inputs"]) + list(action["outputs"]):
        assert f"`{name}`" in table, name
    assert "uses: <owner>/crashlens@v1" in table


def test_shell_completion_and_the_schema_are_documented() -> None:
    for shell in ("bash", "zsh", "fish"):
        assert f"_CRASHLENS_COMPLETE={shell}_source crashlens" in README
    assert "crashlens schema" in README.split("## JSON output", 1)[1]
