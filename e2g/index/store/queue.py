"""The patch queue's named queries: what a refresh reads to know what a run touched,
and what `e2g patches`, `e2g events`, the feeds and `e2g ty` list.

The queue and its events are derived (e2g.api.queue owns their rules and writes them
through e2g.index.queue_writer); these queries only read them. Filters arrive as a
`QueueFilter`/`EventFilter` value and become SQL here, nowhere else.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from e2g.index.schema import QUEUE_SEQ_KEY
from e2g.index.store.base import StoreBase, in_list

QUEUE_COLUMNS = (
    "seq, message_id, series, list, date, author_name, author_email, subject, "
    "version, part, total, answer, mail_state, untracked, superseded_by, "
    "last_activity, state, facts"
)
EVENT_COLUMNS = (
    "id, kind, found, message_id, series, list, author_name, author_email, subject, "
    "from_state, to_state, commit_sha, tree, release"
)


class QueueRow(NamedTuple):
    """One patch version of the queue as stored (e2g.api.queue.lifecycle says what
    each column means; `facts` is its JSON)."""

    seq: int
    message_id: str
    series: str
    list: str
    date: int | None
    author_name: str
    author_email: str
    subject: str
    version: int
    part: int | None
    total: int | None
    answer: str
    mail_state: str
    untracked: str
    superseded_by: str
    last_activity: int | None
    state: str
    facts: str


class QueueFilter(NamedTuple):
    """Which rows of the queue to list, newest first. Empty values filter nothing."""

    states: tuple[str, ...] = ()
    lists: tuple[str, ...] = ()
    author: str = ""  # a part of the author's name or address, case-blind
    since: int | None = None  # Unix time, inclusive
    until: int | None = None  # Unix time, exclusive
    message_ids: tuple[str, ...] | None = None  # a search's hits (None: no search)
    limit: int = 100
    offset: int = 0
    # Patchwork's filters (e2g.api.patchwork): exact, where the above are loose.
    series: tuple[str, ...] = ()  # series named by their head's Message-ID
    author_email: str = ""  # the author's address, whole, case-blind
    subject: str = ""  # a part of the subject, case-blind
    message_id: str = ""  # this one patch version
    order: str = "-date"  # a key of QUEUE_ORDERS


# How `QueueFilter.order` sorts: Patchwork's order names (a "-" for descending).
QUEUE_ORDERS = {
    "-date": "date DESC, seq DESC",
    "date": "date, seq",
    "-id": "seq DESC",
    "id": "seq",
    "-name": "subject DESC, seq DESC",
    "name": "subject, seq",
}


class EventRow(NamedTuple):
    id: int
    kind: str
    found: int
    message_id: str
    series: str
    list: str
    author_name: str
    author_email: str
    subject: str
    from_state: str
    to_state: str
    commit: str
    tree: str
    release: str


class EventFilter(NamedTuple):
    after_id: int = 0  # events with a larger id
    since: int | None = None  # found at or after this Unix time
    author: str = ""
    lists: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    states: tuple[str, ...] = ()  # the state an event moved to
    limit: int = 1000
    newest_first: bool = False


class NewMail(NamedTuple):
    """A message a refresh has not read yet (Store.mail_after)."""

    seq: int
    kind: str
    subject_key: str
    thread_root: str
    series_id: int | None


def like_pattern(text: str) -> str:
    escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%")
    return "%" + escaped.replace("_", "\\_") + "%"


def _exact_where(
    wanted: QueueFilter, clauses: list[str], parameters: list[object]
) -> tuple[str, list[object]]:
    """The filters Patchwork's API adds, joined to the others."""
    if wanted.series:
        clauses.append("series IN (SELECT value FROM json_each(?))")
        parameters.append(json.dumps(list(wanted.series)))
    if wanted.author_email:
        clauses.append("lower(author_email) = ?")
        parameters.append(wanted.author_email.lower())
    if wanted.subject:
        clauses.append("lower(subject) LIKE ? ESCAPE '\\'")
        parameters.append(like_pattern(wanted.subject))
    if wanted.message_id:
        clauses.append("message_id = ?")
        parameters.append(wanted.message_id)
    return " AND ".join(clauses), parameters


class ThreadNode(NamedTuple):
    """One message of a thread, light (Store.thread_nodes)."""

    seq: int
    message_id: str
    parent_id: str | None
    author_email: str
    kind: str
    date: int | None
    thread_root: str


class LaterSeries(NamedTuple):
    series_id: int
    version: int
    head: str  # its cover letter's Message-ID, else its first part's
    date: int | None  # its head's date (Unix time)
    subject: str  # its head's subject


