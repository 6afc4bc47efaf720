"""A backport's own mails: the steps of the stable process that carried it
(AUTOSEL, a stable review, FAILED, queued; e2g.mail.backport's rules), found by
its upstream's title through the store's index of process mails, or classified on
read while a migration's fill is pending.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from e2g.index.store import (
    ProcessRow,
    Store,
    SubjectRow,
)
from e2g.mail.backport import (
    NOTICE_STARTS,
    notice_keys,
    notice_prefixes,
    process_kind,
    process_version,
)
from e2g.mail.subject import subject_key

# A backport's own mails: at most this many of the same title are looked at.
PROCESS_MAILS = 100


def process_mails(
    store: Store, subjects: Sequence[str], *, version: str | None
) -> dict[str, list[tuple[str, str, str]]]:
    """By subject key of `subjects`: (message_id, kind, detail) of the backport
    process's mails of the patch so titled, for the stable series `version` when
    one is known (then one query per 500 titles; else two ranges per title).

    A form of notice no mail of the archive has (the stable list's own, most
    archives have neither) is not looked for: 2,000 backports' titles are 2,000
    keys to look up, not 6,000 (4 ms of their match)."""
    return process_mails_by_key(
        store, {subject_key(subject) for subject in subjects}, version=version
    )


def process_mails_by_key(
    store: Store, titles: Collection[str], *, version: str | None
) -> dict[str, list[tuple[str, str, str]]]:
    """process_mails() of the subject keys `titles`."""
    keys = sorted(set(titles))
    title_of = {key: key for key in keys}
    forms = [store.has_subject_key_starting(start) for start in NOTICE_STARTS]
    mails = _ProcessMails(store)
    # (the title's key, the mail's row)
    rows: list[tuple[str, ProcessRow]] = []
    if version is not None:
        title_of |= {
            notice: key
            for key in keys
            for notice, held in zip(notice_keys(key, version), forms, strict=True)
            if held
        }
        rows = [(title_of[row.key], row) for row in mails.by_key(sorted(title_of))]
    else:
        rows = [(row.key, row) for row in mails.by_key(keys)]
        for key in keys:
            for prefix, held in zip(notice_prefixes(key), forms, strict=True):
                if held:
                    rows += [(key, row) for row in mails.by_key_prefix(prefix)]
    found: dict[str, list[tuple[str, str, str]]] = {}
    for key, (_, message_id, subject, kind, base) in rows:
        series = process_version(subject, base=base)
        if version and series and series != version:
            continue
        detail = f"{kind} mail" + (f" for {series}" if series else "")
        found.setdefault(key, []).append((message_id, kind, detail))
    return found


class _ProcessMails:
    """The process mails of subject keys, as the store classified them at ingest
    (messages.process); on a store whose older mail is not classified yet (the
    backfill of migration 18 pending) every mail of the keys is read and classified
    here, as before the column was: an answer is never short for it."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._classified = store.process_classified()

    def by_key(self, keys: Sequence[str]) -> list[ProcessRow]:
        if self._classified:
            return self._store.process_by_key(keys)
        return _classify(self._store, self._store.subjects_by_key(keys))

    def by_key_prefix(self, prefix: str) -> list[ProcessRow]:
        if self._classified:
            return self._store.process_by_key_prefix(prefix, limit=PROCESS_MAILS)
        return _classify(
            self._store, self._store.subjects_by_key_prefix(prefix, limit=PROCESS_MAILS)
        )


def _classify(store: Store, rows: Sequence[SubjectRow]) -> list[ProcessRow]:
    """The rows of `rows` that are mails of the backport process, with their step
    (a bare release's patch by its body, as ingest classifies it)."""
    return [
        ProcessRow(row.key, row.message_id, row.subject, str(kind), row.stable_base)
        for row in rows
        if (
            kind := process_kind(
                row.subject,
                stable=row.stable,
                body=store.process_body(row.seq, row.subject),
            )
        )
        is not None
    ]
