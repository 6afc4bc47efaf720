"""The full-text index: one Whoosh document per message, derived from the store.

This is the only module in e2g that imports Whoosh, and no Whoosh type leaves it: the
pipeline hands in `IndexDoc`s, searches come back as `SearchHit`s, and queries arrive as
text parsed by `index.query`. The SQLite store is the record; this index is derived and
can be rebuilt from the store at any time (`rebuild`, behind `e2g reindex`).

Consistency with the store: `FulltextWriter.commit` is called right after the store's
batch commits, and the highest store sequence number it holds (`last_seq`) is written to
a sidecar file only after Whoosh's own commit. A crash therefore leaves the index behind
the store, never ahead of it, and the next ingest catches up from `last_seq`. Updates are
keyed by Message-ID, so indexing a message again (a resend, a cross-post, a catch-up
that overlaps) replaces it instead of duplicating it.

Readers never block: Whoosh locks writers only, and a searcher sees the last commit.

Security: Whoosh stores pickles in its files (the schema, stored fields). Never open an
index from a source you do not trust; rebuild it from the store instead.
Whoosh never fsyncs, so a power loss can lose recent commits; `e2g reindex` repairs that.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import re
import shutil
import struct
import tempfile
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any

import whoosh.index
import whoosh.query as wq
from whoosh.analysis import RegexTokenizer, Token, Tokenizer
from whoosh.fields import ID, NUMERIC, STORED, TEXT, Schema
from whoosh.searching import Searcher
from whoosh.writing import IndexWriter, LockError

from e2g import errors
from e2g.index import query as ql

log = logging.getLogger(__name__)

FORMAT = 1  # bump when the schema or the analysis changes: old indexes need a reindex
SIDECAR = "e2g-index.json"
REBUILD_BATCH = 20_000  # docs per commit in rebuild: bounds memory, keeps merges cheap
WRITER_LIMIT_MB = 256  # Whoosh's in-memory posting pool before it spills to disk
SUBJECT_BOOST = 3.0  # a subject hit outranks a body-only hit
MAX_PATH_DEPTH = 32  # directory prefixes indexed per path
SORTS = ("date", "relevance")

# A word, possibly compound: `io_uring`, `net-next`, `mm/slab`, `slab.c`, `3/7`.
_WORD = re.compile(r"\w+(?:[-./+]\w+)*")
_PART = re.compile(r"[^\W_]+")
_NAME_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class IndexDoc:
    """What the index holds for one message; built by the pipeline."""

    message_id: str
    subject: str
    subject_key: str
    author_name: str
    author_email: str
    lists: tuple[str, ...]
    date: datetime | None
    kind: str
    version: int
    files: tuple[str, ...]
    thread_root: str | None
    body: str | None  # None unless --index-bodies
    seq: int  # the store's message sequence number: catch-up indexes seq > last_seq()


@dataclass(frozen=True, slots=True)
class SearchHit:
    message_id: str
    subject: str
    author_name: str
    author_email: str
    lists: tuple[str, ...]
    date: datetime | None
    kind: str
    version: int
    files: tuple[str, ...]
    thread_root: str | None
    score: float  # 0.0 when sorted by date


# --- analysis: pure functions on str, shared by indexing and querying ----------------


def fold(text: str) -> str:
    """Case- and accent-fold: 'José' and 'JOSE' both become 'jose'."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def word_tokens(text: str) -> Iterator[tuple[int, str]]:
    """Index-side tokens with positions.

    A compound word (`io_uring`, `net-next`, `mm/slab`) is kept whole and its parts
    follow at consecutive positions, the whole sharing the first part's position, so
    `io_uring`, `uring` and the phrase "io uring" all match. A word followed by ':' (a
    subsystem prefix, `mm/slab:`) also yields itself with the colon and each of its
    directory ancestors (`mm:`), so `mm:` finds every mm patch.
    """
    folded = fold(text)
    position = 0
    for match in _WORD.finditer(folded):
        word = match.group(0)
        parts = _PART.findall(word)
        yield position, word
        if len(parts) > 1 or (parts and parts[0] != word):
            for offset, part in enumerate(parts):
                yield position + offset, part
        if folded.startswith(":", match.end()):
            yield position, word + ":"
            segments = word.split("/")
            for depth in range(1, min(len(segments), MAX_PATH_DEPTH)):
                yield position, "/".join(segments[:depth]) + ":"
        position += max(len(parts), 1)


