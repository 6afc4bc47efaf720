"""CommitReader (one `git diff-tree --stdin` for many batches) against Repo.commits()."""

from __future__ import annotations

from pathlib import Path

import pytest

import e2g.git.commits as gitrepo
from e2g.errors import RepoError
from e2g.git.repo import Repo
from e2g.mail.patch import diff_lines
from tests.conftest import clone
from tests.ingest.conftest import repo_path


def test_batches_read_as_commits_reads_them_with_their_diff_lines(history) -> None:
    repo = Repo.open(repo_path(history))
    shas = repo.rev_list([])
    expected = [(c, diff_lines(c.patch.diff)) for c in repo.commits(shas)]
    with repo.reader() as reader:
        # One process, batches of every size, the same commit twice, in any order.
        for batch in ([shas[0]], shas[1:4], shas[4:], [], list(reversed(shas)), shas):
            got = [(commit, lines) for commit, lines in reader.read(batch)]
            want = [pair for sha in batch for pair in expected if pair[0].sha == sha]
            assert [commit for commit, _ in got] == [commit for commit, _ in want]
            assert [lines for _, lines in got] == [lines for _, lines in want]


def test_lines_equal_diff_lines_of_each_diff(history) -> None:
    repo = Repo.open(repo_path(history))
    with repo.reader() as reader:
        pairs = list(reader.read(repo.rev_list([])))
    assert [commit.sha for commit, _ in pairs] == repo.rev_list([])
    for commit, lines in pairs:
        assert lines == diff_lines(commit.patch.diff), commit.subject
    renamed = {commit.sha: lines for commit, lines in pairs}[str(history["rename"])]
    assert renamed == {"src/ring.c": (["long line3;"], ["int line3;"])}


def test_without_diffs_as_commits_reads_them(history) -> None:
    repo = Repo.open(repo_path(history))
    shas = repo.rev_list([])
    with repo.reader(diffs=False) as reader:
        assert [commit for commit, _ in reader.read(shas)] == list(
            repo.commits(shas, diffs=False)
        )


def test_merges_and_unknown_shas_give_nothing(history) -> None:
    repo = Repo.open(repo_path(history))
    missing = "0123456789" * 4
    asked = [str(history["merge"]), missing, str(history["root"])]
    with repo.reader() as reader:
        assert [c.sha for c, _ in reader.read(asked)] == [history["root"]]
        # Names that are not full shas are resolved first (git would echo them).
        assert [c.sha for c, _ in reader.read(["v1.0", "HEAD^1"])] == [
            history["binary"],
            history["main-side"],
        ]


def test_a_caller_that_stops_early_leaves_the_next_batch_whole(history) -> None:
    repo = Repo.open(repo_path(history))
    shas = repo.rev_list([])
    expected = list(repo.commits(shas))
    with repo.reader() as reader:
        stream = reader.read(shas)
        assert next(stream)[0] == expected[0]
        stream.close()  # git is still printing this batch
        assert [commit for commit, _ in reader.read(shas)] == expected


def test_one_commit_read_starts_one_git(history, monkeypatch) -> None:
    """`e2g link` reads one commit and stops: the reader starts no second git for a
    batch nobody asked for (it starts one when a batch comes)."""
    repo = Repo.open(repo_path(history))
    shas = repo.rev_list([])
    started = []
    start = gitrepo.CommitReader._start

    def counted(reader: gitrepo.CommitReader):  # type: ignore[no-untyped-def]
        started.append(reader)
        return start(reader)

    monkeypatch.setattr(gitrepo.CommitReader, "_start", counted)
    first = next(iter(repo.commits(shas)))
    assert first.sha == shas[0] and len(started) == 1
    with repo.reader() as reader:
        stream = reader.read(shas)
        next(stream)
        stream.close()
        assert len(started) == 2
        assert [commit.sha for commit, _ in reader.read(shas[1:])] == shas[1:]
        assert len(started) == 3


@pytest.mark.parametrize("size", [1, 7, 64])
def test_tiny_reads_and_tiny_batches(history, monkeypatch, size: int) -> None:
    repo = Repo.open(repo_path(history))
    shas = repo.rev_list([])
    expected = list(repo.commits(shas))
    monkeypatch.setattr(gitrepo, "_READ_SIZE", size)
    monkeypatch.setattr(gitrepo, "_STREAM_BATCH", 2)
    with repo.reader() as reader:
        assert [commit for commit, _ in reader.read(shas)] == expected


def test_shallow_boundary_reads_as_commits_reads_it(history, tmp_path: Path) -> None:
    repo = Repo.open(clone(repo_path(history), tmp_path / "shallow", "--depth", "3"))
    shas = repo.rev_list([])
    with repo.reader() as reader:
        got = [commit for commit, _ in reader.read(shas)]
    assert got == list(repo.commits(shas))
    assert next(c for c in got if c.sha == history["unicode"]).patch.files == ()


def test_git_dying_is_a_repo_error(history, tmp_path: Path) -> None:
    repo = Repo.open(repo_path(history))
    with repo.reader() as reader:
        reader._process.kill()
        reader._process.wait()
        with pytest.raises(RepoError):
            list(reader.read([str(history["root"])]))
        # The next batch gets a new git.
        assert [c.sha for c, _ in reader.read([str(history["root"])])] == [
            history["root"]
        ]


def test_close_ends_git(history) -> None:
    repo = Repo.open(repo_path(history))
    reader = repo.reader()
    process = reader._process
    list(reader.read(repo.rev_list([])))
    reader.close()
    assert process.returncode == 0
