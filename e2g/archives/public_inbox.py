"""Reader for public-inbox archives: one message per git commit.

Owns finding an inbox's epochs and reading them oldest first. A v2 inbox is a directory
with git/0.git, git/1.git, ... (all.git beside them only joins the epochs for cloning,
so it is not read); a v1 inbox or a single v2 epoch is one git repository, bare or not.
Each commit's tree holds one blob: "m", the message, or "d" for a deletion, where the
blob is the deleted message itself. A deletion is yielded as
RawMessage(data=<the d blob>, origin.position="d:<commit>") so the pipeline can drop
that Message-ID; an added message has position "<commit>".

git runs through e2g.git (its object stream, e2g.git.objects), the one place that
starts git. Per epoch it runs exactly one `git rev-list --reverse --parents` and one
`git cat-file --batch`, asked for "<commit>:m" (then "<commit>:d") one commit at a
time, so memory stays flat however large the epoch.

Checkpoint: JSON {"v": 1, "epochs": {"git/0.git": "<last commit>", ...}}. Resuming lists
"<last>..HEAD". When that commit is gone, or the first new commit is not its child
(history rewritten, as public-inbox-purge does), the epoch is read again from its
first commit; ingest is idempotent by Message-ID.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from e2g.archives.mbox import MAX_RAW_MESSAGE
from e2g.errors import ArchiveUnreadable, notice
from e2g.git.objects import ObjectReader, output_lines
from e2g.model.mail import Origin, RawMessage
from e2g.words import count

log = logging.getLogger(__name__)

DELETED_PREFIX = "d:"
_EPOCH_NAME = re.compile(r"(\d{1,6})\.git")
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_VERSION = 1


class Epoch(NamedTuple):
    name: str  # key in the checkpoint: "git/0.git", or "." for a single repository
    git_dir: Path


def find_epochs(path: Path) -> list[Epoch]:
    """The epochs of the inbox at path, oldest first; [] when path is not git at all."""
    git = path / "git"
    if git.is_dir():
        numbered = []
        for item in git.iterdir():
            match = _EPOCH_NAME.fullmatch(item.name)
            if match and _is_git_dir(item):
                numbered.append((int(match[1]), item))
        if numbered:
            return [Epoch(f"git/{item.name}", item) for _, item in sorted(numbered)]
    if _is_git_dir(path):
        return [Epoch(".", path)]
    if _is_git_dir(path / ".git"):
        return [Epoch(".", path / ".git")]
    return []


def _is_git_dir(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir()


def is_inbox(epochs: list[Epoch], *, label: str) -> bool:
    """Whether the newest epoch's last commit has an "m" or "d" blob (or no commits)."""
    with _CatFile(epochs[-1].git_dir, label=label) as objects:
        if objects.get("HEAD") is None:
            return True  # no commits yet: an empty inbox
        return objects.get("HEAD:m") is not None or objects.get("HEAD:d") is not None


def list_name(path: Path) -> str | None:
    """A list name from the inbox's location: ".../io-uring/git/0.git" -> "io-uring"."""
    path = path.resolve()
    if _EPOCH_NAME.fullmatch(path.name) and path.parent.name == "git":
        path = path.parent.parent
    if path.name in ("repo", ".git", "all.git"):
        path = path.parent
    name = path.name.removesuffix(".git")
    # a single epoch is often cloned as "<list>.0", "<list>.1", ...
    name = re.sub(r"\.\d{1,6}$", "", name)
    return name or None


def read_inbox(
    path: Path, *, source: str, list_hint: str | None, checkpoint: str | None
) -> Iterator[tuple[RawMessage, str]]:
    """Every message of the inbox at path, oldest first, with the token after each."""
    epochs = find_epochs(path)
    if not epochs:
        raise ArchiveUnreadable(
            f"cannot read {path}: not a public-inbox git repository"
        )
    done = _decode(checkpoint)
    for epoch in epochs:
        for commit, data, deleted in _read_epoch(epoch, since=done.get(epoch.name)):
            done[epoch.name] = commit
            position = f"{DELETED_PREFIX}{commit}" if deleted else commit
            message = RawMessage(data, Origin(source, position, list_hint))
            yield message, _encode(done)


def _encode(done: dict[str, str]) -> str:
    return json.dumps({"v": _VERSION, "epochs": done}, separators=(",", ":"))


