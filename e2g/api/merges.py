"""Merges: the pull request that asked for a merge, and the commits it brought in.

A merge commit carries no patch of its own; its review is the `[GIT PULL]` mail
(mail.pull recognises them at ingest) whose repository and ref are the ones the
merge's subject names (mail.pull.parse_merge, requests_merge), sent in the weeks
before the merge. The commits it brought in are those its first parent did not
reach, each answered as `e2g link` answers it: as `e2g match` stored it, else matched
now (and not stored: `link` and the web only read).
"""

from __future__ import annotations

from datetime import timedelta

from e2g.api.core import open_store
from e2g.api.link import matcher_for, repo_key, request_for, stored_results
from e2g.config import Settings
from e2g.git.repo import Repo
from e2g.git.trees import CommitHead
from e2g.index.store import Store
from e2g.mail.pull import parse_merge, requests_merge
from e2g.matcher.postings import thread_links, to_posting
from e2g.model.links import CommitInfo, Evidence, LinkResult, Posting
from e2g.model.mail import PullRequest

# A pull request is sent before its merge: up to this long before, a day after
# (clock skew, a late resend).
BEFORE = timedelta(days=60)
AFTER = timedelta(days=1)
MAX_BROUGHT = 500  # commits of one merge answered


def link_merge(settings: Settings, repository: Repo, head: CommitHead) -> LinkResult:
    """The answer to `e2g link MERGE`: its pull request, and what it brought in."""
    merge = parse_merge(head.subject)
    dated, _ = repository.dated_rev_list([head.sha, f"^{head.parents[0]}"])
    shas = [sha for sha, _ in dated][:MAX_BROUGHT]
    key = repo_key(repository)
    with open_store(settings) as store:
        pulls = _pull_postings(store, head, merge, settings=settings)
        answered = store.commit_statuses(key, shas)
    stored = {found.commit.sha: found for found in stored_results(settings, key, shas)}
    live = _match_now(settings, repository, [s for s in shas if s not in answered])
    brought = tuple(
        stored.get(sha) or live[sha] for sha in shas if sha in stored or sha in live
    )
    note = "" if pulls else _no_pull_note(merge)
    if len(dated) > MAX_BROUGHT:
        note += f" (the first {MAX_BROUGHT} of {len(dated)} commits it brought in)"
    return LinkResult(
        CommitInfo(
            sha=head.sha,
            subject=head.subject,
            author=head.author,
            author_date=head.author_date,
            commit_date=head.commit_date,
            files=(),
        ),
        pulls,
        note=note.strip(),
        merged=brought,
        merge=True,
    )


def _match_now(
    settings: Settings, repository: Repo, shas: list[str]
) -> dict[str, LinkResult]:
    """The commits `e2g match` never answered, matched here and not stored: `link`
    (and the web, which never writes) only reads the store."""
    if not shas:
        return {}
    matcher = matcher_for(settings)
    try:
        return {
            commit.sha: matcher.match(request_for(commit, ignore_trailers=False))
            for commit in repository.commits(shas)
        }
    finally:
        matcher.store.close()


def _pull_postings(
    store: Store, head: CommitHead, merge: PullRequest | None, *, settings: Settings
) -> tuple[Posting, ...]:
    """The pull requests asking for what `head` merged, nearest before it first;
    the nearest is marked as the one applied."""
    if merge is None:
        return ()
    low = int((head.commit_date - BEFORE).timestamp())
    high = int((head.commit_date + AFTER).timestamp())
    found = [
        message
        for message in store.pull_requests(low, high)
        if message.pull_url
        and requests_merge(PullRequest(message.pull_url, message.pull_ref), merge)
    ]
    threads = thread_links(store)
    asked = f"{merge.ref or 'HEAD'}" + (f" of {merge.url}" if merge.url else "")
    return tuple(
        to_posting(
            store,
            message,
            method="pull-request",
            score=1.0,
            applied=index == 0,
            url_for=settings.url_for,
            evidence=(Evidence("pull", f"asks to pull {asked}"),),
            threads=threads,
        )
        for index, message in enumerate(found[:5])
    )


def _no_pull_note(merge: PullRequest | None) -> str:
    if merge is None:
        return "the merge's subject names no branch or tag, so no pull request can be found"
    asked = f"{merge.ref or 'HEAD'}" + (f" of {merge.url}" if merge.url else "")
    return f"no pull request for {asked} in the store within 60 days before the merge"
