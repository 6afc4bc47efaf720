"""Candidate mails for one commit, one query per signal, all over indexed store columns.

Each stage proposes messages and says why (its name goes into Candidate.sources);
scoring decides. Stages (DESIGN.md, "The matching cascade"): trailer, patch-id, author
timestamp, subject key, author map, file map. The author and file maps are bounded and
limited to the date window, nearest first, so a prolific author or a hot file cannot
make one commit cost more than a few hundred comparisons.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from sys import intern
from typing import Generic, NamedTuple, TypeVar

from e2g.index.store import Store, SubjectLookup
from e2g.mail.backport import process_kind
from e2g.matcher.rules import ALL, PROCESS_MAILS, QUOTED_REPLIES, Rules
from e2g.model.links import Commit
from e2g.model.stored import StoredMessage

LinesByFile = Mapping[str, tuple[list[str], list[str]]]
LinesOf = Callable[[str], LinesByFile]
_Key = TypeVar("_Key")
_Value = TypeVar("_Value")

EARLIEST = timedelta(days=365)
LATEST = timedelta(days=1)
PATCH_ID_LIMIT = 50
AUTHOR_DATE_LIMIT = 20
SUBJECT_LIMIT = 60
AUTHOR_LIMIT = 150
FILES_LIMIT = 120
MAX_QUERY_FILES = 40


class MatchRequest(NamedTuple):
    """A commit plus what the matcher needs of it that only ingest can compute."""

    commit: Commit
    commit_lines: LinesByFile
    linked_ids: tuple[str, ...] = ()  # Message-IDs its Link:/Message-Id: trailers name


def is_process(message: StoredMessage) -> bool:
    """Whether `message` is a mail of the backport process: as ingest classified it
    (with its body, messages.process) or, for mail a store has not classified yet
    (schema 18's fill pending), as its subject and X-stable: header say."""
    return (
        message.process is not None
        or process_kind(message.subject, stable=message.stable) is not None
    )


@dataclass(slots=True)
class Pool:
    """Candidates found so far, by Message-ID, with the stages that proposed each."""

    messages: dict[str, StoredMessage] = field(default_factory=dict)
    sources: dict[str, set[str]] = field(default_factory=dict)
    # What an earlier stage fetched for a later one, by that stage's source name.
    later: dict[str, list[StoredMessage]] = field(default_factory=dict)
    rules: Rules = ALL  # the matcher's (e2g.matcher.rules)

    def add(self, found: Sequence[StoredMessage], source: str) -> None:
        """Propose `found`; a mail of the backport process (AUTOSEL, a stable review,
        FAILED or queued notice) never: it carries a patch already applied, and is
        that backport's posting (e2g.api.trees), not the patch's review (unless
        the rules, e2g.matcher.rules, turn process-mails off)."""
        keep_process = not self.rules.on(PROCESS_MAILS)
        for message in found:
            if not keep_process and is_process(message):
                continue
            self.messages.setdefault(message.message_id, message)
            self.sources.setdefault(message.message_id, set()).add(source)


class MessageCache:
    """Stored messages by seq, for one matcher: a hot file's patches are candidates
    for many commits (in a liburing run, 17,500 fetches were of 1,100 messages).

    Bounded; a matcher lives for one command, so new mail arriving meanwhile is
    simply not seen, as it would not be by a query made a moment earlier.
    """

    def __init__(self, store: Store, *, limit: int = 20_000) -> None:
        self.store = store
        self.limit = limit
        self._messages: dict[int, StoredMessage] = {}

    def by_seqs(self, seqs: Sequence[int]) -> dict[int, StoredMessage]:
        missing = [seq for seq in seqs if seq not in self._messages]
        if missing:
            if len(self._messages) + len(missing) > self.limit:
                self._messages.clear()
                missing = list(seqs)
            for message in self.store.by_seqs(missing):
                self._messages[message.seq] = message
        return {seq: self._messages[seq] for seq in seqs if seq in self._messages}

    def resolve(self, *parts: Sequence[int]) -> list[list[StoredMessage]]:
        """Lists of seqs (from the store's *_seqs lookups), each seq as its message:
        only messages not seen yet are read whole (the exact keys and a patch's
        family find the same ones)."""
        found = self.by_seqs([seq for part in parts for seq in part])
        return [[found[seq] for seq in part if seq in found] for part in parts]


class TouchingPatch(NamedTuple):
    seq: int
    shared: int  # how many of the asked paths it touches
    date: int
    author_email: str
    patch_author_email: str | None


class _FilePatches(NamedTuple):
    """One file's dated patches, oldest first, as columns: machine integers and
    interned addresses (a tuple per row took 222 bytes; these take 44, measured at 200k)."""

    dates: array[int]
    seqs: array[int]
    authors: list[str]
    patch_authors: list[str | None]


class FileMap:
    """Patches touching given files within a date window, from per-file lists.

    Neighbouring commits touch the same files: each file's dated patches are read
    once per matcher and windowed by bisection, rather than asking SQLite, which
    walks every patch of a hot file for each commit to test its date. Bounded by
    the rows held (2M rows, about 90 MB); cleared when full.
    """

    def __init__(self, store: Store, *, limit: int = 2_000_000) -> None:
        self.store = store
        self.limit = limit
        self._held = 0
        self._files: dict[str, _FilePatches] = {}

    def touching(
        self, paths: Sequence[str], *, low: int, high: int
    ) -> list[TouchingPatch]:
        """Patches dated in [low, high] touching any of `paths`, by seq."""
        shared: dict[int, int] = {}
        rows: dict[int, tuple[int, str, str | None]] = {}
        for path in dict.fromkeys(paths):
            held = self._file(path)
            first = bisect_left(held.dates, low)
            for index in range(first, bisect_right(held.dates, high, lo=first)):
                seq = held.seqs[index]
                shared[seq] = shared.get(seq, 0) + 1
                rows[seq] = (
                    held.dates[index],
                    held.authors[index],
                    held.patch_authors[index],
                )
        return [TouchingPatch(seq, shared[seq], *rows[seq]) for seq in sorted(shared)]

    def _file(self, path: str) -> _FilePatches:
        held = self._files.get(path)
        if held is None:
            found = self.store.patches_touching(path)
            if self._held + len(found) > self.limit:
                self._files.clear()
                self._held = 0
            held = self._files[path] = _FilePatches(
                array("q", [row[0] for row in found]),
                array("q", [row[1] for row in found]),
                [intern(row[2]) for row in found],
                [intern(row[3]) if row[3] is not None else None for row in found],
            )
            self._held += len(found)
        return held


class Lookups(NamedTuple):
    """What the stages read through, kept for one matcher."""

    messages: MessageCache
    files: FileMap


class Memo(Generic[_Key, _Value]):
    """What `load` gives for a key, kept for one matcher: a hot file's patches, and
    a series' thread, come up for many commits. Bounded: cleared when full."""

    def __init__(self, load: Callable[[_Key], _Value], *, limit: int) -> None:
        self._load = load
        self._limit = limit
        self._found: dict[_Key, _Value] = {}

    def __call__(self, key: _Key) -> _Value:
        if key in self._found:
            return self._found[key]
        if len(self._found) >= self._limit:
            self._found.clear()
        value = self._found[key] = self._load(key)
        return value


def window(commit: Commit) -> tuple[int, int]:
    earliest = min(commit.author_date, commit.commit_date) - EARLIEST
    return int(earliest.timestamp()), int((commit.commit_date + LATEST).timestamp())


def _epoch(value: datetime) -> int:
    return int(value.timestamp())


def exact_candidates(
    store: Store, request: MatchRequest, pool: Pool, lookups: Lookups
) -> None:
    """Stage 1: what a trailer names, equal patch-ids, equal author timestamps."""
    commit = request.commit
    if request.linked_ids:
        _trailer_candidates(store, request.linked_ids, pool)
    # One query for both keys (SQLite answers an OR of two indexed columns from both
    # indexes) and for stage 2's subject key: most commits find little or nothing,
    # so the number of queries is the cost.
    stamp = _epoch(commit.author_date)
    patch_id = commit.patch.patch_id or ""
    found, same_subject = lookups.messages.resolve(
        *store.exact_key_seqs(
            patch_id=patch_id, author_stamp=stamp, subject=_subject_lookup(commit)
        )
    )
    pool.later["subject"] = same_subject
    if commit.patch.patch_id:
        quoting = pool.rules.on(QUOTED_REPLIES)  # replies quoting the patch whole
        pool.add(
            [
                m
                for m in found
                if m.patch_id == commit.patch.patch_id
                and (quoting or m.kind != "reply")
            ][:PATCH_ID_LIMIT],
            "patch-id",
        )
    pool.add(
        [m for m in found if m.date is not None and _epoch(m.date) == stamp][
            :AUTHOR_DATE_LIMIT
        ],
        "author-date",
    )


def subject_candidates(
    store: Store, request: MatchRequest, pool: Pool, lookups: Lookups
) -> None:
    """Stage 2: patches whose subject key equals the commit's summary."""
    found = pool.later.pop("subject", None)
    if found is None:
        found = store.subject_patches(_subject_lookup(request.commit))
    pool.add(found, "subject")


def _subject_lookup(commit: Commit) -> SubjectLookup:
    return SubjectLookup(
        commit.subject_key, _epoch(commit.commit_date), limit=SUBJECT_LIMIT
    )


def map_candidates(
    store: Store, request: MatchRequest, pool: Pool, lookups: Lookups
) -> None:
    """Stage 3: the author's patches and patches touching the same files, in the window.

    Only patches that touch one of the commit's files: any other would be rejected for
    having no file in common, after costing a fetch and a compare. One query finds
    them all; the author's nearest and the files' best are picked from its rows.
    """
    commit = request.commit
    paths = list(commit.patch.paths)[:MAX_QUERY_FILES]
    if not paths:
        return
    low, high = window(commit)
    touching = lookups.files.touching(paths, low=low, high=high)
    email = commit.author.email.casefold()
    near = _epoch(commit.author_date)
    by_author = sorted(
        (
            row
            for row in touching
            if email in (row.author_email, row.patch_author_email)
        ),
        key=lambda row: abs(row.date - near),
    )[:AUTHOR_LIMIT]
    by_files = sorted(touching, key=lambda row: (-row.shared, abs(row.date - near)))[
        :FILES_LIMIT
    ]
    found = lookups.messages.by_seqs([row.seq for row in (*by_author, *by_files)])
    pool.add([found[row.seq] for row in by_author if row.seq in found], "author")
    pool.add([found[row.seq] for row in by_files if row.seq in found], "files")


STAGES = (exact_candidates, subject_candidates, map_candidates)


def _trailer_candidates(store: Store, linked: Sequence[str], pool: Pool) -> None:
    """The named messages; for a named cover letter or reply, the patches of its thread."""
    named = store.messages(linked)
    pool.add(named, "trailer")
    for message in named:
        if message.kind != "patch":
            pool.add(store.thread_patches(message.thread_root, limit=200), "thread")
