"""Mirroring public-inbox epochs with git: ls-remote, clone --mirror, fetch, show-ref.

Owns every git invocation that talks to a remote, and the rules that make a URL
from the network harmless to git: only the URL's own scheme is allowed
(`protocol.allow=never` then `protocol.<scheme>.allow=always`; an http URL may be
redirected to https, never the other way), `--end-of-options` stands before every
URL, no hook, template, credential helper or password prompt runs, and a transfer
slower than 1 KB/s for a minute is given up. URLs arrive validated
(e2g.archives.inbox_url); they are checked again here, as this is where they meet
git.

A clone is made in "<N>.git.partial" beside its place and renamed into place only
when complete, so a killed clone never leaves an epoch that looks whole (a reader
takes only "<N>.git"); the next run starts that clone again. A fetch updates refs
only once its objects are in, so an interrupted fetch leaves the old epoch intact.

Used by api.mirrors; it never reads the archive (e2g.archives.public_inbox does).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from e2g.errors import MirrorError

PARTIAL = ".partial"
# ls-remote answers in milliseconds; a server that accepts and never answers must
# not hang a cron job for ever.
LS_REMOTE_SECONDS = 120
_ALLOWED = {"http": ("http", "https"), "https": ("https",), "file": ("file",)}
_SETTINGS = (
    "core.hooksPath=/dev/null",
    "credential.helper=",  # the empty value drops the user's helpers
    "http.lowSpeedLimit=1000",
    "http.lowSpeedTime=60",
)
# What git says when the server answered that there is no repository there.
_MISSING = re.compile(
    r"not found|does not appear to be a git repository|"
    r"returned error: 40[34]|HTTP 40[34]"
)
_KEPT_LINES = 20

Progress = Callable[[str], None]


def remote_refs(url: str, *, scheme: str) -> dict[str, str] | None:
    """ref -> sha the repository at `url` has (`git ls-remote`), or None when the
    server says there is none there. Raises MirrorError when it cannot be reached."""
    # Protocol v0: the refs come with the first answer, one round trip (v2 asks
    # for its capabilities first, then for the refs: two, on the server two git
    # processes each). An epoch has one or two refs, so v2's ref filtering saves
    # nothing.
    arguments = ["-c", "protocol.version=0", "ls-remote", "--refs"]
    command = _command(scheme, [*arguments, "--end-of-options", _url(url)])
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            check=False,
            env=_environment(),
            timeout=LS_REMOTE_SECONDS,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError as error:
        raise MirrorError(
            "git not found on PATH: install git to mirror inboxes"
        ) from error
    except subprocess.TimeoutExpired:
        raise MirrorError(
            f"cannot reach {url}: no answer in {LS_REMOTE_SECONDS} s"
        ) from None
    errors = done.stderr.decode("utf-8", "replace")
    if done.returncode != 0:
        if _MISSING.search(errors):
            return None
        raise MirrorError(f"cannot reach {url}: {_last_line(errors, done.returncode)}")
    return _parse_refs(done.stdout)


def local_refs(git_dir: Path) -> dict[str, str]:
    """ref -> sha of a local repository, as remote_refs() gives them."""
    return _parse_refs(_show_ref(git_dir))


def fingerprint(git_dir: Path) -> str:
    """grokmirror's fingerprint of a repository (sha1 of `git show-ref`), which
    public-inbox's manifest gives for each epoch: equal means up to date."""
    return hashlib.sha1(_show_ref(git_dir), usedforsecurity=False).hexdigest()


def clone(url: str, target: Path, *, scheme: str, progress: Progress | None) -> None:
    """`git clone --mirror url target`, through target + ".partial" (see above)."""
    partial = target.with_name(target.name + PARTIAL)
    if partial.exists():
        shutil.rmtree(partial)  # an interrupted clone: git cannot resume one
    target.parent.mkdir(parents=True, exist_ok=True)
    arguments = ["clone", "--mirror", "--template=", "--no-hardlinks"]
    arguments += _progress_option(progress)
    arguments += ["--end-of-options", _url(url), str(partial)]
    _stream(_command(scheme, arguments), url=url, progress=progress)
    partial.rename(target)


