"""`e2g match`: many commits matched and their links stored, per range or tree."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from e2g.cli import output
from e2g.cli.context import (
    AllRefsOption,
    JobsOption,
    RepoOption,
    RevsArgument,
    options,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from e2g.api.match import MatchSummary
    from e2g.matcher.batch import Matched
from e2g.cli.link import IgnoreTrailers


def match_summary(summary: MatchSummary) -> str:
    n = output.number
    methods = ", ".join(
        f"{method} {n(count)}" for method, count in summary.by_method.most_common()
    )
    return (
        f"{output.count(summary.commits, 'commit')}: {n(summary.matched)} matched "
        f"({methods or 'none'}), {n(summary.no_match)} no match, "
        f"{n(summary.skipped)} already done, {output.count(summary.merges, 'merge')} "
        f"skipped in {summary.elapsed:.1f} s ({summary.rate:,.0f} commits/s)"
        + _tree_summary(summary)
    )


def _tree_summary(summary: MatchSummary) -> str:
    """What of the commits was answered from other commits (e2g.api.trees)."""
    n = output.number
    parts = [f"{n(summary.backports)} backports"] if summary.backports else []
    parts += [f"{n(summary.rebased)} rebased"] if summary.rebased else []
    where = output.trees([summary.tree] if summary.tree else [])
    return (
        f"; {', '.join(parts)} answered from their upstream commits{where}"
        if parts
        else where
    )


def _match_trees(  # noqa: PLR0913 - keyword-only
    ctx: typer.Context,
    names: list[str],
    *,
    jobs: int,
    redo: bool,
    on_result: Callable[[Matched, MatchSummary], None],
    jsonl: bool,
) -> None:
    """`e2g match --tree NAME...`: each tree's branches, one summary line each."""
    from e2g.api.match import match_tree
    from e2g.render import link_json

    for name in names:
        for summary in match_tree(
            options(ctx).settings(),
            name,
            jobs=jobs,
            redo=redo,
            on_result=on_result,
            to_json=link_json if jsonl else None,
        ):
            if not options(ctx).quiet:
                output.err(match_summary(summary))
                _notes(summary)


def _notes(summary: MatchSummary) -> None:
    """What a run's store says of its answers, one line each (on stderr)."""
    if summary.unweighed:
        output.err(
            "e2g: note: this store was written by an older e2g: `e2g ingest` of "
            "its archive (once; nothing is stored twice) makes matching faster"
        )
    if summary.unclassified:
        output.err(
            "e2g: note: the mail this store held before is not yet sorted from the "
            "stable process's: `e2g ingest` of its archive (once) does it; until "
            "then a stable review patch without an X-stable: header may be taken "
            "for a patch's posting"
        )


def match(  # noqa: PLR0913 - one parameter per command-line option
    ctx: typer.Context,
    revs: RevsArgument = None,
    all_refs: AllRefsOption = False,
    repo: RepoOption = Path(),
    jsonl: Annotated[
        bool,
        typer.Option(
            "--jsonl",
            "--json",
            help="One JSON object per commit on stdout (JSON lines).",
        ),
    ] = False,
    ignore_trailers: IgnoreTrailers = False,
    jobs: JobsOption = 0,
    all_results: Annotated[
        bool,
        typer.Option(
            "--all-results",
            help="Print every commit of the range as JSON lines, once each: the "
            "stored answer of those an earlier run matched too (implies --jsonl).",
        ),
    ] = False,
    redo: Annotated[
        bool,
        typer.Option(
            "--redo",
            help="Match the range's commits again even if done (after an e2g upgrade "
            "with new matching rules, say); their stored links are replaced.",
        ),
    ] = False,
    tree: Annotated[
        list[str] | None,
        typer.Option(
            "--tree",
            help="Match the branches of this tree of the config file "
            "([trees.NAME] repo, branches), in order, and its releases; repeatable.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Match every non-merge commit of a range and store the links."""
    from e2g.api.match import match as match_range
    from e2g.render import link_json

    jsonl = jsonl or all_results
    with output.ProgressBar("match", enabled=not options(ctx).quiet) as bar:

        def on_result(answer: Matched, summary: MatchSummary) -> None:
            if answer.json is not None:
                output.json_line(answer.json)
            bar.update(
                status=f"{output.number(summary.commits)} commits  {output.number(summary.matched)} matched  {summary.rate:,.0f}/s"
            )

        if tree:
            _match_trees(
                ctx, tree, jobs=jobs, redo=redo, on_result=on_result, jsonl=jsonl
            )
            return
        summary = match_range(
            options(ctx).settings(),
            revs or [],
            repo=repo,
            all_refs=all_refs,
            ignore_trailers=ignore_trailers,
            jobs=jobs,
            redo=redo,
            on_result=on_result,
            to_json=link_json if jsonl else None,
        )
        if jsonl and all_results:
            from e2g.api.answers import stored_results

            for result in stored_results(
                options(ctx).settings(), summary.repo, summary.done
            ):
                output.json_line(link_json(result))
    if not options(ctx).quiet:
        output.err(match_summary(summary))
        if summary.commits and summary.outside == summary.commits:
            output.warn_all_outside()
        _notes(summary)


def register(app: typer.Typer) -> None:
    app.command("match")(match)
