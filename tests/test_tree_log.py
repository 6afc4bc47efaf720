"""The log a tree's walk reads, kept for the next walk (e2g.git.treelog): a later
walk reads only the commits since the kept head, and every history it gives is the
one a walk reading git afresh gives; a rewritten branch, a damaged copy and a
writer killed midway are read afresh."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from e2g.git import treelog
from e2g.git.repo import Repo
from e2g.git.treehistory import tree_histories
from tests import fault_hook
from tests.conftest import git
from tests.test_token_warm import _shape, body, build_tangled


def _paths(root: Path, head: str) -> list[str]:
    return [p for p in git(root, "ls-tree", "-r", "--name-only", head).split() if p]


def _same(opened: Repo, head: str, keep: Path) -> None:
    paths = _paths(opened.root, head)
    kept = tree_histories(opened, head, paths, keep=keep)
    fresh = tree_histories(opened, head, paths)
    assert kept.keys() == fresh.keys()
    for path in paths:
        one, other = kept[path], fresh[path]
        assert (one is None) == (other is None), path
        if one is not None and other is not None:
            assert _shape(one) == _shape(other), path


def test_a_later_walk_reads_only_the_commits_since(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kept at a commit before a merge of a branch forked earlier (its commits
    are new, their parent old), walked again at the head: git is asked for the
    commits since the kept head only, and the histories are a fresh walk's."""
    repo = build_tangled(tmp_path / "repo")
    opened = Repo.open(repo.root)
    keep = tmp_path / "trees" / "repo.log"
    keep.parent.mkdir()
    old = opened.resolve("HEAD~5")  # "main lib": the side branch forked before it
    asked: list[str | None] = []
    real = treelog.read_log

    def spy(repo: Repo, head: str, *, since: str | None = None) -> dict:
        asked.append(since)
        return real(repo, head, since=since)

    monkeypatch.setattr(treelog, "read_log", spy)
    _same(opened, old, keep)
    assert asked == [None, None]  # nothing kept yet; the fresh walk
    kept = treelog._read_kept(keep)
    assert kept is not None and kept.head == old
    # A merge since that changes a file against both its parents (an evil
    # merge: only `git log -c` says so).
    git(repo.root, "checkout", "-q", "-b", "evil", "HEAD")
    repo.commit("evil d", {"d.c": body("d", 15)})
    git(repo.root, "checkout", "-q", "main")
    repo.commit("main lib again", {"lib-b.c": body("b", 34)})
    git(repo.root, "merge", "-q", "--no-ff", "--no-commit", "evil", env=repo.env())
    (repo.root / "a.c").write_text(body("a", 33, "evil"))
    git(repo.root, "commit", "-q", "-a", "-m", "merge evil", env=repo.env())
    head = opened.resolve("HEAD")
    asked.clear()
    _same(opened, head, keep)
    assert asked == [old, None]
    a_c = tree_histories(opened, head, ["a.c"])["a.c"]
    assert a_c is not None and "merge evil" in {r.subject for r in a_c[0]}
    kept = treelog._read_kept(keep)
    assert kept is not None and kept.head == head
    assert list(kept.commits) == list(treelog.tree_log(opened, head).commits)
    # The same head again: git is not asked for the log at all.
    asked.clear()
    tree_histories(opened, head, ["a.c"], keep=keep)
    assert asked == []


def test_a_rewritten_branch_and_a_damaged_copy_are_read_afresh(tmp_path: Path) -> None:
    repo = build_tangled(tmp_path / "repo")
    opened = Repo.open(repo.root)
    keep = tmp_path / "repo.log"
    _same(opened, opened.resolve("HEAD"), keep)
    # The branch rewritten: the kept head is not reached from the new one.
    git(repo.root, "reset", "-q", "--hard", "HEAD~2")
    repo.commit("other x", {"d.c": body("d", 14)})
    head = opened.resolve("HEAD")
    _same(opened, head, keep)
    kept = treelog._read_kept(keep)
    assert kept is not None and kept.head == head
    for damage in (keep.read_bytes()[:1000], b"", b"not a log at all"):
        keep.write_bytes(damage)
        assert treelog._read_kept(keep) is None
        _same(opened, head, keep)
        assert treelog._read_kept(keep) is not None


