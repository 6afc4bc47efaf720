"""The command reference pages (docs/commands/*.md), as the package ships them.

`e2g/docs` is a symbolic link to the repository's `docs/commands`, and pyproject's
package data lists `docs/*.md`: an editable install reads the pages in place, a wheel
carries a copy. `e2g help COMMAND` prints a page; the web's `/docs` lists and shows
them. tests/test_reference.py keeps each page true to its command's `--help` and
`--json`.
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from typing import NamedTuple

# The page of global options first, then the commands as `e2g --help` orders them;
# a page not named here follows in name order.
ORDER = (
    "e2g",
    "ingest",
    "reindex",
    "optimize",
    "sync",
    "search",
    "link",
    "match",
    "stats",
    "audit",
    "blame",
    "serve",
    "help",
)


class Page(NamedTuple):
    name: str  # the command, or "e2g" for the global options
    summary: str  # the page's first paragraph after its title


def _folder() -> Traversable:
    return resources.files("e2g").joinpath("docs")


def names() -> list[str]:
    """Every page's name, in ORDER, then any other in name order."""
    folder = _folder()
    found = (
        {
            item.name.removesuffix(".md")
            for item in folder.iterdir()
            if item.name.endswith(".md")
        }
        if folder.is_dir()
        else set()
    )
    known = [name for name in ORDER if name in found]
    return known + sorted(found - set(known))


def text(name: str) -> str | None:
    """The page of `name` as written (Markdown), or None when there is none."""
    if name not in names():
        return None
    return _folder().joinpath(f"{name}.md").read_text(encoding="utf-8")


def pages() -> list[Page]:
    """Every page with its one-paragraph summary, for an index."""
    return [Page(name, summary(text(name) or "")) for name in names()]


def summary(page: str) -> str:
    """The first paragraph after the `# title` line, on one line."""
    paragraphs = page.split("\n\n")
    rest = (
        paragraphs[1:] if paragraphs and paragraphs[0].startswith("# ") else paragraphs
    )
    return " ".join(rest[0].split()) if rest else ""
