"""TreeWriter behind (e2g match --tree): a branch's record is written by a thread
while the caller goes on, and the log copied into the database behind it; what
reads the connection, and the close, wait for it; a failure there is raised."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from e2g.errors import StoreError
from e2g.index.db import connect
from e2g.index.link_writer import LinkWriter, TreeWriter

REPO = "/src/frob"
SHAS = [f"{n:040x}" for n in range(1, 200)]


def _reached(path: Path) -> list[str]:
    with closing(sqlite3.connect(path)) as reader:
        return [
            sha
            for (sha,) in reader.execute(
                "SELECT sha FROM tree_commits WHERE gone = 0 ORDER BY sha"
            )
        ]


def _record(writer: TreeWriter) -> None:
    writer.set_branch(
        REPO, tree="stable", branch="linux-1.0.y", tip=SHAS[-1], shas=SHAS, merges={}
    )


@pytest.mark.parametrize("behind", [False, True])
def test_a_record_is_there_once_settled(tmp_path: Path, behind: bool) -> None:
    path = tmp_path / "store.sqlite3"
    connect(path).close()
    with TreeWriter(path, behind=behind) as writer:
        _record(writer)
        writer.settle()
        assert _reached(path) == SHAS
        # The links written beside it wait for it too.
        with LinkWriter(path, repo=REPO, beside=writer) as links:
            _record(writer)
            assert links.done(max_seq=0) == set()
    assert _reached(path) == SHAS


def test_the_log_is_copied_behind(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    connect(path).close()
    with closing(connect(path)) as other, TreeWriter(path, behind=True) as writer:
        _record(writer)
        writer.copy_log()
        writer.settle()
        # Every page of the log is in the database: a passive checkpoint finds
        # nothing left to copy.
        busy, log, copied = other.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        assert (busy, log) == (0, copied) and log > 0
        with closing(connect(path)) as fresh:
            rows = fresh.execute("SELECT count(*) FROM tree_commits").fetchone()
        assert rows == (len(SHAS),)


def test_a_record_that_failed_behind_is_raised(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    connect(path).close()
    with closing(sqlite3.connect(path)) as other:
        other.execute("DROP TABLE tree_commits")
    writer = TreeWriter(path, behind=True)
    _record(writer)  # returns at once
    with pytest.raises(StoreError, match="no such table"):
        writer.settle()
    writer.settle()  # raised once
    _record(writer)
    with pytest.raises(StoreError, match="no such table"), writer:
        pass  # the close raises what failed behind


def test_the_close_raises_the_caller_s_error_not_the_one_behind(
    tmp_path: Path,
) -> None:
    path = tmp_path / "store.sqlite3"
    connect(path).close()
    with closing(sqlite3.connect(path)) as other:
        other.execute("DROP TABLE tree_commits")
    with pytest.raises(KeyError), TreeWriter(path, behind=True) as writer:
        _record(writer)
        raise KeyError("the caller's")
