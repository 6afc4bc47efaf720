"""Public-inbox inboxes on the web: their URLs, list names and manifests.

Owns deciding whether an argument is an inbox URL, refusing any URL that could reach
more than the inbox it names (nothing fetched is trusted, nothing given is either),
naming the inbox's list and mirror directory from the URL alone, and reading the
epochs an inbox's `manifest.js.gz` lists. It never runs git: cloning and fetching
are e2g.git.mirror's; api.mirrors joins the two.

A URL is accepted only when it is printable ASCII without spaces, its scheme is
http, https or file, an http(s) URL names a host (letters, digits, dots, dashes, or a
bracketed IPv6 address) and no user or password, it has no query or fragment, and
every path component is a plain name: no "." or "..", no leading "-" (so nothing git
or a shell could read as an option), no percent-escapes. The list name is the last
component ("https://lore.kernel.org/io-uring/" -> "io-uring"); an epoch's own URL
(".../io-uring/0", ".../io-uring/git/0.git") is taken as its inbox's.

The manifest is grokmirror's format, which public-inbox serves per inbox: gzipped JSON
{"/io-uring/git/0.git": {"fingerprint": "<sha1 of `git show-ref`>", ...}, ...}.
"""

from __future__ import annotations

import json
import logging
import re
import urllib.error
import zlib
from pathlib import Path
from typing import IO, NamedTuple
from urllib.parse import SplitResult, urlsplit

from e2g.errors import MirrorError

log = logging.getLogger(__name__)

SCHEMES = ("http", "https", "file")
MANIFEST = "manifest.js.gz"
# A per-inbox manifest is a few hundred bytes an epoch; this bounds a hostile one.
MAX_MANIFEST = 16 << 20
# LKML, the largest inbox, has 19 epochs: a manifest naming epoch 5000 is not to be
# believed, nor made to cost thousands of clones.
MAX_EPOCHS = 1000
# "scheme://", or git's "transport::address" (ext::, fd::), which is refused.
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)(?:://|::)")
_HOST = re.compile(r"[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?")
_IPV6 = re.compile(r"[0-9a-f:.]{2,45}")
_COMPONENT = re.compile(r"[A-Za-z0-9_~+@=,][A-Za-z0-9_~+@=,.-]{0,254}")
_LIST = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,99}")
_EPOCH_KEY = re.compile(r"(?:^|/)git/(\d{1,6})\.git/?$")
_FINGERPRINT = re.compile(r"[0-9a-f]{40}")


class InboxUrl(NamedTuple):
    """A validated inbox URL; `url` is normalised and ends with "/"."""

    url: str
    scheme: str
    host: str  # "host" or "host:port"; "" for file://
    list_name: str

    @property
    def host_dir(self) -> str:
        """The mirror directory's name for the host: "lore.kernel.org",
        "127.0.0.1_8080" (a colon would be awkward in paths), "file" for file://."""
        if not self.host:
            return "file"
        return self.host.replace(":", "_").replace("[", "").replace("]", "")

    def epoch_url(self, number: int, *, short: bool) -> str:
        """Where epoch `number` is cloned from: public-inbox's "LIST/0" (short),
        or "LIST/git/0.git", the layout of a directory served as it is on disk."""
        return f"{self.url}{number}" if short else f"{self.url}git/{number}.git"


def is_url(text: str) -> bool:
    """Whether a command-line argument is meant as a URL ("scheme://...")."""
    return _SCHEME.match(text) is not None


def parse_inbox_url(text: str) -> InboxUrl:
    """The inbox `text` names, or MirrorError saying what is wrong with it."""
    prefix = _SCHEME.match(text)
    if prefix is None or prefix[1].lower() not in SCHEMES:
        named = f"scheme {prefix[1]!r}" if prefix else "no scheme"
        raise MirrorError(
            f"invalid URL {text!r}: {named}; give an http, https or file URL"
        )
    if not text.isascii() or not text.isprintable() or " " in text:
        raise MirrorError(
            f"invalid URL {text!r}: spaces, control or non-ASCII characters "
            "(give the inbox's plain URL)"
        )
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if parts.query or parts.fragment or "?" in text or "#" in text:
        raise MirrorError(f"invalid URL {text}: an inbox URL has no ?query or #anchor")
    host = _host(text, scheme, parts)
    names = _components(text, parts.path)
    if not names or _LIST.fullmatch(names[-1]) is None:
        raise MirrorError(
            f"invalid URL {text}: no list name at the end of its path "
            "(expected https://HOST/LIST/, as lore.kernel.org/io-uring/)"
        )
    url = f"{scheme}://{host}/{'/'.join(names)}/"
    return InboxUrl(url=url, scheme=scheme, host=host, list_name=names[-1])


