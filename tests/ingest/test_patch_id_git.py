"""compute_patch_id against the real `git patch-id --stable` (git 2.39).

Real mail from the linux-sparse archive and commits of a repository built in tmp_path.
git runs once per comparison with many patches concatenated, each after a fake
``commit <40 hex>`` line, and its answers are mapped back by that id.
"""

from __future__ import annotations

import email
import email.policy
import gzip
import os
import re
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from e2g.mail.patch import (
    find_patch,
    parse_diff,
    split_body,
)
from e2g.mail.patch_id import compute_patch_id, git_diff_patch_id
from e2g.model import FileStatus

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
SPARSE = CORPUS / "sparse" / "linux-sparse.mbox.gz"
PATCHWORK_MAIL = CORPUS / "patchwork" / "mail"
NEXT_PATCH = re.compile(r"^(?:commit |From )?[0-9a-fA-F]{40}", re.MULTILINE)


def git_patch_ids(texts: Sequence[str]) -> dict[int, str]:
    """`git patch-id --stable` of each text, by position; texts git gives no id are absent."""
    stream = b"".join(
        b"commit %040x\n" % (position + 1) + text.encode("utf-8", "surrogateescape")
        for position, text in enumerate(texts)
    )
    output = subprocess.run(
        ["git", "patch-id", "--stable"], input=stream, capture_output=True, check=True
    ).stdout.decode()
    ids = {}
    for line in output.splitlines():
        patch_id, fake_commit = line.split()
        ids[int(fake_commit, 16) - 1] = patch_id
    return ids


def with_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def mbox_messages(path: Path) -> list[bytes]:
    """Split a gzip mboxrd: 'From ' after a blank line starts a message; undo >From."""
    messages: list[bytes] = []
    current: list[bytes] = []
    previous_blank = True
    for line in gzip.decompress(path.read_bytes()).split(b"\n"):
        if line.startswith(b"From ") and previous_blank and current:
            messages.append(b"\n".join(current))
            current = []
        previous_blank = line == b""
        if re.match(rb">+From ", line):
            line = line[1:]
        current.append(line)
    if current:
        messages.append(b"\n".join(current))
    return messages


def text_parts(data: bytes) -> list[str]:
    """Text parts, bytes kept exactly (surrogateescape), so git and we hash the same."""
    message = email.message_from_bytes(data, policy=email.policy.compat32)
    texts = []
    for part in message.walk():
        if part.is_multipart() or part.get_content_maintype() != "text":
            continue
        if part.get_content_subtype() == "html":
            continue
        payload = part.get_payload(decode=True)
        if isinstance(payload, bytes):
            texts.append(payload.decode("utf-8", "surrogateescape"))
    return texts


@pytest.fixture(scope="module")
def sparse_parts() -> list[str]:
    if not SPARSE.exists():
        pytest.skip(f"shared corpus not available: {SPARSE}")
    return [text for data in mbox_messages(SPARSE) for text in text_parts(data)]


def test_sparse_diffs_match_git(sparse_parts, record_property):
    diffs = [
        with_newline(diff) for text in sparse_parts if (diff := split_body(text)[1])
    ]
    started = time.perf_counter()
    ours = [compute_patch_id(diff) for diff in diffs]
    elapsed = time.perf_counter() - started
    theirs = git_patch_ids(diffs)
    compared = [(mine, theirs.get(position)) for position, mine in enumerate(ours)]
    equal = sum(1 for mine, git in compared if mine == git)
    with_id = sum(1 for mine, _ in compared if mine is not None)
    record_property("sparse_equal", f"{equal}/{len(compared)} ({with_id} with an id)")
    record_property("patches_per_second", round(len(diffs) / elapsed))
    assert with_id >= 200
    assert equal == len(compared), [
        i for i, (mine, git) in enumerate(compared) if mine != git
    ][:10]


def test_sparse_whole_bodies_match_git(sparse_parts):
    """Whole bodies, commentary and signatures included: git's own cut-off rules apply."""
    bodies = [
        with_newline(text) for text in sparse_parts if not NEXT_PATCH.search(text)
    ]
    ours = [compute_patch_id(body) for body in bodies]
    theirs = git_patch_ids(bodies)
    assert sum(1 for pid in ours if pid) >= 200
    assert [theirs.get(position) for position in range(len(bodies))] == ours


def test_sparse_split_is_a_fixed_point(sparse_parts):
    diffs = [diff for text in sparse_parts if (diff := split_body(text)[1])]
    assert len(diffs) >= 200
    assert [split_body(diff)[1] for diff in diffs] == diffs
    assert all(parse_diff(diff) is not None for diff in diffs)


