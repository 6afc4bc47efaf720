"""The Python API that the CLI and the web layer call.

Each function takes resolved Settings and plain values, does one job, and returns
model or result objects; nothing here prints or exits. Split by job:
`core` (ingest, reindex, search, counts), `threads` (messages and discussions),
`link` (commits, matching, stats).
"""

from e2g.api.core import counts, ingest, now, open_store, reindex, search

__all__ = ["counts", "ingest", "now", "open_store", "reindex", "search"]
