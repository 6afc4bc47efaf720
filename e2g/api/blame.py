"""`e2g blame`: each line of a file, grouped into runs by commit, with its review.

One `git blame --porcelain -w -M -C` (e2g.git.repo) gives the runs; each distinct
commit's review comes from the links `e2g match` stored (a few queries for the
whole file, never one per line). The commits no match answered yet are matched
here in one batch (`e2g.api.match.match_commits`: worker processes for a large
batch, never one per commit) and stored, so the next blame of the file only reads.
`history` answers the same for every commit that changed a range of lines, as
`git log -L` finds them.

Results are values; the text and JSON shapes are `e2g.render`'s (`review_cell`,
`blame_json`), shown by `e2g.cli.blame` and the web's blame page. Nothing here
prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from e2g.api.answers import repo_key
from e2g.api.basis import no_mail, open_store
from e2g.api.match import match_commits
from e2g.config import Settings
from e2g.errors import UsageError
from e2g.git.blame import BlameCommit, BlameLine
from e2g.git.repo import UNCOMMITTED, Repo
from e2g.matcher.batch import outside_archive
from e2g.matcher.postings import stored_postings_of, thread_links
from e2g.model.links import CommitInfo, Posting, commit_info

# A run's status: its commit's stored answer, or why there can be none.
MATCHED = "matched"
NO_MATCH = "no-match"
OUTSIDE = "outside-archive"  # dated outside the store's mail: no match was possible
NOT_COMMITTED = "not-committed"  # the work tree's own lines (git's sha 000…)
NOT_MATCHED = "not-matched"  # no stored answer, and the caller asked for no match

PAGE_LINES = 1000  # lines per page of the web's blame page


class Review(NamedTuple):
    """One commit and the postings that carried it, as blame shows them."""

    commit: CommitInfo
    status: str
    postings: tuple[Posting, ...]
    trees: tuple[str, ...] = ()  # "tree/branch" of the named trees that hold it


class Run(NamedTuple):
    """Consecutive lines (numbered from 1, `start`..`end`) of one commit."""

    start: int
    end: int
    review: Review
    lines: tuple[str, ...]


class BlameResult(NamedTuple):
    path: str
    rev: str | None  # the full sha blamed; None: the work tree
    runs: tuple[Run, ...]
    total: int  # lines in the whole file


def blame(  # noqa: PLR0913 - options are keyword-only
    settings: Settings,
    path: str,
    rev: str | None = None,
    *,
    repo: Path,
    lines: tuple[int, int] | None = None,
    page: int | None = None,
    match: bool = True,
) -> BlameResult:
    """The runs of `path` at `rev` (None: the work tree), each with its review.

    Only `lines`, or only page `page` (PAGE_LINES lines each, from 1). With `match`
    False nothing is matched or stored (the read-only web): a commit without a
    stored answer is NOT_MATCHED."""
    repository = Repo.open(repo)
    sha = _revision(repository, rev)
    total = repository.file_lines(sha, path)
    if page is not None:
        lines = page_range(page, total, path=path)
    check_range(lines, total, path=path)
    found = repository.blame(sha, path, lines=lines)
    infos = [info_of(commit) for commit in found.commits]
    reviews = find_reviews(settings, repository, infos, match=match)
    return BlameResult(
        path=path, rev=sha, runs=tuple(_runs(found.lines, reviews)), total=total
    )


def history(
    settings: Settings,
    path: str,
    rev: str | None = None,
    *,
    repo: Path,
    lines: tuple[int, int],
) -> list[Review]:
    """Every commit that changed `lines` of `path` up to `rev`, newest first, each
    with its review: the review history of that piece of code."""
    repository = Repo.open(repo)
    sha = _revision(repository, rev)
    check_range(lines, repository.file_lines(sha, path), path=path)
    shas = repository.line_history(sha, path, lines=lines)
    commits = {commit.sha: commit for commit in repository.commits(shas, diffs=False)}
    infos = [commit_info(commits[sha]) for sha in shas if sha in commits]
    reviews = find_reviews(settings, repository, infos)
    return [reviews[info.sha] for info in infos]


def _revision(repository: Repo, rev: str | None) -> str | None:
    """The full sha to blame; None for the work tree. A bare repository has none:
    HEAD, as git blame does there."""
    if rev:
        return repository.resolve(rev)
    return repository.resolve("HEAD") if repository.bare else None


def page_range(page: int, total: int, *, path: str) -> tuple[int, int] | None:
    """The lines of page `page` (from 1) of a file of `total` lines."""
    pages = max(1, -(-total // PAGE_LINES))
    if page < 1 or page > pages:
        raise UsageError(
            f"no page {page} of {path}: it has {pages} page{'' if pages == 1 else 's'} "
            f"of {PAGE_LINES} lines"
        )
    if total == 0:
        return None
    return (page - 1) * PAGE_LINES + 1, min(total, page * PAGE_LINES)


def check_range(lines: tuple[int, int] | None, total: int, *, path: str) -> None:
    """A line range inside the file, or a UsageError that says the file's size."""
    if lines is None:
        return
    start, end = lines
    if start < 1 or end < start:
        raise UsageError(
            f"bad line range {start},{end}: give -L START,END with 1 <= START <= END"
        )
    if end > total:
        raise UsageError(
            f"line range {start},{end} is outside {path}, which has "
            f"{total} line{'' if total == 1 else 's'}"
        )


