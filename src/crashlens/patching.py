"""A plan's three steps after planning: render it as a unified diff, apply it with backups, revert it."""

from __future__ import annotations

import difflib
import glob
import hashlib
import json
import os
import shutil
import time

from .errors import UserError
from .fixplan import Plan

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

STATE_DIR = ".crashlens"
RECORD = "applied.json"


def _rel(path: str) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return path


def render_diff(plan: Plan) -> str:
    """The plan as one unified diff (paths relative to the current directory)."""
    out: list[str] = []
    for e in plan.edits:
        rel = _rel(e.path)
        before = (e.before or "").splitlines(keepends=True)
        after = e.after.splitlines(keepends=True)
        a = "/dev/null" if e.before is None else f"a/{rel}"
        for line in difflib.unified_diff(before, after, a, f"b/{rel}", n=3):
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Store:
    """`.crashlens/` in the current directory: the original of every file a fix touched, and the record."""

    def __init__(self, base: str | None = None) -> None:
        self.dir = os.path.abspath(os.path.join(base or os.getcwd(), STATE_DIR))
        self.record_path = os.path.join(self.dir, RECORD)

    def load(self) -> dict[str, Any]:
        if not os.path.isfile(self.record_path):
            return {"schema": "crashlens/v1", "applied": [], "files": {}}
        try:
            with open(self.record_path, encoding="utf-8") as fh:
                data: dict[str, Any] = json.load(fh)
        except (OSError, ValueError) as e:
            raise UserError(f"{self.record_path}: unreadable record of applied fixes ({e})") from None
        return data

    def save(self, data: dict[str, Any]) -> None:
        os.makedirs(self.dir, exist_ok=True)
        tmp = self.record_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2)
            fh.write("\n")
        os.replace(tmp, self.record_path)


def is_applied(plan: Plan, store: Store | None = None) -> bool:
    data = (store or Store()).load()
    return any(a.get("key") == plan.key for a in data["applied"])


def apply(plan: Plan, store: Store | None = None) -> list[str]:
    """Write the plan's files, each backed up first; the paths changed (none when already applied)."""
    store = store or Store()
    data = store.load()
    if any(a.get("key") == plan.key for a in data["applied"]):
        return []
    # check every file first: nothing is written unless all of them are as the plan read them
    for e in plan.edits:
        exists = os.path.exists(e.path)
        if e.before is None:
            if exists:
                with open(e.path, encoding="utf-8", newline="") as fh:
                    if fh.read() == e.after:
                        continue
                raise UserError(f"{e.path}: already exists; not overwritten")
            continue
        if not exists:
            raise UserError(f"{e.path}: gone since the plan was made")
        with open(e.path, encoding="utf-8", newline="") as fh:
            if fh.read() != e.before:
                raise UserError(f"{e.path}: changed since the plan was made; run `crashlens fix` again")
    os.makedirs(os.path.join(store.dir, "backups"), exist_ok=True)
    files = data["files"]
    changed = []
    for e in plan.edits:
        key = os.path.abspath(e.path)
        if key not in files:
            if e.before is None:
                files[key] = {"created": True}
            else:
                with open(e.path, "rb") as fh:
                    raw = fh.read()
                name = f"{len(files):04d}-{os.path.basename(e.path)}"
                dst = os.path.join(store.dir, "backups", name)
                with open(dst, "wb") as fh:
                    fh.write(raw)
                shutil.copymode(e.path, dst)
                files[key] = {"created": False, "backup": os.path.join("backups", name), "sha256": _sha(raw),
                              "mode": os.stat(e.path).st_mode & 0o7777,
                              "mtime_ns": os.stat(e.path).st_mtime_ns}
            store.save(data)  # the backup is on record before the file changes
        with open(e.path, "w", encoding="utf-8", newline="") as fh:
            fh.write(e.after)
        changed.append(e.path)
    data["applied"].append({"key": plan.key, "kind": plan.kind, "title": plan.title, "diagnosis": plan.diagnosis,
                            "signature": plan.signature, "files": [os.path.abspath(e.path) for e in plan.edits],
                            "notes": list(plan.notes), "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    store.save(data)
    return changed


def revert(store: Store | None = None) -> list[str]:
    """Every touched file back as it was, byte for byte; the shims removed; the record cleared."""
    store = store or Store()
    if not os.path.isfile(store.record_path):
        return []
    data = store.load()
    restored = []
    for path, info in sorted(data["files"].items()):
        if info.get("created"):
            if os.path.exists(path):
                os.remove(path)
                restored.append(path)
            stem = os.path.splitext(os.path.basename(path))[0]
            cache = os.path.join(os.path.dirname(path), "__pycache__")
            for pyc in glob.glob(os.path.join(glob.escape(cache), glob.escape(stem) + ".*.pyc")):
                os.remove(pyc)
            if os.path.isdir(cache) and not os.listdir(cache):
                os.rmdir(cache)
            continue
        src = os.path.join(store.dir, info["backup"])
        with open(src, "rb") as fh:
            raw = fh.read()
        if _sha(raw) != info["sha256"]:
            raise UserError(f"{src}: backup damaged (checksum differs); nothing more restored")
        with open(path, "wb") as fh:
            fh.write(raw)
        if "mode" in info:
            os.chmod(path, info["mode"])
        if "mtime_ns" in info:
            os.utime(path, ns=(info["mtime_ns"], info["mtime_ns"]))
        restored.append(path)
    shutil.rmtree(store.dir)
    return restored
