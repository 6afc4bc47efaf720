"""Whoosh, imported without the dependencies it loads but never runs for e2g.

- `whoosh.compat` re-exports `urllib.request.urlretrieve` (used nowhere in Whoosh),
  and importing `urllib.request` pulls in http.client, ssl and the email package;
- `whoosh.reading` takes `cached_property` from a backport that imports asyncio, for
  one property; `functools.cached_property` is the same decorator for that use;
- `whoosh.query.terms` imports `whoosh.lang.morph_en` (six large regular expressions
  compiled at import) for the `Variations` query, which e2g never builds;
- `whoosh.filedb.filetables` takes `md5` from `hashlib` to hash the terms it looks
  up; `hashlib` loads OpenSSL (~3 ms) for it, where CPython's own `_md5` gives the
  same digests (left to `hashlib` on a Python built without `_md5`).

Together they were 39 ms of every search process (importing the Whoosh modules e2g
uses: 62 ms, 23 ms with the stand-ins), a quarter of the 150 ms a whole `e2g search`
may take (`benchmarks/startup.py`, sample store: 177 ms before, 150 ms after;
`benchmarks/tricks.py`: a process importing them, 105 ms plain, 61 ms with these).

So `load()` imports those Whoosh modules with stand-ins in `sys.modules` and takes
the stand-ins out again at once: a later `import urllib.request` (uvicorn's, say)
gets the real module, and a stand-in's function imports the real one on first call.
A stand-in is not placed when its real module is already loaded. For those few
milliseconds another thread's `import urllib.request` would get the stand-in, so a
threaded process imports `e2g.index.fulltext` before its threads start (`e2g serve`
does, in `web.app.create_app`).

`e2g.index.fulltext` imports this module before any Whoosh module; it is the only
one that does.
"""

from __future__ import annotations

import functools
import importlib
import sys
import types
from collections.abc import Callable
from typing import Any


def _deferred(module: str, name: str) -> Callable[..., Any]:
    """`module.name`, imported when first called."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call.__name__ = name
    return call


# Each module Whoosh imports but e2g does not need: what Whoosh takes from it.
_STAND_INS: dict[str, dict[str, Any]] = {
    "urllib.request": {"urlretrieve": _deferred("urllib.request", "urlretrieve")},
    "whoosh.lang.morph_en": {
        "variations": _deferred("whoosh.lang.morph_en", "variations")
    },
    "cached_property": {"cached_property": functools.cached_property},
}
try:
    import _md5  # type: ignore[import-not-found]  # noqa: PLC2701 - see above

    _STAND_INS["hashlib"] = {"md5": _md5.md5}
except ImportError:  # a Python built without its own hash modules
    pass


def _stand_in(name: str) -> types.ModuleType:
    module = types.ModuleType(name, "e2g's stand-in while Whoosh is imported")
    for attribute, value in _STAND_INS[name].items():
        setattr(module, attribute, value)
    return module


def load() -> None:
    """Import the Whoosh modules that need stand-ins; the rest import as usual."""
    if "whoosh.compat" in sys.modules:
        return
    placed = [name for name in _STAND_INS if name not in sys.modules]
    for name in placed:
        sys.modules[name] = _stand_in(name)
    try:
        import whoosh.compat  # noqa: F401, PLC0415
        import whoosh.filedb.filetables  # noqa: F401, PLC0415
        import whoosh.query.terms  # noqa: F401, PLC0415
        import whoosh.reading  # noqa: F401, PLC0415
    finally:
        for name in placed:
            del sys.modules[name]


load()
