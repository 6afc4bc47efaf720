"""public-inbox reading on real git repositories built in tmp_path."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from e2g.archives.public_inbox import find_epochs, list_name, read_inbox
from e2g.errors import ArchiveUnreadable
from tests.ingest.test_mbox import message


def run_git(git_dir: Path, *args: str, data: bytes = b"", when: int = 0) -> str:
    stamp = f"{1_600_000_000 + when} +0000"
    env = os.environ | {
        "GIT_AUTHOR_NAME": "Inbox",
        "GIT_AUTHOR_EMAIL": "inbox@example.org",
        "GIT_COMMITTER_NAME": "Inbox",
        "GIT_COMMITTER_EMAIL": "inbox@example.org",
        "GIT_AUTHOR_DATE": stamp,
        "GIT_COMMITTER_DATE": stamp,
    }
    command = ["git", f"--git-dir={git_dir}", "-c", "commit.gpgsign=false", *args]
    done = subprocess.run(command, input=data, capture_output=True, check=True, env=env)
    return done.stdout.decode().strip()


@dataclass
class Inbox:
    """A public-inbox epoch written the way public-inbox does: one blob per commit."""

    git_dir: Path
    commits: list[str] = field(default_factory=list)

    @classmethod
    def create(cls, git_dir: Path) -> Inbox:
        subprocess.run(["git", "init", "-q", "--bare", str(git_dir)], check=True)
        return cls(git_dir)

    def _commit(self, name: str, data: bytes) -> str:
        blob = run_git(self.git_dir, "hash-object", "-w", "--stdin", data=data)
        tree = run_git(
            self.git_dir, "mktree", data=f"100644 blob {blob}\t{name}\n".encode()
        )
        parents = ["-p", self.commits[-1]] if self.commits else []
        commit = run_git(
            self.git_dir,
            "commit-tree",
            tree,
            *parents,
            "-m",
            "m",
            when=len(self.commits),
        )
        run_git(self.git_dir, "update-ref", "refs/heads/master", commit)
        self.commits.append(commit)
        return commit

    def add(self, data: bytes) -> str:
        return self._commit("m", data)

    def delete(self, data: bytes) -> str:
        return self._commit("d", data)


def read(path: Path, checkpoint: str | None = None) -> list[tuple[str, bytes, str]]:
    return [
        (raw.origin.position, raw.data, token)
        for raw, token in read_inbox(
            path, source="src", list_hint="frob", checkpoint=checkpoint
        )
    ]


def test_messages_and_a_deletion_oldest_first(tmp_path: Path) -> None:
    inbox = Inbox.create(tmp_path / "frob.git")
    first, second = inbox.add(message(1)), inbox.add(message(2))
    gone = inbox.delete(message(1))
    found = read(inbox.git_dir)
    assert [(position, data) for position, data, _ in found] == [
        (first, message(1)),
        (second, message(2)),
        (f"d:{gone}", message(1)),
    ]
    raw, _ = next(
        iter(read_inbox(inbox.git_dir, source="src", list_hint="frob", checkpoint=None))
    )
    assert (raw.origin.source, raw.origin.list_hint, raw.from_line) == (
        "src",
        "frob",
        None,
    )


def test_resume_reads_only_new_commits(tmp_path: Path) -> None:
    inbox = Inbox.create(tmp_path / "frob.git")
    for number in range(3):
        inbox.add(message(number))
    found = read(inbox.git_dir)
    assert json.loads(found[-1][2]) == {"v": 1, "epochs": {".": inbox.commits[-1]}}
    assert [data for _, data, _ in read(inbox.git_dir, found[0][2])] == [
        message(1),
        message(2),
    ]
    assert read(inbox.git_dir, found[-1][2]) == []
    inbox.add(message(3))
    gone = inbox.delete(message(0))
    again = read(inbox.git_dir, found[-1][2])
    assert [(position, data) for position, data, _ in again] == [
        (inbox.commits[3], message(3)),
        (f"d:{gone}", message(0)),
    ]


def test_rewritten_history_or_unknown_commit_reads_again(tmp_path: Path) -> None:
    inbox = Inbox.create(tmp_path / "frob.git")
    inbox.add(message(1))
    inbox.add(message(2))
    token = read(inbox.git_dir)[-1][2]
    rewritten = Inbox.create(tmp_path / "other.git")
    rewritten.add(message(1))
    rewritten.add(message(9))
    assert [data for _, data, _ in read(rewritten.git_dir, token)] == [
        message(1),
        message(9),
    ]
    # a purge that rewrites history: the checkpoint commit exists but is not an ancestor
    inbox.commits = inbox.commits[:1]
    inbox.add(message(3))
    assert [data for _, data, _ in read(inbox.git_dir, token)] == [
        message(1),
        message(3),
    ]
    assert len(read(inbox.git_dir, "garbage")) == 2


def test_v2_epochs_in_order_with_per_epoch_checkpoints(tmp_path: Path) -> None:
    root = tmp_path / "frob"
    zero = Inbox.create(root / "git" / "0.git")
    one = Inbox.create(root / "git" / "1.git")
    ten = Inbox.create(root / "git" / "10.git")  # empty: a newly started epoch
    (root / "all.git").mkdir()
    zero.add(message(1))
    one.add(message(2))
    assert [epoch.name for epoch in find_epochs(root)] == [
        "git/0.git",
        "git/1.git",
        "git/10.git",
    ]
    found = read(root)
    assert [data for _, data, _ in found] == [message(1), message(2)]
    assert json.loads(found[-1][2])["epochs"] == {
        "git/0.git": zero.commits[0],
        "git/1.git": one.commits[0],
    }
    ten.add(message(3))
    assert [data for _, data, _ in read(root, found[-1][2])] == [message(3)]
    assert list_name(root / "git" / "1.git") == "frob"


def test_commit_without_m_or_d_is_skipped_and_counted(tmp_path: Path, caplog) -> None:
    inbox = Inbox.create(tmp_path / "frob.git")
    inbox._commit("README", b"not a message\n")
    inbox.add(message(1))
    with caplog.at_level("WARNING", logger="e2g.notice"):
        assert [data for _, data, _ in read(inbox.git_dir)] == [message(1)]
    assert "1 commit holds no message (no m or d file)" in caplog.text


def _object_file(git_dir: Path, sha: str) -> Path:
    return git_dir / "objects" / sha[:2] / sha[2:]


def test_a_lost_message_blob_is_counted_and_the_rest_read(
    tmp_path: Path, caplog
) -> None:
    inbox = Inbox.create(tmp_path / "frob.git")
    for number in (1, 2, 3):
        inbox.add(message(number))
    lost = run_git(inbox.git_dir, "rev-parse", f"{inbox.commits[1]}:m")
    _object_file(inbox.git_dir, lost).unlink()
    with caplog.at_level("WARNING", logger="e2g.notice"):
        got = [data for _, data, _ in read(inbox.git_dir)]
    assert got == [message(1), message(3)]
    assert "1 commit's message blob is missing" in caplog.text


def test_a_damaged_history_is_said_and_the_next_epoch_read(
    tmp_path: Path, caplog
) -> None:
    """A lost commit object breaks an epoch's history: git cannot list it, so the
    epoch is said to be unread (not raised), and the run goes on with the next."""
    root = tmp_path / "inbox"
    first = Inbox.create(root / "git" / "0.git")
    for number in (1, 2, 3):
        first.add(message(number))
    second = Inbox.create(root / "git" / "1.git")
    second.add(message(4))
    _object_file(first.git_dir, first.commits[0]).unlink()  # the oldest commit
    with caplog.at_level("WARNING", logger="e2g.notice"):
        got = [data for _, data, _ in read(root)]
    assert got == [message(4)]
    assert (
        "git failed" in caplog.text and "the rest of 0.git was not read" in caplog.text
    )


def test_non_bare_checkout_and_list_names(tmp_path: Path) -> None:
    work = tmp_path / "io-uring.vger.kernel.org.0"
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    inbox = Inbox(work / ".git")
    inbox.add(message(1))
    assert [data for _, data, _ in read(work)] == [message(1)]
    assert list_name(work) == "io-uring.vger.kernel.org"
    assert list_name(tmp_path / "lists" / "repo") == "lists"


def test_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(ArchiveUnreadable, match="not a public-inbox git repository"):
        list(read_inbox(tmp_path, source="s", list_hint=None, checkpoint=None))
