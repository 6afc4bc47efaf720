"""What git says of trees: commit heads without diffs, patch-ids, abbreviated shas,
the tags that first contain commits, and merges (the merge that brought a commit
into a branch, also for one commit of a repository with no named trees).

Runs git, one process per call (never one per commit); parses nothing of mail. Used
by e2g.api.trees, which brings these facts and the store together.
"""

from __future__ import annotations

import hashlib
import io
import re
import subprocess
import tempfile
from collections.abc import Collection, Iterator, Sequence
from datetime import UTC, datetime
from functools import partial
from typing import IO, NamedTuple

from e2g.errors import RepoError
from e2g.git.repo import Repo
from e2g.model import MAX_BODY, MAX_SUBJECT, Address

# One record per commit: sha, parents, author, dates, then the whole message.
_START = "\x00E2GT\x01"
_HEAD_FORMAT = "%x00E2GT%x01%H%x00%P%x00%aN%x00%aE%x00%at%x00%ct%x00%B"


class CommitHead(NamedTuple):
    """A commit without its diff: enough to read its notes and show it."""

    sha: str
    parents: tuple[str, ...]
    author: Address
    # Unix times, as git gives them: a stable branch's first match stores 2,000
    # commits' without making a datetime of any (4,000 datetimes: 2.6 ms).
    authored: int
    committed: int
    subject: str
    message: str  # the whole message, subject line first

    @property
    def author_date(self) -> datetime:
        return datetime.fromtimestamp(self.authored, UTC)

    @property
    def commit_date(self) -> datetime:
        return datetime.fromtimestamp(self.committed, UTC)


def _git(repo: Repo, arguments: Sequence[str], *, data: bytes | None = None) -> bytes:
    command = ["git", "-C", str(repo.root), *arguments]
    try:
        found = subprocess.run(
            command,
            input=data,
            capture_output=True,
            check=False,
            env=repo.environment(),
        )
    except FileNotFoundError as error:
        raise RepoError("git not found on PATH") from error
    if found.returncode != 0:
        message = found.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RepoError(
            f"git {arguments[0]} failed in {repo.root}: "
            + (message[-1] if message else f"exit {found.returncode}")
        )
    return found.stdout


def read_heads(repo: Repo, shas: Sequence[str]) -> list[CommitHead]:
    """The commits `shas` (full shas), in their order, from one `git log --no-walk`."""
    return [head for head, _ in _read(repo, shas, keep_message=True)]


def read_notes(repo: Repo, shas: Sequence[str]) -> list[tuple[CommitHead, str]]:
    """read_heads(), each head without its message and the message beside it: a
    caller that reads the notes and keeps the heads makes each head once."""
    return _read(repo, shas, keep_message=False)


def _read(
    repo: Repo, shas: Sequence[str], *, keep_message: bool
) -> list[tuple[CommitHead, str]]:
    if not shas:
        return []
    output = _git(
        repo,
        [
            "log",
            "--no-walk=unsorted",
            "--stdin",
            "--encoding=UTF-8",
            "--no-notes",
            f"--format={_HEAD_FORMAT}",
        ],
        data="".join(f"{sha}\n" for sha in shas).encode(),
    )
    text = output.decode("utf-8", "replace")
    return [
        found
        for record in text.split(_START)[1:]
        if (found := _head(record, keep_message=keep_message))
    ]


def walk_notes(repo: Repo, revs: Sequence[str]) -> Iterator[tuple[CommitHead, str]]:
    """read_notes() of every commit `revs` reaches, merges too, in the order `git
    rev-list` gives them ("^X" leaves out what X reaches, "A..B" is a range): one
    `git log` walk, parsed as it streams, so the caller keeps only what it wants of
    the messages. A revision git does not know raises UnknownCommit."""
    log = ["log", "--encoding=UTF-8", "--no-notes", f"--format={_HEAD_FORMAT}"]
    with repo.streamed([*log, "--end-of-options", *revs, "--"], revs=revs) as out:
        yield from _records(out)


