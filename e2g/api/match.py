"""Commits to postings, a range at a time, stored: `match` (a range), `match_tree`
(a named tree's branches), `match_commits` (what blame needs) and `match_head`
(what sync does).

`match` hands the commits to `e2g.matcher.batch`, which matches them in worker
processes, and stores what comes back; backports and a rebase's copies are
answered from the commits they copy (e2g.api.trees). After a run the patch queue
is brought level (e2g.api.queue).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from e2g.api.basis import no_mail, open_store
from e2g.config import Settings
from e2g.errors import E2gError, NotMatched
from e2g.git.repo import Repo
from e2g.index.link_writer import LinkRows, LinkWriter, TreeWriter
from e2g.index.schema import PROCESS_PENDING_KEY, WEIGHTS_PENDING_KEY
from e2g.index.store import Store, branch_label
from e2g.matcher import batch
from e2g.matcher.batch import Matched, outside_archive, outside_text
from e2g.matcher.scoring import predates
from e2g.model.links import LinkResult

if TYPE_CHECKING:
    # Imported where a match uses them: `e2g link` of a commit with no trees needs
    # neither (their import was a tenth of its time).
    from e2g.api import branches, trees

from e2g.api.answers import matcher_for, repo_key, stored_results
from e2g.api.match_report import MatchSummary

# Public here, defined beside the workers that use them too (e2g.matcher.batch).
__all__ = [
    "BATCH",
    "MatchSummary",
    "Matched",
    "match",
    "match_commits",
    "match_head",
    "match_tree",
    "outside_archive",
    "outside_text",
]

BATCH = 200


def match(  # noqa: PLR0913 - options are keyword-only
    settings: Settings,
    revs: Sequence[str],
    *,
    repo: Path,
    all_refs: bool = False,
    ignore_trailers: bool = False,
    jobs: int = 0,
    redo: bool = False,
    on_result: Callable[[Matched, MatchSummary], None] | None = None,
    to_json: Callable[[LinkResult], dict[str, object]] | None = None,
    scope: branches.Scope | None = None,
) -> MatchSummary:
    """Match every non-merge commit `git rev-list` gives for `revs`; store the links.

    Commits matched before (against the same mail) are skipped unless `redo`.

    `on_result` sees each commit's answer as it is stored; with `to_json` (such as
    e2g.render.link_json), the answer carries its JSON too, made by the worker that
    matched it. `to_json` is called in worker processes: a module-level function."""
    started = time.monotonic()
    repository = Repo.open(repo)
    dated, merges = repository.dated_rev_list(revs, all_refs=all_refs)
    summary = _match_dated(
        settings,
        repository,
        dated,
        MatchSummary(merges=merges),
        started=started,
        ignore_trailers=ignore_trailers,
        jobs=jobs,
        redo=redo,
        on_result=on_result,
        to_json=to_json,
        scope=scope,
    )
    _refresh_queue(settings)
    return summary


def _match_dated(  # noqa: PLR0913 - match()'s options, passed on
    settings: Settings,
    repository: Repo,
    dated: Sequence[tuple[str, int]],
    summary: MatchSummary,
    *,
    started: float,
    ignore_trailers: bool = False,
    jobs: int = 0,
    redo: bool = False,
    on_result: Callable[[Matched, MatchSummary], None] | None = None,
    to_json: Callable[[LinkResult], dict[str, object]] | None = None,
    scope: branches.Scope | None = None,
    read: trees.Split | None = None,
    tree_writer: TreeWriter | None = None,
    store: Store | None = None,
) -> MatchSummary:
    """Match the non-merge commits `dated` ((sha, commit time) pairs) and store
    their links, BATCH commits per write: the loop of `match` and `match_commits`.

    Backports of commits matched before or now, and the copies a rebase made of
    commits matched before, are answered from those (e2g.api.trees), not matched;
    `read`: the heads and notes the walk of `dated` read (trees.walk_branch);
    `tree_writer`: match_tree's, which writes them (and, its connection, the links);
    `store`: match_tree's read connection (branches.reading)."""
    from e2g.api import branches, trees

    with branches.reading(settings, store) as reader:
        max_seq = reader.max_seq()
        span = reader.date_range()
        summary.unweighed = reader.meta(WEIGHTS_PENDING_KEY) == "1"
        summary.unclassified = reader.meta(PROCESS_PENDING_KEY) is not None
    if max_seq == 0:
        raise no_mail(settings)
    if jobs <= 0:
        import multiprocessing  # here: `e2g link` starts no process

        jobs = min(2, multiprocessing.cpu_count())
    with LinkWriter(
        settings.store_path, repo=repo_key(repository), beside=tree_writer
    ) as writer:
        done = _done(writer, store, max_seq=max_seq, redo=redo)
        todo = [
            (sha, span is not None and predates(_utc(stamp), span[0]))
            for sha, stamp in dated
            if sha not in done
        ]
        summary.skipped = len(dated) - len(todo)
        summary.done = [sha for sha, _ in dated if sha in done]
        summary.repo = writer.repo
        scope = scope or branches.Scope(writer.repo)
        early = dict(todo)
        found, todo = _split(
            settings,
            repository,
            todo,
            scope=scope,
            done=done,
            read=read,
            store=store,
            settle=tree_writer.settle if tree_writer else None,
        )
        if scope.tree is not None and scope.branch is not None:
            summary.tree = branch_label(scope.tree, scope.branch)
        summary.count_split(len(found.backports), len(found.rebased))
        pending: list[LinkRows] = []
        job = batch.Job(
            partial(matcher_for, settings),
            repository.root,
            ignore_trailers,
            span,
            max_seq,
            to_json,
        )
        if todo and tree_writer is not None:
            # Its thread ended first: workers are forked from a process with no
            # other thread (e2g.processes), and the matcher reads the branch.
            tree_writer.settle()
        # Nothing left (a branch of backports): no matcher or worker is started.
        answers = batch.results(job, todo, jobs=jobs) if todo else iter(())
        for answer in _not_backports(settings, store, found, answers, scope=scope):
            summary.count(answer.method, outside=answer.outside)
            pending.append(answer.rows)
            if len(pending) >= BATCH:
                writer.write(pending)
                pending = []
            if on_result is not None:
                summary.elapsed = time.monotonic() - started
                on_result(answer, summary)
        writer.write(pending)
    summary.count_split(
        len(found.backports), len(found.rebased)
    )  # with the backports found by their posting
    rows, alone = trees.store_split(
        settings, found, scope=scope, max_seq=max_seq, writer=tree_writer, store=store
    )
    rows += _match_alone(
        settings,
        job,
        alone,
        early=early,
        jobs=jobs,
        tree_writer=tree_writer,
        repo=repository,
    )
    for answer in _split_answers(settings, rows, scope=scope, to_json=to_json):
        summary.count(answer.method, outside=answer.outside)
        if on_result is not None:
            summary.elapsed = time.monotonic() - started
            on_result(answer, summary)
    summary.elapsed = time.monotonic() - started
    return summary


