"""`e2g serve` as a user runs it: refused at start in one line, stopped by Ctrl-C."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import mail, patch_body, sample_repo

pytest.importorskip("uvicorn")


def _e2g(data: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "e2g", "--data-dir", str(data), *args]


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "E2G_DEBUG"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("serve")
    archive = root / "list.mbox"
    archive.write_bytes(mail(1, subject="[PATCH] mm: fix", body=patch_body(1)))
    data = root / "data"
    subprocess.run(
        _e2g(data, "-q", "ingest", str(archive)), check=True, env=_env(), timeout=120
    )
    return data, sample_repo(root / "repo")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _serve(data: Path, repo: Path, port: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _e2g(data, "serve", "-C", str(repo), "--port", str(port)),
        capture_output=True,
        text=True,
        env=_env(),
        timeout=60,
        check=False,
    )


def test_an_empty_store_is_refused_in_one_line(
    served: tuple[Path, Path], tmp_path: Path
) -> None:
    result = _serve(tmp_path / "nothing", served[1], _free_port())
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "e2g ingest" in result.stderr


def test_a_directory_that_is_not_git_is_refused_in_one_line(
    served: tuple[Path, Path], tmp_path: Path
) -> None:
    result = _serve(served[0], tmp_path, _free_port())
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert "not a git repository" in result.stderr


def test_a_port_in_use_is_one_line_and_exit_one(served: tuple[Path, Path]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = _serve(*served, port)
    assert result.returncode == 1
    assert (
        result.stderr
        == f"e2g: error: 127.0.0.1 port {port} is in use by another program: pass --port N\n"
    )


def test_ctrl_c_stops_the_server_quietly_with_exit_zero(
    served: tuple[Path, Path],
) -> None:
    port = _free_port()
    process = subprocess.Popen(
        _e2g(served[0], "-q", "serve", "-C", str(served[1]), "--port", str(port)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5):
                    break
            except OSError:
                assert process.poll() is None, process.communicate()
                assert time.monotonic() < deadline, "the server never answered"
                time.sleep(0.2)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert "interrupted" not in err and "error" not in err
