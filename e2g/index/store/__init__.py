"""Store: read-only typed queries over the SQLite store.

What the matcher, the API and the web layer read. It never writes (the connection is
`query_only`), so it is safe beside a running ingest: WAL readers see the last committed
batch. Rows become `StoredMessage` values here; no sqlite3.Row leaves this module.

One module per reader it serves, each a group of named queries (a mixin of `Store`):
`messages` (the matcher's lookups and single messages), `bulk` (the store as a
whole), `views` (what pages and views count and list), `links` (stored links by
commit), `trees` (branches, backports, releases), `queue` (the patch queue and its
events), `tracker` (the ids and pages of Patchwork's API); `base` holds the connection and
the reading of rows they share, `rows` the values some queries return.
"""

from __future__ import annotations

from e2g.index.store.base import (
    BLOCK_KINDS,
    DIFF_BLOCK_BYTES,
    DIFF_BLOCK_CACHE,
    DIFF_BLOCK_DIFFS,
    MESSAGE_COLUMNS,
    Blocks,
    StoreCounts,
    StoredLink,
    SubjectLookup,
    diff_blocks,
    from_epoch,
    in_list,
    stored_diff,
    stored_diff_bytes,
)
from e2g.index.store.bulk import BulkReads
from e2g.index.store.links import LinkReads
from e2g.index.store.messages import MessageReads
from e2g.index.store.queue import (
    EventFilter,
    EventRow,
    NewMail,
    QueueFilter,
    QueueRow,
    ThreadNode,
)
from e2g.index.store.rows import (
    AuditRow,
    BackportEdge,
    LinkedCommit,
    MatchedSpan,
    ProcessRow,
    StoredSha,
    SubjectRow,
    ThreadRow,
    TitledCommit,
    TreePlace,
    branch_label,
)
from e2g.index.store.tracker import (
    CoverFilter,
    Person,
    SeriesRow,
    TrackerReads,
)
from e2g.index.store.trees import TreeReads
from e2g.index.store.views import ViewReads
from e2g.model.stored import StoredMessage

__all__ = [
    "AuditRow",
    "BLOCK_KINDS",
    "BackportEdge",
    "CoverFilter",
    "Blocks",
    "DIFF_BLOCK_BYTES",
    "DIFF_BLOCK_CACHE",
    "DIFF_BLOCK_DIFFS",
    "EventFilter",
    "EventRow",
    "LinkedCommit",
    "MESSAGE_COLUMNS",
    "MatchedSpan",
    "NewMail",
    "Person",
    "ProcessRow",
    "QueueFilter",
    "QueueRow",
    "SeriesRow",
    "Store",
    "StoreCounts",
    "StoredLink",
    "StoredMessage",
    "StoredSha",
    "SubjectLookup",
    "SubjectRow",
    "ThreadNode",
    "ThreadRow",
    "TitledCommit",
    "TreePlace",
    "branch_label",
    "diff_blocks",
    "from_epoch",
    "in_list",
    "stored_diff",
    "stored_diff_bytes",
]


class Store(MessageReads, BulkReads, ViewReads, LinkReads, TreeReads, TrackerReads):
    """Read access to one store file. Use as a context manager."""