class QueueReads(StoreBase):
    def thread_nodes(self, roots: Sequence[str]) -> list[ThreadNode]:
        """Every message of these threads, light, oldest first."""
        if not roots:
            return []
        return [
            ThreadNode(
                int(seq), str(mid), parent, str(email), str(kind), date, str(root)
            )
            for seq, mid, parent, email, kind, date, root in self._connection.execute(
                "SELECT seq, message_id, parent_id, author_email, kind, date, "
                "thread_root FROM messages WHERE thread_root IN "
                "(SELECT value FROM json_each(?)) ORDER BY date, seq",
                (json.dumps(list(roots)),),
            )
        ]

    def later_series(self, series_id: int) -> list[LaterSeries]:
        """The series of the same lineage with a higher version, newest first."""
        row = self._connection.execute(
            "SELECT COALESCE(lineage, id), version FROM series WHERE id = ?",
            (series_id,),
        ).fetchone()
        if row is None:
            return []
        return [
            LaterSeries(
                int(found), int(version), str(head or ""), date, str(subject or "")
            )
            for found, version, head, date, subject in self._connection.execute(
                "SELECT s.id, s.version, COALESCE(c.message_id, f.message_id), "
                "COALESCE(c.date, f.date), COALESCE(c.subject, f.subject) FROM series s "
                "LEFT JOIN messages c ON c.seq = s.cover_seq "
                "LEFT JOIN messages f ON f.seq = (SELECT p.seq FROM messages p "
                "WHERE p.series_id = s.id AND p.kind = 'patch' "
                "ORDER BY p.part, p.seq LIMIT 1) "
                "WHERE (s.id = ? OR s.lineage = ?) AND s.version > ? "
                "ORDER BY s.version DESC, s.id DESC",
                (row[0], row[0], row[1]),
            )
        ]

    def queue_seq(self) -> int | None:
        """The highest message seq the queue has read; None: never derived."""
        row = self._connection.execute(
            "SELECT value FROM meta WHERE key = ?", (QUEUE_SEQ_KEY,)
        ).fetchone()
        return None if row is None else int(row[0])

    def mail_after(self, seq: int) -> list[NewMail]:
        """Patches, cover letters and replies stored above `seq`."""
        return [
            NewMail(int(found), str(kind), str(key), str(root), series)
            for found, kind, key, root, series in self._connection.execute(
                "SELECT seq, kind, subject_key, thread_root, series_id FROM messages "
                "WHERE seq > ? AND kind IN ('patch', 'cover', 'reply') ORDER BY seq",
                (seq,),
            )
        ]

    def patch_seqs(self) -> list[int]:
        """Every patch's seq, in seq order."""
        return [
            int(seq)
            for (seq,) in self._connection.execute(
                "SELECT seq FROM messages WHERE kind = 'patch' ORDER BY seq"
            )
        ]

    def patch_seqs_where(
        self,
        *,
        keys: Sequence[str] = (),
        series_ids: Sequence[int] = (),
        roots: Sequence[str] = (),
        message_ids: Sequence[str] = (),
    ) -> set[int]:
        """The patches with one of these subject keys, in one of these series or
        threads, or with one of these Message-IDs."""
        found: set[int] = set()
        for column, values in (
            ("subject_key", [key for key in keys if key]),
            ("series_id", list(series_ids)),
            ("thread_root", list(roots)),
            ("message_id", list(message_ids)),
        ):
            if not values:
                continue
            found.update(
                int(seq)
                for (seq,) in self._connection.execute(
                    f"SELECT seq FROM messages WHERE kind = 'patch' AND {column} "  # noqa: S608 - ours
                    "IN (SELECT value FROM json_each(?))",
                    (json.dumps(values),),
                )
            )
        return found

    def subject_keys_of(self, message_ids: Sequence[str]) -> set[str]:
        if not message_ids:
            return set()
        return {
            str(key)
            for (key,) in self._connection.execute(
                "SELECT subject_key FROM messages WHERE message_id IN "
                "(SELECT value FROM json_each(?))",
                (json.dumps(list(message_ids)),),
            )
        }

    def series_of_threads(self, roots: Sequence[str]) -> set[int]:
        """The series of the patches and cover letters of these threads."""
        if not roots:
            return set()
        return {
            int(series)
            for (series,) in self._connection.execute(
                "SELECT DISTINCT series_id FROM messages WHERE thread_root IN "
                "(SELECT value FROM json_each(?)) AND series_id IS NOT NULL",
                (json.dumps(list(roots)),),
            )
        }

    def link_triples(self) -> set[tuple[str, str, str]]:
        """(repo, commit, Message-ID) of every stored link."""
        return {
            (str(repo), str(sha), str(mid))
            for repo, sha, mid in self._connection.execute(
                "SELECT repo, commit_sha, message_id FROM links"
            )
        }

    def queue_link_triples(self) -> set[tuple[str, str, str]]:
        """The links the queue was last derived from."""
        return {
            (str(repo), str(sha), str(mid))
            for repo, sha, mid in self._connection.execute(
                "SELECT repo, commit_sha, message_id FROM queue_links"
            )
        }

    def trees_fingerprint(self) -> str:
        """What the trees tables hold, in counts: the queue rereads its applied
        patches' branches and releases when it changes."""
        row = self._connection.execute(
            "SELECT (SELECT COUNT(*) FROM tree_commits), "
            "(SELECT COUNT(*) FROM tree_commits WHERE gone = 1), "
            "(SELECT COUNT(*) FROM releases), (SELECT COUNT(*) FROM backports)"
        ).fetchone()
        return ",".join(str(value) for value in row)

    def commits_fingerprint(self) -> str:
        """How many commits each repository has stored: the paths the queue's
        untracked rule reads move with it."""
        return ";".join(
            f"{repo}:{count}"
            for repo, count in self._connection.execute(
                "SELECT repo, COUNT(*) FROM commits GROUP BY repo ORDER BY repo"
            )
        )

    def files_of(self, seqs: Sequence[int]) -> dict[int, list[str]]:
        """The paths each of these messages' diffs touch."""
        found: dict[int, list[str]] = {}
        for start in range(0, len(seqs), 5000):
            for seq, path in self._connection.execute(
                "SELECT seq, path FROM files WHERE seq IN "
                "(SELECT value FROM json_each(?)) ORDER BY seq",
                (json.dumps(list(seqs[start : start + 5000])),),
            ):
                found.setdefault(int(seq), []).append(str(path))
        return found

    def commit_paths(self) -> dict[str, set[str]]:
        """Per matched repository: the paths its stored commits touched."""
        found: dict[str, set[str]] = {}
        for repo, files in self._connection.execute("SELECT repo, files FROM commits"):
            if files:
                found.setdefault(str(repo), set()).update(str(files).split("\n"))
        return found

    def series_heads(self, series_ids: Sequence[int]) -> dict[int, tuple[str, int]]:
        """Per series: the Message-ID that names it (its cover letter's, else its
        first part's) and how many patch parts it holds."""
        found: dict[int, tuple[str, int]] = {}
        for start in range(0, len(series_ids), 500):
            marks, chunk = in_list(series_ids[start : start + 500])
            for series, cover, first, parts in self._connection.execute(
                "SELECT s.id, c.message_id, (SELECT p.message_id FROM messages p "
                "WHERE p.series_id = s.id AND p.kind = 'patch' ORDER BY p.part, p.seq "
                "LIMIT 1), (SELECT COUNT(DISTINCT COALESCE(p.part, 0)) FROM messages "
                "p WHERE p.series_id = s.id AND p.kind = 'patch') FROM series s "
                "LEFT JOIN messages c ON c.seq = s.cover_seq "
                f"WHERE s.id IN ({marks})",  # noqa: S608 - placeholders
                chunk,
            ):
                found[int(series)] = (str(cover or first or ""), int(parts))
        return found

    def queue_all(self) -> list[QueueRow]:
        """Every row of the queue, in seq order."""
        return [
            QueueRow(*row)
            for row in self._connection.execute(
                f"SELECT {QUEUE_COLUMNS} FROM queue ORDER BY seq"  # noqa: S608 - ours
            )
        ]

    def queue_each(self) -> Iterator[QueueRow]:
        """Every row of the queue, in seq order, one at a time (a reader that keeps
        less than the rows, e2g.api.metrics, never holds them all)."""
        for row in self._connection.execute(
            f"SELECT {QUEUE_COLUMNS} FROM queue ORDER BY seq"  # noqa: S608 - ours
        ):
            yield QueueRow(*row)

    def queue_by_seqs(self, seqs: Sequence[int]) -> dict[int, QueueRow]:
        if not seqs:
            return {}
        return {
            int(row[0]): QueueRow(*row)
            for row in self._connection.execute(
                f"SELECT {QUEUE_COLUMNS} FROM queue WHERE seq IN "  # noqa: S608 - ours
                "(SELECT value FROM json_each(?))",
                (json.dumps(sorted(set(seqs))),),
            )
        }

    def queue_of_series(self, series: Sequence[str]) -> list[QueueRow]:
        """Every row of these series (named by their Message-IDs), by part."""
        if not series:
            return []
        return [
            QueueRow(*row)
            for row in self._connection.execute(
                f"SELECT {QUEUE_COLUMNS} FROM queue WHERE series IN "  # noqa: S608 - ours
                "(SELECT value FROM json_each(?)) ORDER BY series, part, seq",
                (json.dumps(list(series)),),
            )
        ]

    def queue_rows(self, wanted: QueueFilter) -> list[QueueRow]:
        """The rows `wanted` asks for, newest first (an index on date walks back and
        stops at the limit; on state and date when states are asked for)."""
        where, parameters = self._queue_where(wanted)
        order = QUEUE_ORDERS.get(wanted.order, QUEUE_ORDERS["-date"])
        return [
            QueueRow(*row)
            for row in self._connection.execute(
                f"SELECT {QUEUE_COLUMNS} FROM queue WHERE {where} "  # noqa: S608 - ours
                f"ORDER BY {order} LIMIT ? OFFSET ?",
                (*parameters, max(0, wanted.limit), max(0, wanted.offset)),
            )
        ]

    def queue_count(self, wanted: QueueFilter) -> int:
        where, parameters = self._queue_where(wanted)
        row = self._connection.execute(
            f"SELECT COUNT(*) FROM queue WHERE {where}",  # noqa: S608 - ours
            parameters,
        ).fetchone()
        return int(row[0])

    def release_dates(self) -> dict[tuple[str, str], int]:
        """Per (repository, release tag): when it was made, as far as the store
        knows: its tagged commit's commit date when that commit is stored, else the
        latest commit date of the stored commits it is the first release of."""
        return {
            (str(repo), str(tag)): int(date)
            for repo, tag, date in self._connection.execute(
                "SELECT r.repo, r.tag, COALESCE((SELECT c.commit_date FROM "
                "release_tags t JOIN commits c ON c.repo = t.repo AND c.sha = t.target "
                "WHERE t.repo = r.repo AND t.tag = r.tag), MAX(c.commit_date)) "
                "FROM releases r JOIN commits c ON c.repo = r.repo AND c.sha = r.sha "
                "GROUP BY r.repo, r.tag"
            )
            if date is not None
        }

    def queue_state_counts(self) -> dict[str, int]:
        return {
            str(state): int(count)
            for state, count in self._connection.execute(
                "SELECT state, COUNT(*) FROM queue GROUP BY state ORDER BY state"
            )
        }

    @staticmethod
    def _queue_where(wanted: QueueFilter) -> tuple[str, list[object]]:
        clauses = ["1"]
        parameters: list[object] = []
        if wanted.states:
            clauses.append("state IN (SELECT value FROM json_each(?))")
            parameters.append(json.dumps(list(wanted.states)))
        if wanted.lists:
            clauses.append("list IN (SELECT value FROM json_each(?))")
            parameters.append(json.dumps(list(wanted.lists)))
        if wanted.author:
            clauses.append(
                "(lower(author_email) LIKE ? ESCAPE '\\' "
                "OR lower(author_name) LIKE ? ESCAPE '\\')"
            )
            parameters += [like_pattern(wanted.author)] * 2
        if wanted.since is not None:
            clauses.append("date >= ?")
            parameters.append(wanted.since)
        if wanted.until is not None:
            clauses.append("date < ?")
            parameters.append(wanted.until)
        if wanted.message_ids is not None:
            clauses.append(
                "(message_id IN (SELECT value FROM json_each(?)) "
                "OR series IN (SELECT value FROM json_each(?)))"
            )
            parameters += [json.dumps(list(wanted.message_ids))] * 2
        return _exact_where(wanted, clauses, parameters)

    def recorded(self, kind: str, message_ids: Sequence[str]) -> set[str]:
        """Which of these Message-IDs have an event of `kind`."""
        if not message_ids:
            return set()
        return {
            str(found)
            for (found,) in self._connection.execute(
                "SELECT DISTINCT message_id FROM events WHERE kind = ? AND message_id "
                "IN (SELECT value FROM json_each(?))",
                (kind, json.dumps(list(message_ids))),
            )
        }

    def events(self, wanted: EventFilter) -> list[EventRow]:
        """The events `wanted` asks for, oldest first (newest first if asked)."""
        clauses = ["id > ?"]
        parameters: list[object] = [wanted.after_id]
        if wanted.since is not None:
            clauses.append("found >= ?")
            parameters.append(wanted.since)
        if wanted.author:
            clauses.append(
                "(lower(author_email) LIKE ? ESCAPE '\\' "
                "OR lower(author_name) LIKE ? ESCAPE '\\')"
            )
            parameters += [like_pattern(wanted.author)] * 2
        for column, values in (
            ("list", wanted.lists),
            ("kind", wanted.kinds),
            ("to_state", wanted.states),
        ):
            if values:
                clauses.append(f"{column} IN (SELECT value FROM json_each(?))")
                parameters.append(json.dumps(list(values)))
        order = "DESC" if wanted.newest_first else ""
        return [
            EventRow(*row)
            for row in self._connection.execute(
                f"SELECT {EVENT_COLUMNS} FROM events WHERE {' AND '.join(clauses)} "  # noqa: S608 - ours
                f"ORDER BY id {order} LIMIT ?",
                (*parameters, max(0, wanted.limit)),
            )
        ]
