"""The files of a tree that token blame can read: `git ls-tree` of a revision, less
what is not a regular file, what the revision's own `.gitattributes` marks as
generated, vendored, binary or not to diff, and what is larger than a bound.

The attributes are the revision's, not the work tree's: git 2.39's `check-attr`
has no `--source`, so the revision is read into a throwaway index (`read-tree`
into a temporary GIT_INDEX_FILE, the user's index untouched) and `check-attr
--cached` reads the `.gitattributes` files there. Whether a file is binary by its
bytes is the lexing's to say (e2g.api.token_warm), which reads them anyway.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from e2g.errors import RepoError
from e2g.git.objects import raise_git_error
from e2g.git.repo import Repo

REGULAR = ("100644", "100755")
ATTRIBUTES = ("binary", "linguist-generated", "linguist-vendored", "diff")  # first wins


class TreeFile(NamedTuple):
    path: str
    blob: str
    size: int
    skip: str | None  # why token blame leaves it out; None: it is read


def tree_files(
    repo: Repo, rev: str, pathspecs: Sequence[str] = (), *, max_bytes: int
) -> list[TreeFile]:
    """Every file of `rev` (a full sha: ls-tree takes no --end-of-options) under
    `pathspecs` (git's), in git's order,
    each with the reason it is skipped, if it is."""
    output = repo._check(  # noqa: SLF001 - e2g.git's own runner
        ["ls-tree", "-r", "-z", "--long", rev, "--", *pathspecs],
        revs=[rev],
    )
    entries: list[tuple[str, str, str, str]] = []  # mode, blob, size, path
    for item in output.split(b"\x00"):
        if not item:
            continue
        meta, _, raw_path = item.partition(b"\t")
        words = meta.decode("ascii", "replace").split()
        if len(words) == 4:
            path = raw_path.decode("utf-8", "surrogateescape")
            entries.append((words[0], words[2], words[3], path))
    marked = _marked(repo, rev, [path for mode, _, _, path in entries])
    found = []
    for mode, blob, size, path in entries:
        length = int(size) if size.isdigit() else 0
        skip = marked.get(path)
        if mode not in REGULAR:
            skip = "not a regular file"
        elif skip is None and length > max_bytes:
            skip = "larger than the size bound"
        found.append(TreeFile(path, blob, length, skip))
    return found


def _marked(repo: Repo, rev: str, paths: Sequence[str]) -> dict[str, str]:
    """The paths `rev`'s .gitattributes leaves out, with the attribute's reason."""
    if not paths:
        return {}
    with tempfile.TemporaryDirectory(prefix="e2g-attributes-") as scratch:
        env = {**repo.environment(), "GIT_INDEX_FILE": str(Path(scratch) / "index")}
        _git(repo, ["read-tree", "--end-of-options", rev], env=env, revs=[rev])
        data = "".join(f"{path}\0" for path in paths)
        output = _git(
            repo,
            ["check-attr", "--cached", "-z", "--stdin", *ATTRIBUTES],
            env=env,
            revs=[],
            data=data.encode("utf-8", "surrogateescape"),
        )
    found: dict[str, str] = {}
    fields = output.decode("utf-8", "surrogateescape").split("\x00")
    for at in range(0, len(fields) - 2, 3):
        path, attribute, value = fields[at : at + 3]
        reason = _reason(attribute, value)
        if reason is not None:
            found.setdefault(path, reason)
    return found


def _reason(attribute: str, value: str) -> str | None:
    if attribute in ("linguist-generated", "linguist-vendored") and value in (
        "set",
        "true",
    ):
        return f"marked {attribute}"
    if attribute == "diff" and value == "unset":
        return "marked -diff"
    if attribute == "binary" and value == "set":
        return "marked binary"
    return None


def _git(
    repo: Repo,
    arguments: Sequence[str],
    *,
    env: dict[str, str],
    revs: Sequence[str],
    data: bytes | None = None,
) -> bytes:
    try:
        result = subprocess.run(
            ["git", f"--git-dir={repo.git_dir}", *arguments],
            input=data,
            capture_output=True,
            env=env,
            check=False,
        )
    except FileNotFoundError as error:
        raise RepoError("git not found on PATH") from error
    if result.returncode != 0:
        raise_git_error(result.stderr, revs=revs, root=repo.root)
    return result.stdout
