"""Reading a git directory's objects as a stream: one `git cat-file --batch` asked
for one object at a time, and one listing command read line by line; and the
environment every git e2g starts runs in (`git_environment`).

Readers of git object stores that are not the user's repository use these: a
public-inbox epoch (e2g.archives.public_inbox) and the blobs a token history lexes
(e2g.git.tokenview). Memory stays flat whatever the store's size: an object larger
than the caller's bound is read up to it and the rest passed over.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, NoReturn

from e2g.errors import E2gError, RepoError, UnknownCommit

# A full object name: SHA-1, or SHA-256 in a repository that uses it.
FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")

# glibc's malloc hands a freed block of more than 128 KiB back to the system (and the
# top of its heap once it is past twice the largest such block), then faults the
# pages in again at the next: git's blame of a long history reads and frees every
# revision of the file. Kept instead (up to 16 MiB free at the heap's top): the
# token view of git.git's diff.c blamed 5.8 s -> 3.6 s (1.1 M page faults -> 28 K,
# the same 114 MB peak), its line blame 4.4 -> 3.5 s, `git log -p` of 3,000 commits
# 2.8 -> 1.8 s. Elsewhere than glibc the variable means nothing.
_MALLOC_TUNABLES = (
    "glibc.malloc.mmap_threshold=4194304:glibc.malloc.trim_threshold=16777216"
)


def git_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a git e2g starts: `base` (default: this process's own)
    with glibc's allocator told to keep what git frees; tunables the user set
    come after ours, so theirs win."""
    env = dict(os.environ if base is None else base)
    theirs = env.get("GLIBC_TUNABLES")
    env["GLIBC_TUNABLES"] = (
        f"{_MALLOC_TUNABLES}:{theirs}" if theirs else _MALLOC_TUNABLES
    )
    return env


def git_process(
    git_dir: Path,
    arguments: Sequence[str],
    *,
    stdin: int | None,
    error: type[E2gError],
    label: str,
) -> subprocess.Popen[bytes]:
    """git in `git_dir` with piped output; `error` when git is not installed."""
    command = ["git", f"--git-dir={git_dir}", *arguments]
    try:
        return subprocess.Popen(
            command,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=git_environment(),
        )
    except FileNotFoundError as missing:
        raise error(f"cannot read {label}: git is not installed") from missing


@contextlib.contextmanager
def output_lines(
    git_dir: Path, arguments: Sequence[str], *, error: type[E2gError], label: str
) -> Iterator[Iterator[bytes]]:
    """The lines git prints for `arguments`, as they come; `error` (with git's last
    line) when it exits with a failure after the caller read them all."""
    process = git_process(git_dir, arguments, stdin=None, error=error, label=label)
    assert process.stdout is not None and process.stderr is not None
    try:
        yield iter(process.stdout)
        said = process.stderr.read().decode("utf-8", "replace").strip()
        if process.wait() != 0:
            detail = (
                said.splitlines()[-1] if said else f"exit code {process.returncode}"
            )
            raise error(f"cannot read {label}: git failed: {detail}")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()
        process.stderr.close()


class ObjectReader:
    """One `git cat-file --batch` process, asked for one object at a time."""

    def __init__(self, git_dir: Path, *, error: type[E2gError], label: str) -> None:
        self._label = label
        self._error = error
        self._process = git_process(
            git_dir,
            ["cat-file", "--batch"],
            stdin=subprocess.PIPE,
            error=error,
            label=label,
        )
        assert self._process.stdin is not None and self._process.stdout is not None
        self._requests: IO[bytes] = self._process.stdin
        self._replies: IO[bytes] = self._process.stdout

    def __enter__(self) -> ObjectReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        with contextlib.suppress(BrokenPipeError):
            self._requests.close()
        self._process.kill()
        self._process.wait()
        self._replies.close()
        if self._process.stderr is not None:
            self._process.stderr.close()

    def get(self, name: str, *, limit: int) -> tuple[bytes, int] | None:
        """The object `name` names (a sha, `rev:path`, `rev^{tree}`) as its first
        `limit` bytes and its whole size; None when it is missing."""
        try:
            self._requests.write(name.encode("utf-8", "surrogateescape") + b"\n")
            self._requests.flush()
        except BrokenPipeError:
            self._failed()
        header = self._replies.readline()
        if not header:
            self._failed()
        fields = header.split()
        if len(fields) != 3 or not fields[2].isdigit():
            return None  # "<name> missing" / "<name> ambiguous"
        size = int(fields[2])
        data = self._replies.read(min(size, limit))
        if len(data) != min(size, limit):
            self._failed()
        self._discard(size - len(data) + 1)  # the rest, and the newline after it
        return data, size

    def _discard(self, size: int) -> None:
        while size > 0:
            part = self._replies.read(min(size, 1 << 20))
            if not part:
                self._failed()
            size -= len(part)

    def _failed(self) -> NoReturn:
        self._process.kill()
        assert self._process.stderr is not None
        said = self._process.stderr.read().decode("utf-8", "replace").strip()
        detail = said.splitlines()[-1] if said else "it stopped"
        raise self._error(f"cannot read {self._label}: git cat-file failed: {detail}")


def raise_git_error(stderr: bytes, *, revs: Iterable[str], root: Path) -> NoReturn:
    """What a failed git run on the repository at `root` says: an unknown revision
    among `revs`, else git's last line."""
    message = stderr.decode("utf-8", errors="replace").strip().splitlines()
    detail = message[-1] if message else "git failed"
    detail = detail.removeprefix("fatal: ")
    for rev in revs:
        if rev and rev in detail:
            raise UnknownCommit(f"unknown revision '{rev}': {detail}")
    raise RepoError(f"git failed in {root}: {detail}")
