"""The commit stream: one long-lived `git diff-tree --stdin` that reads batch after
batch (`CommitReader`) for link, match and benchmarks alike, never one process per
commit; and `git log`'s messages without diffs (`read_messages`).

The stream is split on NUL-framed sentinels that cannot occur in a commit message
or a diff line. Diff options are pinned (prefixes, context, algorithm, rename
detection, full blob ids) so that a commit's patch-id is the one `git
format-patch` output would get, whatever the user's git config says.
"""

from __future__ import annotations

import logging
import os
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, NamedTuple, NoReturn, Protocol

from e2g.errors import RepoError
from e2g.git.diffs import (
    EMPTY_PATCH,
    DiffBuffer,
    build_patch,
    paths_patch,
    split_lines,
)
from e2g.git.objects import FULL_SHA, raise_git_error
from e2g.mail.patch import (
    Lines,
    diff_lines,
)
from e2g.mail.subject import subject_key
from e2g.mail.trailers import parse_trailers
from e2g.model import MAX_BODY, MAX_SUBJECT, Address
from e2g.model.links import Commit

log = logging.getLogger(__name__)


_START = b"\x00E2G\x01"
_END = b"\x00E2G\x02"
# Fields NUL-separated; %B last, because only the message can hold newlines.
_FORMAT = "%x00E2G%x01%H%x00%P%x00%s%x00%aN%x00%aE%x00%aI%x00%at%x00%cI%x00%ct%x00%B%x00E2G%x02"


# `git diff-tree --stdin` reads shas and prints each commit as it arrives, as UTF-8,
# without notes; it echoes (and flushes) any line that is no object id: a batch
# ends at such a marker line, so one process serves many batches.
_READ_OPTIONS = (
    "--stdin",
    "--root",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--no-relative",
    "--encoding=UTF-8",
    "--no-notes",
    f"--format={_FORMAT}",
)
_LOG_OPTIONS = (
    *_READ_OPTIONS,
    "-p",
    "--full-index",
    "-M",
    "-U3",
    "--diff-algorithm=myers",
    "--inter-hunk-context=0",
)
# Without diffs: the paths alone, one a line (a tree diff: no file is read).
# (-U and --inter-hunk-context would turn on -p again.)
_PATHS_OPTIONS = (*_READ_OPTIONS, "-r", "--name-only", "--no-renames")
# Shas per write: a batch must fit the pipe, or git, blocked on its own output
# that nobody reads yet, would stop reading ours.
_STREAM_BATCH = 500


class CommitSource(Protocol):
    """What a commit reader needs of a repository (e2g.git.repo.Repo is one): the
    reader sits below the repository that hands readers out."""

    @property
    def root(self) -> Path: ...

    def resolve(self, rev: str) -> str: ...

    def shallow_boundary(self) -> frozenset[str]: ...

    def command(self, arguments: Sequence[str]) -> list[str]: ...

    def environment(self) -> dict[str, str]: ...


