"""Text analysis: what a word is, for the index and for queries alike.

Pure functions on str, no IO and no Whoosh: `index.fulltext` tokenises documents with
them and turns a query's words (parsed by `index.query`) into the same tokens, so a
word is found exactly when it was indexed the same way. Every function is bounded:
paths per message (MAX_PATHS) and directory depth (MAX_DEPTH).
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterable, Iterator

from e2g.mail.lists import short_name

MAX_PATHS = 2_000  # files indexed per message (a treewide patch can touch 10,000)
MAX_DEPTH = 32  # directory prefixes indexed per path (and subsystem prefix)

_WORD = re.compile(r"\w+(?:[-./+]\w+)*")
_PART = re.compile(r"[^\W_]+")
NAME_WORD = re.compile(r"\w+")


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
            yield from _segments(word, position)
        if folded.startswith(":", match.end()):
            yield position, word + ":"
            segments = word.split("/")
            for depth in range(1, min(len(segments), MAX_DEPTH)):
                yield position, "/".join(segments[:depth]) + ":"
        position += max(len(parts), 1)


def _segments(word: str, position: int) -> Iterator[tuple[int, str]]:
    """`io_uring/poll` also yields `io_uring`: a path segment that is itself compound."""
    if "/" not in word:
        return
    for segment in word.split("/")[:MAX_DEPTH]:
        parts = _PART.findall(segment)
        if len(parts) > 1:
            yield position, segment
        position += len(parts)


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


def pair_tokens(text: str) -> list[str]:
    """Each adjacent pair of parts, `use after free` -> `use after`, `after free`.

    Indexed in their own field, they let a phrase match without positions: a phrase
    matches a field holding all its adjacent pairs (exact for two words; for more, a
    field would need the pairs out of order, which subjects practically never have).
    """
    parts = phrase_words(text)
    return [
        f"{first} {second}" for first, second in zip(parts, parts[1:], strict=False)
    ]


def author_tokens(name: str, email: str) -> list[str]:
    """`Jens Axboe <axboe@kernel.dk>` -> jens, axboe, axboe@kernel.dk, kernel.dk, ..."""
    tokens = NAME_WORD.findall(fold(name))
    address = fold(email).strip()
    if address:
        local, _, domain = address.partition("@")
        tokens += [address, local, domain]
        tokens += NAME_WORD.findall(local)
    return list(dict.fromkeys(token for token in tokens if token))


def path_tokens(paths: Iterable[str]) -> list[str]:
    """Each path, its base name and every directory prefix: `mm/`, `mm/slab.c`."""
    tokens: dict[str, None] = {}
    for path in itertools.islice(paths, MAX_PATHS):
        clean = clean_path(path)
        if not clean:
            continue
        segments = clean.split("/")
        for depth in range(1, min(len(segments), MAX_DEPTH)):
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
            tokens[short_name(clean)] = None
    return list(tokens)


def clean_path(path: str) -> str:
    return fold(path).strip().removeprefix("./").strip("/").replace("\n", " ")
