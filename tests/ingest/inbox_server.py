"""Public-inboxes served over HTTP on 127.0.0.1, for the mirror tests and
benchmarks/sync.py: git's smart HTTP (`git http-backend` as CGI behind a small WSGI
server, public-inbox's "LIST/N" and "LIST/git/N.git" both), or plain static files
(git's dumb protocol, and manifest.js.gz). Nothing listens beyond 127.0.0.1.

`Site` builds inboxes under its root the way public-inbox lays them out
(LIST/git/N.git, one message blob per commit) and writes each inbox's manifest with
grokmirror's fingerprints. `Server(site, smart=...)` serves them in a thread; `drop_after`
makes it cut the Nth response carrying a pack short and stop, as a server that dies
mid-clone does; `start()` again listens on the same port.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import socket
import subprocess
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from tests.ingest.test_public_inbox import run_git as _git

_SHORT = re.compile(r"^/([^/]+)/(\d+)(/.*)$")
_GIT_PATH = re.compile(r"/(info/refs|git-upload-pack|HEAD|objects/.*)$")

StartResponse = Callable[..., Any]


def mail(list_name: str, number: int) -> bytes:
    return (
        f"From: Alice <alice@example.org>\n"
        f"Subject: [PATCH] {list_name}: change {number}\n"
        f"Message-ID: <{list_name}.{number}@example.org>\n"
        f"Date: Mon, 14 Sep 2020 12:{number % 60:02d}:00 +0000\n"
        f"List-Id: <{list_name}.example.org>\n\nHello {number}.\n"
    ).encode()


@dataclass
class Site:
    """Inboxes under `root`: root/LIST/git/N.git, each message one commit."""

    root: Path
    count: dict[str, int] = field(default_factory=dict)  # messages per list so far

    def epoch(self, list_name: str, number: int) -> Path:
        return self.root / list_name / "git" / f"{number}.git"

    def add_epoch(self, list_name: str, messages: int) -> Path:
        """A new epoch after the list's last, holding `messages` new messages."""
        inbox = self.root / list_name / "git"
        number = len(list(inbox.glob("*.git"))) if inbox.is_dir() else 0
        git_dir = self.epoch(list_name, number)
        subprocess.run(
            ["git", "init", "-q", "--bare", "--initial-branch=master", str(git_dir)],
            check=True,
        )
        self.add(list_name, number, messages)
        return git_dir

    def add(self, list_name: str, number: int, messages: int) -> None:
        """`messages` more messages in epoch `number`, one commit each."""
        git_dir = self.epoch(list_name, number)
        last = (
            _git(git_dir, "rev-parse", "--verify", "-q", "HEAD")
            if _has_head(git_dir)
            else ""
        )
        for _ in range(messages):
            serial = self.count.get(list_name, 0)
            self.count[list_name] = serial + 1
            blob = _git(
                git_dir, "hash-object", "-w", "--stdin", data=mail(list_name, serial)
            )
            tree = _git(git_dir, "mktree", data=f"100644 blob {blob}\tm\n".encode())
            parents = ["-p", last] if last else []
            last = _git(git_dir, "commit-tree", tree, *parents, "-m", "m", when=serial)
        _git(git_dir, "update-ref", "refs/heads/master", last)
        _git(git_dir, "update-server-info")  # the dumb protocol's refs and packs
        self.write_manifest(list_name)

    def write_manifest(self, list_name: str) -> None:
        """LIST/manifest.js.gz as public-inbox serves it (grokmirror's format)."""
        inbox = self.root / list_name
        manifest = {
            f"/{list_name}/git/{git_dir.name}": {
                "fingerprint": hashlib.sha1(_show_ref(git_dir)).hexdigest(),
                "description": f"{list_name} epoch",
            }
            for git_dir in sorted((inbox / "git").glob("*.git"))
        }
        (inbox / "manifest.js.gz").write_bytes(
            gzip.compress(json.dumps(manifest).encode(), mtime=0)
        )


