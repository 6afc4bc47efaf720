"""Threads: the one home of how messages hang together (DESIGN.md, "Threads").

Pure rules over anything that has a Message-ID and a parent: the ingest's choice of
a thread's root, the order a thread is shown in, and the replies below a posting.
Every walk is iterative with a visited set, because real archives hold parents that
were never archived (ghosts), References loops, and threads of many thousands.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Protocol, TypeVar

MAX_THREAD = 2000  # messages read from one thread, to show it or to count its replies


class Threaded(Protocol):
    @property
    def message_id(self) -> str: ...

    @property
    def parent_id(self) -> str | None: ...


class Dated(Threaded, Protocol):
    @property
    def date(self) -> datetime | None: ...

    @property
    def seq(self) -> int: ...


D = TypeVar("D", bound=Dated)
K = TypeVar("K", bound=Hashable)


def root_candidates(
    message_id: str, parent_id: str | None, references: Sequence[str]
) -> list[str]:
    """Ancestors whose stored root a new message takes, nearest first: its parent,
    then its References from the thread's top down (a middle message may be lost)."""
    if not parent_id:
        return []
    chain = [parent_id, *references]
    return [ancestor for ancestor in chain if ancestor and ancestor != message_id]


def ghost_root(
    message_id: str, parent_id: str | None, references: Sequence[str]
) -> str:
    """The root of a message none of whose ancestors is stored: the oldest id it
    names (a ghost the thread gathers under), else itself."""
    ghosts = [ref for ref in (*references, parent_id) if ref and ref != message_id]
    return ghosts[0] if ghosts else message_id


def display_order(messages: Sequence[D]) -> list[tuple[D, int, bool, bool]]:
    """(message, depth, parent_missing, loop) in display order; every message exactly once.

    Children follow their parent, oldest first. Messages whose parent is not among
    `messages` start at depth 0 (ghost parents). Messages caught in a References
    loop are never reached from a top; each loop is entered at its oldest member,
    which is shown at depth 0 and flagged.
    """
    ordered = sorted(messages, key=lambda m: (m.date is None, m.date or 0, m.seq))
    known = {message.message_id for message in ordered}
    children: dict[str, list[D]] = {}
    tops: list[D] = []
    for message in ordered:
        parent = message.parent_id
        if parent and parent in known and parent != message.message_id:
            children.setdefault(parent, []).append(message)
        else:
            tops.append(message)
    visited: set[str] = set()
    result: list[tuple[D, int, bool, bool]] = []
    for top in tops:
        ghost = bool(top.parent_id) and top.parent_id not in known
        self_loop = top.parent_id == top.message_id
        for message, depth in _depth_first(top, children, visited):
            top_level = depth == 0
            result.append(
                (message, depth, ghost and top_level, self_loop and top_level)
            )
    for message in ordered:  # only loop members are left unvisited
        if message.message_id not in visited:
            for found, depth in _depth_first(message, children, visited):
                result.append((found, depth, False, depth == 0))
    return result


def replies_below(
    start: str,
    links: Iterable[tuple[str, str | None, K]],
    *,
    exclude: Iterable[str] = (),
) -> list[K]:
    """The replies below message `start`, breadth first, each once.

    `links` are (message_id, parent_id, item) for the thread's messages; the items of
    the replies are returned. Messages in `exclude` (say, other postings of the same
    patch) end the walk down their branch.
    """
    return walk_below(children_of(links), start, exclude=exclude)


def children_of(
    links: Iterable[tuple[str, str | None, K]],
) -> dict[str, list[tuple[str, K]]]:
    """(message_id, item) of each message's replies, by parent: built once for a
    thread that many postings are walked down (`walk_below`)."""
    children: dict[str, list[tuple[str, K]]] = {}
    for message_id, parent, item in links:
        if parent:
            children.setdefault(parent, []).append((message_id, item))
    return children


def walk_below(
    children: Mapping[str, Sequence[tuple[str, K]]],
    start: str,
    *,
    exclude: Iterable[str] = (),
) -> list[K]:
    """`replies_below` over a thread's `children_of`."""
    skip = set(exclude)
    seen = {start}
    queue = deque(children.get(start, []))
    below: list[K] = []
    while queue:
        message_id, item = queue.popleft()
        if message_id in seen or message_id in skip:
            continue
        seen.add(message_id)
        below.append(item)
        queue.extend(children.get(message_id, []))
    return below


def _depth_first(
    start: D, children: Mapping[str, Sequence[D]], visited: set[str]
) -> list[tuple[D, int]]:
    """Depth-first order below `start` with an explicit stack (never recursion on mail)."""
    order: list[tuple[D, int]] = []
    stack = [(start, 0)]
    while stack:
        message, depth = stack.pop()
        if message.message_id in visited:
            continue
        visited.add(message.message_id)
        order.append((message, depth))
        for child in reversed(children.get(message.message_id, ())):
            stack.append((child, depth + 1))
    return order
