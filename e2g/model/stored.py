"""A message as the store gives it back: what every reader of the store sees."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from e2g.model import DateSource, Kind


class StoredMessage(NamedTuple):
    """A message as the store holds it: the parsed Message's facts, flattened, with
    where it was seen (`lists`) and its files; the diff and raw bytes are read apart."""

    seq: int
    message_id: str
    synthetic: bool
    subject: str
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
    # The X-stable: and X-stable-base: headers (e2g.mail.backport), when it had them.
    stable: str | None = None
    stable_base: str | None = None
    # Its step of the backport process as ingest found it (messages.process, with
    # its body: e2g.mail.backport.process_kind); None: none, or not classified yet.
    process: str | None = None

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
