"""Commits to postings: `link` (one commit), `match` (a range, stored), and the JSON shape.

The one place that brings git (git.repo), the diff tools (mail.patch,
mail.trailers) and the matcher together: the matcher never runs git and never parses
diffs itself, it gets a MatchRequest.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.util
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from e2g.api.core import open_store
from e2g.config import Settings
from e2g.errors import EmptyStore, UsageError
from e2g.git.repo import CommitReader, Repo
from e2g.index.link_writer import LinkRows, LinkWriter, link_rows
from e2g.index.schema import WEIGHTS_PENDING_KEY
from e2g.index.store import Store
from e2g.ingest import processes
from e2g.mail.patch import Lines, diff_lines
from e2g.mail.trailers import linked_message_ids
from e2g.matcher.candidates import EARLIEST, LATEST, MatchRequest
from e2g.matcher.cascade import Matcher
from e2g.matcher.scoring import predates
from e2g.model import Commit, CommitInfo, Compact, LinkResult, commit_info

BATCH = 200


def request_for(
    commit: Commit, *, ignore_trailers: bool, lines: Lines | None = None
) -> MatchRequest:
    """What the matcher needs of `commit`; pass `lines` when reading it gave them."""
    linked = () if ignore_trailers else tuple(linked_message_ids(commit.trailers))
    if lines is None:
        lines = diff_lines(commit.patch.diff)
    return MatchRequest(commit=commit, commit_lines=lines, linked_ids=linked)


def _matcher(settings: Settings) -> Matcher:
    store = open_store(settings)
    if store.max_seq() == 0:
        store.close()
        raise EmptyStore(
            f"the store in {settings.data_dir} holds no mail: run `e2g ingest ARCHIVE` first"
        )
    return Matcher(store, lines_of=diff_lines, url_for=settings.url_for)


def link(
    settings: Settings, rev: str, *, repo: Path, ignore_trailers: bool = False
) -> LinkResult:
    """Every posting of the commit `rev`, or an explicit no match."""
    repository = Repo.open(repo)
    sha = repository.resolve(rev)
    commit = next(iter(repository.commits([sha])), None)
    if commit is None:
        raise UsageError(
            f"{rev} is a merge commit; e2g links the commits it merged: e2g match {rev}^1..{rev}"
        )
    matcher = _matcher(settings)
    try:
        result = matcher.match(request_for(commit, ignore_trailers=ignore_trailers))
        if result.postings:
            return result
        note = _outside_note(matcher.store, commit)
        if not note and commit.sha in repository.shallow_boundary():
            note = (
                "the commit is where this shallow clone's history stops, so its diff "
                "is unknown: fetch more history (git fetch --deepen=1) and try again"
            )
        return replace(result, note=note)
    finally:
        matcher.store.close()


def outside_archive(
    commit: Commit | CommitInfo, span: tuple[datetime, datetime]
) -> bool:
    """Whether the matcher's date window for this commit misses every message."""
    low, high = span
    return commit.commit_date + LATEST < low or commit.author_date - EARLIEST > high


def _outside_note(store: Store, commit: Commit) -> str:
    """Why no match was even possible, when the commit predates or follows all mail."""
    span = store.date_range()
    if span is None:
        return ""
    return outside_text(commit, span)


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


def link_json(result: LinkResult) -> dict[str, object]:
    """The stable JSON object of `e2g link --json` and `/api/v1/commits/{rev}`."""
    commit = result.commit
    return {
        "commit": commit.sha,
        "subject": commit.subject,
        "author": f"{commit.author.name} <{commit.author.email}>",
        "author_date": commit.author_date.isoformat(),
        "commit_date": commit.commit_date.isoformat(),
        "files": list(commit.files),
        "status": result.status,
        "postings": [
            {
                "message_id": posting.message_id,
                "list": posting.lists[0] if posting.lists else None,
                "lists": list(posting.lists),
                "subject": posting.subject,
                "date": posting.date.isoformat() if posting.date else None,
                "author": f"{posting.author.name} <{posting.author.email}>",
                "version": posting.version,
                "kind": posting.kind,
                "applied": posting.applied,
                "method": posting.method,
                "score": posting.score,
                "url": posting.url,
                "thread_root": posting.thread_root,
                "replies": posting.replies,
                "participants": list(posting.participants),
                "reviewers": list(posting.reviewers),
                "evidence": [evidence.detail for evidence in posting.evidence],
            }
            for posting in result.postings
        ],
        "rejected": [
            {
                "message_id": r.message_id,
                "subject": r.subject,
                "score": r.score,
                "reason": r.reason,
            }
            for r in result.rejected
        ],
        "note": result.note,
    }


@dataclass(slots=True)
class MatchSummary:
    commits: int = 0
    matched: int = 0
    no_match: int = 0
    skipped: int = 0  # already matched on an earlier run
    outside: int = 0  # unmatched and dated outside the archive: no match was possible
    merges: int = 0
    elapsed: float = 0.0
    by_method: Counter[str] = field(default_factory=Counter)
    # The store holds patches stored before their line weights (schema 3): the
    # matcher reads more of their diffs until `e2g ingest` weighs them.
    unweighed: bool = False

    @property
    def rate(self) -> float:
        return self.commits / self.elapsed if self.elapsed > 0 else 0.0

    def as_dict(self) -> dict[str, object]:
        return {
            "commits": self.commits,
            "matched": self.matched,
            "no_match": self.no_match,
            "skipped": self.skipped,
            "outside_archive": self.outside,
            "merges": self.merges,
            "elapsed": round(self.elapsed, 3),
            "commits_per_second": round(self.rate, 1),
            "by_method": dict(self.by_method),
        }


