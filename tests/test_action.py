"""The GitHub Action (action.yml): its steps run here the way the Actions runner runs a composite action:
`${{ inputs.* }}` and `${{ steps.*.outputs.* }}` filled in, each step a `bash --noprofile --norc -eo pipefail`
script with the environment the runner sets (GITHUB_ACTIONS, GITHUB_WORKSPACE, GITHUB_ACTION_PATH,
GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_ENV, RUNNER_TEMP, ...), stopping at the first failing step."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import ROOT, SAMPLES, crashlens_exe
from test_ci import RECORDED_ROOT, check_github, check_sarif

yaml = pytest.importorskip("yaml")

ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
_EXPR = re.compile(r"\$\{\{\s*(inputs\.([\w-]+)|steps\.([\w-]+)\.outputs\.([\w-]+))\s*\}\}")
FATAL = SAMPLES / "sglang-1rank-pcg-fp4.log"
GRAPH_BREAKS = SAMPLES / "sglang-torch-compile-graph-breaks.log"


def _outputs(path: Path) -> dict[str, str]:
    """A GITHUB_OUTPUT file: `name=value` lines and `name<<DELIM` ... `DELIM` blocks."""
    out: dict[str, str] = {}
    lines = iter(path.read_text(encoding="utf-8").splitlines()) if path.is_file() else iter(())
    for line in lines:
        if "<<" in line and "=" not in line.split("<<", 1)[0]:
            name, delim = line.split("<<", 1)
            body = []
            for ln in lines:
                if ln == delim:
                    break
                body.append(ln)
            out[name] = "\n".join(body)
        else:
            name, _, value = line.partition("=")
            out[name] = value
    return out


class Run:
    def __init__(self, steps: list[tuple[str, subprocess.CompletedProcess[bytes]]], outputs: dict[str, str],
                 summary: str) -> None:
        self.steps, self.outputs, self.summary = steps, outputs, summary

    @property
    def failed(self) -> str | None:
        return next((sid for sid, p in self.steps if p.returncode != 0), None)

    def stdout(self, step: str) -> str:
        return next(p.stdout.decode() for sid, p in self.steps if sid == step)


def run_action(tmp_path: Path, workspace: Path, env: dict[str, str] | None = None, **inputs: str) -> Run:
    spec = ACTION["inputs"]
    unknown = set(inputs) - set(spec)
    assert not unknown, unknown
    values = {k: str(v.get("default", "")) for k, v in spec.items()} | inputs
    for k, v in spec.items():
        assert not v.get("required") or values[k], f"input {k} is required"
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir(exist_ok=True)
    summary = tmp_path / "step-summary.md"
    step_outputs: dict[str, dict[str, str]] = {}

    def fill(text: str) -> str:
        return _EXPR.sub(lambda m: values[m.group(2)] if m.group(2) else
                         step_outputs.get(m.group(3), {}).get(m.group(4), ""), str(text))

    env_base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_", "INPUT_", "CRASHLENS_"))}
    env_base.update({
        "CI": "true", "GITHUB_ACTIONS": "true", "RUNNER_OS": "Linux", "RUNNER_TEMP": str(runner_temp),
        "GITHUB_WORKSPACE": str(workspace), "GITHUB_ACTION_PATH": str(ROOT), "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_ENV": str(tmp_path / "github-env"), "GITHUB_PATH": str(tmp_path / "github-path"),
        "GITHUB_REPOSITORY": "example/serving", "GITHUB_SHA": "0" * 40, "GITHUB_RUN_ID": "1",
        # the job's own Python, with crashlens installed (install: none finds it on PATH)
        "PATH": f"{Path(crashlens_exe()[0]).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "NO_COLOR": "1", **(env or {}),
    })
    ran = []
    assert ACTION["runs"]["using"] == "composite"
    for n, step in enumerate(ACTION["runs"]["steps"]):
        sid = step.get("id", f"step{n}")
        out_file = tmp_path / f"output-{sid}"
        step_env = {**env_base, "GITHUB_OUTPUT": str(out_file)}
        step_env.update({k: fill(v) for k, v in step.get("env", {}).items()})
        script = tmp_path / f"step-{sid}.sh"
        script.write_text(fill(step["run"]), encoding="utf-8")
        assert step["shell"] == "bash"
        p = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=workspace,
                           env=step_env, capture_output=True, timeout=600, stdin=subprocess.DEVNULL)
        ran.append((sid, p))
        step_outputs[sid] = _outputs(out_file)
        if p.returncode != 0:
            break
    outputs = {k: fill(v["value"]) for k, v in ACTION.get("outputs", {}).items()}
    return Run(ran, outputs, summary.read_text(encoding="utf-8") if summary.is_file() else "")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A checkout with its CI's log artifacts: the repository is this one (the recordings' culprits lie in
    samples/repro), the logs in logs/."""
    ws = tmp_path / "ws"
    (ws / "logs" / "rank0").mkdir(parents=True)
    shutil.copy(FATAL, ws / "logs" / "rank0" / "server.log")
    shutil.copy(GRAPH_BREAKS, ws / "logs" / "compile.log")
    return ws


