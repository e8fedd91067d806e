"""CI inputs and locations: expand artifact arguments into log files, map crash locations into the repository."""

from __future__ import annotations

import glob
import os
import re
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath

from ._struct import dataclass
from .diagnose import short_path
from .read import InputError
from .records import Diagnosis

# What a directory walk reads (README, "crashlens ci"): regular files named like logs, rotated logs
# (server.log.1, server.log-20250101) and their compressed copies. A file named explicitly is always read.
LOG_SUFFIXES = ("log", "txt", "out", "err", "stdout", "stderr")
COMPRESSED_SUFFIXES = ("gz", "xz", "bz2", "zst")
_LOG_NAME = re.compile(r"\.(?:%s)(?:[.-]\d+)?(?:\.(?:%s))?$" % ("|".join(LOG_SUFFIXES), "|".join(COMPRESSED_SUFFIXES)),
                       re.IGNORECASE)
_GLOB_CHARS = set("*?[")
# How each report crashlens writes begins (render/*): a file that begins so is an earlier run's output, never
# an artifact to read. tests/test_ci.py renders every format and holds these to what the renderers write.
_OUR_HEADS = re.compile(
    r"""\#{1,6}\ crashlens:\ """  # markdown
    r"""|\{\s*"\$schema":[^\n]*sarif[^\n]*\s*"version":[\s\S]{0,200}?"name":\ "crashlens"""  # sarif
    r"""|<\?xml[^>]*>\s*<testsuites\ name="crashlens"""  # junit
    r"""|\{\s*"schema":\ "crashlens/"""  # json
    r"""|\[\s*(?:\]\s*$|\{\s*"type":\ "issue",\s*"check_name":)"""  # gitlab
    r"""|::(?:error|warning|notice)\ [^\n]*title=crashlens"""  # github
    r"""|crashlens:\ no\ crash""",  # github, nothing found
    re.VERBOSE)
_HEAD_BYTES = 4096


def is_log_name(name: str) -> bool:
    return bool(_LOG_NAME.search(name))


def is_crashlens_output(path: str) -> bool:
    """Whether a file holds a report crashlens wrote (see _OUR_HEADS); compressed files never do."""
    if path.lower().endswith(tuple("." + s for s in COMPRESSED_SUFFIXES)):
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.read(_HEAD_BYTES)
    except OSError:
        return False
    return bool(_OUR_HEADS.match(head.decode("utf-8", "replace").lstrip("\ufeff")))


def expand_inputs(args: Sequence[str], outputs: Iterable[str] = ()) -> list[str]:
    """Files as given, directories walked recursively (regular files with log names, hidden entries skipped),
    globs expanded (regular files only). Each file appears once, in argument order.

    No input is ever an output: an --output that names an input (by its resolved path) is an InputError,
    unless a walk or glob found it and it is a report crashlens wrote on an earlier run (it is written over,
    not read). Reports crashlens wrote earlier are never read by a walk or glob. Also an InputError: a path
    that does not exist, a glob without matches, a directory without logs.
    """
    outs = {_key(p): p for p in outputs}
    out_files = {ident: p for p in outputs if (ident := _file_id(p)) is not None}  # a hard link is the same file
    out: list[str] = []
    seen: set[str] = set()

    def add(path: str, named: bool) -> None:
        k = _key(path)
        ident = _file_id(path) if out_files else None
        if ident in out_files:
            k = _key(out_files[ident])
        ours = not named and is_crashlens_output(path)
        if k in outs and not ours:
            raise InputError(f"--output {outs[k]}: is one of the input artifacts ({path}); refusing to overwrite it")
        if k not in seen and not ours:
            seen.add(k)
            out.append(path)

    for arg in args:
        if arg == "-":
            raise InputError("-: ci reads artifact files, not stdin (give the log files or their directory)")
        if os.path.isdir(arg):
            found = list(_walk(arg))
            if not found:
                raise InputError(f"{arg}: no log files in this directory (looked for "
                                 f"{', '.join('*.' + s for s in LOG_SUFFIXES)}, rotated and compressed copies)")
            for p in found:
                add(p, named=False)
        elif os.path.exists(arg):
            add(arg, named=True)  # a FIFO or device named explicitly is read once, as a stream
        elif _GLOB_CHARS & set(arg):
            matches = sorted(glob.glob(arg, recursive=True))
            files = [m for m in matches if os.path.isfile(m)]  # regular files: a FIFO would block the run
            for d in (m for m in matches if os.path.isdir(m)):
                files.extend(_walk(d))
            if not files:
                raise InputError(f"{arg}: no file matches this pattern")
            for p in files:
                add(p, named=False)
        else:
            raise InputError(f"{arg}: no such file or directory")
    return out