def test_patchwork_mails_match_git():
    if not PATCHWORK_MAIL.exists():
        pytest.skip(f"shared corpus not available: {PATCHWORK_MAIL}")
    diffs = []
    for path in sorted(PATCHWORK_MAIL.glob("*.mbox")):
        _, patch = find_patch(text_parts(path.read_bytes()))
        if patch is not None:
            diffs.append(patch.diff)
    ours = [compute_patch_id(diff) for diff in diffs]
    theirs = git_patch_ids(diffs)
    assert len(diffs) >= 15
    assert [theirs.get(position) for position in range(len(diffs))] == ours


# --- a repository built here --------------------------------------------------------------

GIT_ENV = {
    "GIT_AUTHOR_NAME": "A U Thor",
    "GIT_AUTHOR_EMAIL": "author@example.org",
    "GIT_COMMITTER_NAME": "C O Mitter",
    "GIT_COMMITTER_EMAIL": "committer@example.org",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
}


def git(repo: Path, *args: str, data: bytes | None = None) -> bytes:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            "commit.gpgsign=false",
            "-c",
            "core.autocrlf=false",
            *args,
        ],
        input=data,
        check=True,
        capture_output=True,
        env=env,
    ).stdout


def commit(repo: Path, number: int, message: str) -> None:
    date = f"2021-03-{number:02d}T12:00:00+00:00"
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    subprocess.run(
        ["git", "-C", str(repo), "-c", "commit.gpgsign=false", "add", "-A"],
        check=True,
        env=env,
    )
    subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            "commit.gpgsign=false",
            "commit",
            "-q",
            "-m",
            message,
        ],
        check=True,
        env=env,
    )


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    repo = tmp_path_factory.mktemp("repo")
    git(repo, "init", "-q", "-b", "main")
    lines = [f"line {n}\n" for n in range(1, 60)]
    (repo / "a.txt").write_text("".join(lines))
    (repo / "b.c").write_text("int b(void)\n{\n\treturn 0;\n}\n" * 10)
    (repo / "sp ace.txt").write_text("space\n")
    (repo / "tést.txt").write_text("unicode name\n")
    (repo / "tail").write_text("no newline")
    (repo / "script.sh").write_text("#!/bin/sh\necho hi\n")
    commit(repo, 1, "initial")

    edited = list(lines)
    edited[2] = "line three\n"
    edited[50] = "line fifty-one\n"
    (repo / "a.txt").write_text("".join(edited))
    (repo / "tail").write_text("no newline\nnow one\n")
    (repo / "tést.txt").write_text("unicode name, edited\n")
    commit(repo, 2, "two hunks, a newline added")

    (repo / "src").mkdir()
    (repo / "b.c").rename(repo / "src" / "b.c")
    text = (repo / "src" / "b.c").read_text()
    (repo / "src" / "b.c").write_text(text.replace("return 0;", "return 1;", 1))
    commit(repo, 3, "rename with an edit")

    (repo / "pixel.bin").write_bytes(bytes(range(256)) * 2 + b"\0\0\0")
    (repo / "sp ace.txt").write_text("space\nmore\n")
    commit(repo, 4, "binary added beside a text change")

    (repo / "pixel.bin").write_bytes(b"\0" + bytes(range(255, -1, -1)) * 3)
    commit(repo, 5, "binary modified")

    (repo / "script.sh").chmod(0o755)
    (repo / "a.txt").write_text("".join(edited[:-1]))
    commit(repo, 6, "mode change and a removal")

    (repo / "tail").unlink()
    (repo / "empty").write_text("")
    (repo / "dos.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    commit(repo, 7, "delete, empty file, crlf file")

    (repo / "dos.txt").write_bytes(b"one\r\n2\r\nthree\r\n")
    (repo / "pixel.bin").unlink()
    commit(repo, 8, "crlf edit, binary deleted")
    return repo


def commit_diffs(log: bytes) -> dict[str, str]:
    """Per commit sha: the text of its `git log -p` entry (message and diff)."""
    texts: dict[str, str] = {}
    for chunk in re.split(rb"^commit ", log, flags=re.MULTILINE)[1:]:
        sha = chunk[:40].decode()
        texts[sha] = chunk[41:].decode("utf-8", "surrogateescape")
    return texts


def git_ids_of(output: bytes) -> dict[str, str]:
    pairs = (line.split() for line in output.decode().splitlines())
    return {sha: patch_id for patch_id, sha in pairs}


@pytest.mark.parametrize("binary", [False, True])
def test_commit_patch_ids_match_git(repo, binary):
    args = ["log", "-p", "--full-index", "-M", "--format=commit %H%n%n%B"]
    if binary:
        args.append("--binary")
    log = git(repo, *args)
    expected = git_ids_of(git(repo, "patch-id", "--stable", data=log))
    texts = commit_diffs(log)
    assert len(texts) == 8
    assert {sha: compute_patch_id(text) for sha, text in texts.items()} == expected
    patches = {sha: parse_diff(text) for sha, text in texts.items()}
    assert {sha: patch.patch_id for sha, patch in patches.items() if patch} == expected


def test_format_patch_mail_ids_equal_commit_ids(repo):
    """What a mail carries (format-patch: --binary, full index) identifies the commit."""
    commits = git_ids_of(
        git(
            repo,
            "patch-id",
            "--stable",
            data=git(repo, "log", "-p", "--full-index", "-M"),
        )
    )
    mails = git(repo, "format-patch", "--stdout", "--root", "-M", "main")
    found = {}
    for mail in re.split(rb"^(?=From [0-9a-f]{40} )", mails, flags=re.MULTILINE)[1:]:
        sha = mail[5:45].decode()
        body = mail.split(b"\n\n", 1)[1].decode("utf-8", "surrogateescape")
        _, patch = find_patch([body])
        assert patch is not None
        found[sha] = patch.patch_id
    assert found == commits


def test_commit_files_and_counts(repo):
    log = git(
        repo, "log", "-p", "--full-index", "-M", "--format=commit %H%n%n%B", "--reverse"
    )
    patches = [parse_diff(text) for text in commit_diffs(log).values()]
    summary = [
        [
            (c.path, c.old_path, c.status, c.binary, c.added, c.removed)
            for c in patch.files
        ]
        for patch in patches
        if patch is not None
    ]
    modified, added, deleted = FileStatus.MODIFIED, FileStatus.ADDED, FileStatus.DELETED
    assert summary[1] == [
        ("a.txt", None, modified, False, 2, 2),
        ("tail", None, modified, False, 2, 1),
        ("tést.txt", None, modified, False, 1, 1),
    ]
    assert summary[2] == [("src/b.c", "b.c", FileStatus.RENAMED, False, 1, 1)]
    assert summary[3] == [
        ("pixel.bin", None, added, True, 0, 0),
        ("sp ace.txt", None, modified, False, 1, 0),
    ]
    assert summary[4] == [("pixel.bin", None, modified, True, 0, 0)]
    assert summary[5] == [
        ("a.txt", None, modified, False, 0, 1),
        ("script.sh", None, modified, False, 0, 0),
    ]
    assert summary[6] == [
        ("dos.txt", None, added, False, 3, 0),
        ("empty", None, added, False, 0, 0),
        ("tail", None, deleted, False, 0, 2),
    ]
    assert summary[7] == [
        ("dos.txt", None, modified, False, 1, 1),
        ("pixel.bin", None, deleted, True, 0, 0),
    ]
    numstat = (
        git(repo, "log", "--numstat", "--format=", "-M", "--reverse").decode().split()
    )
    text_counts = [int(n) for n in numstat if n.isdigit()]
    assert sum(text_counts) == sum(
        patch.added + patch.removed for patch in patches if patch
    )


def _diff_bytes(entry: str) -> bytes:
    diff = entry[entry.index("diff --git ") :]
    return diff.encode("utf-8", "surrogateescape")


def test_git_diff_shortcut_equals_git_or_declines(repo):
    log = git(repo, "log", "-p", "--full-index", "-M", "--format=commit %H%n%n%B")
    expected = git_ids_of(git(repo, "patch-id", "--stable", data=log))
    answered = 0
    for sha, text in commit_diffs(log).items():
        found = git_diff_patch_id(_diff_bytes(text))
        if found is not None:
            answered += 1
            assert found == expected[sha], sha
        else:
            assert "Binary files " in text  # the only shape it leaves to the reader
    assert answered == 5


def test_git_diff_shortcut_carries_a_header_only_file_into_the_next(tmp_path):
    """git ends a file's hash only after hunks: a pure rename or mode change is hashed
    together with the file after it."""
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "a.txt").write_text("".join(f"a {n}\n" for n in range(30)))
    (tmp_path / "z.sh").write_text("echo z\n")
    commit(tmp_path, 1, "initial")
    (tmp_path / "a.txt").rename(tmp_path / "b.txt")
    (tmp_path / "z.sh").chmod(0o755)
    (tmp_path / "m.txt").write_text("new\n")
    commit(tmp_path, 2, "rename, mode change, new file")
    log = git(tmp_path, "log", "-p", "--full-index", "-M", "--format=commit %H%n%n%B")
    expected = git_ids_of(git(tmp_path, "patch-id", "--stable", data=log))
    for sha, text in commit_diffs(log).items():
        assert git_diff_patch_id(_diff_bytes(text)) == expected[sha]
        assert compute_patch_id(text) == expected[sha]
