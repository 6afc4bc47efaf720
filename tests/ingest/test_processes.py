"""Worker processes start by fork only when no other thread could hold a lock."""

from __future__ import annotations

import threading

from e2g.ingest import processes


def test_fork_alone_and_a_fork_server_beside_other_threads() -> None:
    assert processes.context().get_start_method() == "fork"
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert processes.context().get_start_method() == "forkserver"
    finally:
        release.set()
        other.join()
    assert processes.context().get_start_method() == "fork"


def test_a_program_read_from_stdin_keeps_fork(monkeypatch) -> None:
    """A fork server's child imports the main program again: from stdin it cannot."""
    import sys
    import types

    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert processes.context().get_start_method() == "fork"
    finally:
        release.set()
        other.join()
