"""How a command is stopped from outside: by a signal, or by its reader leaving; each with the same outcome
every time (README, "Exit codes").

- SIGTERM (docker, Kubernetes, systemd, `timeout`), SIGHUP (the terminal closed) and SIGINT (Ctrl-C) stop a
  long-running command (`watch`, `--follow`, `run`) the same way: `with stop_on_signals():` turns the first
  one into `Stopped`, raised where the command is, so its `finally` writes what it found; further signals
  are ignored until then, so that the write is not cut short. `main` exits 128 + the signal's number
  (130, 143, 129), as a shell reports a process a signal ended.
- A reader that leaves early (`crashlens LOG | head`) does not change the exit code: `deliver` writes a
  report and gives the command's own code, whether or not the reader took all of it.
"""

from __future__ import annotations

import errno
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms of start-up)
if TYPE_CHECKING:
    from collections.abc import Callable

_SIGNAL_NAMES = ("SIGINT", "SIGTERM", "SIGHUP")


class Stopped(KeyboardInterrupt):
    """A stop signal arrived; a KeyboardInterrupt, so that code prepared for Ctrl-C is prepared for it."""

    def __init__(self, signum: int, name: str) -> None:
        super().__init__(signum)
        self.signum = signum
        self.name = name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class stop_on_signals:  # noqa: N801 - used as `with stop_on_signals():`
    """Within the block, the first SIGINT, SIGTERM or SIGHUP raises Stopped; later ones are ignored until
    the block is left, so its cleanup runs undisturbed. Outside the main thread it does nothing."""

    def __init__(self) -> None:
        self._previous: dict[int, object] = {}
        self._stopping = False

    def _handler(self, signum: int, _frame: object) -> None:
        if self._stopping:
            return
        self._stopping = True
        import signal

        raise Stopped(signum, signal.Signals(signum).name)

    def __enter__(self) -> stop_on_signals:
        import signal  # here: a plain scan never installs a handler

        try:
            for name in _SIGNAL_NAMES:
                if hasattr(signal, name):
                    num = getattr(signal, name)
                    self._previous[num] = signal.signal(num, self._handler)
        except ValueError:  # not the main thread: leave the handlers alone
            self._restore()
        return self

    def __exit__(self, *exc: object) -> None:
        self._restore()

    def _restore(self) -> None:
        import signal

        for num, h in self._previous.items():
            signal.signal(num, h)  # type: ignore[arg-type]
        self._previous.clear()


def reader_gone(e: BaseException) -> bool:
    """Whether `e` says that the reader of our output has gone (a closed pipe)."""
    return isinstance(e, BrokenPipeError) or (isinstance(e, OSError) and e.errno == errno.EPIPE)


def deliver(write: Callable[[], object], code: int) -> int:
    """Run `write` (it writes a report to stdout) and give `code`, also when the reader left before the
    end: `crashlens LOG | head -1` exits as `crashlens LOG > file` does, every time, so a CI job run
    with `set -o pipefail` does not fail at random."""
    from . import _silence_stdout, _stdout_is_devnull

    was_devnull = _stdout_is_devnull()
    try:
        write()
        sys.stdout.flush()
    except OSError as e:
        if not reader_gone(e):
            raise
        _silence_stdout()
    except SystemExit:
        # rich answers a closed stdout by pointing it at /dev/null and exiting 1.
        if was_devnull or not _stdout_is_devnull():
            raise
    return code
