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
