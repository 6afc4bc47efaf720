"""The way back: from a posted patch to the commit that applied it.

`e2g link MESSAGE-ID` answers "was this patch applied, as which commit?" from what
`e2g match` stored, in every repository it has matched; it never runs git. The answer
holds for any member of the patch's family (its other versions, resends and
cross-posts, by the same author under the same subject), because the matcher links a
commit to all of them and marks the one it applied:

- `applied`: a commit carries this posting (the applied one, or a resend or
  cross-post of the same version);
- `superseded`: a later version of the patch was applied (named, with its commit);
- `not applied`: no member of the family was matched, and a matched repository's
  commits span the message's date, so an applied version would have been seen;
- `unknown`: no matched repository covers the message's date (it may be applied
  later, or in a repository not matched yet).

A cover letter answers for each patch of its series, with a tally; a reply answers for
the patch or cover letter it replies to (the nearest one up its thread).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import NamedTuple

from e2g.api import tree_view
from e2g.api.basis import open_store
from e2g.config import Settings
from e2g.errors import NotFound, UsageError
from e2g.index.store import LinkedCommit, MatchedSpan, Store
from e2g.mail.backport import PROCESS_METHODS
from e2g.mail.interdiff import Interdiff, compare
from e2g.matcher.postings import same_author
from e2g.model import Kind
from e2g.model.links import InTree
from e2g.model.stored import StoredMessage
from e2g.words import count

APPLIED = "applied"
SUPERSEDED = "superseded"
NOT_APPLIED = "not applied"
UNKNOWN = "unknown"
PARTLY_APPLIED = "partly applied"  # a cover letter: some of its patches, not all

FAMILY_WINDOW = timedelta(
    days=2 * 365
)  # how far apart two versions of one patch may be
MAX_ANCESTORS = 64  # thread levels walked up from a reply to its patch
MAX_SERIES = 200  # patches of one series answered for a cover letter


class Applied(NamedTuple):
    """A commit that carries the asked-for patch, or a later version of it."""

    sha: str
    repo: str
    subject: str
    date: datetime
    method: str
    score: float
    posting: str  # the Message-ID of the posting the commit applied
    posting_version: int


class WayBack(NamedTuple):
    message_id: str
    subject: str
    version: int
    status: str
    commits: tuple[Applied, ...] = ()
    note: str = ""
    series: SeriesTally | None = None
    asked: str | None = (
        None  # the reply that was asked for, when answered for its patch
    )
    # Every tree's commit of the patch (e2g.api.trees): the applied commits and
    # their backports, each with its branch and first release.
    trees: tuple[InTree, ...] = ()


class SeriesTally(NamedTuple):
    cover: str
    patches: tuple[WayBack, ...]

    @property
    def applied(self) -> int:
        return sum(patch.status in (APPLIED, SUPERSEDED) for patch in self.patches)

    @property
    def total(self) -> int:
        return len(self.patches)


def way_back(settings: Settings, message_id: str) -> WayBack:
    """Which commit applied the patch `message_id` (or its family, or its series)."""
    with open_store(settings) as store:
        message = store.message(message_id)
        if message is None:
            raise NotFound(
                f"no message <{message_id}> in the store: ingest the list's archive "
                "that carried it, or find it with e2g search"
            )
        target = patch_or_cover(store, message)
        if target is None:
            raise UsageError(
                f"<{message_id}> is not a patch, a cover letter or a reply to one: "
                "e2g link answers which commit applied a posted patch"
            )
        spans = store.matched_spans()
        if target.kind is Kind.COVER and target.series_id is not None:
            answer = _for_cover(store, target, spans)
        else:
            answer = for_patch(store, target, spans)
    if target.message_id != message_id:
        return answer._replace(asked=message_id)
    return answer


def _posted(store: Store, message: StoredMessage) -> bool:
    """A reply that is itself a commit's posting: one quoting the whole patch, or
    the thread of a patch whose mail the archive lacks (e2g.matcher)."""
    return message.kind is Kind.REPLY and bool(
        store.links_of_messages([message.message_id])
    )


def patch_or_cover(store: Store, message: StoredMessage) -> StoredMessage | None:
    """The message itself when it is a patch, a cover letter or a reply that is a
    commit's posting, else the nearest one up its thread (bounded: References can
    loop)."""
    current: StoredMessage | None = message
    seen: set[str] = set()
    for _ in range(MAX_ANCESTORS):
        if current is None or current.message_id in seen:
            return None
        if current.kind in (Kind.PATCH, Kind.COVER) or _posted(store, current):
            return current
        seen.add(current.message_id)
        current = store.message(current.parent_id) if current.parent_id else None
    return None


def family(
    store: Store, patch: StoredMessage, *, known: dict[int, StoredMessage] | None = None
) -> list[StoredMessage]:
    """The patch and its relatives: the same subject by the same author within
    FAMILY_WINDOW, and the same patch-id. `known`: messages already read, by seq
    (a caller asking of many patches keeps it; what is read here joins it)."""
    if patch.date is None:
        low, high = 0, 2**62
    else:
        stamp = int(patch.date.timestamp())
        low, high = (
            stamp - int(FAMILY_WINDOW.total_seconds()),
            stamp + int(FAMILY_WINDOW.total_seconds()),
        )
    same_subject, same_patch = store.family_seqs(
        subject_key=patch.subject_key, patch_id=patch.patch_id, low=low, high=high
    )
    wanted = sorted({*same_subject, *same_patch})
    if known is None:
        relatives = store.by_seqs(wanted)
    else:
        missing = [seq for seq in wanted if seq not in known]
        known.update((message.seq, message) for message in store.by_seqs(missing))
        relatives = [known[seq] for seq in wanted if seq in known]
    patch_ids = set(same_patch)
    return [patch] + [
        other
        for other in relatives
        if other.seq != patch.seq
        and (other.seq in patch_ids or same_author(patch, other))
    ]


def for_patch(
    store: Store,
    patch: StoredMessage,
    spans: list[MatchedSpan],
    *,
    relatives: list[StoredMessage] | None = None,
) -> WayBack:
    """The way back of one patch; `relatives`: its `family`, when the caller has it
    (the patch queue asks this of every patch, and reads the family itself too)."""
    known = family(store, patch) if relatives is None else relatives
    relatives_by_id = {message.message_id: message for message in known}
    links = store.links_of_messages(list(relatives_by_id))
    commits = _commits(store, links, relatives_by_id)
    base = WayBack(
        message_id=patch.message_id,
        subject=patch.subject,
        version=patch.version,
        status=UNKNOWN,
    )
    if commits:
        status, note = _status(patch, commits)
        return base._replace(
            status=status,
            note=note,
            commits=tuple(commits),
            trees=_trees(store, commits),
        )
    covering = [span for span in spans if covers(span, patch.date)]
    if covering:
        repos = ", ".join(span.repo for span in covering)
        return base._replace(
            status=NOT_APPLIED,
            note=f"no version of it was matched to a commit of {repos}",
        )
    return base._replace(note=_unknown_note(patch, spans))


def _commits(
    store: Store, links: list[LinkedCommit], family: dict[str, StoredMessage]
) -> list[Applied]:
    """One Applied per (repo, commit) among the links, with the posting it applied.

    A backport's process mail (AUTOSEL, a stable review) names the backport, not a
    commit that applied the patch: the backport is answered among its upstream's
    trees. A commit a rebase left behind is history, not an answer."""
    found: dict[tuple[str, str], Applied] = {}
    places = store.tree_places(sorted({link.sha for link in links}))
    for link in links:
        key = (link.repo, link.sha)
        if key in found or link.method in PROCESS_METHODS:
            continue
        mine = [place for place in places.get(link.sha, []) if place.repo == link.repo]
        if mine and all(place.gone for place in mine):
            continue
        posting = link.applied_posting or link.message_id
        applied = family.get(posting) or store.message(posting)
        found[key] = Applied(
            sha=link.sha,
            repo=link.repo,
            subject=link.subject,
            date=link.commit_date,
            method=link.method,
            score=link.score,
            posting=posting,
            posting_version=applied.version if applied is not None else 0,
        )
    return list(found.values())


def _trees(store: Store, commits: list[Applied]) -> tuple[InTree, ...]:
    """The trees of each applied commit's patch, once each."""
    found: dict[tuple[str, str, str | None, str | None], InTree] = {}
    for commit in commits:
        edge = store.backport_edges(commit.repo, [commit.sha]).get(commit.sha)
        for place in tree_view.in_trees(
            store, repo=commit.repo, sha=commit.sha, edge=edge
        ):
            found.setdefault(
                (place.repo, place.commit, place.tree, place.branch), place
            )
    return tuple(found.values())


