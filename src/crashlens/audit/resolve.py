"""Finds a module's source in search paths by reading files (never importing), and caches parsed ASTs."""

from __future__ import annotations

import ast
import os
import sys
from functools import lru_cache

from .._struct import dataclass
from .rules import Rules

_EXTENSION_SUFFIXES = (".so", ".pyd")
_SITE_MARKERS = ("site-packages", "dist-packages")


@dataclass(frozen=True, slots=True)
class ModuleSource:
    """Where a module lives: a .py file, a package __init__, or a compiled extension."""

    name: str
    path: str  # the .py file, the extension file, or the directory of a namespace package
    root: str  # the search path it was found under
    kind: str  # source | extension | namespace

    @property
    def is_package(self) -> bool:
        return self.kind == "namespace" or os.path.basename(self.path) == "__init__.py"

    @property
    def relpath(self) -> str:
        return os.path.relpath(self.path, self.root)


def stdlib_names() -> frozenset[str]:
    return frozenset(getattr(sys, "stdlib_module_names", ())) | frozenset(sys.builtin_module_names)


class ModuleIndex:
    """Module lookup over a fixed list of search paths, with per-directory listings and ASTs cached."""

    def __init__(self, search_paths: list[str], rules: Rules) -> None:
        self.search_paths = [p for p in dict.fromkeys(os.path.abspath(p) for p in search_paths) if os.path.isdir(p)]
        self.rules = rules
        self._stdlib = stdlib_names()
        self._listing: dict[str, frozenset[str]] = {}
        self._modules: dict[str, ModuleSource | None] = {}
        self._trees: dict[str, ast.Module | None] = {}
        self._package_files: dict[str, list[tuple[str, str]]] = {}
        self._bytes: dict[str, bytes] = {}

    def _entries(self, directory: str) -> frozenset[str]:
        names = self._listing.get(directory)
        if names is None:
            try:
                names = frozenset(os.listdir(directory))
            except OSError:
                names = frozenset()
            self._listing[directory] = names
        return names

    def is_stdlib(self, modname: str) -> bool:
        return modname.split(".")[0] in self._stdlib

    def find(self, modname: str) -> ModuleSource | None:
        """The module's location, or None. Stdlib modules are never looked up: the rules name them."""
        if modname in self._modules:
            return self._modules[modname]
        found = None if self.is_stdlib(modname) or not modname else self._search(modname)
        self._modules[modname] = found
        return found

    def _search(self, modname: str) -> ModuleSource | None:
        parts = modname.split(".")
        for root in self.search_paths:
            directory = os.path.join(root, *parts[:-1])
            if parts[:-1] and not all(
                parts[i] in self._entries(os.path.join(root, *parts[:i])) for i in range(len(parts) - 1)
            ):
                continue
            entries = self._entries(directory)
            last = parts[-1]
            if last in entries:
                package_dir = os.path.join(directory, last)
                if "__init__.py" in self._entries(package_dir):
                    return ModuleSource(modname, os.path.join(package_dir, "__init__.py"), root, "source")
            if last + ".py" in entries:
                return ModuleSource(modname, os.path.join(directory, last + ".py"), root, "source")
            for entry in entries:
                if entry.startswith(last + ".") and entry.endswith(_EXTENSION_SUFFIXES):
                    return ModuleSource(modname, os.path.join(directory, entry), root, "extension")
            if last in entries and os.path.isdir(os.path.join(directory, last)):
                return ModuleSource(modname, os.path.join(directory, last), root, "namespace")
        return None

    def is_walkable(self, modname: str) -> bool:
        """Whether the walk may enter the module: Python source, not stdlib, not an opaque package."""
        if self.rules.is_opaque_package(modname.split(".")[0]):
            return False
        source = self.find(modname)
        return source is not None and source.kind in ("source", "namespace")

    def parse(self, path: str) -> ast.Module | None:
        if path in self._trees:
            return self._trees[path]
        tree: ast.Module | None
        try:
            tree = ast.parse(self.read_bytes(path), filename=path)
        except (SyntaxError, ValueError):
            tree = None
        self._trees[path] = tree
        return tree

    def package_files(self, top: str) -> list[tuple[str, str]]:
        """(module name, path) of every .py file of an installed package, importable subpackages only."""
        if top in self._package_files:
            return self._package_files[top]
        files: list[tuple[str, str]] = []
        source = self.find(top)
        if source is not None and source.is_package:
            package_dir = os.path.dirname(source.path) if source.kind == "source" else source.path
            for dirpath, dirnames, filenames in os.walk(package_dir):
                # data directories (vendored examples, build files) are not part of the package's code
                dirnames[:] = sorted(d for d in dirnames if os.path.isfile(os.path.join(dirpath, d, "__init__.py")))
                for filename in sorted(filenames):
                    if filename.endswith(".py"):
                        path = os.path.join(dirpath, filename)
                        rel = os.path.relpath(path, source.root)[:-3].replace(os.sep, ".")
                        files.append((rel.removesuffix(".__init__"), path))
        self._package_files[top] = files
        return files

    def read_bytes(self, path: str) -> bytes:
        data = self._bytes.get(path)
        if data is None:
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError:
                data = b""
            self._bytes[path] = data
        return data

    def locate_logged_file(self, logged_path: str) -> ModuleSource | None:
        """Map a path printed in a log (maybe from another machine) to the same module installed here.

        The module name is the part after site-packages/dist-packages; without such a marker, the
        longest tail of the path that names an importable module here is used.
        """
        norm = logged_path.replace("\\", "/")
        if not norm.endswith(".py"):
            return None
        parts = [p for p in norm[:-3].split("/") if p]
        starts: list[int] = []
        for i in range(len(parts) - 1, -1, -1):
            if parts[i] in _SITE_MARKERS:
                starts = [i + 1]
                break
        if not starts:
            starts = list(range(max(0, len(parts) - 8), len(parts)))
        for start in starts:
            mod_parts = parts[start:]
            if not mod_parts or not all(p.isidentifier() for p in mod_parts):
                continue
            if mod_parts[-1] == "__init__":
                mod_parts = mod_parts[:-1]
            if not mod_parts:
                continue
            source = self.find(".".join(mod_parts))
            if source is not None and source.kind == "source":
                return source
        return None


@lru_cache(maxsize=8)
def shared_index(search_paths: tuple[str, ...], rules: Rules) -> ModuleIndex:
    """One index per set of search paths, so repeated audits in one process reuse parsed files."""
    return ModuleIndex(list(search_paths), rules)
