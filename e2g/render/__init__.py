"""The JSON and SVG shapes that the CLI and the web share: every page's JSON twin.

`e2g link --json` and /api/v1/commits (`link_json`, plus `commit_page_json` there), `e2g blame --json` and
/api/v1/blame (`blame_json`, and `review_cell` for the text), `e2g search --json` and
/api/v1/search's hits (`hit_json`), `e2g stats --json` and /api/v1/stats
(`stats_json`), `e2g stats --svg` and /stats.svg (`render_svg`), and the messages and
threads of /api/v1/messages and /api/v1/threads (`message_json`, `thread_json`),
`e2g blame --tokens --json` (`token_span_json`) and `e2g sync --json` (`sync_json`);
`e2g audit`'s, with its SARIF document, are in `e2g.render.audit`.

`e2g.api` returns values; this module turns them into dicts and text, and nothing
else: no IO, no framework types. It sits between the front ends (`e2g.cli`,
`e2g.web`) and `e2g.api` in the layers, so the api never imports it: a caller that
wants JSON made in `e2g match`'s workers passes `link_json` down as a function.
Importing it is cheap (the api's types are only named for the type checker), so
`e2g search` still starts without git and the matcher.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from e2g import words

if TYPE_CHECKING:
    from e2g.api.blame import Review, Run
    from e2g.api.core import SearchHit
    from e2g.api.match import MatchSummary
    from e2g.api.mirrors import MirrorReport
    from e2g.api.reverse import CommitDiff, WayBack
    from e2g.api.review import CommitText, PostingReview
    from e2g.api.stats import StatsResult, StatsRow
    from e2g.api.sync import SyncReport
    from e2g.api.threads import MessageView, ThreadNode, ThreadView
    from e2g.api.token_tree import TreeEntry, TreeListing
    from e2g.api.token_warm import WarmReport
    from e2g.api.tokens import Span
    from e2g.config import Settings
    from e2g.ingest.pipeline import IngestReport
    from e2g.model.links import InTree, LinkResult, Posting
    from e2g.model.stored import StoredMessage


def iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


# --- ingest summaries, commits, search hits, coverage ---------------------------------


def ingest_json(report: IngestReport) -> dict[str, object]:
    """`e2g ingest --json`: every field of the report, counters as plain objects."""
    data = dataclasses.asdict(report)
    data["malformed_reasons"] = dict(report.malformed_reasons)
    data["damaged_reasons"] = dict(report.damaged_reasons)
    data["elapsed"] = round(report.elapsed, 3)
    return data


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
        "postings": [posting_json(posting) for posting in result.postings],
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
        "upstream": None
        if result.upstream is None
        else {
            "commit": result.upstream.commit,
            "repo": result.upstream.repo,
            "how": result.upstream.how,
            "tree": result.upstream.tree,
        },
        "trees": [in_tree_json(place) for place in result.trees],
        "backport_postings": [posting_json(posting) for posting in result.own],
        "merge": result.merge,
        "merged": [link_json(found) for found in result.merged],
    }


def in_tree_json(place: InTree) -> dict[str, object]:
    return {
        "repo": place.repo,
        "tree": place.tree,
        "branch": place.branch,
        "commit": place.commit,
        "how": place.how,
        "release": place.release,
        "merge": place.merge,
    }


def releases_line(places: Sequence[InTree]) -> str:
    """ "first released in v6.5; backported to 6.1.y in v6.1.42 and to ..."."""
    first = next((p for p in places if p.how == "applied" and p.release), None)
    backported = [
        f"{p.branch or p.tree or 'another tree'} in {p.release}"
        for p in places
        if p.how != "applied" and p.release
    ]
    parts = [f"first released in {first.release}"] if first else []
    if backported:
        parts.append("backported to " + " and to ".join(backported))
    return "; ".join(parts)


def commit_page_json(
    text: CommitText | None, reviews: Mapping[str, PostingReview]
) -> dict[str, object]:
    """What /api/v1/commits adds to `link_json`, as the commit page shows it: the
    commit message, the diff per file (None for a merge), and each posting's review
    excerpts (the replies' own first lines and the trailers they gave)."""
    return {
        "message": None if text is None else text.message,
        "diff": None
        if text is None
        else {
            "files": [
                {
                    "path": change.path,
                    "added": change.added,
                    "removed": change.removed,
                    "binary": change.binary,
                    "deleted": change.deleted,
                    "lines": None if change.lines is None else list(change.lines),
                }
                for change in text.files
            ],
            "more_files": text.more_files,
            "cut": text.cut,
        },
        "reviews": {
            message_id: {
                "excerpts": [
                    {
                        "message_id": excerpt.message_id,
                        "author": excerpt.author,
                        "date": iso(excerpt.date),
                        "lines": list(excerpt.lines),
                        "trailers": list(excerpt.reviews),
                    }
                    for excerpt in review.excerpts
                ],
                "more": review.more,
            }
            for message_id, review in reviews.items()
        },
    }


def way_back_json(answer: WayBack) -> dict[str, object]:
    """The stable JSON object of `e2g link MESSAGE-ID`: which commits applied it."""
    series = answer.series
    return {
        "message_id": answer.message_id,
        "subject": answer.subject,
        "version": answer.version,
        "status": answer.status,
        "commits": [
            {
                "commit": commit.sha,
                "repo": commit.repo,
                "subject": commit.subject,
                "date": commit.date.isoformat(),
                "method": commit.method,
                "score": commit.score,
                "posting": commit.posting,
                "posting_version": commit.posting_version,
            }
            for commit in answer.commits
        ],
        "note": answer.note or None,
        "asked": answer.asked,
        "trees": [in_tree_json(place) for place in answer.trees],
        "series": None
        if series is None
        else {
            "cover": series.cover,
            "applied": series.applied,
            "total": series.total,
            "patches": [way_back_json(patch) for patch in series.patches],
        },
    }


def interdiff_json(found: CommitDiff) -> dict[str, object]:
    """`e2g link MESSAGE-ID --diff`: how one applying commit differs from the patch."""
    return {
        "message_id": found.message_id,
        "commit": found.commit.sha,
        "identical": found.interdiff.identical,
        "changes": [
            {
                "change": change.kind,
                "path": change.path,
                "posted": change.posted.header if change.posted else None,
                "applied": change.applied.header if change.applied else None,
                "lines": change.shown(),
            }
            for change in found.interdiff.changes
        ],
    }


def posting_json(posting: Posting) -> dict[str, object]:
    """One posting as `link --json`, `blame --json` and the API give it."""
    return {
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


# --- blame ----------------------------------------------------------------------------

# A run's review in words, when it has no postings (e2g.api.blame's statuses).
_NO_REVIEW = {
    "no-match": "no review found",
    "outside-archive": "outside the archive",
    "not-committed": "not committed yet",
    "not-matched": "not matched yet: run e2g match",
}


def review_cell(review: Review) -> str:
    """A commit's review in one cell, for `e2g blame` and the blame page:
    `v3 · io-uring · 12 replies · 2 Reviewed-by`, or why there is none. The version
    and list are the applied posting's; replies and review trailers are counted
    over all its postings (every version, and the cover letter)."""
    if not review.postings:
        return _NO_REVIEW.get(review.status, review.status)
    applied = next((p for p in review.postings if p.applied), review.postings[0])
    first_list = applied.lists[0] if applied.lists else ""
    replies = sum(posting.replies for posting in review.postings)
    given = {reviewer for posting in review.postings for reviewer in posting.reviewers}
    parts = [
        f"v{applied.version}",
        *([first_list.split(".", 1)[0]] if first_list else []),
        f"{replies} repl{'y' if replies == 1 else 'ies'}",
    ]
    from e2g.mail.trailers import REVIEW_KEYS  # here: render's import stays cheap

    for key in REVIEW_KEYS:
        count = sum(reviewer.startswith(f"{key}:") for reviewer in given)
        if count:
            parts.append(f"{count} {key}")
    return " · ".join(parts)


def review_json(review: Review) -> dict[str, object]:
    """A commit and its postings, as `e2g blame --history --json` gives each."""
    commit = review.commit
    return {
        "commit": commit.sha,
        "subject": commit.subject,
        "author": f"{commit.author.name} <{commit.author.email}>",
        "date": commit.author_date.isoformat(),
        "status": review.status,
        "trees": list(review.trees),
        "postings": [posting_json(posting) for posting in review.postings],
    }


def blame_json(run: Run) -> dict[str, object]:
    """One run of `e2g blame --json` and `/api/v1/blame`: its lines, its commit
    and the commit's postings (as `link --json` gives them)."""
    return {
        "start": run.start,
        "end": run.end,
        **review_json(run.review),
        "lines": list(run.lines),
    }


def token_span_json(span: Span, review: Review) -> dict[str, object]:
    """One span of `e2g blame --tokens --json` and /api/v1/tokens: consecutive tokens
    of one line from one commit (`line`, `column` from 1, `column` in characters),
    with the commit and its postings as `blame --json` gives them."""
    return {
        "line": span.line,
        "column": span.column,
        "text": span.text,
        **review_json(review),
    }


def token_span_lines(
    spans: Iterable[Span], reviews: Mapping[str, Review], dumps: Callable[[object], str]
) -> Iterator[str]:
    """Each span as `dumps(token_span_json(span, review))` would give it, the commit's
    part encoded once per commit, not once per span (git.git's diff.c: 15,024 spans
    of 938 commits, 0.27 s of encoding before, 0.07 s after)."""
    encoded: dict[str, str] = {}
    for span in spans:
        tail = encoded.get(span.sha)
        if tail is None:
            tail = encoded[span.sha] = dumps(review_json(reviews[span.sha]))[1:]
        head = dumps({"line": span.line, "column": span.column, "text": span.text})
        yield f"{head[:-1]}, {tail}"


def hit_json(hit: SearchHit, settings: Settings) -> dict[str, object]:
    """One search hit as `e2g search --json` and `/api/v1/search` give it."""
    first_list = hit.lists[0] if hit.lists else None
    return {
        "message_id": hit.message_id,
        "subject": hit.subject,
        "author": f"{hit.author_name} <{hit.author_email}>"
        if hit.author_name
        else hit.author_email,
        "author_name": hit.author_name,
        "author_email": hit.author_email,
        "date": hit.date.isoformat() if hit.date else None,
        "list": first_list,
        "lists": list(hit.lists),
        "kind": hit.kind,
        "version": hit.version,
        "files": list(hit.files),
        "thread_root": hit.thread_root,
        "score": round(hit.score, 4),
        "url": settings.url_for(hit.message_id, first_list),
    }


def stats_row_json(row: StatsRow) -> dict[str, object]:
    return {
        "key": row.key,
        "commits": row.commits,
        "matched": row.matched,
        "share": round(row.share, 4),
        "by_method": dict(row.by_method),
    }


def stats_json(result: StatsResult) -> dict[str, object]:
    """Coverage as `e2g stats --json` and `/api/v1/stats` give it."""
    return {
        "by": result.by,
        "total": stats_row_json(result.total),
        "rows": [stats_row_json(row) for row in result.rows],
    }


def render_svg(result: StatsResult, *, limit: int = 40) -> str:
    """A horizontal bar chart: one bar per row, length = commits, filled part = matched.

    Every label is XML-escaped."""
    from html import escape  # here: `e2g link` renders JSON, html costs it 2 ms

    rows = result.rows[:limit]
    width, label_width, bar_height, gap = 760, 200, 18, 6
    height = 40 + len(rows) * (bar_height + gap)
    most = max((row.commits for row in rows), default=1) or 1
    scale = (width - label_width - 110) / most
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<text x="10" y="20" font-size="14">e2g coverage by {escape(result.by)}: '
        f"{result.total.matched}/{words.count(result.total.commits, 'commit')} matched "
        f"({result.total.share:.0%})</text>",
    ]
    for index, row in enumerate(rows):
        y = 34 + index * (bar_height + gap)
        full, done = row.commits * scale, row.matched * scale
        parts += [
            f'<text x="{label_width - 6}" y="{y + 13}" text-anchor="end">{escape(row.key[:30])}</text>',
            f'<rect x="{label_width}" y="{y}" width="{full:.1f}" height="{bar_height}" fill="#d8dee9"/>',
            f'<rect x="{label_width}" y="{y}" width="{done:.1f}" height="{bar_height}" fill="#5e81ac"/>',
            f'<text x="{label_width + full + 6:.1f}" y="{y + 13}">{row.matched}/{row.commits} ({row.share:.0%})</text>',
        ]
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


# --- messages and threads -------------------------------------------------------------


def _first_list(message: StoredMessage) -> str | None:
    return message.lists[0] if message.lists else message.list_id


def message_summary(message: StoredMessage, settings: Settings) -> dict[str, object]:
    patch_author = None
    if message.patch_author_email:
        patch_author = {
            "name": message.patch_author_name or "",
            "email": message.patch_author_email,
        }
    return {
        "message_id": message.message_id,
        "subject": message.subject,
        "author": {"name": message.author_name, "email": message.author_email},
        "patch_author": patch_author,
        "date": iso(message.date),
        "date_raw": message.date_raw,
        "date_source": message.date_source,
        "date_corrected": message.date_corrected,
        "lists": list(message.lists),
        "kind": message.kind,
        "version": message.version,
        "part": message.part,
        "total": message.total,
        "parent_id": message.parent_id,
        "thread_root": message.thread_root,
        "files": list(message.files),
        "added": message.added,
        "removed": message.removed,
        "patch_id": message.patch_id,
        "pull": {"url": message.pull_url, "ref": message.pull_ref}
        if message.pull_url
        else None,
        "url": settings.url_for(message.message_id, _first_list(message)),
    }


def node_json(node: ThreadNode, settings: Settings) -> dict[str, object]:
    data = message_summary(node.message, settings)
    data["trailers"] = [{"key": t.key, "value": t.value} for t in node.trailers]
    data["shown"] = node.shown
    if node.shown:
        data["body"] = node.body
        data["diff"] = node.diff
        data["diff_truncated"] = node.diff_truncated
    return data


def message_json(view: MessageView, settings: Settings) -> dict[str, object]:
    data = node_json(view.node, settings)
    data["replies"] = view.replies
    return data


def thread_json(view: ThreadView, settings: Settings) -> dict[str, object]:
    messages = []
    for node in view.nodes:
        data = node_json(node, settings)
        data.update(
            depth=node.depth,
            parent_missing=node.parent_missing,
            loop=node.loop,
            focus=node.focus,
        )
        messages.append(data)
    return {
        "root": view.root,
        "focus": view.focus,
        "total": view.total,
        "truncated": view.truncated,
        "root_missing": view.root_missing,
        "messages": messages,
    }


# --- sync ---------------------------------------------------------------------------


def inbox_json(report: MirrorReport) -> dict[str, object]:
    return {
        "url": report.url,
        "list": report.list_name,
        "path": str(report.path),
        "epochs": report.epochs,
        "cloned": report.cloned,
        "fetched": report.fetched,
        "unchanged": report.unchanged,
        "error": report.error,
    }


def match_summary_json(summary: MatchSummary) -> dict[str, object]:
    return {
        "repo": summary.repo,
        "commits": summary.commits,
        "matched": summary.matched,
        "no_match": summary.no_match,
        "skipped": summary.skipped,
        "by_method": dict(summary.by_method),
        "elapsed": round(summary.elapsed, 3),
    }


def sync_json(report: SyncReport) -> dict[str, object]:
    """`e2g sync --json`: the inboxes, the ingest (null when nothing was new), the
    repositories matched and those skipped."""
    return {
        "inboxes": [inbox_json(inbox) for inbox in report.inboxes],
        "ingest": ingest_json(report.ingest) if report.ingest is not None else None,
        "match": [match_summary_json(summary) for summary in report.matches],
        "repos_skipped": [
            {"repo": repo, "reason": reason} for repo, reason in report.repos_skipped
        ],
        "tokens": [
            {"repo": repo, **warm_json(found)}
            if not isinstance(found, str)
            else {"repo": repo, "error": found}
            for repo, found in report.tokens
        ],
        "elapsed": round(report.elapsed, 3),
    }


def tree_entry_json(entry: TreeEntry) -> dict[str, object]:
    """A file or directory of the tree's token page (`/api/v1/tree/...`), and a row
    of `e2g stats --by dir --tokens --json`."""
    return {
        "name": entry.name,
        "path": entry.path,
        "kind": entry.kind,
        "files": entry.files,
        "warm": entry.warm,
        "tokens": entry.tokens,
        "commits": entry.commits,
        "reviewed_tokens": entry.reviewed,
        "reviewed_share": None if entry.share is None else round(entry.share, 4),
        "tokens_by_verdict": entry.by_verdict,
        "skipped": entry.skipped,
    }


def tree_json(listing: TreeListing) -> dict[str, object]:
    """`/api/v1/tree/REV/PATH`: the directory summed, and this page's entries."""
    return {
        "rev": listing.rev,
        "path": listing.path,
        "warmed_rev": listing.warmed,
        "judged": listing.judged,
        "page": listing.page,
        "pages": listing.pages,
        "count": listing.listed,
        "total": tree_entry_json(listing.total),
        "entries": [tree_entry_json(entry) for entry in listing.entries],
    }


def warm_json(report: WarmReport) -> dict[str, object]:
    """`e2g tokens warm --json`, and each warmed tree of `e2g sync --json`."""
    return {
        "rev": report.rev,
        "files": report.files,
        "warmed": report.warmed,
        "cached": report.cached,
        "carried": report.carried,
        "skipped": dict(report.skipped),
        "failed": [{"path": path, "error": error} for path, error in report.failed],
        "walk_seconds": round(report.walk_seconds, 3),
        "elapsed": round(report.elapsed, 3),
    }
