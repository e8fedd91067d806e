"""`crashlens run`: start a command, pass its output through to the scan session, fix and re-run on a crash.

The supervisor keeps nothing between rounds but the trail; diagnosing is the scan session's job and the
patch is the fix plan's (fixplan, patching)."""

from __future__ import annotations

import ast
import os
import re
import signal
import subprocess
import sys

from ._struct import dataclass, field
from .catalog import get_catalog
from .fixplan import Locator, NoPlan, Plan, forget_files, plan_fix
from .patching import Store, apply, is_applied
from .pipeline import SourceSession
from .read import decode_line
from .records import Diagnosis

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import IO, Any

    # How a launch's output is read: (session, the command's output, where it passes through, the round) ->
    # the diagnoses of the records it completed. The CLI's pump also reports each crash as it completes.
    Pump = Callable[[SourceSession, IO[bytes], IO[bytes] | None, int], list[Diagnosis]]

EAGER_CHECK_ENV = {"TORCHDYNAMO_DISABLE": "1"}  # only to ask "does it fail without compile too?", never a fix


@dataclass(slots=True)
class Round:
    number: int
    exit_code: int | None = None
    crash: Diagnosis | None = None
    plan: Plan | None = None
    files: list[str] = field(default_factory=list)
    outcome: str = ""  # converged | fixed | needs-a-person | crashed | interrupted | failed
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        c = self.crash
        return {
            "round": self.number,
            "exit_code": self.exit_code,
            "crash": None if c is None else {
                "id": c.id, "signature": c.signature, "title": c.title,
                "culprit": c.culprit.to_json() if c.culprit else None, "callee": c.callee,
            },
            "fix": None if self.plan is None else {
                "kind": self.plan.kind, "title": self.plan.title, "files": list(self.files),
                "notes": list(self.plan.notes),
            },
            "outcome": self.outcome,
            "reason": self.reason,
        }


@dataclass(slots=True)
class Trail:
    command: list[str]
    rounds: list[Round] = field(default_factory=list)
    exit_code: int = 1
    eager_check: str | None = None  # "passes" / "fails" / None (not run)

    def to_json(self) -> dict[str, Any]:
        from . import __version__

        return {
            "schema": "crashlens/v1",
            "crashlens_version": __version__,
            "command": list(self.command),
            "converged": self.exit_code == 0,
            "exit_code": self.exit_code,
            "eager_check": self.eager_check,
            "rounds": [r.to_json() for r in self.rounds],
        }


def _call_path(d: Diagnosis) -> tuple[tuple[str, int], ...]:
    """The frames a crash was reached through (file and line, outermost first)."""
    return tuple((f.file, f.line) for f in d.chain)


def _run_once(cmd: list[str], sink: IO[bytes] | None, env: dict[str, str] | None = None,
              pump: Pump | None = None, round_: int = 1, blockers: Any = None) -> tuple[int, list[Diagnosis]]:
    """Run the command once; its merged output goes to `sink` unchanged and through a scan session
    (`blockers`: the audit hook that gives a diagnosis its "Next in this chain")."""
    session = SourceSession("<run>", get_catalog(), blockers)
    # no __pycache__ left beside the user's files: `crashlens fix --revert` gives back the tree as it was
    full_env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=full_env)
    except OSError as e:
        raise CommandError(f"{cmd[0]}: cannot run ({e.strerror or e})") from None
    assert proc.stdout is not None
    try:
        early = (pump or read_through)(session, proc.stdout, sink, round_)
        rc = proc.wait()
    except KeyboardInterrupt as e:  # Ctrl-C, or SIGTERM/SIGHUP through cli.stops (Stopped)
        _stop(proc, getattr(e, "signum", signal.SIGINT))
        raise
    return rc, session.final_diagnoses(early)


def read_through(session: SourceSession, stream: IO[bytes], sink: IO[bytes] | None, round_: int) -> list[Diagnosis]:
    """The plain pump: every byte to `sink`, every line to the session, the diagnoses at the end."""
    early: list[Diagnosis] = []
    pending = b""
    fd = stream.fileno()
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        if sink is not None:
            sink.write(chunk)
            sink.flush()
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for raw in lines:
            early.extend(session.feed(decode_line(raw + b"\n")))
    if pending:
        early.extend(session.feed(decode_line(pending)))
    early.extend(session.finish())
    return early


def _stop(proc: subprocess.Popen[bytes], signum: int = signal.SIGINT) -> None:
    """Stop CMD with the signal crashlens got (SIGINT for Ctrl-C), then kill it if it does not go."""
    if proc.poll() is None:
        try:
            proc.send_signal(signum)
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        except OSError:
            pass


class CommandError(Exception):
    pass