def _host(text: str, scheme: str, parts: SplitResult) -> str:
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise MirrorError(
                f"invalid URL {text}: a file:// URL names no host (file:///path)"
            )
        return ""
    if "@" in parts.netloc:
        raise MirrorError(
            f"invalid URL {text}: no user or password in an inbox URL; "
            "public archives need none"
        )
    try:
        port = parts.port
    except ValueError:
        raise MirrorError(f"invalid URL {text}: the port is not a number") from None
    name = parts.hostname or ""
    host = f"[{name}]" if ":" in name else name
    valid = _IPV6.fullmatch(name) if ":" in name else _HOST.fullmatch(name)
    if valid is None:
        raise MirrorError(f"invalid URL {text}: {parts.netloc!r} is not a host name")
    return host if port is None else f"{host}:{port}"


def _components(text: str, path: str) -> list[str]:
    """The path's names, each checked; an epoch's own URL ends at its inbox."""
    names = [name for name in path.split("/") if name]
    for name in names:
        if name in (".", "..") or _COMPONENT.fullmatch(name) is None:
            raise MirrorError(
                f"invalid URL {text}: path component {name!r} is not a plain name "
                "(no leading '-', no '..', no %-escapes)"
            )
    if len(names) >= 3 and names[-2] == "git" and re.fullmatch(r"\d+\.git", names[-1]):
        names = names[:-2]
    elif len(names) >= 2 and names[-1].isdigit():
        names = names[:-1]
    return names


def parse_manifest(data: bytes) -> dict[int, str | None]:
    """Epoch number -> fingerprint (None when absent) from a manifest's JSON."""
    try:
        manifest = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return {}
    if not isinstance(manifest, dict):
        return {}
    epochs: dict[int, str | None] = {}
    for key, entry in manifest.items():
        match = _EPOCH_KEY.search(key) if isinstance(key, str) else None
        if match is None or int(match[1]) >= MAX_EPOCHS:
            continue
        value = entry.get("fingerprint") if isinstance(entry, dict) else None
        fingerprint = value if isinstance(value, str) else None
        if fingerprint is not None and _FINGERPRINT.fullmatch(fingerprint) is None:
            fingerprint = None
        epochs[int(match[1])] = fingerprint
    return epochs


def read_manifest(inbox: InboxUrl, *, timeout: float) -> dict[int, str | None] | None:
    """The epochs the inbox's manifest lists, or None when it serves none (a 404, an
    error page, a manifest naming no epoch): then the caller probes for epochs.

    Raises MirrorError when the host cannot be reached at all."""
    location = inbox.url + MANIFEST
    try:
        data = _download(location, timeout=timeout)
    except urllib.error.HTTPError as error:
        log.info("%s: HTTP %s; probing for epochs instead", location, error.code)
        return None
    except FileNotFoundError:
        return None
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", None) or error
        raise MirrorError(
            f"cannot reach {inbox.url}: {reason}; check the URL and the network"
        ) from None
    if data is None:
        return None
    epochs = parse_manifest(data)
    return epochs or None


def is_missing(inbox: InboxUrl, *, timeout: float) -> bool:
    """Whether the server answers 404 for the inbox's own page (a wrong list name),
    rather than serving something that is not a public-inbox."""
    if inbox.scheme == "file":
        return not Path(urlsplit(inbox.url).path).is_dir()
    try:
        with _open(inbox.url, timeout=timeout):
            return False
    except urllib.error.HTTPError as error:
        return error.code in (404, 410)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _download(location: str, *, timeout: float) -> bytes | None:
    """The manifest's JSON bytes, or None when it is not gzipped JSON."""
    if location.startswith("file://"):
        with Path(urlsplit(location).path).open("rb") as stream:
            return _gunzip(stream)
    with _open(location, timeout=timeout) as response:
        return _gunzip(response)


def _open(location: str, *, timeout: float) -> IO[bytes]:
    import urllib.request  # here: `e2g ingest PATH` pays nothing for http (20 ms)

    class SameSchemes(urllib.request.HTTPRedirectHandler):
        """Follow a redirect only to http(s): never to ftp or a local file."""

        def redirect_request(
            self,
            req: urllib.request.Request,
            fp: IO[bytes],
            code: int,
            msg: str,
            headers: object,
            newurl: str,
        ) -> urllib.request.Request | None:
            if urlsplit(newurl).scheme.lower() not in ("http", "https"):
                raise urllib.error.HTTPError(
                    newurl,
                    code,
                    "redirect refused",
                    None,  # type: ignore[arg-type]
                    fp,
                )
            return super().redirect_request(req, fp, code, msg, headers, newurl)  # type: ignore[arg-type]

    opener = urllib.request.build_opener(SameSchemes())
    request = urllib.request.Request(location, headers={"User-Agent": "e2g"})
    response: IO[bytes] = opener.open(request, timeout=timeout)
    return response


def _gunzip(stream: IO[bytes]) -> bytes | None:
    compressed = stream.read(MAX_MANIFEST + 1)
    if len(compressed) > MAX_MANIFEST:
        return None
    try:
        # Bounded output: a small gzip bomb must not fill the memory.
        data = zlib.decompressobj(wbits=31).decompress(compressed, MAX_MANIFEST + 1)
    except zlib.error:
        return None  # an HTML page served for any path, say
    return data if len(data) <= MAX_MANIFEST else None
