"""`e2g link`: where one commit was reviewed, or which commit a posted patch became."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from e2g.cli import output
from e2g.cli.context import NOTHING_FOUND, ExitCode, RepoOption, options
from e2g.errors import E2gError, UsageError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from e2g.api.reverse import CommitDiff, WayBack
    from e2g.api.threads import ThreadNode
    from e2g.config import Settings
    from e2g.model.links import InTree, LinkResult, Posting

IgnoreTrailers = Annotated[
    bool,
    typer.Option(
        "--ignore-trailers",
        help="Match as if commits had no Link:/Message-Id: trailers.",
    ),
]


# What an applied posting is, where its method says more than "the applied version".
_APPLIED = {
    "": "the applied version",
    "quoted": "a reply quoting the applied patch whole (the patch's own mail is "
    "not in the archive)",
    "thread": "likely the applied patch's thread (not sure: its first mail is not "
    "in the archive)",
}


def _posting_lines(posting: Posting) -> list[str]:
    mark = "*" if posting.applied else " "
    date = posting.date.strftime("%Y-%m-%d") if posting.date else "????-??-??"
    # A sanitised date is marked, and its footnote says what the header said.
    corrected = "*" if posting.date_corrected else " "
    lists = ", ".join(posting.lists) or "-"
    lines = [
        f"{mark} {date}{corrected} v{posting.version}  {posting.kind:<5}  {lists}",
        *(
            [f"    {output.corrected_date(posting.date_source, posting.date_raw)}"]
            if posting.date_corrected
            else []
        ),
        f"    {posting.subject}",
        f"    {posting.author.name} <{posting.author.email}>",
        f"    <{posting.message_id}>",
        *([f"    {posting.url}"] if posting.url else []),
        f"    found by {posting.method} (score {posting.score:.2f} of 1); "
        f"{output.count(posting.replies, 'reply', 'replies')}"
        + (
            f"; {_APPLIED.get(posting.method, _APPLIED[''])}" if posting.applied else ""
        ),
        *[f"    {item.detail}" for item in posting.evidence if item.signal == "thread"],
    ]
    lines += [f"    {reviewer}" for reviewer in posting.reviewers]
    return lines


def render_link(result: LinkResult) -> None:
    commit = result.commit
    output.out(f"commit {commit.sha}")
    output.out(f"    {commit.subject}")
    output.out(
        f"    {commit.author.name} <{commit.author.email}>  {commit.author_date:%Y-%m-%d}"
    )
    output.out()
    _render_trees(result)
    if result.merge:
        _render_merge(result)
        return
    _render_postings(result)
    if result.own:
        output.out("the backport's own mails:")
        output.out()
        for posting in result.own:
            for line in _posting_lines(posting):
                output.out(line)
            output.out()


def _render_merge(result: LinkResult) -> None:
    """A merge: the pull request that asked for it, then each commit it brought in
    with its review in one line."""
    if result.postings:
        output.out("pull request:")
        for posting in result.postings:
            for line in _posting_lines(posting):
                output.out(line)
            output.out()
    else:
        output.out(f"no pull request found ({result.note})")
        output.out()
    output.out(f"brought in {output.count(len(result.merged), 'commit')}:")
    for found in result.merged:
        output.out(f"  {found.commit.sha[:12]}  {found.commit.subject}")
        output.out(f"      {_review_line(found)}")


def _review_line(result: LinkResult) -> str:
    applied = next((p for p in result.postings if p.applied), None)
    if applied is None:
        return "no posting found"
    lists = ", ".join(applied.lists) or "-"
    reviews = sum(len(p.reviewers) for p in result.postings)
    return (
        f"v{applied.version} · {lists} · "
        f"{output.count(applied.replies, 'reply', 'replies')} · "
        f"{output.count(reviews, 'review trailer')} · <{applied.message_id}>"
    )


def _render_trees(result: LinkResult) -> None:
    """The upstream of a backport, and every tree's commit with its release."""
    upstream = result.upstream
    if upstream is not None:
        tree = f" ({upstream.tree})" if upstream.tree else ""
        output.out(
            f"backport of {upstream.commit}{tree}, found by {upstream.how}; "
            "its postings and review:"
        )
        output.out()
    _render_in_trees(result.trees)


