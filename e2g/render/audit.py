"""`e2g audit`'s shapes: `--json` lines and /api/v1/audit (`audit_json`,
`audit_summary_json`), and `--sarif` (`audit_sarif`), apart from the other JSON
shapes (e2g.render) because SARIF's is a document of its own."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from e2g.api.audit import ArchiveWindow, AuditSummary, CommitAudit, Delta, Tally


def audit_json(audit: CommitAudit) -> dict[str, object]:
    """One commit's line of `e2g audit --json` and /api/v1/audit (issue 27's keys)."""
    applied = audit.applied
    return {
        "commit": audit.sha,
        "subject": audit.subject,
        "verdict": str(audit.verdict),
        "evidence": audit.evidence,
        "author": _person(audit.author.name, audit.author.email),
        "committer": _person(audit.committer.name, audit.committer.email),
        "committer_only": audit.committer_only,
        "trees": list(audit.trees),
        "applied": None
        if applied is None
        else {"message_id": applied.message_id, "version": applied.version},
        "versions": [
            {
                "version": version.version,
                "message_id": version.message_id,
                "kind": version.kind,
                "applied": version.applied,
                "same_code": version.same_code,
                "reviewed": version.reviewed,
            }
            for version in audit.versions
        ],
        "reviews": [
            {
                "trailer": review.trailer,
                "name": review.person.name,
                "email": review.person.email,
                "message_id": review.message_id,
                "version": review.version,
                "committer": review.committer,
            }
            for review in audit.reviews
        ],
        "tags": [
            {
                "trailer": tag.trailer,
                "name": tag.person.name,
                "email": tag.person.email,
                "backed_by": tag.backed_by,
                "version": tag.version,
                "by_author": tag.by_author,
            }
            for tag in audit.tags
        ],
        "delta": None if audit.delta is None else delta_json(audit.delta),
    }


def _person(name: str, email: str) -> str:
    return f"{name} <{email}>" if name else f"<{email}>"


def delta_json(delta: Delta) -> dict[str, object]:
    return {
        "from_version": delta.from_version,
        "files": list(delta.files),
        "added": delta.added,
        "removed": delta.removed,
        "disclosed": delta.disclosed or None,
        "hunks": [
            {"kind": change.kind, "path": change.path, "lines": change.shown()}
            for change in delta.changes
        ],
    }


def tally_json(tally: Tally) -> dict[str, object]:
    from e2g.api.audit import Verdict

    return {
        "commits": tally.total,
        "audited": tally.audited,
        "counts": {str(verdict): tally.counts[verdict] for verdict in Verdict},
        "strict_coverage": round(tally.strict, 4),
        "lenient_coverage": round(tally.lenient, 4),
    }


def audit_summary_json(summary: AuditSummary) -> dict[str, object]:
    """The last line of `e2g audit --json`: `{"summary": {...}}`."""
    return {
        "summary": tally_json(summary.tally)
        | {
            "tags": summary.tags,
            "tags_backed": summary.tags_backed,
            "tags_outside": summary.tags_outside,
            "matched": summary.matched,
            "strict": summary.strict,
            "archive": None
            if summary.archive is None
            else archive_json(summary.archive),
            "by": summary.by or None,
            "groups": {key: tally_json(tally) for key, tally in summary.groups.items()},
            "elapsed": round(summary.elapsed, 3),
        }
    }


def archive_json(archive: ArchiveWindow) -> dict[str, object]:
    return {
        "first": archive.first.isoformat(),
        "last": archive.last.isoformat(),
        "lists": list(archive.lists),
    }


# SARIF levels: what a code-scanning dashboard should make of each verdict.
_SARIF_LEVELS = {
    "reviewed-trivial-change": "note",
    "changed-after-review": "warning",
    "earlier-version-reviewed": "warning",
    "posted-unreviewed": "error",
    "outside-archive": "note",  # the archive cannot judge it: a reader may look
    "not-posted": "error",
    "exempt": "none",
    "uncertain": "note",
}
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def audit_sarif(
    audits: list[CommitAudit], summary: AuditSummary, *, version: str
) -> dict[str, object]:
    """A SARIF 2.1.0 log of an audit: one result per commit that is not
    `reviewed`, the commit as its logical location, one rule per verdict."""
    from e2g.api.audit.model import MEANINGS

    rules = [
        {
            "id": str(verdict),
            "name": str(verdict).title().replace("-", ""),
            "shortDescription": {"text": MEANINGS[verdict]},
            "defaultConfiguration": {"level": _SARIF_LEVELS[str(verdict)]},
        }
        for verdict in MEANINGS
        if str(verdict) in _SARIF_LEVELS
    ]
    results = [
        {
            "ruleId": str(audit.verdict),
            "level": _SARIF_LEVELS[str(audit.verdict)],
            "message": {
                "text": f"{audit.sha[:12]} {audit.subject}: {audit.verdict}"
                + (f" ({audit.evidence})" if audit.evidence else "")
            },
            "locations": [
                {
                    "logicalLocations": [
                        {
                            "name": audit.sha,
                            "fullyQualifiedName": f"commit/{audit.sha}",
                            "kind": "commit",
                        }
                    ]
                }
            ],
            "partialFingerprints": {"commitSha": audit.sha},
        }
        for audit in audits
        if str(audit.verdict) in _SARIF_LEVELS
    ]
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "e2g",
                        "version": version,
                        "informationUri": "https://github.com/e2g/e2g",
                        "rules": rules,
                    }
                },
                "results": results,
                "properties": audit_summary_json(summary)["summary"],
            }
        ],
    }
