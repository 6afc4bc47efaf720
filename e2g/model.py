"""Frozen value types shared by every layer of e2g.

No IO and no third-party imports: readers produce RawMessage, parsers produce Message
(with Patch / PullRequest / SubjectInfo), git.repo produces Commit, the matcher produces
Link. The store maps rows to and from these; output maps them to JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

# Named bounds for every field that comes from mail (STYLE 2.2 habit 8).
MAX_MESSAGE_ID = 512
MAX_SUBJECT = 2048
MAX_NAME = 256
MAX_ADDRESS = 320
MAX_REFERENCES = 128
MAX_BODY = 256 * 1024
MAX_DIFF = 8 * 1024 * 1024
MAX_FILES = 10_000


# Pickling postings 6% faster than the dataclass default (benchmarks/tricks.py).
class Compact:
    """Pickles as (class, field values): `e2g match` workers send every LinkResult to
    the main process, and the pickling frozen slotted dataclasses get by default
    calls dataclasses.fields() per object."""

    __slots__ = ()

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        names: tuple[str, ...] = type(self).__slots__
        return type(self), tuple(getattr(self, name) for name in names)


class Kind(StrEnum):
    """What a message is, for matching and display."""

    PATCH = "patch"
    COVER = "cover"
    PULL = "pull"
    REPLY = "reply"
    OTHER = "other"


class DateSource(StrEnum):
    """Where a message's sanitised date came from (DESIGN.md, "Dates")."""

    HEADER = "header"
    RECEIVED = "received"
    FROM_LINE = "from-line"
    NEIGHBOURS = "neighbours"
    NONE = "none"


class FileStatus(StrEnum):
    MODIFIED = "modified"
    ADDED = "added"
    DELETED = "deleted"
    RENAMED = "renamed"
    COPIED = "copied"


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a raw message was read from.

    `source` names the archive (a path, or "-" for stdin); `position` is a stable key
    inside it (a byte offset, a Maildir file name, a public-inbox commit sha) used for
    resume checkpoints and for a raw-message pointer back into the archive.
    """

    source: str
    position: str
    list_hint: str | None = None  # e.g. the public-inbox / pipermail list name


@dataclass(frozen=True, slots=True)
class RawMessage:
    """One message's bytes as the archive held them (mboxrd `>From` already undone)."""

    data: bytes
    origin: Origin
    from_line: bytes | None = None  # the mbox "From " separator line, if any


@dataclass(frozen=True, slots=True)
class SubjectInfo:
    """A parsed subject: "[PATCH v3 2/7] mm: fix x" -> version 3, part 2/7, key."""

    raw: str
    title: str  # subject without Re:/Fwd: and leading [...] groups
    key: (
        str  # title whitespace-collapsed and case-folded: compare commit summaries here
    )
    version: int = 1
    part: int | None = None
    total: int | None = None
    is_patch_tag: bool = False  # a [PATCH ...] / [RFC ...] style prefix was present
    rfc: bool = False
    resend: bool = False
    is_reply: bool = False  # Re:/AW:/Fwd: prefix
    tags: tuple[str, ...] = ()  # tree tags: net-next, liburing, 4.19, ...


# How much a changed line weighs when two diffs are compared (the matcher's diff
# similarity), here because ingest stores each mail file's total weight. A line
# with fewer alphanumerics than MIN_ALNUM ("}", "", "*/", "});") says little about
# which patch it came from, so it weighs TRIVIAL_WEIGHT instead of 1.
MIN_ALNUM = 3
TRIVIAL_WEIGHT = 0.1


def is_informative(line: str) -> bool:
    """Whether a +/- line has enough letters or digits to tell patches apart."""
    alnum = 0
    for character in line:
        if character.isalnum():
            alnum += 1
            if alnum >= MIN_ALNUM:
                return True
    return False


def lines_weight(lines: Sequence[str]) -> tuple[int, float]:
    """(informative lines, total weight) of whitespace-collapsed +/- lines."""
    informative = sum(map(is_informative, lines))
    return informative, informative + TRIVIAL_WEIGHT * (len(lines) - informative)


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file's part of a diff."""

    path: str  # normalised: new path, or old path for a deletion
    old_path: str | None  # normalised; differs from path for renames/copies
    status: FileStatus = FileStatus.MODIFIED
    binary: bool = False
    added: int = 0
    removed: int = 0
    # lines_weight() of the path's collapsed added and removed lines, all its diffs
    # in the text together; set for mail (which the store keeps), None otherwise.
    weight: float | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Patch:
    """The diff a message (or commit) carries."""

    diff: str  # the diff text, from the first diff header to the end of the last hunk
    files: tuple[FileChange, ...]
    added: int
    removed: int
    patch_id: str | None  # equal to `git patch-id --stable` of the same diff
    # The files' paths, kept: the matcher asks for them once per candidate.
    paths: tuple[str, ...] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "paths", tuple(change.path for change in self.files))


@dataclass(frozen=True, slots=True)
class PullRequest:
    """A `git request-pull` message: the repository URL and branch or tag to pull."""

    url: str
    ref: str | None = None


@dataclass(frozen=True, slots=True)
class Address(Compact):
    name: str
    email: str


