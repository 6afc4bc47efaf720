"""How a count reads in English, for every message a user sees: `1 commit`,
`2 commits`, `1 pull request`. One home, so that no layer says "1 commits"."""

from __future__ import annotations


def count(value: int, singular: str, plural: str | None = None) -> str:
    """`value` with its noun agreeing, thousands separated: `1 patch`, `3,000 files`."""
    noun = singular if value == 1 else plural or f"{singular}s"
    return f"{value:,} {noun}"
