"""Mirrored inboxes: finding an inbox's epochs, cloning and fetching them, and the
registry that remembers where each mirror came from.

Layout: <data dir>/mirrors/<host>/<list>/git/<N>.git; with a mirror directory (one
that grokmirror keeps, say), <dir>/<list>/git/<N>.git, grokmirror's layout of lore,
so an epoch it already holds is fetched, never cloned again. Either way the inbox
directory is what `e2g ingest` reads as a local public-inbox.

Epochs come from the inbox's manifest.js.gz where served (one request, and each
epoch's fingerprint tells whether it changed without asking git); else they are
probed as public-inbox's own mirroring instructions do: `git ls-remote` of epoch 0,
1, ... until one is missing, each answer doubling as that epoch's up-to-date check.
An epoch that appears later is found the same way.

The registry, <data dir>/mirrors/inboxes.json, holds per inbox its URL, its directory
and the fingerprints of its epochs as last ingested (so a sync killed between fetch
and ingest still ingests what it fetched). It is replaced whole (a temporary file
renamed), under a lock that also keeps two runs from cloning the same epoch at once.

Used by api.sync; the git work is e2g.git.mirror's, the URL rules
e2g.archives.inbox_url's.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from e2g.archives import public_inbox
from e2g.archives.inbox_url import InboxUrl, is_missing, read_manifest
from e2g.config import Settings
from e2g.errors import MirrorError
from e2g.git import mirror as git
from e2g.locks import flock_within

REGISTRY = "inboxes.json"
MANIFEST_SECONDS = 60
_VERSION = 1


class EpochEvent(NamedTuple):
    """Progress: an epoch's clone or fetch starts or ends, or a line of git's own."""

    list_name: str
    epoch: int
    action: str  # "clone", "fetch", "cloned", "fetched", "up to date", "git"
    detail: str = ""


EpochProgress = Callable[[EpochEvent], None]


@dataclass(slots=True)
class MirrorReport:
    url: str
    list_name: str
    path: Path
    epochs: int = 0
    cloned: int = 0
    fetched: int = 0
    unchanged: int = 0
    error: str | None = None  # why it failed; an ingest or sync goes on with the others
    # "git/N.git" -> fingerprint of each local epoch after mirroring
    fingerprints: dict[str, str] = field(default_factory=dict)


class Mirrored(NamedTuple):
    """One registry entry: an inbox mirrored from `url` into `path`."""

    url: str
    path: Path
    ingested: dict[str, str]  # "git/N.git" -> fingerprint as last ingested


def mirror_root(settings: Settings) -> Path:
    return settings.data_dir / "mirrors"


def inbox_path(settings: Settings, inbox: InboxUrl, mirror_dir: Path | None) -> Path:
    """Absolute: the registry and the store's checkpoints key the inbox by it."""
    if mirror_dir is not None:
        return mirror_dir.resolve() / inbox.list_name
    return (mirror_root(settings) / inbox.host_dir / inbox.list_name).resolve()


def mirror(
    inbox: InboxUrl, path: Path, *, progress: EpochProgress | None
) -> MirrorReport:
    """Clone the inbox's new epochs into path/git/ and fetch those that changed."""
    report = MirrorReport(inbox.url, inbox.list_name, path)
    listed = read_manifest(inbox, timeout=MANIFEST_SECONDS)
    if listed is not None:
        for number, remote in sorted(listed.items()):
            url = inbox.epoch_url(number, short=False)
            _update(report, number, url, inbox.scheme, progress, fingerprint=remote)
    else:
        _probe(inbox, report, progress)
    if report.epochs == 0:
        raise MirrorError(_no_epochs(inbox))
    _check_inbox(inbox, report)
    return report


def _probe(
    inbox: InboxUrl, report: MirrorReport, progress: EpochProgress | None
) -> None:
    """Epochs 0, 1, ... until one is missing; the URL form is the one epoch 0 has."""
    # LIST/git/0.git (a plain directory served, or public-inbox), then LIST/0
    forms: tuple[bool, ...] = (False, True)
    number = 0
    while True:
        for short in forms:
            url = inbox.epoch_url(number, short=short)
            refs = git.remote_refs(url, scheme=inbox.scheme)
            if refs is not None:
                forms = (short,)
                break
        else:
            return
        _update(report, number, url, inbox.scheme, progress, refs=refs)
        number += 1


