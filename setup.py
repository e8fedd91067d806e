"""The optional C helper crashlens._lines (see src/crashlens/_lines.c); everything else is in pyproject.toml.

The helper is optional: where no C compiler is at hand the install goes on without it and crashlens
uses its pure-Python path (same results, slower on big logs; README "Performance")."""

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class BuildExt(build_ext):
    def build_extensions(self) -> None:
        # -O3 lets GCC and Clang vectorize the block loop; MSVC's /O2 (its default) does the same.
        if self.compiler.compiler_type == "unix":
            for ext in self.extensions:
                ext.extra_compile_args = ["-O3"]
        super().build_extensions()


setup(
    ext_modules=[Extension("crashlens._lines", ["src/crashlens/_lines.c"], optional=True)],
    cmdclass={"build_ext": BuildExt},
)
