"""One commit's verdict, from the facts the store holds about it.

The one home of the audit's rules (issue 27), strictest first:

- exempt: a revert, a version bump (`Linux 6.1`, `Git 2.39`, `v1.2.3`, changing only
  version files), or a subject the config's `[audit] exempt` patterns match;
- not-posted: no posting was found; uncertain: the applied posting was found by a
  fuzzy rule with a low score and carries other code (say so rather than guess);
- reviewed: a version with the commit's own patch-id (git patch-id: whitespace and
  line numbers aside, the same code) was reviewed by someone other than its author;
- otherwise the last reviewed version is compared with the code that landed:
  only context lines moved (a rebase): reviewed-trivial-change; a change of the
  reviewed code: changed-after-review, with the hunks; code the review never saw
  (most of the reviewed hunks are gone): earlier-version-reviewed;
- no version was reviewed: posted-unreviewed.

A review is a review trailer a reply gives in its sender's own name, or a reply that
quotes the patch and comments on it; never from the patch's author. A review from
the committer alone counts but is flagged (`--strict` drops it).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from e2g.api.audit.facts import CommitFacts, People, Posted
from e2g.api.audit.model import (
    CommitAudit,
    Delta,
    ReviewGiven,
    TagCheck,
    Verdict,
    VersionInfo,
)
from e2g.mail.interdiff import Interdiff, compare, hunks
from e2g.mail.review import comments_on_patch, has_changelog, maintainer_notes, person
from e2g.mail.trailers import parse_trailers
from e2g.model import Address

# The review trailers that make a review (Nacked-by is review, but no approval).
REVIEW_TRAILERS = frozenset(
    {"Reviewed-by", "Acked-by", "Tested-by", "Reviewed-and-tested-by"}
)
COMMENT = "comment"  # the trailer of a review given as comments on the quoted patch
# Found by an exact key: the posting is the commit's, whatever its score.
EXACT_METHODS = frozenset({"trailer", "patch-id", "author-date"})
# Below this a fuzzy match (subject, author, files: scored 0.60 and up) is uncertain.
UNCERTAIN_SCORE = 0.75
# A change of the reviewed code keeps at least this share of its hunks (identical
# or edited); with less, what landed is mostly code the review never saw.
RELATED_HUNKS = 0.5
_REVERT = re.compile(r'(?:Revert|Reapply) "')
# `Linux 6.1-rc3`, `Git 2.39`, `Git v2.39.0`, `v1.2.3`, `liburing-2.3`: a release.
_RELEASE = re.compile(r"(?:[A-Za-z][\w.+]*[ -])?v?\d+(?:\.\d+)+(?:-?rc\d+)?")
_VERSION_FILES = re.compile(
    r"(?i)(?:.*version.*|makefile|relnotes|news|changelog|changes|configure\.ac|"
    r"meson\.build|package\.json|pyproject\.toml|setup\.(?:py|cfg)|cargo\.toml|"
    r".*\.spec|\d+(?:\.\d+)+(?:\.(?:txt|md|adoc))?)"
)
_RELEASE_DIRS = frozenset({"relnotes", "release-notes", "releasenotes"})


@dataclass(frozen=True, slots=True)
class Rules:
    strict: bool = False
    exempt: tuple[re.Pattern[str], ...] = ()


@dataclass(frozen=True, slots=True)
class Sources:
    """Where the diffs and bodies a verdict may need come from (the store, and the
    commits' diffs read from git for those whose code no posting carries)."""

    posted_diff: Callable[[int], str | None]
    body: Callable[[int], str]
    commit_diff: Callable[[str], str | None]


def decide(
    facts: CommitFacts, *, people: People, rules: Rules, sources: Sources
) -> CommitAudit:
    """The verdict on one commit, with its evidence."""
    base = _base(facts)
    reason = exempt_reason(base.subject, base.files, rules.exempt)
    if reason:
        return replace(base, verdict=Verdict.EXEMPT, evidence=reason)
    authors = _authors(facts)
    tags = check_tags(facts, people=people, authors=authors)
    base = replace(base, tags=tags)
    if facts.row is None:
        return replace(
            base, verdict=Verdict.UNCERTAIN, evidence="not matched yet: run e2g audit"
        )
    if not facts.postings:
        return replace(base, verdict=Verdict.NOT_POSTED, evidence="no posting found")
    reviews = tuple(
        review
        for posted in facts.postings
        for review in reviews_of(
            posted, people=people, authors=authors, sources=sources, facts=facts
        )
    )
    counted = [r for r in reviews if not (rules.strict and r.committer)]
    versions = _versions(facts, {review.version for review in counted})
    base = replace(
        base,
        reviews=reviews,
        versions=versions,
        applied=next((v for v in versions if v.applied), None),
    )
    return _judge(base, facts, counted, sources=sources)


def _base(facts: CommitFacts) -> CommitAudit:
    row = facts.row
    commit = facts.commit
    subject = row.subject if row else commit.message.split("\n", 1)[0]
    return CommitAudit(
        sha=commit.sha,
        subject=subject,
        author=row.author if row else Address("", ""),
        committer=commit.committer,
        files=row.files if row else (),
        verdict=Verdict.UNCERTAIN,
        evidence="",
    )


def exempt_reason(
    subject: str, files: Sequence[str], patterns: Sequence[re.Pattern[str]]
) -> str:
    """Why a commit is exempt from review ("" when it is not)."""
    if _REVERT.match(subject):
        return "a revert"
    if _RELEASE.fullmatch(subject.strip()) and files and all(map(_version_file, files)):
        return "a version bump"
    for pattern in patterns:
        if pattern.search(subject):
            return f"the config exempts /{pattern.pattern}/"
    return ""


def _version_file(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return bool(parts) and (
        _VERSION_FILES.fullmatch(parts[-1]) is not None
        or any(part.lower() in _RELEASE_DIRS for part in parts[:-1])
    )


def _authors(facts: CommitFacts) -> list[Address]:
    """The patch's author as git and as each posting name them."""
    found = [facts.row.author] if facts.row else []
    for posted in facts.postings:
        message = posted.message
        if posted.is_patch:
            found.append(Address(message.author_name, message.author_email))
            if message.patch_author_email:
                found.append(
                    Address(message.patch_author_name or "", message.patch_author_email)
                )
    return found


def _is_author(people: People, someone: Address, authors: Sequence[Address]) -> bool:
    return any(people.same(someone, author) for author in authors)


def reviews_of(
    posted: Posted,
    *,
    people: People,
    authors: Sequence[Address],
    sources: Sources,
    facts: CommitFacts,
) -> list[ReviewGiven]:
    """The reviews one posting got in the replies below it."""
    found: list[ReviewGiven] = []
    committer = facts.commit.committer
    for reply in posted.replies:
        if _is_author(people, reply.author, authors):
            continue
        given = [
            (trailer.key, person(trailer.value))
            for trailer in reply.reviews
            if trailer.key in REVIEW_TRAILERS
        ]
        own = [(key, who) for key, who in given if people.same(who, reply.author)]
        if not own and posted.is_patch and comments_on_patch(sources.body(reply.seq)):
            own = [(COMMENT, reply.author)]
        found += [
            ReviewGiven(
                trailer=key,
                person=who,
                message_id=reply.message_id,
                version=posted.version,
                committer=people.same(who, committer),
            )
            for key, who in own
        ]
    return found


def check_tags(
    facts: CommitFacts, *, people: People, authors: Sequence[Address]
) -> tuple[TagCheck, ...]:
    """Each review tag of the commit message, and the mail that backs it: a reply
    from that person giving that tag, below any posting (oldest version first)."""
    message = facts.commit.message
    if "-by:" not in message.lower():  # most commits carry no tag: skip the parse
        return ()
    replies = sorted(
        (
            (posted.version, reply)
            for posted in facts.postings
            for reply in posted.replies
        ),
        key=lambda pair: pair[0],
    )
    checks: list[TagCheck] = []
    for trailer in parse_trailers(message):
        if trailer.key not in REVIEW_TRAILERS:
            continue
        who = person(trailer.value)
        backing = next(
            (
                (reply.message_id, version)
                for version, reply in replies
                if people.same(reply.author, who)
                and any(
                    given.key == trailer.key and people.same(person(given.value), who)
                    for given in reply.reviews
                )
            ),
            (None, None),
        )
        checks.append(
            TagCheck(
                trailer=trailer.key,
                person=who,
                backed_by=backing[0],
                version=backing[1],
                by_author=_is_author(people, who, authors),
            )
        )
    return tuple(checks)


def _versions(facts: CommitFacts, reviewed: set[int]) -> tuple[VersionInfo, ...]:
    patch_id = facts.row.patch_id if facts.row else None
    return tuple(
        VersionInfo(
            message_id=posted.message.message_id,
            version=posted.version,
            kind=str(posted.message.kind),
            applied=posted.link.applied,
            same_code=posted.is_patch
            and patch_id is not None
            and posted.message.patch_id == patch_id,
            reviewed=posted.version in reviewed,
        )
        for posted in sorted(facts.postings, key=_posting_order)
    )


def _posting_order(posted: Posted) -> tuple[int, bool, float]:
    date = posted.message.date.timestamp() if posted.message.date else 0.0
    return (-posted.version, not posted.is_patch, -date)


def _judge(
    base: CommitAudit,
    facts: CommitFacts,
    counted: Sequence[ReviewGiven],
    *,
    sources: Sources,
) -> CommitAudit:
    versions = base.versions
    same_code = {v.version for v in versions if v.same_code}
    applied = base.applied
    if not same_code and applied is not None and _uncertain(facts):
        link = next(posted.link for posted in facts.postings if posted.link.applied)
        return replace(
            base,
            verdict=Verdict.UNCERTAIN,
            evidence=f"v{applied.version} found by {link.method}, score {link.score:.2f}",
        )
    reviewed = {review.version for review in counted}
    if not reviewed:
        replies = sum(len(posted.replies) for posted in facts.postings)
        return replace(
            base,
            verdict=Verdict.UNREVIEWED,
            evidence=f"{_version_list(versions)} posted, {replies} "
            f"repl{'y' if replies == 1 else 'ies'}, no review",
        )
    good = reviewed & same_code
    if good:
        shown = [r for r in counted if r.version in good]
        only_committer = all(r.committer for r in shown)
        return replace(
            base,
            verdict=Verdict.REVIEWED,
            evidence=_who(shown) + (" (committer only)" if only_committer else ""),
            committer_only=only_committer,
        )
    return _changed(base, facts, counted, sources=sources)


def _uncertain(facts: CommitFacts) -> bool:
    link = next((p.link for p in facts.postings if p.link.applied), None)
    return (
        link is not None
        and link.method not in EXACT_METHODS
        and link.score < UNCERTAIN_SCORE
    )


def _version_list(versions: Sequence[VersionInfo]) -> str:
    numbers = sorted({v.version for v in versions if v.kind == "patch"})
    return ", ".join(f"v{n}" for n in numbers) or "a cover letter"


def _who(reviews: Sequence[ReviewGiven]) -> str:
    """ "v2 Reviewed-by Jane Doe, comment by John" in a few words."""
    people = dict.fromkeys(
        f"v{r.version} {r.trailer if r.trailer != COMMENT else 'comments'} "
        f"{r.person.name or r.person.email}"
        for r in reviews
    )
    shown = list(people)[:2]
    more = len(people) - len(shown)
    return "; ".join(shown) + (f" (+{more})" if more else "")


def _changed(
    base: CommitAudit,
    facts: CommitFacts,
    counted: Sequence[ReviewGiven],
    *,
    sources: Sources,
) -> CommitAudit:
    """The last reviewed version against the code that landed."""
    last = max(review.version for review in counted)
    shown = _who([r for r in counted if r.version == last])
    reviewed = _patch_of(facts, last)
    posted = sources.posted_diff(reviewed.message.seq) if reviewed else None
    code = _landed_code(facts, sources)
    if posted is None or code is None:
        return replace(
            base,
            verdict=Verdict.EARLIER,
            evidence=f"{shown}; the applied code was never reviewed",
        )
    if _lines(posted, context=True) == _lines(code, context=True):
        # The same code in another diff's form (`diff -urp`, other paths), which
        # patch-ids tell apart.
        only_committer = all(r.committer for r in counted if r.version == last)
        return replace(
            base,
            verdict=Verdict.REVIEWED,
            evidence=shown + (" (committer only)" if only_committer else ""),
            committer_only=only_committer,
        )
    if _lines(posted, context=False) == _lines(code, context=False):
        return replace(
            base,
            verdict=Verdict.TRIVIAL,
            evidence=f"{shown}; context lines differ (a rebase)",
        )
    interdiff = compare(posted, code)
    delta = _delta(interdiff, last, disclosed=_disclosed(facts, last, sources))
    kept = interdiff.identical + sum(c.kind == "edited" for c in interdiff.changes)
    total = kept + sum(c.kind == "dropped" for c in interdiff.changes)
    if total and kept / total < RELATED_HUNKS:
        return replace(
            base,
            verdict=Verdict.EARLIER,
            evidence=f"{shown}; the applied code is mostly new since",
            delta=delta,
        )
    files = ", ".join(delta.files[:2]) + (" ..." if len(delta.files) > 2 else "")
    return replace(
        base,
        verdict=Verdict.CHANGED,
        evidence=f"{shown}; then +{delta.added} -{delta.removed} in {files}"
        + (
            f" (disclosed: {delta.disclosed})"
            if delta.disclosed
            else " (not disclosed)"
        ),
        delta=delta,
    )


def _patch_of(facts: CommitFacts, version: int) -> Posted | None:
    """The newest patch posting of `version`."""
    patches = [p for p in facts.postings if p.is_patch and p.version == version]
    return min(patches, key=_posting_order) if patches else None


def _landed_code(facts: CommitFacts, sources: Sources) -> str | None:
    """The commit's diff: a posting's with the same patch-id (the store has it),
    else the one read from git."""
    patch_id = facts.row.patch_id if facts.row else None
    for posted in facts.postings:
        if posted.is_patch and patch_id and posted.message.patch_id == patch_id:
            found = sources.posted_diff(posted.message.seq)
            if found is not None:
                return found
    return sources.commit_diff(facts.commit.sha)


def _lines(diff: str, *, context: bool) -> Counter[tuple[str, str]]:
    """The +/- lines of each file (and its context lines with `context`),
    whitespace dropped as git patch-id drops it."""
    kept = ("+", "-", " ") if context else ("+", "-")
    return Counter(
        (hunk.path, line[0] + "".join(line[1:].split()))
        for hunk in hunks(diff)
        for line in hunk.lines
        if line[:1] in kept
    )


def _delta(interdiff: Interdiff, version: int, *, disclosed: str) -> Delta:
    added = removed = 0
    for change in interdiff.changes:
        if change.kind == "edited":
            shown = change.shown()
            added += sum(line.startswith("+") for line in shown)
            removed += sum(line.startswith("-") for line in shown)
        else:
            hunk = change.posted or change.applied
            assert hunk is not None
            count = sum(line[:1] in ("+", "-") for line in hunk.lines)
            added += count if change.kind == "added" else 0
            removed += count if change.kind == "dropped" else 0
    return Delta(
        from_version=version,
        files=tuple(dict.fromkeys(change.path for change in interdiff.changes)),
        added=added,
        removed=removed,
        disclosed=disclosed,
        changes=interdiff.changes,
    )


def _disclosed(facts: CommitFacts, version: int, sources: Sources) -> str:
    """How a change after review was disclosed: the committer's `[name: ...]` note
    in the commit message, or a changelog below `---` of a later posting."""
    notes = maintainer_notes(facts.commit.message)
    if notes:
        return notes[0]
    for posted in facts.postings:
        later = posted.is_patch and posted.version > version
        if later and has_changelog(sources.body(posted.message.seq)):
            return f"changelog in v{posted.version}"
    return ""
