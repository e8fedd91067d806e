"""Mimics flashinfer.api_logging: at the default level the decorator is the identity."""

import functools
import os

_API_LOG_LEVEL = int(os.environ.get("FAKEINFER_LOGLEVEL", "0"))


def flashinfer_api(func):
    if _API_LOG_LEVEL == 0:
        return func

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        print(f"[fakeinfer api] {func.__qualname__}")
        return func(*args, **kwargs)

    return wrapper
