"""Shared fixtures: mail builders, settings in tmp_path, the shared corpus, sample data."""

from __future__ import annotations

import sqlite3
import subprocess
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest

from e2g import config
from e2g.index.store import Store
from e2g.model.stored import StoredMessage

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample-mbox"
CORPUS = ROOT.parent / "shared" / "corpus"
BASE_DATE = datetime(2021, 3, 1, 12, 0, tzinfo=UTC)


def corpus_path(*parts: str) -> Path:
    """A path in ../shared/corpus, or a clean skip when the corpus is absent."""
    path = CORPUS.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared corpus not available: {path}")
    return path


def mail(
    number: int,
    *,
    subject: str | None = None,
    body: str = "Hello.\n",
    sender: str = "Alice Example <alice@example.org>",
    list_id: str = "frob-devel.lists.example.org",
    in_reply_to: str | None = None,
    message_id: str | None = None,
    date: datetime | None = None,
    extra: Sequence[str] = (),
) -> bytes:
    """One RFC 822 message as bytes, with an mbox 'From ' line."""
    when = date or BASE_DATE + timedelta(minutes=number)
    mid = message_id or f"msg{number}@example.org"
    headers = [
        f"From alice@example.org {when:%a %b %d %H:%M:%S %Y}",
        f"From: {sender}",
        f"Subject: {subject or f'message {number}'}",
        f"Date: {format_datetime(when)}",
        f"Message-ID: <{mid}>",
        f"List-Id: <{list_id}>",
        *(
            [f"In-Reply-To: <{in_reply_to}>", f"References: <{in_reply_to}>"]
            if in_reply_to
            else []
        ),
        *extra,
    ]
    return ("\n".join(headers) + "\n\n" + body.rstrip("\n") + "\n\n").encode()


PATCH_BODY = """Fix the thing.

Signed-off-by: Alice Example <alice@example.org>
---
 mm/frob.c | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/mm/frob.c b/mm/frob.c
index 1111111..2222222 100644
--- a/mm/frob.c
+++ b/mm/frob.c
@@ -1,3 +1,3 @@
 int frob(void)
-	return {old};
+	return {new};
 }}
--
2.39.0
"""


def patch_body(number: int) -> str:
    return PATCH_BODY.format(old=number, new=number + 1)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite tests/data/golden/*.json from the parser's current output",
    )


@pytest.fixture
def settings(tmp_path: Path) -> config.Settings:
    return config.resolve(data_dir=tmp_path / "data", env={}, home=tmp_path / "home")


@pytest.fixture
def write_mbox(tmp_path: Path) -> Callable[[str, Sequence[bytes]], Path]:
    def write(name: str, messages: Sequence[bytes]) -> Path:
        path = tmp_path / name
        path.write_bytes(b"".join(messages))
        return path

    return write


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "commit.gpgsign=false", *args],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout


def clone(source: Path, target: Path, *options: str) -> Path:
    """`git clone -q OPTIONS file://SOURCE TARGET` (file://, so that --depth applies)."""
    git(target.parent, "clone", "-q", *options, f"file://{source}", str(target))
    return target


def sample_repo(target: Path) -> Path:
    """A clone of the sample repository (sample-mbox/sample-repo.bundle) at `target`."""
    subprocess.run(
        ["git", "clone", "-q", str(SAMPLE / "sample-repo.bundle"), str(target)],
        check=True,
        capture_output=True,
    )
    return target


# Every archive of the bundled sample, as `e2g ingest` takes them.
SAMPLE_ARCHIVES = (
    SAMPLE / "frob-devel.mbox",
    SAMPLE / "frob-net.mbox.gz",
    SAMPLE / "pipermail",
)


def sample_store(root: Path) -> tuple[config.Settings, Path]:
    """Settings of a data dir under `root` holding all the sample's archives, and a
    clone of the sample repository (not matched)."""
    from e2g.api.core import ingest

    repo = sample_repo(root / "repo")
    settings = config.resolve(data_dir=root / "data", env={}, home=root)
    ingest(settings, [str(path) for path in SAMPLE_ARCHIVES], workers=1)
    return settings, repo


def commit_object(repo: Path, message: bytes, *, identity: bytes) -> str:
    """A commit of the index's tree on HEAD with `message` bytes as they are, written
    as an object (git commit would re-encode a message that is not UTF-8); HEAD
    moves to it. `identity` is "Name <email> epoch offset", author and committer."""

    def run(*args: str, stdin: bytes | None = None) -> str:
        return (
            subprocess.run(
                ["git", "-C", str(repo), *args],
                input=stdin,
                capture_output=True,
                check=True,
            )
            .stdout.decode()
            .strip()
        )

    tree, parent = run("write-tree"), run("rev-parse", "HEAD")
    body = b"tree %s\nparent %s\nauthor %s\ncommitter %s\n\n%s" % (
        tree.encode(),
        parent.encode(),
        identity,
        identity,
        message,
    )
    sha = run("hash-object", "-t", "commit", "-w", "--stdin", stdin=body)
    run("update-ref", "HEAD", sha)
    return sha


def store_rows(store: Path, table: str = "messages") -> int:
    """Rows of `table` (messages, or sightings: one per message per list) committed to
    the store at `store`, read beside a running ingest (0 before the store exists or
    while it cannot be read)."""
    assert table in ("messages", "sightings")
    try:
        connection = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=1)
        try:
            return int(
                connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            )
        finally:
            connection.close()
    except sqlite3.Error:
        return 0


def store_sql(store: Path, query: str, parameters: Sequence[object] = ()) -> list[Any]:
    """Rows of `query` over the store file at `store`, asked of SQLite directly: tests
    check the store's named queries against plain SQL (e2g itself has no other way
    to its tables)."""
    connection = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        return connection.execute(query, parameters).fetchall()
    finally:
        connection.close()


def stored_where(
    store: Store, where: str, parameters: Sequence[object] = (), suffix: str = ""
) -> list[StoredMessage]:
    """The stored messages a WHERE clause finds, in the order the SQL gives."""
    query = f"SELECT seq FROM messages WHERE {where} {suffix}"
    seqs = [int(seq) for (seq,) in store_sql(store.path, query, parameters)]
    found = {message.seq: message for message in store.by_seqs(seqs)}
    return [found[seq] for seq in seqs]


def file_tokens(
    settings: Any, repo: Any, head: str, path: str, **options: Any
) -> tuple[Any, Any]:
    """e2g.api.tokens.token_origins of the committed `path` at `head`, lexed as its
    name says (`options`: token_origins's own)."""
    from e2g.api.tokens import token_origins
    from e2g.tokens.lex import lexer_for

    return token_origins(
        settings,
        repo,
        path,
        head,
        lexer_for(path),
        text=repo.file_text(head, path),
        contents=None,
        **options,
    )
