"""`crashlens fix LOG` (a patch for the top mechanical fix) and `crashlens run -- CMD` (run until it compiles)."""

from __future__ import annotations

import json
import os
import sys

import click

from ..errors import UserError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _search_path(site_packages: tuple[str, ...]) -> list[str]:
    for d in site_packages:
        if not os.path.isdir(d):
            raise UserError(f"{d}: not a directory (from --site-packages)")
    return [*site_packages, *[p for p in sys.path if p]]


@click.command("fix")
@click.argument("log", required=False, type=str)
@click.option("--apply", "do_apply", is_flag=True, help="Write the change (backups and a record under .crashlens/).")
@click.option("--revert", is_flag=True, help="Restore every file a fix touched, byte for byte, and remove the shims.")
@click.option("--root", "roots", multiple=True, metavar="DIR", help="Where the code in the log lives here.")
@click.option("--site-packages", "site_packages", multiple=True, metavar="DIR",
              help="The program's site-packages, for library files the log names.")
@click.option("--torch", "torch_version", metavar="VERSION", help="The torch release the fix is for (default: the log's).")
@click.option("--format", "fmt", type=click.Choice(["terminal", "json"]), default="terminal", show_default=True)
def fix(log: str | None, do_apply: bool, revert: bool, roots: tuple[str, ...], site_packages: tuple[str, ...],
        torch_version: str | None, fmt: str) -> int:
    """Print (or --apply) a patch for the top mechanical fix of the first fatal crash in LOG.

    \b
    crashlens fix server.log            the unified diff; nothing is written
    crashlens fix server.log --apply    write it (backups under .crashlens/)
    crashlens fix --revert              undo every applied fix, byte for byte

    Exit 0: a fix (or nothing to fix); 1: needs a person (no mechanical fix, or the program fails
    without torch.compile too); 2: bad input.
    """
    from ..patching import apply, is_applied, render_diff
    from ..patching import revert as do_revert

    if revert:
        if log or do_apply:
            raise click.UsageError("--revert takes no LOG and no --apply")
        restored = do_revert()
        if not restored:
            click.echo("crashlens fix: nothing to revert", err=True)
        for p in restored:
            click.echo(f"restored {os.path.relpath(p)}", err=True)
        return 0
    if not log:
        raise click.UsageError("no LOG given (crashlens fix LOG, or crashlens fix --revert)")
    for r in roots:
        if not os.path.isdir(r):
            raise UserError(f"{r}: not a directory (from --root)")
    from ..cli.scan import run_scan
    from ..fixplan import Locator, NoPlan, plan_fix

    result = run_scan((log,), (), False)
    fatal = [d for d in result.diagnoses if d.fatal]
    if not fatal:
        _emit(fmt, {"status": "nothing-to-fix"}, "crashlens fix: no fatal crash in the log: nothing to fix")
        return 0
    d = fatal[0]
    if do_apply:
        from ..patching import Store

        done = [a for a in Store().load()["applied"] if a.get("diagnosis") == d.id]
        if done:
            _emit(fmt, {"status": "already-applied", "kind": done[-1]["kind"], "title": done[-1]["title"]},
                  f"crashlens fix: already applied: {done[-1]['title']}")
            return 0
    loc = Locator(list(roots), _search_path(site_packages))
    if torch_version is None and not dict(d.context.versions).get("torch"):
        torch_version = _local_torch(loc.search_path)
    plan = plan_fix(d, loc, torch_version)
    if isinstance(plan, NoPlan):
        advice = [f"  {f.rank}. {f.title}" for f in d.fixes[:4]]
        _emit(fmt, {"status": "needs-a-person", "reason": plan.reason, "eager_too": plan.eager_too,
                    "diagnosis": d.id, "signature": d.signature},
              "\n".join([f"crashlens fix: needs a person: {plan.reason}",
                         *(["ranked advice:", *advice] if advice else [])]))
        return 1
    if do_apply:
        if is_applied(plan):
            _emit(fmt, _plan_json(plan, "already-applied", []), f"crashlens fix: already applied: {plan.title}")
            return 0
        changed = apply(plan)
        lines = [f"crashlens fix: applied {plan.kind}: {plan.title}",
                 *[f"    changed {os.path.relpath(p)}" for p in changed],
                 "undo: crashlens fix --revert"]
        _emit(fmt, _plan_json(plan, "applied", changed), "\n".join(lines))
        return 0
    if fmt == "json":
        doc = _plan_json(plan, "planned", [])
        doc["diff"] = render_diff(plan)
        click.echo(json.dumps(doc, indent=2))
    else:
        click.echo(f"crashlens fix: {plan.kind}: {plan.title}", err=True)
        for n in plan.notes:
            click.echo(f"    {n}", err=True)
        sys.stdout.write(render_diff(plan))
    return 0


