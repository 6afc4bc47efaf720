"""Fixtures for ingest tests: a small git history with every awkward commit shape."""

from __future__ import annotations

import os
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from tests.conftest import commit_object

BASE = datetime(2023, 5, 1, 10, 0, 0, tzinfo=timezone(timedelta(hours=2)))


def run_git(repo: Path, *args: str, stdin: bytes | None = None, when: int = 0) -> str:
    """Run git with fixed identities and dates: `when` is hours after BASE."""
    stamp = (BASE + timedelta(hours=when)).isoformat()
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Jöhn Doe",
        "GIT_AUTHOR_EMAIL": "john@old.example",
        "GIT_COMMITTER_NAME": "Maintainer",
        "GIT_COMMITTER_EMAIL": "maint@example.org",
        "GIT_AUTHOR_DATE": stamp,
        "GIT_COMMITTER_DATE": (BASE + timedelta(hours=when, minutes=30)).isoformat(),
    }
    result = subprocess.run(
        ["git", "-C", str(repo), "-c", "commit.gpgsign=false", *args],
        input=stdin,
        capture_output=True,
        check=True,
        env=env,
    )
    return result.stdout.decode("utf-8", errors="replace")


def commit_all(
    repo: Path, message: bytes, *, when: int, extra: tuple[str, ...] = ()
) -> str:
    run_git(repo, "add", "-A")
    run_git(
        repo,
        "commit",
        "-q",
        "--allow-empty",
        *extra,
        "-F",
        "-",
        stdin=message,
        when=when,
    )
    return run_git(repo, "rev-parse", "HEAD").strip()


def git_patch_ids(repo: Path) -> dict[str, str]:
    """sha -> `git log -p --full-index | git patch-id --stable`, git's own answer."""
    log = subprocess.run(
        ["git", "-C", str(repo), "log", "-p", "--full-index", "--no-merges", "-M"],
        capture_output=True,
        check=True,
    ).stdout
    ids = subprocess.run(
        ["git", "patch-id", "--stable"], input=log, capture_output=True, check=True
    ).stdout.decode()
    return {
        sha: patch_id for patch_id, sha in (line.split() for line in ids.splitlines())
    }


def raw_commit(repo: Path, message: bytes) -> str:
    """A commit whose message bytes are not UTF-8 and say no encoding."""
    return commit_object(
        repo, message, identity=b"Raw Writer <raw@example.org> 1682935200 +0200"
    )


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str | Path]:
    """A small history with every awkward commit shape; returns named shas and the path."""
    repo = tmp_path_factory.mktemp("repo")
    run_git(repo, "init", "-q", "-b", "main")
    (repo / ".mailmap").write_text("Jöhn Doe <john@new.example> <john@old.example>\n")
    (repo / "src").mkdir()
    (repo / "src" / "queue.c").write_text("".join(f"int line{i};\n" for i in range(40)))
    shas: dict[str, str | Path] = {"path": repo}
    shas["root"] = commit_all(repo, b"initial import\n", when=0)
    run_git(repo, "mv", "src/queue.c", "src/ring.c")
    text = (repo / "src" / "ring.c").read_text().replace("int line3;", "long line3;")
    (repo / "src" / "ring.c").write_text(text)
    shas["rename"] = commit_all(
        repo,
        b"src: rename queue.c to ring.c\n\nBody text.\n\n"
        b"Link: https://lore.kernel.org/r/20230501.1-1-john%40old.example\n"
        b"Signed-off-by: J\xc3\xb6hn Doe <john@old.example>\n",
        when=1,
    )
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00binary\x00data")
    shas["binary"] = commit_all(repo, b"add logo\n", when=2)
    shas["empty"] = commit_all(repo, b"empty: nothing changes\n", when=3)
    (repo / "latin.txt").write_bytes("caf\xe9 cr\xe8me\n".encode("latin-1"))
    shas["latin"] = commit_all(
        repo,
        "latin: add café file\n\nÉcrit en français.\n".encode("latin-1"),
        when=4,
        extra=("--cleanup=verbatim",),
    )
    shas["bad-utf8"] = raw_commit(repo, b"bad: \xff\xfe bytes in message\n")
    (repo / "unicode.md").write_text("# 日本語\n")
    shas["unicode"] = commit_all(repo, "docs: 日本語 ✓ title\n".encode(), when=6)
    run_git(repo, "checkout", "-q", "-b", "topic")
    (repo / "topic.c").write_text("int topic;\n")
    shas["topic"] = commit_all(repo, b"topic: add\n", when=7)
    run_git(repo, "checkout", "-q", "main")
    (repo / "main.c").write_text("int main_side;\n")
    shas["main-side"] = commit_all(repo, b"main: side change\n", when=8)
    run_git(repo, "merge", "-q", "--no-ff", "-m", "Merge branch topic", "topic", when=9)
    shas["merge"] = run_git(repo, "rev-parse", "HEAD").strip()
    run_git(repo, "tag", "v1.0", str(shas["binary"]))
    return shas


def repo_path(history: dict[str, str | Path]) -> Path:
    path = history["path"]
    assert isinstance(path, Path)
    return path
