"""The HTML report in a real browser: headless Chromium (Debian's `chromium`) driven through the DevTools
protocol by Playwright. What a person sees: every group and its count, the per-rank timeline, filters
that filter, hostile log text shown as text and never run, nothing fetched from the network.

Skips, saying why, where Playwright or Chromium is missing or Chromium cannot start. Screenshots go to
$CRASHLENS_ARTIFACTS (default: test-artifacts/ in the repository)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES, run_cli

CHROMIUM = os.environ.get("CRASHLENS_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
ARTIFACTS = Path(os.environ.get("CRASHLENS_ARTIFACTS", ROOT / "test-artifacts"))

HOSTILE = ('<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
           '<img src="http://198.51.100.7/beacon.png"><link rel=stylesheet href="https://example.com/x.css">')


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install '.[test]')")
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"no Chromium at {CHROMIUM} (Debian: apt-get install -y chromium)")
    profile = tmp_path_factory.mktemp("chromium-profile")  # an empty user-data-dir
    try:
        pw = sync_api.sync_playwright().start()
    except Exception as e:  # noqa: BLE001 - the driver cannot start here: say why, skip
        pytest.skip(f"Playwright's driver cannot start: {str(e).splitlines()[0]}")
    try:
        ctx = pw.chromium.launch_persistent_context(str(profile), executable_path=CHROMIUM, headless=True,
                                                    args=FLAGS, viewport={"width": 1280, "height": 900})
    except Exception as e:  # noqa: BLE001
        pw.stop()
        pytest.skip(f"Chromium cannot start: {str(e).splitlines()[0]}")
    yield ctx
    ctx.close()
    pw.stop()


def _open(ctx, path: Path):
    """The page, with every request it makes recorded (any that is not the page itself is aborted)."""
    page = ctx.new_page()
    requests: list[str] = []

    def route(r):
        requests.append(r.request.url)
        if r.request.url == path.as_uri():
            r.continue_()
        else:
            r.abort()

    page.route("**/*", route)
    page.on("request", lambda req: requests.append(req.url))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page, requests


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    logs = tmp_path_factory.mktemp("logs")
    for i in range(2):
        (logs / f"node{i}.log").write_bytes((SAMPLES / "sglang-8rank-pcg-fp4.log").read_bytes())
    (logs / "vllm.log").write_bytes((SAMPLES / "vllm-tp2-fp4.log").read_bytes())
    raw = (SAMPLES / "raw" / "runtime-error-in-compiled.log").read_text()
    hostile = raw.replace("index out of range in self", "index out of range " + HOSTILE)
    assert hostile != raw
    (logs / "hostile.log").write_text(hostile)
    out = tmp_path_factory.mktemp("report")
    page = out / "report.html"
    p = run_cli("mine", "--all", "--format", "html", "-o", str(page), str(logs))
    assert p.returncode == 0, p.stderr.decode()
    p = run_cli("mine", "--all", "--format", "json", str(logs))
    return page, json.loads(p.stdout)


def test_every_group_and_its_count_is_on_the_page(browser, report):
    path, doc = report
    page, requests = _open(browser, path)
    items = page.locator("section.item")
    assert items.count() == len(doc["groups"]) >= 3
    for i, g in enumerate(doc["groups"]):
        item = items.nth(i)
        assert item.get_attribute("data-id") == g["id"]
        assert item.locator(".count").inner_text() == str(g["count"])
        assert g["title"][:40] in item.locator("h2").inner_text()
        if g["culprit"]:
            assert g["culprit"]["function"] in item.locator(".culprit").inner_text()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "mine-report.png"), full_page=False)
    assert requests == [path.as_uri()] * 2  # the page itself (route and request); nothing remote


def test_the_timeline_shows_each_rank_and_when(browser, report):
    path, doc = report
    page, _ = _open(browser, path)
    g = next(g for g in doc["groups"] if g["signature"] == "subprocess-thread-lock")
    item = page.locator(f'section.item[data-id="{g["id"]}"]')
    rows = item.locator("tr.tl-row")
    assert rows.count() == len(g["timeline"])
    ranks = {rows.nth(i).locator("td").nth(0).inner_text() for i in range(rows.count())}
    assert {f"TP{r}" for r in range(8)} <= ranks
    cells = [(rows.nth(i).locator("td").nth(0).inner_text(), rows.nth(i).locator("td").nth(1).inner_text())
             for i in range(rows.count())]
    # every rank's copy carries SGLang's timestamp; rows are in time order
    ranked = [t for r, t in cells if r.startswith("TP")]
    assert ranked and all(t.startswith("2026-04-16T") for t in ranked)
    full = [t for _, t in cells if t[:1].isdigit()]
    assert full == sorted(full)
    assert item.locator("svg.tl circle.tick").count() == len(g["timeline"])


def test_filters_filter(browser, report):
    path, doc = report
    page, _ = _open(browser, path)
    items = page.locator("section.item")
    visible = lambda: [items.nth(i).get_attribute("data-id") for i in range(items.count())
                       if items.nth(i).is_visible()]
    assert len(visible()) == len(doc["groups"])
    page.select_option("#f-rank", "Worker_TP1")
    assert visible() == [g["id"] for g in doc["groups"] if "Worker_TP1" in g["ranks"]] != []
    page.select_option("#f-rank", "")
    page.select_option("#f-signature", "unknown")
    want = [g["id"] for g in doc["groups"] if g["signature"] == "unknown"]
    assert visible() == want and want
    page.select_option("#f-signature", "")
    src = next(s for g in doc["groups"] for s in g["sources"] if s.endswith("vllm.log"))
    page.select_option("#f-source", src)
    assert visible() == [g["id"] for g in doc["groups"] if src in g["sources"]]
    page.select_option("#f-source", "")
    page.fill("#q", "index out of range")
    assert len(visible()) == 1
    assert page.locator("#shown").inner_text() == f"1 of {len(doc['groups'])} shown"


def test_hostile_log_text_is_shown_and_never_run(browser, report):
    path, _ = report
    page, requests = _open(browser, path)
    assert page.evaluate("window.__pwned") is None
    text = page.locator("body").inner_text()
    assert "<script>window.__pwned = 1</script>" in text
    assert page.locator("main img").count() == 0 and page.locator("main script").count() == 0
    assert all(r == path.as_uri() for r in requests)


def test_scan_and_ci_give_the_same_kind_of_page(browser, tmp_path):
    log = tmp_path / "server.log"
    log.write_bytes((SAMPLES / "sglang-2rank-pcg-fp4.log").read_bytes())
    p = run_cli("scan", "--no-audit", "--format", "html", str(log))
    assert p.returncode == 1  # a fatal crash, as in every scan format
    (tmp_path / "scan.html").write_bytes(p.stdout)
    p = run_cli("ci", str(log), "--format", "html", "--output", str(tmp_path / "ci.html"))
    assert (tmp_path / "ci.html").exists(), p.stderr.decode()
    for name in ("scan.html", "ci.html"):
        page, requests = _open(browser, tmp_path / name)
        item = page.locator("section.item")
        assert item.count() == 1
        assert "subprocess-thread-lock" in item.locator(".sig").inner_text()
        assert item.locator("ol.fixes li").count() >= 2
        rows = item.locator("tr.tl-row")
        ranks = {rows.nth(i).locator("td").first.inner_text() for i in range(rows.count())}  # rank is the first column
        assert {"TP0", "TP1"} <= ranks
        assert all(r == (tmp_path / name).as_uri() for r in requests)
    page.screenshot(path=str(ARTIFACTS / "ci-report.png"))