def _match_alone(  # noqa: PLR0913 - keyword-only
    settings: Settings,
    job: batch.Job,
    alone: list[LinkRows],
    *,
    early: dict[str, bool],
    jobs: int,
    tree_writer: TreeWriter | None,
    repo: Repo,
) -> list[LinkRows]:
    """The backports whose upstream has no posting (trees.store_split's `alone`),
    matched on their own and stored: each answer with its own process mails' links
    (`alone`'s) beside the match's; their rows."""
    if not alone:
        return []
    mails = {row.commit[0]: row.links for row in alone}
    if tree_writer is not None:
        tree_writer.settle()  # workers are forked from a process with no thread
    found = []
    todo = [(sha, early.get(sha, False)) for sha in mails]
    for answer in batch.results(job, todo, jobs=min(jobs, len(todo))):
        matched = {link[0] for link in answer.rows.links}
        own = tuple(link for link in mails[answer.sha] if link[0] not in matched)
        found.append(answer.rows._replace(links=answer.rows.links + own))
    with LinkWriter(
        settings.store_path, repo=repo_key(repo), beside=tree_writer
    ) as writer:
        writer.write(found)
    return found


def _not_backports(
    settings: Settings,
    store: Store | None,
    found: trees.Split,
    answers: Iterator[Matched],
    *,
    scope: branches.Scope,
) -> Iterator[Matched]:
    """`answers`, less those of commits of a named tree's branch that applied the
    posting a commit of an earlier tree applied (e2g.api.copies): these join
    `found`'s backports, stored as the others are, once the batch is."""
    if scope.tree is None:
        yield from answers
        return
    from e2g.api import branches, copies

    ranks = branches.scope_ranks(settings)
    for answer in answers:
        head = found.heads.get(answer.sha)
        edge = None
        if head is not None and answer.method is not None:
            with branches.reading(settings, store) as reader:
                edge = copies.same_posting(
                    reader, head, answer.rows, scope=scope, ranks=ranks
                )
        if edge is None:
            yield answer
        else:
            found.backports[answer.sha] = edge


