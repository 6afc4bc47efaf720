"""Batch matching: many commits of one repository, matched in worker processes.

`e2g match` gives `results()` the commits to match (each sha, and whether it
predates the archive) and gets back one `Matched` per commit, in their order, as
the workers finish them. Each worker keeps one matcher (and its caches) and one
long-lived git reader for its whole life, and reads its own commits, so git's
output and the diff parsing are spread over the cores too. Work is handed out by
guided self-scheduling (`tasks()`): large tasks first, small ones at the end. A
worker answers in the shapes the store and the output take (`Matched`), so the
main process, one core among the workers, only stores and prints.

This module sits in the matcher layer: below `e2g.api` and `e2g.config`, beside
`e2g.ingest`, and imports none of them. What it needs from them comes in as values:

- `Job.open_matcher`: how a worker gets its Matcher. Opening the store the user's
  Settings name (and saying so when nothing was ingested) is the api's job
  (`e2g.api.match`); a module-level function with its arguments, so that it pickles.
- `Job.to_json`: the JSON each answer carries when the caller prints answers
  (`e2g.render.link_json`, passed down by the CLI); made in the worker like the
  rest of the answer, so the streamed output is what the main process made before.

How worker processes start (fork, or a fork server beside other threads) is
`e2g.processes`, shared with the ingest's parse workers.

It also holds the two pure pieces that matching one commit (`e2g.api.link.link`)
shares with the workers: `request_for` (a commit as the matcher takes it) and
`outside_archive`/`outside_text` (whether the matcher's date window misses every
message).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from e2g.git.commits import CommitReader
from e2g.git.repo import Repo
from e2g.index.link_writer import LinkRows, link_rows
from e2g.mail.patch import Lines, diff_lines
from e2g.mail.trailers import linked_message_ids
from e2g.matcher.candidates import EARLIEST, LATEST, MatchRequest
from e2g.matcher.cascade import Matcher
from e2g.model.links import Commit, CommitInfo, LinkResult, commit_info

# Commits per worker task: the last tasks' size, and the first ones' (see tasks()).
# Each worker keeps one git process for all its tasks (CommitReader), so small
# last tasks cost no git start-up. A task's results are held until it ends: the
# largest bounds their memory.
TASK = 50
MAX_TASK = 1000
# A task: (sha, whether it predates the archive, so only its metadata is read).
Task = list[tuple[str, bool]]


def request_for(
    commit: Commit, *, ignore_trailers: bool, lines: Lines | None = None
) -> MatchRequest:
    """What the matcher needs of `commit`; pass `lines` when reading it gave them."""
    linked = () if ignore_trailers else tuple(linked_message_ids(commit.trailers))
    if lines is None:
        lines = diff_lines(commit.patch.diff)
    return MatchRequest(commit=commit, commit_lines=lines, linked_ids=linked)


def outside_archive(
    commit: Commit | CommitInfo, span: tuple[datetime, datetime]
) -> bool:
    """Whether the matcher's date window for this commit misses every message."""
    low, high = span
    return commit.commit_date + LATEST < low or commit.author_date - EARLIEST > high


def outside_text(
    commit: Commit | CommitInfo, span: tuple[datetime, datetime] | None
) -> str:
    if span is not None and outside_archive(commit, span):
        low, high = span
        return (
            f"the commit ({commit.commit_date:%Y-%m-%d}) is outside the archive's dates "
            f"({low:%Y-%m-%d} .. {high:%Y-%m-%d}): ingest the list's archive of that time"
        )
    return ""


class Job(NamedTuple):
    """What every worker needs: how to match, where the commits are, what to answer."""

    open_matcher: Callable[[], Matcher]  # called once in each worker
    root: Path  # the repository
    ignore_trailers: bool
    span: tuple[datetime, datetime] | None  # the archive's dates
    max_seq: int  # the store's newest message: links record what they saw
    # Each answer's JSON, when the caller shows answers (e2g.render.link_json).
    to_json: Callable[[LinkResult], dict[str, object]] | None = None


class Matched(NamedTuple):
    """One commit's answer as a worker hands it to the main process: already in the
    shapes the store and the output take, so the main process (one core among the
    workers) only stores and prints, and the answer crosses as plain values."""

    sha: str
    method: str | None  # the applied posting's; None: no match
    outside: bool  # unmatched and dated outside the archive: no match was possible
    rows: LinkRows
    json: dict[str, object] | None  # job.to_json(result), when the job asks for it


