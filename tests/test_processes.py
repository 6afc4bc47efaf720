"""Worker processes start by fork only when no other thread could hold a lock."""

from __future__ import annotations

import sys
import threading
import types
from collections.abc import Iterator
from contextlib import contextmanager

from e2g import processes


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


def test_worker_results_carry_timezones_whole() -> None:
    """Dates come back from workers in their authors' own offsets and names.

    (A ForkingPickler reducer for timezones once skipped copyreg here; it saved 0.4%
    of pickling them, benchmarks/tricks.py, and went.)"""
    import pickle
    from datetime import UTC, datetime, timedelta, timezone
    from multiprocessing.reduction import ForkingPickler

    zones = [
        UTC,
        timezone(timedelta(hours=-5, minutes=-30)),
        timezone(timedelta(hours=2), "CEST"),
    ]
    for zone in zones:
        when = datetime(2024, 2, 29, 23, 59, tzinfo=zone)
        again = pickle.loads(ForkingPickler.dumps(when))
        assert again == when
        assert again.utcoffset() == when.utcoffset()
        assert again.tzname() == when.tzname()
