"""What lore's URL shapes serve: a list named as lore names it, a thread as an
mboxrd, a search's hits as an mboxrd (public-inbox's `?x=m`).

b4, lei and a pasted lore link all ask public-inbox for these: `/<list>/<msgid>/`,
`/raw`, `/t.mbox.gz`, and `/<list>/?q=QUERY&x=m`; e2g.web.lore answers the URLs and
gzips. Messages are their bytes exactly as the store keeps them (as the archive held
them), each after public-inbox's separator with its "From " lines mboxrd-quoted
(e2g.archives.mbox), oldest first. Reads only.
"""

from __future__ import annotations

import re

from e2g import errors
from e2g.api.basis import open_store
from e2g.api.core import search
from e2g.archives.mbox import mboxrd_entry
from e2g.config import Settings
from e2g.index.store import Store
from e2g.mail import threads
from e2g.mail.lists import names

ALL = "all"  # lore's name for every list at once
SEARCH_HITS = 200  # messages a search's mbox holds, as public-inbox's default
MAX_MBOX = 64 * 1024 * 1024  # bytes of one mbox answer: a bigger thread is cut
# b4 looks for a series' other postings (and their review trailers) with a query of
# patch-ids ("patchid:X OR patchid:Y", git patch-id --stable, as e2g stores them).
_PATCH_ID_TERM = re.compile(r"patchid:([0-9a-f]{40})")


def find_list(settings: Settings, name: str) -> str | None:
    """The list id `name` names (its short name or its whole id), None for "all",
    or NotFound."""
    if name == ALL:
        return None
    with open_store(settings) as store:
        known = store.list_names()
    for list_id in known:
        if name in names(list_id):
            return list_id
    raise errors.NotFound(
        f"no list {name[:100]!r} in the store: /all/ holds every list"
    )


def thread_mbox(settings: Settings, message_id: str) -> bytes | None:
    """The whole thread `message_id` belongs to, as an mboxrd; None when the
    message is not stored."""
    with open_store(settings) as store:
        message = store.message(message_id)
        if message is None:
            return None
        members = store.thread(message.thread_root, limit=threads.MAX_THREAD)
        if all(found.seq != message.seq for found in members):
            members.append(message)
        return _mbox(store, sorted(found.seq for found in members))


def search_mbox(
    settings: Settings, query: str, *, list_id: str | None, whole_threads: bool
) -> bytes:
    """The messages `query` finds (on `list_id`, or everywhere), newest first as
    public-inbox gives them, with their whole threads when asked (`t=1`)."""
    patch_ids = _patch_ids(query)
    if patch_ids is None:
        wanted = f"({query}) list:{list_id}" if list_id else query
        found = search(settings, wanted, limit=SEARCH_HITS).hits
    with open_store(settings) as store:
        if patch_ids is None:
            messages = store.messages([hit.message_id for hit in found])
        else:
            messages = [
                message
                for patch_id in patch_ids
                for message in store.patches_with_patch_id(patch_id)
                if list_id is None or list_id in message.lists
            ][:SEARCH_HITS]
        seqs = [message.seq for message in messages]
        if whole_threads:
            roots = {message.thread_root for message in messages}
            seqs += [
                member.seq
                for root in roots
                for member in store.thread(root, limit=threads.MAX_THREAD)
            ]
        return _mbox(store, sorted(set(seqs), reverse=not whole_threads))


def _patch_ids(query: str) -> list[str] | None:
    """The patch-ids of a query made only of `patchid:` terms joined by OR (b4's),
    else None: the full-text index answers it."""
    terms = query.split()
    ids = [found[1] for term in terms if (found := _PATCH_ID_TERM.fullmatch(term))]
    if not ids or len(ids) + terms.count("OR") != len(terms):
        return None
    return list(dict.fromkeys(ids))[:SEARCH_HITS]


def _mbox(store: Store, seqs: list[int]) -> bytes:
    """These messages' entries, in this order, until MAX_MBOX bytes."""
    out: list[bytes] = []
    size = 0
    for seq in seqs:
        raw = store.raw(seq)
        if raw is None:
            continue
        entry = mboxrd_entry(raw)
        size += len(entry)
        if size > MAX_MBOX and out:
            break
        out.append(entry)
    return b"".join(out)