def _status(patch: StoredMessage, commits: list[Applied]) -> tuple[str, str]:
    """Applied when a commit applied this version (this posting, a resend or a
    cross-post); superseded when only later versions were."""
    if any(
        commit.posting == patch.message_id or commit.posting_version == patch.version
        for commit in commits
    ):
        return APPLIED, ""
    later = [commit for commit in commits if commit.posting_version > patch.version]
    if len(later) == len(commits):
        newest = max(later, key=lambda commit: commit.posting_version)
        return SUPERSEDED, f"v{newest.posting_version} <{newest.posting}> was applied"
    earlier = min(commits, key=lambda commit: commit.posting_version)
    return APPLIED, f"an earlier version, v{earlier.posting_version}, was applied"


def covers(span: MatchedSpan, date: datetime | None) -> bool:
    """Whether the matched repository's commits span `date`."""
    return date is not None and span.first <= date <= span.last


def _unknown_note(patch: StoredMessage, spans: list[MatchedSpan]) -> str:
    if not spans:
        return "no repository has been matched yet: run e2g match in the repository"
    when = f"{patch.date:%Y-%m-%d}" if patch.date else "an unknown date"
    ranges = "; ".join(
        f"{span.repo} has {span.first:%Y-%m-%d}..{span.last:%Y-%m-%d}" for span in spans
    )
    return f"no matched repository's commits span {when} ({ranges}): e2g match a range that does"


