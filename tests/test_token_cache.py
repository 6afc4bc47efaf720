"""The token cache's bound while other processes write beside it."""

from __future__ import annotations

import os
import tempfile
import threading
import time
from pathlib import Path

from e2g.api.token_cache import _prune


def test_a_prune_beside_a_cache_being_written_never_fails(tmp_path: Path) -> None:
    """`e2g serve` answers several token pages at once: one request's prune
    measured the caches while another wrote its temporary files, which vanished
    between the listing and the stat (FileNotFoundError: HTTP 500 on a crawl of
    linux-sparse). A file gone meanwhile counts as nothing."""
    root = tmp_path / "tokens"
    busy = root / "busy"
    busy.mkdir(parents=True)
    (root / "other").mkdir()
    (root / "other" / "results").write_bytes(b"x" * 100)
    stop = threading.Event()

    def write() -> None:
        while not stop.is_set():
            handle, name = tempfile.mkstemp(dir=busy)
            os.close(handle)
            Path(name).unlink()

    writer = threading.Thread(target=write)
    writer.start()
    failures: list[BaseException] = []
    try:
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            try:
                _prune(root, keep=None, limit=10**9)
            except OSError as error:
                failures.append(error)
                break
    finally:
        stop.set()
        writer.join()
    assert failures == []
    assert (root / "other" / "results").exists()  # within the bound: nothing removed
