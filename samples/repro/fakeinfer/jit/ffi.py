"""Stand-in for the TVM-FFI module loader FlashInfer uses (tvm_ffi.load_module).

A real loader dlopen()s the shared object through C code.  Here the C call is played by
zlib.crc32 (a C extension function Dynamo cannot trace), and the "exported symbols" are
Python callables built from torch ops, registered by the kernel modules at import time.
"""

import zlib
from typing import Callable, Dict

_GLOBAL_FUNCS: Dict[str, Dict[str, Callable]] = {}
_OPEN_HANDLES: Dict[int, str] = {}


def register_global_func(library: str, symbol: str):
    def deco(fn):
        _GLOBAL_FUNCS.setdefault(library, {})[symbol] = fn
        return fn

    return deco


class Function:
    def __init__(self, handle: int, symbol: str, impl: Callable):
        self.handle = handle
        self.symbol = symbol
        self._impl = impl

    def __call__(self, *args):
        return self._impl(*args)

    def __repr__(self):
        return f"<fakeinfer.ffi.Function {self.symbol} handle={self.handle:#x}>"


class Module:
    def __init__(self, handle: int, library: str):
        self.handle = handle
        self.library = library
        self._funcs = _GLOBAL_FUNCS.get(library, {})

    def __getattr__(self, symbol: str) -> Function:
        funcs = self.__dict__["_funcs"]
        if symbol not in funcs:
            raise AttributeError(f"{self.__dict__['library']} does not export {symbol!r}")
        return Function(self.__dict__["handle"], symbol, funcs[symbol])


def _dlopen(path: str) -> int:
    # the real loader hands the path to C; the checksum is our C-extension call
    return zlib.crc32(path.encode("utf-8"))  # expect: ffi


def load_module(path: str) -> Module:
    library = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    handle = _dlopen(path)
    _OPEN_HANDLES[handle] = path
    return Module(handle, library)
