"""The Python API that the CLI and the web layer call.

Each function takes resolved Settings and plain values, does one job, and returns
model or result objects; nothing here prints or exits, and nothing here shapes JSON or
SVG (that is `e2g.render`, above this package). Split by job: `core` (ingest,
reindex, search, counts), `threads` (messages and discussions), `link` (commits and
matching; the worker processes are `e2g.matcher.batch`), `stats` (coverage). Names
load lazily so that `e2g search` does not pay for GitPython and the matcher at
start-up.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "counts": "core",
    "ingest": "core",
    "now": "core",
    "open_store": "core",
    "reindex": "core",
    "search": "core",
    "MatchSummary": "link",
    "link": "link",
    "match": "link",
    "StatsResult": "stats",
    "StatsRow": "stats",
    "stats": "stats",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'e2g.api' has no attribute {name!r}")
    return getattr(importlib.import_module(f"e2g.api.{module}"), name)