# -- batch matching in worker processes ---------------------------------------------


@dataclass(frozen=True, slots=True)
class _Job:
    """What every worker needs: where the mail and the commits are, and how to match."""

    settings: Settings
    root: Path
    ignore_trailers: bool
    span: tuple[datetime, datetime] | None  # the archive's dates
    max_seq: int  # the store's newest message: links record what they saw
    as_json: bool  # whether the caller shows each answer as link_json()


@dataclass(frozen=True, slots=True)
class Matched(Compact):
    """One commit's answer as a worker hands it to the main process: already in the
    shapes the store and the output take, so the main process (one core among the
    workers) only stores and prints, and the answer crosses as plain values."""

    sha: str
    method: str | None  # the applied posting's; None: no match
    outside: bool  # unmatched and dated outside the archive: no match was possible
    rows: LinkRows
    json: dict[str, object] | None  # link_json(), when the job asks for it


def matched(result: LinkResult, job: _Job) -> Matched:
    """`result` as the main process takes it."""
    applied = next((posting for posting in result.postings if posting.applied), None)
    return Matched(
        sha=result.commit.sha,
        method=applied.method if applied else None,
        outside=applied is None
        and job.span is not None
        and outside_archive(result.commit, job.span),
        rows=link_rows(result, max_seq=job.max_seq),
        json=link_json(result) if job.as_json else None,
    )


# Commits per worker task: the last tasks' size, and the first ones' (see _tasks).
# Each worker keeps one git process for all its tasks (CommitReader), so small
# last tasks cost no git start-up. A task's results are held until it ends: the
# largest bounds their memory.
TASK = 50
MAX_TASK = 1000
# A task: (sha, whether it predates the archive, so only its metadata is read).
Task = list[tuple[str, bool]]


class _Worker:
    """One process's matcher, repository and git readers, kept for its life."""

    def __init__(self, job: _Job) -> None:
        self.job = job
        self.matcher = _matcher(job.settings)
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
        late = [sha for sha, early in task if not early]
        for commit, lines in self._reader(diffs=True).read(late):
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
        return [matched(results[sha], self.job) for sha, _ in task if sha in results]

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


def _worker_start(job: _Job) -> None:
    global _WORKER
    _WORKER = _Worker(job)
    # Run when the pool's worker exits normally: git then sees the end of its input.
    multiprocessing.util.Finalize(_WORKER, _WORKER.close, exitpriority=10)


def _worker_match(task: Task) -> list[Matched]:
    assert _WORKER is not None
    return _WORKER.match(task)


def _tasks(
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


def _results(
    job: _Job, todo: Sequence[tuple[str, bool]], *, jobs: int
) -> Iterator[Matched]:
    """Match in `jobs` processes; each reads its own commits, so git's output and the
    diff parsing are spread over the cores too."""
    if jobs <= 1:
        worker = _Worker(job)
        try:
            for task in _tasks(todo, jobs=1):
                yield from worker.match(task)
        finally:
            worker.close()
        return
    context = processes.context()
    with context.Pool(jobs, initializer=_worker_start, initargs=(job,)) as pool:
        for results in pool.imap(_worker_match, _tasks(todo, jobs=jobs)):
            yield from results
        pool.close()  # workers end normally, closing their git readers
        pool.join()


def repo_key(repository: Repo) -> str:
    return str(repository.root.resolve())


def match(  # noqa: PLR0913 - options are keyword-only
    settings: Settings,
    revs: Sequence[str],
    *,
    repo: Path,
    all_refs: bool = False,
    ignore_trailers: bool = False,
    jobs: int = 0,
    on_result: Callable[[Matched, MatchSummary], None] | None = None,
    as_json: bool = False,
) -> MatchSummary:
    """Match every non-merge commit `git rev-list` gives for `revs`; store the links.

    `on_result` sees each commit's answer as it is stored; with `as_json`, the
    answer carries link_json() too."""
    started = time.monotonic()
    repository = Repo.open(repo)
    dated, merges = repository.dated_rev_list(revs, all_refs=all_refs)
    summary = MatchSummary(merges=merges)
    with open_store(settings) as store:
        max_seq = store.max_seq()
        span = store.date_range()
        summary.unweighed = store.meta(WEIGHTS_PENDING_KEY) == "1"
    if max_seq == 0:
        raise EmptyStore(
            f"the store in {settings.data_dir} holds no mail: run `e2g ingest ARCHIVE` first"
        )
    jobs = jobs if jobs > 0 else min(2, multiprocessing.cpu_count())
    with LinkWriter(settings.store_path, repo=repo_key(repository)) as writer:
        done = writer.done(max_seq=max_seq)
        todo = [
            (sha, span is not None and predates(_utc(stamp), span[0]))
            for sha, stamp in dated
            if sha not in done
        ]
        summary.skipped = len(dated) - len(todo)
        pending: list[LinkRows] = []
        job = _Job(settings, repository.root, ignore_trailers, span, max_seq, as_json)
        for answer in _results(job, todo, jobs=jobs):
            _count(summary, answer)
            pending.append(answer.rows)
            if len(pending) >= BATCH:
                writer.write(pending)
                pending = []
            if on_result is not None:
                summary.elapsed = time.monotonic() - started
                on_result(answer, summary)
        writer.write(pending)
    summary.elapsed = time.monotonic() - started
    return summary


def _utc(stamp: int) -> datetime:
    return datetime.fromtimestamp(stamp, UTC)


def _count(summary: MatchSummary, answer: Matched) -> None:
    summary.commits += 1
    if answer.method is None:
        summary.no_match += 1
        summary.outside += answer.outside
        return
    summary.matched += 1
    summary.by_method[answer.method] += 1