def fetch(url: str, git_dir: Path, *, scheme: str, progress: Progress | None) -> None:
    """Bring the mirror at git_dir level with `url` (every ref, pruned), from the
    URL given rather than the one in its config, which another tool may own."""
    arguments = ["-C", str(git_dir), "fetch", "--prune", "--no-write-fetch-head"]
    arguments += _progress_option(progress)
    arguments += ["--end-of-options", _url(url), "+refs/*:refs/*"]
    _stream(_command(scheme, arguments), url=url, progress=progress)


def _url(url: str) -> str:
    if url.startswith("-") or not url.isprintable() or any(c.isspace() for c in url):
        raise MirrorError(f"invalid URL {url!r}")
    return url


def _command(scheme: str, arguments: Sequence[str]) -> list[str]:
    if scheme not in _ALLOWED:
        raise MirrorError(f"scheme {scheme!r} is not http, https or file")
    allowed = [f"protocol.{name}.allow=always" for name in _ALLOWED[scheme]]
    settings = ["protocol.allow=never", *allowed, *_SETTINGS]
    return [
        "git",
        *(item for setting in settings for item in ("-c", setting)),
        *arguments,
    ]


def _environment() -> dict[str, str]:
    """The caller's environment (proxies, certificates) without any way to ask for
    a password: a cron job must fail, not wait for a terminal."""
    return {
        **os.environ,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "",  # set but empty: git then asks no program either
        "SSH_ASKPASS": "",
    }


def _progress_option(progress: Progress | None) -> list[str]:
    return ["--progress"] if progress is not None else ["--quiet"]


def _show_ref(git_dir: Path) -> bytes:
    command = ["git", f"--git-dir={git_dir}", "show-ref"]
    try:
        done = subprocess.run(command, capture_output=True, check=False)
    except FileNotFoundError as error:
        raise MirrorError(
            "git not found on PATH: install git to mirror inboxes"
        ) from error
    if done.returncode not in (0, 1):  # 1: no refs at all
        errors = done.stderr.decode("utf-8", "replace")
        raise MirrorError(
            f"cannot read {git_dir}: {_last_line(errors, done.returncode)}"
        )
    return done.stdout


def _parse_refs(output: bytes) -> dict[str, str]:
    refs: dict[str, str] = {}
    for line in output.decode("utf-8", "replace").splitlines():
        sha, _, name = line.partition("\t" if "\t" in line else " ")
        if name.startswith("refs/") and not name.endswith("^{}"):
            refs[name] = sha
    return refs


def _stream(command: list[str], *, url: str, progress: Progress | None) -> None:
    """Run git, handing each line of its progress (split at CR and LF) to
    `progress`; MirrorError with git's last words when it fails."""
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=_environment(),
        )
    except FileNotFoundError as error:
        raise MirrorError(
            "git not found on PATH: install git to mirror inboxes"
        ) from error
    assert process.stderr is not None
    kept: list[str] = []
    pending = b""
    with process:
        while chunk := os.read(process.stderr.fileno(), 65536):
            *lines, pending = re.split(rb"[\r\n]", pending + chunk)
            _forward(lines, kept, progress)
        _forward([pending], kept, progress)
    if process.returncode != 0:
        reason = _last_line("\n".join(kept), process.returncode)
        raise MirrorError(f"cannot mirror {url}: {reason}")


def _forward(lines: list[bytes], kept: list[str], progress: Progress | None) -> None:
    for raw in lines:
        line = raw.decode("utf-8", "replace").strip()
        if not line:
            continue
        kept.append(line)
        del kept[:-_KEPT_LINES]
        if progress is not None:
            progress(line)


def _last_line(errors: str, code: int) -> str:
    """git's reason, without its "fatal: " and the advice lines after it."""
    lines = [line.strip() for line in errors.splitlines() if line.strip()]
    fatal = [line for line in lines if line.startswith(("fatal:", "error:"))]
    line = (fatal or lines or [f"git exit code {code}"])[0 if fatal else -1]
    return line.removeprefix("fatal: ").removeprefix("error: ")
