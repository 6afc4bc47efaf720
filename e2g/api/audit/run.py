"""`e2g audit`: was the code that landed the code that was reviewed?

A reading of stored facts, not a new matcher: first `e2g match` stores what it has
not answered yet (unless the caller only reads, as the web does), then the
archive's dates are read (what a commit with no posting is judged against), one
streaming `git log` lists the range's commits with their committers and messages,
and each chunk of them is judged from the store (`facts.read_facts`, many commits
per query; e2g.api.audit.judge), in worker processes when there is more than one
chunk. Git is read again only for commits whose code no posting carries and whose
verdict compares versions (or that an older e2g matched without keeping their
patch-id), through one commit reader per process.
"""

from __future__ import annotations

import itertools
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from e2g.api.answers import repo_key
from e2g.api.audit.facts import CHUNK, archive_window
from e2g.api.audit.judge import Job, Judge, judge_chunk, start
from e2g.api.audit.model import AuditSummary, CommitAudit
from e2g.api.audit.verdicts import Rules
from e2g.api.basis import open_store
from e2g.api.match import MatchSummary, match, match_commits
from e2g.config import Settings
from e2g.errors import UsageError
from e2g.git.commits import CommitMessage
from e2g.git.repo import Repo
from e2g.matcher.batch import Matched


class AuditOptions(NamedTuple):
    revs: Sequence[str] = ()
    all_refs: bool = False
    strict: bool = False
    by: str = ""  # "committer", "dir" or ""
    match_first: bool = True  # False: read only (the web); unmatched are uncertain
    jobs: int = 0
    limit: int = 0  # at most this many commits (0: all), newest first
    walk: bool = True  # False: exactly the commits `revs` name (no history walk)
    exempt: tuple[str, ...] = ()  # more subject patterns than config's


def audit(
    settings: Settings,
    *,
    repo: Path,
    options: AuditOptions,
    on_commit: Callable[[CommitAudit], None] | None = None,
    on_match: Callable[[int], None] | None = None,
) -> AuditSummary:
    """Judge every non-merge commit of `options.revs` (default HEAD); each verdict
    goes to `on_commit` as it is made, in the range's order; the summary is returned.
    `on_match` hears how many commits were matched first, as they are."""
    started = time.monotonic()
    repository = Repo.open(repo)
    summary = AuditSummary(by=options.by, strict=options.strict)
    if options.match_first:
        summary.matched = _match(settings, repo, options, on_match)
    with open_store(settings) as store:
        summary.archive = archive_window(store, repo_key(repository))
    rules = Rules(
        strict=options.strict,
        exempt=_patterns((*settings.audit_exempt, *options.exempt)),
        archive=summary.archive,
    )
    for verdict in _verdicts(settings, repository, options, rules):
        summary.add(verdict)
        if on_commit is not None:
            on_commit(verdict)
    summary.elapsed = time.monotonic() - started
    return summary


def range_key(repo: Path, revs: Sequence[str]) -> tuple[object, ...] | None:
    """What an audit of `revs` reads besides the store and the settings, as a key
    for a cache: the range's commits as full object names, HEAD's too (a bare
    repository's mailmap is HEAD:.mailmap), and the work tree's .mailmap; None
    when git cannot name them (then cache nothing)."""
    repository = Repo.open(repo)
    names = repository.range_names(("HEAD", *revs))
    if names is None:
        return None
    try:
        found = (repository.root / ".mailmap").stat()
    except OSError:
        return names
    return (*names, found.st_mtime_ns, found.st_size)


def _match(
    settings: Settings,
    repo: Path,
    options: AuditOptions,
    on_match: Callable[[int], None] | None,
) -> int:
    """Match the range's commits `e2g match` never answered; how many it matched."""
    if not options.walk:
        return match_commits(settings, options.revs, repo=repo)

    def progress(_: Matched, summary: MatchSummary) -> None:
        if on_match is not None:
            on_match(summary.commits)

    return match(
        settings,
        options.revs,
        repo=repo,
        all_refs=options.all_refs,
        jobs=options.jobs,
        on_result=progress,
    ).commits


def _patterns(texts: Sequence[str]) -> tuple[re.Pattern[str], ...]:
    try:
        return tuple(re.compile(text) for text in texts)
    except re.error as error:
        raise UsageError(
            f"an [audit] exempt pattern is no regular expression: {error}"
        ) from None


def _verdicts(
    settings: Settings, repository: Repo, options: AuditOptions, rules: Rules
) -> Iterator[CommitAudit]:
    """The verdicts, in the range's order: judged here, or, for a range of more
    than one chunk, in worker processes (a chunk each, in turn), which share the
    work of reading the store and deciding over the cores."""
    job = Job(settings, repository.root, repo_key(repository), rules)
    commits = repository.commit_messages(
        options.revs, all_refs=options.all_refs, walk=options.walk
    )
    chunks = _chunks(commits, limit=options.limit)
    first = list(itertools.islice(chunks, 2))
    jobs = options.jobs if options.jobs > 0 else min(2, os.cpu_count() or 1)
    if len(first) < 2 or jobs < 2:
        with Judge(job) as judge:
            for chunk in itertools.chain(first, chunks):
                yield from judge.judge(chunk)
        return
    from e2g import processes

    with processes.context().Pool(jobs, initializer=start, initargs=(job,)) as pool:
        for found in pool.imap(judge_chunk, itertools.chain(first, chunks)):
            yield from found
        pool.close()  # workers end normally, closing their store and git reader
        pool.join()


def _chunks(
    commits: Iterator[CommitMessage], *, limit: int
) -> Iterator[list[CommitMessage]]:
    chunk: list[CommitMessage] = []
    for number, commit in enumerate(commits, start=1):
        chunk.append(commit)
        if len(chunk) >= CHUNK:
            yield chunk
            chunk = []
        if limit and number >= limit:
            break
    if chunk:
        yield chunk
