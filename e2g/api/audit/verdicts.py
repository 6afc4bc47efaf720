"""One commit's verdict, from the facts the store holds about it.

The one home of the audit's rules (issue 27), strictest first:

- exempt: a revert, a version bump (`Linux 6.1`, `Git 2.39`, `v1.2.3`, changing only
  version files), or a subject the config's `[audit] exempt` patterns match;
- outside-archive: no posting was found, and the archive does not span the time
  the commit could have been posted: a posting comes after the patch was written
  (its author date; `git am` makes that the posting's own date) and before it was
  committed, so the archive can say "never posted" only when its first mail is no
  later than the earlier of the commit's two dates and its last mail no earlier
  than the later. The archive is that of the lists the repository's postings were
  seen on (a store may hold other projects' lists, older or newer), or the whole
  store's when none was. A verdict of its own, not not-posted: an archive that
  begins in the middle of a project's history would otherwise call every older
  commit off-list. Coverage leaves these out of its denominator, as the exempt
  (the summary counts them and names the archive's dates);
- not-posted: no posting was found, in an archive that spans the commit's dates;
- uncertain: the applied posting was found by a fuzzy rule with a low score and
  carries other code (say so rather than guess);
- reviewed: a version with the commit's own patch-id (git patch-id: whitespace and
  line numbers aside, the same code) was reviewed by someone other than its author;
- otherwise the last reviewed version is compared with the code that landed:
  only context lines moved (a rebase) or spacing within lines changed (a realigned
  table, as `git diff -w` sees it): reviewed-trivial-change; a change of the
  reviewed code: changed-after-review, with the hunks; code the review never saw
  (most of the reviewed hunks are gone): earlier-version-reviewed;
- no version was reviewed: posted-unreviewed.

A review is a review trailer a reply gives in its sender's own name, a bare "Ack."
(the shorthand for Acked-by), or a reply that quotes the patch and comments on it;
never from the patch's author. A review from
the committer alone counts but is flagged (`--strict` drops it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any, NamedTuple

from e2g.api.audit.delta import (
    delta_of,
    disclosed,
    landed_code,
    line_counts,
    patch_of,
)
from e2g.api.audit.facts import CommitFacts, People, Sources, posting_order
from e2g.api.audit.model import (
    ArchiveWindow,
    CommitAudit,
    Delta,
    ReviewGiven,
    Verdict,
    VersionInfo,
)
from e2g.api.audit.reviews import authors, check_tags, reviews_of
from e2g.index.store import AuditRow
from e2g.mail.interdiff import Interdiff, compare_hunks, hunks
from e2g.mail.review import COMMENT
from e2g.mail.subject import revert_depth
from e2g.matcher.postings import QUOTED
from e2g.model import Address

# Found by an exact key: the posting is the commit's, whatever its score.
EXACT_METHODS = frozenset({"trailer", "patch-id", "author-date", QUOTED})
# Below this a fuzzy match (subject, author, files: scored 0.60 and up) is uncertain.
UNCERTAIN_SCORE = 0.75
# A change of the reviewed code keeps at least this share of its hunks (identical
# or edited); with less, what landed is mostly code the review never saw.
RELATED_HUNKS = 0.5
# `Linux 6.1-rc3`, `Git 2.39`, `Git v2.39.0`, `v1.2.3`, `liburing-2.3`: a release.
_RELEASE = re.compile(r"(?:[A-Za-z][\w.+]*[ -])?v?\d+(?:\.\d+)+(?:-?rc\d+)?")
_VERSION_FILES = re.compile(
    r"(?i)(?:.*version.*|makefile|relnotes|news|changelog|changes|configure\.ac|"
    r"meson\.build|package\.json|pyproject\.toml|setup\.(?:py|cfg)|cargo\.toml|"
    r".*\.spec|\d+(?:\.\d+)+(?:\.(?:txt|md|adoc))?)"
)
_RELEASE_DIRS = frozenset({"relnotes", "release-notes", "releasenotes"})


class Rules(NamedTuple):
    strict: bool = False
    exempt: tuple[re.Pattern[str], ...] = ()
    archive: ArchiveWindow | None = None  # None: the store holds no dated mail


def decide(
    facts: CommitFacts, *, people: People, rules: Rules, sources: Sources
) -> CommitAudit:
    """The verdict on one commit, with its evidence."""
    row = facts.row
    subject = row.subject if row else facts.commit.message.split("\n", 1)[0]
    reason = exempt_reason(subject, row.files if row else (), rules.exempt)
    if reason:
        return _audit(facts, subject, verdict=Verdict.EXEMPT, evidence=reason)
    named = people.group(authors(facts))
    tags = check_tags(facts, people=people, authors=named, sources=sources)
    if row is None:
        evidence = "not matched yet: run e2g audit"
        return _audit(facts, subject, tags=tags, evidence=evidence)
    if not facts.postings:
        outside = outside_reason(row, rules.archive)
        return _audit(
            facts,
            subject,
            tags=tags,
            verdict=Verdict.OUTSIDE if outside else Verdict.NOT_POSTED,
            evidence=outside or "no posting found",
        )
    reviews = reviews_of(facts, people=people, authors=named, sources=sources)
    counted = [r for r in reviews if not (rules.strict and r.committer)]
    versions = _versions(facts, {review.version for review in counted})
    applied = next((v for v in versions if v.applied), None)
    found = _judge(facts, counted, versions, applied, sources=sources)
    return _audit(
        facts,
        subject,
        tags=tags,
        reviews=reviews,
        versions=versions,
        applied=applied,
        verdict=found.verdict,
        evidence=found.evidence,
        delta=found.delta,
        committer_only=found.committer_only,
    )


class Finding(NamedTuple):
    """A verdict with its evidence, before it becomes a CommitAudit (made once:
    a dataclass replace of a whole audit cost 2% of an audit of git.git)."""

    verdict: Verdict
    evidence: str
    delta: Delta | None = None
    committer_only: bool = False


def _audit(facts: CommitFacts, subject: str, **found: Any) -> CommitAudit:
    """The commit's audit with what is `found` so far (made once: a dataclass
    replace per finding cost 5% of an audit)."""
    row = facts.row
    return CommitAudit(
        sha=facts.commit.sha,
        subject=subject,
        author=row.author if row else Address("", ""),
        committer=facts.commit.committer,
        files=row.files if row else (),
        trees=facts.trees,
        **{"verdict": Verdict.UNCERTAIN, "evidence": ""} | found,
    )


def outside_reason(row: AuditRow, archive: ArchiveWindow | None) -> str:
    """Why the archive cannot say whether the commit was posted ("" when it can)."""
    if archive is None:
        return ""
    written = min(row.author_date, row.commit_date)
    committed = max(row.author_date, row.commit_date)
    if written < archive.first:
        return (
            f"no posting found; written {written:%Y-%m-%d}, before the archive's "
            f"first mail ({archive.first:%Y-%m-%d})"
        )
    if committed > archive.last:
        return (
            f"no posting found; committed {committed:%Y-%m-%d}, after the archive's "
            f"last mail ({archive.last:%Y-%m-%d})"
        )
    return ""


def exempt_reason(
    subject: str, files: Sequence[str], patterns: Sequence[re.Pattern[str]]
) -> str:
    """Why a commit is exempt from review ("" when it is not)."""
    if revert_depth(subject):
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
        for posted in sorted(facts.postings, key=posting_order)
    )


def _judge(
    facts: CommitFacts,
    counted: Sequence[ReviewGiven],
    versions: Sequence[VersionInfo],
    applied: VersionInfo | None,
    *,
    sources: Sources,
) -> Finding:
    same_code = {v.version for v in versions if v.same_code}
    if not same_code and applied is not None and _uncertain(facts):
        link = next(posted.link for posted in facts.postings if posted.link.applied)
        return Finding(
            verdict=Verdict.UNCERTAIN,
            evidence=f"v{applied.version} found by {link.method}, score {link.score:.2f}",
        )
    reviewed = {review.version for review in counted}
    if not reviewed:
        replies = sum(len(posted.replies) for posted in facts.postings)
        return Finding(
            verdict=Verdict.UNREVIEWED,
            evidence=f"{_version_list(versions)} posted, {replies} "
            f"repl{'y' if replies == 1 else 'ies'}, no review",
        )
    good = reviewed & same_code
    if good:
        shown = [r for r in counted if r.version in good]
        only_committer = all(r.committer for r in shown)
        return Finding(
            verdict=Verdict.REVIEWED,
            evidence=_who(shown) + (" (committer only)" if only_committer else ""),
            committer_only=only_committer,
        )
    return _changed(facts, counted, sources=sources)


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
    facts: CommitFacts,
    counted: Sequence[ReviewGiven],
    *,
    sources: Sources,
) -> Finding:
    """The last reviewed version against the code that landed."""
    last = max(review.version for review in counted)
    shown = _who([r for r in counted if r.version == last])
    reviewed = patch_of(facts, last)
    posted = sources.posted_diff(reviewed.message.seq) if reviewed else None
    code = landed_code(facts, sources, like=posted) if posted else None
    if posted is None or code is None:
        return Finding(
            verdict=Verdict.EARLIER,
            evidence=f"{shown}; the applied code was never reviewed",
        )
    mine, theirs = hunks(posted), hunks(code)
    (my_code, my_change), (their_code, their_change) = (
        line_counts(mine),
        line_counts(theirs),
    )
    if my_code == their_code:
        # The same code in another diff's form (`diff -urp`, other paths), which
        # patch-ids tell apart.
        only_committer = all(r.committer for r in counted if r.version == last)
        return Finding(
            verdict=Verdict.REVIEWED,
            evidence=shown + (" (committer only)" if only_committer else ""),
            committer_only=only_committer,
        )
    if my_change == their_change:
        return Finding(
            verdict=Verdict.TRIVIAL,
            evidence=f"{shown}; only context lines or spacing differ",
        )
    interdiff = compare_hunks(mine, theirs)
    delta = delta_of(interdiff, last, disclosed=disclosed(facts, last, sources))
    return _delta_verdict(interdiff, delta, shown=shown)


def _delta_verdict(interdiff: Interdiff, delta: Delta, *, shown: str) -> Finding:
    """Changed after review, or, when most reviewed hunks are gone, an earlier
    version reviewed."""
    kept = interdiff.identical + sum(c.kind == "edited" for c in interdiff.changes)
    total = kept + sum(c.kind == "dropped" for c in interdiff.changes)
    if total and kept / total < RELATED_HUNKS:
        return Finding(
            verdict=Verdict.EARLIER,
            evidence=f"{shown}; the applied code is mostly new since",
            delta=delta,
        )
    files = ", ".join(delta.files[:2]) + (" ..." if len(delta.files) > 2 else "")
    return Finding(
        verdict=Verdict.CHANGED,
        evidence=f"{shown}; then +{delta.added} -{delta.removed} in {files}"
        + (
            f" (disclosed: {delta.disclosed})"
            if delta.disclosed
            else " (not disclosed)"
        ),
        delta=delta,
    )
