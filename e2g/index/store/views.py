"""What the web pages and the CLI's views count and list: threads, replies,
recent commits, the lists a commit reached, the links of messages."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from e2g.index.store.base import StoreBase, in_list
from e2g.index.store.rows import LinkedCommit, MatchedSpan
from e2g.model.stored import StoredMessage


class ViewReads(StoreBase):
    def has_message(self, message_id: str) -> bool:
        """Whether the store holds `message_id` (one indexed lookup)."""
        row = self._connection.execute(
            "SELECT 1 FROM messages WHERE message_id = ?", (message_id,)
        ).fetchone()
        return row is not None

    def reply_count(self, message_id: str) -> int:
        """Stored messages whose parent is `message_id`."""
        row = self._connection.execute(
            "SELECT COUNT(*) FROM messages WHERE parent_id = ?", (message_id,)
        ).fetchone()
        return int(row[0])

    def thread_size(self, root: str) -> int:
        """Stored messages of the thread rooted at `root`."""
        row = self._connection.execute(
            "SELECT COUNT(*) FROM messages WHERE thread_root = ?", (root,)
        ).fetchone()
        return int(row[0])

    def first_in_thread(self, root: str) -> StoredMessage | None:
        """The oldest stored message of the thread rooted at `root`."""
        found = self._select(
            "thread_root = ?", (root,), suffix="ORDER BY date, seq LIMIT 1"
        )
        return found[0] if found else None

    def busy_threads(self, *, window: int, limit: int) -> dict[str, int]:
        """Thread roots with more than one of the latest `window` messages, busiest
        first, with how many they have."""
        rows = self._connection.execute(
            "SELECT thread_root, COUNT(*) AS n FROM "
            "(SELECT thread_root FROM messages ORDER BY seq DESC LIMIT ?) "
            "GROUP BY thread_root HAVING n > 1 ORDER BY n DESC, thread_root LIMIT ?",
            (window, limit),
        ).fetchall()
        return {str(root): int(count) for root, count in rows}

    def recent_commits(
        self, repos: Sequence[str], *, limit: int, status: str | None = None
    ) -> list[tuple[str, str, str, int | None, str, str | None]]:
        """(sha, subject, author_name, commit_date, status, method) of the commits of
        `repos` that were looked at, newest first; only those of `status` if given."""
        if not repos:
            return []
        marks = ",".join("?" * len(repos))
        wanted = "" if status is None else " AND status = ?"
        return [
            (str(sha), str(subject), str(author), date, str(status), method)
            for sha, subject, author, date, status, method in self._connection.execute(
                "SELECT sha, subject, author_name, commit_date, status, method "
                f"FROM commits WHERE repo IN ({marks}){wanted} "
                "ORDER BY commit_date DESC LIMIT ?",
                (*repos, *([] if status is None else [status]), limit),
            )
        ]

    def commit_outcomes(self, repo: str) -> list[tuple[str, str, str, str | None, int]]:
        """(sha, files, status, method, commit_date) of every matched-or-not commit of
        `repo`."""
        return [
            (str(sha), str(files), str(status), method, int(date))
            for sha, files, status, method, date in self._connection.execute(
                "SELECT sha, files, status, method, commit_date FROM commits "
                "WHERE repo = ?",
                (repo,),
            )
        ]

    def lists_of_commit(self, repo: str, sha: str) -> set[str]:
        """The lists the postings linked to commit `sha` of `repo` were seen on."""
        rows = self._connection.execute(
            "SELECT DISTINCT s.list FROM links l "
            "JOIN messages m ON m.message_id = l.message_id "
            "JOIN sightings s ON s.seq = m.seq WHERE l.repo = ? AND l.commit_sha = ?",
            (repo, sha),
        ).fetchall()
        return {str(row[0]) for row in rows}

    def links_of_messages(self, message_ids: Sequence[str]) -> list[LinkedCommit]:
        """The stored links of `e2g match` that name any of these messages, with their
        commit's facts and the posting that commit applied, newest commit first."""
        found: list[LinkedCommit] = []
        for start in range(0, len(message_ids), 500):
            marks, chunk = in_list(message_ids[start : start + 500])
            found += [
                LinkedCommit(
                    message_id=str(message_id),
                    repo=str(repo),
                    sha=str(sha),
                    subject=str(subject),
                    commit_date=datetime.fromtimestamp(int(date), UTC),
                    method=str(method),
                    score=float(score),
                    applied_posting=None if applied is None else str(applied),
                )
                for message_id, repo, sha, subject, date, method, score, applied in (
                    self._connection.execute(
                        "SELECT l.message_id, l.repo, l.commit_sha, c.subject, "
                        "c.commit_date, l.method, l.score, (SELECT a.message_id "
                        "FROM links a WHERE a.repo = l.repo AND a.commit_sha = "
                        "l.commit_sha AND a.applied = 1 LIMIT 1) FROM links l JOIN "
                        "commits c ON c.repo = l.repo AND c.sha = l.commit_sha "
                        f"WHERE l.message_id IN ({marks})",
                        chunk,
                    )
                )
            ]
        return sorted(found, key=lambda link: link.commit_date, reverse=True)

    def matched_spans(self) -> list[MatchedSpan]:
        """Per repository `e2g match` has looked at: its commits' date span."""
        return [
            MatchedSpan(
                repo=str(repo),
                first=datetime.fromtimestamp(int(low), UTC),
                last=datetime.fromtimestamp(int(high), UTC),
                commits=int(count),
            )
            for repo, low, high, count in self._connection.execute(
                "SELECT repo, MIN(commit_date), MAX(commit_date), COUNT(*) "
                "FROM commits GROUP BY repo ORDER BY repo"
            )
        ]
