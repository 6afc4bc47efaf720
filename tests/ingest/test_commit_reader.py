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


def _git(repo: Path, *args: str) -> str:
    import subprocess

    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=A", "-c", "user.email=a@x.org"]
        + ["-c", "commit.gpgsign=false", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def _damaged(tmp_path: Path) -> tuple[Path, list[str], str]:
    """A repository of five commits, each adding its own file, whose third
    commit's blob is gone (as in a partial or damaged clone): (repo, shas, lost)."""
    repo = tmp_path / "damaged"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    shas = []
    for number in range(5):
        (repo / f"f{number}.c").write_text(
            f"int f{number}(void) {{ return {number}; }}\n"
        )
        _git(repo, "add", f"f{number}.c")
        _git(repo, "commit", "-q", "-m", f"f{number}: add")
        shas.append(_git(repo, "rev-parse", "HEAD"))
    blob = _git(repo, "rev-parse", f"{shas[2]}:f2.c")
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    # git would read the blob's text from an unchanged work-tree file instead.
    (repo / "f2.c").unlink()
    return repo, shas, shas[2]


def test_a_commit_whose_objects_are_gone_is_skipped_and_said(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """LTP's mirror lacks two blobs of 2004: `e2g match HEAD` died at its end,
    after 15,000 commits, on git's "unable to read". The reader passes over such
    a commit, says so, and reads the others of its batch."""
    repo_dir, shas, lost = _damaged(tmp_path)
    repo = Repo.open(repo_dir)
    with repo.reader() as reader:
        got = [commit.sha for commit, _ in reader.read(shas)]
        assert got == [sha for sha in shas if sha != lost]
        assert reader.unreadable == [lost]
        # The reader goes on serving later batches, the lost commit alone too.
        assert [c.sha for c, _ in reader.read([shas[4], lost, shas[0]])] == [
            shas[4],
            shas[0],
        ]
    assert f"commit {lost[:12]} cannot be read" in caplog.text
    assert "partial or damaged clone" in caplog.text


def test_match_of_a_damaged_repository_ends_and_stores_the_rest(
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    repo_dir, shas, lost = _damaged(tmp_path)
    archive = tmp_path / "a.mbox"
    archive.write_bytes(
        b"From x Mon Jan  1 00:00:00 2024\nFrom: B <b@x.org>\nSubject: hello\n"
        b"Message-ID: <h@x.org>\nDate: Mon, 1 Jan 2024 00:00:00 +0000\n\nhi\n"
    )
    env = {"E2G_DATA_DIR": str(tmp_path / "data"), "PATH": "/usr/bin:/bin"}
    import os

    env = {**os.environ, **env}
    run = [sys.executable, "-m", "e2g"]
    subprocess.run([*run, "ingest", str(archive)], check=True, env=env)
    done = subprocess.run(
        [*run, "match", "HEAD", "-C", str(repo_dir), "--jsonl", "-j", "1"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    answered = [line for line in done.stdout.splitlines() if line.strip()]
    assert len(answered) == 4
    assert lost not in done.stdout
    assert f"commit {lost[:12]} cannot be read" in done.stderr
