"""The fault-injection hook that tests install in real e2g subprocesses.

`e2g.faults.point(name)` calls `hook(name)` when E2G_FAULT_HOOK=tests.fault_hook:hook.
What it does comes from E2G_TEST_FAULTS, `;`-separated directives `ACTION@POINT[:ARG]`:

- `sleep@POINT:SECONDS`      sleep at every pass (a slow consumer, a gap in the input)
- `kill@POINT`               SIGKILL this process at every pass
- `kill-once@POINT:MARKER`   SIGKILL this process the first time any process passes
                             (the marker file records that it happened)
- `killpg-soon@POINT:MAX`    SIGKILL the whole process group within MAX seconds of the
                             first pass (lands inside whatever work follows, e.g. a commit)
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time

ENV = "E2G_TEST_FAULTS"
SETTINGS = {"E2G_FAULT_HOOK": "tests.fault_hook:hook"}

_armed: set[str] = set()


def environment(*directives: str) -> dict[str, str]:
    """The environment variables that install `directives` in an e2g subprocess."""
    return {**SETTINGS, ENV: ";".join(directives)}


def hook(name: str) -> None:
    for directive in filter(None, os.environ.get(ENV, "").split(";")):
        action, _, rest = directive.partition("@")
        point, _, argument = rest.partition(":")
        if point == name:
            _act(action, argument)


def _act(action: str, argument: str) -> None:
    if action == "sleep":
        time.sleep(float(argument))
    elif action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif action == "kill-once":
        try:
            descriptor = os.open(argument, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return
        os.close(descriptor)
        os.kill(os.getpid(), signal.SIGKILL)
    elif action == "killpg-soon" and action not in _armed:
        _armed.add(action)
        delay = random.uniform(0.0, float(argument))
        group = os.getpgid(0)
        timer = threading.Timer(delay, os.killpg, (group, signal.SIGKILL))
        timer.daemon = True
        timer.start()
    elif action != "killpg-soon":
        raise ValueError(f"unknown fault action {action!r}")
