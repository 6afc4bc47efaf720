"""`e2g audit`: a verdict per commit on whether the code that landed was reviewed.

`run` reads and orchestrates, `facts` reads the store many commits at a time,
`verdicts` owns the rules, `model` holds the answers.
"""

from e2g.api.audit.model import (
    AuditSummary,
    CommitAudit,
    Delta,
    ReviewGiven,
    TagCheck,
    Tally,
    Verdict,
    VersionInfo,
)
from e2g.api.audit.run import AuditOptions, audit

__all__ = [
    "AuditOptions",
    "AuditSummary",
    "CommitAudit",
    "Delta",
    "ReviewGiven",
    "TagCheck",
    "Tally",
    "Verdict",
    "VersionInfo",
    "audit",
]
