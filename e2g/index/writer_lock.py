"""The data dir's writer lock: one ingest at a time writes a store, and readers can
tell that one is running without taking the lock.

Its own module, apart from the StoreWriter, so that a search (which asks whether an
ingest is running before it catches its index up) does not import the writer.
"""

from __future__ import annotations

import os
from pathlib import Path

from e2g.errors import StoreError
from e2g.locks import flock_within

LOCK_NAME = "ingest.lock"
# A process forked by another thread holds a copy of the lock until it execs or
# exits (a git started by a web request beside an ingest): a writer that finds
# the lock taken waits this long before it says another e2g is writing.
LOCK_GRACE_SECONDS = 2.0


def acquire_lock(path: Path) -> int:
    """The data dir's writer lock, with the holder's pid written in it so that readers
    can tell a running ingest without taking the lock (`writer_running`)."""
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    if not flock_within(descriptor, LOCK_GRACE_SECONDS):
        holder = os.pread(descriptor, 32, 0).decode("ascii", "replace").strip()
        os.close(descriptor)
        who = f" (pid {holder})" if holder.isdigit() else ""
        raise StoreError(
            f"another e2g{who} is writing to {path.parent}: wait for it to finish, "
            "or use another --data-dir"
        )
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, str(os.getpid()).encode(), 0)
    return descriptor


def release_lock(descriptor: int) -> None:
    try:
        os.ftruncate(descriptor, 0)
    finally:
        os.close(descriptor)


def writer_running(data_dir: Path) -> bool:
    """Whether an ingest holds the data dir's writer lock now, read without taking it
    (a reader that took it, even for a moment, could make an ingest fail to start).
    A holder killed with SIGKILL leaves its pid behind: it counts only while alive."""
    try:
        text = (data_dir / LOCK_NAME).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return False
    if not text.isdigit():
        return False
    try:
        os.kill(int(text), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, and someone else's
    return True
