"""How `e2g` ends: main() skips the interpreter's teardown, and nothing of the exit
is lost for it (the status, the exit functions, a thread still at work, stdout)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

MAIN = "from e2g.cli.app import main\nmain()\n"


def _child(prelude: str, *args: str, marker: Path) -> subprocess.CompletedProcess[str]:
    script = f"import sys\nfrom pathlib import Path\nmarker = Path({str(marker)!r})\n"
    return subprocess.run(
        [sys.executable, "-c", script + prelude + MAIN, *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_exit_functions_run_and_the_status_is_kept(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    prelude = "import atexit\natexit.register(marker.write_text, 'atexit')\n"
    done = _child(prelude, "--version", marker=marker)
    assert (done.returncode, marker.read_text()) == (0, "atexit")
    assert done.stdout.startswith("e2g ")
    marker.unlink()
    missing = tmp_path / "none"
    done = _child(
        prelude, "--data-dir", str(tmp_path), "link", "-C", str(missing), "HEAD",
        marker=marker,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr == f"e2g: error: no such directory: {missing}\n"
    assert marker.read_text() == "atexit"


def test_a_thread_still_at_work_is_waited_for(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    prelude = (
        "import threading, time\n"
        "def late():\n"
        "    time.sleep(0.5)\n"
        "    marker.write_text('thread')\n"
        "threading.Thread(target=late).start()\n"
    )
    done = _child(prelude, "--version", marker=marker)
    assert (done.returncode, marker.read_text()) == (0, "thread")


def test_a_usage_error_exits_2_with_one_line(tmp_path: Path) -> None:
    done = _child("", "link", "--no-such-option", "HEAD", marker=tmp_path / "m")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "--no-such-option" in done.stderr


def test_all_of_the_output_reaches_a_pipe(tmp_path: Path) -> None:
    # Written to a pipe (block-buffered): flushed before the process ends.
    from e2g.cli.manual import QUERY

    done = _child("", "help", "query", marker=tmp_path / "m")
    assert done.returncode == 0
    assert done.stdout.rstrip("\n") == QUERY.rstrip("\n")
