"""Backports: what a commit message says of its upstream, and the mails of the
backport process.

Pure functions on str; no IO. Used by e2g.api.trees (the upstream a commit names)
and by the matcher (mails of the backport process are never a patch's review).

A commit names its upstream commit in one of these forms, found anywhere in its
message, in any case and with any spacing:

- `commit 0123abcd upstream.` (the stable kernel's first line; also "Upstream commit
  0123abcd." and "[ Upstream commit 0123abcd ]", as the stable trees and the
  networking maintainers write it);
- `(cherry picked from commit 0123abcd)`, what `git cherry-pick -x` appends. A
  commit picked again from a pick carries one line per pick, oldest first: the first
  names the original;
- Android's subject prefixes `UPSTREAM:`, `BACKPORT:`, `FROMGIT:`: they say the
  commit came from upstream but name no commit (the body usually carries a cherry-pick
  line; without one, the caller falls back to patch-id).

A sha shorter than the full 40 digits is returned as written, for the caller to
expand in the upstream repository. `This reverts commit X.` names no upstream: a
revert is a new change.

The mails of the backport process carry a patch that is already applied somewhere;
they are the backport's postings, never the upstream patch's review:

- AUTOSEL: `[PATCH AUTOSEL 6.1 12/40] subject` (Sasha Levin's selection bot);
- stable review series: `[PATCH 6.1 012/100] subject` (a subject tag that is a
  kernel version: `6.1`, `5.15.y`, `4.19-stable`, or `stable`);
- `FAILED: patch "[PATCH] subject" failed to apply to 6.1-stable tree`;
- queued notices: `Patch "subject" has been added to the 6.1-stable tree`, and the
  `... added to the 6.1-stable tree` variants ("queue", "stable-queue");
- linux-next's merge reports (`linux-next: manual merge of the X tree with the Y
  tree`, `linux-next: build failure after merge of the X tree`): they quote the
  conflicting patches' hunks, and are no patch's review either;
- any mail the stable team's tools mark with an `X-stable:` header (`X-stable:
  review` on AUTOSEL and review-series mails, with `X-stable-base: Linux 4.19.292`
  naming the series), whatever its subject says: a step of the process. The header
  is the one mark that survives a subject rewritten on the way (a list's tag, a
  resend without the version).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from enum import StrEnum
from typing import NamedTuple

from e2g.mail.subject import parse_subject

# Longest message searched for notes: the notes stand near the top or the end, and
# a commit message is at most model.MAX_BODY already; this bounds a pathological one.
_MAX_MESSAGE = 200_000
_SHA = r"([0-9a-f]{7,40})"
# Where a note begins: line start, optionally after "[" (and spaces). Each form
# with a word every note of that form holds: its pattern reads only the lines that
# hold it (_lines_with).
_NOTES = (
    (
        "commit-upstream",
        "upstream",
        re.compile(
            rf"^[ \t]*\[?[ \t]*commit[ \t]+{_SHA}[ \t]+upstream[ \t]*\.?[ \t]*\]?[ \t]*$",
            re.IGNORECASE | re.MULTILINE,
        ),
    ),
    (
        "upstream-commit",
        "upstream",
        re.compile(
            rf"^[ \t]*\[?[ \t]*upstream[ \t]+commit[ \t:]+{_SHA}[ \t]*\.?[ \t]*\]?[ \t]*$",
            re.IGNORECASE | re.MULTILINE,
        ),
    ),
    (
        "cherry-picked",
        "cherry",
        re.compile(
            rf"\([ \t]*cherry[ \t-]*picked[ \t]+from[ \t]+commit[ \t]+{_SHA}[ \t]*\)",
            re.IGNORECASE,
        ),
    ),
)
_ANDROID = re.compile(r"^\s*(UPSTREAM|BACKPORT|FROMGIT)\s*:", re.IGNORECASE)


def _folded(text: str) -> str | None:
    """`text` in lower case when it is ASCII, else None: the patterns here ignore
    case, and on ASCII text that is the same as looking for their words in the
    lower-cased text, a cheap test most text fails (2,000 messages with no note:
    1.3 ms, not 6 ms of searches). Unicode folding makes more match ("ſ" is an
    "s"), so other text is searched whole."""
    return text.lower() if text.isascii() else None


def _lines_with(message: str, folded: str, word: str) -> Iterator[str]:
    """The lines of `message` that hold `word`, in order, each once (`folded`: its
    lower case, as long). A note never spans lines, so its pattern need only read
    these (2,000 backports of liburing commits: 6.9 µs a message, not 9.8 µs)."""
    start = folded.find(word)
    while start != -1:
        end = folded.find("\n", start)
        end = len(folded) if end == -1 else end
        yield message[folded.rfind("\n", 0, start) + 1 : end]
        start = folded.find(word, end)


class BackportNote(NamedTuple):
    """What a commit message says of the commit it was taken from."""

    how: str  # "commit-upstream", "upstream-commit", "cherry-picked", "android"
    shas: tuple[str, ...]  # as written (lower case, maybe abbreviated), oldest first


def parse_backport(message: str) -> BackportNote | None:
    """The upstream note of a whole commit message (subject line first), or None.

    The first form found wins, in the order the module docstring lists them: the
    stable trees' own note names mainline even when a cherry-pick line names an
    intermediate branch."""
    message = message[:_MAX_MESSAGE]
    folded = _folded(message)
    for how, word, pattern in _NOTES:
        if folded is not None and word not in folded:
            continue  # no line to read: 2,000 git.git messages in 11 ms, not 18 ms
        texts = (message,) if folded is None else _lines_with(message, folded, word)
        shas = tuple(
            dict.fromkeys(
                match[1].lower() for text in texts for match in pattern.finditer(text)
            )
        )
        if shas:
            return BackportNote(how, shas)
    subject = message.lstrip().split("\n", 1)[0]
    if _ANDROID.match(subject):
        return BackportNote("android", ())
    return None


def upstream_subject(subject: str) -> str:
    """`subject` without an Android UPSTREAM:/BACKPORT:/FROMGIT: prefix: the subject
    of the commit it copies."""
    found = _ANDROID.match(subject)
    return subject[found.end() :].strip() if found else subject


class ProcessKind(StrEnum):
    """Which step of the backport process a mail is."""

    AUTOSEL = "autosel"
    STABLE_REVIEW = "stable-review"
    FAILED = "failed"
    QUEUED = "queued"
    NEXT_MERGE = "next-merge"  # linux-next's reports of a merge (conflict, build)


# The kinds as the methods of a backport's links to its process mails.
PROCESS_METHODS = frozenset(str(kind) for kind in ProcessKind)

# "5.15.y", "4.19-stable", "6.1.y-stable", "6.1.42", "stable", "stable-6.1": a tag
# that can only name a stable tree. (Kernel release announcements start with a
# version too, but carry no [PATCH ...] group and so no tag.)
_STABLE_TAG = re.compile(
    r"^(?:stable(?:-\d+\.\d+(?:\.y)?)?"
    r"|\d{1,2}\.\d{1,3}(?:(?:\.y|\.\d{1,3})(?:-stable)?|-stable))$",
    re.IGNORECASE,
)
# A bare release, "6.1": the stable team's review series name their tree so, and
# developers name so the release a patch is for ("[PATCH 5.13 3/9] io_uring: ...",
# the habit of io_uring's and the block layer's lists: ~1% of io-uring's patches).
# Only the body tells them apart (_BACKPORT_BODY).
_RELEASE_TAG = re.compile(r"^\d{1,2}\.\d{1,3}$")
# What opens every patch of a stable review series ("6.1-stable review patch.  If
# anyone has any objections, please let me know.").
_REVIEW_PATCH = re.compile(
    r"\b\d{1,2}\.\d{1,3}(?:\.\d{1,3})?-stable review patch\b", re.I
)
# Where in a body the review line or a backport's note is looked for.
_BODY_HEAD = 4096
_FAILED = re.compile(
    r"^\s*FAILED:\s*patch\s+\"(.*)\"\s+failed\s+to\s+apply\b", re.IGNORECASE
)
_QUEUED = re.compile(
    r"^\s*patch\s+\"(.*)\"\s+has\s+been\s+added\s+to\s+the\b",
    re.IGNORECASE,
)


# Every backport-process subject holds one of these words or a version ("6.1"):
# most subjects hold none, and are answered without parsing (the matcher asks
# this of every candidate). On ASCII text in lower case `in` tests answer (2,000
# subjects of no process: 1.4 ms, not 2.5 ms); other text takes _MAYBE.
_MAYBE_WORDS = ("autosel", "stable", "failed", "has been added", "linux-next")
_MAYBE_VERSION = re.compile(r"\d\.\d")
_MAYBE = re.compile(
    "|".join([*map(re.escape, _MAYBE_WORDS), _MAYBE_VERSION.pattern]), re.IGNORECASE
)


def _maybe_process(subject: str) -> bool:
    """Whether _MAYBE finds a word in `subject`, answered without it for ASCII."""
    folded = _folded(subject)
    if folded is None:
        return _MAYBE.search(subject) is not None
    return any(word in folded for word in _MAYBE_WORDS) or (
        "." in folded and _MAYBE_VERSION.search(folded) is not None
    )


# linux-next's reports: "linux-next: manual merge of the net-next tree with the net
# tree", "linux-next: build failure after merge of the drm tree".
_NEXT_MERGE = re.compile(r"^\s*linux-next:\s.*\bmerge\b", re.IGNORECASE)


# The headers the process's tools add; what a store keeps of a mail for
# process_kind's `stable` and process_version's `base`, by lower-case name.
STABLE_HEADERS = ("x-stable", "x-stable-base")


# The store keeps this rule's answer for every mail (messages.process, written at
# ingest): a change to what it answers needs a migration that marks stored mail to
# be classified again (as schema 18's PROCESS_PENDING_KEY does).
def process_kind(
    subject: str, *, stable: str | None = None, body: str | None = None
) -> ProcessKind | None:
    """The backport-process step `subject` names, or None for any other mail.

    `stable`: the mail's X-stable: header when known ("review"); any value marks
    the mail as the process's (AUTOSEL when its subject says so, else a review
    series mail) unless its subject is a reply's or names another step. `body`:
    the mail's text before its diff, when known: a patch tagged with a bare
    release ("[PATCH 6.1 012/100]") is a review series mail only when its body
    says so or carries a backport's note (_BACKPORT_BODY); without it, never."""
    marked = bool(stable and stable.strip())
    if not marked and not _maybe_process(subject):
        return None
    if _FAILED.match(subject):
        return ProcessKind.FAILED
    if _QUEUED.match(subject):
        return ProcessKind.QUEUED
    if _NEXT_MERGE.match(subject):
        return ProcessKind.NEXT_MERGE
    info = parse_subject(subject)
    if info.is_reply:
        return None  # a review reply inside the series is its thread, not a step
    tags = [tag.casefold() for tag in info.tags]
    if "autosel" in tags:
        return ProcessKind.AUTOSEL
    if marked or any(_STABLE_TAG.match(tag) for tag in tags):
        return ProcessKind.STABLE_REVIEW
    if body is not None and _names_release(tags) and _backport_body(body):
        return ProcessKind.STABLE_REVIEW
    return None


