"""Exclusive file locks taken with a bounded wait: the one way e2g waits for another
e2g (the data dir's writer lock, a file's token history, the mirrors' registry).

`flock` locks belong to the open file, so they end with the process, even one
killed with SIGKILL: a lock file never needs cleaning up after a crash.
"""

from __future__ import annotations

import fcntl
import time

POLL_SECONDS = 0.05


def flock_within(descriptor: int, seconds: float) -> bool:
    """Take the exclusive lock on `descriptor`, trying for `seconds` at most (0: once)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL_SECONDS)
