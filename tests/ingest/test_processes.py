"""Worker processes start by fork only when no other thread could hold a lock."""

from __future__ import annotations

import sys
import threading
import types
from collections.abc import Iterator
from contextlib import contextmanager

from e2g.ingest import processes


@contextmanager
def another_thread() -> Iterator[None]:
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        yield
    finally:
        release.set()
        other.join()


def test_fork_alone_and_a_fork_server_beside_other_threads() -> None:
    assert processes.context().get_start_method() == "fork"
    with another_thread():
        assert processes.context().get_start_method() == "forkserver"
    assert processes.context().get_start_method() == "fork"


def test_a_program_read_from_stdin_keeps_fork(monkeypatch) -> None:
    """A fork server's child imports the main program again: from stdin it cannot."""
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    with another_thread():
        assert processes.context().get_start_method() == "fork"
