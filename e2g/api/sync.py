"""`e2g ingest URL` and `e2g sync`: mirror public-inboxes from the web, ingest them,
match the repositories already matched.

`ingest` mirrors each URL among its arguments (api.mirrors), records it in the
registry, and ingests every argument in one pipeline run, the mirrors read as local
inboxes (so a mirror ingested before is read from its checkpoints: new commits only).
`sync` brings every registered mirror level (four inboxes at a time: each check is a
network round trip, not CPU), ingests only the inboxes whose epochs changed since
they were last ingested, then runs `match` on the HEAD of each repository the store
holds answers for, and brings every tree `e2g tokens warm` warmed to its HEAD
(only the files the new commits changed are blamed again). In both, one inbox that fails (unreachable, missing, a damaged
epoch) is reported in its MirrorReport's `error` and the others go on (_mirror_one);
a failed inbox is not ingested until it mirrors whole.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, NamedTuple

from e2g.api import mirrors
from e2g.api.core import ingest as ingest_paths
from e2g.archives.detect import detect_sources
from e2g.archives.inbox_url import InboxUrl, is_url, parse_inbox_url
from e2g.config import Settings
from e2g.errors import E2gError, Interrupted, MirrorError, UsageError

if TYPE_CHECKING:
    from e2g.api.match import MatchSummary
    from e2g.api.token_warm import WarmReport
    from e2g.ingest.pipeline import IngestReport, ProgressCallback

# Inboxes checked at once: enough to hide the round trips of a sync with nothing
# new (benchmarks/sync.py), few enough to be polite to one server.
PARALLEL = 4


@dataclass(slots=True)
class SyncReport:
    inboxes: list[mirrors.MirrorReport] = field(default_factory=list)
    ingest: IngestReport | None = None  # None: no inbox had anything new
    matches: list[MatchSummary] = field(default_factory=list)
    # Repositories the store knows that could not be matched now, with the reason.
    repos_skipped: list[tuple[str, str]] = field(default_factory=list)
    # Each warmed token tree brought to its repository's HEAD (`e2g tokens warm`):
    # its report, or why it could not be.
    tokens: list[tuple[str, WarmReport | str]] = field(default_factory=list)
    elapsed: float = 0.0

    @property
    def failed(self) -> list[mirrors.MirrorReport]:
        return [report for report in self.inboxes if report.error is not None]


class Callbacks(NamedTuple):
    """What the caller sees while a run goes: epochs, then the ingest."""

    epochs: mirrors.EpochProgress | None = None
    ingest: ProgressCallback | None = None


NO_CALLBACKS = Callbacks()


def ingest(
    settings: Settings,
    items: Sequence[str],
    *,
    mirror_dir: Path | None = None,
    list_name: str | None = None,
    workers: int = 0,
    callbacks: Callbacks = NO_CALLBACKS,
    stdin: BinaryIO | None = None,
) -> tuple[IngestReport, list[mirrors.MirrorReport]]:
    """`e2g ingest` of paths and inbox URLs: each URL is mirrored first, then
    everything is ingested at once. An inbox that fails to mirror has its error in
    its report (naming its URL) and is left out of the ingest; the others go on.
    An invalid URL or a bad path refuses the run before anything is done."""
    inboxes = [parse_inbox_url(item) for item in items if is_url(item)]
    if mirror_dir is not None and not inboxes:
        raise UsageError("--mirror-dir is where URLs are mirrored: give an inbox URL")
    if not inboxes:
        report = ingest_paths(
            settings,
            items,
            list_name=list_name,
            workers=workers,
            progress=callbacks.ingest,
            stdin=stdin,
        )
        return report, []
    # A bad path refuses the run before any inbox is mirrored (minutes, maybe), as
    # the pipeline refuses it before anything is written.
    detect_sources([item for item in items if not is_url(item)])
    with mirrors.locked(settings):
        registry, done = _mirror_each(
            settings, inboxes, mirror_dir=mirror_dir, callbacks=callbacks
        )
        paths = [_local(item, done) for item in items]
        if all(path is None for path in paths):  # every inbox failed: nothing to read
            from e2g.ingest.pipeline import IngestReport

            return IngestReport(), list(done.values())
        report = ingest_paths(
            settings,
            [path for path in paths if path is not None],
            list_name=list_name,
            workers=workers,
            progress=callbacks.ingest,
            stdin=stdin,
        )
        if not report.interrupted:
            mirrored = [inbox for inbox in done.values() if inbox.error is None]
            _mark_ingested(settings, registry, mirrored)
    return report, list(done.values())


def _mirror_each(
    settings: Settings,
    inboxes: list[InboxUrl],
    *,
    mirror_dir: Path | None,
    callbacks: Callbacks,
) -> tuple[list[mirrors.Mirrored], dict[str, mirrors.MirrorReport]]:
    """Each inbox mirrored in turn, whether or not those before failed, and
    registered once it holds an epoch; the registry after, and each URL's report."""
    registry = mirrors.load(settings)
    done: dict[str, mirrors.MirrorReport] = {}
    for inbox in inboxes:
        path = mirrors.inbox_path(settings, inbox, mirror_dir)
        try:
            done[inbox.url] = _mirror_one(inbox.url, path, callbacks)
        finally:
            # Registered even when a clone failed part way: `e2g sync` (or this
            # command again) clones the rest.
            if mirrors.has_epochs(path):
                entry = _entry(registry, inbox.url, path)
                registry = mirrors.remember(settings, registry, entry)
    return registry, done


