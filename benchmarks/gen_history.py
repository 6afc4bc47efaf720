"""A deterministic mailing-list archive built from a real git history, with ground truth.

Every non-merge commit of the range (oldest first) is posted the way `git send-email`
posts it: its real author, subject, message and diff, in a `[PATCH vN k/n]` mail.
Around it, drawn from one seeded `random.Random`:

- series: consecutive commits by one author within a day form a series of up to 8
  patches, most with a cover letter, the patches threaded under it;
- earlier versions: some commits were first posted as v1 (and v2) with one added line
  edited, so their patch-id differs from the commit's;
- resends: a few final versions are posted twice (`[PATCH RESEND]`);
- replies that quote their parent and sometimes add Reviewed-by/Acked-by/Tested-by,
  some replies to replies;
- chatter: bug reports and questions with replies (gen_archive's `discussion`), dated
  among the patches, enough of them to reach --count messages.

Commits with an empty diff or a diff over MAX_DIFF bytes are not posted (lists do not
carry them). The ground truth (`OUT.truth.jsonl`) has one line per posted commit:
`{"commit", "final": [Message-IDs of the applied version and its resends],
"earlier": [Message-IDs of earlier versions]}`.

The same repository, range, seed and count give the same bytes. Messages stream to
disk; only one series is held in memory.

    python benchmarks/gen_history.py OUT.mbox --repo REPO [--count N] [--seed 1] [REV]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from email.header import Header
from email.utils import format_datetime, formataddr
from pathlib import Path
from typing import BinaryIO

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gen_archive  # noqa: E402

LIST_ID = "git.vger.kernel.org"
LIST_ADDRESS = "git@vger.kernel.org"
MAX_DIFF = 256 * 1024  # vger rejects larger mail
MAX_SERIES = 8
SERIES_GAP = timedelta(days=1)
EARLIER = 0.35  # share of commits first posted as an earlier version
EARLIER_TWICE = 0.15  # ... of which also as a second earlier version
RESEND = 0.03
COVER = 0.8  # share of series of two or more with a cover letter
REPLIES = (0, 0, 1, 1, 1, 2, 2, 3, 4)  # replies per posting, drawn uniformly
FAMILY_MESSAGES = 3.1  # messages one commit brings on average, measured on git.git
RECORD = b"\x00"
FIELD = b"\x1f"
DIFF_START = b"\x1e"


@dataclass(slots=True)
class Commit:
    sha: str
    name: str
    email: str
    authored: datetime
    committed: datetime
    subject: str
    body: str
    diff: bytes


@dataclass(slots=True)
class Post:
    """One mail: headers' facts and body bytes."""

    name: str
    email: str
    subject: str
    message_id: str
    date: datetime
    body: bytes
    parent: Post | None = None
    references: tuple[str, ...] = ()
    git: bool = False


@dataclass(slots=True)
class Truth:
    commit: str
    final: list[str] = field(default_factory=list)
    earlier: list[str] = field(default_factory=list)


def commits(repo: Path, revs: list[str]) -> Iterator[Commit]:
    """The range's non-merge commits, oldest first, with their diffs (one git log)."""
    command = [
        "git",
        "-C",
        str(repo),
        "log",
        "--reverse",
        "--no-merges",
        "--no-color",
        "--no-renames",
        "-p",
        "--format=%x00%H%x1f%an%x1f%ae%x1f%at%x1f%ct%x1f%s%x1f%b%x1e",
        *(revs or ["HEAD"]),
    ]
    with subprocess.Popen(command, stdout=subprocess.PIPE) as git:
        assert git.stdout is not None
        pending = b""
        while chunk := git.stdout.read(1 << 20):
            pending += chunk
            *records, pending = pending.split(RECORD)
            for record in records:
                if record:
                    yield _commit(record)
        if pending:
            yield _commit(pending)
    if git.returncode:
        raise SystemExit(f"gen_history: git log exited {git.returncode}")


def _commit(record: bytes) -> Commit:
    head, _, diff = record.partition(DIFF_START)
    sha, name, email, authored, committed, subject, body = head.split(FIELD, 6)
    text = lambda raw: raw.decode("utf-8", "replace")  # noqa: E731
    return Commit(
        text(sha),
        text(name),
        text(email),
        datetime.fromtimestamp(int(authored), UTC),
        datetime.fromtimestamp(int(committed), UTC),
        text(subject),
        text(body).strip("\n"),
        diff.strip(b"\n") + b"\n" if diff.strip() else b"",
    )


