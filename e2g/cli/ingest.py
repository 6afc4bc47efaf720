"""`e2g ingest` and `e2g reindex`: read archives into the store; rebuild the index."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from e2g.cli import output
from e2g.cli.context import options
from e2g.cli.reports import check_complete, ingest_progress, ingest_summary

if TYPE_CHECKING:
    pass


def ingest(
    ctx: typer.Context,
    paths: Annotated[
        list[str],
        typer.Argument(
            help="mbox/mboxrd files (.gz .xz .bz2 .zst), Maildirs, directories, public-inbox repos or URLs (https://lore.kernel.org/LIST/), pipermail .txt.gz months, or - for stdin.",
            show_default=False,
        ),
    ],
    list_name: Annotated[
        str | None,
        typer.Option("--list", help="List name to record, overriding List-Id:."),
    ] = None,
    index_bodies: Annotated[
        bool,
        typer.Option(
            "--index-bodies", help="Also index message bodies for search (slower)."
        ),
    ] = False,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            "-j",
            help="Parse worker processes (0: one per core).",
            min=0,
            max=64,
        ),
    ] = 0,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the summary as JSON on stdout.")
    ] = False,
    mirror_dir: Annotated[
        Path | None,
        typer.Option(
            "--mirror-dir",
            help="Mirror URLs' epochs into DIR/LIST/git/N.git (grokmirror's layout: "
            "epochs already there are fetched, not cloned again), not the data dir.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Read mailing-list archives into the store (idempotent, incremental, resumable).

    A public-inbox URL (https://lore.kernel.org/LIST/) is mirrored with git under
    the data dir first, then read like a local inbox; `e2g sync` keeps it current."""
    from e2g.api import sync as api
    from e2g.cli.reports import EpochPrinter
    from e2g.render import inbox_json

    settings = options(ctx).settings(index_bodies=index_bodies or None)
    quiet = options(ctx).quiet

    total = _plain_size(paths)
    with output.ProgressBar("ingest", enabled=not quiet, total=total) as bar:
        callbacks = api.Callbacks(
            epochs=None if quiet else EpochPrinter(bar),
            ingest=ingest_progress(bar, total),
        )
        report, mirrored = api.ingest(
            settings,
            paths,
            mirror_dir=mirror_dir,
            list_name=list_name,
            workers=jobs,
            callbacks=callbacks,
            stdin=sys.stdin.buffer,
        )
    failed = [inbox for inbox in mirrored if inbox.error is not None]
    if as_json:
        from e2g.render import ingest_json

        data = ingest_json(report)
        if mirrored:
            data["mirrors"] = [inbox_json(inbox) for inbox in mirrored]
        output.json_line(data)
    elif not quiet and (report.sources or not failed):  # not when nothing was read
        output.err(ingest_summary(report))
    for inbox in failed:  # each names its URL; the others were ingested
        output.err(f"e2g: error: {inbox.error}")
    check_complete(report)
    if failed:
        raise typer.Exit(1)


def _plain_size(paths: list[str]) -> int | None:
    """The bytes an ingest will read, when known: every path an uncompressed file
    (a directory, stdin or a compressed file has no size known in advance)."""
    from e2g.archives.compression import SUFFIXES

    total = 0
    for text in paths:
        path = Path(text)
        if text == "-" or path.suffix.lower() in SUFFIXES or not path.is_file():
            return None
        total += path.stat().st_size
    return total or None


def reindex(ctx: typer.Context) -> None:
    """Rebuild the full-text index from the store alone."""
    from e2g.api import core as api

    settings = options(ctx).settings()
    with output.ProgressBar("reindex", enabled=not options(ctx).quiet) as bar:
        count = api.reindex(
            settings,
            progress=lambda done: bar.update(status=f"{output.number(done)} docs"),
        )
    if not options(ctx).quiet:
        output.err(f"{output.count(count, 'message')} indexed")


def optimize(ctx: typer.Context) -> None:
    """Merge the full-text index into one segment and give the store's free pages back.

    Ingest writes the index in large segments it never rewrites, so its cost stays
    bounded at any size; this pays the merge once (minutes at a million messages).
    The store keeps the pages a migration or deleted mail freed for later writes;
    this returns them to the disk (it needs free space of about twice the store)."""
    from e2g.api import core as api

    settings = options(ctx).settings()
    with output.ProgressBar("optimize", enabled=not options(ctx).quiet):
        done = api.optimize(settings)
    if options(ctx).quiet:
        return
    if done.segments_before <= 1:
        output.err("the full-text index is one segment already")
    else:
        output.err(f"{done.segments_before} segments merged into {done.segments_after}")
    if done.store_after < done.store_before:
        output.err(
            f"store {output.megabytes(done.store_before)} -> "
            f"{output.megabytes(done.store_after)}: free pages returned to the disk"
        )


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest)
    app.command("reindex")(reindex)
    app.command("optimize")(optimize)
