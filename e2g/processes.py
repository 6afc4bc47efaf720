"""Worker processes: which way to start them, and how they end with their parent.

Below every package that starts workers (the ingest's parse workers, the matcher's
batch workers), so that both take the same rules from one place.

Forking is fast and shares what the parent has loaded, but a fork copies every lock
as it was: when another thread holds one at that moment (a web server beside an
ingest, a test client), the child can wait on it forever. With other threads alive,
a fork server starts children from a clean, single-threaded process instead.
"""

from __future__ import annotations

import multiprocessing
import os
import select
import sys
import threading
from multiprocessing.context import ForkContext, ForkServerContext
from pathlib import Path


def context() -> ForkContext | ForkServerContext:
    if threading.active_count() > 1 and _main_reimportable():
        return multiprocessing.get_context("forkserver")
    return multiprocessing.get_context("fork")


def _main_reimportable() -> bool:
    """Whether a fork server's child can import the program again, as it must: not
    when it came from stdin or an interactive prompt (then fork, and its risk)."""
    main = sys.modules.get("__main__")
    if main is None:
        return False
    if getattr(main, "__spec__", None) is not None:
        return True
    path = getattr(main, "__file__", None)
    return isinstance(path, str) and Path(path).is_file()


def exit_with(pid: int) -> None:
    """End this process as soon as process `pid` ends (a worker of a killed ingest).

    Not os.getppid(): under the fork server a worker's parent is the server, not the
    ingest. A pidfd turns readable when the process ends; where there is none, the
    pid is polled.
    """
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        os._exit(1)
    except (AttributeError, OSError):
        handle = None
    thread = threading.Thread(
        target=_wait_for_end, args=(pid, handle), name="e2g-parent-watch", daemon=True
    )
    thread.start()


def _wait_for_end(pid: int, handle: int | None) -> None:
    if handle is not None:
        select.select([handle], [], [])
        os._exit(1)
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            os._exit(1)
        except PermissionError:
            pass
        threading.Event().wait(1.0)