class CommitReader:
    """Commits read through one `git diff-tree --stdin` process, batch after batch.

    Unlike Repo.commits() (one `git log` per call, which reads all its input
    before it prints anything), the process stays: a caller can ask for a few
    commits at a time without starting git each time. Merges and shas that name
    no commit give nothing; commits are as commits() gives them.
    """

    def __init__(
        self,
        repo: CommitSource,
        *,
        diffs: bool,
        batch_size: int = 0,
        renames: bool = True,
    ) -> None:
        self._repo = repo
        # Shas per write (0: the default); at most _STREAM_BATCH, see there.
        self._batch = min(batch_size or _STREAM_BATCH, _STREAM_BATCH)
        self._diffs = diffs
        self._shallow = repo.shallow_boundary()
        self._marker = f"#e2g-end-{os.urandom(8).hex()}".encode("ascii")
        self._options = list(_LOG_OPTIONS if diffs else _PATHS_OPTIONS)
        if diffs and not renames:
            self._options[self._options.index("-M")] = "--no-renames"
        self._errors = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
        # Commits skipped because git could not read their objects.
        self.unreadable: list[str] = []
        self._process: subprocess.Popen[bytes] | None = self._start()

    def __enter__(self) -> CommitReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def commits(self, shas: Sequence[str]) -> Iterator[Commit]:
        """The commits named by `shas`, in that order (as read() without lines)."""
        for commit, _ in self._read(shas, lines=False):
            yield commit

    def read(self, shas: Sequence[str]) -> Iterator[tuple[Commit, Lines]]:
        """The commits named by `shas`, in that order, each with diff_lines() of
        its diff (empty for a reader without diffs)."""
        for commit, lines in self._read(shas, lines=True):
            assert lines is not None
            yield commit, lines

    def _read(
        self, shas: Sequence[str], *, lines: bool
    ) -> Iterator[tuple[Commit, Lines | None]]:
        names = [
            sha if FULL_SHA.fullmatch(sha) else self._repo.resolve(sha) for sha in shas
        ]
        for start in range(0, len(names), self._batch):
            batch = names[start : start + self._batch]
            given: set[str] = set()
            try:
                for commit, found in self._read_batch(batch, lines=lines):
                    given.add(commit.sha)
                    yield commit, found
            except RepoError as error:
                if not _unreadable(error):
                    raise
                # git died on an object the repository lacks (a partial or damaged
                # clone): the rest of the batch a commit at a time, past those
                # whose objects cannot be read.
                for sha in batch:
                    if sha not in given:
                        yield from self._read_one(sha, lines=lines)

    def _read_one(
        self, sha: str, *, lines: bool
    ) -> Iterator[tuple[Commit, Lines | None]]:
        """`sha` alone; a commit whose objects git cannot read is skipped, said
        once on stderr and kept in `unreadable`."""
        try:
            yield from list(self._read_batch([sha], lines=lines))
        except RepoError as error:
            if not _unreadable(error):
                raise
            self.unreadable.append(sha)
            log.warning(
                "%s: commit %s cannot be read (%s): its objects are missing from the "
                "repository (a partial or damaged clone); skipped",
                self._repo.root,
                sha[:12],
                error,
            )

    def _read_batch(
        self, names: Sequence[str], *, lines: bool
    ) -> Iterator[tuple[Commit, Lines | None]]:
        finished = False
        try:
            self._send(names)
            # Each record is given once the next one (or the batch's end marker)
            # shows it whole: git dies mid-record on an object it cannot read.
            held: _Record | None = None
            for record in self._records():
                if held is not None:
                    yield from self._built(held, lines=lines)
                held = record
            if held is not None:
                yield from self._built(held, lines=lines)
            finished = True
        finally:
            if not finished:
                # The caller stopped (or git failed) mid-batch: what git still
                # prints belongs to no one, so a next batch gets a new git (not
                # started before it is asked for: `link` reads one commit).
                self._stop()

    def _built(
        self, record: _Record, *, lines: bool
    ) -> Iterator[tuple[Commit, Lines | None]]:
        built = _build_commit(record, shallow=self._shallow, paths_only=not self._diffs)
        if built is not None:
            commit, found = built
            if lines and found is None:
                found = diff_lines(commit.patch.diff)
            yield commit, found

    def close(self) -> None:
        self._stop()
        self._errors.close()

    def _start(self) -> subprocess.Popen[bytes]:
        try:
            return subprocess.Popen(
                # --always: a commit that changes nothing still prints its header.
                self._repo.command(["diff-tree", "--always", *self._options]),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._errors,
                env=self._repo.environment(),
            )
        except FileNotFoundError as error:
            raise RepoError("git not found on PATH") from error

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            assert process.stdin is not None
            try:
                process.stdin.close()  # git ends at the end of its input
                process.wait(timeout=5)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                process.kill()
                process.wait()
        _close_pipes(process)

    def _send(self, shas: Sequence[str]) -> None:
        if self._process is None:
            self._process = self._start()
        assert self._process.stdin is not None
        lines = "".join(f"{sha}\n" for sha in shas).encode("ascii")
        try:
            self._process.stdin.write(lines + self._marker + b"\n")
            self._process.stdin.flush()
        except BrokenPipeError:
            self._failed()

    def _records(self) -> Iterator[_Record]:
        assert self._process is not None and self._process.stdout is not None
        splitter = _RecordSplitter(stop=self._marker)
        yield from splitter.records(self._process.stdout)
        if not splitter.stopped:  # the output ended before the marker: git died
            self._failed()

    def _failed(self) -> NoReturn:
        if self._process is not None:
            self._process.kill()
            self._process.wait()
        self._errors.seek(0)
        said = self._errors.read()
        # Each git's words apart: the next one starts from an empty file.
        self._errors.seek(0)
        self._errors.truncate()
        raise_git_error(said, revs=(), root=self._repo.root)