def matched(result: LinkResult, job: Job, *, patch_id: str | None = None) -> Matched:
    """`result` as the main process takes it; `patch_id` is the commit's own."""
    applied = next((posting for posting in result.postings if posting.applied), None)
    return Matched(
        sha=result.commit.sha,
        method=applied.method if applied else None,
        outside=applied is None
        and job.span is not None
        and outside_archive(result.commit, job.span),
        rows=link_rows(result, max_seq=job.max_seq, patch_id=patch_id),
        json=job.to_json(result) if job.to_json is not None else None,
    )


class _Worker:
    """One process's matcher, repository and git readers, kept for its life."""

    def __init__(self, job: Job) -> None:
        self.job = job
        self.matcher = job.open_matcher()
        self.repository = Repo.open(job.root)
        self._readers: dict[bool, CommitReader] = {}

    def match(self, task: Task) -> list[Matched]:
        """Match each commit of `task`, in its order.

        A commit that predates the archive cannot match: git lists its files and
        counts, without producing a diff that nothing would read.
        """
        # One snapshot per task: the main process commits links meanwhile.
        self.matcher.store.hold_snapshot()
        results: dict[str, LinkResult] = {}
        patch_ids: dict[str, str | None] = {}
        late = [sha for sha, early in task if not early]
        for commit, lines in self._reader(diffs=True).read(late):
            patch_ids[commit.sha] = commit.patch.patch_id
            results[commit.sha] = self.matcher.match(
                request_for(
                    commit, ignore_trailers=self.job.ignore_trailers, lines=lines
                )
            )
        early = [sha for sha, early in task if early]
        for commit, _ in self._reader(diffs=False).read(early) if early else ():
            info = commit_info(commit)
            results[commit.sha] = LinkResult(
                info, (), (), outside_text(info, self.job.span)
            )
        return [
            matched(results[sha], self.job, patch_id=patch_ids.get(sha))
            for sha, _ in task
            if sha in results
        ]

    def close(self) -> None:
        for reader in self._readers.values():
            reader.close()
        self._readers.clear()
        self.matcher.store.close()

    def _reader(self, *, diffs: bool) -> CommitReader:
        if diffs not in self._readers:
            self._readers[diffs] = self.repository.reader(diffs=diffs)
        return self._readers[diffs]


_WORKER: _Worker | None = None


def _worker_start(job: Job) -> None:
    global _WORKER
    _WORKER = _Worker(job)
    import multiprocessing.util  # here: `e2g link` matches without a process pool

    # Run when the pool's worker exits normally: git then sees the end of its input.
    multiprocessing.util.Finalize(_WORKER, _WORKER.close, exitpriority=10)


def _worker_match(task: Task) -> list[Matched]:
    assert _WORKER is not None
    return _WORKER.match(task)


def tasks(
    todo: Sequence[tuple[str, bool]],
    *,
    jobs: int,
    smallest: int = TASK,
    largest: int = MAX_TASK,
) -> Iterator[Task]:
    """Tasks that shrink as the work runs out (guided self-scheduling).

    Large first tasks keep neighbouring commits in one worker (whose caches then
    serve them all); small last ones keep every worker busy to the end.
    """
    start = 0
    while start < len(todo):
        size = min(largest, max(smallest, (len(todo) - start) // (2 * jobs)))
        yield list(todo[start : start + size])
        start += size


def results(
    job: Job,
    todo: Sequence[tuple[str, bool]],
    *,
    jobs: int,
) -> Iterator[Matched]:
    """Match in `jobs` processes (started as e2g.processes says); each reads its own commits,
    so git's output and the diff parsing are spread over the cores too. One job
    matches here, in this process."""
    if jobs <= 1:
        worker = _Worker(job)
        try:
            for task in tasks(todo, jobs=1):
                yield from worker.match(task)
        finally:
            worker.close()
        return
    from e2g import processes

    with processes.context().Pool(
        jobs, initializer=_worker_start, initargs=(job,)
    ) as pool:
        for answers in pool.imap(_worker_match, tasks(todo, jobs=jobs)):
            yield from answers
        pool.close()  # workers end normally, closing their git readers
        pool.join()
