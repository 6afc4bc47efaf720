"""Messages and discussions as the web and the CLI show them.

`message_view`, `thread_view` and `raw_message` read one store (read-only, safe beside a
running ingest) and return values ready to render: a thread is a flat list of nodes in
display order, each with its depth, the stored message, its body split into quoted and
unquoted blocks, its trailers, and its diff. The tree is built iteratively, bounded in
size, and survives what real archives hold: parents that were never archived (ghosts),
reply loops, and a thread root that is itself missing.

`discussed_threads` and `recent_commits` feed the front page; `thread_groups` orders
`e2g search --thread`'s hits.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from e2g.api.basis import open_store
from e2g.config import Settings
from e2g.index.store import Store, from_epoch
from e2g.mail import threads
from e2g.mail.trailers import TrailerKind, is_trailer_line, kind_of
from e2g.model import Trailer
from e2g.model.stored import StoredMessage

if TYPE_CHECKING:  # the full-text index (Whoosh) stays off the web's import path
    from e2g.api.core import SearchHit

PAGE_BUDGET = 4 * 1024 * 1024  # characters of bodies and diffs per thread view
MAX_DIFF_SHOWN = 512 * 1024  # characters of one diff shown inline; the raw mail has all
MAX_BLOCKS = 2000  # body blocks per message; the tail is joined into the last block
RECENT_WINDOW = 5000  # latest messages scanned for the front page's busy threads


class Block(NamedTuple):
    """A run of body lines of one kind: "text", "quote" (lines starting with >), "trailer"."""

    kind: str
    text: str
    lines: int


class ThreadNode(NamedTuple):
    message: StoredMessage
    depth: int
    body: str  # the commentary: the text before the diff
    blocks: tuple[Block, ...]
    trailers: tuple[Trailer, ...]
    diff: str | None
    diff_truncated: bool = False
    shown: bool = True  # False once the page budget is spent: headers only
    parent_missing: bool = False  # replies to a message that is not in the store
    loop: bool = False  # its References form a loop: shown at the top level
    focus: bool = False  # the message the view was asked for

    @property
    def date_corrected(self) -> bool:
        return self.message.date_corrected

    @property
    def reviews(self) -> tuple[Trailer, ...]:
        return tuple(
            item for item in self.trailers if kind_of(item.key) is TrailerKind.REVIEW
        )


class MessageView(NamedTuple):
    node: ThreadNode
    replies: int  # direct replies in the store

    @property
    def message(self) -> StoredMessage:
        return self.node.message


class ThreadView(NamedTuple):
    root: str  # the thread_root key (possibly a ghost's Message-ID)
    focus: str
    nodes: tuple[ThreadNode, ...]
    total: int  # messages in the thread, including those past threads.MAX_THREAD
    root_missing: bool  # the root message itself was never archived

    @property
    def truncated(self) -> bool:
        return self.total > len(self.nodes)


class BusyThread(NamedTuple):
    root: StoredMessage
    messages: int  # among the latest RECENT_WINDOW messages


class RecentCommit(NamedTuple):
    sha: str
    subject: str
    author_name: str
    commit_date: datetime | None
    status: str
    method: str | None
    trees: tuple[str, ...] = ()  # "tree/branch" of the named trees that hold it


# --- pure helpers --------------------------------------------------------------------


def _line_kind(line: str) -> str:
    if line.startswith(">"):
        return "quote"
    if is_trailer_line(line):
        return "trailer"
    return "text"


def split_blocks(body: str) -> tuple[Block, ...]:
    """Runs of quoted, trailer and other lines, in order; blank lines join the run they are in."""
    runs: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        kind = _line_kind(line)
        if not line.strip() and runs:
            kind = runs[-1][0]  # a blank line does not break a quote into two folds
        if runs and (runs[-1][0] == kind or len(runs) >= MAX_BLOCKS):
            runs[-1][1].append(line)
        else:
            runs.append((kind, [line]))
    blocks = []
    for kind, lines in runs:
        while lines and not lines[-1].strip():
            lines.pop()
        if lines:
            blocks.append(Block(kind=kind, text="\n".join(lines), lines=len(lines)))
    return tuple(blocks)


# --- store reads ---------------------------------------------------------------------


def _diff(store: Store, message: StoredMessage, budget: int) -> tuple[str | None, bool]:
    if not (
        message.kind == "patch" or message.patch_id or message.added or message.removed
    ):
        return None, False  # only patches have a stored diff: skip the query
    text = store.diff(message.seq)
    if text is None:
        return None, False
    limit = min(MAX_DIFF_SHOWN, max(budget, 0))
    if len(text) > limit:
        return text[:limit], True
    return text, False


def _node(
    store: Store, message: StoredMessage, *, depth: int = 0, budget: int = PAGE_BUDGET
) -> ThreadNode:
    body = store.body(message.seq)
    diff, cut = _diff(store, message, budget - len(body))
    return ThreadNode(
        message=message,
        depth=depth,
        body=body,
        blocks=split_blocks(body),
        trailers=tuple(store.trailers(message.seq)),
        diff=diff,
        diff_truncated=cut,
    )


def _header_node(message: StoredMessage, depth: int) -> ThreadNode:
    return ThreadNode(
        message=message,
        depth=depth,
        body="",
        blocks=(),
        trailers=(),
        diff=None,
        shown=False,
    )


def message_view(settings: Settings, message_id: str) -> MessageView | None:
    """One message with its blocks, trailers and diff; None when it is not in the store."""
    with open_store(settings) as store:
        message = store.message(message_id)
        if message is None:
            return None
        return MessageView(
            node=_node(store, message, budget=MAX_DIFF_SHOWN),
            replies=store.reply_count(message_id),
        )


def raw_message(settings: Settings, message_id: str) -> bytes | None:
    """The message's bytes exactly as the archive held them; None when not stored."""
    with open_store(settings) as store:
        message = store.message(message_id)
        return None if message is None else store.raw(message.seq)