# What git says of an object it cannot read: the repository lacks it.
_UNREADABLE = (
    "unable to read",
    "bad object",
    "missing blob",
    "missing tree",
    "not a valid object",
    "could not read",
)


def _unreadable(error: RepoError) -> bool:
    text = str(error).lower()
    return any(words in text for words in _UNREADABLE)


class CommitMessage(NamedTuple):
    """A commit as `e2g audit` reads it beside the store: who committed it (the
    store keeps its author) and its message (for the review tags it carries)."""

    sha: str
    committer: Address
    message: str


# sha, committer name and email (mailmap applied), the message; framed as _FORMAT.
MESSAGE_FORMAT = "%x00E2G%x01%H%x00%cN%x00%cE%x00%B%x00E2G%x02"


def read_messages(stream: IO[bytes]) -> Iterator[CommitMessage]:
    """The records of a `git log --format=MESSAGE_FORMAT` stream, as they come."""
    pending = b""
    while True:
        block = stream.read1(_READ_SIZE * 16)  # type: ignore[attr-defined]
        if not block:
            return
        pending += block
        position = 0
        while (end := pending.find(_END, position)) >= 0:
            found = _message_record(pending[position:end])
            if found is not None:
                yield found
            position = end + len(_END)
        pending = pending[position:]


def _message_record(record: bytes) -> CommitMessage | None:
    start = record.find(_START)
    if start < 0:
        return None
    fields = record[start + len(_START) :].decode("utf-8", "replace").split("\x00", 3)
    if len(fields) < 4:
        return None
    sha, name, email, message = fields
    return CommitMessage(sha, Address(name, email), message[:MAX_BODY])


def stop_reader(process: subprocess.Popen[bytes]) -> None:
    """End a reader whose output is no longer wanted (or was read to its end)."""
    if process.poll() is None:
        process.kill()
    process.wait()
    _close_pipes(process)


@dataclass(slots=True)
class _Record:
    """One commit's raw fields and diff as they came from the stream."""

    header: bytes
    diff: DiffBuffer


def _close_pipes(process: subprocess.Popen[bytes]) -> None:
    for stream in (process.stdin, process.stdout):
        if stream is not None and not stream.closed:
            try:
                stream.close()
            except BrokenPipeError:  # unflushed input to a git that is gone
                pass


_READ_SIZE = 1 << 16


