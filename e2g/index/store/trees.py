"""Trees: branches, backports, releases and pull requests (e2g.api.trees)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import TypeVar

from e2g.index.db import read_meta
from e2g.index.schema import PROCESS_PENDING_KEY
from e2g.index.store.base import StoreBase, in_list
from e2g.index.store.rows import (
    BackportEdge,
    ProcessRow,
    StoredSha,
    SubjectRow,
    TitledCommit,
    TreePlace,
)
from e2g.model.stored import StoredMessage

_Row = TypeVar("_Row")


class TreeReads(StoreBase):
    def commits_by_prefix(self, prefix: str, *, limit: int = 2) -> list[StoredSha]:
        """Stored commits (any repository) whose sha starts with `prefix`, a full or
        abbreviated sha: one range over the sha index."""
        return [
            StoredSha(str(repo), str(sha), str(status), int(date))
            for repo, sha, status, date in self._connection.execute(
                "SELECT repo, sha, status, commit_date FROM commits "
                "WHERE sha >= ? AND sha < ? LIMIT ?",
                (prefix, prefix + "g", limit),
            )
        ]

    def statuses_and_files(
        self, repo: str, shas: Sequence[str]
    ) -> dict[str, tuple[str, str]]:
        """The stored status and files (newline-separated, as stored) of each of
        `shas` in `repo`: what a backport copies from its upstream commit."""
        found: dict[str, tuple[str, str]] = {}
        for start in range(0, len(shas), 500):
            marks, chunk = in_list(shas[start : start + 500])
            for sha, status, files in self._connection.execute(
                "SELECT sha, status, files FROM commits "
                f"WHERE repo = ? AND sha IN ({marks})",
                (repo, *chunk),
            ):
                found[str(sha)] = (str(status), str(files))
        return found

    def commits_and_files(
        self, shas: Sequence[str]
    ) -> dict[str, list[tuple[str, str, str]]]:
        """(repo, status, files) of the stored commits (any repository, repositories
        in key order) named by full shas, files newline-separated as stored: one
        query per 500. Plain tuples: 2,000 backports' upstreams are read in
        3.9 ms, not 6 ms with a StoredSha each."""
        found: dict[str, list[tuple[str, str, str]]] = {}
        for start in range(0, len(shas), 500):
            marks, chunk = in_list(shas[start : start + 500])
            for sha, repo, status, files in self._connection.execute(
                "SELECT sha, repo, status, files FROM commits "
                f"WHERE sha IN ({marks}) ORDER BY sha, repo",
                chunk,
            ):
                found.setdefault(sha, []).append((repo, status, files))
        return found

    def commits_with_patch_ids(
        self, patch_ids: Sequence[str]
    ) -> dict[str, list[StoredSha]]:
        """Stored commits (any repository) by their patch-id, oldest commit first."""
        found: dict[str, list[StoredSha]] = {}
        for start in range(0, len(patch_ids), 500):
            marks, chunk = in_list(patch_ids[start : start + 500])
            for patch_id, repo, sha, status, date in self._connection.execute(
                "SELECT patch_id, repo, sha, status, commit_date FROM commits "
                f"WHERE patch_id IN ({marks}) ORDER BY commit_date",
                chunk,
            ):
                found.setdefault(str(patch_id), []).append(
                    StoredSha(str(repo), str(sha), str(status), int(date))
                )
        return found

    def commits_with_subjects(
        self, subjects: Sequence[str]
    ) -> dict[str, list[TitledCommit]]:
        """Stored commits (any repository) by their exact subject line, oldest
        commit first: a cherry-pick keeps its upstream's (schema 19's index)."""
        found: dict[str, list[TitledCommit]] = {}
        for start in range(0, len(subjects), 500):
            marks, chunk = in_list(subjects[start : start + 500])
            for repo, sha, subject, email, files, date in self._connection.execute(
                "SELECT repo, sha, subject, author_email, files, commit_date "
                f"FROM commits WHERE subject IN ({marks}) ORDER BY commit_date",
                chunk,
            ):
                found.setdefault(str(subject), []).append(
                    TitledCommit(
                        str(repo),
                        str(sha),
                        str(subject),
                        str(email),
                        tuple(path for path in str(files).split("\n") if path),
                        int(date),
                    )
                )
        return found

    def backport_edges(self, repo: str, shas: Sequence[str]) -> dict[str, BackportEdge]:
        """The stored upstream of each of `shas` of `repo` that is a backport."""
        found: dict[str, BackportEdge] = {}
        for start in range(0, len(shas), 500):
            marks, chunk = in_list(shas[start : start + 500])
            for sha, upstream_repo, upstream_sha, how in self._connection.execute(
                "SELECT sha, upstream_repo, upstream_sha, how FROM backports "
                f"WHERE repo = ? AND sha IN ({marks})",
                (repo, *chunk),
            ):
                found[str(sha)] = BackportEdge(
                    repo, str(sha), str(upstream_repo), str(upstream_sha), str(how)
                )
        return found

    def backports_of(self, upstream_shas: Sequence[str]) -> list[BackportEdge]:
        """Every stored backport of any of `upstream_shas` (any repository)."""
        found: list[BackportEdge] = []
        for start in range(0, len(upstream_shas), 500):
            marks, chunk = in_list(upstream_shas[start : start + 500])
            found += [
                BackportEdge(str(repo), str(sha), str(up_repo), str(up_sha), str(how))
                for repo, sha, up_repo, up_sha, how in self._connection.execute(
                    "SELECT repo, sha, upstream_repo, upstream_sha, how FROM backports "
                    f"WHERE upstream_sha IN ({marks}) ORDER BY repo, sha",
                    chunk,
                )
            ]
        return found

    def tree_places(self, shas: Sequence[str]) -> dict[str, list[TreePlace]]:
        """The named trees and branches that reach each of `shas`, any repository,
        `gone` ones (a rebase left them behind) included, in tree order."""
        found: dict[str, list[TreePlace]] = {}
        for start in range(0, len(shas), 500):
            marks, chunk = in_list(shas[start : start + 500])
            for repo, tree, branch, sha, gone, merge in self._connection.execute(
                "SELECT repo, tree, branch, sha, gone, merge FROM tree_commits "
                f"WHERE sha IN ({marks}) ORDER BY repo, tree, branch",
                chunk,
            ):
                found.setdefault(str(sha), []).append(
                    TreePlace(
                        str(repo), str(tree), str(branch), str(sha), bool(gone), merge
                    )
                )
        return found

    def tree_names(
        self, repos: Collection[str], shas: Sequence[str]
    ) -> dict[str, tuple[str, ...]]:
        """The live branches (`tree/branch`) of the named trees of `repos` (a
        repository's keys) that reach each of `shas`, as shown beside a commit
        (audit, blame, the front page); none: left out."""
        found: dict[str, tuple[str, ...]] = {}
        for sha, places in self.tree_places(shas).items():
            names = tuple(p.name for p in places if p.repo in repos and not p.gone)
            if names:
                found[sha] = names
        return found

    def branch_shas(self, repo: str, tree: str, branch: str) -> dict[str, bool]:
        """Every commit stored as reached by `branch` of `tree`, and whether it is gone."""
        return {
            str(sha): bool(gone)
            for sha, gone in self._connection.execute(
                "SELECT sha, gone FROM tree_commits WHERE repo = ? AND tree = ? "
                "AND branch = ?",
                (repo, tree, branch),
            )
        }

    def branch_tip(self, repo: str, tree: str, branch: str) -> str | None:
        """The tip `branch` of `tree` had when it was last recorded."""
        row = self._connection.execute(
            "SELECT tip FROM branch_tips WHERE repo = ? AND tree = ? AND branch = ?",
            (repo, tree, branch),
        ).fetchone()
        return None if row is None else str(row[0])

    def releases(self, repo: str, shas: Sequence[str]) -> dict[str, str]:
        """The first tag of `repo` that contains each of `shas`, where one does."""
        found: dict[str, str] = {}
        for start in range(0, len(shas), 500):
            marks, chunk = in_list(shas[start : start + 500])
            for sha, tag in self._connection.execute(
                f"SELECT sha, tag FROM releases WHERE repo = ? AND sha IN ({marks})",
                (repo, *chunk),
            ):
                found[str(sha)] = str(tag)
        return found

    def release_tags(self, repo: str) -> dict[str, str]:
        """The tags of `repo` already walked for releases, and the commits they named."""
        return {
            str(tag): str(target)
            for tag, target in self._connection.execute(
                "SELECT tag, target FROM release_tags WHERE repo = ?", (repo,)
            )
        }

    def pull_requests(
        self, low: int, high: int, *, limit: int = 500
    ) -> list[StoredMessage]:
        """The pull requests (kind pull) dated in [low, high] (Unix times), newest
        first: a range over the date index."""
        return self._select(
            "kind = 'pull' AND date BETWEEN ? AND ?",
            (low, high, limit),
            suffix="ORDER BY date DESC LIMIT ?",
        )

    def subjects_by_key(self, keys: Sequence[str]) -> list[SubjectRow]:
        """(subject_key, message_id, subject, X-stable:, X-stable-base:) of every
        message whose subject key is one of `keys`, light (no files or lists): one
        query per 500 keys."""
        return self._by_keys(
            f"SELECT {_SUBJECT_COLUMNS} FROM messages", keys, _subject_row
        )

    def _by_keys(
        self,
        select: str,
        keys: Sequence[str],
        row: Callable[[Sequence[object]], _Row],
        where: str = "",
    ) -> list[_Row]:
        """`select` (`where`, then) of the messages whose subject key is one of
        `keys`, each as `row` makes it, by date: one query per 500 keys."""
        found: list[_Row] = []
        for start in range(0, len(keys), 500):
            marks, chunk = in_list(keys[start : start + 500])
            found += map(
                row,
                self._connection.execute(
                    f"{select} WHERE {where}subject_key IN ({marks}) "
                    "ORDER BY date, seq",
                    chunk,
                ),
            )
        return found

    def has_subject_key_starting(self, start: str) -> bool:
        """Whether any message's subject key starts with `start` (not empty): one
        step into the subject index."""
        row = self._connection.execute(
            "SELECT 1 FROM messages WHERE subject_key >= ? AND subject_key < ? LIMIT 1",
            (start, _above(start)),
        ).fetchone()
        return row is not None

    def subjects_by_key_prefix(
        self, prefix: str, *, limit: int = 100
    ) -> list[SubjectRow]:
        """subjects_by_key() of the messages whose subject key starts with `prefix`
        (a range over the subject index)."""
        return list(
            map(
                _subject_row,
                self._connection.execute(
                    f"SELECT {_SUBJECT_COLUMNS} FROM messages "  # noqa: S608 - ours
                    "WHERE subject_key >= ? AND subject_key < ? ORDER BY date, seq LIMIT ?",
                    (prefix, _above(prefix), limit),
                ),
            )
        )

    def process_classified(self) -> bool:
        """Whether every stored message's `process` is written (migration 18 left
        none pending): process_by_key() and process_by_key_prefix() may answer."""
        return read_meta(self._connection, PROCESS_PENDING_KEY) is None

    def process_by_key(self, keys: Sequence[str]) -> list[ProcessRow]:
        """The rows of subjects_by_key(keys) that are mails of the backport process
        (messages.process), in the same order: one query per 500 keys, over the
        partial index of process mails only, where subjects_by_key() read every
        mail of the title (the patch and its replies) to keep next to none."""
        # 2,000 backports' titles (benchmarks/backports.py): 2.7 ms, not 9.3 ms.
        return self._by_keys(
            f"SELECT {_PROCESS_COLUMNS} FROM messages INDEXED BY messages_process",
            keys,
            _process_row,
            where="process IS NOT NULL AND ",
        )

    def process_by_key_prefix(
        self, prefix: str, *, limit: int = 100
    ) -> list[ProcessRow]:
        """The rows of subjects_by_key_prefix(prefix, limit=limit) that are mails of
        the backport process, in the same order (the limit counts every mail, as
        there)."""
        return list(
            map(
                _process_row,
                self._connection.execute(
                    f"SELECT {_PROCESS_COLUMNS} FROM (SELECT {_PROCESS_COLUMNS}, date, "  # noqa: S608 - ours
                    "seq FROM messages WHERE subject_key >= ? AND subject_key < ? "
                    "ORDER BY date, seq LIMIT ?) WHERE process IS NOT NULL "
                    "ORDER BY date, seq",
                    (prefix, _above(prefix), limit),
                ),
            )
        )


def _above(prefix: str) -> str:
    """The least string above every string that starts with `prefix` (one that ends
    in a character below U+10FFFF): the end of its range over an index (the store
    compares UTF-8 bytes, in code point order). `prefix + "\\uffff"` would miss a
    string that goes on with a character past U+FFFF."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


# The columns of a SubjectRow, in its order (_subject_row reads them back).
_SUBJECT_COLUMNS = "subject_key, message_id, subject, stable, stable_base, seq"


# The columns of a ProcessRow, in its order (_process_row reads them back).
_PROCESS_COLUMNS = "subject_key, message_id, subject, process, stable_base"


def _process_row(row: Sequence[object]) -> ProcessRow:
    key, message_id, subject, process, stable_base = row
    return ProcessRow(
        str(key),
        str(message_id),
        str(subject),
        str(process),
        None if stable_base is None else str(stable_base),
    )


def _subject_row(row: Sequence[object]) -> SubjectRow:
    key, message_id, subject, stable, stable_base, seq = row
    return SubjectRow(
        str(key),
        str(message_id),
        str(subject),
        None if stable is None else str(stable),
        None if stable_base is None else str(stable_base),
        int(str(seq)),
    )
