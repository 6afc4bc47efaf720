"""The full-text index: one Whoosh document per message, derived from the store.

No Whoosh type leaves this package: the
pipeline hands in `IndexDoc`s, searches come back as `Found` (a store seq and its
score), and queries arrive as text parsed by `index.query`. The index stores no field:
each document's key is its message's seq in the store, kept in a numeric column, and
what a hit shows (subject, author, lists, date, files, thread) is read from the store
for the page of hits (`api.core.search`, one query), which every search opened
anyway. Until index format 4 the index kept its own copy of those fields: 39% of the
index at 200k messages (68 of 175 MB), pickled per document on every write. Until
format 6 the key was the Message-ID, as a unique term and a stored field: ~115 bytes
of term dictionary and ~76 of pickle per document, a third of the index at 200k
messages, and a term lookup in every segment per document added. The SQLite store is
the record; this index is derived and can be rebuilt from the store at any time
(`rebuild`, behind `e2g reindex`).

Consistency with the store: documents are built only from rows the store committed,
and how far the index has followed the store (its `IndexMark`: the highest message
`seq`, and the last revision of the store's index journal of other changes) is written
to a sidecar file only after Whoosh's own commit. A crash therefore leaves the index
behind the store, never ahead of it, and whoever opens it next catches up from the mark.
Updates are keyed by seq, so indexing a message again (a cross-post's new list, a
catch-up that overlaps) replaces it instead of duplicating it. A seq the index never
held (every new message) needs no lookup at all: the writer finds the documents to
replace by reading the seq column once per commit, not by a term per document.

Readers never block: Whoosh locks writers only, and a searcher sees the last commit.

Layout at scale (lore-size archives): the index's shards are Whoosh segments, each
written once. An ingest commits every `indexing.INDEX_COMMIT_EVERY` documents, and a
segment that large is final (FINAL_SEGMENT): no later commit merges it, so indexing
costs the same per document at a million messages as at ten thousand, and the index
process never stalls on a merge. Small commits (incremental ingests, journal
changes) still merge by size tiers below FINAL_SEGMENT, so their segments stay few.
A search reads every segment; `e2g optimize` merges them all into one when the user
wants to pay for that once. Measured with benchmarks/scale.py (git.git's history,
2 cores): a 200k-message ingest took 385 s instead of 512 s (a 160k merge had held
the index for about 4 minutes), and 1M messages ingested in 25 minutes at a flat
index rate with 20 final segments. Segments are plain files, not Whoosh's compound
ones: opening a compound segment copies each of its parts into memory, which cost
every search process 110 ms at 200k messages and grew with the index. Why segments and not separate Whoosh indexes per shard:
one index keeps one reader, one deletion path by seq and one commit per
batch, while Whoosh's merge policy hook is all that shards needed.

Security: Whoosh stores pickles in its files (the schema, stored fields). Never open an
index from a source you do not trust; rebuild it from the store instead.
Whoosh never fsyncs, so a power loss can lose recent commits; `e2g reindex` repairs that.

This package is the only code in e2g that imports Whoosh, one module per job, each
Whoosh adaptation in the module of its job with the figure that keeps it:
`schema` (fields, tokenizers, the document of a message), `query` (the query
language's tree as Whoosh queries), `columns` (the date and seq columns a search
reads whole), `search` (`Fulltext`: the index's handle, its searches and their block
listing), `write` (`FulltextWriter`: the spilling posting pool, tiered merges, the
replacement scan), `rebuild` (`e2g reindex`), and `sidecar` (the mark written after
each Whoosh commit).
"""

from __future__ import annotations

# isort: off
import e2g.index.whoosh_imports  # noqa: F401 - before any Whoosh module: see there

# isort: on
from e2g.index.fulltext.rebuild import REBUILD_BATCH, rebuild
from e2g.index.fulltext.schema import FORMAT, IndexDoc
from e2g.index.fulltext.search import SORTS, Found, Fulltext
from e2g.index.fulltext.sidecar import SIDECAR, IndexMark, exists, read_mark
from e2g.index.fulltext.write import MERGE_FACTOR, FulltextWriter

__all__ = [
    "FORMAT",
    "MERGE_FACTOR",
    "REBUILD_BATCH",
    "SIDECAR",
    "SORTS",
    "Found",
    "Fulltext",
    "FulltextWriter",
    "IndexDoc",
    "IndexMark",
    "exists",
    "read_mark",
    "rebuild",
]