def query_words(text: str) -> list[str]:
    """Query-side tokens for a free word: whole compounds, and a trailing ':' kept."""
    folded = fold(text)
    words = []
    for match in _WORD.finditer(folded):
        colon = folded.startswith(":", match.end())
        words.append(match.group(0) + (":" if colon else ""))
    return words


def phrase_words(text: str) -> list[str]:
    """Query-side tokens for a phrase: the parts, which sit at consecutive positions."""
    return _PART.findall(fold(text))


def author_tokens(name: str, email: str) -> list[str]:
    """`Jens Axboe <axboe@kernel.dk>` -> jens, axboe, axboe@kernel.dk, kernel.dk, ..."""
    tokens = _NAME_WORD.findall(fold(name))
    address = fold(email).strip()
    if address:
        local, _, domain = address.partition("@")
        tokens += [address, local, domain]
        tokens += _NAME_WORD.findall(local)
    return list(dict.fromkeys(token for token in tokens if token))


def path_tokens(paths: Iterable[str]) -> list[str]:
    """Each path, its base name and every directory prefix: `mm/`, `mm/slab.c`."""
    tokens: dict[str, None] = {}
    for path in paths:
        clean = _clean_path(path)
        if not clean:
            continue
        segments = clean.split("/")
        for depth in range(1, min(len(segments), MAX_PATH_DEPTH)):
            tokens["/".join(segments[:depth]) + "/"] = None
        tokens[clean] = None
        tokens[segments[-1]] = None
    return list(tokens)


def list_tokens(lists: Iterable[str]) -> list[str]:
    """`io-uring.vger.kernel.org` is found by itself and by its name `io-uring`."""
    tokens: dict[str, None] = {}
    for list_id in lists:
        clean = fold(list_id).strip()
        if clean:
            tokens[clean] = None
            tokens[clean.split(".", 1)[0]] = None
    return list(tokens)


def _clean_path(path: str) -> str:
    return fold(path).strip().removeprefix("./").strip("/").replace("\n", " ")


class WordTokenizer(Tokenizer):  # type: ignore[misc]
    """Whoosh adapter for `word_tokens`; pickled into the index schema by name."""

    def __call__(  # type: ignore[override]
        self,
        value: str,
        positions: bool = False,
        chars: bool = False,
        keeporiginal: bool = False,
        removestops: bool = True,
        start_pos: int = 0,
        start_char: int = 0,
        tokenize: bool = True,
        mode: str = "",
        **kwargs: Any,
    ) -> Iterator[Token]:
        token = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        pairs = word_tokens(value) if tokenize else iter([(0, fold(value))])
        for position, text in pairs:
            token.text = text
            token.boost = 1.0
            token.stopped = False
            if positions:
                token.pos = start_pos + position
            if chars:
                token.startchar = token.endchar = start_char
            yield token


def _schema() -> Schema:
    lines = RegexTokenizer(r"[^\n]+")  # one token per line: values we tokenised ourselves
    return Schema(
        message_id=ID(stored=True, unique=True),
        subject=TEXT(analyzer=WordTokenizer(), stored=True, field_boost=SUBJECT_BOOST),
        subject_key=ID(),
        body=TEXT(analyzer=WordTokenizer()),
        author=TEXT(analyzer=lines, phrase=False),
        author_name=STORED(),
        author_email=STORED(),
        lists=TEXT(analyzer=lines, phrase=False),
        list_ids=STORED(),
        date=NUMERIC(int, bits=64, signed=True, stored=True, sortable=True),
        kind=ID(stored=True),
        version=NUMERIC(int, bits=32, stored=True),
        files=TEXT(analyzer=lines, phrase=False),
        paths=STORED(),
        thread_root=ID(stored=True),
    )


def _fields(doc: IndexDoc) -> dict[str, Any]:
    """An IndexDoc as Whoosh fields; absent values are left out, not indexed empty."""
    fields: dict[str, Any] = {
        "message_id": doc.message_id,
        "subject": doc.subject,
        "subject_key": doc.subject_key,
        "author": "\n".join(author_tokens(doc.author_name, doc.author_email)),
        "author_name": doc.author_name,
        "author_email": doc.author_email,
        "lists": "\n".join(list_tokens(doc.lists)),
        "list_ids": tuple(doc.lists),
        "kind": doc.kind,
        "version": doc.version,
        "files": "\n".join(path_tokens(doc.files)),
        "paths": tuple(doc.files),
    }
    if doc.date is not None:
        fields["date"] = _timestamp(doc.date)
    if doc.thread_root:
        fields["thread_root"] = doc.thread_root
    if doc.body:
        fields["body"] = doc.body
    return {name: value for name, value in fields.items() if value != ""}