def _for_cover(store: Store, cover: StoredMessage, spans: list[MatchedSpan]) -> WayBack:
    assert cover.series_id is not None
    members = [
        member
        for member in store.series_members(cover.series_id)
        if member.kind is Kind.PATCH and member.seq != cover.seq
    ][:MAX_SERIES]
    patches = tuple(for_patch(store, member, spans) for member in members)
    tally = SeriesTally(cover=cover.message_id, patches=patches)
    commits = tuple(commit for patch in patches for commit in patch.commits)
    if patches and all(patch.status == APPLIED for patch in patches):
        status = APPLIED
    elif patches and tally.applied == tally.total:
        status = SUPERSEDED  # a later version of the series was applied
    elif tally.applied:
        status = PARTLY_APPLIED
    elif any(patch.status == NOT_APPLIED for patch in patches):
        status = NOT_APPLIED
    else:
        status = UNKNOWN
    return WayBack(
        message_id=cover.message_id,
        subject=cover.subject,
        version=cover.version,
        status=status,
        commits=commits,
        note=f"{tally.applied} of {count(tally.total, 'patch', 'patches')} applied"
        + (" (as a later version)" if status == SUPERSEDED else "")
        if patches
        else "no patch of this series is in the store",
        series=tally,
    )


class CommitDiff(NamedTuple):
    """How one applying commit differs from the posted patch `message_id`."""

    message_id: str
    commit: Applied
    interdiff: Interdiff


def differences(settings: Settings, answer: WayBack, *, repo: Path) -> list[CommitDiff]:
    """For each patch of the answer (a cover letter's: each of its series) and each
    commit that applied it: the hunks the commit added, dropped or edited.

    The commit is read from the repository `e2g match` stored it under, else `repo`."""
    patches = answer.series.patches if answer.series is not None else (answer,)
    found: list[CommitDiff] = []
    with open_store(settings) as store:
        for patch in patches:
            message = store.message(patch.message_id)
            posted = store.diff(message.seq) if message is not None else None
            for commit in patch.commits:
                applied = _commit_diff(commit, fallback=repo)
                found.append(
                    CommitDiff(patch.message_id, commit, compare(posted or "", applied))
                )
    return found


def _commit_diff(commit: Applied, *, fallback: Path) -> str:
    from e2g.git.repo import Repo  # only --diff runs git: the answer itself never does

    stored = Path(commit.repo)
    repository = Repo.open(stored if stored.is_dir() else fallback)
    found = next(iter(repository.commits([repository.resolve(commit.sha)])), None)
    if found is None:
        raise UsageError(f"commit {commit.sha[:12]} is not in {repository.root}")
    return found.patch.diff