def _plan_json(plan: Any, status: str, changed: list[str]) -> dict[str, Any]:
    return {"schema": "crashlens/v1", "status": status, "kind": plan.kind, "title": plan.title, "notes": list(plan.notes),
            "files": [e.path for e in plan.edits], "changed": changed, "diagnosis": plan.diagnosis,
            "signature": plan.signature}


def _emit(fmt: str, doc: dict[str, Any], text: str) -> None:
    if fmt == "json":
        click.echo(json.dumps({**doc, "schema": "crashlens/v1"}, indent=2))
    else:
        click.echo(text, err=True)


def _local_torch(search_path: list[str]) -> str | None:
    from ..supervise import torch_version_at

    for p in search_path:
        d = os.path.join(p, "torch")
        if os.path.isfile(os.path.join(d, "version.py")):
            return torch_version_at(d)
    return None


@click.command("run", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--fix", "do_fix", is_flag=True, help="On a crash, apply the top mechanical fix and run again.")
@click.option("--rounds", type=click.IntRange(min=1), default=5, show_default=True, metavar="N",
              help="At most N fixes.")
@click.option("--format", "fmt", type=click.Choice(["terminal", "json"]), default="terminal", show_default=True,
              help="json: the trail as a crashlens/v1 document on stdout (the command's output goes to stderr).")
@click.option("--root", "roots", multiple=True, metavar="DIR", help="Where the code in the log lives here.")
@click.argument("cmd", nargs=-1, required=True, type=click.UNPROCESSED)
def run(do_fix: bool, rounds: int, fmt: str, roots: tuple[str, ...], cmd: tuple[str, ...]) -> int:
    """Run CMD, pass its output through, diagnose it as it comes; with --fix, fix and re-run until it compiles.

    \b
    crashlens run -- python serve.py            diagnose a run
    crashlens run --fix -- python serve.py      fix, re-run, up to --rounds times

    Exit 0: the last run exited 0 with no fatal crash; 1: it still fails or needs a person;
    2: usage; 130: Ctrl-C, 143/129: SIGTERM/SIGHUP (changes stay revertible: crashlens fix --revert).
    """
    from ..supervise import CommandError, render_trail, supervise
    from .scan import next_blockers_hook

    args = list(cmd)
    if args and args[0] == "--":
        args = args[1:]
    if not args:
        raise click.UsageError("no command given (crashlens run [--fix] -- CMD ARGS...)")
    sink = sys.stdout.buffer if fmt == "terminal" else sys.stderr.buffer
    from .stops import stop_on_signals

    live = LiveReport()
    try:
        with stop_on_signals():  # SIGTERM/SIGHUP stop CMD and end the run as Ctrl-C does (exit 143/129)
            # the panel's "Next in this chain", from the library the command itself loaded
            trail = supervise(args, do_fix, rounds, sink, sys.stderr, list(roots), pump=live,
                              blockers=next_blockers_hook(True, local=True))
    except CommandError as e:
        raise UserError(str(e)) from None
    finally:
        live.close()
    if fmt == "json":
        sys.stdout.write(json.dumps(trail.to_json(), indent=2) + "\n")
    else:
        sys.stderr.write(render_trail(trail))
    return trail.exit_code


class LiveReport:
    """run's pump: each crash reported on stderr as it completes, exactly as `--follow` reports it, while
    the command's output passes through unchanged. Each launch of the command is one round of one source,
    so a crash that comes back after a fix is reported `again`, and a new one says what is gone."""

    def __init__(self) -> None:
        from .watch import DEFAULT_QUIET, _Reporter

        self.quiet_period = DEFAULT_QUIET
        self.reporter = _Reporter("terminal", sys.stderr, None, None, status=False, every_round=True)

    def __call__(self, session: Any, stream: Any, sink: Any, round_: int) -> list[Any]:
        from .watch import _Flusher, _pump

        self.reporter.sessions = [session]
        feed = _RoundFeed(self.reporter, round_)
        _pump(session, feed, _Flusher(self.quiet_period), sink, self.quiet_period, source=stream)
        self.reporter.release()  # the launch ended: nothing of it is still open
        return feed.diagnoses

    def close(self) -> None:
        self.reporter.close()


class _RoundFeed:
    """What _pump reports to: the diagnoses of one launch, in the round that launch is, to the reporter;
    kept for the supervisor too (its trail is made from them)."""

    def __init__(self, reporter: Any, round_: int) -> None:
        self.reporter = reporter
        self.round = round_
        self.diagnoses: list[Any] = []

    def add(self, diags: Any) -> None:
        from .._struct import replace

        diags = list(diags)
        self.diagnoses.extend(diags)
        self.reporter.add([replace(d, occurrences=tuple(replace(o, round=self.round) for o in d.occurrences))
                           for d in diags])

    def idle(self, seconds: float) -> None:
        self.reporter.idle(seconds)

    def tick(self) -> None:
        self.reporter.tick()
