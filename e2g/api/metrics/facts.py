"""What the metrics read: the stored queue's rows as patch versions and families.

Reads the queue (e2g.api.queue keeps it) and nothing it would have to derive: each
row's facts (e2g.api.queue.lifecycle) already hold its family, who replied when,
the review tags with their givers' addresses, and the commits and releases. The
only things read beside it are the files each version touches (for directories)
and the release dates (Store.release_dates). The definitions are e2g.api.metrics'.
"""

from __future__ import annotations

import fnmatch
import json
import re
import sys
from dataclasses import dataclass, field

from e2g.api.queue import states
from e2g.index.store import QueueRow, Store
from e2g.mail.trailers import APPROVAL_KEYS


@dataclass(slots=True)
class Response:
    sender: str
    date: int | None
    seq: int  # the reply's message: one review however many patches it answers


@dataclass(slots=True)
class Version:
    """One patch version (one row of the queue)."""

    seq: int
    message_id: str
    list_name: str
    date: int | None
    author: str  # address, lower-cased
    version: int
    state: str
    untracked: bool  # no matched repository holds its paths (whatever its state)
    family: str  # its earliest version's Message-ID
    family_date: int | None
    responses: list[Response]  # by others, bots left out, oldest first
    approvals: list[str]  # addresses that gave an approving tag
    applied: list[str]  # the postings its commits applied
    committed: int | None
    releases: list[tuple[str, str]]  # (repo, first release) of its commits
    files: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Family:
    """A patch: every version of it (e2g.api.reverse.family), named by its first."""

    name: str
    first: Version  # its earliest version, by date
    versions: list[Version]

    @property
    def date(self) -> int | None:
        return self.first.family_date if self.first.family_date else self.first.date

    @property
    def applied(self) -> bool:
        return any(version.state == states.APPLIED for version in self.versions)

    @property
    def outcome(self) -> str | None:
        """applied, rejected or not-applied (the first that one of its versions
        is, in that order); None while open, superseded only, or untracked."""
        found = {version.state for version in self.versions}
        for state in (states.APPLIED, states.REJECTED, states.NOT_APPLIED):
            if state in found:
                return state
        return None

    @property
    def untracked(self) -> bool:
        """No matched repository holds any version's paths (a superseded version
        keeps the reason too: its state says superseded first)."""
        return all(version.untracked for version in self.versions)

    def committed(self) -> int | None:
        dates = [v.committed for v in self.versions if v.committed is not None]
        return min(dates, default=None)

    def files(self) -> set[str]:
        return {path for version in self.versions for path in version.files}


class Bots:
    """Whether an address is a robot's (`[metrics] bots`: shell patterns,
    case-blind); each address is asked of the patterns once."""

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self._pattern = (
            re.compile("|".join(fnmatch.translate(p.lower()) for p in patterns))
            if patterns
            else None
        )
        self._known: dict[str, bool] = {}

    def __contains__(self, address: str) -> bool:
        found = self._known.get(address)
        if found is None:
            found = bool(self._pattern and self._pattern.match(address.lower()))
            self._known[address] = found
        return found


def read_versions(
    store: Store,
    *,
    bots: tuple[str, ...],
    lists: tuple[str, ...] = (),
    files: bool = False,
) -> list[Version]:
    """Every version of the queue (of these lists, when asked), read a row at a
    time; with `files`, the paths each touches (for directories)."""
    robots = Bots(bots)
    found = [
        _version(row, robots)
        for row in store.queue_each()
        if not lists or row.list in lists
    ]
    if files:
        paths = store.files_of([version.seq for version in found])
        for version in found:
            version.files = paths.get(version.seq, [])
    return found


def families(versions: list[Version]) -> list[Family]:
    grouped: dict[str, list[Version]] = {}
    for version in versions:
        grouped.setdefault(version.family or version.message_id, []).append(version)
    found = []
    for name, members in grouped.items():
        members.sort(key=lambda version: (version.date or 0, version.seq))
        found.append(Family(name, members[0], members))
    return found


def _version(row: QueueRow, bots: Bots) -> Version:
    # Addresses, lists and states repeat across rows: interned, each is kept once.
    facts = json.loads(row.facts)
    family = facts.get("family") or [row.message_id, row.date]
    return Version(
        seq=row.seq,
        message_id=row.message_id,
        list_name=sys.intern(row.list),
        date=row.date,
        author=sys.intern(row.author_email.lower()),
        version=row.version,
        state=sys.intern(row.state),
        untracked=bool(row.untracked) or row.state == states.UNTRACKED,
        family=str(family[0]),
        family_date=family[1],
        responses=[
            Response(sys.intern(str(sender)), date, int(seq))
            for sender, date, seq in facts.get("responses", [])
            if str(sender) not in bots
        ],
        approvals=[
            sys.intern(str(giver))
            for giver, tag, _ in facts.get("tags", [])
            if tag in APPROVAL_KEYS and str(giver) not in bots
        ],
        applied=[str(posting) for posting in facts.get("applied", [])],
        committed=facts.get("committed"),
        releases=[
            (str(commit["repo"]), str(commit["release"]))
            for commit in facts.get("commits", [])
            if commit.get("release")
        ],
    )