def _timestamp(moment: datetime) -> int:
    if moment.tzinfo is None:  # the model promises aware UTC; be safe, not local
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp())


def _hit(fields: dict[str, Any], score: float) -> SearchHit:
    stamp = fields.get("date")
    return SearchHit(
        message_id=fields["message_id"],
        subject=fields.get("subject", ""),
        author_name=fields.get("author_name", ""),
        author_email=fields.get("author_email", ""),
        lists=tuple(fields.get("list_ids", ())),
        date=datetime.fromtimestamp(stamp, UTC) if stamp is not None else None,
        kind=fields.get("kind", ""),
        version=fields.get("version", 1),
        files=tuple(fields.get("paths", ())),
        thread_root=fields.get("thread_root"),
        score=score,
    )


# --- query translation: index.query's tree to Whoosh queries -------------------------


def translate(parsed: ql.Query) -> wq.Query:
    """The Whoosh query for a parsed query; all clauses must match."""
    positive = [_clause(c) for c in parsed.clauses if not isinstance(c, ql.Not)]
    negative = [_clause(c.clause) for c in parsed.clauses if isinstance(c, ql.Not)]
    base = wq.And(positive) if len(positive) > 1 else (positive or [wq.Every()])[0]
    if not negative:
        return base
    return wq.AndNot(base, wq.Or(negative) if len(negative) > 1 else negative[0])


def _clause(clause: ql.Match | ql.DateRange | ql.KindIs | ql.VersionIs) -> wq.Query:
    if isinstance(clause, ql.DateRange):
        return _date_range(clause)
    if isinstance(clause, ql.KindIs):
        return wq.Term("kind", clause.kind)
    if isinstance(clause, ql.VersionIs):
        return wq.NumericRange("version", clause.version, clause.version)
    if clause.field is ql.Field.FROM:
        return _all(_author_word(word) for word in clause.value.split())
    if clause.field is ql.Field.FILE:
        path = _clean_path(clause.value)
        return wq.Or([wq.Term("files", path), wq.Term("files", path + "/")])
    if clause.field is ql.Field.LIST:
        return wq.Term("lists", fold(clause.value).strip())
    names = ["subject"] if clause.field is ql.Field.SUBJECT else ["subject", "body"]
    return _text(clause, names)


def _text(clause: ql.Match, names: list[str]) -> wq.Query:
    if clause.phrase:
        words = phrase_words(clause.value)
        if len(words) > 1:
            return wq.Or([wq.Phrase(name, words) for name in names])
        return _any(names, words)
    return _all(_any(names, [word]) for word in query_words(clause.value))


def _any(names: list[str], words: list[str]) -> wq.Query:
    if not words:
        return wq.NullQuery
    return wq.Or([wq.Term(name, words[0]) for name in names])


def _all(queries: Iterable[wq.Query]) -> wq.Query:
    found = list(queries)
    if not found:
        return wq.NullQuery
    return found[0] if len(found) == 1 else wq.And(found)


def _author_word(word: str) -> wq.Query:
    """`axboe@kernel.dk`, `axboe`, `Jens`; `o'brien` also as its parts `o` `brien`."""
    folded = fold(word).strip()
    parts = _NAME_WORD.findall(folded)
    if len(parts) > 1 and "@" not in folded:
        return wq.Or([wq.Term("author", folded), _all(wq.Term("author", p) for p in parts)])
    return wq.Term("author", folded)


def _date_range(clause: ql.DateRange) -> wq.Query:
    start = _day_start(clause.start) if clause.start else None
    end = _day_start(clause.end + timedelta(days=1)) - 1 if clause.end else None
    return wq.NumericRange("date", start, end)


def _day_start(day: date) -> int:
    return int(datetime.combine(day, time(0), UTC).timestamp())


# --- the index ------------------------------------------------------------------------

# What a broken or foreign index directory can throw while opening (an unpickling
# schema, a truncated TOC, a class renamed since): all mean "rebuild it".
_BROKEN = (
    whoosh.index.IndexError,
    OSError,
    EOFError,
    ValueError,
    TypeError,
    AttributeError,
    ImportError,
    KeyError,
    struct.error,
    pickle.UnpicklingError,
)