@dataclass(frozen=True, slots=True)
class Message:
    """A parsed mail: everything the store keeps about it besides the raw bytes."""

    message_id: str
    synthetic_id: bool
    subject: SubjectInfo
    author: Address  # DMARC-rewritten senders resolved
    patch_author: Address | None  # in-body From: of a patch, when present
    date: datetime | None  # sanitised, aware UTC; None only when nothing is known
    date_raw: str
    date_source: DateSource
    received_at: datetime | None  # the list server's Received: timestamp
    list_id: str | None  # from List-Id:, normalised ("io-uring.vger.kernel.org")
    in_reply_to: str | None
    references: tuple[str, ...]
    kind: Kind
    body: str  # the commentary (text before the diff), bounded
    patch: Patch | None = None
    pull: PullRequest | None = None
    trailers: tuple[Trailer, ...] = ()  # known trailers of the unquoted commentary
    to: tuple[str, ...] = ()  # addresses in To:/Cc:, bounded
    # Parts that could not be read within bounds ("attachment truncated", ...):
    # the mail is kept without them, and the ingest counts them.
    defects: tuple[str, ...] = ()

    @property
    def parent_id(self) -> str | None:
        """In-Reply-To, else the last References entry (DESIGN.md, "Threads")."""
        if self.in_reply_to:
            return self.in_reply_to
        return self.references[-1] if self.references else None


@dataclass(frozen=True, slots=True)
class Trailer(Compact):
    """`Key: value` at the foot of a commit message or in a mail (mail.trailers)."""

    key: str  # canonical case: "Link", "Message-Id", "Reviewed-by"
    value: str


@dataclass(frozen=True, slots=True)
class Commit:
    """A non-merge commit as the matcher sees it."""

    sha: str
    subject: str
    subject_key: str
    author: Address  # mailmap applied
    author_date: datetime
    commit_date: datetime
    patch: Patch
    trailers: tuple[Trailer, ...] = ()
    body: str = ""


@dataclass(frozen=True, slots=True)
class Evidence(Compact):
    """One reason behind a score, for humans and for --json."""

    signal: str  # "trailer", "patch-id", "author-date", "subject", "author", "files", "diff", "date"
    detail: str
    weight: float = 0.0


@dataclass(frozen=True, slots=True)
class Link:
    """A commit matched to one message that carried its patch."""

    commit: str
    message_id: str
    method: str
    score: float
    evidence: tuple[Evidence, ...] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class Malformed:
    """A message that could not be parsed: counted and reported, never fatal."""

    reason: str  # short and stable, e.g. "no headers", "not a mail"
    origin: Origin
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Posting(Compact):
    """One message that carried a commit's patch (a version, resend, cross-post or cover)."""

    message_id: str
    subject: str
    date: datetime | None
    author: Address
    lists: tuple[str, ...]
    version: int
    kind: str  # "patch", "cover", ...
    applied: bool  # the version that was applied
    method: (
        str  # how it was found: "trailer", "patch-id", ..., "series" (cover), "version"
    )
    score: float
    url: str | None  # the list archive's page for it, where one is known
    thread_root: str
    replies: int = 0
    participants: tuple[str, ...] = ()
    reviewers: tuple[
        str, ...
    ] = ()  # "Reviewed-by: Name <addr>" trailers given in replies
    evidence: tuple[Evidence, ...] = ()
    # Where `date` came from; when not the Date: header, what that header said.
    date_source: DateSource = DateSource.HEADER
    date_raw: str = ""

    @property
    def date_corrected(self) -> bool:
        return self.date_source is not DateSource.HEADER


@dataclass(frozen=True, slots=True)
class Rejected(Compact):
    """A candidate the matcher looked at and turned down, with why."""

    message_id: str
    subject: str
    score: float
    reason: str


@dataclass(frozen=True, slots=True)
class CommitInfo(Compact):
    """What is shown of a commit next to its postings."""

    sha: str
    subject: str
    author: Address
    author_date: datetime
    commit_date: datetime
    files: tuple[str, ...]


def commit_info(commit: Commit) -> CommitInfo:
    """What is shown of `commit` next to its postings."""
    return CommitInfo(
        sha=commit.sha,
        subject=commit.subject,
        author=commit.author,
        author_date=commit.author_date,
        commit_date=commit.commit_date,
        files=commit.patch.paths,
    )


@dataclass(frozen=True, slots=True)
class LinkResult(Compact):
    """The answer to `e2g link REV`: every posting of the commit, or an explicit no match."""

    commit: CommitInfo
    postings: tuple[Posting, ...]
    rejected: tuple[Rejected, ...] = ()
    note: str = ""  # e.g. why no match was possible: the commit is outside the archive

    @property
    def status(self) -> str:
        return "matched" if self.postings else "no-match"


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """A message as the store holds it: the parsed Message's facts, flattened, with
    where it was seen (`lists`) and its files; the diff and raw bytes are read apart."""

    seq: int
    message_id: str
    synthetic: bool
    subject: str
    title: str
    subject_key: str
    version: int
    part: int | None
    total: int | None
    rfc: bool
    resend: bool
    author_name: str
    author_email: str
    patch_author_name: str | None
    patch_author_email: str | None
    date: datetime | None
    date_raw: str
    date_source: DateSource
    received_at: datetime | None
    parent_id: str | None
    thread_root: str
    kind: Kind
    pull_url: str | None
    pull_ref: str | None
    patch_id: str | None
    added: int
    removed: int
    series_id: int | None
    list_id: str | None
    lists: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    # Per file of `files`: its (added, removed) line counts as the diff gives them.
    file_lines: tuple[tuple[int, int], ...] = ()
    # Per file of `files`: its line weight (model.lines_weight); None when unknown.
    file_weights: tuple[float | None, ...] = ()

    @property
    def date_corrected(self) -> bool:
        return self.date_source is not DateSource.HEADER

    @property
    def credited_name(self) -> str:
        """The patch's author: its in-body From: when it has one, else the sender."""
        return self.patch_author_name or self.author_name

    @property
    def credited_email(self) -> str:
        return self.patch_author_email or self.author_email