class _RecordSplitter:
    """Cuts git's output into records, fed whole lines a block at a time.

    The stream is read in blocks cut at line ends, and a record's diff is kept as
    those blocks: splitting every diff line in Python would cost more than git's
    own work. A start sentinel is always at the start of a line, and so is a
    `stop` marker (which no commit's output can hold: diff lines start with a
    diff marker, and the message is read up to the NUL-framed end sentinel).
    """

    def __init__(self, stop: bytes | None = None) -> None:
        self.record: _Record | None = None
        self.header: list[bytes] | None = None  # inside the format fields
        self.stop = stop
        self.stopped = False  # the stop marker was read

    def records(self, stream: IO[bytes]) -> Iterator[_Record]:
        """The records up to the end of `stream`, or up to the stop marker."""
        pending = b""
        while not self.stopped:
            # read1: what the pipe has; a marker's batch ends with no EOF after it.
            block = stream.read1(_READ_SIZE)  # type: ignore[attr-defined]
            if not block:
                yield from self.take(pending)
                break
            pending += block
            cut = pending.rfind(b"\n") + 1
            if cut:
                yield from self.take(pending[:cut])
                pending = pending[cut:]
        if self.record is not None:
            yield self.record
            self.record = None

    def take(self, data: bytes) -> Iterator[_Record]:
        position = 0
        while position < len(data) and not self.stopped:
            if self.header is not None:
                position = self._header(data, position)
                continue
            start = _line_start(data, _START, position)
            if self.stop is not None:
                halt = _line_start(data, self.stop, position)
                if halt >= 0 and (start < 0 or halt < start):
                    start, self.stopped = halt, True
            end = len(data) if start < 0 else start
            if self.record is not None and end > position:
                self._diff(data[position:end])
            if start < 0:
                return
            if self.record is not None and not self.stopped:
                yield self.record
                self.record = None
            if self.stopped:
                return
            self.record = _Record(header=b"", diff=DiffBuffer())
            self.header = []
            position = start

    def _header(self, data: bytes, position: int) -> int:
        """Collect header bytes through the end of the end sentinel's line."""
        assert self.header is not None and self.record is not None
        found = data.find(_END, position)
        if found < 0:
            self.header.append(data[position:])
            return len(data)
        line_end = data.find(b"\n", found)
        stop = len(data) if line_end < 0 else line_end + 1
        self.header.append(data[position:stop])
        self.record.header = b"".join(self.header)
        self.header = None
        return stop

    def _diff(self, block: bytes) -> None:
        assert self.record is not None
        diff = self.record.diff
        if not diff.started:
            block = block.lstrip(b"\n")  # the blank line between message and diff
        if block:
            diff.feed_block(block)


def _line_start(data: bytes, needle: bytes, position: int) -> int:
    """Where `needle` next starts a line in `data`, at or after `position`, or -1."""
    if data.startswith(needle, position):
        return position
    found = data.find(b"\n" + needle, position)
    return found + 1 if found >= 0 else -1


def _build_commit(
    record: _Record, *, shallow: frozenset[str], paths_only: bool = False
) -> tuple[Commit, Lines | None] | None:
    """The commit, and diff_lines() of its diff when parsing gave them for free."""
    fields = record.header.decode("utf-8", errors="replace").split("\x00")
    if len(fields) < 12:
        log.warning("skipping a malformed git log record (%d fields)", len(fields))
        return None
    # ["", "E2G\x01" + sha, parents, subject, name, email, aI, at, cI, ct, body.., end]
    sha = fields[1].removeprefix("E2G\x01")
    parents, subject, name, email = fields[2:6]
    if len(parents.split()) > 1:
        log.debug("skipping merge %s", sha)
        return None
    message = "\x00".join(fields[10:-1])
    lines: Lines | None = None
    if sha in shallow:
        log.info("commit %s is a shallow-clone boundary: its diff is unknown", sha)
        patch = EMPTY_PATCH
    elif paths_only:
        patch = paths_patch(split_lines(b"".join(record.diff.lines)))
    else:
        patch, lines = build_patch(record.diff)
    commit = Commit(
        sha=sha,
        subject=subject[:MAX_SUBJECT],
        subject_key=subject_key(subject[:MAX_SUBJECT]),
        author=Address(name, email),
        author_date=_parse_date(fields[6], fields[7]),
        commit_date=_parse_date(fields[8], fields[9]),
        patch=patch,
        trailers=parse_trailers(message),
        body=_body(message),
    )
    return commit, lines


def _parse_date(iso: str, epoch: str) -> datetime:
    """An aware datetime in the author's or committer's own offset."""
    try:
        return datetime.fromisoformat(iso)
    except ValueError:  # an offset Python refuses (git allows +9959)
        return datetime.fromtimestamp(int(epoch or 0), UTC)


def _body(message: str) -> str:
    """The message after its subject paragraph, bounded."""
    _, _, rest = message.strip("\n").partition("\n\n")
    return rest.strip("\n")[:MAX_BODY]
