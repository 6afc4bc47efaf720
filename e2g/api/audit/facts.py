"""The stored facts behind an audit, read for many commits per query.

The archive's dates, once per audit (`archive_window`). For a chunk of commits (a
thousand at a time): what `e2g match` stored of each
(its row, with the commit's patch-id, and its links), the linked messages, the
threads they are in (one query per 500 threads), and the review trailers of every
reply below each posting (one query per 500 replies). Nothing here decides a
verdict; `verdicts` does, from these values.

`People` says who is who: addresses lower-cased and put through the repository's
mailmap (git check-mailmap, 500 addresses per call, each address once per audit).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import NamedTuple

from e2g.api.audit.model import ArchiveWindow
from e2g.git.commits import CommitMessage
from e2g.git.repo import Repo
from e2g.index.store import AuditRow, Store, StoredLink, ThreadRow
from e2g.mail.review import person
from e2g.mail.threads import MAX_THREAD, children_of, walk_below
from e2g.matcher.postings import QUOTED
from e2g.matcher.rootless import ROOTLESS
from e2g.matcher.scoring import normalise_name
from e2g.model import Address, Kind, Trailer
from e2g.model.stored import StoredMessage

CHUNK = 1000  # commits per round of queries: bounds memory, amortises each query


class Reply(NamedTuple):
    """A message below a posting: who sent it, and the review trailers it gave."""

    seq: int
    message_id: str
    author: Address
    reviews: tuple[Trailer, ...]


class Posted(NamedTuple):
    """One posting `e2g match` linked to the commit, with the replies below it."""

    message: StoredMessage
    link: StoredLink
    replies: tuple[Reply, ...]

    @property
    def version(self) -> int:
        return self.message.version

    @property
    def is_patch(self) -> bool:
        """It carries the patch: a patch mail, or a reply quoting it whole."""
        return self.message.kind is Kind.PATCH or self.link.method == QUOTED


class Sources(NamedTuple):
    """Where the diffs and bodies a verdict may need come from (the store, and the
    commits' diffs read from git for those whose code no posting carries)."""

    posted_diff: Callable[[int], str | None]
    body: Callable[[int], str]
    commit_diff: Callable[[str, bool], str | None]  # (sha, with renames)


def posting_order(posted: Posted) -> tuple[int, bool, float]:
    date = posted.message.date.timestamp() if posted.message.date else 0.0
    return (-posted.version, not posted.is_patch, -date)


class CommitFacts(NamedTuple):
    commit: CommitMessage
    row: AuditRow | None  # None: `e2g match` never answered this commit
    postings: tuple[Posted, ...]
    trees: tuple[str, ...] = ()  # "tree/branch" of the named trees that hold it


def version_of(posted: Posted, facts: CommitFacts) -> int:
    """The version `posted` is of, for its reviews and changelogs: a patch's own;
    a cover letter's that of the commit's patch in its series, for an author may
    label the cover v2 and its patches v1 (sparse's "[SPARSE v2 00/28]" over
    "[PATCH v1 NN/28]"): its changelog is then no later version's."""
    series = posted.message.series_id
    if posted.is_patch or series is None:
        return posted.version
    return next(
        (
            other.version
            for other in facts.postings
            if other.is_patch and other.message.series_id == series
        ),
        posted.version,
    )


def read_facts(
    store: Store, repo: str, commits: Sequence[CommitMessage]
) -> list[CommitFacts]:
    """The facts of each of `commits` (of the repository keyed `repo`), in order."""
    shas = [commit.sha for commit in commits]
    rows = store.audit_commits(repo, shas)
    links = store.links_of_commits(repo, shas, evidence=False)
    messages = {
        message.message_id: message
        for message in store.messages(
            (link.message_id for found in links.values() for link in found),
            places=False,
        )
    }
    threads = _threads(
        store, sorted({message.thread_root for message in messages.values()})
    )
    empty = Thread([], {})
    below = {
        (sha, link.message_id): _replies(
            messages[link.message_id],
            link.method,
            found,
            threads.get(messages[link.message_id].thread_root, empty),
        )
        for sha, found in links.items()
        for link in found
        if link.message_id in messages
    }
    reviews = _reviews(store, [row.seq for rows in below.values() for row in rows])
    trees = store.tree_names({repo}, shas)

    def posted(sha: str, link: StoredLink) -> Posted:
        return Posted(
            message=messages[link.message_id],
            link=link,
            replies=tuple(
                Reply(row.seq, row.message_id, row.author, reviews.get(row.seq, ()))
                for row in below[(sha, link.message_id)]
            ),
        )

    return [
        CommitFacts(
            commit=commit,
            row=rows.get(commit.sha),
            postings=tuple(
                posted(commit.sha, link)
                for link in links.get(commit.sha, ())
                if link.message_id in messages
            ),
            trees=trees.get(commit.sha, ()),
        )
        for commit in commits
    ]


def archive_window(store: Store, repo: str) -> ArchiveWindow | None:
    """The dates of the archive an audit of `repo` judges against: its lists' (those
    its postings were seen on; with one list in the store, that one), else every
    list's; None when no list holds dated mail."""
    lists = store.list_names()
    own = store.lists_of_repo(repo) if len(lists) > 1 else []
    dates = store.list_dates(own) or store.list_dates(lists)
    if not dates:
        return None
    return ArchiveWindow(
        first=min(first for first, _ in dates.values()),
        last=max(last for _, last in dates.values()),
        lists=tuple(sorted(dates)),
    )


def _replies(
    message: StoredMessage,
    method: str,
    links: Sequence[StoredLink],
    thread: Thread,
) -> list[ThreadRow]:
    """The replies below one posting (found by `method`), as the matcher counts
    them (postings.py): the commit's other postings end a branch, and a cover
    letter's own series is not its review."""
    exclude = {link.message_id for link in links if link.method != "cover"}
    if message.kind is Kind.COVER and message.series_id is not None:
        exclude |= {
            row.message_id
            for row in thread.rows
            if row.series_id == message.series_id and row.kind == Kind.PATCH
        }
    exclude.discard(message.message_id)
    if method == ROOTLESS:  # every mail of a thread whose first is lost answers it
        return [row for row in thread.rows if row.message_id not in exclude]
    below = walk_below(thread.children, message.message_id, exclude=exclude)
    if method == QUOTED:  # the quoting mail answers the lost patch (or is a ping)
        own = [row for row in thread.rows if row.message_id == message.message_id]
        return own + below
    return below


class Thread(NamedTuple):
    """A thread's messages and, by parent, their replies (the walk's map, made
    once per thread: a series' postings all hang in one)."""

    rows: list[ThreadRow]
    children: dict[str, list[tuple[str, ThreadRow]]]


def _threads(store: Store, roots: Sequence[str]) -> dict[str, Thread]:
    return {
        root: Thread(
            rows, children_of((row.message_id, row.parent_id, row) for row in rows)
        )
        for root, rows in store.threads_links(roots, limit=MAX_THREAD).items()
    }


def _reviews(store: Store, seqs: Sequence[int]) -> dict[int, tuple[Trailer, ...]]:
    found: dict[int, list[Trailer]] = {}
    for seq, key, value in store.reviews_of(sorted(set(seqs))):
        found.setdefault(seq, []).append(Trailer(key, value))
    return {seq: tuple(trailers) for seq, trailers in found.items()}


def addresses(facts: Iterable[CommitFacts]) -> list[Address]:
    """Everyone the chunk's verdicts compare: posting authors and repliers."""
    found: list[Address] = []
    for fact in facts:
        for posted in fact.postings:
            message = posted.message
            found.append(Address(message.author_name, message.author_email))
            if message.patch_author_email:
                found.append(
                    Address(message.patch_author_name or "", message.patch_author_email)
                )
            for reply in posted.replies:
                found.append(reply.author)
                found += [person(review.value) for review in reply.reviews]
    return found


MIN_NAME_WORDS = 2  # a name alone says "same person" only when it has this many words


class People:
    """Who is who across addresses: the repository's mailmap, then the lower-cased
    address; a full name (two words or more) also names one person under several
    addresses (a new employer between two versions)."""

    def __init__(self, repository: Repo | None) -> None:
        self._repository = repository
        # By (name, address), as mail gives them: a mailmap tells people apart by
        # name who share an address (GitGitGadget's), and a tuple of two str
        # hashes far faster than an Address, a dataclass, over an audit's
        # hundreds of thousands of lookups.
        self._canonical: dict[tuple[str, str], str] = {}

    def learn(self, found: Iterable[Address]) -> None:
        """Look the new addresses up in the mailmap, all at once."""
        new = list(
            {
                (a.name, a.email): a
                for a in found
                if (a.name, a.email) not in self._canonical
            }.values()
        )
        if not new:
            return
        mapped = new if self._repository is None else self._mailmap(new)
        for address, canonical in zip(new, mapped, strict=True):
            self._canonical[address.name, address.email] = canonical.email.lower()

    def _mailmap(self, new: list[Address]) -> list[Address]:
        assert self._repository is not None
        # check-mailmap takes "Name <email>" arguments: a value with a newline or
        # angle brackets (mail is data) cannot be one; it keeps its own address.
        usable = [a for a in new if _plain(a)]
        mapped = dict(zip(usable, self._repository.mailmap_lookup(usable), strict=True))
        return [mapped.get(address, address) for address in new]

    def key(self, address: Address) -> str:
        email = address.email
        return self._canonical.get((address.name, email)) or email.lower()

    def group(self, found: Iterable[Address]) -> Group:
        """Several addresses of one person (a patch's author as git and each posting
        name them), to ask `within` of many others."""
        known = list(found)
        return Group(
            keys=frozenset(self.key(a) for a in known if a.email),
            names=frozenset(_full_name(a.name) for a in known) - {""},
        )

    def within(self, someone: Address, group: Group) -> bool:
        """Whether `someone` is the person of `group`: `same` against each of it."""
        if someone.email and self.key(someone) in group.keys:
            return True
        name = _full_name(someone.name)
        return bool(name) and name in group.names

    def same(self, one: Address, other: Address) -> bool:
        if one.email and self.key(one) == self.key(other):
            return True
        name = _full_name(one.name)
        return bool(name) and name == normalise_name(other.name)


class Group(NamedTuple):
    keys: frozenset[str]  # canonical addresses
    names: frozenset[str]  # full names, normalised


@lru_cache(maxsize=1 << 12)
def _full_name(name: str) -> str:
    """The normalised name when it has words enough to name one person, else ""."""
    found = normalise_name(name)
    return found if len(found.split()) >= MIN_NAME_WORDS else ""


def _plain(address: Address) -> bool:
    text = address.name + address.email
    return bool(address.email) and not any(c in text for c in "<>\n\r\0")
