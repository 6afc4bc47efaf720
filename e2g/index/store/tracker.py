"""The named queries Patchwork's read-only API (e2g.api.patchwork) asks: the ids it
shows (a project per list, a person per address, a series per stored series) and the
pages of series, cover letters and people.

Every id is one the store already keeps, so it stays the same from run to run: a
list's project is the seq of the first message seen on it, a person is the seq of
the first patch or cover letter that credits their address, a series is its row
in `series` (assigned in arrival order, as seqs are), a patch or cover letter its
own seq. Reads only, as every query of the store.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import NamedTuple

from e2g.index.store.base import in_list
from e2g.index.store.queue import QueueFilter, QueueReads, like_pattern

# A patch's or cover letter's credited address: its in-body From: else its sender.
_CREDITED = "COALESCE(patch_author_email, author_email)"


class SeriesRow(NamedTuple):
    id: int
    version: int
    total: int | None
    first_date: int | None
    cover_seq: int | None
    parts: tuple[int, ...]  # its patches' seqs, by part


class CoverFilter(NamedTuple):
    lists: tuple[str, ...] = ()
    author_email: str = ""
    since: int | None = None
    until: int | None = None
    message_id: str = ""
    subject: str = ""
    series_ids: tuple[int, ...] = ()
    newest_first: bool = False
    limit: int = 30
    offset: int = 0


class Person(NamedTuple):
    id: int
    name: str
    email: str


class TrackerReads(QueueReads):
    def list_firsts(self) -> dict[str, int]:
        """Each list and the seq of the first message seen on it."""
        return {
            str(name): int(seq)
            for name, seq in self._connection.execute(
                "SELECT list, MIN(seq) FROM sightings GROUP BY list ORDER BY 2"
            )
        }

    def series_of(self, seqs: Sequence[int]) -> dict[int, int]:
        """The series of each of these messages that has one."""
        found: dict[int, int] = {}
        for start in range(0, len(seqs), 500):
            marks, chunk = in_list(seqs[start : start + 500])
            for seq, series in self._connection.execute(
                f"SELECT seq, series_id FROM messages WHERE seq IN ({marks}) "  # noqa: S608 - placeholders
                "AND series_id IS NOT NULL",
                chunk,
            ):
                found[int(seq)] = int(series)
        return found

    def series_rows(self, ids: Sequence[int]) -> dict[int, SeriesRow]:
        rows: dict[int, SeriesRow] = {}
        parts: dict[int, list[int]] = {}
        for start in range(0, len(ids), 500):
            marks, chunk = in_list(ids[start : start + 500])
            for series, seq in self._connection.execute(
                f"SELECT series_id, seq FROM messages WHERE series_id IN ({marks}) "  # noqa: S608 - placeholders
                "AND kind = 'patch' ORDER BY part, seq",
                chunk,
            ):
                parts.setdefault(int(series), []).append(int(seq))
            for found, version, total, first, cover in self._connection.execute(
                "SELECT id, version, total, first_date, cover_seq FROM series "  # noqa: S608 - placeholders
                f"WHERE id IN ({marks})",
                chunk,
            ):
                rows[int(found)] = SeriesRow(
                    int(found),
                    int(version),
                    total,
                    first,
                    cover,
                    tuple(parts.get(int(found), ())),
                )
        return rows

    def series_page(
        self, wanted: QueueFilter, *, newest_first: bool = False
    ) -> tuple[list[int], int]:
        """The series holding a queue row `wanted` keeps, by id, a page of them
        (`wanted.limit` from `wanted.offset`), and how many there are."""
        where, parameters = self._queue_where(wanted)
        inner = (
            "FROM messages WHERE kind = 'patch' AND series_id IS NOT NULL AND seq IN "
            f"(SELECT seq FROM queue WHERE {where})"
        )
        order = "DESC" if newest_first else ""
        ids = [
            int(series)
            for (series,) in self._connection.execute(
                f"SELECT DISTINCT series_id {inner} ORDER BY series_id {order} "  # noqa: S608 - ours
                "LIMIT ? OFFSET ?",
                (*parameters, max(0, wanted.limit), max(0, wanted.offset)),
            )
        ]
        total = self._connection.execute(
            f"SELECT COUNT(DISTINCT series_id) {inner}",  # noqa: S608 - ours
            parameters,
        ).fetchone()[0]
        return ids, int(total)

    def cover_page(self, wanted: CoverFilter) -> tuple[list[int], int]:
        """The cover letters `wanted` asks for, by seq, a page, and how many."""
        clauses = ["kind = 'cover'"]
        parameters: list[object] = []
        if wanted.lists:
            clauses.append(
                "seq IN (SELECT seq FROM sightings WHERE list IN "
                "(SELECT value FROM json_each(?)))"
            )
            parameters.append(json.dumps(list(wanted.lists)))
        for clause, value in (
            ("lower(author_email) = ?", wanted.author_email.lower() or None),
            ("date >= ?", wanted.since),
            ("date < ?", wanted.until),
            ("message_id = ?", wanted.message_id or None),
        ):
            if value is not None:
                clauses.append(clause)
                parameters.append(value)
        if wanted.subject:
            clauses.append("lower(subject) LIKE ? ESCAPE '\\'")
            parameters.append(like_pattern(wanted.subject))
        if wanted.series_ids:
            clauses.append("series_id IN (SELECT value FROM json_each(?))")
            parameters.append(json.dumps(list(wanted.series_ids)))
        where = " AND ".join(clauses)
        order = "DESC" if wanted.newest_first else ""
        seqs = [
            int(seq)
            for (seq,) in self._connection.execute(
                f"SELECT seq FROM messages WHERE {where} ORDER BY seq {order} "  # noqa: S608 - ours
                "LIMIT ? OFFSET ?",
                (*parameters, max(0, wanted.limit), max(0, wanted.offset)),
            )
        ]
        total = self._connection.execute(
            f"SELECT COUNT(*) FROM messages WHERE {where}",  # noqa: S608 - ours
            parameters,
        ).fetchone()[0]
        return seqs, int(total)

    def person_ids(self, emails: Sequence[str]) -> dict[str, int]:
        """Each address's person id (None for an address no patch or cover
        letter credits: it is left out)."""
        found: dict[str, int] = {}
        for email in dict.fromkeys(email.lower() for email in emails if email):
            row = self._connection.execute(
                "SELECT MIN(seq) FROM messages WHERE kind IN ('patch', 'cover') AND "
                "(patch_author_email = ? OR (patch_author_email IS NULL AND "
                "author_email = ?))",
                (email, email),
            ).fetchone()
            if row and row[0] is not None:
                found[email] = int(row[0])
        return found

    def person(self, person_id: int) -> Person | None:
        """The person `person_id` names, or None when it names no one."""
        row = self._connection.execute(
            f"SELECT {_CREDITED}, COALESCE(patch_author_name, author_name) "  # noqa: S608 - ours
            "FROM messages WHERE seq = ? AND kind IN ('patch', 'cover')",
            (person_id,),
        ).fetchone()
        if row is None:
            return None
        email, name = str(row[0]), str(row[1])
        if self.person_ids([email]).get(email.lower()) != person_id:
            return None
        return Person(person_id, name, email)

    def people_page(
        self, *, text: str = "", limit: int = 30, offset: int = 0
    ) -> tuple[list[Person], int]:
        """People by id, those whose name or address holds `text`; a page, and
        how many there are."""
        where = "kind IN ('patch', 'cover')"
        having, parameters = "", []
        if text:
            having = (
                "HAVING lower(email) LIKE ? ESCAPE '\\' OR lower(name) LIKE ? "
                "ESCAPE '\\'"
            )
            parameters = [like_pattern(text)] * 2
        grouped = (
            f"SELECT MIN(seq) AS id, {_CREDITED} AS email, "
            "MIN(COALESCE(patch_author_name, author_name)) AS name "
            f"FROM messages WHERE {where} GROUP BY email {having}"
        )
        people = [
            Person(int(found), str(name), str(email))
            for found, email, name in self._connection.execute(
                f"SELECT id, email, name FROM ({grouped}) ORDER BY id LIMIT ? OFFSET ?",  # noqa: S608 - ours
                (*parameters, max(0, limit), max(0, offset)),
            )
        ]
        total = self._connection.execute(
            f"SELECT COUNT(*) FROM ({grouped})",  # noqa: S608 - ours
            parameters,
        ).fetchone()[0]
        return people, int(total)
