"""`e2g audit`: which commits of a range went in without review, or changed after it."""

from __future__ import annotations

import contextlib
import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from e2g.cli import output
from e2g.cli.context import (
    NOTHING_FOUND,
    AllRefsOption,
    RepoOption,
    RevsArgument,
    options,
)
from e2g.errors import OutputError, UsageError

if TYPE_CHECKING:
    from e2g.api.audit import AuditSummary, CommitAudit, Tally

MAX_HUNK_LINES = 40  # lines of one changed hunk `--diff` shows


class By(StrEnum):
    committer = "committer"
    dir = "dir"


def _verdicts(text: str) -> set[str]:
    """`--fail-on`'s comma-separated verdicts, each checked."""
    from e2g.api.audit import Verdict

    wanted = {item.strip() for item in text.split(",") if item.strip()}
    known = [str(verdict) for verdict in Verdict]
    unknown = sorted(wanted - set(known))
    if unknown:
        raise UsageError(
            f"--fail-on: no verdict {', '.join(unknown)} (verdicts: {', '.join(known)})"
        )
    return wanted


def _line(audit: CommitAudit) -> str:
    unbacked = [tag for tag in audit.tags if tag.backed_by is None]
    tags = (
        f"; {output.count(len(unbacked), 'tag')} with no mail behind: "
        + ", ".join(f"{t.trailer} {t.person.name or t.person.email}" for t in unbacked)
        if unbacked
        else ""
    )
    return (
        f"{audit.sha[:12]} {audit.verdict:<24} {output.truncate(audit.subject, 60)}"
        f"{output.trees(audit.trees)} · {audit.evidence}{tags}"
    )


def _hunks(audit: CommitAudit) -> None:
    if audit.delta is None:
        return
    for change in audit.delta.changes:
        output.out(f"    {change.kind} hunk in {change.path}")
        for line in change.shown()[:MAX_HUNK_LINES]:
            output.out(f"      {line}")


def _percent(share: float) -> str:
    return f"{share:.1%}"


def _tally_line(tally: Tally) -> str:
    from e2g.api.audit import Verdict

    counts = ", ".join(
        f"{output.number(tally.counts[verdict])} {verdict}" for verdict in Verdict
    )
    return f"{output.count(tally.total, 'commit')}: {counts}"


def render_summary(summary: AuditSummary) -> None:
    from e2g.api.audit import Verdict

    tally = summary.tally
    output.out()
    output.out(_tally_line(tally))
    if summary.archive is not None:
        archive = summary.archive
        output.out(
            f"archive: {archive.first:%Y-%m-%d} .. {archive.last:%Y-%m-%d} "
            f"({', '.join(archive.lists)}); "
            f"{output.count(tally.counts[Verdict.OUTSIDE], 'commit')} without a "
            "posting lie outside these dates: it cannot judge them"
        )
    output.out(
        f"coverage of the {output.count(tally.audited, 'commit')} neither exempt nor "
        f"outside the archive: strict "
        f"{_percent(tally.strict)} (reviewed), lenient {_percent(tally.lenient)} "
        "(reviewed, trivial change or changed after review)"
        + (
            " --strict: reviews by the committer alone not counted"
            if summary.strict
            else ""
        )
    )
    if summary.matched:
        output.out(
            f"matched first: {output.count(summary.matched, 'commit')} e2g match "
            "had not answered"
        )
    if summary.tags:
        output.out(
            f"review tags in commit messages: {output.number(summary.tags_backed)} of "
            f"{output.number(summary.tags)} backed by a mail from that person"
            + (
                f" ({output.number(summary.tags_outside)} more on commits outside "
                "the archive)"
                if summary.tags_outside
                else ""
            )
        )
    if summary.groups:
        rows = [[summary.by, "commits", "strict", "lenient", "not reviewed"]]
        for key, group in sorted(
            summary.groups.items(), key=lambda item: (-item[1].total, item[0])
        ):
            rows.append(
                [
                    key,
                    output.number(group.total),
                    _percent(group.strict),
                    _percent(group.lenient),
                    output.number(group.audited - group.counts[Verdict.REVIEWED]),
                ]
            )
        output.out()
        output.table(rows, widths=[min(40, max(len(row[0]) for row in rows)), 8, 7, 7])


