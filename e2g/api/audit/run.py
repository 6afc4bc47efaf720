"""`e2g audit`: was the code that landed the code that was reviewed?

A reading of stored facts, not a new matcher: first `e2g match` stores what it has
not answered yet (unless the caller only reads, as the web does), then one streaming
`git log` lists the range's commits with their committers and messages, and each
chunk of them is judged from the store (`facts.read_facts`, many commits per
query). Git is read again only for commits whose code no posting carries and whose
verdict compares versions (or that an older e2g matched without keeping their
patch-id), through one commit reader for the whole audit.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from e2g.api.audit.facts import (
    CHUNK,
    CommitFacts,
    People,
    Sources,
    addresses,
    read_facts,
)
from e2g.api.audit.model import AuditSummary, CommitAudit
from e2g.api.audit.verdicts import Rules, decide
from e2g.api.core import open_store
from e2g.api.link import match, match_commits, repo_key
from e2g.config import Settings
from e2g.errors import UsageError
from e2g.git.repo import CommitMessage, CommitReader, Repo
from e2g.index.store import Store


@dataclass(frozen=True, slots=True)
class AuditOptions:
    revs: Sequence[str] = ()
    all_refs: bool = False
    strict: bool = False
    by: str = ""  # "committer", "dir" or ""
    match_first: bool = True  # False: read only (the web); unmatched are uncertain
    jobs: int = 0
    limit: int = 0  # at most this many commits (0: all), newest first
    walk: bool = True  # False: exactly the commits `revs` name (no history walk)
    exempt: tuple[str, ...] = field(default=())  # more subject patterns than config's


def audit(
    settings: Settings,
    *,
    repo: Path,
    options: AuditOptions,
    on_commit: Callable[[CommitAudit], None] | None = None,
) -> AuditSummary:
    """Judge every non-merge commit of `options.revs` (default HEAD); each verdict
    goes to `on_commit` as it is made, in the range's order; the summary is returned."""
    started = time.monotonic()
    repository = Repo.open(repo)
    summary = AuditSummary(by=options.by, strict=options.strict)
    if options.match_first:
        summary.matched = _match(settings, repo, options)
    rules = Rules(
        strict=options.strict,
        exempt=_patterns((*settings.audit_exempt, *options.exempt)),
    )
    for verdict in _verdicts(settings, repository, options, rules):
        summary.add(verdict)
        if on_commit is not None:
            on_commit(verdict)
    summary.elapsed = time.monotonic() - started
    return summary


def _match(settings: Settings, repo: Path, options: AuditOptions) -> int:
    """Match the range's commits `e2g match` never answered; how many it matched."""
    if not options.walk:
        return match_commits(settings, options.revs, repo=repo)
    return match(
        settings, options.revs, repo=repo, all_refs=options.all_refs, jobs=options.jobs
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
    key = repo_key(repository)
    people = People(repository)
    commits = repository.commit_messages(
        options.revs, all_refs=options.all_refs, walk=options.walk
    )
    with open_store(settings) as store, _LazyReader(repository) as reader:
        for chunk in _chunks(commits, limit=options.limit):
            facts = read_facts(store, key, chunk)
            people.learn(addresses(facts))
            yield from _judged(
                store, reader.fill_patch_ids(facts), people, rules, reader
            )


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
    wanted: set[str] = set()

    def none_yet(sha: str) -> str | None:
        wanted.add(sha)
        return None

    first = Sources(posted_diff=store.diff, body=store.body, commit_diff=none_yet)
    judged = [decide(f, people=people, rules=rules, sources=first) for f in facts]
    if not wanted:
        return judged
    diffs = reader.diffs(sorted(wanted))
    again = Sources(posted_diff=store.diff, body=store.body, commit_diff=diffs.get)
    return [
        decide(f, people=people, rules=rules, sources=again)
        if f.commit.sha in wanted
        else verdict
        for f, verdict in zip(facts, judged, strict=True)
    ]


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


class _LazyReader:
    """One commit reader with diffs for the whole audit, started when first asked:
    most audits after a `match` never need it."""

    def __init__(self, repository: Repo) -> None:
        self._repository = repository
        self._reader: CommitReader | None = None

    def __enter__(self) -> _LazyReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._reader is not None:
            self._reader.close()

    def _read(self, shas: Sequence[str]) -> dict[str, tuple[str | None, str]]:
        """(patch-id, diff) of each of `shas` git gives (merges give nothing)."""
        if not shas:
            return {}
        if self._reader is None:
            self._reader = self._repository.reader(diffs=True)
        return {
            commit.sha: (commit.patch.patch_id, commit.patch.diff)
            for commit in self._reader.commits(shas)
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
            replace(f, row=replace(f.row, patch_id=found[f.commit.sha][0]))
            if f.row is not None and f.commit.sha in found
            else f
            for f in facts
        ]

    def diffs(self, shas: Sequence[str]) -> dict[str, str]:
        return {sha: diff for sha, (_, diff) in self._read(shas).items()}