def _decode(checkpoint: str | None) -> dict[str, str]:
    if checkpoint is None:
        return {}
    try:
        state = json.loads(checkpoint)
        epochs = state["epochs"] if state.get("v") == _VERSION else {}
    except (ValueError, TypeError, KeyError, AttributeError):
        epochs = None
    if not isinstance(epochs, dict):
        log.info("checkpoint is not a public-inbox checkpoint; reading from the start")
        return {}
    return {
        name: commit
        for name, commit in epochs.items()
        if isinstance(name, str) and isinstance(commit, str) and _SHA.fullmatch(commit)
    }


class _Rewritten(Exception):
    """The epoch's history no longer continues from the checkpoint commit."""


def _read_epoch(
    epoch: Epoch, *, since: str | None
) -> Iterator[tuple[str, bytes, bool]]:
    """(commit, blob, is_deletion) for each commit after `since`, oldest first."""
    label = epoch.git_dir.name
    with _CatFile(epoch.git_dir, label=label) as objects:
        try:
            yield from _read_commits(epoch, objects, since=since)
        except ArchiveUnreadable as error:
            # A damaged epoch (a corrupt pack, a lost object) is said and skipped:
            # what was read before the damage is kept, and the other epochs and
            # sources are still read.
            notice.warning("%s; the rest of %s was not read", error, label)


def _read_commits(
    epoch: Epoch, objects: _CatFile, *, since: str | None
) -> Iterator[tuple[str, bytes, bool]]:
    label = epoch.git_dir.name
    if objects.get("HEAD") is None:
        return  # an epoch without commits yet
    if since is not None and objects.get(since) is None:
        log.warning("%s: checkpoint commit %s is gone; reading it again", label, since)
        since = None
    try:
        yield from _walk(epoch, objects, since=since)
    except _Rewritten:
        log.warning(
            "%s: history was rewritten since %s; reading it again", label, since
        )
        yield from _walk(epoch, objects, since=None)


def _walk(
    epoch: Epoch, objects: _CatFile, *, since: str | None
) -> Iterator[tuple[str, bytes, bool]]:
    revision = f"{since}..HEAD" if since else "HEAD"
    command = ["rev-list", "--reverse", "--parents", revision, "--"]
    label = str(epoch.git_dir)
    with output_lines(
        epoch.git_dir, command, error=ArchiveUnreadable, label=label
    ) as lines:
        first = True
        empty, lost = 0, 0
        for line in lines:
            commit, *parents = line.decode("ascii", "replace").split()
            if first and since is not None and since not in parents:
                raise _Rewritten
            first = False
            blob = objects.get(f"{commit}:m")
            deleted = blob is None
            if blob is None:
                blob = objects.get(f"{commit}:d")
            if blob is None:
                if _names_a_message(objects.get(f"{commit}^{{tree}}")):
                    lost += 1
                else:
                    empty += 1
                continue
            yield commit, blob, deleted
    # Every public-inbox v2 commit holds "m" or "d"; others (a v1 inbox's hashed
    # paths) and blobs the repository lacks (a partial or damaged clone) are
    # counted, never dropped in silence.
    if lost:
        notice.warning(
            "%s: %s missing from the repository (a partial or damaged clone); skipped",
            epoch.git_dir,
            count(lost, "commit's message blob is", "commits' message blobs are"),
        )
    if empty:
        notice.warning(
            "%s: %s no message (no m or d file); skipped",
            epoch.git_dir,
            count(empty, "commit holds", "commits hold"),
        )


def _names_a_message(tree: bytes | None) -> bool:
    """Whether a raw tree object has an entry called m or d (mode, space, name, NUL)."""
    return tree is not None and (b" m\x00" in tree or b" d\x00" in tree)


class _CatFile:
    """An epoch's objects, each at most MAX_RAW_MESSAGE bytes (a larger one keeps its
    start, and says so)."""

    def __init__(self, git_dir: Path, *, label: str) -> None:
        self._label = label
        self._objects = ObjectReader(
            git_dir, error=ArchiveUnreadable, label=str(git_dir)
        )

    def __enter__(self) -> _CatFile:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._objects.__exit__(*exc_info)

    def get(self, name: str) -> bytes | None:
        """The object's bytes (at most MAX_RAW_MESSAGE), or None when it is missing."""
        found = self._objects.get(name, limit=MAX_RAW_MESSAGE)
        if found is None:
            return None
        data, size = found
        if size > MAX_RAW_MESSAGE:
            log.warning(
                "%s: %s is %d bytes: keeping its start only", self._label, name, size
            )
        return data