def _write_sarif(path: Path, audits: list[CommitAudit], summary: AuditSummary) -> None:
    from e2g import __version__
    from e2g.render.audit import audit_sarif

    try:
        path.write_text(
            json.dumps(audit_sarif(audits, summary, version=__version__), indent=1)
            + "\n",
            encoding="utf-8",
        )
    except OSError as error:
        raise OutputError(
            f"cannot write the SARIF log to {path}: {error.strerror or error}"
        ) from None


def audit(  # noqa: PLR0913 - one parameter per command-line option
    ctx: typer.Context,
    revs: RevsArgument = None,
    all_refs: AllRefsOption = False,
    repo: RepoOption = Path(),
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help='One JSON object per commit, then {"summary": ...}.'
        ),
    ] = False,
    sarif: Annotated[
        Path | None,
        typer.Option(
            "--sarif",
            help="Also write a SARIF 2.1.0 log here: one result per commit that is "
            "not reviewed.",
            show_default=False,
        ),
    ] = None,
    fail_on: Annotated[
        str,
        typer.Option(
            "--fail-on",
            help=f"Exit {NOTHING_FOUND} when any commit has one of these verdicts "
            "(comma-separated; for CI).",
            show_default=False,
        ),
    ] = "",
    by: Annotated[
        By | None,
        typer.Option("--by", help="Also count by committer or by top directory."),
    ] = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict", help="A review by the committer alone does not count."
        ),
    ] = False,
    diff: Annotated[
        bool,
        typer.Option("--diff", help="Show the hunks changed after review."),
    ] = False,
    no_match: Annotated[
        bool,
        typer.Option(
            "--no-match",
            help="Judge from what e2g match stored only; commits it never answered "
            "are uncertain.",
        ),
    ] = False,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs", "-j", min=0, max=64, help="Match workers (0: one per core)."
        ),
    ] = 0,
) -> None:
    """Was the code that landed the code that was reviewed? One verdict per commit."""
    from e2g.api.audit import AuditOptions, Verdict
    from e2g.api.audit import audit as run_audit
    from e2g.render.audit import audit_json, audit_summary_json

    failing = _verdicts(fail_on)
    found: set[str] = set()
    kept: list[CommitAudit] = []
    # Not over a pager: text on a terminal is paged, and the bar would draw into it.
    bar = output.ProgressBar(
        "audit", enabled=not options(ctx).quiet and (as_json or not sys.stdout.isatty())
    )
    judged = 0

    def on_match(count: int) -> None:
        bar.update(status=f"{output.number(count)} commits matched first")

    def on_commit(audit: CommitAudit) -> None:
        nonlocal judged
        judged += 1
        bar.update(status=f"{output.number(judged)} commits judged")
        found.add(str(audit.verdict))
        if sarif is not None and audit.verdict is not Verdict.REVIEWED:
            kept.append(audit)
        if as_json:
            output.json_line(audit_json(audit))
            return
        output.out(_line(audit))
        if diff:
            _hunks(audit)

    with bar, contextlib.nullcontext() if as_json else output.paged():
        summary = run_audit(
            options(ctx).settings(),
            repo=repo,
            options=AuditOptions(
                revs=tuple(revs or ()),
                all_refs=all_refs,
                strict=strict,
                by=str(by) if by else "",
                match_first=not no_match,
                jobs=jobs,
            ),
            on_commit=on_commit,
            on_match=on_match,
        )
        if as_json:
            output.json_line(audit_summary_json(summary))
        else:
            render_summary(summary)
    if sarif is not None:
        _write_sarif(sarif, kept, summary)
    if failing & found:
        raise typer.Exit(NOTHING_FOUND)


def register(app: typer.Typer) -> None:
    app.command("audit")(audit)