def _done(
    writer: LinkWriter, store: Store | None, *, max_seq: int, redo: bool
) -> set[str]:
    """The commits that need no new match (none with `redo`): read through
    match_tree's reader when there is one, not the writer's connection, whose
    record of the branch is still being written then (TreeWriter behind)."""
    if redo:
        return set()
    if store is not None:
        return store.done_commits(writer.repo, max_seq=max_seq)
    return writer.done(max_seq=max_seq)


def _split_answers(
    settings: Settings,
    rows: list[LinkRows],
    *,
    scope: branches.Scope,
    to_json: Callable[[LinkResult], dict[str, object]] | None,
) -> Iterator[Matched]:
    """The answers of the backports and rebased commits `rows` stored, as the
    batch gives the others'; with `to_json`, a backport's JSON as `e2g link` shows
    it (read back from the store only then)."""
    results = _split_results(settings, rows, scope=scope) if to_json else {}
    for row in rows:
        sha = row.commit[0]
        result = results.get(sha)
        yield Matched(
            sha=sha,
            method=row.commit[8],
            outside=False,
            rows=row,
            json=to_json(result) if to_json and result else None,
        )


def _split_results(
    settings: Settings, rows: list[LinkRows], *, scope: branches.Scope
) -> dict[str, LinkResult]:
    """The stored answers of `rows`' commits (a backport's as `e2g link` shows it)."""
    shas = [row.commit[0] for row in rows]
    return {r.commit.sha: r for r in stored_results(settings, scope.repo, shas)}


def match_tree(  # noqa: PLR0913 - options are keyword-only
    settings: Settings,
    name: str,
    *,
    jobs: int = 0,
    redo: bool = False,
    on_result: Callable[[Matched, MatchSummary], None] | None = None,
    to_json: Callable[[LinkResult], dict[str, object]] | None = None,
) -> list[MatchSummary]:
    """Match each branch of the configured tree `name` in its order (one summary
    each), storing which branch reaches each commit; then its releases.

    A branch holds what the branches listed before it (this tree's, and those of
    trees listed before it in the same repository) do not reach: a stable branch's
    mainline history belongs to mainline."""
    from e2g.api import branches, trees

    tree = branches.tree_named(settings, name)
    repository = Repo.open(tree.repo)
    key = repo_key(repository)
    ranks = branches.scope_ranks(settings)
    before = [
        branches.branch_name(branch)
        for other in settings.trees[: ranks[name]]
        if other.repo == tree.repo or repo_key(Repo.open(other.repo)) == key
        for branch in other.branches
    ]
    summaries = []
    # One writer for the tree's branches: the close of the store's last connection
    # copies its log into the database, then once, not after each write (2,000
    # backports: closes of 12 ms, not 14 ms). One reader beside it for every step
    # and the writer's connection for the links: 2 connections, not 8 (opened in
    # 1 ms, not 3.3 ms). The reader is closed first: the writer's close is the last.
    with (
        TreeWriter(settings.store_path, behind=True) as writer,
        open_store(settings) as store,
    ):
        for branch in tree.branches:
            scope = branches.Scope(
                key, tree.name, branches.branch_name(branch), ranks[name]
            )
            started = time.monotonic()
            walk = trees.walk_branch(
                settings,
                repository,
                [branch, *(f"^{tip}" for tip in before)],
                scope=scope,
                store=store,
            )
            branches.record_branch(
                settings,
                repository,
                repo=key,
                tree=tree.name,
                branch=branch,
                shas=[sha for sha, _ in walk.dated],
                exclude=before,
                merges=walk.merges,
                writer=writer,
                store=store,
            )
            summaries.append(
                _match_dated(
                    settings,
                    repository,
                    walk.dated,
                    MatchSummary(merges=walk.merges),
                    started=started,
                    jobs=jobs,
                    redo=redo,
                    on_result=on_result,
                    to_json=to_json,
                    scope=scope,
                    read=walk.read,
                    tree_writer=writer,
                    store=store,
                )
            )
            before.append(branches.branch_name(branch))
        branches.update_releases(
            settings, repository, repo=key, store=store, writer=writer
        )
    _refresh_queue(settings)
    return summaries


