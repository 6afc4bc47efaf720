"""Judging chunks of commits: one process's store, people and git reader.

`Judge` reads a chunk's facts from the store (e2g.api.audit.facts), learns the
people in it through the mailmap, and decides each commit (e2g.api.audit.verdicts).
An audit of one chunk judges in its own process; a longer one starts worker
processes (`start`, `judge_chunk`), each with a Judge for its life.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from e2g.api.audit.facts import CommitFacts, People, Sources, addresses, read_facts
from e2g.api.audit.model import CommitAudit
from e2g.api.audit.verdicts import Rules, decide
from e2g.api.basis import open_store
from e2g.config import Settings
from e2g.git.commits import CommitMessage, CommitReader
from e2g.git.repo import Repo
from e2g.index.store import Store


class Job(NamedTuple):
    """What every judge needs: where the store and the repository are, the rules."""

    settings: Settings
    root: Path  # the repository
    key: str  # its key in the store
    rules: Rules


class Judge:
    def __init__(self, job: Job) -> None:
        self.job = job
        repository = Repo.open(job.root)
        self.store = open_store(job.settings)
        self.people = People(repository)
        self.reader = _LazyReader(repository)

    def __enter__(self) -> Judge:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self.reader.close()
        self.store.close()

    def judge(self, chunk: Sequence[CommitMessage]) -> list[CommitAudit]:
        facts = read_facts(self.store, self.job.key, chunk)
        self.people.learn(addresses(facts))
        facts = self.reader.fill_patch_ids(facts)
        return _judged(self.store, facts, self.people, self.job.rules, self.reader)


_JUDGE: Judge | None = None


def start(job: Job) -> None:
    """A worker process's start: its Judge, closed when the pool ends it."""
    global _JUDGE
    _JUDGE = Judge(job)
    import multiprocessing.util  # here: an audit of one chunk starts no process

    multiprocessing.util.Finalize(_JUDGE, _JUDGE.close, exitpriority=10)


def judge_chunk(chunk: list[CommitMessage]) -> list[CommitAudit]:
    assert _JUDGE is not None
    return _JUDGE.judge(chunk)


def _judged(
    store: Store,
    facts: list[CommitFacts],
    people: People,
    rules: Rules,
    reader: _LazyReader,
) -> list[CommitAudit]:
    """The chunk's verdicts. A verdict that compares versions and finds the
    commit's code in no posting asks for its diff; those commits are read from git
    together, and judged again with it."""
    wanted: set[tuple[str, bool]] = set()

    def none_yet(sha: str, renames: bool) -> str | None:
        wanted.add((sha, renames))
        return None

    first = Sources(posted_diff=store.diff, body=store.body, commit_diff=none_yet)
    judged = [decide(f, people=people, rules=rules, sources=first) for f in facts]
    if not wanted:
        return judged
    diffs = {
        (sha, renames): diff
        for renames in (True, False)
        for sha, diff in reader.diffs(
            sorted(sha for sha, form in wanted if form is renames), renames=renames
        ).items()
    }
    again = Sources(
        posted_diff=store.diff,
        body=store.body,
        commit_diff=lambda sha, renames: diffs.get((sha, renames)),
    )
    redo = {sha for sha, _ in wanted}
    return [
        decide(f, people=people, rules=rules, sources=again)
        if f.commit.sha in redo
        else verdict
        for f, verdict in zip(facts, judged, strict=True)
    ]


class _LazyReader:
    """Commit readers with diffs for the whole audit, started when first asked
    (most audits after a `match` never need one): one with renames, as match
    reads commits, and one without, for postings that show a renamed file as a
    deletion and an addition."""

    def __init__(self, repository: Repo) -> None:
        self._repository = repository
        self._readers: dict[bool, CommitReader] = {}

    def close(self) -> None:
        for reader in self._readers.values():
            reader.close()
        self._readers.clear()

    def _read(
        self, shas: Sequence[str], *, renames: bool = True
    ) -> dict[str, tuple[str | None, str]]:
        """(patch-id, diff) of each of `shas` git gives (merges give nothing)."""
        if not shas:
            return {}
        if renames not in self._readers:
            self._readers[renames] = self._repository.reader(renames=renames)
        return {
            commit.sha: (commit.patch.patch_id, commit.patch.diff)
            for commit in self._readers[renames].commits(shas)
        }

    def fill_patch_ids(self, facts: list[CommitFacts]) -> list[CommitFacts]:
        """Commits matched before the store kept patch-ids get theirs from git."""
        missing = [
            f.commit.sha
            for f in facts
            if f.row is not None and f.row.patch_id is None and f.postings
        ]
        found = self._read(missing)
        return [
            f._replace(row=f.row._replace(patch_id=found[f.commit.sha][0]))
            if f.row is not None and f.commit.sha in found
            else f
            for f in facts
        ]

    def diffs(self, shas: Sequence[str], *, renames: bool) -> dict[str, str]:
        return {
            sha: diff for sha, (_, diff) in self._read(shas, renames=renames).items()
        }
