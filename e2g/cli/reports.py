"""How an ingest reports itself, wherever it runs (`e2g ingest`, `e2g sync`): the
summary line, the progress bar's text, the per-epoch lines of a mirror, and the
errors an incomplete run ends with. Both commands import it; neither imports the
other."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from e2g.cli import output
from e2g.errors import IndexBehind, Interrupted

if TYPE_CHECKING:
    from e2g.api.mirrors import EpochEvent
    from e2g.ingest.pipeline import IngestReport, Progress


def ingest_summary(report: IngestReport) -> str:
    n, c = output.number, output.count
    text = (
        f"{c(report.messages, 'message')} ({n(report.new)} new): "
        f"{c(report.patches, 'patch', 'patches')}, {c(report.covers, 'cover')}, "
        f"{c(report.pulls, 'pull request')}, {c(report.replies, 'reply', 'replies')}, "
        f"{c(report.cross_posts, 'cross-post')}, {n(report.malformed)} malformed, "
        f"{c(report.dates_sanitised, 'date')} sanitised in {report.elapsed:.1f} s"
    )
    if report.deleted:
        text += f" ({n(report.deleted)} deleted)"
    if report.weighed:
        text += (
            f"; weighed the files of {c(report.weighed, 'patch', 'patches')} "
            "stored before"
        )
    if report.quoted_read:
        text += (
            f"; read {c(report.quoted_read, 'reply', 'replies')} stored before "
            "for a quoted patch"
        )
    if report.classified:
        text += (
            f"; classified {c(report.classified, 'message')} stored before "
            "for the backport process"
        )
    if report.malformed_reasons:
        reasons = ", ".join(
            f"{reason}: {count}"
            for reason, count in report.malformed_reasons.most_common(5)
        )
        text += f"\nmalformed: {reasons}"
    if report.damaged:
        reasons = ", ".join(
            f"{reason}: {count}"
            for reason, count in report.damaged_reasons.most_common(5)
        )
        text += (
            f"\n{c(report.damaged, 'message')} kept without a part that could not be "
            f"read ({reasons})"
        )
    return text


def ingest_progress(
    bar: output.ProgressBar, total: int | None
) -> Callable[[Progress], None]:
    """The ingest's progress, drawn in `bar` (messages, MB, rate, ETA)."""

    def progress(event: Progress) -> None:
        if event.index_lag is not None:
            bar.update(
                status=f"search index: {output.number(event.index_lag)} messages to go"
            )
            return
        bar.update(
            completed=min(event.bytes, total) if total else None,
            status=_progress_text(event, total),
        )

    return progress


def check_complete(report: IngestReport) -> None:
    """Raise what an interrupted ingest, or one that left the index behind, says."""
    if report.interrupted:
        behind = ""
        if report.index_behind:
            behind = f" (the search index lacks {output.number(report.index_lag)} of the store's messages until then)"
        raise Interrupted(
            f"interrupted: {output.number(report.new)} new messages were kept; run the same command to resume{behind}"
        )
    if report.index_behind:
        raise IndexBehind(
            f"the store is complete but the search index lacks {output.number(report.index_lag)} "
            f"of its messages ({report.index_problem}): run `e2g reindex`"
        )
    if report.index_problem:  # nothing new to index, but the index is unusable
        raise IndexBehind(
            f"the store is complete but the search index cannot be used "
            f"({report.index_problem})"
        )


def _progress_text(event: Progress, total: int | None) -> str:
    """Messages, MB and msg/s; with a known size, the share done and the time left
    (from the rate so far: a resumed file reads from its checkpoint, so less)."""
    rate = event.messages / event.elapsed if event.elapsed > 0 else 0.0
    text = f"{output.number(event.messages)} msgs  {output.megabytes(event.bytes)}"
    if total:
        text += f" of {output.megabytes(total)} ({min(event.bytes / total, 1):.0%})"
    text += f"  {rate:,.0f} msg/s"
    speed = event.bytes / event.elapsed if event.elapsed > 0 else 0.0
    if total and speed > 0 and event.bytes < total:
        left = int((total - event.bytes) / speed)
        text += f"  ETA {left // 3600}:{left // 60 % 60:02d}:{left % 60:02d}"
    return text


_SAID = {
    "clone": "cloning",
    "fetch": "fetching",
    "cloned": "cloned",
    "fetched": "fetched",
}


class EpochPrinter:
    """Per-epoch lines on stderr (a clone or fetch starting and ending), and git's
    own progress in the progress bar on a terminal. Called from several threads."""

    def __init__(self, bar: output.ProgressBar) -> None:
        self._bar = bar
        self._lock = threading.Lock()

    def __call__(self, event: EpochEvent) -> None:
        with self._lock:
            where = f"{event.list_name}: epoch {event.epoch}"
            if event.action == "git":
                self._bar.update(status=f"{where}: {event.detail}")
            elif event.action in _SAID:
                detail = f" {event.detail}" if event.detail else ""
                output.err(f"{where}: {_SAID[event.action]}{detail}")