def _local(item: str, done: dict[str, mirrors.MirrorReport]) -> str | None:
    """What the pipeline reads for an argument: a path as given, a URL's mirror, or
    None for an inbox that failed to mirror."""
    if not is_url(item):
        return item
    report = done[parse_inbox_url(item).url]
    return str(report.path) if report.error is None else None


def _entry(registry: list[mirrors.Mirrored], url: str, path: Path) -> mirrors.Mirrored:
    """The registry entry for a mirror at path, keeping what it knows of it."""
    for entry in registry:
        if entry.path == path:
            return entry._replace(url=url)
    return mirrors.Mirrored(url, path, {})


def _mark_ingested(
    settings: Settings,
    registry: list[mirrors.Mirrored],
    reports: list[mirrors.MirrorReport],
) -> None:
    """Record the epochs' fingerprints taken before the ingest that just succeeded:
    what changes later is read by the next run."""
    for report in reports:
        entry = _entry(registry, report.url, report.path)
        registry = mirrors.remember(
            settings, registry, entry._replace(ingested=report.fingerprints)
        )


def sync(
    settings: Settings,
    *,
    workers: int = 0,
    callbacks: Callbacks = NO_CALLBACKS,
) -> SyncReport:
    """Fetch every registered inbox, ingest what is new, match known repositories."""
    started = time.monotonic()
    result = SyncReport()
    with mirrors.locked(settings):
        registry = mirrors.load(settings)
        if not registry:
            raise MirrorError(
                f"no inbox in {settings.data_dir} was ingested from a URL: run "
                "`e2g ingest https://lore.kernel.org/LIST/` first"
            )
        with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
            result.inboxes = list(
                pool.map(
                    lambda entry: _mirror_one(entry.url, entry.path, callbacks),
                    registry,
                )
            )
        # A store deleted since (to start afresh) has ingested nothing.
        fresh = not settings.store_path.exists()
        changed = [
            report
            for report, entry in zip(result.inboxes, registry, strict=True)
            if report.error is None and (fresh or report.fingerprints != entry.ingested)
        ]
        if changed:
            result.ingest = ingest_paths(
                settings,
                [str(report.path) for report in changed],
                workers=workers,
                progress=callbacks.ingest,
            )
            if not result.ingest.interrupted:
                _mark_ingested(settings, registry, changed)
    if result.ingest is None or not result.ingest.interrupted:
        _match_known(settings, result, workers=workers)
        from e2g.api.token_warm import warm_known

        result.tokens = warm_known(settings, jobs=workers)
    result.elapsed = time.monotonic() - started
    return result


def _mirror_one(url: str, path: Path, callbacks: Callbacks) -> mirrors.MirrorReport:
    """One inbox brought level; its failure is its report's, not the whole run's.
    The error names the URL (git's own names the epoch's, which begins with it).
    Ctrl-C is the whole run's: an ingest mirrors in the thread that receives it."""
    try:
        return mirrors.mirror(parse_inbox_url(url), path, progress=callbacks.epochs)
    except Interrupted:
        raise
    except E2gError as error:
        report = mirrors.MirrorReport(url, path.name, path)
        report.error = str(error) if url in str(error) else f"{url}: {error}"
        return report


def _match_known(settings: Settings, result: SyncReport, *, workers: int) -> None:
    """Match every repository the store holds answers for: HEAD's new commits, and
    the recent unmatched ones again when new mail came (api.match.match_head)."""
    from e2g.api.basis import open_store
    from e2g.api.match import match_head

    if not settings.store_path.exists():
        return
    with open_store(settings) as store:
        repos = [span.repo for span in store.matched_spans()]
    for repo in repos:
        if not Path(repo).is_dir():
            result.repos_skipped.append((repo, "the directory is gone"))
            continue
        try:
            result.matches.append(match_head(settings, Path(repo), jobs=workers))
        except E2gError as error:
            result.repos_skipped.append((repo, str(error)))