class History:
    """The archive's state: the random stream, serial numbers and recent people."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)
        self.chatter = gen_archive.Generator(seed + 1)
        self.serial = 0
        self.people: list[tuple[str, str]] = []

    def message_id(self, email: str, when: datetime, part: int) -> str:
        self.serial += 1
        return f"{when.strftime('%Y%m%d%H%M%S')}.{self.serial}-{part}-{email}"

    def reply_id(self, email: str) -> str:
        self.serial += 1
        token = hashlib.sha1(f"r{self.serial}".encode()).hexdigest()[:16]
        return f"{token}@{email.rpartition('@')[2] or 'example.org'}"

    def meet(self, name: str, email: str) -> None:
        if (name, email) not in self.people[-64:]:
            self.people.append((name, email))
            del self.people[:-400]

    def someone(self) -> tuple[str, str]:
        return self.random.choice(self.people)


def series_of(stream: Iterator[Commit]) -> Iterator[list[Commit]]:
    """Consecutive postable commits by one author, close in time, as one series."""
    current: list[Commit] = []
    for commit in stream:
        if not commit.diff or len(commit.diff) > MAX_DIFF:
            continue
        if current and (
            commit.email != current[-1].email
            or commit.authored - current[-1].authored > SERIES_GAP
            or len(current) == MAX_SERIES
        ):
            yield current
            current = []
        current.append(commit)
    if current:
        yield current


def edited(diff: bytes) -> bytes:
    """The diff with its first added line changed: another patch-id, same shape."""
    lines = diff.split(b"\n")
    for number, line in enumerate(lines):
        if line.startswith(b"+") and not line.startswith(b"+++"):
            lines[number] = line + b" /* earlier version */"
            return b"\n".join(lines)
    return diff


def tag(version: int, part: int, total: int, resend: bool = False) -> str:
    words = ["PATCH"]
    if resend:
        words.append("RESEND")
    if version > 1:
        words.append(f"v{version}")
    if total > 1:
        words.append(f"{part}/{total}")
    return "[" + " ".join(words) + "]"


def patch_body(commit: Commit, diff: bytes) -> bytes:
    message = f"{commit.body}\n" if commit.body else ""
    return (
        message.encode("utf-8") + b"---\n" + diff + b"-- \n2.43.0\n"
        if message
        else b"---\n" + diff + b"-- \n2.43.0\n"
    )


def post_series(
    history: History, commits_: list[Commit], version: int, when: datetime
) -> list[Post]:
    """One version of a series: a cover letter (mostly) and its patches, threaded."""
    rnd = history.random
    first = commits_[0]
    total = len(commits_)
    posts: list[Post] = []
    cover: Post | None = None
    if total > 1 and rnd.random() < COVER:
        words = " ".join(c.subject for c in commits_[:2])[:60]
        cover = Post(
            first.name,
            first.email,
            f"{tag(version, 0, total)} {words}",
            history.message_id(first.email, when, 0),
            when,
            (
                f"This series has {total} patches.\n\n"
                + "\n".join(f"  {c.subject}" for c in commits_)
                + "\n\n-- \n2.43.0\n"
            ).encode("utf-8"),
            git=True,
        )
        posts.append(cover)
    for part, commit in enumerate(commits_, start=1):
        moment = when + timedelta(seconds=part)
        diff = commit.diff if version == 0 else edited(commit.diff)
        anchor = cover or (posts[0] if posts else None)
        posts.append(
            Post(
                commit.name,
                commit.email,
                f"{tag(max(version, 1), part, total)} {commit.subject}",
                history.message_id(commit.email, moment, part),
                moment,
                patch_body(commit, diff),
                anchor,
                (anchor.message_id,) if anchor else (),
                git=True,
            )
        )
    return posts


def replies(history: History, posts: list[Post]) -> Iterator[Post]:
    rnd = history.random
    for post in posts:
        parent = post
        for _ in range(rnd.choice(REPLIES)):
            name, email = history.someone()
            when = parent.date + timedelta(minutes=rnd.randint(5, 2000))
            quoted = b"\n".join(
                b"> " + line for line in parent.body.split(b"\n")[: rnd.randint(4, 20)]
            )
            text = f"\n\n{history.chatter.paragraph(rnd.randint(1, 3))}\n"
            if post.git and rnd.random() < 0.4:
                kind = rnd.choice(("Reviewed-by", "Acked-by", "Tested-by"))
                text += f"\n{kind}: {formataddr((name, email))}\n"
            subject = parent.subject
            reply = Post(
                name,
                email,
                subject if subject.startswith("Re: ") else f"Re: {subject}",
                history.reply_id(email),
                when,
                f"On {format_datetime(parent.date)}, {parent.name} wrote:\n".encode()
                + quoted
                + text.encode("utf-8"),
                parent,
                (*parent.references, parent.message_id)[-8:],
            )
            yield reply
            if rnd.random() < 0.3:
                parent = reply


def family(history: History, commits_: list[Commit]) -> Iterator[Post | Truth]:
    """Every version of one series, their replies, and the truth of each commit."""
    rnd = history.random
    for commit in commits_:
        history.meet(commit.name, commit.email)
    truths = {c.sha: Truth(c.sha) for c in commits_}
    last = max(c.authored for c in commits_)
    landed = max(min(c.committed for c in commits_), last)
    earlier = 0
    if rnd.random() < EARLIER:
        earlier = 2 if rnd.random() < EARLIER_TWICE else 1
    span = max((landed - last).total_seconds(), 60.0)
    for number in range(earlier):
        when = last + timedelta(seconds=span * (number + 1) / (earlier + 2))
        posts = post_series(history, commits_, number + 1, when)
        for post, commit in zip(posts[-len(commits_) :], commits_, strict=True):
            truths[commit.sha].earlier.append(post.message_id)
        yield from posts
        yield from replies(history, posts)
    when = last + timedelta(seconds=span * (earlier + 1) / (earlier + 2))
    final = post_series(history, commits_, 0, when)
    if earlier:  # the applied version carries its number
        for post in final:
            post.subject = post.subject.replace("[PATCH", f"[PATCH v{earlier + 1}", 1)
    for post, commit in zip(final[-len(commits_) :], commits_, strict=True):
        truths[commit.sha].final.append(post.message_id)
    yield from final
    yield from replies(history, final)
    for post, commit in zip(final[-len(commits_) :], commits_, strict=True):
        if rnd.random() < RESEND:
            again = Post(
                post.name,
                post.email,
                post.subject.replace("[PATCH", "[PATCH RESEND", 1),
                history.message_id(post.email, post.date + timedelta(days=7), 1),
                post.date + timedelta(days=7),
                post.body,
                git=True,
            )
            truths[commit.sha].final.append(again.message_id)
            yield again
    yield from truths.values()


def chatter(history: History, when: datetime) -> list[gen_archive.Mail]:
    history.chatter.clock = when
    return list(gen_archive.discussion(history.chatter))


def _header(text: str) -> str:
    return text if text.isascii() else Header(text, "utf-8").encode()


def _address(name: str, email: str) -> str:
    return formataddr((name, email), charset="utf-8")


def render(history: History, post: Post) -> bytes:
    headers = [
        f"From {post.email} {post.date.strftime('%a %b %d %H:%M:%S %Y')}",
        f"From: {_address(post.name, post.email)}",
        f"To: {LIST_ADDRESS}",
        f"Subject: {_header(post.subject)}",
        f"Date: {format_datetime(post.date)}",
        f"Message-ID: <{post.message_id}>",
    ]
    if post.parent is not None:
        headers.append(f"In-Reply-To: <{post.parent.message_id}>")
    if post.references:
        headers.append("References: " + " ".join(f"<{r}>" for r in post.references))
    if post.git:
        headers.append("X-Mailer: git-send-email 2.43.0")
    headers += [
        "MIME-Version: 1.0",
        "Content-Type: text/plain; charset=UTF-8",
        "Content-Transfer-Encoding: 8bit",
        f"List-Id: <{LIST_ID}>",
    ]
    return gen_archive.entry(headers, post.body)


def write(
    out: BinaryIO, truth: BinaryIO, repo: Path, revs: list[str], count: int, seed: int
) -> tuple[int, int]:
    """Write up to `count` messages (all the range brings when 0); return messages
    and bytes written."""
    history = History(seed)
    total = int(
        subprocess.run(
            ["git", "-C", str(repo), "rev-list", "--count", "--no-merges"]
            + (revs or ["HEAD"]),
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    # chatter messages per commit, so that the whole range reaches `count`
    extra = max(0.0, count / max(total, 1) - FAMILY_MESSAGES) if count else 0.0
    written = messages = 0
    owed = 0.0
    for group in series_of(commits(repo, revs)):
        for item in family(history, group):
            if isinstance(item, Truth):
                truth.write(json.dumps(asdict(item)).encode() + b"\n")
                continue
            entry = render(history, item)
            out.write(entry)
            written, messages = written + len(entry), messages + 1
        owed += extra * len(group)
        while owed >= 1:
            for mail in chatter(history, group[-1].committed):
                entry = gen_archive.render(history.chatter, mail)
                out.write(entry)
                written, messages, owed = written + len(entry), messages + 1, owed - 1
        if count and messages >= count:
            break
    return messages, written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="mbox file to write")
    parser.add_argument("revs", nargs="*", help="revision range (default HEAD)")
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument(
        "--count", type=int, default=0, help="about this many messages (0: the range)"
    )
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    truth_path = args.out.with_suffix(".truth.jsonl")
    with (
        args.out.open("wb", buffering=1 << 20) as out,
        truth_path.open("wb") as truth,
    ):
        messages, written = write(
            out, truth, args.repo, args.revs, args.count, args.seed
        )
    print(f"{messages} messages, {written:,} bytes -> {args.out} (+ {truth_path.name})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
