"""Web test data: a real git repo and a real ingest of mail written here, hostile mail included.

The store is built once per session by `e2g.api.ingest` on mbox bytes: two versions of
a patch made by `git format-patch` from the repo's commit, a review thread (quoted
text, a Reviewed-by, a 1970 date, a reply to a never-archived message), and hostile
messages (a <script> subject and body, a javascript: pull URL, a 1 MB header).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from e2g import config
from e2g.api import core as api
from e2g.api.match import match
from e2g.web.app import create_app

LIST = "frob-devel.lists.example.org"
DATE = "2021-03-01T10:00:00+00:00"
SCRIPT = "<script>alert(1)</script>"
BIG = 1024 * 1024


@dataclass(frozen=True)
class WebData:
    settings: config.Settings
    repo: Path
    sha: str  # the commit whose patch was posted twice
    unposted: str  # a commit no mail carried
    first: str  # the initial commit


def git(repo: Path, *args: str, date: str = DATE) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Alice Example",
        "GIT_AUTHOR_EMAIL": "alice@example.org",
        "GIT_COMMITTER_NAME": "Alice Example",
        "GIT_COMMITTER_EMAIL": "alice@example.org",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
    }
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "commit.gpgsign=false", *args],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout


def _commit(repo: Path, path: str, text: str, *message: str, date: str = DATE) -> str:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text)
    git(repo, "add", path)
    git(
        repo,
        "commit",
        "-q",
        *(part for line in message for part in ("-m", line)),
        date=date,
    )
    return git(repo, "rev-parse", "HEAD").strip()


def make_repo(repo: Path) -> tuple[str, str, str]:
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main", ".")
    first = _commit(
        repo,
        "mm/frob.c",
        "int frob(void)\n{\n\treturn 1;\n}\n",
        "mm: add frob",
        date="2021-02-01T10:00:00+00:00",
    )
    sha = _commit(
        repo,
        "mm/frob.c",
        "int frob(void)\n{\n\treturn 2;\n}\n",
        "mm: frob returns two",
        "Because two is better.",
        "Signed-off-by: Alice Example <alice@example.org>",
    )
    unposted = _commit(
        repo,
        "kernel/quiet.c",
        "void quiet(void) {}\n",
        "kernel: add a quiet helper nobody posted",
        date="2021-03-05T12:00:00+00:00",
    )
    return first, sha, unposted


def _with_headers(mail: str, *headers: str) -> bytes:
    """Insert headers after the mbox From line of `git format-patch` output."""
    from_line, rest = mail.split("\n", 1)
    return ("\n".join([from_line, *headers, rest.rstrip("\n")]) + "\n\n").encode()


def patch_mail(
    repo: Path, sha: str, *, version: int, message_id: str, date: str
) -> bytes:
    prefix = "PATCH" if version == 1 else f"PATCH v{version}"
    text = git(
        repo, "format-patch", "-1", "--stdout", f"--subject-prefix={prefix}", sha
    )
    text = "\n".join(
        f"Date: {date}" if line.startswith("Date: ") else line
        for line in text.split("\n")
    )
    return _with_headers(text, f"Message-ID: <{message_id}>", f"List-Id: <{LIST}>")


def mail(
    message_id: str,
    subject: str,
    body: str,
    *,
    sender: str = "Bob Reviewer <bob@example.org>",
    date: str = "Tue, 02 Mar 2021 09:00:00 +0000",
    reply_to: str | None = None,
    from_line_date: str = "Tue Mar  2 09:00:00 2021",
    extra: tuple[str, ...] = (),
) -> bytes:
    headers = [
        f"From bob@example.org {from_line_date}",
        f"From: {sender}",
        f"Subject: {subject}",
        f"Date: {date}",
        f"Message-ID: <{message_id}>",
        f"List-Id: <{LIST}>",
        *(
            [f"In-Reply-To: <{reply_to}>", f"References: <{reply_to}>"]
            if reply_to
            else []
        ),
        *extra,
    ]
    return ("\n".join(headers) + "\n\n" + body.rstrip("\n") + "\n\n").encode()


def review_thread() -> list[bytes]:
    review = (
        "On Mon, 1 Mar 2021, Alice Example wrote:\n"
        "> Because two is better.\n> -\treturn 1;\n> +\treturn 2;\n\n"
        "Looks right to me.\n\nReviewed-by: Bob Reviewer <bob@example.org>\n"
    )
    return [
        mail(
            "review-1@example.org",
            "Re: [PATCH v2] mm: frob returns two",
            review,
            reply_to="patch-v2@example.org",
        ),
        mail(
            "late-1@example.org",
            "Re: [PATCH v2] mm: frob returns two",
            "Thanks, applied.\n",
            sender="Carol Maintainer <carol@example.org>",
            date="Thu, 01 Jan 1970 00:00:00 +0000",
            reply_to="review-1@example.org",
            from_line_date="Wed Mar  3 08:00:00 2021",
        ),
        mail(
            "ghost-reply@example.org",
            "Re: a message nobody archived",
            "Replying to a ghost.\n",
            reply_to="never-archived@example.org",
        ),
    ]


def hostile_mail() -> list[bytes]:
    pull_body = (
        "Hi,\n\nThe following changes since commit 1234567890abcdef1234567890abcdef12345678:\n\n"
        "  frob: base (2021-03-01)\n\nare available in the Git repository at:\n\n"
        "  javascript:alert(1) main\n\nfor you to fetch changes up to x.\n\n"
        "git pull javascript:alert(document.cookie) main\n"
    )
    return [
        mail(
            "evil-1@example.org",
            f"[PATCH] {SCRIPT} frob",
            f"{SCRIPT}\n<img src=x onerror=alert(2)>\n",
            sender='"Eve & \\"q\\" onmouseover=alert(3)" <evil@example.org>',
            date='"><script>alert(4)</script>',
        ),
        mail(
            "evil-pull@example.org",
            "[GIT PULL] frob fixes",
            pull_body,
            sender="Eve <eve@example.org>",
        ),
        mail(
            "evil-big@example.org",
            "big header " + "A" * 1000,
            "A message with a 1 MB header.\n",
            extra=("X-Junk: " + "<script>" * (BIG // 8),),
        ),
    ]


def build(root: Path) -> WebData:
    repo = root / "repo"
    first, sha, unposted = make_repo(repo)
    archive = root / "frob-devel.mbox"
    archive.write_bytes(
        b"".join(
            [
                patch_mail(
                    repo,
                    sha,
                    version=1,
                    message_id="patch-v1@example.org",
                    date="Sat, 20 Feb 2021 10:00:00 +0000",
                ),
                patch_mail(
                    repo,
                    sha,
                    version=2,
                    message_id="patch-v2@example.org",
                    date="Mon, 01 Mar 2021 10:00:00 +0000",
                ),
                *review_thread(),
                *hostile_mail(),
            ]
        )
    )
    settings = config.resolve(data_dir=root / "data", env={}, home=root / "home")
    api.ingest(settings, [str(archive)], workers=1)
    match(settings, ["main"], repo=repo, jobs=1)  # stats read what match stored
    return WebData(
        settings=settings, repo=repo, sha=sha, unposted=unposted, first=first
    )


@pytest.fixture(scope="session")
def web_data(tmp_path_factory: pytest.TempPathFactory) -> WebData:
    return build(tmp_path_factory.mktemp("web"))


@pytest.fixture(scope="session")
def client(web_data: WebData) -> Iterator[TestClient]:
    app = create_app(web_data.settings, repo=web_data.repo)
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client
