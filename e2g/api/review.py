"""What a commit's page shows beyond its postings: the commit itself and what reviewers said.

`commit_text` reads one commit through `e2g.git.repo` (its message, and its diff cut
into one part per file, bounded). `posting_reviews` reads each posting's thread through
`e2g.api.threads` and keeps, per reply below the posting, the first lines of what the
reply said in its own words (quoted text, trailers and diffs left out). The review
trailers and the people who took part are already on each `Posting` (the matcher
gathers them). Everything here is bounded: big diffs and long threads are cut, with a
count of what was left out. Text is returned as is; the templates escape it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from e2g.api.threads import ThreadNode, ThreadView, thread_view
from e2g.config import Settings
from e2g.git.repo import Repo
from e2g.model import FileStatus, Kind
from e2g.model.links import Posting

MAX_MESSAGE = 64 * 1024  # characters of a commit message shown
MAX_DIFF_LINES = 4000  # diff lines shown on the page; `git show` has the rest
MAX_FILES = 500  # files listed in the diffstat
MAX_EXCERPTS = 30  # replies excerpted per posting
EXCERPT_LINES = 4
EXCERPT_WIDTH = 200  # characters per excerpt line
_SERIES = frozenset({Kind.PATCH, Kind.COVER})


class FileDiff(NamedTuple):
    path: str
    added: int
    removed: int
    binary: bool
    lines: tuple[str, ...] | None  # None: past the part of the diff that is shown
    deleted: bool = False  # the commit deleted the file: it is not in its tree


class CommitText(NamedTuple):
    sha: str
    message: str  # the body: the commit message after its subject line
    files: tuple[FileDiff, ...]
    more_files: int  # files past MAX_FILES, not listed
    cut: bool  # part of the diff is not shown (MAX_DIFF_LINES, or git's own bound)

    @property
    def added(self) -> int:
        return sum(change.added for change in self.files)

    @property
    def removed(self) -> int:
        return sum(change.removed for change in self.files)


class Excerpt(NamedTuple):
    message_id: str
    author: str
    date: datetime | None
    lines: tuple[str, ...]  # the first lines the reply wrote itself
    reviews: tuple[str, ...]  # "Reviewed-by: ..." trailers it gave


class PostingReview(NamedTuple):
    message_id: str
    excerpts: tuple[Excerpt, ...]
    more: int  # replies below the posting that were not excerpted


def commit_text(sha: str, *, repo: Path) -> CommitText | None:
    """The commit's message and per-file diff; None for a merge (no patch of its own)."""
    commit = next(iter(Repo.open(repo).commits([sha])), None)
    if commit is None:
        return None
    parts = split_files(commit.patch.diff)
    budget = MAX_DIFF_LINES
    files: list[FileDiff] = []
    cut = len(parts) < len(commit.patch.files)
    for index, change in enumerate(commit.patch.files[:MAX_FILES]):
        lines: tuple[str, ...] | None = None
        if index < len(parts) and budget > 0:
            lines = parts[index][:budget]
            cut = cut or len(lines) < len(parts[index])
            budget -= len(lines)
        else:
            cut = True
        files.append(
            FileDiff(
                path=change.path,
                added=change.added,
                removed=change.removed,
                binary=change.binary,
                lines=lines,
                deleted=change.status is FileStatus.DELETED,
            )
        )
    return CommitText(
        sha=commit.sha,
        message=commit.body[:MAX_MESSAGE],
        files=tuple(files),
        more_files=max(0, len(commit.patch.files) - MAX_FILES),
        cut=cut,
    )


def split_files(diff: str) -> list[tuple[str, ...]]:
    """The diff's lines, one tuple per `diff --git` section, in order."""
    parts: list[list[str]] = []
    for line in diff.splitlines():
        if line.startswith("diff --git ") or not parts:
            parts.append([])
        parts[-1].append(line)
    return [tuple(part) for part in parts]


def excerpt_lines(node: ThreadNode) -> tuple[str, ...]:
    """The first lines a reply wrote itself: no quotes, trailers, attribution or diff."""
    found: list[str] = []
    for block in node.blocks:
        if block.kind != "text":
            continue
        for line in block.text.splitlines():
            text = line.strip()
            if not text or text.endswith("wrote:") or text == "--":
                continue
            found.append(text[:EXCERPT_WIDTH])
            if len(found) >= EXCERPT_LINES:
                return tuple(found)
    return tuple(found)


def _below(view: ThreadView, message_id: str) -> list[ThreadNode]:
    """The nodes of the subtree under `message_id`: display order is depth first."""
    nodes = list(view.nodes)
    for index, node in enumerate(nodes):
        if node.message.message_id == message_id:
            depth = node.depth
            below: list[ThreadNode] = []
            for later in nodes[index + 1 :]:
                if later.depth <= depth:
                    break
                below.append(later)
            return below
    return []


def _excerpt(node: ThreadNode) -> Excerpt:
    message = node.message
    return Excerpt(
        message_id=message.message_id,
        author=message.author_name or message.author_email,
        date=message.date,
        lines=excerpt_lines(node),
        reviews=tuple(f"{review.key}: {review.value}" for review in node.reviews),
    )


def posting_reviews(
    settings: Settings, postings: Sequence[Posting]
) -> dict[str, PostingReview]:
    """Per posting's Message-ID: excerpts of the replies below it (bounded)."""
    views: dict[str, ThreadView | None] = {}
    found: dict[str, PostingReview] = {}
    for posting in postings:
        if posting.thread_root not in views:
            views[posting.thread_root] = thread_view(settings, posting.message_id)
        view = views[posting.thread_root]
        below = _below(view, posting.message_id) if view is not None else []
        # A cover letter's patches sit below it too: they are the series, not its review.
        below = [node for node in below if node.message.kind not in _SERIES]
        said = [node for node in below if node.shown]
        found[posting.message_id] = PostingReview(
            message_id=posting.message_id,
            excerpts=tuple(_excerpt(node) for node in said[:MAX_EXCERPTS]),
            more=len(below) - min(len(said), MAX_EXCERPTS),
        )
    return found
