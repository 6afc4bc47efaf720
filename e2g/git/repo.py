"""The only module that runs git: repository discovery, revisions, and commits.

`git rev-parse` finds the repository (searching parent directories). Commits are
read through one streaming commit reader (CommitReader: one long-lived
`git diff-tree --stdin` that reads batch after batch) for link, match and
benchmarks alike; never one process per commit. The stream is split on NUL-framed sentinels that cannot occur in a commit
message or a diff line. Diff options are pinned (prefixes, context, algorithm,
rename detection, full blob ids) so that a commit's patch-id is the one
`git format-patch` output would get, whatever the user's git config says.

Its size (over 500 lines) is the price of that rule: every git invocation, the
commit reader and the parsing of what git prints stay in the one module that runs
git.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, NoReturn

from e2g.errors import NotFound, RepoError, UnknownCommit, UsageError
from e2g.mail.patch import (
    Lines,
    diff_lines,
    parse_diff,
    parse_diff_with_lines,
)
from e2g.mail.patch_id import compute_patch_id, git_diff_patch_id
from e2g.mail.paths import unquote_path
from e2g.mail.subject import subject_key
from e2g.mail.trailers import parse_trailers
from e2g.model import MAX_BODY, MAX_DIFF, MAX_FILES, MAX_SUBJECT, Address
from e2g.model.links import Commit
from e2g.model.mail import FileChange, Patch

if TYPE_CHECKING:
    from e2g.git import blame

log = logging.getLogger(__name__)

_START = b"\x00E2G\x01"
_END = b"\x00E2G\x02"
# Fields NUL-separated; %B last, because only the message can hold newlines.
_FORMAT = "%x00E2G%x01%H%x00%P%x00%s%x00%aN%x00%aE%x00%aI%x00%at%x00%cI%x00%ct%x00%B%x00E2G%x02"
# Config that would change the diff text, and so the patch-id, pinned to defaults.
_PINNED_CONFIG = (
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
    "diff.suppressBlankEmpty=false",
    "core.quotePath=true",
    "log.showSignature=false",
    "i18n.logOutputEncoding=UTF-8",
)
# How much of the packs one git process maps at once. git's default (8 GiB on 64-bit)
# lets a reader of a whole history map all of it: each of match's two commit readers
# over git.git (500 MB of packs) grew to 330 MB resident; with 128 MiB, 190 MB and
# the same speed (15,000 commits read in 11.4 s either way).
_MEMORY_CONFIG = ("core.packedGitLimit=128m", "core.packedGitWindowSize=32m")
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
# Without diffs: per file "added<TAB>removed<TAB>path" ("-" counts for binary).
# (-U and --inter-hunk-context would turn on -p again.)
_NUMSTAT_OPTIONS = (*_READ_OPTIONS, "--numstat", "--no-renames")
# Shas per write: a batch must fit the pipe, or git, blocked on its own output
# that nobody reads yet, would stop reading ours.
_STREAM_BATCH = 500
FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_EMPTY_PATCH = Patch(diff="", files=(), added=0, removed=0, patch_id=None)


def _common_dir(git_dir: Path) -> Path:
    """Where a linked work tree's repository keeps what all its work trees share
    (objects, refs, `shallow`): the git dir itself unless its `commondir` says."""
    try:
        text = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return git_dir
    return (git_dir / text).resolve()


class Repo:
    """A git repository: resolve revisions, list commits, read them with their diffs."""

    def __init__(self, *, root: Path, git_dir: Path, common_dir: Path) -> None:
        self._root = root
        self._git_dir = git_dir
        self._common_dir = common_dir

    @classmethod
    def open(cls, path: Path) -> Repo:
        """The repository at `path` or its nearest parent, bare or not.

        Found by git itself, in one `git rev-parse`: importing GitPython to find it
        took longer than the rest of `e2g link` (benchmarks/startup.py), so e2g no
        longer depends on GitPython (../shared/PACKAGES.md chose it for discovery,
        config and mailmap; git answers each of those itself)."""
        if not path.exists():
            raise RepoError(f"no such directory: {path}")
        command = [
            "git",
            "-C",
            str(path),
            "rev-parse",
            "--absolute-git-dir",
            "--is-bare-repository",
            "--is-inside-work-tree",
            "--show-cdup",  # not --show-toplevel: it fails outside a work tree
        ]
        try:
            found = subprocess.run(command, capture_output=True, check=False)
        except FileNotFoundError as error:
            raise RepoError("git not found on PATH") from error
        lines = found.stdout.decode("utf-8", "surrogateescape").splitlines()
        if found.returncode != 0 or len(lines) < 3:
            raise RepoError(f"not a git repository: {path} (or any parent)")
        git_dir = Path(lines[0])
        bare, in_work_tree = lines[1] == "true", lines[2] == "true"
        if in_work_tree:
            root = (path / (lines[3] if len(lines) > 3 else "")).resolve()
        elif not bare and git_dir.name == ".git":  # `path` is inside the .git
            root = git_dir.parent
        else:
            root = git_dir
        return cls(root=root, git_dir=git_dir, common_dir=_common_dir(git_dir))

    @property
    def root(self) -> Path:
        """The work tree, or the git directory of a bare repository."""
        return self._root

    @property
    def git_dir(self) -> Path:
        """The repository's git directory (a linked work tree's own)."""
        return self._git_dir

    @property
    def common_dir(self) -> Path:
        """What names the repository whatever work tree it is used from."""
        return self._common_dir

    @property
    def bare(self) -> bool:
        """Whether the repository has no work tree (then `root` is its git dir)."""
        return self._root == self._git_dir

    def resolve(self, rev: str) -> str:
        """The full sha of any revision git accepts (abbrev, HEAD~2, tag, branch)."""
        result = self._run(
            [
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                f"{rev}^{{commit}}",
            ]
        )
        if result.returncode != 0 or not result.stdout.strip():
            raise UnknownCommit(
                f"unknown revision '{rev}': not a commit in {self._root}"
            )
        return result.stdout.decode("ascii").strip()

    def rev_list(
        self, revs: Sequence[str] = (), *, all_refs: bool = False
    ) -> list[str]:
        """Shas of the non-merge commits reachable from `revs`, as `git rev-list --no-merges`.

        `revs` defaults to HEAD (an unborn HEAD gives no commits); ranges (`A..B`)
        and `^X` exclusions work as in git. Merges skipped: see count_merges().
        """
        return [sha for sha, _ in self.dated_rev_list(revs, all_refs=all_refs)[0]]

    def dated_rev_list(
        self, revs: Sequence[str] = (), *, all_refs: bool = False
    ) -> tuple[list[tuple[str, int]], int]:
        """((sha, commit time as a Unix timestamp) for each commit rev_list() gives,
        and how many merges it skipped), from one walk of the history."""
        arguments = self._rev_arguments(revs, all_refs=all_refs)
        if arguments is None:
            return [], 0
        output = self._check(
            ["rev-list", "--timestamp", "--parents", *arguments], revs=revs
        )
        commits: list[tuple[str, int]] = []
        merges = 0
        for line in output.decode("ascii").splitlines():
            words = line.split()
            if len(words) > 3:  # stamp, sha and two or more parents
                merges += 1
            elif len(words) >= 2:
                commits.append((words[1], int(words[0])))
        return commits, merges

    def dated_commits(self, shas: Sequence[str]) -> tuple[list[tuple[str, int]], int]:
        """dated_rev_list() of exactly `shas` (full shas; `git rev-list --no-walk`:
        no history walk), in their order, and how many of them are merges."""
        if not shas:
            return [], 0
        output = self._check(
            ["rev-list", "--no-walk=unsorted", "--timestamp", "--parents", *shas],
            revs=shas,
        )
        commits: list[tuple[str, int]] = []
        merges = 0
        for line in output.decode("ascii").splitlines():
            words = line.split()
            if len(words) > 3:
                merges += 1
            elif len(words) >= 2:
                commits.append((words[1], int(words[0])))
        return commits, merges

    def count_merges(self, revs: Sequence[str] = (), *, all_refs: bool = False) -> int:
        """How many merge commits rev_list() skipped for the same arguments."""
        return self.dated_rev_list(revs, all_refs=all_refs)[1]

    def commits(
        self, shas: Sequence[str], *, diffs: bool = True, batch_size: int = 0
    ) -> Iterator[Commit]:
        """The commits named by `shas`, in that order, with diff, patch-id and trailers.

        Read through one CommitReader (one git process) for the whole call; close
        the iterator to stop git early. Merges among `shas` are skipped (they carry
        no patch of their own). Shallow-boundary commits get
        an empty patch: git would show them as adding the whole tree. With `diffs`
        False, a patch holds only the files and their +/- counts (no diff text, no
        patch-id), which git gives without producing any diff text.
        """
        with self.reader(diffs=diffs, batch_size=batch_size) as reader:
            yield from reader.commits(shas)

    def reader(
        self, *, diffs: bool = True, batch_size: int = 0, renames: bool = True
    ) -> CommitReader:
        """A long-lived reader of commits, batch after batch, for one process's life
        (close it, or use it as a context manager). Without `renames`, a renamed
        file is a deletion and an addition, as git before 2.9 posted it."""
        return CommitReader(self, diffs=diffs, batch_size=batch_size, renames=renames)

    def mailmap_lookup(self, addresses: Sequence[Address]) -> list[Address]:
        """Canonical (name, email) per address through the repository's mailmap.

        Batched `git check-mailmap` calls; the result is in the order given.
        """
        canonical: list[Address] = []
        for start in range(0, len(addresses), 500):
            batch = addresses[start : start + 500]
            contacts = [f"{address.name} <{address.email}>" for address in batch]
            output = self._check(["check-mailmap", *contacts], revs=())
            lines = output.decode("utf-8", errors="replace").splitlines()
            canonical.extend(_parse_contact(line) for line in lines)
        return canonical

    def commit_messages(
        self, revs: Sequence[str] = (), *, all_refs: bool = False, walk: bool = True
    ) -> Iterator[CommitMessage]:
        """Each non-merge commit rev_list() gives, in its order, with its committer
        (mailmap applied) and its whole message; no diff, so one streaming `git log`
        lists git.git's 60,000 commits in about a second. Without `walk`, exactly
        the commits `revs` name. Close the iterator to stop git early."""
        arguments = self._rev_arguments(revs, all_refs=all_refs)
        if arguments is None:
            return
        if not walk:
            arguments = ["--no-walk=unsorted", *arguments]
        with tempfile.TemporaryFile() as errors:
            try:
                process = subprocess.Popen(
                    self._command(
                        [
                            "log",
                            "--no-merges",
                            "--encoding=UTF-8",
                            "--no-notes",
                            f"--format={_MESSAGE_FORMAT}",
                            *arguments,
                        ]
                    ),
                    stdout=subprocess.PIPE,
                    stderr=errors,
                )
            except FileNotFoundError as error:
                raise RepoError("git not found on PATH") from error
            try:
                assert process.stdout is not None
                yield from _messages(process.stdout)
            finally:
                _stop_reader(process)
            if process.returncode not in (0, -9):
                errors.seek(0)
                _raise_git_error(errors.read(), revs=revs, root=self._root)

    def _rev_arguments(
        self, revs: Sequence[str], *, all_refs: bool
    ) -> list[str] | None:
        if all_refs:
            return ["--all", "--end-of-options", *revs, "--"]
        if revs:
            return ["--end-of-options", *revs, "--"]
        head = self._run(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])
        if head.returncode == 0:
            return ["HEAD", "--"]
        self._check(["rev-parse", "--git-dir"], revs=())  # a broken repo raises here
        return None  # an unborn HEAD: a new repository has no commits yet

    def _command(self, arguments: Sequence[str]) -> list[str]:
        pinned = [
            item
            for setting in (*_PINNED_CONFIG, *_MEMORY_CONFIG)
            for item in ("-c", setting)
        ]
        return ["git", "-C", str(self._root), *pinned, *arguments]

    def _run(
        self, arguments: Sequence[str], *, data: bytes | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        try:
            return subprocess.run(
                self._command(arguments), input=data, capture_output=True, check=False
            )
        except FileNotFoundError as error:
            raise RepoError("git not found on PATH") from error

    def _check(
        self,
        arguments: Sequence[str],
        *,
        revs: Sequence[str],
        data: bytes | None = None,
    ) -> bytes:
        result = self._run(arguments, data=data)
        if result.returncode != 0:
            _raise_git_error(result.stderr, revs=revs, root=self._root)
        return result.stdout

    def shallow_boundary(self) -> frozenset[str]:
        """The commits a shallow clone cut the history at: git knows their files
        but not what they changed."""
        try:
            text = (self._common_dir / "shallow").read_text(encoding="ascii")
        except OSError:
            return frozenset()
        return frozenset(text.split())

    # -- blame -----------------------------------------------------------------------

    def file_lines(self, rev: str | None, path: str) -> int:
        """How many lines the file `path` has in `rev` (None: the index, which the
        work tree's blame starts from). The path is asked of git (`rev:path`), never
        joined into a file system path. Raises NotFound for a path that is no file of
        `rev`, UsageError for a binary file (a NUL byte in its first 8,000, as git
        decides)."""
        name = f"{rev or ''}:{path}"
        where = rev or "the index"
        kind = self._run(["cat-file", "-t", "--end-of-options", name])
        if kind.returncode != 0:
            raise NotFound(
                f"no file {path} in {where}: give a path relative to the top of "
                f"{self._root} (git ls-tree -r --name-only {rev or 'HEAD'} lists them)"
            )
        if kind.stdout.strip() != b"blob":
            raise UsageError(f"{path} is a directory in {where}: blame takes a file")
        data = self._check(["cat-file", "blob", "--end-of-options", name], revs=())
        if b"\0" in data[:_BINARY_PROBE]:
            raise UsageError(f"{path} is a binary file in {where}: it has no lines")
        return data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)

    def blame(
        self, rev: str | None, path: str, *, lines: tuple[int, int] | None = None
    ) -> blame.Blame:
        """One `git blame --porcelain -w -M -C` of `path` at `rev` (None: the work
        tree, where uncommitted lines have the all-zero sha).

        `.git-blame-ignore-revs` is honoured as git does it, plus what GitHub does:
        git applies the config `blame.ignoreRevsFile` itself; when it is unset and
        the file exists at the top of the work tree, it is passed as
        `--ignore-revs-file`."""
        arguments = ["blame", "--porcelain", "-w", "-M", "-C"]
        arguments += self._ignore_revs()
        if lines is not None:
            arguments.append(f"-L{lines[0]},{lines[1]}")
        arguments += [*([rev] if rev else []), "--", path]
        result = self._run(arguments)
        if result.returncode != 0:
            _raise_git_error(result.stderr, revs=[rev or ""], root=self._root)
        from e2g.git.blame import parse_blame  # only `e2g blame` reads one

        return parse_blame(result.stdout)

    def line_history(
        self, rev: str | None, path: str, *, lines: tuple[int, int]
    ) -> list[str]:
        """Every commit that changed `lines` of `path` up to `rev`, newest first, as
        `git log -L` follows them (through renames and moves); the diffs are not
        made (`-s`)."""
        spec = f"-L{lines[0]},{lines[1]}:{path}"
        output = self._check(
            ["log", "-s", "--format=%H", spec, *([rev] if rev else [])],
            revs=[rev or ""],
        )
        return [
            line
            for line in output.decode("ascii", "replace").splitlines()
            if FULL_SHA.fullmatch(line)
        ]

    def file_text(self, rev: str, path: str) -> str:
        """The file `path` of commit `rev` as text (invalid UTF-8 replaced, as blame
        shows it). Call file_lines() first: it says why a path has no lines."""
        data = self._check(
            ["cat-file", "blob", "--end-of-options", f"{rev}:{path}"], revs=()
        )
        return data.decode("utf-8", "replace")

    def work_tree_text(self, path: str) -> str | None:
        """The work tree's copy of `path`, None when it has none. The path must stay
        inside the work tree once resolved (no `..`, no link leading out)."""
        if self.bare:
            return None
        top = self._root.resolve()
        found = (top / path).resolve()
        if not found.is_relative_to(top) or not found.is_file():
            return None
        return found.read_bytes().decode("utf-8", "replace")

    def ignored_revs(self) -> list[str]:
        """The commits blame should look through: the `blame.ignoreRevsFile` of the
        config (relative to the work tree), else `.git-blame-ignore-revs` at its top;
        each line a revision (`#` starts a comment), resolved to a full sha."""
        configured = self._run(["config", "--get", "blame.ignoreRevsFile"])
        name = configured.stdout.decode("utf-8", "surrogateescape").strip()
        if self.bare or (configured.returncode == 0 and not name):
            return []
        top = self._root.resolve()
        found = (top / (name or _IGNORE_REVS)).expanduser().resolve()
        try:
            text = found.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
        revs = [line.split("#", 1)[0].strip() for line in text.splitlines()]
        names = "".join(
            f"{rev}^{{commit}}\n" for rev in revs if rev and "\n" not in rev
        )
        output = self._check(
            ["cat-file", "--batch-check=%(objectname)"], revs=(), data=names.encode()
        )
        return [
            line
            for line in output.decode("ascii", "replace").splitlines()
            if FULL_SHA.fullmatch(line)
        ]

    def _ignore_revs(self) -> list[str]:
        configured = self._run(["config", "--get", "blame.ignoreRevsFile"])
        if configured.returncode == 0 or self._root == self._git_dir:
            return []  # git applies the config itself; a bare repository has no top
        found = self._root / _IGNORE_REVS  # a fixed name, never a user's value
        return ["--ignore-revs-file", str(found)] if found.is_file() else []


_IGNORE_REVS = ".git-blame-ignore-revs"
_BINARY_PROBE = 8000  # bytes git looks at to call a file binary
UNCOMMITTED = "0" * 40


class CommitReader:
    """Commits read through one `git diff-tree --stdin` process, batch after batch.

    Unlike Repo.commits() (one `git log` per call, which reads all its input
    before it prints anything), the process stays: a caller can ask for a few
    commits at a time without starting git each time. Merges and shas that name
    no commit give nothing; commits are as commits() gives them.
    """

    def __init__(
        self, repo: Repo, *, diffs: bool, batch_size: int = 0, renames: bool = True
    ) -> None:
        self._repo = repo
        # Shas per write (0: the default); at most _STREAM_BATCH, see there.
        self._batch = min(batch_size or _STREAM_BATCH, _STREAM_BATCH)
        self._diffs = diffs
        self._shallow = repo.shallow_boundary()
        self._marker = f"#e2g-end-{os.urandom(8).hex()}".encode("ascii")
        self._options = list(_LOG_OPTIONS if diffs else _NUMSTAT_OPTIONS)
        if diffs and not renames:
            self._options[self._options.index("-M")] = "--no-renames"
        self._errors = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
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
            finished = False
            try:
                self._send(names[start : start + self._batch])
                for record in self._records():
                    built = _build_commit(
                        record, shallow=self._shallow, numstat=not self._diffs
                    )
                    if built is not None:
                        commit, found = built
                        if lines and found is None:
                            found = diff_lines(commit.patch.diff)
                        yield commit, found
                finished = True
            finally:
                if not finished:
                    # The caller stopped (or git failed) mid-batch: what git still
                    # prints belongs to no one, so a next batch gets a new git (not
                    # started before it is asked for: `link` reads one commit).
                    self._stop()

    def close(self) -> None:
        self._stop()
        self._errors.close()

    def _start(self) -> subprocess.Popen[bytes]:
        try:
            return subprocess.Popen(
                # --always: a commit that changes nothing still prints its header.
                self._repo._command(["diff-tree", "--always", *self._options]),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._errors,
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
        _raise_git_error(self._errors.read(), revs=(), root=self._repo.root)


@dataclass(frozen=True, slots=True)
class CommitMessage:
    """A commit as `e2g audit` reads it beside the store: who committed it (the
    store keeps its author) and its message (for the review tags it carries)."""

    sha: str
    committer: Address
    message: str


# sha, committer name and email (mailmap applied), the message; framed as _FORMAT.
_MESSAGE_FORMAT = "%x00E2G%x01%H%x00%cN%x00%cE%x00%B%x00E2G%x02"


def _messages(stream: IO[bytes]) -> Iterator[CommitMessage]:
    """The records of a `git log --format=_MESSAGE_FORMAT` stream, as they come."""
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


def _stop_reader(process: subprocess.Popen[bytes]) -> None:
    """End a reader whose output is no longer wanted (or was read to its end)."""
    if process.poll() is None:
        process.kill()
    process.wait()
    _close_pipes(process)


@dataclass(slots=True)
class _Record:
    """One commit's raw fields and diff as they came from the stream."""

    header: bytes
    diff: _DiffBuffer


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
            self.record = _Record(header=b"", diff=_DiffBuffer())
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


def _split_lines(data: bytes) -> list[bytes]:
    """Lines with their newlines, cut at LF only (a CR belongs to its line)."""
    parts = data.split(b"\n")
    lines = [part + b"\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


class _DiffBuffer:
    """A commit's diff lines, kept up to MAX_DIFF bytes of whole file sections.

    Past the limit, later files keep only their header lines and +/- counts, so a
    huge commit still lists every file it touches without holding all of it.
    """

    def __init__(self) -> None:
        self.lines: list[bytes] = []
        self.size = 0
        self.section_start = 0
        self.overflow: _Overflow | None = None

    @property
    def started(self) -> bool:
        return bool(self.lines) or self.overflow is not None

    def feed_block(self, block: bytes) -> None:
        """Whole lines at once. Below MAX_DIFF they stay one block; past it, every
        line is replayed through feed(), which keeps whole file sections."""
        if self.overflow is None and self.size + len(block) <= MAX_DIFF:
            self.lines.append(block)
            self.size += len(block)
            return
        if self.overflow is None:
            block = b"".join([*self.lines, block])
            self.lines, self.size, self.section_start = [], 0, 0
        for line in _split_lines(block):
            self.feed(line)

    def feed(self, line: bytes) -> None:
        if self.overflow is not None:
            self.overflow.feed(line)
            return
        if line.startswith(b"diff "):
            self.section_start = len(self.lines)
        self.lines.append(line)
        self.size += len(line)
        if self.size > MAX_DIFF:
            tail = self.lines[self.section_start :]
            del self.lines[self.section_start :]
            self.overflow = _Overflow()
            for held in tail:
                self.overflow.feed(held)


@dataclass(slots=True)
class _Section:
    header: list[bytes]
    added: int = 0
    removed: int = 0


class _Overflow:
    """Header lines and +/- counts of the file sections past MAX_DIFF."""

    def __init__(self) -> None:
        self.sections: list[_Section] = []
        self.old_left = 0
        self.new_left = 0

    def feed(self, line: bytes) -> None:
        if self.old_left > 0 or self.new_left > 0:
            self._count(line)
        elif line.startswith(b"@@ "):
            self.old_left, self.new_left = _hunk_counts(line)
        elif line.startswith(b"diff "):
            if len(self.sections) < MAX_FILES:
                self.sections.append(_Section(header=[line]))
        elif self.sections and len(self.sections[-1].header) < 32:
            self.sections[-1].header.append(line)

    def _count(self, line: bytes) -> None:
        marker = line[:1]
        if marker == b"\\":  # "\ No newline at end of file"
            return
        section = self.sections[-1] if self.sections else None
        if marker == b"+":
            self.new_left -= 1
            if section is not None:
                section.added += 1
        elif marker == b"-":
            self.old_left -= 1
            if section is not None:
                section.removed += 1
        else:
            self.old_left -= 1
            self.new_left -= 1


_HUNK = re.compile(rb"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def _hunk_counts(line: bytes) -> tuple[int, int]:
    match = _HUNK.match(line)
    if match is None:
        return 0, 0
    old, new = match.group(1), match.group(2)
    return (1 if old is None else int(old)), (1 if new is None else int(new))


def _build_commit(
    record: _Record, *, shallow: frozenset[str], numstat: bool = False
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
        patch = _EMPTY_PATCH
    elif numstat:
        patch = _numstat_patch(_split_lines(b"".join(record.diff.lines)))
    else:
        patch, lines = _build_patch(record.diff)
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


def _build_patch(buffer: _DiffBuffer) -> tuple[Patch, Lines | None]:
    data = b"".join(buffer.lines)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return _non_utf8_patch(data, buffer.overflow), None
    if buffer.overflow is None:
        patch, lines = parse_diff_with_lines(text, patch_id=git_diff_patch_id(data))
        return patch or _EMPTY_PATCH, lines
    return _truncated_patch(text, buffer.overflow), None


def _numstat_patch(lines: Sequence[bytes]) -> Patch:
    """Files and counts from `--numstat` lines; binary files count "-" as 0."""
    files: list[FileChange] = []
    for line in lines[:MAX_FILES]:
        added, removed, name = (
            line.decode("utf-8", errors="replace").rstrip("\n").split("\t", 2)
            + ["", ""]
        )[:3]
        if not name:
            continue
        binary = added == "-"
        files.append(
            FileChange(
                path=unquote_path(name),
                old_path=None,
                binary=binary,
                added=0 if binary else int(added or 0),
                removed=0 if binary else int(removed or 0),
            )
        )
    return Patch(
        diff="",
        files=tuple(files),
        added=sum(change.added for change in files),
        removed=sum(change.removed for change in files),
        patch_id=None,
    )


def _non_utf8_patch(data: bytes, overflow: _Overflow | None) -> Patch:
    """A diff of non-UTF-8 file content (a latin-1 source file, say).

    The text kept is decoded with U+FFFD replacements, so it can be stored; the
    patch-id is computed on the surrogate-escaped text, which compute_patch_id
    encodes back to git's exact bytes, so it still equals git's own.
    """
    text = data.decode("utf-8", errors="replace")
    if overflow is not None:
        return _truncated_patch(text, overflow)
    patch = parse_diff(text)
    if patch is None:
        return _EMPTY_PATCH
    exact = compute_patch_id(data.decode("utf-8", errors="surrogateescape"))
    return replace(patch, patch_id=exact)


def _truncated_patch(kept: str, overflow: _Overflow) -> Patch:
    """A huge commit: the kept diff, every file, and no patch-id (the diff is cut)."""
    skeleton = "".join(
        line.decode("utf-8", errors="replace")
        for section in overflow.sections
        for line in section.header
    )
    kept_files = (parse_diff(kept) or _EMPTY_PATCH).files if kept else ()
    all_files = (parse_diff(kept + skeleton) or _EMPTY_PATCH).files
    late_files = list(all_files[len(kept_files) :])
    if len(late_files) == len(overflow.sections):
        late_files = [
            replace(change, added=section.added, removed=section.removed)
            for change, section in zip(late_files, overflow.sections, strict=True)
        ]
    files = (*kept_files, *late_files)
    return Patch(
        diff=kept,
        files=files,
        added=sum(change.added for change in files),
        removed=sum(change.removed for change in files),
        patch_id=None,
    )


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


def _parse_contact(line: str) -> Address:
    name, _, email = line.rpartition("<")
    return Address(name.strip(), email.rstrip(">").strip())


def _raise_git_error(stderr: bytes, *, revs: Iterable[str], root: Path) -> NoReturn:
    message = stderr.decode("utf-8", errors="replace").strip().splitlines()
    detail = message[-1] if message else "git failed"
    detail = detail.removeprefix("fatal: ")
    for rev in revs:
        if rev and rev in detail:
            raise UnknownCommit(f"unknown revision '{rev}': {detail}")
    raise RepoError(f"git failed in {root}: {detail}")
