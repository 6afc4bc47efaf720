"""Which way to start worker processes.

Forking is fast and shares what the parent has loaded, but a fork copies every lock
as it was: when another thread holds one at that moment (a web server beside an
ingest, a test client), the child can wait on it forever. With other threads alive,
a fork server starts children from a clean, single-threaded process instead.
"""

from __future__ import annotations

import multiprocessing
import threading
from multiprocessing.context import ForkContext, ForkServerContext


def context() -> ForkContext | ForkServerContext:
    if threading.active_count() > 1:
        return multiprocessing.get_context("forkserver")
    return multiprocessing.get_context("fork")
