"""Merges: the pull request that asked for a merge, and the commits it brought in.

A merge commit carries no patch of its own; its review is the `[GIT PULL]` mail
(mail.pull recognises them at ingest) whose repository and ref are the ones the
merge's subject names (mail.pull.parse_merge, requests_merge), sent in the weeks
before the merge; when none names them (the merge was made from another URL or
ref, or names none), one whose shortlog and diffstat list the merged commits'
subjects and files (score_contents), with that as its evidence. The commits it brought in are those its first parent did not
reach, each answered as `e2g link` answers it: as `e2g match` stored it, else matched
now (and not stored: `link` and the web only read).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import timedelta

from e2g.api.answers import matcher_for, repo_key, stored_results
from e2g.api.basis import open_store
from e2g.config import Settings
from e2g.git.repo import Repo
from e2g.git.trees import CommitHead
from e2g.index.store import Store
from e2g.mail.pull import (
    parse_diffstat,
    parse_merge,
    parse_shortlog,
    requests_merge,
    same_path,
)
from e2g.matcher.batch import request_for
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
        answered = store.commit_statuses(key, shas)
    stored = {found.commit.sha: found for found in stored_results(settings, key, shas)}
    live = _match_now(settings, repository, [s for s in shas if s not in answered])
    brought = tuple(
        stored.get(sha) or live[sha] for sha in shas if sha in stored or sha in live
    )
    with open_store(settings) as store:
        pulls = _pull_postings(store, head, merge, settings=settings)
        if not pulls:  # the merge names another ref or URL, or none
            pulls = _pulls_by_contents(store, head, brought, settings=settings)
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


def _pulls_by_contents(
    store: Store,
    head: CommitHead,
    brought: Sequence[LinkResult],
    *,
    settings: Settings,
) -> tuple[Posting, ...]:
    """The pull requests of the weeks before `head` whose shortlog lists the
    subjects of the commits it brought in, and whose diffstat lists the files they
    changed (score_contents at least MIN_CONTENTS), best first."""
    subjects = {" ".join(found.commit.subject.split()) for found in brought}
    files = {path for found in brought for path in found.commit.files}
    if not subjects:
        return ()
    low = int((head.commit_date - BEFORE).timestamp())
    high = int((head.commit_date + AFTER).timestamp())
    scored = []
    for message in store.pull_requests(low, high):
        body = store.body(message.seq)
        score, evidence = score_contents(
            parse_shortlog(body), parse_diffstat(body), subjects=subjects, files=files
        )
        if score >= MIN_CONTENTS:
            scored.append((score, message, evidence))
    scored.sort(key=lambda found: -found[0])  # stable: the nearest first on a tie
    threads = thread_links(store)
    return tuple(
        to_posting(
            store,
            message,
            method="pull-request",
            score=score,
            applied=index == 0,
            url_for=settings.url_for,
            evidence=evidence,
            threads=threads,
        )
        for index, (score, message, evidence) in enumerate(scored[:5])
    )


# A pull request found by what it lists, not by its ref: the share of the merged
# commits its shortlog names weighs most; the files of its diffstat confirm.
MIN_CONTENTS = 0.6
SHORTLOG_WEIGHT = 0.7


def score_contents(
    listed: Sequence[str],
    paths: Sequence[str],
    *,
    subjects: Collection[str],
    files: Collection[str],
) -> tuple[float, tuple[Evidence, ...]]:
    """How well a pull request's shortlog subjects `listed` and diffstat `paths`
    describe a merge that brought in commits titled `subjects`, changing `files`:
    each part the share both sides agree on (shared / the larger side), weighed
    SHORTLOG_WEIGHT to the rest; a request listing only paths scores at most 0.8."""
    shared = len(set(listed) & set(subjects))
    found_paths = sum(any(same_path(path, f) for f in files) for path in paths)
    by_subject = shared / max(len(listed), len(subjects)) if listed else 0.0
    by_path = found_paths / max(len(paths), len(files)) if paths and files else 0.0
    evidence = []
    if listed:
        evidence.append(
            Evidence(
                "shortlog",
                f"lists {shared} of the {len(subjects)} merged commits' subjects "
                f"({len(listed)} listed)",
            )
        )
    if paths:
        evidence.append(
            Evidence(
                "diffstat",
                f"lists {found_paths} of the {len(files)} files they changed "
                f"({len(paths)} listed)",
            )
        )
    if listed and paths:
        score = SHORTLOG_WEIGHT * by_subject + (1 - SHORTLOG_WEIGHT) * by_path
    else:
        score = by_subject if listed else 0.8 * by_path
    return round(score, 4), tuple(evidence)


def _no_pull_note(merge: PullRequest | None) -> str:
    lists = "and none lists the commits it brought in"
    if merge is None:
        return f"the merge's subject names no branch or tag, {lists}"
    asked = f"{merge.ref or 'HEAD'}" + (f" of {merge.url}" if merge.url else "")
    return (
        f"no pull request for {asked} in the store within 60 days before the "
        f"merge, {lists}"
    )