def find_reviews(
    settings: Settings,
    repository: Repo,
    commits: Sequence[CommitInfo],
    *,
    match: bool = True,
) -> dict[str, Review]:
    """Each commit's review from the stored links; the commits without a stored
    answer are matched first (unless not `match`), all in one batch, and stored."""
    key = repo_key(repository)
    shas = [commit.sha for commit in commits if commit.sha != UNCOMMITTED]
    span = _match_unanswered(settings, repository, commits, match=match)
    reviews: dict[str, Review] = {}
    with open_store(settings) as store:
        stored = store.commit_statuses(key, shas)
        found = stored_postings_of(
            store, key, shas, url_for=settings.url_for, threads=thread_links(store)
        )
        trees = store.tree_names({key}, shas)
        for commit in commits:
            postings = tuple(found.get(commit.sha, ()))
            status = _status(commit, postings, span)
            if status == NO_MATCH and not match and commit.sha not in stored:
                status = NOT_MATCHED
            reviews[commit.sha] = Review(
                commit, status, postings, trees.get(commit.sha, ())
            )
    return reviews


def _match_unanswered(
    settings: Settings,
    repository: Repo,
    commits: Sequence[CommitInfo],
    *,
    match: bool,
) -> tuple[datetime, datetime] | None:
    """Match (if `match`) and store, in one batch, the commits no earlier run
    answered; the archive's dates. In a repository never matched whose commits
    all lie outside those dates nothing could be found: nothing is matched, and
    each is answered OUTSIDE, as it is once stored (the answer never depends on
    what an earlier run matched or cached)."""
    key = repo_key(repository)
    dated = {commit.sha: commit for commit in commits if commit.sha != UNCOMMITTED}
    with open_store(settings) as store:
        if store.max_seq() == 0:
            raise no_mail(settings)
        span = store.date_range()
        stored = store.commit_statuses(key, list(dated))
        matched_before = store.has_commits(key)
    todo = [sha for sha in dated if sha not in stored]
    if not todo:
        return span
    hopeless = span is not None and all(
        outside_archive(dated[sha], span) for sha in todo
    )
    if match and (matched_before or not hopeless):
        match_commits(settings, todo, repo=repository.root)
    return span


def all_outside(reviews: Iterable[Review]) -> bool:
    """Whether every commit blamed (the work tree's own lines apart) is dated
    outside the archive: nothing in it can have reviewed them, which the user is
    told in one line rather than once per run."""
    statuses = {review.status for review in reviews} - {NOT_COMMITTED}
    return statuses == {OUTSIDE}


def _status(
    commit: CommitInfo,
    postings: Sequence[Posting],
    span: tuple[datetime, datetime] | None,
) -> str:
    if commit.sha == UNCOMMITTED:
        return NOT_COMMITTED
    if postings:
        return MATCHED
    if span is not None and outside_archive(commit, span):
        return OUTSIDE
    return NO_MATCH


def _runs(lines: Sequence[BlameLine], reviews: dict[str, Review]) -> list[Run]:
    """Consecutive lines of one commit, as one run each."""
    runs: list[Run] = []
    group: list[BlameLine] = []
    for line in [*lines, None]:
        if group and (line is None or line.sha != group[0].sha):
            runs.append(
                Run(
                    start=group[0].number,
                    end=group[-1].number,
                    review=reviews[group[0].sha],
                    lines=tuple(item.text for item in group),
                )
            )
            group = []
        if line is not None:
            group.append(line)
    return runs


def info_of(commit: BlameCommit, *, sha: str | None = None) -> CommitInfo:
    """What blame says of a commit, as shown beside its review; `sha` names the
    real commit where blame's is another (token blame's throwaway history)."""
    return CommitInfo(
        sha=sha or commit.sha,
        subject=commit.summary,
        author=commit.author,
        author_date=commit.author_date,
        commit_date=commit.commit_date,
        files=(),
    )
