"""Grouping patches and cover letters into series, and series into version lineages.

Runs inside the writer's transaction, one message at a time, in arrival order; mail
arrives out of order, so every rule also works backwards (a cover letter that arrives
after its patches adopts the series they started).

Rules, in order, for a patch `k/N` version `v` from sender `S`:
1. by thread: the nearest ancestor (In-Reply-To, then References newest first) that
   belongs to a series of S with version v and total N whose slot k is free (an
   unversioned patch replying straight to a cover takes the cover's version);
2. by markers: a series of S, version v, total N, started within SERIES_WINDOW, slot k
   free (threads broken by the mailer or by --no-thread);
3. otherwise a new series.
A patch without `k/N` is a series of its own. A cover letter (`0/N` or an unnumbered
PATCH-tagged root) adopts a coverless series of S/v whose patches reply to it, or starts
one. A new series joins the lineage of S's older series with the same subject key and a
lower version (v1 -> v2 -> v3 across threads); mail arrives out of order, so it also
joins the lineage of such a series with a higher version (v2 read before v1: the
sample's frob-devel.mbox carries v2, frob-net.mbox.gz v1), and when both exist in two
lineages, the later one is merged into the earlier.
"""

from __future__ import annotations

import sqlite3

from e2g.model import Kind
from e2g.model.mail import Message

SERIES_WINDOW = 12 * 3600


class SeriesAssigner:
    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection

    def assign(self, seq: int, message: Message) -> None:
        if message.kind is Kind.COVER:
            series = self._adopting_series(message) or self._new_series(
                seq, message, cover=True
            )
            self._db.execute(
                "UPDATE series SET cover_seq = ? WHERE id = ?", (seq, series)
            )
        elif message.kind is Kind.PATCH:
            series = None
            if message.subject.part is not None:
                series = self._series_by_thread(message) or self._series_by_markers(
                    message
                )
            if series is None:
                series = self._new_series(seq, message, cover=False)
        else:
            return
        self._db.execute(
            "UPDATE messages SET series_id = ? WHERE seq = ?", (series, seq)
        )

    def _fits(self, series: int, message: Message) -> bool:
        row = self._db.execute(
            "SELECT author_email, version, total FROM series WHERE id = ?", (series,)
        ).fetchone()
        if row is None:
            return False
        email, version, total = row
        subject = message.subject
        if email != message.author.email:
            return False
        if version != subject.version and not self._unversioned_reply_to_cover(
            series, message
        ):
            return False
        if total is not None and subject.total is not None and total != subject.total:
            return False
        taken = self._db.execute(
            "SELECT 1 FROM messages WHERE series_id = ? AND part = ? AND kind = 'patch' LIMIT 1",
            (series, subject.part),
        ).fetchone()
        return taken is None

    def _unversioned_reply_to_cover(self, series: int, message: Message) -> bool:
        """`[PATCH 1/4]` threaded under a `[PATCH v3 0/4]` cover: the mailer dropped
        the version from the patches, not a different series."""
        if message.subject.version != 1 or not message.parent_id:
            return False
        row = self._db.execute(
            "SELECT 1 FROM series s JOIN messages c ON c.seq = s.cover_seq "
            "WHERE s.id = ? AND c.message_id = ?",
            (series, message.parent_id),
        ).fetchone()
        return row is not None

    def _series_by_thread(self, message: Message) -> int | None:
        ancestors = [message.parent_id, *reversed(message.references)]
        seen: set[str] = set()
        for ancestor in ancestors:
            if not ancestor or ancestor in seen or ancestor == message.message_id:
                continue
            seen.add(ancestor)
            row = self._db.execute(
                "SELECT series_id FROM messages WHERE message_id = ? AND series_id IS NOT NULL",
                (ancestor,),
            ).fetchone()
            if row is not None and self._fits(int(row[0]), message):
                return int(row[0])
        return None

    def _series_by_markers(self, message: Message) -> int | None:
        if message.date is None:
            return None
        when = int(message.date.timestamp())
        subject = message.subject
        rows = self._db.execute(
            "SELECT id FROM series WHERE author_email = ? AND version = ? AND total IS ? "
            "AND first_date BETWEEN ? AND ? ORDER BY abs(first_date - ?) LIMIT 8",
            (
                message.author.email,
                subject.version,
                subject.total,
                when - SERIES_WINDOW,
                when + SERIES_WINDOW,
                when,
            ),
        ).fetchall()
        for (series,) in rows:
            if self._fits(int(series), message) and self._same_thread_or_unthreaded(
                int(series), message
            ):
                return int(series)
        return None

    def _same_thread_or_unthreaded(self, series: int, message: Message) -> bool:
        """Markers may only join mail that is not visibly threaded elsewhere."""
        if not message.references and not message.in_reply_to:
            return True
        row = self._db.execute(
            "SELECT 1 FROM messages m, messages me WHERE m.series_id = ? AND me.message_id = ? "
            "AND m.thread_root = me.thread_root LIMIT 1",
            (series, message.message_id),
        ).fetchone()
        return row is not None

    def _adopting_series(self, message: Message) -> int | None:
        row = self._db.execute(
            "SELECT s.id FROM messages m JOIN series s ON s.id = m.series_id "
            "WHERE (m.parent_id = ? OR m.thread_root = ?) AND s.cover_seq IS NULL "
            "AND s.author_email = ? AND s.version = ? AND m.part IS NOT NULL LIMIT 1",
            (
                message.message_id,
                message.message_id,
                message.author.email,
                message.subject.version,
            ),
        ).fetchone()
        return None if row is None else int(row[0])

    def _new_series(self, seq: int, message: Message, *, cover: bool) -> int:
        subject = message.subject
        first_date = None if message.date is None else int(message.date.timestamp())
        older = self._lineage_of(message, "version < ? ORDER BY version DESC")
        newer = self._lineage_of(message, "version > ? ORDER BY version")
        if older is not None and newer is not None and older != newer:
            self._db.execute(
                "UPDATE series SET lineage = ? WHERE id = ? OR lineage = ?",
                (older, newer, newer),
            )
        root = older if older is not None else newer
        cursor = self._db.execute(
            "INSERT INTO series(cover_seq, author_email, version, total, subject_key, "
            "first_date, lineage) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                seq if cover else None,
                message.author.email,
                subject.version,
                subject.total,
                subject.key,
                first_date,
                root,
            ),
        )
        assert cursor.lastrowid is not None
        return int(cursor.lastrowid)

    def _lineage_of(self, message: Message, versions: str) -> int | None:
        """The lineage root of S's nearest series with this subject key whose version
        `versions` selects (an SQL condition on `version` and its order)."""
        row = self._db.execute(
            "SELECT COALESCE(lineage, id) FROM series WHERE author_email = ? "
            f"AND subject_key = ? AND {versions} LIMIT 1",  # noqa: S608 - our own SQL
            (message.author.email, message.subject.key, message.subject.version),
        ).fetchone()
        return None if row is None else int(row[0])
