"""The links `e2g match` stored, by commit: statuses, postings, audit rows."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from e2g.index.store.base import StoreBase, StoredLink, in_list
from e2g.index.store.rows import AuditRow, ThreadRow, _evidence
from e2g.model import Address

if TYPE_CHECKING:
    from e2g.model.links import CommitInfo


def done_commits(
    connection: sqlite3.Connection, repo: str, *, max_seq: int
) -> set[str]:
    """The commits of `repo` that need no new match: matched, or unmatched with no
    mail since (the store's highest seq then is `max_seq` or more)."""
    rows = connection.execute(
        "SELECT sha FROM commits WHERE repo = ? AND (status = 'matched' OR matched_at_seq >= ?)",
        (repo, max_seq),
    )
    return {str(row[0]) for row in rows}


class LinkReads(StoreBase):
    def done_commits(self, repo: str, *, max_seq: int) -> set[str]:
        """done_commits() read here: beside a writer whose writes are in flight
        (e2g.index.link_writer.TreeWriter), which they do not change."""
        return done_commits(self._connection, repo, max_seq=max_seq)

    def commit_statuses(self, repo: str, shas: Sequence[str]) -> dict[str, str]:
        """The stored status ("matched", "no-match") of those of `shas` that `e2g
        match` answered for `repo`: one indexed lookup per 500."""
        found: dict[str, str] = {}
        for start in range(0, len(shas), 500):
            marks, chunk = in_list(shas[start : start + 500])
            for sha, status in self._connection.execute(
                f"SELECT sha, status FROM commits WHERE repo = ? AND sha IN ({marks})",
                (repo, *chunk),
            ):
                found[str(sha)] = str(status)
        return found

    def links_of_commits(
        self, repo: str, shas: Sequence[str], *, evidence: bool = True
    ) -> dict[str, list[StoredLink]]:
        """The stored links of each of `shas` in `repo`: one query per 500; without
        `evidence`, each link's evidence is left empty, unread."""
        found: dict[str, list[StoredLink]] = {}
        column = "evidence" if evidence else "''"  # '' reads as no evidence
        for start in range(0, len(shas), 500):
            marks, chunk = in_list(shas[start : start + 500])
            rows = self._connection.execute(
                "SELECT commit_sha, message_id, method, score, applied, "
                f"{column} FROM links WHERE repo = ? AND commit_sha IN ({marks})",
                (repo, *chunk),
            )
            for sha, message_id, method, score, applied, reasons in rows:
                found.setdefault(str(sha), []).append(
                    StoredLink(
                        commit_sha=str(sha),
                        message_id=str(message_id),
                        method=str(method),
                        score=float(score),
                        applied=bool(applied),
                        evidence=_evidence(reasons),
                    )
                )
        return found

    def stored_commits(self, repo: str, shas: Sequence[str]) -> dict[str, CommitInfo]:
        """What `e2g match` stored of each of `shas` in `repo` (those it answered)."""
        # Here, not at the top: a search, which never asks, does not create the link
        # types (model.links, and model.mail under it: ~8 ms of each start).
        from e2g.model.links import CommitInfo  # noqa: PLC0415

        found: dict[str, CommitInfo] = {}
        for start in range(0, len(shas), 500):
            marks, chunk = in_list(shas[start : start + 500])
            for (
                sha,
                subject,
                name,
                email,
                authored,
                committed,
                files,
            ) in self._connection.execute(
                "SELECT sha, subject, author_name, author_email, author_date, "
                f"commit_date, files FROM commits WHERE repo = ? AND sha IN ({marks})",
                (repo, *chunk),
            ):
                found[str(sha)] = CommitInfo(
                    sha=str(sha),
                    subject=str(subject),
                    author=Address(str(name), str(email)),
                    author_date=datetime.fromtimestamp(int(authored), UTC),
                    commit_date=datetime.fromtimestamp(int(committed), UTC),
                    files=tuple(str(files).split("\n")) if files else (),
                )
        return found

    def audit_commits(self, repo: str, shas: Sequence[str]) -> dict[str, AuditRow]:
        """What `e2g match` stored of each of `shas` in `repo` that `e2g audit`
        reads: its facts, how it was answered and its patch-id (one query per 500)."""
        found: dict[str, AuditRow] = {}
        for start in range(0, len(shas), 500):
            marks, chunk = in_list(shas[start : start + 500])
            for (
                sha,
                subject,
                name,
                email,
                files,
                status,
                method,
                score,
                patch,
                authored,
                committed,
            ) in self._connection.execute(
                "SELECT sha, subject, author_name, author_email, files, status, "
                "method, score, patch_id, author_date, commit_date FROM commits "
                f"WHERE repo = ? AND sha IN ({marks})",
                (repo, *chunk),
            ):
                found[str(sha)] = AuditRow(
                    sha=str(sha),
                    subject=str(subject),
                    author=Address(str(name), str(email)),
                    files=tuple(str(files).split("\n")) if files else (),
                    status=str(status),
                    method=method,
                    score=score,
                    patch_id=patch,
                    author_date=datetime.fromtimestamp(int(authored), UTC),
                    commit_date=datetime.fromtimestamp(int(committed), UTC),
                )
        return found

    def lists_of_repo(self, repo: str) -> list[str]:
        """The lists the postings linked to any commit of `repo` were seen on (one
        pass over the repository's links)."""
        return [
            str(name)
            for (name,) in self._connection.execute(
                "SELECT DISTINCT s.list FROM links l "
                "JOIN messages m ON m.message_id = l.message_id "
                "JOIN sightings s ON s.seq = m.seq WHERE l.repo = ? ORDER BY 1",
                (repo,),
            )
        ]

    def threads_links(
        self, roots: Sequence[str], *, limit: int = 5000
    ) -> dict[str, list[ThreadRow]]:
        """The messages of many threads, by root, light (no bodies), oldest first:
        one query per 500 roots, each thread cut at its first `limit` messages as
        `thread_links` cuts it."""
        found: dict[str, list[ThreadRow]] = {}
        for start in range(0, len(roots), 500):
            marks, chunk = in_list(roots[start : start + 500])
            for root, *row in self._connection.execute(
                "SELECT thread_root, seq, message_id, parent_id, author_name, "
                "author_email, kind, series_id FROM messages "
                f"WHERE thread_root IN ({marks}) ORDER BY thread_root, date, seq",
                chunk,
            ):
                thread = found.setdefault(str(root), [])
                if len(thread) >= limit:
                    continue
                seq, mid, parent, name, email, kind, series = row
                thread.append(
                    ThreadRow(
                        seq=int(seq),
                        message_id=str(mid),
                        parent_id=parent,
                        author=Address(str(name), str(email)),
                        kind=str(kind),
                        series_id=series,
                    )
                )
        return found

    def has_commits(self, repo: str) -> bool:
        """Whether `e2g match` ever stored an answer for `repo`."""
        row = self._connection.execute(
            "SELECT 1 FROM commits WHERE repo = ? LIMIT 1", (repo,)
        ).fetchone()
        return row is not None
