"""Commits to postings, one at a time: `link` answers a commit (a backport from its
upstream's postings, a merge from its pull request) with every posting of its patch,
or an explicit no match; `e2g.api.match` matches a range and stores it.

The one place that brings git (git.repo), the diff tools (mail.patch,
mail.trailers) and the matcher together for one commit: the matcher never runs git
and never parses diffs itself, it gets a MatchRequest. Results are values; their
JSON shapes are `e2g.render`'s.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from e2g.api import landing, tree_view
from e2g.config import Settings
from e2g.git.repo import Repo
from e2g.index.store import BackportEdge, Store
from e2g.matcher.batch import outside_text, request_for
from e2g.matcher.cascade import Matcher
from e2g.model.links import Commit, LinkResult, commit_info

if TYPE_CHECKING:
    # Imported where a match uses them: `e2g link` of a commit with no trees needs
    # neither (their import was a tenth of its time).
    pass

from e2g.api.answers import matcher_for, repo_key, stored_results
from e2g.api.merges import link_merge


def link(
    settings: Settings, rev: str, *, repo: Path, ignore_trailers: bool = False
) -> LinkResult:
    """Every posting of the commit `rev`, or an explicit no match."""
    repository, sha = Repo.open_at(repo, rev)
    commit = next(iter(repository.commits([sha])), None)
    if commit is None:  # a merge: its pull request and the commits it brought in
        from e2g.git.trees import read_heads

        return link_merge(settings, repository, read_heads(repository, [sha])[0])
    matcher = matcher_for(settings)
    try:
        key = repo_key(repository)
        edge = tree_view.upstream_edge(
            matcher.store, repository, repo=key, commit=commit
        )
        if edge is not None:
            result = _backport(settings, matcher, repository, commit, edge)
        else:
            result = _matched(matcher, repository, commit, ignore_trailers)
        places = tree_view.in_trees(matcher.store, repo=key, sha=commit.sha, edge=edge)
        return result._replace(
            trees=landing.landed(settings, repository, places, repo=key)
        )
    finally:
        matcher.store.close()


def _matched(
    matcher: Matcher, repository: Repo, commit: Commit, ignore_trailers: bool
) -> LinkResult:
    """The matcher's answer for `commit`, with why a no match could not be one."""
    result = matcher.match(request_for(commit, ignore_trailers=ignore_trailers))
    if result.postings:
        return result
    note = _outside_note(matcher.store, commit)
    if not note and commit.sha in repository.shallow_boundary():
        note = (
            "the commit is where this shallow clone's history stops, so its diff "
            "is unknown: fetch more history (git fetch --deepen=1) and try again"
        )
    return result._replace(note=note)


def _backport(
    settings: Settings,
    matcher: Matcher,
    repository: Repo,
    commit: Commit,
    edge: BackportEdge,
) -> LinkResult:
    """A backport's answer: its upstream commit's postings (stored, else matched
    now when this repository holds it), then its own mails. Where the upstream has
    no posting, the backport is matched on its own (its backporter may have
    posted it, and there is no review to inherit)."""
    found = next(
        iter(stored_results(settings, edge.upstream_repo, [edge.upstream_sha])), None
    )
    if found is None:
        upstream = next(iter(repository.commits([edge.upstream_sha])), None)
        if upstream is not None:
            found = _matched(matcher, repository, upstream, False)
    if found is None or not found.postings:
        found = _matched(matcher, repository, commit, False)
    own = tree_view.own_postings(
        matcher.store,
        commit,
        version=tree_view.branch_version(matcher.store, commit.sha),
        url_for=settings.url_for,
    )
    return LinkResult(
        commit_info(commit),
        found.postings if found is not None else (),
        note=found.note if found is not None else "",
        upstream=tree_view.upstream_of(matcher.store, edge),
        own=own,
    )


def _outside_note(store: Store, commit: Commit) -> str:
    """Why no match was even possible, when the commit predates or follows all mail."""
    span = store.date_range()
    if span is None:
        return ""
    return outside_text(commit, span)
