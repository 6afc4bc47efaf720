"""Archive detection and dispatch: kinds, one-line errors, stdin, the real corpus."""

from __future__ import annotations

import gzip
import io
import lzma
import re
import subprocess
from pathlib import Path

import pytest

from e2g.archives.detect import (
    DIRECTORY,
    EML,
    MAILDIR,
    MBOX,
    PIPERMAIL,
    PUBLIC_INBOX,
    STDIN,
    Source,
    detect_sources,
    read_source,
)
from e2g.errors import ArchiveUnreadable, E2gError
from tests.conftest import corpus_path
from tests.ingest.test_mbox import FROM_LINE, mboxrd, message


def error_text(*paths: str) -> str:
    with pytest.raises(ArchiveUnreadable) as caught:
        detect_sources(list(paths))
    assert isinstance(caught.value, E2gError)
    text = str(caught.value)
    assert "\n" not in text
    return text


def test_kinds_are_detected_from_layout_and_magic(tmp_path: Path) -> None:
    (tmp_path / "list.mbox.xz").write_bytes(lzma.compress(mboxrd([message(1)])))
    (tmp_path / "one.eml").write_bytes(message(1))
    (tmp_path / "headers-first.txt").write_bytes(message(2))
    maildir = tmp_path / "Maildir"
    for part in ("cur", "new", "tmp"):
        (maildir / part).mkdir(parents=True)
    folder = tmp_path / "folder" / "sub"
    folder.mkdir(parents=True)
    (folder / "a.mbox").write_bytes(mboxrd([message(1)]))
    pipermail = tmp_path / "frob-devel"
    pipermail.mkdir()
    (pipermail / "2005-March.txt.gz").write_bytes(gzip.compress(mboxrd([message(1)])))
    names = ["list.mbox.xz", "one.eml", "headers-first.txt", "Maildir", "folder"]
    names += ["frob-devel", "frob-devel/2005-March.txt.gz", "-"]
    sources = detect_sources(
        [str(tmp_path / name) if name != "-" else name for name in names]
    )
    kinds = [source.kind for source in sources]
    assert kinds == [MBOX, EML, EML, MAILDIR, DIRECTORY, PIPERMAIL, PIPERMAIL, STDIN]
    assert [source.list_hint for source in sources][-3:] == [
        "frob-devel",
        "frob-devel",
        None,
    ]
    assert sources[0] == Source(
        str((tmp_path / "list.mbox.xz").resolve()),
        MBOX,
        (tmp_path / "list.mbox.xz").resolve(),
        None,
    )
    assert sources[-1] == Source("-", STDIN, None, None)


def test_duplicates_are_dropped(tmp_path: Path) -> None:
    path = tmp_path / "a.mbox"
    path.write_bytes(mboxrd([message(1)]))
    assert len(detect_sources([str(path), str(tmp_path / "." / "a.mbox")])) == 1


def test_missing_path() -> None:
    assert (
        error_text("/nonexistent/foo")
        == "cannot read /nonexistent/foo: no such file or directory"
    )


def test_wrong_extension_against_magic(tmp_path: Path) -> None:
    plain = tmp_path / "lkml.mbox.xz"
    plain.write_bytes(mboxrd([message(1)]))
    assert error_text(str(plain)) == (
        "cannot read lkml.mbox.xz: not an xz file (starts with 'From '); "
        "rename it to lkml.mbox"
    )
    other = tmp_path / "lkml.mbox.bz2"
    other.write_bytes(gzip.compress(mboxrd([message(1)])))
    assert error_text(str(other)) == (
        "cannot read lkml.mbox.bz2: not a bz2 file (it is gzip data); "
        "rename it to lkml.mbox.gz"
    )


def test_binary_junk(tmp_path: Path) -> None:
    junk = tmp_path / "picture.mbox"
    junk.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    text = error_text(str(junk))
    assert text.startswith(
        "cannot read picture.mbox: not a mail archive (starts with b'\\x89PNG"
    )
    assert "expected an mbox" in text


