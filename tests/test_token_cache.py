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


def _cache(root: Path, name: str, size: int, *, used: float) -> Path:
    directory = root / name
    (directory / "results").mkdir(parents=True)
    (directory / "results" / "answer.json").write_bytes(b"x" * size)
    os.utime(directory / "results", (used, used))
    return directory


def test_a_prune_trusts_sizes_measured_before_for_caches_not_written_since(
    tmp_path: Path,
) -> None:
    """A tree's warm measures every cache while it walks the history, and its
    prune at the end measures again only the caches it wrote: the others' sizes
    are the ones found before (here a cache grown meanwhile by a hand that is
    not the warm's stays counted small, so nothing is evicted)."""
    from e2g.api.token_cache import cache_sizes
    from e2g.config import Settings

    settings = Settings(data_dir=tmp_path)
    root = tmp_path / "tokens"
    old = _cache(root, "old", 100, used=1_000)
    _cache(root, "new", 100, used=2_000)
    measured = cache_sizes(settings)
    assert measured == {"old": 100, "new": 100}
    (old / "results" / "more.json").write_bytes(b"x" * 1_000)
    _prune(root, keep=None, limit=250, measured=measured)
    assert old.is_dir()  # its size as measured: 200 bytes in all, within 250


def test_a_prune_measures_again_the_caches_written_since(tmp_path: Path) -> None:
    """The caches a warm wrote are measured again: grown past the bound, the one
    used least recently goes, though the sizes measured before fitted."""
    from e2g.api.token_cache import cache_sizes
    from e2g.config import Settings

    settings = Settings(data_dir=tmp_path)
    root = tmp_path / "tokens"
    old = _cache(root, "old", 100, used=1_000)
    new = _cache(root, "new", 100, used=2_000)
    measured = cache_sizes(settings)
    (new / "results" / "more.json").write_bytes(b"x" * 1_000)
    os.utime(new / "results", (3_000, 3_000))
    _prune(root, keep=None, limit=1_150, measured=measured, changed={"new"})
    assert not old.exists()
    assert new.is_dir()  # 1,100 bytes: within the bound once the older is gone


def test_a_prune_measures_caches_made_after_the_sizes_were_taken(
    tmp_path: Path,
) -> None:
    from e2g.api.token_cache import cache_sizes
    from e2g.config import Settings

    settings = Settings(data_dir=tmp_path)
    root = tmp_path / "tokens"
    old = _cache(root, "old", 100, used=1_000)
    measured = cache_sizes(settings)
    _cache(root, "late", 500, used=2_000)
    _prune(root, keep=None, limit=550, measured=measured)
    assert not old.exists()
    assert (root / "late").is_dir()