def test_a_writer_killed_midway_leaves_the_copy_before(tmp_path: Path) -> None:
    """kill -9 while the new copy is being written: the copy before is whole,
    and the next walk goes on from it."""
    repo = build_tangled(tmp_path / "repo")
    opened = Repo.open(repo.root)
    keep = tmp_path / "repo.log"
    old = opened.resolve("HEAD~3")
    tree_histories(opened, old, ["a.c"], keep=keep)
    before = keep.read_bytes()
    script = (
        "import sys; from pathlib import Path; from e2g.git.repo import Repo; "
        "from e2g.git.treehistory import tree_histories; "
        "tree_histories(Repo.open(Path(sys.argv[1])), sys.argv[2], ['a.c'], "
        "keep=Path(sys.argv[3]))"
    )
    head = opened.resolve("HEAD")
    killed = subprocess.run(
        [sys.executable, "-c", script, str(repo.root), head, str(keep)],
        env={**os.environ, **fault_hook.environment("kill@treelog.write")},
        capture_output=True,
        check=False,
    )
    assert killed.returncode == -9, killed.stderr
    assert keep.read_bytes() == before
    _same(opened, head, keep)
    assert not list(keep.parent.glob(".repo.log.*"))  # the leftover is gone


def _log_of(log: treelog.TreeLog) -> tuple[object, ...]:
    return (
        log.head,
        [
            (c.sha, c.parents, c.author, c.subject, c.changes)
            for c in log.commits.values()
        ],
        log.combined,
    )


def test_the_commits_since_are_kept_apart_until_an_eighth_of_the_copy(
    tmp_path: Path,
) -> None:
    """An advance writes the commits since beside the copy, which stays as it
    was; read back, copy and commits apart are the log git gives. Past an eighth
    of the copy they are written into it again. A walk of a head that does not
    reach the kept one (a reset) drops them; a damaged file of them is ignored."""
    repo = build_tangled(tmp_path / "repo")
    for number in range(24):
        repo.commit(f"grow {number}", {"grow.c": body("g", number + 1)})
    git(repo.root, "checkout", "-q", "-b", "topic", "HEAD~2")
    repo.commit("topic d", {"d.c": body("d", 20, "topic")})
    git(repo.root, "checkout", "-q", "main")
    repo.merge("topic")
    opened = Repo.open(repo.root)
    keep = tmp_path / "repo.log"
    since = tmp_path / "repo.log.since"
    base = opened.resolve("HEAD~3")
    treelog.tree_log(opened, base, keep)
    copy = keep.read_bytes()
    assert not since.exists()
    head = opened.resolve("HEAD")  # three commits on, a merge among them
    assert _log_of(treelog.tree_log(opened, head, keep)) == _log_of(
        treelog.tree_log(opened, head)
    )
    assert keep.read_bytes() == copy and since.is_file()
    kept = treelog._read_kept(keep)
    assert kept is not None
    assert _log_of(kept) == _log_of(treelog.tree_log(opened, head))
    assert kept.combined.keys() >= {opened.resolve("HEAD")}
    _same(opened, head, keep)
    # Damaged: ignored, the commits since the copy read from git again.
    since.write_bytes(b"not rows")
    assert _log_of(treelog._read_kept(keep) or treelog.tree_log(opened, head)) == (
        _log_of(treelog.tree_log(opened, base))
    )
    _same(opened, head, keep)
    assert keep.read_bytes() == copy and since.is_file()
    # A reset to the copy's own head: the commits apart are dropped.
    treelog.tree_log(opened, base, keep)
    assert not since.exists()
    assert _log_of(treelog._read_kept(keep) or treelog.tree_log(opened, head)) == (
        _log_of(treelog.tree_log(opened, base))
    )
    # Past an eighth of the copy: one copy again.
    for number in range(6):
        repo.commit(f"more {number}", {"grow.c": body("g", 40 + number)})
    head = opened.resolve("HEAD")
    _same(opened, head, keep)
    assert not since.exists() and keep.read_bytes() != copy
    kept = treelog._read_kept(keep)
    assert kept is not None
    assert _log_of(kept) == _log_of(treelog.tree_log(opened, head))