def _has_head(git_dir: Path) -> bool:
    done = subprocess.run(
        ["git", f"--git-dir={git_dir}", "rev-parse", "--verify", "-q", "HEAD"],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


def _show_ref(git_dir: Path) -> bytes:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", "show-ref"], capture_output=True, check=False
    ).stdout


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass  # no request log in the test output


class _Threaded(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class Server:
    """A site served on 127.0.0.1: smart (http-backend) or static (dumb) HTTP."""

    def __init__(
        self, site: Site, *, smart: bool = True, manifest: bool = True
    ) -> None:
        self.site = site
        self.smart = smart
        self.manifest = manifest
        self.port = 0
        self.drop_after: int | None = None  # cut the Nth pack response short
        self.requests: list[str] = []
        self._packs = 0
        self._server: _Threaded | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Server:
        server = make_server(
            "127.0.0.1",
            self.port,
            self._app,
            server_class=_Threaded,
            handler_class=_Quiet,
        )
        self.port = server.server_address[1]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        with self._lock:
            if self._server is not None:
                self._server.shutdown()
                self._server.server_close()
                self._server = None

    def wait_stopped(self, timeout: float = 10.0) -> None:
        """Until a drop_after has stopped the server (its listener is closed)."""
        if self._thread is not None:
            self._thread.join(timeout)
        self.stop()

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _app(
        self, environ: dict[str, Any], start_response: StartResponse
    ) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "/")
        self.requests.append(path)
        if self.smart:
            short = _SHORT.match(path)
            if short:
                path = f"/{short[1]}/git/{short[2]}.git{short[3]}"
            if _GIT_PATH.search(path) and ".git/" in path:
                return self._backend(environ, path, start_response)
        return self._static(path, start_response)

    def _static(self, path: str, start_response: StartResponse) -> Iterable[bytes]:
        file = (self.site.root / path.lstrip("/")).resolve()
        inside = file.is_relative_to(self.site.root.resolve())
        if not self.manifest and file.name == "manifest.js.gz":
            inside = False
        if file.is_dir() and inside:
            start_response("200 OK", [("Content-Type", "text/html")])
            return [b"<html>an inbox</html>"]
        if not inside or not file.is_file():
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not found\n"]
        data = file.read_bytes()
        start_response("200 OK", [("Content-Length", str(len(data)))])
        return [data]

    def _backend(
        self, environ: dict[str, Any], path: str, start_response: StartResponse
    ) -> Iterable[bytes]:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        cgi = {
            key: value
            for key, value in environ.items()
            if key.startswith("HTTP_") and isinstance(value, str)
        }
        cgi |= {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(self.site.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": path,
            "QUERY_STRING": environ.get("QUERY_STRING", ""),
            "REQUEST_METHOD": environ.get("REQUEST_METHOD", "GET"),
            "CONTENT_TYPE": environ.get("CONTENT_TYPE", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": "127.0.0.1",
        }
        done = subprocess.run(
            ["git", "http-backend"],
            input=body,
            env=cgi,
            capture_output=True,
            check=False,
        )
        head, _, data = done.stdout.partition(b"\r\n\r\n")
        headers = [
            tuple(line.split(": ", 1))
            for line in head.decode("latin-1").split("\r\n")
            if ": " in line
        ]
        status = next((value for name, value in headers if name == "Status"), "200 OK")
        kept = [(name, value) for name, value in headers if name != "Status"]
        if path.endswith("/git-upload-pack") and b"PACK" in data:
            self._packs += 1  # a response that carries a pack, not one listing refs
            if self.drop_after is not None and self._packs >= self.drop_after:
                return self._dropped(kept, data, start_response)
        start_response(status, kept)
        return [data]

    def _dropped(
        self, headers: list[tuple[str, str]], data: bytes, start_response: StartResponse
    ) -> Iterator[bytes]:
        """Half the pack, then the connection closed and the server stopped."""
        self.drop_after = None
        start_response("200 OK", headers)
        yield data[: len(data) // 2]
        threading.Thread(target=self.stop, daemon=True).start()
        raise ConnectionAbortedError("the server dies mid-clone")


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then closed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