def _thread_nodes(
    store: Store, ordered: Iterable[tuple[StoredMessage, int, bool, bool]], focus: str
) -> list[ThreadNode]:
    nodes: list[ThreadNode] = []
    budget = PAGE_BUDGET
    for message, depth, ghost, loop in ordered:
        is_focus = message.message_id == focus
        if budget > 0 or is_focus:
            node = _node(
                store, message, depth=depth, budget=max(budget, MAX_DIFF_SHOWN // 4)
            )
            budget -= len(node.body) + len(node.diff or "")
        else:
            node = _header_node(message, depth)
        nodes.append(_flags(node, ghost=ghost, loop=loop, focus=is_focus))
    return nodes


def _flags(node: ThreadNode, *, ghost: bool, loop: bool, focus: bool) -> ThreadNode:
    return node._replace(parent_missing=ghost, loop=loop, focus=focus)


def thread_view(settings: Settings, message_id: str) -> ThreadView | None:
    """The whole discussion `message_id` belongs to, as an ordered tree (bounded)."""
    with open_store(settings) as store:
        message = store.message(message_id)
        if message is None:
            return None
        root = message.thread_root
        messages = store.thread(root, limit=threads.MAX_THREAD)
        total = store.thread_size(root)
        if all(found.message_id != message_id for found in messages):
            messages.append(message)  # past the bound: still show what was asked for
        nodes = _thread_nodes(store, threads.display_order(messages), message_id)
        root_missing = all(found.message_id != root for found in messages)
        return ThreadView(
            root=root,
            focus=message_id,
            nodes=tuple(nodes),
            total=max(total, len(nodes)),
            root_missing=root_missing,
        )


def discussed_threads(settings: Settings, *, limit: int = 10) -> list[BusyThread]:
    """The busiest threads among the latest mail (a bounded scan, cheap on any store)."""
    with open_store(settings) as store:
        counts = store.busy_threads(window=RECENT_WINDOW, limit=limit)
        roots = {found.message_id: found for found in store.messages(counts)}
        busy = []
        for root, count in counts.items():
            found = roots.get(root) or store.first_in_thread(root)
            if found is not None:
                busy.append(BusyThread(root=found, messages=count))
        return busy


def recent_commits(
    settings: Settings, *, repo: Path, limit: int = 15, status: str | None = None
) -> list[RecentCommit]:
    """Commits of `repo` that `e2g link` already looked at, newest first; with
    `status` ("matched" or "no-match") only those."""
    keys = list(dict.fromkeys([str(repo), str(repo.resolve())]))
    with open_store(settings) as store:
        rows = store.recent_commits(keys, limit=limit, status=status)
        trees = store.tree_names(set(keys), [row[0] for row in rows])
    return [
        RecentCommit(
            sha=sha,
            subject=subject,
            author_name=author,
            commit_date=from_epoch(date),
            status=status,
            method=method,
            trees=trees.get(sha, ()),
        )
        for sha, subject, author, date, status, method in rows
    ]


def has_message(settings: Settings, message_id: str) -> bool:
    """Whether the store holds `message_id` (one indexed lookup)."""
    with open_store(settings) as store:
        return store.has_message(message_id)


class _Link(NamedTuple):
    """A thread member as `threads.display_order` walks it: the store's date order
    stands in for the date (`seq` is the member's place in it)."""

    message_id: str
    parent_id: str | None
    seq: int
    date: datetime | None = None


def thread_groups(
    settings: Settings, hits: Sequence[SearchHit]
) -> list[list[SearchHit]]:
    """Hits by thread: threads in the order of their first hit, and inside each the
    hits in the thread's tree order (a parent before its replies, siblings oldest
    first), as the thread page shows them. A hit the store's thread lacks (a thread
    past MAX_THREAD, an index ahead of the store) follows, by date."""
    groups: dict[str, list[SearchHit]] = {}
    for hit in hits:
        groups.setdefault(hit.thread_root or hit.message_id, []).append(hit)
    with open_store(settings) as store:
        return [
            _in_tree_order(store, root, group) if len(group) > 1 else group
            for root, group in groups.items()
        ]


def _in_tree_order(store: Store, root: str, group: list[SearchHit]) -> list[SearchHit]:
    links = store.thread_links(root, limit=threads.MAX_THREAD)
    members = [
        _Link(message_id, parent, place)
        for place, (_, message_id, parent, _, _) in enumerate(links)
    ]
    place = {
        member.message_id: number
        for number, (member, *_) in enumerate(threads.display_order(members))
    }
    unplaced = len(place)
    return sorted(
        group,
        key=lambda hit: (
            place.get(hit.message_id, unplaced),
            hit.date is None,
            hit.date or datetime.min.replace(tzinfo=UTC),
        ),
    )