def _records(stream: IO[bytes]) -> Iterator[tuple[CommitHead, str]]:
    """The records of _HEAD_FORMAT in `stream`, each parsed once it is whole: each
    chunk's whole records decoded at once (2,000 commits: 6.3 ms, not 7.7 ms with
    one decode and two datetimes per record). A record starts with ASCII and
    holds no NUL, so no character is cut there.

    A chunk is what git wrote so far (read1), not a full megabyte: the records
    are parsed while git writes the next (2,000 backports' walk and notes: 35 ms,
    not 39 ms)."""
    start = _START.encode()
    rest = b""
    read = stream.read1 if isinstance(stream, io.BufferedIOBase) else stream.read
    for chunk in iter(partial(read, 1 << 20), b""):
        data = rest + chunk
        cut = data.rfind(start)
        rest = data[max(cut, 0) :]
        for record in data[: max(cut, 0)].decode("utf-8", "replace").split(_START):
            if found := _head(record, keep_message=False):
                yield found
    for record in rest.decode("utf-8", "replace").split(_START):
        if found := _head(record, keep_message=False):
            yield found


def _head(record: str, *, keep_message: bool) -> tuple[CommitHead, str] | None:
    fields = record.split("\x00", 6)
    if len(fields) < 7:
        return None
    sha, parents, name, email, authored, committed, message = fields
    message = message.rstrip("\n")[:MAX_BODY]
    head = CommitHead(
        sha,
        tuple(parents.split()),
        Address(name, email),
        int(authored),
        int(committed),
        " ".join(message.partition("\n")[0].split())[:MAX_SUBJECT],
        message if keep_message else "",
    )
    return head, message


def expand(repo: Repo, abbreviated: Sequence[str]) -> dict[str, str]:
    """Each abbreviated sha that names exactly one commit of `repo`, as its full sha
    (one `git cat-file --batch-check`; an ambiguous or unknown one is left out)."""
    if not abbreviated:
        return {}
    output = _git(
        repo,
        ["cat-file", "--batch-check=%(objectname) %(objecttype)"],
        data="".join(f"{sha}^{{commit}}\n" for sha in abbreviated).encode(),
    )
    found: dict[str, str] = {}
    for short, line in zip(abbreviated, output.decode().splitlines(), strict=False):
        words = line.split()
        if len(words) == 2 and words[1] == "commit":
            found[short] = words[0]
    return found


def patch_ids(repo: Repo, shas: Sequence[str]) -> dict[str, str]:
    """`git patch-id --stable` of each commit of `shas` that has a diff, from one
    `git log -p --no-walk` piped straight into one `git patch-id` (the diffs are
    never held here: a stable range's can be gigabytes)."""
    if not shas:
        return {}
    base = ["git", "-C", str(repo.root)]
    with tempfile.TemporaryFile() as listed:
        listed.write("".join(f"{sha}\n" for sha in shas).encode())
        listed.seek(0)
        try:
            log = subprocess.Popen(
                [
                    *base,
                    "log",
                    "-p",
                    "--no-walk=unsorted",
                    "--stdin",
                    "--format=commit %H",
                ],
                stdin=listed,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=repo.environment(),
            )
        except FileNotFoundError as error:
            raise RepoError("git not found on PATH") from error
        assert log.stdout is not None
        found = subprocess.run(
            [*base, "patch-id", "--stable"],
            stdin=log.stdout,
            capture_output=True,
            check=False,
            env=repo.environment(),
        )
        log.stdout.close()
        if log.wait() != 0 or found.returncode != 0:
            raise RepoError(f"git log -p | git patch-id failed in {repo.root}")
    ids: dict[str, str] = {}
    for line in found.stdout.decode().splitlines():
        words = line.split()
        if len(words) == 2:
            ids[words[1]] = words[0]
    return ids