def test_damaged_compressed_start(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mbox.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage-garbage-garbage")
    assert error_text(str(bad)).startswith("cannot read bad.mbox.gz: damaged gzip data")


def test_directory_without_mail(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "README.md").write_text("hello\n")
    text = error_text(str(tmp_path / "notes"))
    assert text.startswith(
        f"cannot read {tmp_path / 'notes'}: no mail found in this directory"
    )


def test_bare_git_repository_that_is_not_an_inbox(tmp_path: Path) -> None:
    repo = tmp_path / "code.git"
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    blob = (
        subprocess.run(
            ["git", f"--git-dir={repo}", "hash-object", "-w", "--stdin"],
            input=b"int main;\n",
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    tree = (
        subprocess.run(
            ["git", f"--git-dir={repo}", "mktree"],
            input=f"100644 blob {blob}\tmain.c\n".encode(),
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    commit = (
        subprocess.run(
            [
                "git",
                f"--git-dir={repo}",
                "-c",
                "user.name=A",
                "-c",
                "user.email=a@b",
                "commit-tree",
                tree,
                "-m",
                "code",
            ],
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    subprocess.run(
        ["git", f"--git-dir={repo}", "update-ref", "HEAD", commit], check=True
    )
    assert "not a public-inbox archive" in error_text(str(repo))


def test_read_source_dispatches_and_resumes(tmp_path: Path) -> None:
    path = tmp_path / "list.mbox.gz"
    path.write_bytes(gzip.compress(mboxrd([message(n) for n in range(4)])))
    (source,) = detect_sources([str(path)])
    found = list(read_source(source, checkpoint=None))
    assert [raw.data for raw, _ in found] == [message(n) for n in range(4)]
    assert found[0][0].origin.source == str(path.resolve())
    rest = list(read_source(source, checkpoint=found[1][1]))
    assert [raw.data for raw, _ in rest] == [message(2), message(3)]


def test_read_source_single_message(tmp_path: Path) -> None:
    path = tmp_path / "one.eml"
    path.write_bytes(FROM_LINE + b"\n" + message(7))
    (source,) = detect_sources([str(path)])
    ((raw, token),) = read_source(source, checkpoint=None)
    assert (raw.data, raw.from_line, raw.origin.position) == (
        message(7),
        FROM_LINE,
        "0",
    )
    assert list(read_source(source, checkpoint=token)) == []


def test_read_source_stdin() -> None:
    (source,) = detect_sources(["-"])
    stream = io.BytesIO(gzip.compress(mboxrd([message(1), message(2)])))
    found = list(read_source(source, checkpoint=None, stdin=stream))
    assert [(raw.data, token) for raw, token in found] == [
        (message(1), None),
        (message(2), None),
    ]


def test_vanished_file_is_an_archive_error(tmp_path: Path) -> None:
    path = tmp_path / "gone.mbox"
    path.write_bytes(mboxrd([message(1)]))
    (source,) = detect_sources([str(path)])
    path.unlink()
    with pytest.raises(ArchiveUnreadable, match="disappeared while reading"):
        list(read_source(source, checkpoint=None))


@pytest.mark.corpus
def test_sparse_corpus_reads_every_message() -> None:
    path = corpus_path("sparse", "linux-sparse.mbox.gz")
    (source,) = detect_sources([str(path)])
    assert source.kind == MBOX
    found = list(read_source(source, checkpoint=None))
    assert len(found) == 3545
    assert all(re.search(rb"(?im)^message-id:", raw.data) for raw, _ in found)
    assert all(re.match(rb"[\x21-\x39\x3b-\x7e]+:", raw.data) for raw, _ in found)
    assert all(raw.from_line and raw.from_line.startswith(b"From ") for raw, _ in found)
    assert list(read_source(source, checkpoint=found[-1][1])) == []
    assert [raw for raw, _ in read_source(source, checkpoint=found[3000][1])] == [
        raw for raw, _ in found[3001:]
    ]


def test_public_inbox_kind(tmp_path: Path) -> None:
    from tests.ingest.test_public_inbox import Inbox

    inbox = Inbox.create(tmp_path / "frob.git")
    inbox.add(message(1))
    (source,) = detect_sources([str(inbox.git_dir)])
    assert (source.kind, source.list_hint) == (PUBLIC_INBOX, "frob")
    assert [raw.data for raw, _ in read_source(source, checkpoint=None)] == [message(1)]
