"""The store as a whole: its meta, dates, counts, the index journal's changes,
and every message in order (for `e2g reindex`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime

from e2g.index.db import file_pages, read_meta
from e2g.index.store.base import StoreBase, StoreCounts
from e2g.model.stored import StoredMessage


class BulkReads(StoreBase):
    def meta(self, key: str) -> str | None:
        return read_meta(self._connection, key)

    def file_pages(self) -> tuple[int, int]:
        """(bytes of the store's file, bytes of them free for later writes)."""
        return file_pages(self._connection)

    def date_range(self) -> tuple[datetime, datetime] | None:
        """The oldest and newest message dates in the store (None when empty)."""
        low, high = self._connection.execute(
            "SELECT MIN(date), MAX(date) FROM messages WHERE date IS NOT NULL"
        ).fetchone()
        if low is None:
            return None
        return datetime.fromtimestamp(low, UTC), datetime.fromtimestamp(high, UTC)

    def list_dates(self, lists: Sequence[str]) -> dict[str, tuple[datetime, datetime]]:
        """The first and last message dates of each of `lists` that holds a dated
        message: walked from either end of the date index to the first message seen
        on the list (a list with much mail answers at once; the GROUP BY of every
        sighting took 0.4 s on git's history scale)."""
        found: dict[str, tuple[datetime, datetime]] = {}
        for name in lists:
            ends = [
                self._connection.execute(
                    "SELECT m.date FROM messages m WHERE m.date IS NOT NULL AND "
                    "EXISTS (SELECT 1 FROM sightings s WHERE s.seq = m.seq AND "
                    f"s.list = ?) ORDER BY m.date {order} LIMIT 1",
                    (name,),
                ).fetchone()
                for order in ("ASC", "DESC")
            ]
            if ends[0] is not None and ends[1] is not None:
                found[name] = (
                    datetime.fromtimestamp(ends[0][0], UTC),
                    datetime.fromtimestamp(ends[1][0], UTC),
                )
        return found

    def max_seq(self) -> int:
        return int(
            self._connection.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM messages"
            ).fetchone()[0]
        )

    def max_change(self) -> int:
        """The newest revision of the index journal (0 when it was never written)."""
        row = self._connection.execute(
            "SELECT seq FROM sqlite_sequence WHERE name = 'index_journal'"
        ).fetchone()
        return 0 if row is None else int(row[0])

    def changes_after(self, rev: int, *, limit: int = 2000) -> list[tuple[int, int]]:
        """(rev, seq) of the index journal after `rev`, oldest first."""
        return [
            (int(found), int(seq))
            for found, seq in self._connection.execute(
                "SELECT rev, seq FROM index_journal WHERE rev > ? ORDER BY rev LIMIT ?",
                (rev, limit),
            )
        ]

    def index_lag(self, *, last_seq: int, last_change: int) -> int:
        """How many changes an index that holds up to (`last_seq`, `last_change`) lacks:
        messages with a higher seq, and journal entries after `last_change`."""
        row = self._connection.execute(
            "SELECT (SELECT COUNT(*) FROM messages WHERE seq > ?)"
            " + (SELECT COUNT(*) FROM index_journal WHERE rev > ?)",
            (last_seq, last_change),
        ).fetchone()
        return int(row[0])

    def iter_messages(
        self, *, after_seq: int = 0, batch: int = 2000
    ) -> Iterator[StoredMessage]:
        """All messages with seq > after_seq, in seq order, read in batches."""
        last = after_seq
        while True:
            chunk = self._select(
                "seq > ?", (last,), suffix=f"ORDER BY seq LIMIT {int(batch)}"
            )
            if not chunk:
                return
            yield from chunk
            last = chunk[-1].seq

    def counts(self) -> StoreCounts:
        one = self._connection.execute
        kinds = dict(
            one("SELECT kind, COUNT(*) FROM messages GROUP BY kind").fetchall()
        )
        cross = one(
            "SELECT COUNT(*) FROM (SELECT seq FROM sightings GROUP BY seq HAVING COUNT(DISTINCT list) > 1)"
        ).fetchone()[0]
        return StoreCounts(
            messages=sum(int(value) for value in kinds.values()),
            patches=int(kinds.get("patch", 0)),
            covers=int(kinds.get("cover", 0)),
            pulls=int(kinds.get("pull", 0)),
            replies=int(kinds.get("reply", 0)),
            other=int(kinds.get("other", 0)),
            cross_posts=int(cross),
            malformed=int(one("SELECT COUNT(*) FROM malformed").fetchone()[0]),
            dates_sanitised=int(
                one(
                    "SELECT COUNT(*) FROM messages WHERE date_source != 'header'"
                ).fetchone()[0]
            ),
            lists=int(one("SELECT COUNT(DISTINCT list) FROM sightings").fetchone()[0]),
            threads=int(
                one("SELECT COUNT(DISTINCT thread_root) FROM messages").fetchone()[0]
            ),
            series=int(one("SELECT COUNT(*) FROM series").fetchone()[0]),
        )

    def malformed_reasons(self) -> dict[str, int]:
        return {
            str(reason): int(count)
            for reason, count in self._connection.execute(
                "SELECT reason, COUNT(*) FROM malformed GROUP BY reason ORDER BY 2 DESC"
            )
        }

    def list_names(self) -> list[str]:
        return [
            str(name)
            for (name,) in self._connection.execute(
                "SELECT DISTINCT list FROM sightings ORDER BY 1"
            )
        ]
