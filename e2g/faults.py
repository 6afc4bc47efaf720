"""Fault-injection points: named places where a test can slow down or kill a real run.

Production code marks a point with `point("index.batch")`. Unless the environment
variable E2G_FAULT_HOOK names a hook as `module:function`, a point costs one global
lookup and does nothing. With it set (tests only), the function is imported once and
called with the point's name: it may sleep, raise, or kill its own process, so the
fault tests drive real subprocesses without sleeps or test branches in the code.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable

HOOK_ENV = "E2G_FAULT_HOOK"

_hook: Callable[[str], None] | None = None
_loaded = False


def point(name: str) -> None:
    """A place where a test may inject a fault; a no-op in normal runs."""
    hook = _hook if _loaded else _load()
    if hook is not None:
        hook(name)


def _load() -> Callable[[str], None] | None:
    global _hook, _loaded
    _loaded = True
    spec = os.environ.get(HOOK_ENV, "")
    if spec:
        module, _, function = spec.partition(":")
        _hook = getattr(importlib.import_module(module), function or "hook")
    return _hook
