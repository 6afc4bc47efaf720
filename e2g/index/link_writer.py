"""LinkWriter: records what `e2g match` found, per repository and commit.

The `commits` table says which commits were matched and when (the store's highest
message seq at the time), so a rerun processes only new commits, plus commits that had
no match when new mail arrived since. `links` holds one row per (commit, posting).
Batches are single transactions; SQLite's busy timeout lets this run beside an ingest.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from e2g.errors import StoreError
from e2g.index.db import connect, explain
from e2g.model import LinkResult


class LinkWriter:
    def __init__(self, path: Path, *, repo: str) -> None:
        self.path = path
        self.repo = repo
        self.connection: sqlite3.Connection = connect(path)

    def __enter__(self) -> LinkWriter:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.connection.close()

    def done(self, *, max_seq: int) -> set[str]:
        """Commits that need no new run: matched, or unmatched with no mail since."""
        rows = self.connection.execute(
            "SELECT sha FROM commits WHERE repo = ? AND (status = 'matched' OR matched_at_seq >= ?)",
            (self.repo, max_seq),
        )
        return {str(row[0]) for row in rows}

    def write(self, results: Sequence[LinkResult], *, max_seq: int) -> None:
        try:
            self.connection.execute("BEGIN IMMEDIATE")
            self._write_batch(results, max_seq)
            self.connection.execute("COMMIT")
        except sqlite3.DatabaseError as err:
            if self.connection.in_transaction:
                self.connection.execute("ROLLBACK")
            raise StoreError(explain(err, self.path)) from None
        except BaseException:
            if self.connection.in_transaction:
                self.connection.execute("ROLLBACK")
            raise

    def _write_batch(self, results: Sequence[LinkResult], max_seq: int) -> None:
        """Three statements for the whole batch: old links out, commits and links in."""
        self.connection.executemany(
            "DELETE FROM links WHERE repo = ? AND commit_sha = ?",
            [(self.repo, result.commit.sha) for result in results],
        )
        self.connection.executemany(
            "INSERT OR REPLACE INTO commits(repo, sha, subject, author_name, author_email, author_date, "
            "commit_date, files, status, method, score, matched_at_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [self._commit_row(result, max_seq) for result in results],
        )
        self.connection.executemany(
            "INSERT OR REPLACE INTO links(commit_sha, repo, message_id, method, score, applied, evidence) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    result.commit.sha,
                    self.repo,
                    posting.message_id,
                    posting.method,
                    posting.score,
                    int(posting.applied),
                    json.dumps([[e.signal, e.detail] for e in posting.evidence]),
                )
                for result in results
                for posting in result.postings
            ],
        )

    def _commit_row(self, result: LinkResult, max_seq: int) -> tuple[object, ...]:
        commit = result.commit
        applied = next((p for p in result.postings if p.applied), None)
        return (
            self.repo,
            commit.sha,
            commit.subject,
            commit.author.name,
            commit.author.email,
            int(commit.author_date.timestamp()),
            int(commit.commit_date.timestamp()),
            "\n".join(commit.files),
            result.status,
            applied.method if applied else None,
            applied.score if applied else None,
            max_seq,
        )
