"""`e2g tokens warm`, and `e2g blame --tokens` on a terminal: the file's lines, each
token coloured by the commit that wrote it, a gutter naming that line's commits
(newest first), and each commit's review the first time it appears."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from e2g.cli import output
from e2g.cli.context import JobsOption, RepoOption, options
from e2g.errors import UsageError

if TYPE_CHECKING:
    from e2g.api.blame import Review
    from e2g.api.token_warm import WarmEvent, WarmReport
    from e2g.api.tokens import Span, TokenResult

# 256-colour foregrounds that read on dark and light backgrounds alike; a commit's
# colour comes from its sha, so it is the same in every run and on every page.
PALETTE = (33, 166, 34, 163, 37, 136, 99, 160, 29, 130, 62, 127, 31, 172, 65, 133)
GUTTER_SHAS = 2  # short shas in a line's gutter before "+N"
_SHA = 8
_LOCATION = re.compile(r"^(?P<path>.+):(?P<line>[1-9]\d*):(?P<column>[1-9]\d*)$")


def split_location(text: str) -> tuple[str, int | None, int | None]:
    """`PATH:LINE:COLUMN` as its three parts; any other text is a path."""
    found = _LOCATION.match(text)
    if found is None:
        return text, None, None
    return found["path"], int(found["line"]), int(found["column"])


def use_color(choice: str) -> bool:
    if choice not in ("auto", "always", "never"):
        raise UsageError(f"bad --color {choice!r}: give auto, always or never")
    if choice == "auto":
        return sys.stdout.isatty()
    return choice == "always"


def colour(sha: str) -> int | None:
    """The palette colour of a commit (None: the work tree's own lines)."""
    from e2g.git.repo import UNCOMMITTED  # here: `e2g tokens` loads no git

    if sha == UNCOMMITTED or not sha:
        return None
    return PALETTE[int(sha[:7], 16) % len(PALETTE)]


def _paint(text: str, sha: str, *, color: bool) -> str:
    code = colour(sha)
    if not color or code is None:
        return text
    return f"\x1b[38;5;{code}m{text}\x1b[0m"


def _header(review: Review, *, color: bool) -> str:
    from e2g.render import review_cell

    commit = review.commit
    sha = _paint(commit.sha[:_SHA], commit.sha, color=color)
    return (
        f"{sha} {commit.author_date:%Y-%m-%d} "
        f"{output.truncate(commit.author.name, 20):<20}  {review_cell(review)}  "
        f"{output.truncate(commit.subject, 60)}"
    )


def _gutter(shas: list[str], *, color: bool) -> str:
    shown = [_paint(sha[:_SHA], sha, color=color) for sha in shas[:GUTTER_SHAS]]
    more = f"+{len(shas) - GUTTER_SHAS}" if len(shas) > GUTTER_SHAS else ""
    plain = (_SHA + 1) * min(len(shas), GUTTER_SHAS) + len(more)
    width = (_SHA + 1) * GUTTER_SHAS + 3
    return " ".join(shown) + (" " + more if more else "") + " " * max(0, width - plain)


def _painted_line(text: str, spans: list[Span], *, color: bool) -> str:
    """The line with each span in its commit's colour (whitespace between as is)."""
    if not color:
        return text
    parts: list[str] = []
    at = 0
    for span in spans:
        start = span.column - 1
        parts.append(text[at:start])
        parts.append(_paint(text[start : start + len(span.text)], span.sha, color=True))
        at = start + len(span.text)
    parts.append(text[at:])
    return "".join(parts)


def render_tokens(result: TokenResult, *, color: bool) -> None:
    """Each line with its gutter; a commit's review line before the first line that
    shows it."""
    width = len(str(result.first + len(result.lines) - 1))
    introduced: set[str] = set()
    for number, text, spans in result.line_spans():
        shas = _newest_first(result, {span.sha for span in spans})
        for sha in shas:
            if sha not in introduced:
                introduced.add(sha)
                output.out(_header(result.reviews[sha], color=color))
        gutter = _gutter(shas, color=color)
        output.out(
            f"{gutter}{number:>{width}}  {_painted_line(text, spans, color=color)}"
        )


def _newest_first(result: TokenResult, shas: set[str]) -> list[str]:
    from e2g.git.repo import UNCOMMITTED

    def when(sha: str) -> float:
        if sha == UNCOMMITTED:
            return float("inf")
        return result.reviews[sha].commit.commit_date.timestamp()

    return sorted(shas, key=lambda sha: (when(sha), sha), reverse=True)


# -- e2g tokens warm ----------------------------------------------------------------------


def warm(  # noqa: PLR0913 - one parameter per command-line option
    ctx: typer.Context,
    words: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[REV] [PATHSPEC]...",
            help="The revision (default: HEAD), then the paths to warm (default: "
            "the whole tree).",
            show_default=False,
        ),
    ] = None,
    repo: RepoOption = Path(),
    jobs: JobsOption = 0,
    max_bytes: Annotated[
        str,
        typer.Option(
            "--max-bytes",
            metavar="SIZE",
            help="Skip files larger than this (bytes, or 512K, 2M).",
        ),
    ] = "1M",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the summary as JSON on stdout.")
    ] = False,
) -> None:
    """Compute the token history of every text file of a tree ahead, and keep it.

    One walk of the history serves every file; the blames run in parallel (-j).
    Files .gitattributes marks linguist-generated, linguist-vendored, -diff or
    binary are skipped, as are binaries and files over --max-bytes. Run it again
    after Ctrl-C (or a kill): what was done is kept. On a later revision (or by
    `e2g sync`), only the files the new commits changed are blamed again."""
    from e2g.api.token_warm import split_rev
    from e2g.api.token_warm import warm as run
    from e2g.config import parse_size

    limit = parse_size(max_bytes)
    rev, pathspecs = split_rev(repo, words or [])
    quiet = options(ctx).quiet
    with output.ProgressBar("tokens", enabled=not quiet) as bar:

        def progress(event: WarmEvent) -> None:
            bar.update(
                completed=event.done / max(event.total, 1),
                status=f"{event.done:,}/{event.total:,} {event.path}",
            )

        bar_progress = progress if not quiet else None
        report = run(
            options(ctx).settings(),
            repo=repo,
            rev=rev,
            pathspecs=pathspecs,
            jobs=jobs,
            max_bytes=limit,
            progress=bar_progress,
        )
    if as_json:
        from e2g.render import warm_json

        output.json_line(warm_json(report))
    if not quiet:
        for path, error in report.failed:
            output.err(f"e2g: warning: {path}: {error}")
        output.err(warm_summary(report))


def warm_summary(report: WarmReport) -> str:
    skipped = sum(report.skipped.values())
    reasons = ", ".join(
        f"{count:,} {reason}" for reason, count in report.skipped.most_common()
    )
    return (
        f"tokens of {report.rev[:12]}: {output.count(report.files, 'file')}, "
        f"{report.warmed:,} blamed, {report.cached:,} already warm, "
        f"{report.carried:,} unchanged since the last warm, {skipped:,} skipped"
        f"{f' ({reasons})' if reasons else ''}, {len(report.failed):,} failed "
        f"in {report.elapsed:.1f} s (history walk {report.walk_seconds:.1f} s)"
    )


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        name="tokens",
        help="Token histories of a whole tree: warm them ahead.",
        no_args_is_help=True,
    )
    group.command("warm")(warm)
    app.add_typer(group, name="tokens")
