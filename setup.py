"""The optional C helper crashlens._lines (see src/crashlens/_lines.c); everything else is in pyproject.toml.

The helper is optional: where no C compiler is at hand the install goes on without it and crashlens
uses its pure-Python path (same results, slower on big logs; docs/performance.md). A wheel built
without it holds only Python and data, so it is tagged py3-none-any; with it, it is tagged for the
interpreter and platform it was built for. CRASHLENS_PURE_PYTHON=1 at build time skips the helper."""

import os

from setuptools import Extension, setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_ext import build_ext


class BuildExt(build_ext):
    def build_extensions(self) -> None:
        # -O3 lets GCC and Clang vectorize the block loop; MSVC's /O2 (its default) does the same.
        if self.compiler.compiler_type == "unix":
            for ext in self.extensions:
                ext.extra_compile_args = ["-O3"]
        super().build_extensions()


class BdistWheel(bdist_wheel):
    """Tag the wheel by what it holds: pure Python unless the C helper was actually built."""

    def run(self) -> None:
        if not self.skip_build:
            self.run_command("build")
        build = self.get_finalized_command("build_ext")
        built = [path for path in build.get_outputs() if os.path.exists(path)]
        if not built:  # the optional helper failed to build: nothing in the wheel is platform code
            self.distribution.ext_modules = []
            self.root_is_pure = True  # purelib, tagged py3-none-any
        super().run()


EXTENSIONS = [] if os.environ.get("CRASHLENS_PURE_PYTHON") == "1" else [
    Extension("crashlens._lines", ["src/crashlens/_lines.c"], optional=True)]


setup(ext_modules=EXTENSIONS, cmdclass={"build_ext": BuildExt, "bdist_wheel": BdistWheel})