def _walk(top: str) -> Iterable[str]:
    for root, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.startswith(".") and is_log_name(name):
                path = os.path.join(root, name)
                try:
                    if stat.S_ISREG(os.stat(path).st_mode):  # never a FIFO, socket or device
                        yield path
                except OSError:
                    continue


def _key(path: str) -> str:
    return os.path.realpath(path)


def _file_id(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def parse_path_map(specs: Sequence[str]) -> list[tuple[str, str]]:
    """`FROM=TO` pairs, longest FROM first so the most specific mapping wins."""
    pairs = []
    for spec in specs:
        src, sep, dst = spec.partition("=")
        if not sep or not src:
            raise InputError(f"--path-map {spec!r}: expected FROM=TO (e.g. /usr/lib/python3/site-packages/mylib=src/mylib)")
        pairs.append((src.replace("\\", "/").rstrip("/") or "/", dst.replace("\\", "/").rstrip("/")))
    return sorted(pairs, key=lambda p: -len(p[0]))


@dataclass(frozen=True, slots=True)
class Location:
    """Where a CI annotation points: a repository file and line, or nothing inside the repository."""

    path: str | None  # repository-relative POSIX path; None when neither culprit nor artifact is in the repository
    line: int
    kind: str  # "culprit" (the changeable frame), "artifact" (the log line where the traceback begins) or "none"
    library: str | None  # "pkg/mod.py:12 in fn" for a culprit outside the repository, named in the message
    log: str  # "artifact:line" as a person reads it
    log_path: str | None = None  # the artifact's repository-relative path, when it is inside the repository
    log_line: int = 0


@dataclass(frozen=True, slots=True)
class LocationMapper:
    repo_root: Path
    path_map: tuple[tuple[str, str], ...] = ()

    @classmethod
    def create(cls, repo_root: str, path_map: Sequence[str] = ()) -> LocationMapper:
        root = Path(repo_root)
        if not root.is_dir():
            raise InputError(f"--repo-root {repo_root}: not a directory")
        return cls(Path(os.path.realpath(root)), tuple(parse_path_map(path_map)))

    def repo_path(self, path: str, base: Path | None = None, mapped: bool = True) -> str | None:
        """The repository-relative path of an existing file inside the repository, else None.

        `mapped`: apply --path-map first (crash frames; not log artifacts). A relative path is taken from `base`
        (the repository root for frames, the working directory for the artifacts a user named).
        """
        p = self._mapped(path.replace("\\", "/")) if mapped else path
        cand = Path(p) if os.path.isabs(p) else (base or self.repo_root) / p
        try:
            real = Path(os.path.realpath(cand))
            if not real.is_relative_to(self.repo_root) or not real.is_file():
                return None
        except (OSError, ValueError):
            return None
        # The path as written (not through symlinks) when it stays inside the repository: code scanning hides symlinks.
        lexical = Path(os.path.normpath(cand))
        rel = lexical.relative_to(self.repo_root) if lexical.is_relative_to(self.repo_root) else real.relative_to(
            self.repo_root)
        s = PurePosixPath(*rel.parts).as_posix()
        return None if s in ("", ".") or s.startswith("../") else s

    def _mapped(self, path: str) -> str:
        for src, dst in self.path_map:
            if src.startswith("/"):
                if path == src or path.startswith(src + "/") or src == "/":
                    rest = path[len(src):].lstrip("/")
                    return _join(dst, rest)
            else:
                # A relative FROM matches at any directory boundary: `site-packages/mylib` fits every install prefix.
                i = path.rfind("/" + src + "/")
                if i >= 0:
                    return _join(dst, path[i + len(src) + 2:])
                if path.startswith(src + "/"):
                    return _join(dst, path[len(src) + 1:])
        return path

    def locate(self, d: Diagnosis) -> Location:
        occ = d.occurrences[0] if d.occurrences else None
        log = f"{occ.source}:{occ.line}" if occ else "?"
        library = f"{short_path(d.culprit.file)}:{d.culprit.line} in {d.culprit.function}" if d.culprit else None
        log_path = self.repo_path(occ.source, base=Path.cwd(), mapped=False) if occ is not None else None
        log_line = max(1, occ.line) if occ is not None else 0
        if d.culprit is not None:
            rel = self.repo_path(d.culprit.file)
            if rel is not None:
                return Location(rel, max(1, d.culprit.line), "culprit", None, log, log_path, log_line)
        if log_path is not None:
            return Location(log_path, log_line, "artifact", library, log, log_path, log_line)
        return Location(None, 0, "none", library, log)


def _join(dst: str, rest: str) -> str:
    if not dst:
        return rest
    return f"{dst}/{rest}" if rest else dst


def locate_all(diagnoses: Iterable[Diagnosis], mapper: LocationMapper) -> dict[str, Location]:
    return {d.id: mapper.locate(d) for d in diagnoses}
