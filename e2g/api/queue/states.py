"""The states of the patch queue: the one home of their rules.

No one sets a state: each is a function of a patch version's lifecycle (its facts,
gathered by e2g.api.queue.lifecycle from the archive and the stored links), the
matched repositories' spans, and "now" (the time of the run that derived it). Per
patch version, the first rule that holds, in this order:

- `applied`: this version, or a version of its family (same author and subject, or
  the same patch-id: e2g.api.reverse.family), was applied: e2g.api.reverse says
  "applied" (this posting, a resend, a cross-post, or an earlier version was
  applied). Its commits, trees, branches and first release are in its facts.
- `superseded`: a later version of the same patch (its family) or of its series (the
  series' lineage) was posted: a higher version, posted after it, for the same
  release line (e2g.mail.subject.release_line: a 6.1.y backport does not supersede
  the 5.15.y one, nor a v3 posted before it a v2); or reverse says only a later
  version was applied.
  `superseded_by` names the newest later version, and the facts say whether it was
  applied.
- `untracked`: no commit applied it, at least one repository is matched, and no
  matched repository holds the patch (a kernel patch on a list whose kernel tree
  is not matched, beside the liburing patches whose tree is). A repository's
  known paths are the paths its stored commits touched and their directories; it
  holds a file whose path is known, whose directory is known, or with a known
  directory two levels deep or more above it (src/arch/arm64/lib.h, new, below
  src/arch; a top directory alone is not enough: include/linux/x.h is not held
  because a repository has an include/), and a new file at the top beside files
  of its kind (verify-format.c in sparse, whose top holds .c files; not a
  Makefile or .gitignore, which have no kind). It holds the patch when it holds
  one of its files below the top, or when the top-level files it holds (Makefile,
  README, every project has them) are at least half of the patch's files: a
  kernel patch touching Makefile and three kernel headers is not the matched
  sparse's (measured on io-uring, linux-sparse and LTP: benchmarks/README.md,
  "Patch queue accuracy"). Its mail state (below) still applies and is said
  beside it.
- `rejected`: its mail state is rejected (see MAIL STATES).
- `not-applied`: no version was applied, a matched repository's commits span its
  date (e2g.api.reverse.covers), and it has been quiet (no reply from anyone, no
  new version) for `quiet_days` (the config's `[queue] quiet_days`, default 90).
- otherwise its mail state: `reviewed`, `under-review` or `new`.

MAIL STATES, from the replies below the patch and below its series' cover letter
(a reply is by "someone else" when its sender is neither the patch's sender nor its
in-body author):
- `rejected`: the last review tag someone else gave is a Nacked-by (a later
  Reviewed-by or Acked-by from anyone else answers it);
- `reviewed`: someone else gave a review tag (Reviewed-by, Acked-by, Tested-by,
  Reviewed-and-tested-by: e2g.mail.trailers.APPROVAL_KEYS, the audit's) in a reply;
- `under-review`: someone else replied, with no tag;
- `new`: no reply but the author's.

A series (its parts' states; its cover letter has no row of its own):
- `applied` when every part is applied;
- `partly-applied` ("3 of 5") when some are;
- `superseded` when every part is superseded (by a later version of the series);
- else the state its parts share, or, when they differ: `rejected` if any part is,
  `new` if any part is (it still waits for a first look), `under-review` if any
  part is, `reviewed` if any part is, and else the first of its parts' states.

The states that need action, listed by default: new, under-review, reviewed
(Patchwork's "action required" set, with reviewed: ready to apply).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import NamedTuple

from e2g.mail.trailers import APPROVAL_KEYS, NACKED_BY

APPLIED = "applied"
SUPERSEDED = "superseded"
UNTRACKED = "untracked"
REJECTED = "rejected"
NOT_APPLIED = "not-applied"
REVIEWED = "reviewed"
UNDER_REVIEW = "under-review"
NEW = "new"
PARTLY_APPLIED = "partly-applied"  # a series only

STATES = (
    APPLIED,
    SUPERSEDED,
    UNTRACKED,
    REJECTED,
    NOT_APPLIED,
    REVIEWED,
    UNDER_REVIEW,
    NEW,
)
ACTION_NEEDED = (NEW, UNDER_REVIEW, REVIEWED)
# The rules' version: change it with any rule here or in e2g.api.queue.lifecycle, and
# a store's queue derived by other rules is derived again at its next refresh.
# 2: superseded by a later post for the same release line; the untracked rule
# weighs the patch's files (benchmarks/README.md, "Patch queue accuracy").
# 3: a new top-level file beside files of its kind is held.
RULES = "3"
QUIET_DAYS = 90  # the default of `[queue] quiet_days`


class Span(NamedTuple):
    """A matched repository's commit dates (e2g.index.store.MatchedSpan's)."""

    first: datetime
    last: datetime


class Verdict(NamedTuple):
    """What the rules take from a lifecycle: everything but the mail is settled."""

    answer: str  # e2g.api.reverse's status: "applied", "superseded" or ""
    superseded_by: str  # the newest later version's Message-ID, or ""
    untracked: str  # why no matched repository holds it, or ""
    mail_state: str
    date: datetime | None
    last_activity: datetime | None


def mail_state(tags: Sequence[str], *, replied: bool) -> str:
    """The state the replies give: `tags` are the review tags others gave, oldest
    first; `replied`, whether someone else replied at all."""
    given = [tag for tag in tags if tag == NACKED_BY or tag in APPROVAL_KEYS]
    if given and given[-1] == NACKED_BY:
        return REJECTED
    if given:
        return REVIEWED
    return UNDER_REVIEW if replied else NEW


def state_of(
    verdict: Verdict, *, spans: Sequence[Span], now: datetime, quiet_days: int
) -> str:
    """The state of one patch version (the rules above, in their order)."""
    if verdict.answer == APPLIED:
        return APPLIED
    if verdict.superseded_by or verdict.answer == SUPERSEDED:
        return SUPERSEDED
    if verdict.untracked:
        return UNTRACKED
    if verdict.mail_state == REJECTED:
        return REJECTED
    quiet = verdict.last_activity or verdict.date
    if (
        verdict.date is not None
        and any(span.first <= verdict.date <= span.last for span in spans)
        and quiet is not None
        and now - quiet >= timedelta(days=quiet_days)
    ):
        return NOT_APPLIED
    return verdict.mail_state


def series_state(states: Sequence[str]) -> tuple[str, str]:
    """A series' state from its parts' (in part order), and its tally ("3 of 5"
    applied) when partly applied."""
    if not states:
        return NEW, ""
    applied = sum(state == APPLIED for state in states)
    if applied == len(states):
        return APPLIED, ""
    if applied:
        return PARTLY_APPLIED, f"{applied} of {len(states)}"
    if all(state == states[0] for state in states):
        return states[0], ""
    if all(state == SUPERSEDED for state in states):
        return SUPERSEDED, ""
    for state in (REJECTED, NEW, UNDER_REVIEW, REVIEWED):
        if state in states:
            return state, ""
    return states[0], ""


def untracked_because(files: Sequence[str], repo_paths: dict[str, set[str]]) -> str:
    """Why no matched repository holds a patch touching `files` (the untracked
    rule above), or "" when one does; `repo_paths`: per matched repository, the
    paths and directories its stored commits touched (`known_paths`)."""
    if not repo_paths or not files:
        return ""
    if any(_holds(known, files) for known in repo_paths.values()):
        return ""
    shown = ", ".join(files[:3]) + (", ..." if len(files) > 3 else "")
    return f"touches no path of {', '.join(sorted(repo_paths))} ({shown})"


def _holds(known: set[str], files: Sequence[str]) -> bool:
    top = 0  # top-level files held: weak, every project has a Makefile
    for path in files:
        if not _held(known, path):
            continue
        if "/" in path:
            return True
        top += 1
    return top > 0 and 2 * top >= len(files)


def _held(known: set[str], path: str) -> bool:
    if path in known:
        return True
    directory = _directory(path)
    if not directory:  # a new file at the top, beside files of its kind
        return bool(kind := _kind(path)) and kind in known
    while directory:  # iterative, and bounded by the path's depth
        if directory in known:
            return True
        directory = _directory(directory)
        if "/" not in directory:  # a top directory holds only its own files
            return False
    return False


def known_paths(paths: set[str]) -> set[str]:
    """The paths, every directory holding one of them ("" is the top), and the
    kinds of the top-level files ("*.c": a new top-level .c file is held)."""
    found = set(paths)
    for path in paths:
        directory = _directory(path)
        if not directory and (kind := _kind(path)):
            found.add(kind)
        while directory not in found:
            found.add(directory)
            if not directory:
                break
            directory = _directory(directory)
    return found


def _kind(path: str) -> str:
    """ "*.c" of a top-level "x.c"; "" without an extension (Makefile, .gitignore)."""
    stem, dot, extension = path.lstrip(".").rpartition(".")
    return f"*.{extension}" if dot and stem and extension else ""


def _directory(path: str) -> str:
    return path.rpartition("/")[0]