def program_env(cmd: list[str]) -> tuple[list[str] | None, str | None]:
    """The command's Python search path and torch release, asked of its interpreter without importing torch."""
    exe = cmd[0]
    if not re.match(r"python[\d.]*$", os.path.basename(exe)):
        return None, None
    probe = ("import sys, json, importlib.machinery as m; s = m.PathFinder.find_spec('torch');"
             "print(json.dumps([sys.path, s.submodule_search_locations[0] if s and s.submodule_search_locations else None]))")
    try:
        out = subprocess.run([exe, "-c", probe], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None, None
    if out.returncode != 0:
        return None, None
    import json

    try:
        path, torch_dir = json.loads(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None, None
    return [p for p in path if p], torch_version_at(torch_dir) if torch_dir else None


def torch_version_at(torch_dir: str) -> str | None:
    """torch's release from torch/version.py, read as text."""
    try:
        with open(os.path.join(torch_dir, "version.py"), encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__version__" for t in targets) and \
                    isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                return node.value.value
    return None


def supervise(cmd: list[str], fix: bool, rounds: int, sink: IO[bytes] | None, notes: IO[str],
              roots: list[str] | None = None, search_path: list[str] | None = None, pump: Pump | None = None,
              blockers: Any = None) -> Trail:
    """Run CMD, fix and run again (see the module's docstring). `pump` reads each launch's output (Pump);
    the eager check's launch is always read by the plain one, and reported nowhere."""
    trail = Trail(cmd)
    path, torch_version = program_env(cmd)
    loc = Locator(roots, search_path if search_path is not None else (path or None))
    store = Store()
    eager_checked = False
    for n in range(1, rounds + 2):  # N fixes at most, then one more run to see whether it converged
        r = Round(n)
        trail.rounds.append(r)
        notes.write(f"crashlens run: round {n}: {' '.join(cmd)}\n")
        notes.flush()
        try:
            rc, diags = _run_once(cmd, sink, pump=pump, round_=n, blockers=blockers)
        except KeyboardInterrupt as e:
            r.outcome = "interrupted"
            r.reason = (f"stopped by {getattr(e, 'name', 'Ctrl-C')}; every applied change is revertible "
                        "(crashlens fix --revert)")
            trail.exit_code = getattr(e, "exit_code", 130)
            return trail
        r.exit_code = rc
        fatal = [d for d in diags if d.fatal]
        if rc == 0 and not fatal:
            r.outcome = "converged"
            trail.exit_code = 0
            return trail
        if not fatal:
            r.outcome = "failed"
            r.reason = f"exit status {rc}, and no crash crashlens knows in the output"
            trail.exit_code = 1
            return trail
        d = fatal[0]
        r.crash = d
        if not fix:
            r.outcome = "crashed"
            r.reason = "run with --fix to apply the top mechanical fix and run again"
            trail.exit_code = 1
            return trail
        if n > rounds:
            r.outcome = "crashed"
            r.reason = f"still crashing after {rounds} round(s) of fixes"
            trail.exit_code = 1
            return trail
        if not eager_checked:
            eager_checked = True
            notes.write("crashlens run: checking that the command runs without torch.compile "
                        "(TORCHDYNAMO_DISABLE=1, this check only)\n")
            notes.flush()
            try:
                erc, _ = _run_once(cmd, None, EAGER_CHECK_ENV)
            except KeyboardInterrupt as e:
                r.outcome = "interrupted"
                trail.exit_code = getattr(e, "exit_code", 130)
                return trail
            trail.eager_check = "passes" if erc == 0 else "fails"
            if erc != 0:
                r.outcome = "needs-a-person"
                r.reason = (f"the command fails without torch.compile too (exit status {erc}): a bug in the "
                            "program, left untouched")
                trail.exit_code = 1
                return trail
        # the same crash: the same diagnosis reached through the same frames. The same library code reached from
        # another call of the program (a second entry point of the library, through the same loader) is the
        # next blocker, not the last fix failing
        earlier = next((x for x in trail.rounds[:-1] if x.crash is not None and x.crash.id == d.id and x.plan
                        and _call_path(x.crash) == _call_path(d)), None)
        if earlier is not None:
            r.outcome = "needs-a-person"
            r.reason = (f"the same crash came back after round {earlier.number}'s fix ({earlier.plan.kind}): "
                        "it did not help")
            trail.exit_code = 1
            return trail
        forget_files()
        plan = plan_fix(d, loc, torch_version)
        if isinstance(plan, NoPlan):
            r.outcome = "needs-a-person"
            r.reason = plan.reason
            trail.exit_code = 1
            return trail
        if is_applied(plan, store):
            r.plan = plan
            r.outcome = "needs-a-person"
            r.reason = "this fix is applied already and the same crash came back: it did not help"
            trail.exit_code = 1
            return trail
        try:
            r.files = apply(plan, store)
        except Exception as e:  # noqa: BLE001 - a file that changed under us: stop, say why
            r.outcome = "needs-a-person"
            r.reason = f"could not apply the fix: {e}"
            trail.exit_code = 1
            return trail
        r.plan = plan
        r.outcome = "fixed"
        notes.write(f"crashlens run: applied {plan.kind}: {plan.title}\n")
        for f in r.files:
            notes.write(f"    changed {os.path.relpath(f)}\n")
        notes.flush()
    trail.exit_code = 1
    return trail


def render_trail(trail: Trail) -> str:
    out = ["", "crashlens run: trail"]
    for r in trail.rounds:
        c = r.crash
        head = f"  round {r.number}: exit {r.exit_code}"
        if c is not None:
            cul = f" at {c.culprit.file}:{c.culprit.line} in {c.culprit.function}" if c.culprit else ""
            head += f", crash {c.signature or c.family}{cul}"
        out.append(head)
        if r.plan is not None:
            out.append(f"    fix: {r.plan.kind}: {r.plan.title}")
            for f in r.files:
                out.append(f"      changed {os.path.relpath(f)}")
        out.append(f"    -> {r.outcome}" + (f": {r.reason}" if r.reason else ""))
    verdict = {0: "converged: the last run exited 0 with no fatal crash", 130: "interrupted"}.get(
        trail.exit_code, "not converged")
    out.append(f"  {verdict}")
    if any(r.plan is not None and r.files for r in trail.rounds):
        out.append("  undo every change: crashlens fix --revert")
    return "\n".join(out) + "\n"


__all__ = ["CommandError", "Round", "Trail", "read_through", "render_trail", "supervise", "sys"]
