"""A git repository: discovery, revisions, and every git invocation on it.

`git rev-parse` finds the repository (searching parent directories). All git runs
on the user's repository go through `Repo`'s runner, with the config that would
change a diff (and so a patch-id) pinned to git's defaults and the memory git may
map bounded; a revision is always behind `--end-of-options`. Commits are read by
the streaming reader in `e2g.git.commits`, their diffs cut and identified in
`e2g.git.diffs`; blame's runs are here, read by `e2g.git.blame`.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING

from e2g.errors import NotFound, RepoError, UnknownCommit, UsageError

# FULL_SHA is named here too: the readers of a repository's files import it with Repo.
from e2g.git.objects import FULL_SHA as FULL_SHA
from e2g.git.objects import git_environment, raise_git_error
from e2g.model import Address
from e2g.model.links import Commit

if TYPE_CHECKING:
    from e2g.git import blame
    from e2g.git.commits import CommitMessage, CommitReader


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
        self._env: dict[str, str] | None = None  # None: the process's own
        # blame's arguments for `.git-blame-ignore-revs`, read at the first blame: a
        # Repo lives for one command, or one warm's worker (a `git config` a file).
        self._ignoring: list[str] | None = None

    def with_alternate(self, objects: Path) -> Repo:
        """The same repository, its git commands also reading the object directory
        `objects` (an alternate: e2g.git.lens keeps a commit-graph there)."""
        copy = Repo(root=self._root, git_dir=self._git_dir, common_dir=self._common_dir)
        env = dict(self._env if self._env is not None else os.environ)
        known = env.get(_ALTERNATES)
        env[_ALTERNATES] = f"{known}{os.pathsep}{objects}" if known else str(objects)
        copy._env = env
        return copy

    def run_quietly(self, arguments: Sequence[str], *, data: bytes = b"") -> bool:
        """git `arguments` run for its effect: whether it succeeded."""
        try:
            return self._run(arguments, data=data).returncode == 0
        except RepoError:
            return False

    @classmethod
    def open(cls, path: Path) -> Repo:
        """The repository at `path` or its nearest parent, bare or not.

        Found by git itself, in one `git rev-parse`: importing GitPython to find it
        took longer than the rest of `e2g link` (benchmarks/startup.py), so e2g no
        longer depends on GitPython (../shared/PACKAGES.md chose it for discovery,
        config and mailmap; git answers each of those itself)."""
        return cls._discover(path, rev=None)[0]

    @classmethod
    def open_at(cls, path: Path, rev: str) -> tuple[Repo, str]:
        """open(path) and resolve(rev) in the same `git rev-parse`: one git process
        fewer for `e2g link` (~3 ms of its ~130, benchmarks/startup.py)."""
        repository, sha = cls._discover(path, rev=rev)
        if sha is None:
            raise repository._unknown(rev)
        return repository, sha

    @classmethod
    def _discover(cls, path: Path, *, rev: str | None) -> tuple[Repo, str | None]:
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
        if rev is not None:  # printed last, after the lines above; none if unknown
            command += ["--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"]
        try:
            found = subprocess.run(
                command, capture_output=True, check=False, env=git_environment()
            )
        except FileNotFoundError as error:
            raise RepoError("git not found on PATH") from error
        lines = found.stdout.decode("utf-8", "surrogateescape").splitlines()
        # An unknown `rev` exits 1 with the repository's lines; no repository, 128.
        found_repository = (0,) if rev is None else (0, 1)
        if found.returncode not in found_repository or len(lines) < 3:
            raise RepoError(f"not a git repository: {path} (or any parent)")
        git_dir = Path(lines[0])
        bare, in_work_tree = lines[1] == "true", lines[2] == "true"
        rest = lines[3:]
        if in_work_tree:  # --show-cdup's line: "" at the top, "../" below it
            cdup = rest.pop(0) if rest else ""
            root = (path / cdup).resolve()
        elif not bare and git_dir.name == ".git":  # `path` is inside the .git
            root = git_dir.parent
        else:
            root = git_dir
        repository = cls(root=root, git_dir=git_dir, common_dir=_common_dir(git_dir))
        sha = rest[0] if found.returncode == 0 and rest and rev is not None else None
        return repository, sha

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
            raise self._unknown(rev)
        return result.stdout.decode("ascii").strip()

    def _unknown(self, rev: str) -> UnknownCommit:
        return UnknownCommit(f"unknown revision '{rev}': not a commit in {self._root}")

    def range_names(self, revs: Sequence[str]) -> tuple[str, ...] | None:
        """A range as git rev-parse names it, each revision a full object name
        (`A..B` is B and ^A): the same names, the same commits. None when git
        cannot parse it (an unknown revision, an unborn HEAD)."""
        result = self._run(["rev-parse", "--end-of-options", *revs, "--"])
        if result.returncode != 0:
            return None
        return tuple(
            name
            for name in result.stdout.decode("ascii", "replace").split()
            if name not in ("--", "--end-of-options")  # git 2.39 echoes both
        )

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
        from e2g.git.commits import CommitReader  # the stream imports this module

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
        from e2g.git.commits import MESSAGE_FORMAT, read_messages

        arguments = self._rev_arguments(revs, all_refs=all_refs)
        if arguments is None:
            return
        if not walk:
            arguments = ["--no-walk=unsorted", *arguments]
        log = ["log", "--no-merges", "--encoding=UTF-8", "--no-notes"]
        with self.streamed(
            [*log, f"--format={MESSAGE_FORMAT}", *arguments], revs=revs
        ) as out:
            yield from read_messages(out)

    @contextmanager
    def streamed(
        self,
        arguments: Sequence[str],
        *,
        revs: Sequence[str],
        stdin: IO[bytes] | None = None,
    ) -> Iterator[IO[bytes]]:
        """The output of git `arguments`, to read as it comes; git is stopped when
        the reader leaves early, and a git that failed raises what raise_git_error
        says of it (`revs`: the revisions it was given, for that message)."""
        from e2g.git.commits import stop_reader

        with tempfile.TemporaryFile() as errors:
            try:
                process = subprocess.Popen(
                    self.command(arguments),
                    stdin=stdin,
                    stdout=subprocess.PIPE,
                    stderr=errors,
                    env=self.environment(),
                )
            except FileNotFoundError as error:
                raise RepoError("git not found on PATH") from error
            assert process.stdout is not None
            try:
                yield process.stdout
            finally:
                stop_reader(process)
            if process.returncode not in (0, -9):  # -9: stopped here, read enough
                errors.seek(0)
                raise_git_error(errors.read(), revs=revs, root=self._root)

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

    def environment(self) -> dict[str, str]:
        """The environment git runs in on this repository (e2g.git.objects)."""
        return git_environment(self._env)

    def command(self, arguments: Sequence[str]) -> list[str]:
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
                self.command(arguments),
                input=data,
                capture_output=True,
                check=False,
                env=self.environment(),
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
            raise_git_error(result.stderr, revs=revs, root=self._root)
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
        if looks_binary(data):
            raise UsageError(f"{path} is a binary file in {where}: it has no lines")
        return data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)

    def blame(
        self,
        rev: str | None,
        path: str,
        *,
        lines: tuple[int, int] | None = None,
        ancestry: Path | None = None,
    ) -> blame.Blame:
        """One `git blame --porcelain -w -M -C` of `path` at `rev` (None: the work
        tree, where uncommitted lines have the all-zero sha).

        `.git-blame-ignore-revs` is honoured as git does it, plus what GitHub does:
        git applies the config `blame.ignoreRevsFile` itself; when it is unset and
        the file exists at the top of the work tree, it is passed as
        `--ignore-revs-file`. `ancestry`: a file of grafts (`-S`: "COMMIT
        PARENT..." lines) the walk takes instead of the commits' own parents."""
        arguments = ["blame", "--porcelain", "-w", "-M", "-C"]
        if ancestry is not None:
            arguments += ["-S", str(ancestry)]
        arguments += self._ignore_revs()
        if lines is not None:
            arguments.append(f"-L{lines[0]},{lines[1]}")
        arguments += [*([rev] if rev else []), "--", path]
        result = self._run(arguments)
        if result.returncode != 0:
            raise_git_error(result.stderr, revs=[rev or ""], root=self._root)
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
        if self._ignoring is None:
            self._ignoring = self._ignore_arguments()
        return self._ignoring

    def _ignore_arguments(self) -> list[str]:
        configured = self._run(["config", "--get", "blame.ignoreRevsFile"])
        if configured.returncode == 0 or self._root == self._git_dir:
            return []  # git applies the config itself; a bare repository has no top
        found = self._root / _IGNORE_REVS  # a fixed name, never a user's value
        return ["--ignore-revs-file", str(found)] if found.is_file() else []


_IGNORE_REVS = ".git-blame-ignore-revs"
_ALTERNATES = "GIT_ALTERNATE_OBJECT_DIRECTORIES"
_BINARY_PROBE = 8000  # bytes git looks at to call a file binary


def looks_binary(data: bytes | str) -> bool:
    """Whether git would call this file binary: a NUL among its first 8,000 bytes
    (characters, for text already decoded)."""
    if isinstance(data, str):
        return "\0" in data[:_BINARY_PROBE]
    return b"\0" in data[:_BINARY_PROBE]


UNCOMMITTED = "0" * 40


def _parse_contact(line: str) -> Address:
    name, _, email = line.rpartition("<")
    return Address(name.strip(), email.rstrip(">").strip())