def _split(  # noqa: PLR0913 - keyword-only
    settings: Settings,
    repository: Repo,
    todo: list[tuple[str, bool]],
    *,
    scope: branches.Scope,
    done: set[str],
    read: trees.Split | None = None,
    store: Store | None = None,
    settle: Callable[[], None] | None = None,
) -> tuple[trees.Split, list[tuple[str, bool]]]:
    """What of `todo` is answered from other commits, and what is left to match:
    the rest of `todo`, after the upstream commits backports name that no run
    matched yet (matched first, so the backports find them)."""
    from e2g.api import branches, trees

    if not todo:
        return trees.Split(), todo
    with branches.reading(settings, store) as reader:
        span = reader.date_range()
        found = trees.split(
            reader,
            repository,
            [sha for sha, _ in todo],
            scope=scope,
            ranks=branches.scope_ranks(settings),
            read=read,
            settle=settle,
        )
    answered = found.answered
    extra = [sha for sha in found.upstreams if sha not in done]
    dated, _ = repository.dated_commits(extra)
    first = [
        (sha, span is not None and predates(_utc(stamp), span[0]))
        for sha, stamp in dated
    ]
    return found, first + [item for item in todo if item[0] not in answered]


def _utc(stamp: int) -> datetime:
    return datetime.fromtimestamp(stamp, UTC)


def match_commits(settings: Settings, shas: Sequence[str], *, repo: Path) -> int:
    """Match exactly `shas` (no history walk; merges skipped) in one batch, as
    `match` does a range, and store their links; how many were matched. For `e2g
    blame`: a file's commits that no earlier `match` answered."""
    started = time.monotonic()
    repository = Repo.open(repo)
    dated, _ = repository.dated_commits(shas)
    if not dated:
        return 0
    # A few commits match faster here than worker processes start.
    jobs = 1 if len(dated) < 2 * batch.TASK else 0
    summary = _match_dated(
        settings,
        repository,
        dated,
        MatchSummary(),
        started=started,
        jobs=jobs,
        redo=True,
    )
    _refresh_queue(settings)
    return summary.matched


# `match_head`: the newest commits answered before, any of which bounds the walk of
# HEAD; and how far back unmatched commits are tried again when new mail came (new
# mail is the recent days' mail; the matcher takes a posting up to 60 days late).
KNOWN_TIPS = 20


RETRY_DAYS = 90


RETRY_LIMIT = 2000


def match_head(settings: Settings, repo: Path, *, jobs: int = 0) -> MatchSummary:
    """`e2g sync`'s match of a repository matched before: HEAD's commits that no
    commit answered before reaches (a repository matched from v6.1 on is not walked
    back to its root), and its recent unmatched commits where new mail came since
    (those with no mail since are skipped as done, as `match` skips them).

    A repository the config names trees in is matched as `e2g match --tree` does,
    each of those trees' branches: their new commits, backports and rebases."""
    started = time.monotonic()
    repository = Repo.open(repo)
    key = repo_key(repository)
    named = [tree.name for tree in settings.trees if _key_of(tree.repo) == key]
    if named:
        found = [s for name in named for s in match_tree(settings, name, jobs=jobs)]
        return MatchSummary.summed(found, repo=key, started=started)
    with open_store(settings) as store:
        newest = store.recent_commits([key], limit=KNOWN_TIPS)
        unmatched = store.recent_commits([key], limit=RETRY_LIMIT, status="no-match")
    tips = [sha for sha, *_ in newest if _exists(repository, sha)]
    if not tips:
        raise NotMatched(
            f"none of the commits matched in {key} is there any more (rewritten "
            "history?): run `e2g match` there once"
        )
    dated, merges = repository.dated_rev_list(["HEAD", *(f"^{sha}" for sha in tips)])
    horizon = time.time() - RETRY_DAYS * 86_400
    walked = {sha for sha, _ in dated}
    again = [
        sha
        for sha, _, _, date, _, _ in unmatched
        if date is not None and date >= horizon and sha not in walked
    ]
    try:
        retried, _ = repository.dated_commits(again)
    except E2gError:  # one of them is gone (rewritten history): new commits only
        retried = []
    summary = _match_dated(
        settings,
        repository,
        [*retried, *dated],
        MatchSummary(merges=merges),
        started=started,
        jobs=jobs,
    )
    _refresh_queue(settings)
    return summary


def _refresh_queue(settings: Settings) -> None:
    """The patch queue brought level with what the run stored (e2g.api.queue)."""
    from e2g.api.queue.refresh import refresh  # here: `e2g link` never refreshes

    refresh(settings)


def _key_of(path: Path) -> str | None:
    """The store's key of the repository at `path`, or None when there is none."""
    try:
        return repo_key(Repo.open(path))
    except E2gError:
        return None


def _exists(repository: Repo, sha: str) -> bool:
    try:
        repository.resolve(sha)
    except E2gError:
        return False
    return True
