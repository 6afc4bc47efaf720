"""The audit's web side: /audit, /api/v1/audit and the commit page's verdict.

Read-only, as every page: `e2g.api.audit` with nothing matched first, so a commit
`e2g match` never answered is shown as uncertain ("not matched yet"). A range is
checked before git sees it (revisions and `A..B`, `A...B`, `^A`, `A^!`, never an
option) and bounded: the newest MAX_COMMITS commits of it are judged.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

from e2g import errors
from e2g.web.context import WebContext
from e2g.web.render import BadInput

if TYPE_CHECKING:
    from e2g.api.audit import AuditSummary, CommitAudit

MAX_COMMITS = 5000
MAX_RANGE = 400
MAX_REVS = 8
_REV = r"[A-Za-z0-9][A-Za-z0-9._/~^-]*"
_RANGE = re.compile(rf"\^?{_REV}(?:\.\.\.?(?:{_REV})?)?(?:\^!)?|\.\.{_REV}")


class AuditPage(NamedTuple):
    audits: list[CommitAudit]
    summary: AuditSummary
    cut: bool  # the range holds more than MAX_COMMITS commits


def check_range(text: str) -> tuple[str, ...]:
    """The revisions of a range the page was asked for ("" is HEAD), or BadInput."""
    revs = tuple(text.split())
    if (
        len(text) > MAX_RANGE
        or len(revs) > MAX_REVS
        or not all(_RANGE.fullmatch(rev) for rev in revs)
    ):
        raise BadInput(
            "bad-range",
            "not a revision range: expected up to 8 of REV, A..B, A...B, ^A or A^!",
        )
    return revs


def audit_page(
    context: WebContext, revs: tuple[str, ...], *, strict: bool
) -> AuditPage:
    """The verdicts on the newest MAX_COMMITS commits of `revs`, and their summary,
    cached while the store, the range's commits (by object name: a moved branch is
    another key) and the mailmap are unchanged (0.8 s for liburing's history)."""
    from e2g.api.audit import range_key

    try:
        key = range_key(context.repo, revs)
    except errors.E2gError:
        key = None  # the audit itself says what is wrong
    if key is None:
        return _audit_page(context, revs, strict=strict)
    found = context.cached(
        ("audit-page", strict, *key), lambda: _audit_page(context, revs, strict=strict)
    )
    assert isinstance(found, AuditPage)
    return found


def _audit_page(
    context: WebContext, revs: tuple[str, ...], *, strict: bool
) -> AuditPage:
    from e2g.api.audit import AuditOptions, audit

    found: list[CommitAudit] = []
    summary = audit(
        context.settings,
        repo=context.repo,
        options=AuditOptions(
            revs=revs,
            strict=strict,
            match_first=False,
            limit=MAX_COMMITS + 1,
            jobs=1,  # a page is judged in the server's process: it starts none
        ),
        on_commit=found.append,
    )
    return AuditPage(
        audits=found[:MAX_COMMITS], summary=summary, cut=len(found) > MAX_COMMITS
    )


def commit_verdict(context: WebContext, sha: str) -> CommitAudit | None:
    """The audit's verdict on one commit (cached by sha while the store is
    unchanged); None when it cannot be given (a merge, a commit not in the
    repository)."""
    from e2g.api.audit import AuditOptions, audit

    def compute() -> list[CommitAudit]:
        found: list[CommitAudit] = []
        try:
            audit(
                context.settings,
                repo=context.repo,
                options=AuditOptions(revs=(sha,), match_first=False, walk=False),
                on_commit=found.append,
            )
        except errors.E2gError:
            return []
        return found

    found = context.cached(("audit-commit", sha), compute)
    assert isinstance(found, list)
    return found[0] if found else None


def verdicts_of(context: WebContext, shas: list[str]) -> dict[str, CommitAudit]:
    """The verdicts on exactly `shas` (the front page's recent commits)."""
    from e2g.api.audit import AuditOptions, audit

    found: dict[str, CommitAudit] = {}
    if not shas:
        return found
    try:
        audit(
            context.settings,
            repo=context.repo,
            options=AuditOptions(revs=tuple(shas), match_first=False, walk=False),
            on_commit=lambda one: found.__setitem__(one.sha, one),
        )
    except errors.E2gError:
        return {}
    return found


def tag_class(verdict: str) -> str:
    """The badge's look: reviewed code is ok, what an auditor should read warns."""
    if verdict in ("reviewed", "reviewed-trivial-change"):
        return "ok"
    if verdict in ("exempt", "outside-archive", "uncertain"):
        return ""
    return "warn"
