"""What the archive readers and the mail parsers produce: a raw message and where it
was read, and the parsed Message with its subject, diff (e2g.model.patch) and pull
request."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from e2g.model import Address, DateSource, Kind, SubjectInfo, Trailer
from e2g.model.patch import Patch


class Origin(NamedTuple):
    """Where a raw message was read from.

    `source` names the archive (a path, or "-" for stdin); `position` is a stable key
    inside it (a byte offset, a Maildir file name, a public-inbox commit sha) used for
    resume checkpoints and for a raw-message pointer back into the archive.
    """

    source: str
    position: str
    list_hint: str | None = None  # e.g. the public-inbox / pipermail list name


class RawMessage(NamedTuple):
    """One message's bytes as the archive held them (mboxrd `>From` already undone)."""

    data: bytes
    origin: Origin
    from_line: bytes | None = None  # the mbox "From " separator line, if any


class PullRequest(NamedTuple):
    """A `git request-pull` message: the repository URL and branch or tag to pull."""

    url: str
    ref: str | None = None


class Message(NamedTuple):
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
    # A reply that quotes a whole patch: that patch's patch-id (e2g.mail.quoted).
    quoted_patch_id: str | None = None
    # The stable team's X-stable: and X-stable-base: headers (e2g.mail.backport).
    stable: str | None = None
    stable_base: str | None = None

    @property
    def parent_id(self) -> str | None:
        """In-Reply-To, else the last References entry (DESIGN.md, "Threads")."""
        if self.in_reply_to:
            return self.in_reply_to
        return self.references[-1] if self.references else None


class Malformed(NamedTuple):
    """A message that could not be parsed: counted and reported, never fatal."""

    reason: str  # short and stable, e.g. "no headers", "not a mail"
    origin: Origin
    detail: str = ""
