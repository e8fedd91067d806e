"""A tiny inter-process file lock (py-filelock is not a dependency of the reproducer).

Same shape as filelock.FileLock: a per-object thread lock plus an fcntl lock on a file.
"""

import fcntl
import os
import threading


class FileLock:
    def __init__(self, lock_file, timeout: float = -1, thread_local: bool = True):
        self.lock_file = os.fspath(lock_file)
        self.timeout = timeout
        self._thread_lock = threading.Lock()  # expect: lock
        self._fd = None
        self._counter = 0

    def acquire(self):
        with self._thread_lock:
            if self._counter == 0:
                fd = os.open(self.lock_file, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
                fcntl.flock(fd, fcntl.LOCK_EX)
                self._fd = fd
            self._counter += 1
        return self

    def release(self):
        with self._thread_lock:
            self._counter -= 1
            if self._counter == 0 and self._fd is not None:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
                os.close(self._fd)
                self._fd = None

    def __enter__(self):
        return self.acquire()

    def __exit__(self, exc_type, exc, tb):
        self.release()
        return False
