"""A mailing list's short name: the one home of how e2g names a list in a URL.

A list is keyed by its List-Id ("io-uring.vger.kernel.org"); its short name is the
id's first label ("io-uring"), the name lore.kernel.org gives it
(https://lore.kernel.org/io-uring/), public-inbox's URLs take, and Patchwork's
projects call `link_name`. The query language's `list:` finds a list by either
(e2g.index.analysis). Pure functions on str; no IO.
"""

from __future__ import annotations


def short_name(list_id: str) -> str:
    """ "io-uring" for "io-uring.vger.kernel.org"; an id with no dot is its own."""
    return list_id.split(".", 1)[0] or list_id


def names(list_id: str) -> tuple[str, ...]:
    """Every name a URL may give the list: its short name and its whole id."""
    return tuple(dict.fromkeys((short_name(list_id), list_id)))