def _update(
    report: MirrorReport,
    number: int,
    url: str,
    scheme: str,
    progress: EpochProgress | None,
    *,
    fingerprint: str | None = None,
    refs: dict[str, str] | None = None,
) -> None:
    """Clone epoch `number`, or fetch it unless the server's fingerprint or refs
    say it is already level."""
    name = f"git/{number}.git"
    git_dir = report.path / name
    say = _sayer(report.list_name, number, progress)
    report.epochs += 1
    if not git_dir.is_dir():
        say("clone", url)
        git.clone(url, git_dir, scheme=scheme, progress=_git_lines(say, progress))
        report.cloned += 1
        say("cloned")
    elif _level(git_dir, fingerprint, refs):
        report.unchanged += 1
        say("up to date")
        if fingerprint is not None:  # the local one, just compared equal
            report.fingerprints[name] = fingerprint
            return
    else:
        say("fetch", url)
        git.fetch(url, git_dir, scheme=scheme, progress=_git_lines(say, progress))
        report.fetched += 1
        say("fetched")
    report.fingerprints[name] = git.fingerprint(git_dir)


def _level(git_dir: Path, fingerprint: str | None, refs: dict[str, str] | None) -> bool:
    if fingerprint is not None:
        return git.fingerprint(git_dir) == fingerprint
    if refs is not None:
        return git.local_refs(git_dir) == refs
    return False  # nothing to compare: fetching finds out


def _sayer(
    list_name: str, number: int, progress: EpochProgress | None
) -> Callable[..., None]:
    def say(action: str, detail: str = "") -> None:
        if progress is not None:
            progress(EpochEvent(list_name, number, action, detail))

    return say


def _git_lines(
    say: Callable[..., None], progress: EpochProgress | None
) -> git.Progress | None:
    if progress is None:
        return None
    return lambda line: say("git", line)


def _no_epochs(inbox: InboxUrl) -> str:
    if is_missing(inbox, timeout=MANIFEST_SECONDS):
        return (
            f"{inbox.url} not found (HTTP 404): check the list's name "
            "(lore.kernel.org lists them on its front page)"
        )
    return (
        f"{inbox.url} is not a public-inbox: no manifest.js.gz listing epochs, and "
        f"no git repository at {inbox.epoch_url(0, short=False)} or "
        f"{inbox.epoch_url(0, short=True)}; give the inbox's URL "
        "(https://lore.kernel.org/LIST/)"
    )


def _check_inbox(inbox: InboxUrl, report: MirrorReport) -> None:
    epochs = public_inbox.find_epochs(report.path)
    if not epochs or public_inbox.is_inbox(epochs, label=inbox.url):
        return
    if report.cloned == report.epochs:  # all cloned just now: nobody else's data
        shutil.rmtree(report.path)
    raise MirrorError(
        f"{inbox.url} is not a public-inbox: its epochs' commits hold no message "
        "('m' or 'd' file); give the URL of an inbox"
    )


def has_epochs(path: Path) -> bool:
    """Whether a mirror holds at least one whole epoch (a failed run may have
    cloned some before it stopped: the next run goes on from there)."""
    return bool(public_inbox.find_epochs(path))


# -- the registry ---------------------------------------------------------------------


@contextlib.contextmanager
def locked(settings: Settings) -> Iterator[None]:
    """Hold the mirrors' lock for a whole run; a second run fails at once."""
    root = mirror_root(settings)
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("a") as handle:
        if not flock_within(handle.fileno(), 0.0):
            raise MirrorError(
                f"another e2g ingest or sync is mirroring into {root}: "
                "wait for it to finish"
            )
        yield


def load(settings: Settings) -> list[Mirrored]:
    """Every inbox mirrored from a URL, in the order first ingested."""
    try:
        state = json.loads((mirror_root(settings) / REGISTRY).read_bytes())
        entries = state["inboxes"] if state.get("v") == _VERSION else []
    except FileNotFoundError:
        return []
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise MirrorError(
            f"cannot read {mirror_root(settings) / REGISTRY}: {error}; "
            "run `e2g ingest URL` again for each inbox to write it anew"
        ) from None
    return [
        Mirrored(
            str(entry["url"]), Path(entry["path"]), dict(entry.get("ingested", {}))
        )
        for entry in entries
        if isinstance(entry, dict) and "url" in entry and "path" in entry
    ]


def remember(
    settings: Settings, entries: list[Mirrored], item: Mirrored
) -> list[Mirrored]:
    """The registry with `item` in place of any entry for the same directory."""
    kept = [entry for entry in entries if entry.path != item.path]
    position = next(
        (n for n, entry in enumerate(entries) if entry.path == item.path), len(kept)
    )
    kept.insert(position, item)
    _save(settings, kept)
    return kept


def _save(settings: Settings, entries: list[Mirrored]) -> None:
    root = mirror_root(settings)
    state = {
        "v": _VERSION,
        "inboxes": [
            {"url": entry.url, "path": str(entry.path), "ingested": entry.ingested}
            for entry in entries
        ],
    }
    handle, temporary = tempfile.mkstemp(dir=root, prefix=".inboxes.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(state, stream, indent=1)
            stream.flush()
            os.fsync(stream.fileno())
        Path(temporary).replace(root / REGISTRY)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