def _render_in_trees(places: Sequence[InTree]) -> None:
    """Each tree's commit of the patch and its release, when there is more to say
    than the one commit in an unnamed repository (a merge, a tag)."""
    from e2g.render import releases_line

    said = any(place.tree or place.release or place.merge for place in places)
    if len(places) < 2 and not said:
        return
    output.out("in trees:")
    for place in places:
        where = "/".join(p for p in (place.tree, place.branch) if p) or place.repo
        release = place.release or "not released yet"
        merge = f", merged by {place.merge[:12]}" if place.merge else ""
        output.out(
            f"  {place.commit[:12]}  {where:<24} {release:<12} {place.how}{merge}"
        )
    line = releases_line(places)
    if line:
        output.out(f"  {line}")
    output.out()


def _render_postings(result: LinkResult) -> None:
    if not result.postings:
        output.out("no match: no posting of this commit's patch was found in the store")
        if result.note:
            output.out(f"  ({result.note})")
        for rejected in result.rejected:
            output.out(
                f"  rejected {rejected.score:.2f} <{rejected.message_id}> {rejected.subject}"
            )
            output.out(f"           {rejected.reason}")
        return
    for posting in result.postings:
        for line in _posting_lines(posting):
            output.out(line)
        output.out()
    if any(posting.applied for posting in result.postings):
        output.out("* marks the version that was applied as this commit")


def _render_node(node: ThreadNode) -> list[str]:
    """One message of a thread, indented by depth; quoted text and diffs folded."""
    pad = "  " * min(node.depth, 12)
    message = node.message
    date = (
        message.date.strftime("%Y-%m-%d %H:%M") if message.date else "????-??-?? ??:??"
    )
    corrected = "*" if node.date_corrected else " "
    lines = [
        f"{pad}{date}{corrected} {message.author_name or message.author_email}",
        *(
            [f"{pad}  {output.corrected_date(message.date_source, message.date_raw)}"]
            if node.date_corrected
            else []
        ),
        f"{pad}  {message.subject}",
    ]
    if not node.shown:
        return lines
    for block in node.blocks:
        if block.kind == "quote":
            lines.append(f"{pad}  [{block.lines} quoted lines]")
        else:
            lines += [f"{pad}  {line}" for line in block.text.splitlines()]
    if node.diff:
        lines.append(f"{pad}  [diff: {node.diff.count(chr(10))} lines]")
    return lines


def _render_thread(result: LinkResult, settings: Settings) -> None:
    from e2g.api.threads import thread_view

    shown: set[str] = set()
    for posting in result.postings:
        if posting.thread_root in shown:
            continue
        shown.add(posting.thread_root)
        view = thread_view(settings, posting.message_id)
        if view is None:
            continue
        output.out(
            f"--- thread of <{posting.message_id}> ({output.count(view.total, 'message')})"
        )
        for node in view.nodes:
            for line in _render_node(node):
                output.out(line)
            output.out()


def link(  # noqa: PLR0913 - one parameter per command-line option
    ctx: typer.Context,
    revs: Annotated[
        list[str],
        typer.Argument(
            help="Commits (any revision git accepts) or posted patches' Message-IDs "
            "(<id>, id, or an archive URL); - reads them from stdin, one per line.",
            show_default=False,
        ),
    ],
    repo: RepoOption = Path(),
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print each result as one JSON object (a line)."),
    ] = False,
    thread: Annotated[
        bool, typer.Option("--thread", help="Also print the discussion threads.")
    ] = False,
    ignore_trailers: IgnoreTrailers = False,
    diff: Annotated[
        bool,
        typer.Option(
            "--diff",
            help="With a Message-ID: how the applied commit differs from the posted "
            "patch (hunks added, dropped and edited).",
        ),
    ] = False,
    exit_code: ExitCode = False,
) -> None:
    """Show the postings and threads that carried a commit, or the commit that
    applied a posted patch."""
    from e2g.mail.msgid import from_argument

    arguments = _arguments(revs)
    settings = options(ctx).settings()
    found_all, failure = True, 0
    with contextlib.nullcontext() if as_json else output.paged():
        for number, argument in enumerate(arguments):
            if number and not as_json:
                output.out()
            message_id = from_argument(argument)
            try:
                if message_id is not None:
                    found = _way_back(
                        settings, message_id, as_json=as_json, diff=diff, repo=repo
                    )
                else:
                    found = _commit(
                        settings,
                        argument,
                        repo=repo,
                        as_json=as_json,
                        thread=thread,
                        ignore_trailers=ignore_trailers,
                    )
            except E2gError as error:
                if len(arguments) == 1:
                    raise
                output.err(f"e2g: error: {argument}: {error}")
                failure = max(failure, error.exit_code)
                continue
            found_all = found_all and found
    if failure:
        raise typer.Exit(failure)
    if exit_code and not found_all:
        raise typer.Exit(NOTHING_FOUND)


