"""Coverage grouping: which directory a commit's files fall in, at each depth."""

from __future__ import annotations

import pytest

from e2g.api.stats import _dirs


@pytest.mark.parametrize(
    ("files", "depth", "keys"),
    [
        ("mm/slab.c", 1, {"mm"}),
        ("mm/slab.c", 2, {"mm"}),  # one level deep stays in its directory
        ("net/core/dev.c\nnet/ipv4/tcp.c", 1, {"net"}),
        ("net/core/dev.c\nnet/ipv4/tcp.c", 2, {"net/core", "net/ipv4"}),
        ("net/core/dev.c", 5, {"net/core"}),
        ("Makefile\nmm/slab.c", 2, {"(top)", "mm"}),
        ("", 1, {"(none)"}),
    ],
)
def test_files_group_by_their_directory_cut_to_depth(
    files: str, depth: int, keys: set[str]
) -> None:
    assert _dirs(files, depth) == keys