def changed_paths(repo: Repo, shas: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """The paths each commit of `shas` changed, from one `git log --name-only`:
    a tree diff, no file contents read (git.git: 2,000 commits in 0.1 s, their
    patch-ids in 4.6 s)."""
    if not shas:
        return {}
    output = _git(
        repo,
        ["log", "--no-walk=unsorted", "--stdin", "--name-only", "--format=%x00%H"],
        data="".join(f"{sha}\n" for sha in shas).encode(),
    )
    found: dict[str, tuple[str, ...]] = {}
    for record in output.decode("utf-8", "surrogateescape").split("\x00")[1:]:
        sha, _, paths = record.partition("\n")
        found[sha.strip()] = tuple(sorted(p for p in paths.split("\n") if p))
    return found


def is_ancestor(repo: Repo, ancestor: str, descendant: str) -> bool:
    """Whether `descendant` reaches `ancestor` (a branch that was not rewritten)."""
    found = subprocess.run(
        [
            "git",
            "-C",
            str(repo.root),
            "merge-base",
            "--is-ancestor",
            ancestor,
            descendant,
        ],
        capture_output=True,
        check=False,
        env=repo.environment(),
    )
    return found.returncode == 0


def outside_history(
    repo: Repo, shas: Collection[str], *, tips: Sequence[str] = ("HEAD",)
) -> set[str]:
    """Those of `shas` (full shas) that no commit of `tips` reaches (itself
    included): one `git rev-list SHAS --not TIPS` lists what they reach beyond the
    tips' history (the walk stops where the histories meet, not at the root: a
    stable branch's candidates cost mainline since its fork). A commit the
    repository does not hold (a branch deleted since it was stored) is outside;
    a tip that names nothing (an unborn HEAD) reaches nothing."""
    held = set(expand(repo, sorted(set(shas))).values())
    if not held:
        return set(shas)
    output = _git(
        repo,
        ["rev-list", "--ignore-missing", "--stdin"],
        data="".join(
            [*(f"{sha}\n" for sha in sorted(held)), *(f"^{tip}\n" for tip in tips)]
        ).encode(),
    )
    return (set(shas) - held) | (held & set(output.decode().split()))


def merged_by(repo: Repo, tip: str, *, exclude: Sequence[str] = ()) -> dict[str, str]:
    """For each commit `tip` reaches beyond `exclude` and not on its first-parent
    line, the merge on that line that brought it in, from one `git rev-list
    --parents`: the line's merges are taken oldest first, and each claims what its
    other parents reach that no earlier one did."""
    output = _git(
        repo,
        ["rev-list", "--parents", "--stdin"],
        data="".join([f"{tip}\n", *(f"^{rev}\n" for rev in exclude)]).encode(),
    )
    parents = {
        words[0]: words[1:] for words in map(str.split, output.decode().splitlines())
    }
    line = []
    sha: str | None = repo.resolve(tip)
    while sha is not None and sha in parents:
        line.append(sha)
        sha = parents[sha][0] if parents[sha] else None
    on_line = set(line)
    found: dict[str, str] = {}
    for merge in reversed(line):
        stack = list(parents[merge][1:])
        while stack:
            sha = stack.pop()
            if sha in found or sha in on_line or sha not in parents:
                continue
            found[sha] = merge
            stack.extend(parents[sha])
    return found


class Tag(NamedTuple):
    name: str
    target: str  # the commit it names


def tags(repo: Repo, *, pattern: str = "refs/tags") -> list[Tag]:
    """The tags that name commits, oldest first (by tagger date, else commit date),
    from one `git for-each-ref`."""
    output = _git(
        repo,
        [
            "for-each-ref",
            "--sort=creatordate",
            "--format=%(refname:short)%00%(*objectname)%00%(objectname)%00%(*objecttype)%00%(objecttype)",
            pattern,
        ],
    )
    found = []
    for line in output.decode("utf-8", "replace").splitlines():
        name, peeled, direct, peeled_type, direct_type = line.split("\x00")
        if peeled_type == "commit":
            found.append(Tag(name, peeled))
        elif not peeled and direct_type == "commit":
            found.append(Tag(name, direct))
    return found


def first_tags(
    repo: Repo, ordered: Sequence[Tag], *, before: Sequence[Tag]
) -> Iterator[tuple[str, str]]:
    """(sha, tag) for each commit that `ordered`'s tags bring in, each commit under
    the first of them that contains it; commits any tag of `before` (tags processed
    on an earlier run) contains are left out.

    One `git rev-list --topo-order --parents` of the tags less `before`'s, read as
    it streams: a commit comes after all its children, so its first tag is the
    first of its own tags and its children's; only the commits whose parents are
    still to come are held (the history's width, not its length). One walk per tag,
    each leaving out all the tags before it, took git.git's 1,001 tags 45 s; this
    takes a few seconds."""
    rank: dict[str, int] = {}
    for index, tag in enumerate(ordered):
        rank.setdefault(tag.target, index)  # two tags of one commit: the first
    if not rank:
        return
    # By commit: the first tag among its children's (and its own) seen so far.
    pending: dict[str, int] = {}
    listed = [*(f"{sha}\n" for sha in rank), *(f"^{tag.target}\n" for tag in before)]
    walk = ["rev-list", "--topo-order", "--parents", "--stdin"]
    with tempfile.TemporaryFile() as given:
        given.write("".join(listed).encode())
        given.seek(0)
        with repo.streamed(walk, revs=list(rank), stdin=given) as out:
            for line in out:
                sha, *parents = line.decode("ascii").split()
                best = min(pending.pop(sha, len(ordered)), rank.get(sha, len(ordered)))
                if best == len(ordered):
                    continue  # reached from no tag (cannot happen in this walk)
                yield sha, ordered[best].name
                for parent in parents:
                    if pending.get(parent, len(ordered)) > best:
                        pending[parent] = best


def first_tag(repo: Repo, sha: str) -> str | None:
    """The oldest tag (by tagger date, else commit date) that contains `sha`, or
    None: `git name-rev --tags` names a commit after that tag ("v2.51.0-rc0~46^2~9";
    git.git: the tag `git tag --contains --sort=creatordate` lists first, for 15
    commits from 2005 to 2026). One walk below the tags; nothing kept here."""
    name = _git(repo, ["name-rev", "--tags", "--name-only", sha]).decode().strip()
    if not name or name == "undefined":
        return None
    # A ref name holds neither "~" nor "^": what precedes the first is the tag.
    return re.split(r"[~^]", name.removeprefix("tags/"), maxsplit=1)[0]


def merged_into(
    repo: Repo, shas: Collection[str], *, tip: str
) -> dict[str, str | None]:
    """For each of `shas` that `tip` reaches: the merge on `tip`'s first-parent line
    that brought it in (the oldest commit of that line that reaches it), or None for
    a commit of that line itself. A commit `tip` does not reach is left out.

    One `git rev-list --topo-order --parents`, read as it streams and stopped once
    every commit is answered: in topological order a commit comes after all its
    children, so its answer is the oldest of its children's, or its own when it is
    on the line; only the commits whose parents are still to come are held (the
    width of the history, not its length).

    For one commit, the walk leaves out what its parents reach: its descendants
    and the line down to its merge are never among those (each reaches it), and
    they are all its answer needs (git.git, a commit of last month: 0.9 s -> 0.2 s
    without a commit-graph). For several, one descending from another would lose
    descendants that way: their walk is the whole history."""
    wanted = set(shas)
    found: dict[str, str | None] = {}
    if not wanted:
        return found
    # By commit: (place on the line, that commit of the line) of the oldest line
    # commit among its children seen so far.
    pending: dict[str, tuple[int, str]] = {}
    line_next: str | None = tip
    place = 0
    command = [
        "git",
        "-C",
        str(repo.root),
        "rev-list",
        "--topo-order",
        "--parents",
        tip,
        *(["--not", f"{next(iter(wanted))}^@"] if len(wanted) == 1 else []),
    ]
    with subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=repo.environment(),
    ) as walk:
        for text in walk.stdout or ():
            sha, *parents = text.split()
            best = pending.pop(sha, None)
            on_line = sha == line_next
            if on_line:
                place += 1
                best = (place, sha)
                line_next = parents[0] if parents else None
            if best is None:
                continue  # not reached from tip (cannot happen in a walk of tip)
            if sha in wanted:
                found[sha] = None if on_line else best[1]
                if len(found) == len(wanted):
                    walk.kill()
                    break
            for parent in parents:
                held = pending.get(parent)
                if held is None or held[0] < best[0]:
                    pending[parent] = best
    return found


def tip_and_tags(repo: Repo) -> tuple[str, str]:
    """HEAD's commit, and a digest of every tag's name and object (it changes when
    a tag is added, moved or deleted), from one `git show-ref`: no tag object read."""
    output = _git(repo, ["show-ref", "--head", "--tags"]).decode()
    head, _, tags = output.partition("\n")
    sha, _, name = head.partition(" ")
    if name != "HEAD":
        raise RepoError(f"no commit checked out in {repo.root} (HEAD is unborn)")
    return sha, hashlib.sha256(tags.encode()).hexdigest()
