"""Writing a file's revisions into its throwaway history: one `git fast-import`
run, each revision's blob read through one `git cat-file --batch` of the real
repository and lexed into its token view once per blob (e2g.tokens.lex).

Each revision becomes one commit whose tree holds one file (the view), with the
real commit's author and dates, and its subject and sha in the message; its
parents are the revisions this run wrote before it or the ones a run before did.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from e2g import faults
from e2g.errors import RepoError
from e2g.git.filehistory import Revision
from e2g.git.objects import ObjectReader, git_environment
from e2g.git.repo import FULL_SHA, Repo, looks_binary
from e2g.tokens.lex import Lexer

VIEW_PATH = "t"  # the one file of every revision of the throwaway history
MAX_BLOB = 64 << 20  # a revision larger than this is taken as empty


def fast_import(
    repo: Repo,
    git_dir: Path,
    todo: Sequence[Revision],
    known: dict[str, str],
    lexer: Lexer,
    marks: Path,
) -> None:
    """One `git fast-import` run writing `todo`, each revision's view read through one
    `git cat-file --batch` of the real repository and lexed once per blob."""
    marks_of: dict[str, str] = {}  # real sha -> ":mark" of this run
    views: dict[str, str] = {}  # blob id -> ":mark" of its view
    importer = subprocess.Popen(
        [
            "git",
            f"--git-dir={git_dir}",
            "fast-import",
            "--quiet",
            "--done",
            f"--export-marks={marks}",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=git_environment(),
    )
    assert importer.stdin is not None
    try:
        with ObjectReader(repo.git_dir, error=RepoError, label=str(repo.root)) as blobs:
            for number, revision in enumerate(todo, start=1):
                faults.point("tokens.revision")
                _write_revision(
                    importer.stdin,
                    revision,
                    number,
                    blobs=blobs,
                    lexer=lexer,
                    views=views,
                    marks_of=marks_of,
                    known=known,
                )
        importer.stdin.write(b"done\n")
        importer.stdin.close()
    except BrokenPipeError:
        pass
    finally:
        code = importer.wait()
    if code != 0:
        assert importer.stderr is not None
        detail = importer.stderr.read().decode("utf-8", "replace").strip().splitlines()
        raise RepoError(f"git fast-import failed: {detail[-1] if detail else code}")


def _write_revision(  # noqa: PLR0913 - the importer's running tables
    stream: IO[bytes],
    revision: Revision,
    number: int,
    *,
    blobs: ObjectReader,
    lexer: Lexer,
    views: dict[str, str],
    marks_of: dict[str, str],
    known: dict[str, str],
) -> None:
    blob_mark = None
    if revision.blob is not None:
        blob_mark = views.get(revision.blob)
        if blob_mark is None:
            text = _blob_text(blobs, revision.blob)
            data = lexer.view(text).encode("utf-8", "surrogateescape")
            blob_mark = f":{2 * number}"
            stream.write(
                b"blob\nmark %s\ndata %d\n%s\n" % (blob_mark.encode(), len(data), data)
            )
            views[revision.blob] = blob_mark
    mark = f":{2 * number + 1}"
    marks_of[revision.key] = mark
    message = f"{revision.subject}\n\n{revision.sha}\n".encode(
        "utf-8", "surrogateescape"
    )
    parents = [marks_of.get(parent) or known.get(parent) for parent in revision.parents]
    lines = [
        b"reset refs/heads/view",  # a revision without parents starts a new root
        b"commit refs/heads/view",
        b"mark " + mark.encode(),
        b"author " + revision.author.encode("utf-8", "surrogateescape"),
        b"committer e2g <e2g> " + revision.committed.encode("ascii", "replace"),
        b"data %d" % len(message),
    ]
    stream.write(b"\n".join(lines) + b"\n" + message)
    written = [parent for parent in parents if parent]
    for index, parent in enumerate(dict.fromkeys(written)):
        stream.write(
            b"%s %s\n" % (b"from" if index == 0 else b"merge", parent.encode())
        )
    stream.write(b"deleteall\n")
    if blob_mark is not None:
        stream.write(b"M 100644 %s %s\n" % (blob_mark.encode(), VIEW_PATH.encode()))
    stream.write(b"\n")


def read_marks(marks: Path, todo: Sequence[Revision]) -> dict[str, str]:
    by_mark = {
        f":{2 * number + 1}": revision.key
        for number, revision in enumerate(todo, start=1)
    }
    written: dict[str, str] = {}
    for line in marks.read_text(encoding="ascii").splitlines():
        mark, _, sha = line.partition(" ")
        if mark in by_mark and FULL_SHA.fullmatch(sha):
            written[by_mark[mark]] = sha
    if len(written) != len(todo):
        raise RepoError(
            "git fast-import did not write every revision of the token history"
        )
    return written


def _blob_text(blobs: ObjectReader, blob: str) -> str:
    """A blob as text (invalid UTF-8 replaced, as blame shows it); a binary or huge
    blob as empty: it has no tokens worth blaming."""
    found = blobs.get(blob, limit=MAX_BLOB)
    if found is None:
        raise RepoError(f"git cat-file could not read blob {blob}")
    data, size = found
    if size > MAX_BLOB or looks_binary(data):
        return ""
    return data.decode("utf-8", "replace")