def test_a_fatal_crash_fails_the_step_with_annotations_summary_and_sarif(tmp_path: Path, workspace: Path) -> None:
    run = run_action(tmp_path, workspace, paths="logs/", formats="sarif, junit", install="none",
                     **{"repo-root": str(ROOT), "path-map": f"{RECORDED_ROOT}=."})
    assert run.failed == "crashlens" and run.outputs["exit-code"] == "1"
    annotations = check_github(run.stdout("crashlens"))
    errors = [a for a in annotations if a[0] == "error"]
    assert len(errors) == 1 and len(annotations) > 1  # the graph breaks are warnings
    kind, props, msg = errors[0]
    assert props["file"].startswith("samples/repro/") and (ROOT / props["file"]).is_file() and int(props["line"]) > 0
    assert "Unsupported" in msg
    assert run.summary.startswith("\n## crashlens: 1 crash and ")
    sarif = Path(run.outputs["sarif"])
    assert sarif.parent == Path(run.outputs["report-dir"]) == tmp_path / "runner-temp" / "crashlens"
    check_sarif(sarif.read_text(encoding="utf-8"))
    junit = ET.fromstring(Path(run.outputs["junit"]).read_bytes())
    assert junit.get("failures") == "1"


def test_fail_on_never_passes_and_still_reports(tmp_path: Path, workspace: Path) -> None:
    out_dir = tmp_path / "reports"
    run = run_action(tmp_path, workspace, paths="logs/rank0/*.log\nlogs/compile.log", formats="json markdown",
                     install="none", **{"fail-on": "never", "output-dir": str(out_dir)})
    assert run.failed is None and run.outputs["exit-code"] == "0"
    assert run.outputs["sarif"] == ""  # not asked for
    doc = json.loads((out_dir / "crashlens.json").read_text(encoding="utf-8"))
    assert len(doc["sources"]) == 2 and any(d["fatal"] for d in doc["diagnoses"])
    assert (out_dir / "crashlens.md").read_text(encoding="utf-8").startswith("## crashlens:")


def test_graph_breaks_alone_pass_with_warnings(tmp_path: Path, workspace: Path) -> None:
    run = run_action(tmp_path, workspace, paths="logs/compile.log", install="none")
    assert run.failed is None
    annotations = check_github(run.stdout("crashlens"))
    assert annotations and all(kind == "warning" for kind, _, _ in annotations)
    assert json.loads(Path(run.outputs["sarif"]).read_text(encoding="utf-8"))["version"] == "2.1.0"


def test_a_bad_input_is_one_error_and_exit_2(tmp_path: Path, workspace: Path) -> None:
    run = run_action(tmp_path, workspace, paths="logs/", formats="sarif pdf", install="none")
    assert run.failed == "crashlens" and run.steps[-1][1].returncode == 2
    assert "::error title=crashlens::formats: 'pdf'" in run.stdout("crashlens")
    run = run_action(tmp_path, workspace, paths="missing/", install="none")
    assert run.outputs["exit-code"] == "2" and b"missing" in run.steps[-1][1].stderr


def test_inputs_are_never_run_as_shell(tmp_path: Path, workspace: Path) -> None:
    bait = tmp_path / "pwned"
    run = run_action(tmp_path, workspace, paths=f"logs/ $(touch {bait}) `touch {bait}`", install="none",
                     **{"path-map": f"a=b; touch {bait}", "fail-on": "never"})
    assert not bait.exists()
    assert run.steps[-1][1].returncode == 2  # "$(touch" is not a log file


@pytest.mark.skipif(os.environ.get("CRASHLENS_SKIP_INSTALL_TESTS") == "1", reason="CRASHLENS_SKIP_INSTALL_TESTS=1")
def test_the_default_install_builds_crashlens_from_the_action(tmp_path: Path, workspace: Path) -> None:
    """install: action (the default) pip-installs this checkout into a virtual environment in RUNNER_TEMP."""
    # without the C helper (CRASHLENS_PURE_PYTHON=1 at build time): the same install, less compiling
    run = run_action(tmp_path, workspace, env={"CRASHLENS_PURE_PYTHON": "1"}, paths="logs/compile.log",
                     formats="", python=sys.executable)
    install = run.steps[0][1]
    assert install.returncode == 0, install.stderr.decode()[-2000:]
    assert install.stdout.decode().startswith("crashlens, version ")
    assert run.failed is None
    assert (tmp_path / "runner-temp" / "crashlens-venv").is_dir()