def _arguments(revs: list[str]) -> list[str]:
    """The arguments, with `-` replaced by stdin's non-blank lines."""
    found: list[str] = []
    for rev in revs:
        if rev == "-":
            found += [line.strip() for line in sys.stdin if line.strip()]
        else:
            found.append(rev)
    if not found:
        raise UsageError("no commit or Message-ID given (stdin was empty)")
    return found


def _commit(  # noqa: PLR0913 - all keyword-only
    settings: Settings,
    rev: str,
    *,
    repo: Path,
    as_json: bool,
    thread: bool,
    ignore_trailers: bool,
) -> bool:
    from e2g.api.link import link as link_commit
    from e2g.render import link_json

    result = link_commit(settings, rev, repo=repo, ignore_trailers=ignore_trailers)
    if as_json:
        output.json_line(link_json(result))
    else:
        render_link(result)
        if thread:
            _render_thread(result, settings)
    return bool(result.postings)


def _way_back(
    settings: Settings, message_id: str, *, as_json: bool, diff: bool, repo: Path
) -> bool:
    from e2g.api.reverse import (
        APPLIED,
        PARTLY_APPLIED,
        SUPERSEDED,
        differences,
        way_back,
    )
    from e2g.render import interdiff_json, way_back_json

    answer = way_back(settings, message_id)
    found = differences(settings, answer, repo=repo) if diff else []
    if as_json:
        data = way_back_json(answer)
        if diff:
            data["diff"] = [interdiff_json(one) for one in found]
        output.json_line(data)
    else:
        render_way_back(answer)
        for one in found:
            render_interdiff(one)
    return answer.status in (APPLIED, SUPERSEDED, PARTLY_APPLIED)


def render_interdiff(found: CommitDiff) -> None:
    interdiff = found.interdiff
    output.out()
    output.out(
        f"--- commit {found.commit.sha[:12]} against the posted <{found.message_id}>: "
        + (
            "the same hunks"
            if interdiff.same
            else f"{output.count(interdiff.identical, 'hunk')} identical, "
            + ", ".join(
                f"{sum(change.kind == kind for change in interdiff.changes)} {kind}"
                for kind in ("edited", "dropped", "added")
            )
        )
    )
    for change in interdiff.changes:
        output.out(f"{change.kind} hunk in {change.path}")
        for line in change.shown():
            output.out(f"    {line}")


def render_way_back(answer: WayBack) -> None:
    if answer.asked:
        output.out(
            f"<{answer.asked}> is a reply; answering for the patch it replies to"
        )
    output.out(f"message <{answer.message_id}>")
    output.out(f"    {answer.subject}")
    output.out()
    output.out(f"{answer.status}" + (f": {answer.note}" if answer.note else ""))
    if answer.series is not None:
        for patch in answer.series.patches:
            sha = patch.commits[0].sha[:12] if patch.commits else "-" * 12
            output.out(f"  {patch.status:<11} {sha}  {patch.subject}")
        return
    for commit in answer.commits:
        output.out(
            f"  {commit.sha[:12]} in {commit.repo} on {commit.date:%Y-%m-%d}: "
            f"{commit.subject}"
        )
        output.out(
            f"    applied v{commit.posting_version} <{commit.posting}>; found by "
            f"{commit.method} (score {commit.score:.2f} of 1)"
        )
    _render_in_trees(answer.trees)


def register(app: typer.Typer) -> None:
    app.command("link")(link)