def _names_release(tags: Sequence[str]) -> bool:
    return any(_RELEASE_TAG.match(tag) for tag in tags)


def names_release(subject: str) -> bool:
    """Whether `subject` is a patch's tagged with a bare release ("[PATCH 6.1 ...]"),
    whose process_kind needs its body."""
    info = parse_subject(subject)
    return not info.is_reply and _names_release(info.tags)


def _backport_body(body: str) -> bool:
    """Whether a body opens as a stable review patch's or carries a backport's note."""
    head = body[:_BODY_HEAD]
    return _REVIEW_PATCH.search(head) is not None or parse_backport(head) is not None


# What the subject key of every FAILED and of every queued notice starts with, in
# the order of notice_keys() and notice_prefixes().
NOTICE_STARTS = ('failed: patch "[patch] ', 'patch "')


def notice_keys(key: str, version: str) -> tuple[str, str]:
    """The subject keys (mail.subject.subject_key) of the FAILED and queued notices
    of the patch whose subject key is `key`, for the stable series `version`."""
    failed, queued = NOTICE_STARTS
    return (
        f'{failed}{key}" failed to apply to {version}-stable tree',
        f'{queued}{key}" has been added to the {version}-stable tree',
    )


def notice_prefixes(key: str) -> tuple[str, str]:
    """notice_keys() without the series: what every such notice's key starts with."""
    failed, queued = NOTICE_STARTS
    return (f'{failed}{key}" failed', f'{queued}{key}" has been added')


def process_title(subject: str) -> str | None:
    """The patch title a FAILED or queued notice quotes ("[PATCH] " stripped), or
    None when `subject` is neither."""
    found = _FAILED.match(subject) or _QUEUED.match(subject)
    if found is None:
        return None
    return parse_subject(found[1]).title


_VERSION_IN = re.compile(r"\b(\d{1,2}\.\d{1,3})(?:\.y|\.\d{1,3})?(?:-stable)?\b")


def process_version(subject: str, *, base: str | None = None) -> str | None:
    """The stable series a backport-process mail is for ("6.1"), or None when it
    names none: the AUTOSEL or review tag, or the tree a notice names; else its
    X-stable-base: header (`base`, "Linux 4.19.292": "4.19") when known."""
    notice = _FAILED.match(subject) or _QUEUED.match(subject)
    if notice is not None:
        found = _VERSION_IN.search(subject[notice.end(1) :])
        return found[1] if found else None
    for tag in parse_subject(subject).tags:
        found = _VERSION_IN.fullmatch(tag)
        if found:
            return found[1]
    found = _VERSION_IN.search(base[:200]) if base else None
    return found[1] if found else None
