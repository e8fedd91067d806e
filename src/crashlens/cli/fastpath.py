"""The commonest command lines, read without click: `crashlens --version` and a plain scan
(`crashlens [scan] [--format F] [--no-audit] [-j N] ... FILE...`).

Importing click costs about 27 ms, a fifth of a small scan's start-up. `parse` reads an argument list
only where it is sure to get exactly what click would (tests/test_cli_fastpath.py compares the two on
generated command lines); anything else (help, a subcommand, `--`, an unknown or malformed option,
`--follow`, no file on a terminal) gives None and click reads it, with its own messages."""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms of start-up)
if TYPE_CHECKING:
    from typing import Any

from . import FORMATS, GROUP_WORDS, SUBCOMMANDS

VERSION = "version"  # what parse gives for `crashlens --version`
_FLAGS = {"--audit": ("audit", True), "--no-audit": ("audit", False), "--color": ("color", True),
          "--no-color": ("color", False), "--follow": ("follow", True)}
_VALUED = {"--format": "fmt", "--signatures": "signatures", "--jobs": "jobs", "-j": "jobs"}


def parse(args: list[str]) -> str | dict[str, Any] | None:
    """VERSION, the scan command's parameters (as click's ctx.params has them), or None for click."""
    if args == ["--version"]:
        return VERSION
    if args and args[0] == "scan":
        args = args[1:]
    elif args and (args[0] in SUBCOMMANDS or args[0] in GROUP_WORDS):
        return None
    params: dict[str, Any] = {"fmt": "terminal", "signatures": [], "audit": True, "color": None,
                              "follow": False, "jobs": None}
    files: list[str] = []
    rest = iter(args)
    for arg in rest:
        if arg == "-" or not arg.startswith("-"):
            files.append(arg)
            continue
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg[:2], "", arg[2:])
        if name in _FLAGS and not eq and not value:
            key, flag = _FLAGS[name]
            params[key] = flag
            continue
        if name not in _VALUED:
            return None
        if not eq and not value:
            value = next(rest, "")
            if not value or value.startswith("-"):  # missing, or an option: click's call
                return None
        key = _VALUED[name]
        if key == "fmt" and value not in FORMATS:
            return None
        if key == "jobs":
            if not (value.isascii() and value.isdigit()) or int(value) < 1:
                return None
            params[key] = int(value)
        elif key == "signatures":
            params[key].append(value)
        else:
            params[key] = value
    if params["follow"] or (not files and sys.stdin.isatty()):
        return None
    params["files"] = tuple(files)
    params["signatures"] = tuple(params["signatures"])
    return params
