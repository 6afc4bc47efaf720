"""`e2g patches [QUERY]`, `e2g events` and `e2g series MESSAGE-ID`: the patch queue,
what changed in it, and the versions of one series.

Thin shells over e2g.api.queue.listing: parse the filters, call it, render lines or
JSON lines (e2g.render.queue)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from e2g.cli import output
from e2g.cli.context import NOTHING_FOUND, ExitCode, options

if TYPE_CHECKING:
    from e2g.api.queue.listing import EventView, PatchView, SeriesView
    from e2g.api.queue.versions import FileChange, SeriesHistory

ListOption = Annotated[
    list[str] | None,
    typer.Option(
        "--list", "-l", help="Only this list (repeatable).", show_default=False
    ),
]
FromOption = Annotated[
    str | None,
    typer.Option(
        "--from",
        help="Only patches by this author (a part of the name or address).",
        show_default=False,
    ),
]


def patches(  # noqa: PLR0913 - the command's options
    ctx: typer.Context,
    query: Annotated[
        list[str] | None,
        typer.Argument(
            help="A search as `e2g search` takes it: only the patches it finds.",
            show_default=False,
        ),
    ] = None,
    state: Annotated[
        str | None,
        typer.Option(
            "--state",
            help="States, comma-separated (new, under-review, reviewed, rejected, "
            "not-applied, untracked, superseded, applied; or all). Default: those "
            "needing action: new,under-review,reviewed.",
            show_default=False,
        ),
    ] = None,
    lists: ListOption = None,
    author: FromOption = None,
    since: Annotated[
        str | None,
        typer.Option("--since", help="Posted at or after (2024-05-01, '30 days ago')."),
    ] = None,
    until: Annotated[
        str | None, typer.Option("--until", help="Posted before this moment.")
    ] = None,
    flat: Annotated[
        bool, typer.Option("--flat", help="One line per patch, not per series.")
    ] = False,
    limit: Annotated[
        int,
        typer.Option(
            "--limit", "-n", min=1, max=10_000, help="Patch versions to show."
        ),
    ] = 100,
    offset: Annotated[
        int, typer.Option("--offset", min=0, max=10_000_000, help="Skip this many.")
    ] = 0,
    as_json: Annotated[
        bool,
        typer.Option("--json", "--jsonl", help="One JSON object per patch version."),
    ] = False,
    exit_code: ExitCode = False,
) -> None:
    """The patch queue: every patch on the lists with its state, newest first."""
    from e2g.api.queue import listing
    from e2g.index.store import QueueFilter

    settings = options(ctx).settings()
    wanted = QueueFilter(
        states=listing.parse_states(state),
        lists=tuple(lists or ()),
        author=author or "",
        since=listing.parse_when(since) if since else None,
        until=listing.parse_when(until) if until else None,
        limit=limit,
        offset=offset,
    )
    page = listing.patches(settings, query=" ".join(query or ()), wanted=wanted)
    if page.note:
        output.err(f"e2g: warning: {page.note}")
    if as_json:
        from e2g.render.queue import patch_json

        for view in page.patches:
            output.json_line(patch_json(view))
    else:
        with output.paged():
            if flat:
                output.table((_line(view) for view in page.patches), widths=WIDTHS)
            else:
                for series in page.series:
                    _series(series)
        shown = len(page.patches)
        if not options(ctx).quiet and page.total > offset + shown:
            output.err(
                f"{output.number(page.total)} patch versions; showing "
                f"{offset + 1}-{offset + shown} (--limit/--offset for more)"
            )
    if exit_code and not page.total:
        raise typer.Exit(NOTHING_FOUND)


WIDTHS = [10, 3, 26, 20]


def _state(view: PatchView) -> str:
    if view.state == "untracked":
        return f"{view.state} ({view.mail_state})"
    return view.state


def _line(view: PatchView, *, indent: str = "") -> list[str]:
    date = view.date.strftime("%Y-%m-%d") if view.date else "????-??-??"
    tags = ", ".join(
        f"{review.tag.removesuffix('-by')}: {review.who}" for review in view.reviews
    )
    commit = view.commits[0].commit[:12] if view.commits else ""
    tail = "  ".join(
        part
        for part in (
            output.count(view.replies, "reply", "replies") if view.replies else "",
            tags,
            commit,
        )
        if part
    )
    return [
        date,
        f"v{view.version}",
        _state(view),
        output.truncate(view.author_name or view.author_email, 20),
        f"{indent}{view.subject}" + (f"  [{tail}]" if tail else ""),
    ]


def _series(series: SeriesView) -> None:
    first = series.parts[0]
    if len(series.parts) == 1 and series.message_id == first.message_id:
        output.table([_line(first)], widths=WIDTHS)
        return
    state = f"{series.state} {series.tally}" if series.tally else series.state
    date = first.date.strftime("%Y-%m-%d") if first.date else "????-??-??"
    output.table(
        [
            [
                date,
                f"v{first.version}",
                state,
                output.truncate(first.author_name or first.author_email, 20),
                f"{series.subject}  ({output.count(series.total, 'patch', 'patches')})",
            ]
        ],
        widths=WIDTHS,
    )
    output.table((_line(view, indent="  ") for view in series.parts), widths=WIDTHS)


def events(  # noqa: PLR0913 - the command's options
    ctx: typer.Context,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            help="Events after this event id, or found at or after this moment.",
            show_default=False,
        ),
    ] = None,
    author: FromOption = None,
    lists: ListOption = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, max=100_000, help="Events to show.")
    ] = 1000,
    as_json: Annotated[
        bool, typer.Option("--json", "--jsonl", help="One JSON object per event.")
    ] = False,
    exit_code: ExitCode = False,
) -> None:
    """What ingest, match and sync found changed in the patch queue, oldest first."""
    from e2g.api.queue import listing
    from e2g.index.store import EventFilter

    settings = options(ctx).settings()
    after, moment = listing.since_filter(since)
    found = listing.events(
        settings,
        EventFilter(
            after_id=after,
            since=moment,
            author=author or "",
            lists=tuple(lists or ()),
            limit=limit,
        ),
    )
    if as_json:
        from e2g.render.queue import event_json

        for event in found:
            output.json_line(event_json(event))
    else:
        with output.paged():
            output.table((_event_line(event) for event in found), widths=[6, 16, 22])
    if exit_code and not found:
        raise typer.Exit(NOTHING_FOUND)


def _event_line(event: EventView) -> list[str]:
    what = event.kind
    if event.from_state or event.to_state:
        what += f" {event.from_state or ''}->{event.to_state or ''}".replace(" ->", " ")
    if event.commit:
        what += f" {event.commit[:12]}"
        what += f" {event.tree}" if event.tree else ""
        what += f" {event.release}" if event.release else ""
    return [
        str(event.id),
        event.found.strftime("%Y-%m-%d %H:%M"),
        output.truncate(event.author_name or event.author_email, 22),
        f"{what}  {event.subject}",
    ]


def series(
    ctx: typer.Context,
    message_id: Annotated[
        str,
        typer.Argument(
            help="A patch, cover letter or reply of the series (<id>, id, or a lore URL).",
            show_default=False,
        ),
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object: versions and changes.")
    ] = False,
) -> None:
    """Every version of one series side by side, and what changed between them."""
    from e2g.api.queue.versions import series_history
    from e2g.errors import UsageError
    from e2g.mail.msgid import from_argument

    wanted = from_argument(message_id)
    if wanted is None:
        raise UsageError(f"{message_id!r} is no Message-ID (<id>, id, or a lore URL)")
    history = series_history(options(ctx).settings(), wanted)
    if as_json:
        from e2g.render.queue import series_json

        output.json_line(series_json(history))
        return
    with output.paged():
        _history(history)


def _history(history: SeriesHistory) -> None:
    for version in history.versions:
        state = f"{version.state} {version.tally}" if version.tally else version.state
        date = version.date.strftime("%Y-%m-%d") if version.date else "????-??-??"
        output.out(f"v{version.version}  {date}  {state}  {version.subject}")
        output.table(
            (_line(view, indent="  ") for view in version.parts), widths=WIDTHS
        )
    for change in history.changes:
        output.out(f"v{change.before} -> v{change.after}:")
        for part in change.parts:
            if part.before is None:
                output.out(f"  {part.part}: new in v{change.after}")
            elif part.after is None:
                output.out(f"  {part.part}: gone in v{change.after}")
            else:
                files = ", ".join(_file(file) for file in part.files) or "no diff"
                output.out(f"  {part.part}: {files}")


def _file(file: FileChange) -> str:
    if file.change != "changed":
        return f"{file.path} {file.change}"
    counts = [
        f"{number} {name}"
        for number, name in (
            (file.edited, "edited"),
            (file.added, "added"),
            (file.dropped, "dropped"),
        )
        if number
    ]
    return f"{file.path} changed ({', '.join(counts)} hunks)"


def ty(
    ctx: typer.Context,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            help="Series applied after this event id or since this moment (default: "
            "since the last run; the mark is then left as it is).",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        str, typer.Option("--output", "-o", help="The mbox to write (- for stdout).")
    ] = "-",
    sender: Annotated[
        str | None,
        typer.Option(
            "--sender", help="The drafts' From: (default: none).", show_default=False
        ),
    ] = None,
) -> None:
    """'Applied, thanks' drafts for each series applied since the last run, as an
    mbox: threaded to the series, To its author, Cc the original Cc. Never sent."""
    from pathlib import Path

    from e2g.api.queue import listing, thanks

    settings = options(ctx).settings()
    after, moment = listing.since_filter(since) if since else (None, None)
    found = thanks.thanks(settings, after_id=after, since=moment)
    text = thanks.mbox(found.drafts, sender=sender)
    if out == "-":
        output.write(text)
    elif found.drafts:
        Path(out).write_text(text, encoding="utf-8")
    if since is None:
        thanks.write_mark(settings, found.last_event)
    if not options(ctx).quiet:
        subsets = sum(draft.subset for draft in found.drafts)
        output.err(
            f"{output.count(len(found.drafts), 'draft', 'drafts')}"
            + (f" ({subsets} of a subset)" if subsets else "")
            + (f" written to {out}" if out != "-" and found.drafts else "")
        )


def register(app: typer.Typer) -> None:
    app.command("patches")(patches)
    app.command("events")(events)
    app.command("series")(series)
    app.command("ty")(ty)