class Fulltext:
    """An open full-text index directory: searches, counts, and hands out writers."""

    def __init__(self, directory: Path, index: whoosh.index.Index) -> None:
        self.directory = directory
        self._index = index
        self._searcher: Searcher | None = None

    @classmethod
    def open(cls, directory: Path, *, create: bool = True) -> Fulltext:
        """Open the index in `directory`, creating an empty one if allowed and absent.

        Raises IndexError_ when the index is missing (and `create` is false), broken,
        or written by an incompatible e2g: `e2g reindex` rebuilds it from the store.
        """
        try:
            if whoosh.index.exists_in(str(directory)):
                _check_sidecar(directory)
                return cls(directory, whoosh.index.open_dir(str(directory)))
            if not create:
                raise errors.IndexError_(
                    f"no full-text index in {directory}; run `e2g reindex` to build it"
                )
            directory.mkdir(parents=True, exist_ok=True)
            index = whoosh.index.create_in(str(directory), _schema())
            _write_sidecar(directory, 0)
            return cls(directory, index)
        except _BROKEN as error:
            raise errors.IndexError_(
                f"the full-text index in {directory} is unusable ({error}); "
                "run `e2g reindex` to rebuild it"
            ) from error

    def last_seq(self) -> int:
        """The highest store sequence number committed to this index (0 when empty)."""
        return _read_sidecar(self.directory)

    def count(self) -> int:
        return int(self._index.doc_count())

    def writer(self) -> FulltextWriter:
        """A writer for one or more batches; raises IndexError_ if another one is open."""
        return FulltextWriter(self)

    def search(
        self, query: str, *, limit: int = 20, offset: int = 0, sort: str = "date"
    ) -> tuple[list[SearchHit], int]:
        """Hits `offset`..`offset+limit` and the total; newest first or by relevance.

        Raises QueryError for a query that cannot be parsed or a bad sort/limit.
        """
        if sort not in SORTS:
            raise errors.QueryError(f"unknown sort {sort!r}; expected one of {SORTS}")
        if limit < 0 or offset < 0:
            raise errors.QueryError("limit and offset must not be negative")
        compiled = translate(ql.parse_query(query))
        searcher = self._fresh_searcher()
        wanted = max(offset + limit, 1)  # Whoosh reads limit=0 as "no limit"
        if sort == "date":
            results = searcher.search(compiled, limit=wanted, sortedby="date", reverse=True)
        else:
            results = searcher.search(compiled, limit=wanted)
        total = len(results)
        page = [results[i] for i in range(offset, min(offset + limit, results.scored_length()))]
        hits = [_hit(hit.fields(), float(hit.score or 0.0)) for hit in page]
        return hits, total

    def close(self) -> None:
        if self._searcher is not None:
            self._searcher.close()
            self._searcher = None
        self._index.close()

    def __enter__(self) -> Fulltext:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _fresh_searcher(self) -> Searcher:
        """One searcher kept open between searches, moved on to the latest commit."""
        if self._searcher is None:
            self._searcher = self._index.searcher()
        else:
            self._searcher = self._searcher.refresh()
        return self._searcher


class FulltextWriter:
    """Buffers one batch of documents and commits them to the index in one go.

    Holds the index's write lock from creation until `cancel` (or the end of the `with`
    block). `commit` may be called once per batch; the writer stays usable after it.
    Leaving the `with` block discards anything not committed: the pipeline commits
    explicitly, right after the store's own commit, so the index never runs ahead.
    """

    def __init__(self, fulltext: Fulltext, *, assume_new: bool = False) -> None:
        self._fulltext = fulltext
        self._assume_new = assume_new  # rebuild: ids are unique, skip the delete lookups
        self._pending: dict[str, IndexDoc] = {}
        self._deleted: set[str] = set()
        self._writer: IndexWriter | None = self._acquire()

    def add(self, doc: IndexDoc) -> None:
        """Index `doc`, replacing any document with the same Message-ID."""
        self._deleted.discard(doc.message_id)
        self._pending[doc.message_id] = doc

    def delete(self, message_id: str) -> None:
        self._pending.pop(message_id, None)
        self._deleted.add(message_id)

    def commit(self) -> None:
        """Make the batch durable in the index, then record its highest seq."""
        writer = self._writer or self._acquire()
        self._writer = None
        try:
            self._feed(writer)
            writer.commit()
        except BaseException:
            writer.cancel()
            raise
        seqs = [doc.seq for doc in self._pending.values()]
        last = self._fulltext.last_seq()
        _write_sidecar(self._fulltext.directory, max([last, *seqs]))
        self._pending.clear()
        self._deleted.clear()
        self._writer = self._acquire()

    def cancel(self) -> None:
        """Drop the uncommitted batch and release the write lock."""
        self._pending.clear()
        self._deleted.clear()
        if self._writer is not None:
            self._writer.cancel()
            self._writer = None

    def __enter__(self) -> FulltextWriter:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.cancel()

    def _feed(self, writer: IndexWriter) -> None:
        if not self._assume_new and self._fulltext.count():
            for message_id in [*self._pending, *self._deleted]:
                writer.delete_by_term("message_id", message_id)
        for doc in self._pending.values():
            writer.add_document(**_fields(doc))

    def _acquire(self) -> IndexWriter:
        try:
            return self._fulltext._index.writer(limitmb=WRITER_LIMIT_MB)
        except LockError:
            raise errors.IndexError_(
                f"the full-text index in {self._fulltext.directory} is being written by "
                "another e2g process (an ingest or reindex); wait for it and retry"
            ) from None


