"""The matcher's lookups and single messages: by Message-ID, seq, subject key,
patch-id, thread and series; raw mail, bodies, diffs and trailers."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from e2g.index.store.base import (
    MESSAGE_COLUMNS,
    StoreBase,
    SubjectLookup,
    _message,
    _subject_part,
    in_list,
    stored_diff,
    stored_diff_bytes,
)
from e2g.mail.backport import names_release
from e2g.model import Trailer
from e2g.model.stored import StoredMessage


class MessageReads(StoreBase):
    def exact_key_seqs(
        self, *, patch_id: str, author_stamp: int, subject: SubjectLookup
    ) -> tuple[list[int], list[int]]:
        """Patches with this patch-id or this author timestamp (patch-id first, at most
        100), with the replies that quote a patch of this patch-id, and the patches
        `subject` finds, in one query: most commits find little or nothing, so the
        number of queries is the cost. SQLite answers the OR of two indexed columns
        from both indexes."""
        found, same_subject = self._seq_parts(
            [
                (
                    "(patch_id = ? AND kind IN ('patch', 'reply')) "
                    "OR (date = ? AND kind = 'patch')",
                    (patch_id, author_stamp, patch_id),
                    "ORDER BY patch_id IS ? DESC, seq LIMIT 100",
                ),
                _subject_part(subject),
            ]
        )
        return found, same_subject

    def subject_patches(self, subject: SubjectLookup) -> list[StoredMessage]:
        """Patches whose subject key is `subject.key`, nearest `subject.near` first."""
        where, parameters, suffix = _subject_part(subject)
        return self._select(where, parameters, suffix=suffix)

    def family_seqs(
        self, *, subject_key: str, patch_id: str | None, low: int, high: int
    ) -> tuple[list[int], list[int]]:
        """Patches dated in [low, high] with this subject key (newest first, at most
        200), and with this patch-id (at most 100)."""
        same_subject, same_patch = self._seq_parts(
            [
                (
                    "subject_key = ? AND kind = 'patch' AND date BETWEEN ? AND ?",
                    (subject_key, low, high),
                    "ORDER BY date DESC LIMIT 200",
                ),
                (
                    "patch_id = ? AND kind = 'patch' AND date BETWEEN ? AND ?",
                    (patch_id or "", low, high),
                    "LIMIT 100",
                ),
            ]
        )
        return same_subject, same_patch

    def patches_with_patch_id(self, patch_id: str) -> list[StoredMessage]:
        """Every patch whose `git patch-id --stable` is `patch_id`."""
        return self._select("patch_id = ? AND kind = 'patch'", (patch_id,))

    def patches_with_subject(self, subject_key: str) -> list[StoredMessage]:
        """Every patch whose subject key is `subject_key`."""
        return self._select("subject_key = ? AND kind = 'patch'", (subject_key,))

    def thread_patches(self, root: str, *, limit: int = 200) -> list[StoredMessage]:
        """The patches of the thread rooted at `root`, in store order."""
        return self._select(
            "thread_root = ? AND kind = 'patch'", (root,), suffix=f"LIMIT {int(limit)}"
        )

    def by_seqs(self, seqs: Sequence[int]) -> list[StoredMessage]:
        """The messages with these seqs, in seq order (one cached statement)."""
        if not seqs:
            return []
        return self._select(
            "seq IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(set(seqs))),),
            suffix="ORDER BY seq",
        )

    def patches_touching(self, path: str) -> list[tuple[int, int, str, str | None]]:
        """(date, seq, author_email, patch_author_email) of every dated patch that
        touches `path`, oldest first: the rows the matcher's file map windows."""
        return [
            (int(date), int(seq), str(email), patch_email)
            for date, seq, email, patch_email in self._connection.execute(
                "SELECT m.date, f.seq, m.author_email, m.patch_author_email "
                "FROM files f JOIN messages m ON m.seq = f.seq WHERE f.path = ? "
                "AND m.kind = 'patch' AND m.date IS NOT NULL ORDER BY m.date, f.seq",
                (path,),
            )
        ]

    def message(self, message_id: str) -> StoredMessage | None:
        found = self._select("message_id = ?", (message_id,))
        return found[0] if found else None

    def messages(
        self, message_ids: Iterable[str], *, places: bool = True
    ) -> list[StoredMessage]:
        """The messages with these Message-IDs; without `places`, their lists and
        files are left empty, unread (half the cost: `e2g audit` reads neither)."""
        ids = list(dict.fromkeys(message_ids))
        found: list[StoredMessage] = []
        for start in range(0, len(ids), 500):
            marks, chunk = in_list(ids[start : start + 500])
            if places:
                found.extend(self._select(f"message_id IN ({marks})", chunk))
                continue
            found += [
                _message(row, (), ())
                for row in self._connection.execute(
                    f"SELECT {MESSAGE_COLUMNS} FROM messages "
                    f"WHERE message_id IN ({marks})",
                    chunk,
                )
            ]
        return found

    def rootless_replies(
        self, subject_key: str, *, low: int, high: int, limit: int = 50
    ) -> list[StoredMessage]:
        """Replies dated in [low, high] whose subject key is `subject_key` and whose
        thread's first mail is not stored (a ghost root), oldest first."""
        return self._select(
            "subject_key = ? AND subject_key != '' AND kind = 'reply' "
            "AND date BETWEEN ? AND ? AND NOT EXISTS "
            "(SELECT 1 FROM messages AS root WHERE root.message_id = messages.thread_root)",
            (subject_key, low, high),
            suffix=f"ORDER BY date, seq LIMIT {int(limit)}",
        )

    def replies_after(self, seq: int, *, limit: int) -> list[int]:
        """Seqs of up to `limit` replies above `seq` with no patch-id, in order."""
        return [
            int(found)
            for (found,) in self._connection.execute(
                "SELECT seq FROM messages WHERE kind = 'reply' AND patch_id IS NULL "
                "AND seq > ? ORDER BY seq LIMIT ?",
                (seq, limit),
            )
        ]

    def subjects_after(
        self, seq: int, *, limit: int
    ) -> list[tuple[int, str, str | None]]:
        """(seq, subject, X-stable:) of up to `limit` messages above `seq`, in order:
        what store_writer.stored_process classifies."""
        return [
            (int(found), str(subject), None if stable is None else str(stable))
            for found, subject, stable in self._connection.execute(
                "SELECT seq, subject, stable FROM messages WHERE seq > ? "
                "ORDER BY seq LIMIT ?",
                (seq, limit),
            )
        ]

    def raw(self, seq: int) -> bytes | None:
        """The message's bytes as the archive held them (None: not stored)."""
        part = self._raw_part(seq)
        if part is not None:
            stored, diff_at, _ = part
            if diff_at is None:
                return stored
            # The diff was cut out where it occurred verbatim; its block holds it.
            diff = (
                stored_diff_bytes(self._connection, self.codec, seq, self._diff_blocks)
                or b""
            )
            return stored[:diff_at] + diff + stored[diff_at:]
        row = self._connection.execute(  # stored before schema 5: one by one
            "SELECT dict_id, data FROM raw WHERE seq = ?", (seq,)
        ).fetchone()
        return None if row is None else self.codec.decompress(bytes(row[1]), row[0])

    def _raw_part(
        self, seq: int
    ) -> tuple[bytes, int | None, tuple[int, int] | None] | None:
        """A message's bytes as its block holds them (schema 5 and later), where its
        diff was cut out, and where its body lies; None before schema 5."""
        row = self._connection.execute(
            "SELECT block, start, size, diff_at, body_at, body_size FROM raw_parts "
            "WHERE seq = ?",
            (seq,),
        ).fetchone()
        if row is None:
            return None
        block, start, size, diff_at, body_at, body_size = row
        data = self._raw_blocks.read(self._connection, self.codec, int(block))
        if data is None:
            return None
        stored = data[start : start + size]
        return stored, diff_at, None if body_at is None else (body_at, body_size)

    def process_body(self, seq: int, subject: str) -> str | None:
        """What mail.backport.process_kind needs of message `seq`'s body: the body
        where `subject` tags a bare release (one mail in a hundred), else None,
        unread."""
        return self.body(seq) if names_release(subject) else None

    def body(self, seq: int) -> str:
        """The message's commentary (the text before its diff), "" when it has none."""
        part = self._raw_part(seq)
        if part is not None and part[2] is not None:  # verbatim in the raw bytes
            # The writer cuts a diff only after the body, so the body's offsets hold
            # in the stored bytes: no diff to read back.
            body_at, body_size = part[2]
            return part[0][body_at : body_at + body_size].decode("utf-8")
        row = self._connection.execute(
            "SELECT dict_id, data FROM bodies WHERE seq = ?", (seq,)
        ).fetchone()
        if row is not None:
            return self.codec.decompress(bytes(row[1]), row[0]).decode("utf-8")
        row = self._connection.execute(  # stored before schema 6: in the row
            "SELECT body FROM messages WHERE seq = ?", (seq,)
        ).fetchone()
        return "" if row is None else str(row[0])

    def diff(self, seq: int) -> str | None:
        return stored_diff(self._connection, self.codec, seq, self._diff_blocks)

    def trailers(self, seq: int) -> list[Trailer]:
        """The message's known trailers, in order: found in its stored body as ingest
        found them (the body is the whole commentary they were read from), so the
        store keeps rows only for the reviews the matcher asks for (`reviews_of`)."""
        from e2g.mail.trailers import find_in_mail  # here: readers' imports stay cheap

        return list(find_in_mail(self.body(seq)))

    def thread(self, root: str, *, limit: int = 5000) -> list[StoredMessage]:
        """Every stored message of the thread rooted at `root`, oldest first."""
        return self._select(
            "thread_root = ?", (root,), suffix=f"ORDER BY date, seq LIMIT {int(limit)}"
        )

    def thread_links(
        self, root: str, *, limit: int = 5000
    ) -> list[tuple[int, str, str | None, str, str]]:
        """(seq, message_id, parent_id, author_name, author_email) of a thread: the light
        form of `thread` for walking replies without loading bodies."""
        return [
            (int(seq), str(mid), parent, str(name), str(email))
            for seq, mid, parent, name, email in self._connection.execute(
                "SELECT seq, message_id, parent_id, author_name, author_email FROM messages "
                "WHERE thread_root = ? ORDER BY date, seq LIMIT ?",
                (root, limit),
            )
        ]

    def reviews_of(self, seqs: Sequence[int]) -> list[tuple[int, str, str]]:
        """(seq, key, value) of the review trailers (Reviewed-by, Acked-by, ...) of
        the given messages, in order: the trailers the store keeps as rows."""
        from e2g.mail.trailers import REVIEW_KEYS  # here: readers' imports stay cheap

        found: list[tuple[int, str, str]] = []
        key_marks, key_values = in_list(REVIEW_KEYS)
        for start in range(0, len(seqs), 500):
            marks, chunk = in_list(seqs[start : start + 500])
            found += [
                (int(seq), str(key), str(value))
                for seq, key, value in self._connection.execute(
                    f"SELECT seq, key, value FROM trailers WHERE seq IN ({marks}) "
                    f"AND key IN ({key_marks}) ORDER BY rowid",
                    (*chunk, *key_values),
                )
            ]
        return found

    def cover_seqs(self, series_ids: Sequence[int]) -> list[int]:
        """The seqs of these series' cover letters, in seq order."""
        if not series_ids:
            return []
        marks, values = in_list(series_ids)
        return sorted(
            int(seq)
            for (seq,) in self._connection.execute(
                f"SELECT DISTINCT cover_seq FROM series WHERE id IN ({marks}) "
                "AND cover_seq IS NOT NULL",
                values,
            )
        )

    def series_members(self, series_id: int) -> list[StoredMessage]:
        return self._select("series_id = ?", (series_id,), suffix="ORDER BY part, seq")

    def lineage(self, series_id: int) -> list[int]:
        """Series ids of every version of this series (v1, v2, ...), oldest version first."""
        row = self._connection.execute(
            "SELECT COALESCE(lineage, id) FROM series WHERE id = ?", (series_id,)
        ).fetchone()
        if row is None:
            return []
        return [
            int(found)
            for (found,) in self._connection.execute(
                "SELECT id FROM series WHERE id = ? OR lineage = ? ORDER BY version, id",
                (row[0], row[0]),
            )
        ]
