"""A thread whose first mail the archive lacks: a low-confidence posting, with its evidence.

Archives start mid-history, and a patch is often sent to one list while its review
continues on another; what the archive keeps is the replies, under a root it never
got. When no candidate carries the commit's patch, replies whose subject is the
commit's summary, under a missing root, are that posting's thread if the commit's
author fits: one of the replies is theirs, or quotes them by name ("On ..., Jane Doe
wrote:"). The posting is the thread's oldest stored mail; every stored mail of the
thread is a reply to the lost patch (e2g.matcher.postings anchors the thread's facts
at the missing root). It is scored low (ROOTLESS_SCORE) and never sure: an audit
calls it uncertain, a reader sees why it was offered.

A reply that quotes the whole patch needs none of this: its patch-id is the patch's
(e2g.mail.quoted), and it is found as an exact match.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import timedelta

from e2g.index.store import Store
from e2g.matcher.candidates import window
from e2g.matcher.scoring import normalise_name
from e2g.model.links import Commit, Evidence
from e2g.model.stored import StoredMessage

ROOTLESS = "thread"  # the posting's method
ROOTLESS_SCORE = 0.6
# The replies come after the lost mail, and may come after the commit ("applied").
ROOTLESS_LATE = timedelta(days=30)
MAX_THREADS = 5  # ghost-rooted threads of one subject weighed per commit
MAX_BODIES = 3  # replies of one thread read for an attribution line
_ATTRIBUTION = re.compile(r"(?im)^(.{0,200}?)\b(?:wrote|writes|said)\s*:\s*$")


def rootless_threads(
    store: Store, commit: Commit
) -> list[tuple[StoredMessage, tuple[Evidence, ...]]]:
    """(the thread's oldest stored mail, why) for each ghost-rooted thread whose
    subject is the commit's summary and whose replies fit its author; oldest first."""
    low, _ = window(commit)
    high = int((commit.commit_date + ROOTLESS_LATE).timestamp())
    by_root: dict[str, list[StoredMessage]] = {}
    for message in store.rootless_replies(commit.subject_key, low=low, high=high):
        by_root.setdefault(message.thread_root, []).append(message)
    found: list[tuple[StoredMessage, tuple[Evidence, ...]]] = []
    for messages in list(by_root.values())[:MAX_THREADS]:
        fit = _author_fit(store, commit, messages)
        if fit is not None:
            detail = (
                f"{len(messages)} repl{'y' if len(messages) == 1 else 'ies'} with the "
                f"commit's subject under a first mail the archive lacks; {fit}"
            )
            found.append((messages[0], (Evidence("thread", detail, ROOTLESS_SCORE),)))
    return found


def _author_fit(
    store: Store, commit: Commit, messages: Sequence[StoredMessage]
) -> str | None:
    """Why the thread is the commit author's, or None."""
    email = commit.author.email.casefold()
    name = normalise_name(commit.author.name)
    for message in messages:
        if message.author_email.casefold() == email or (
            name and normalise_name(message.author_name) == name
        ):
            return f"{message.author_name or message.author_email} wrote in it"
    # A full name of two words or more, all in the line: "Jens" alone says little.
    words = set(name.split()) if len(name.split()) >= 2 else set()  # noqa: PLR2004
    for message in messages[:MAX_BODIES]:
        for line in _ATTRIBUTION.findall(store.body(message.seq)):
            if email in line.casefold() or (
                words and words <= set(normalise_name(line).split())
            ):
                return f"a reply quotes {commit.author.name or email}"
    return None