def rebuild(
    directory: Path,
    docs: Iterable[IndexDoc],
    *,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Build a fresh index from `docs` beside `directory`, then swap it in by rename.

    Searches keep working on the old index until the swap. Returns the docs indexed.
    A crash before the swap leaves the old index untouched (and a temp dir to ignore);
    a crash between the two renames leaves no index, which the next open creates empty
    and the next ingest refills from seq 0.
    """
    directory = directory.resolve()
    directory.parent.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix=f".{directory.name}.rebuild-", dir=directory.parent))
    try:
        count = _fill(fresh, docs, progress)
        _swap(fresh, directory)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise
    return count


def _fill(fresh: Path, docs: Iterable[IndexDoc], progress: Callable[[int], None] | None) -> int:
    count = 0
    with Fulltext.open(fresh) as fulltext, FulltextWriter(fulltext, assume_new=True) as writer:
        for doc in docs:
            writer.add(doc)
            count += 1
            if count % REBUILD_BATCH == 0:
                writer.commit()
            if progress is not None and count % 1000 == 0:
                progress(count)
        writer.commit()
    if progress is not None:
        progress(count)
    return count


def _swap(fresh: Path, directory: Path) -> None:
    """Replace `directory` by `fresh`, holding the old index's write lock if there is one."""
    if not whoosh.index.exists_in(str(directory)):
        if directory.exists():
            shutil.rmtree(directory)
        fresh.rename(directory)
        return
    old = directory.with_name(f".{directory.name}.old-{os.getpid()}")
    lock = whoosh.index.open_dir(str(directory)).lock("WRITELOCK")
    if not lock.acquire():
        raise errors.IndexError_(
            f"the full-text index in {directory} is being written by another e2g "
            "process (an ingest); wait for it and run `e2g reindex` again"
        )
    try:  # the lock's file descriptor survives the rename; no writer can slip in
        directory.rename(old)
        fresh.rename(directory)
    finally:
        lock.release()
    shutil.rmtree(old, ignore_errors=True)


# --- the sidecar: last_seq and the format, written after each Whoosh commit ---------


def _read_sidecar(directory: Path) -> int:
    try:
        data = json.loads((directory / SIDECAR).read_text(encoding="utf-8"))
        return int(data["last_seq"])
    except FileNotFoundError:
        return 0
    except (ValueError, KeyError, TypeError) as error:
        raise errors.IndexError_(
            f"{directory / SIDECAR} is unreadable ({error}); run `e2g reindex`"
        ) from error


def _check_sidecar(directory: Path) -> None:
    path = directory / SIDECAR
    if not path.exists():
        return  # a crash after Whoosh's first commit: last_seq is 0, catch-up redoes all
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("format") != FORMAT:
        raise errors.IndexError_(
            f"the full-text index in {directory} has format {data.get('format')}, "
            f"this e2g needs {FORMAT}; run `e2g reindex`"
        )


def _write_sidecar(directory: Path, last_seq: int) -> None:
    """Atomically replace the sidecar (write a temp file, then rename over)."""
    temporary = directory / f".{SIDECAR}.{os.getpid()}"
    temporary.write_text(json.dumps({"format": FORMAT, "last_seq": last_seq}), encoding="utf-8")
    temporary.replace(directory / SIDECAR)
