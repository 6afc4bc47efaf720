"""Every git e2g starts runs with glibc's allocator told to keep what git frees
(e2g.git.objects.git_environment): blame, log, cat-file, fast-import, on the
user's repository and in a token history. A `git` first on PATH records the
environment it was started with, then runs the real one."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest

from e2g.errors import RepoError
from e2g.git.objects import ObjectReader, git_environment
from e2g.git.repo import Repo
from e2g.git.trees import is_ancestor
from e2g.git.viewgit import view_git
from tests.conftest import git

_OURS = "glibc.malloc.mmap_threshold=4194304:glibc.malloc.trim_threshold=16777216"


@pytest.fixture
def recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A repository of two commits, and the file each git started logs to."""
    top = tmp_path / "work"
    top.mkdir()
    git(top, "init", "-q", "-b", "main")
    (top / "f.c").write_text("int x;\n")
    git(top, "add", "f.c")
    identity = ("-c", "user.name=A", "-c", "user.email=a@example.org")
    git(top, *identity, "commit", "-q", "-m", "one")
    (top / "f.c").write_text("int x;\nint x;\n")
    git(top, *identity, "commit", "-q", "-a", "-m", "two")
    real = shutil.which("git")
    assert real is not None
    shims = tmp_path / "bin"
    shims.mkdir()
    log = tmp_path / "started.log"
    shim = shims / "git"
    shim.write_text(
        f'#!/bin/sh\nprintf "%s|%s\\n" "$*" "$GLIBC_TUNABLES" >> "{log}"\n'
        f'exec "{real}" "$@"\n'
    )
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{shims}:{Path(real).parent}")
    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    return top, log


def _started(log: Path) -> list[str]:
    return [line.rpartition("|")[2] for line in log.read_text().splitlines()]


def test_every_git_on_the_repository_and_in_a_view_history_keeps_what_it_frees(
    recorded: tuple[Path, Path], tmp_path: Path
) -> None:
    top, log = recorded
    repository = Repo.open(top)
    head = repository.resolve("HEAD")
    found = repository.blame(head, "f.c")
    assert [line.number for line in found.lines] == [1, 2]
    assert is_ancestor(repository, f"{head}~1", head)
    assert [c.sha for c in repository.commits([head], diffs=False)] == [head]
    assert repository.file_text(head, "f.c") == "int x;\nint x;\n"
    with ObjectReader(repository.git_dir, error=RepoError, label="work") as objects:
        assert objects.get(f"{head}:f.c", limit=100) == (b"int x;\nint x;\n", 14)
    view_git(None, ["init", "-q", "--bare", str(tmp_path / "view.git")])
    started = _started(log)
    assert len(started) >= 7
    assert set(started) == {_OURS}


def test_the_users_own_tunables_come_after_ours_so_theirs_win(
    recorded: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    top, log = recorded
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=0")
    Repo.open(top).resolve("HEAD")
    assert set(_started(log)) == {f"{_OURS}:glibc.malloc.trim_threshold=0"}


def test_the_environment_given_is_kept_beside_the_tunables() -> None:
    env = git_environment({"GIT_INDEX_FILE": "/nowhere/index", "PATH": "/bin"})
    assert env == {
        "GIT_INDEX_FILE": "/nowhere/index",
        "PATH": "/bin",
        "GLIBC_TUNABLES": _OURS,
    }


def test_blame_reads_the_ignore_revs_config_once_per_repository(
    recorded: tuple[Path, Path],
) -> None:
    """A warm's worker blames hundreds of files through one Repo: the config that
    says which revisions blame looks through is read at its first blame only."""
    top, log = recorded
    repository = Repo.open(top)
    head = repository.resolve("HEAD")
    for _ in range(3):
        assert len(repository.blame(head, "f.c").lines) == 2
    asked = [line for line in log.read_text().splitlines() if " config " in line]
    assert len(asked) == 1
    Repo.open(top).blame(head, "f.c")  # another command's Repo reads it afresh
    asked = [line for line in log.read_text().splitlines() if " config " in line]
    assert len(asked) == 2
