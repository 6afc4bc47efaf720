"""`e2g sync`: fetch every inbox ingested from a URL, ingest what is new, match the
known repositories."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from e2g.cli import output
from e2g.cli.context import JobsOption, options
from e2g.errors import MirrorError

if TYPE_CHECKING:
    from e2g.api.mirrors import MirrorReport
    from e2g.api.sync import SyncReport


def inbox_line(report: MirrorReport) -> str:
    if report.error is not None:
        return f"{report.list_name}: failed: {report.error}"
    return (
        f"{report.list_name}: {output.count(report.epochs, 'epoch')}: "
        f"{output.number(report.cloned)} cloned, {output.number(report.fetched)} "
        f"fetched, {output.number(report.unchanged)} up to date"
    )


def _print(report: SyncReport) -> None:
    from e2g.cli.match import match_summary
    from e2g.cli.reports import ingest_summary as summary

    for inbox in report.inboxes:
        output.err(inbox_line(inbox))
    if report.ingest is None:
        output.err("nothing new to ingest")
    else:
        output.err(summary(report.ingest))
    for matched in report.matches:
        output.err(f"{matched.repo}: {match_summary(matched)}")
    for repo, reason in report.repos_skipped:
        output.err(f"e2g: warning: {repo} not matched: {reason}")
    from e2g.cli.tokens import warm_summary

    for repo, found in report.tokens:
        if isinstance(found, str):
            output.err(
                f"e2g: warning: the token tree of {repo} not brought up: {found}"
            )
        else:
            output.err(f"{repo}: {warm_summary(found)}")
    output.err(
        f"synced {output.count(len(report.inboxes), 'inbox', 'inboxes')} in "
        f"{report.elapsed:.1f} s"
    )


def sync(
    ctx: typer.Context,
    jobs: JobsOption = 0,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the summary as JSON on stdout.")
    ] = False,
) -> None:
    """Fetch every inbox ingested from a URL, ingest what is new, match known repos.

    Run it daily (cron, a systemd timer): with nothing new it costs one check per
    epoch. A repository gets its commits new on HEAD matched, and its recent
    unmatched ones again when new mail came."""
    from e2g.api.sync import Callbacks
    from e2g.api.sync import sync as run
    from e2g.cli.reports import EpochPrinter, check_complete, ingest_progress

    quiet = options(ctx).quiet
    with output.ProgressBar("sync", enabled=not quiet) as bar:
        callbacks = Callbacks(
            epochs=None if quiet else EpochPrinter(bar),
            ingest=ingest_progress(bar, None),
        )
        report = run(options(ctx).settings(), workers=jobs, callbacks=callbacks)
    if as_json:
        from e2g.render import sync_json

        output.json_line(sync_json(report))
    elif not quiet:
        _print(report)
    if report.ingest is not None:
        check_complete(report.ingest)
    failed = report.failed
    if failed:
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        raise MirrorError(f"{failed[0].error}{more}")


def register(app: typer.Typer) -> None:
    app.command("sync")(sync)
