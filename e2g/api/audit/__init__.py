"""`e2g audit`: a verdict per commit on whether the code that landed was reviewed.

`run` reads and orchestrates, `facts` reads the store many commits at a time,
`verdicts` owns the verdict's rules, `reviews` who reviewed and which tags the mail
backs, `delta` how the landed code differs from the reviewed, `model` the answers.
"""

from e2g.api.audit.model import (
    ArchiveWindow,
    AuditSummary,
    CommitAudit,
    Delta,
    ReviewGiven,
    TagCheck,
    Tally,
    Verdict,
    VersionInfo,
)
from e2g.api.audit.run import AuditOptions, audit, range_key

__all__ = [
    "ArchiveWindow",
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
    "range_key",
]
