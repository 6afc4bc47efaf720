"""Repo.open_at (one `git rev-parse`) answers as Repo.open and then resolve do, from
every place a user may stand: the top of a work tree, a subdirectory, inside .git,
a bare clone; and fails alike for an unknown revision and for no repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from e2g.errors import RepoError, UnknownCommit
from e2g.git.repo import Repo


def _git(where: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(where), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    top = tmp_path_factory.mktemp("open") / "work"
    top.mkdir()
    _git(top, "init", "-q", "-b", "main")
    (top / "sub" / "deeper").mkdir(parents=True)
    for number in range(3):
        (top / "sub" / f"f{number}").write_text(f"{number}\n")
        _git(top, "add", ".")
        _git(
            top,
            "-c", "user.name=A", "-c", "user.email=a@example.org",
            "commit", "-q", "-m", f"commit {number}",
        )  # fmt: skip
    _git(top, "tag", "-a", "-m", "one", "v1", "HEAD~1")
    bare = top.parent / "bare.git"
    _git(top.parent, "clone", "-q", "--bare", str(top), str(bare))
    return {
        "top": top,
        "subdirectory": top / "sub" / "deeper",
        "inside .git": top / ".git" / "refs",
        "bare": bare,
    }


@pytest.mark.parametrize("place", ["top", "subdirectory", "inside .git", "bare"])
@pytest.mark.parametrize("rev", ["HEAD", "HEAD~2", "v1", "main", "-x"])
def test_open_at_is_open_then_resolve(
    places: dict[str, Path], place: str, rev: str
) -> None:
    where = places[place]
    repository = Repo.open(where)
    try:
        expected: str | None = repository.resolve(rev)
    except UnknownCommit as error:
        expected, message = None, str(error)
    if expected is None:
        with pytest.raises(UnknownCommit) as raised:
            Repo.open_at(where, rev)
        assert str(raised.value) == message
        return
    found, sha = Repo.open_at(where, rev)
    assert sha == expected
    assert (found.root, found.git_dir, found.common_dir, found.bare) == (
        repository.root,
        repository.git_dir,
        repository.common_dir,
        repository.bare,
    )


def test_open_at_outside_any_repository(tmp_path: Path) -> None:
    with pytest.raises(RepoError, match="not a git repository"):
        Repo.open_at(tmp_path, "HEAD")
    with pytest.raises(RepoError, match="no such directory"):
        Repo.open_at(tmp_path / "missing", "HEAD")
