"""What the index holds of a message: its fields, their tokenizers, and the
document built from a stored message (`IndexDoc`).

The index stores no field: a hit is a seq, kept in a numeric column, and what a page
of hits shows is read from the store. Change anything here and FORMAT must change:
an index of another format is rebuilt (`e2g reindex`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any, NamedTuple

from whoosh.analysis import RegexTokenizer, Token, Tokenizer
from whoosh.columns import NumericColumn
from whoosh.fields import COLUMN, ID, NUMERIC, TEXT, Schema

from e2g.index import analysis
from e2g.index import query as ql

# Bump when the schema or the analysis changes: old indexes need a reindex. 5: no
# subject_key and thread_root terms, which no query ever read (11-14% of the index).
# 6: documents keyed by the store's seq in a column, not by a Message-ID term.
FORMAT = 6
SUBJECT_BOOST = 3.0  # a subject hit outranks a body-only hit


class IndexDoc(NamedTuple):
    """What the index holds for one message; built by the pipeline."""

    subject: str
    author_name: str
    author_email: str
    lists: tuple[str, ...]
    date: datetime | None
    kind: str
    version: int
    files: tuple[str, ...]
    body: str | None  # None unless --index-bodies
    seq: int  # the store's message sequence number: the document's key
    diff: bool = False  # carries a diff (a posting, or a reply with one): has:diff


class _Tokens(Tokenizer):  # type: ignore[misc]
    """Whoosh adapter for a pure token function; pickled into the schema by name."""

    def tokens(self, value: str) -> Iterable[str]:
        raise NotImplementedError

    def __call__(  # noqa: PLR0913 - the signature Whoosh calls
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
        texts = self.tokens(value) if tokenize else [analysis.fold(value)]
        for position, text in enumerate(texts):
            token.text = text
            token.boost = 1.0
            token.stopped = False
            if positions:
                token.pos = start_pos + position
            if chars:
                token.startchar = token.endchar = start_char
            yield token


class WordTokenizer(_Tokens):
    """Words, compounds, their parts and subsystem prefixes (`analysis.word_tokens`)."""

    def tokens(self, value: str) -> Iterable[str]:
        return [word for _, word in analysis.word_tokens(value)]


class PairTokenizer(_Tokens):
    """Adjacent word pairs (`analysis.pair_tokens`): phrases without positions."""

    def tokens(self, value: str) -> Iterable[str]:
        return analysis.pair_tokens(value)


def build_schema() -> Schema:
    lines = RegexTokenizer(r"[^\n]+")  # one token per line: values we tokenised
    # No positions anywhere: Whoosh's positional phrase matching costs ~0.2 ms per
    # candidate; phrases match adjacent-pair terms instead (see analysis.pair_tokens).
    return Schema(
        # The document's key: its message's seq in the store (see the module's doc).
        seq=COLUMN(NumericColumn("q", default=0)),
        subject=TEXT(analyzer=WordTokenizer(), phrase=False, field_boost=SUBJECT_BOOST),
        subject_pairs=TEXT(
            analyzer=PairTokenizer(), phrase=False, field_boost=SUBJECT_BOOST
        ),
        body=TEXT(analyzer=WordTokenizer(), phrase=False),
        body_pairs=TEXT(analyzer=PairTokenizer(), phrase=False),
        author=TEXT(analyzer=lines, phrase=False),
        lists=TEXT(analyzer=lines, phrase=False),
        # Seconds since 1970 (0 = undated): a column, read as an array for sorting and
        # for date ranges, which as tiered term ranges cost ~1 s on 100k documents.
        date=COLUMN(NumericColumn("q", default=0)),
        kind=ID(),  # what is: finds (mail.subject.search_kind)
        has=ID(),  # "diff" for a message that carries one
        version=NUMERIC(int, bits=16, shift_step=0),
        files=TEXT(analyzer=lines, phrase=False),
    )


def fields_of(doc: IndexDoc) -> dict[str, Any]:
    """An IndexDoc as Whoosh fields; absent values are left out, not indexed empty."""
    fields: dict[str, Any] = {
        "seq": doc.seq,
        "subject": doc.subject,
        "subject_pairs": doc.subject,
        "author": "\n".join(analysis.author_tokens(doc.author_name, doc.author_email)),
        "lists": "\n".join(analysis.list_tokens(doc.lists)),
        "kind": str(doc.kind),
        "version": max(0, min(doc.version, ql.MAX_VERSION)),
        "files": "\n".join(analysis.path_tokens(doc.files)),
    }
    if doc.date is not None:
        stamp = max(_timestamp(doc.date), 1)  # 0 means undated
        fields["date"] = stamp
    if doc.diff:
        fields["has"] = "diff"
    if doc.body:
        fields.update(body=doc.body, body_pairs=doc.body)
    return {name: value for name, value in fields.items() if value != ""}


def _timestamp(moment: datetime) -> int:
    if moment.tzinfo is None:  # the model promises aware UTC; be safe, not local
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp())
