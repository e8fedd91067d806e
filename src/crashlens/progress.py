"""A progress bar on stderr for long work (bytes, files, crashes so far): only on a terminal, only after
about a second, never with TERM=dumb, without colour under NO_COLOR."""

from __future__ import annotations

import os
import sys
import threading
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

# Work shorter than this shows no bar at all.
DELAY_S = 1.0


def wanted(stream: TextIO | None = None) -> bool:
    """Whether a bar may be drawn on `stream` (stderr): a terminal, and not a dumb one."""
    stream = stream or sys.stderr
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


class Progress:
    """Counts work done; draws a rich bar once DELAY_S has passed, if `wanted`. Use as a context
    manager; `advance` after each file, `tick` to redraw during a long one."""

    def __init__(self, total_bytes: int, total_files: int, what: str = "scanning",
                 stream: TextIO | None = None, delay: float = DELAY_S) -> None:
        self.total_bytes = max(total_bytes, 1)
        self.total_files = total_files
        self.what = what
        self.stream = stream or sys.stderr
        self.enabled = wanted(self.stream)
        self.delay = delay
        self.start = time.monotonic()
        self.bytes = self.files = self.crashes = 0
        self._bar: Any = None
        self._task: Any = None
        self._timer: Any = None
        self._lock = threading.Lock()

    def __enter__(self) -> Progress:  # noqa: PYI034
        if self.enabled:  # one long file gives no advance until it is done: show the bar anyway
            self._timer = threading.Timer(self.delay, self.tick)
            self._timer.daemon = True
            self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            if self._bar is not None:
                self._bar.stop()
                self._bar = None
            self.enabled = False

    def advance(self, nbytes: int = 0, files: int = 0, crashes: int = 0) -> None:
        self.bytes += nbytes
        self.files += files
        self.crashes += crashes
        self.tick()

    def tick(self) -> None:
        if not self.enabled:
            return
        with self._lock:  # the timer's thread and the worker loop both tick
            if self._bar is None:
                if time.monotonic() - self.start < self.delay - 0.01:
                    return
                self._open()
            self._bar.update(self._task, completed=self.bytes, files=self.files, crashes=self.crashes)

    def _open(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as Bar

        console = Console(file=self.stream, no_color="NO_COLOR" in os.environ, highlight=False,
                          markup=False, emoji=False)
        self._bar = Bar(
            TextColumn(self.what),
            BarColumn(),
            DownloadColumn(),
            TextColumn("{task.fields[files]}/{task.fields[nfiles]} files"),
            TextColumn("{task.fields[crashes]} crashes"),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            refresh_per_second=8,
        )
        self._task = self._bar.add_task(self.what, total=self.total_bytes, files=self.files,
                                        nfiles=self.total_files, crashes=self.crashes)
        self._bar.start()
