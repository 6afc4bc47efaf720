"""A cross-check of two review metrics, computed from the mbox alone (issue 36).

Reads a list's mbox with Python's mailbox module (no e2g code, no store) and
recomputes, per year, e2g's definitions (e2g.api.metrics) as far as plain mail and
`git log` allow:
- first-response: per patch version (a [PATCH] mail with a diff, not a reply), hours
  to the first reply below it (or below its series' cover letter) from a sender other
  than the patch's, robots (the default `[metrics] bots`) aside;
- ignored: per patch (its versions: the same sender and subject, brackets and
  Re: stripped), no reply from another sender to any version and no commit of the
  repository with its subject, over patches posted; a patch none of whose files the
  repository ever held is left out (e2g's untracked).

    python benchmarks/metrics_check.py MBOX[.gz] --repo REPO

Its figures are printed beside nothing: compare them with `e2g metrics
first-response ignored --by year`.
"""

from __future__ import annotations

import argparse
import gzip
import mailbox
import re
import shutil
import statistics
import subprocess
import tempfile
from collections import defaultdict
from datetime import UTC, datetime
from email.utils import parseaddr, parsedate_to_datetime
from fnmatch import fnmatchcase
from pathlib import Path

BOTS = (
    "lkp@intel.com",
    "syzbot*@syzkaller.appspotmail.com",
    "patchwork-bot*@kernel.org",
    "bot@kernelci.org",
    "*-bot@*",
    "noreply@*",
)
PATCH = re.compile(r"\[[^\]]*PATCH[^\]]*\]", re.I)
PART = re.compile(r"\b(\d+)/(\d+)\b")
DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/(\S+)|^\+\+\+ b/(\S+)", re.M)


def _id(value: str | None) -> str:
    return (value or "").strip().strip("<>").strip()


def _parents(message: mailbox.mboxMessage) -> str:
    reply = re.findall(r"<([^>]+)>", str(message.get("In-Reply-To") or ""))
    if reply:
        return reply[0]
    refs = re.findall(r"<([^>]+)>", str(message.get("References") or ""))
    return refs[-1] if refs else ""


def _date(message: mailbox.mboxMessage) -> float | None:
    try:
        found = parsedate_to_datetime(str(message.get("Date")))
    except (TypeError, ValueError, IndexError):
        return None
    if found is None:
        return None
    if found.tzinfo is None:
        found = found.replace(tzinfo=UTC)
    return found.timestamp()


def _body(message: mailbox.mboxMessage) -> str:
    parts = message.walk() if message.is_multipart() else [message]
    texts = []
    for part in parts:
        if part.get_content_maintype() == "text":
            payload = part.get_payload(decode=True)
            if isinstance(payload, bytes):
                texts.append(payload.decode("utf-8", "replace"))
    return "\n".join(texts)


def _key(subject: str) -> str:
    text = re.sub(r"^\s*((re|fwd?|aw)\s*:\s*)+", "", subject, flags=re.I)
    while True:
        stripped = re.sub(r"^\s*\[[^\]]*\]\s*", "", text)
        if stripped == text:
            break
        text = stripped
    return " ".join(text.split()).casefold()


def read(path: Path) -> dict[str, dict[str, object]]:
    """Every message: sender, date, parent, subject, kind, files."""
    with tempfile.TemporaryDirectory() as work:
        plain = Path(work) / "list.mbox"
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rb") as source, plain.open("wb") as out:
            shutil.copyfileobj(source, out)
        found = {}
        for message in mailbox.mbox(plain):
            mid = _id(message.get("Message-ID"))
            if not mid or mid in found:
                continue
            subject = " ".join(str(message.get("Subject") or "").split())
            body = _body(message)
            files = [next(f for f in m if f) for m in DIFF_FILE.findall(body)]
            is_reply = bool(re.match(r"^\s*(re|aw)\s*:", subject, re.I))
            tag = PATCH.search(subject)
            part = PART.search(tag.group(0)) if tag else None
            kind = "other"
            if tag and not is_reply and part and int(part.group(1)) == 0:
                kind = "cover"
            elif tag and not is_reply and files:
                kind = "patch"
            elif is_reply or _parents(message):
                kind = "reply"
            found[mid] = {
                "sender": parseaddr(str(message.get("From") or ""))[1].lower(),
                "date": _date(message),
                "parent": _parents(message),
                "subject": subject,
                "kind": kind,
                "files": files,
            }
    return found


def _below(mails: dict[str, dict[str, object]]) -> dict[str, list[str]]:
    children: dict[str, list[str]] = defaultdict(list)
    for mid, mail in mails.items():
        if mail["parent"]:
            children[str(mail["parent"])].append(mid)
    return children


def replies(
    mails: dict[str, dict[str, object]], head: str, children: dict
) -> list[str]:  # type: ignore[type-arg]
    """The replies below `head`, not below another patch or cover letter."""
    found, todo = [], [head]
    while todo:
        for child in children.get(todo.pop(), []):
            if mails[child]["kind"] in ("patch", "cover"):
                continue
            found.append(child)
            todo.append(child)
    return found


def _covers(mails: dict[str, dict[str, object]], mail: dict[str, object]) -> list[str]:
    """The cover letter up the patch's thread (a series sent with its parts chained
    to one another, or to the cover), by the patch's sender; none for a lone patch."""
    cur, seen = str(mail["parent"]), set()
    while cur in mails and cur not in seen:  # iterative: threads come from mail
        seen.add(cur)
        if mails[cur]["kind"] == "cover" and mails[cur]["sender"] == mail["sender"]:
            return [cur]
        cur = str(mails[cur]["parent"])
    return []


def _repo(repo: Path) -> tuple[set[str], set[str]]:
    """The repository's commit subjects (case-folded) and every path it held, with
    their directories."""
    subjects = {
        " ".join(line.split()).casefold()
        for line in subprocess.run(
            ["git", "-C", str(repo), "log", "--all", "--format=%s"],
            capture_output=True,
            text=True,
            errors="replace",
            check=True,
        ).stdout.splitlines()
    }
    paths = set()
    for line in subprocess.run(
        ["git", "-C", str(repo), "log", "--all", "--name-only", "--format="],
        capture_output=True,
        text=True,
        errors="replace",
        check=True,
    ).stdout.splitlines():
        if line:
            paths.add(line)
            parts = line.split("/")
            paths.update("/".join(parts[:i]) for i in range(1, len(parts)))
    return subjects, paths


def _year(stamp: float) -> str:
    return str(datetime.fromtimestamp(stamp, UTC).year)


def _spread(values: list[float]) -> str:
    if not values:
        return "-"
    q = (
        statistics.quantiles(values, n=4, method="inclusive")
        if len(values) > 1
        else values * 3
    )
    return f"{statistics.median(values):.1f}h ({q[0]:.1f}-{q[2]:.1f})"


def main(argv: list[str] | None = None) -> int:  # noqa: C901 - one report
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mbox", type=Path)
    parser.add_argument("--repo", type=Path, required=True)
    args = parser.parse_args(argv)
    mails = read(args.mbox)
    children = _below(mails)
    subjects, paths = _repo(args.repo)
    bot = lambda address: any(fnmatchcase(address, p) for p in BOTS)  # noqa: E731

    first: dict[str, list[float | None]] = defaultdict(list)
    families: dict[tuple[str, str], dict[str, object]] = {}
    for mid, mail in mails.items():
        if mail["kind"] != "patch" or mail["date"] is None:
            continue
        heads = [mid, *_covers(mails, mail)]
        answers = [
            mails[r]
            for head in heads
            for r in replies(mails, head, children)
            if mails[r]["sender"] != mail["sender"] and not bot(str(mails[r]["sender"]))
        ]
        dates = [float(a["date"]) for a in answers if a["date"] is not None]  # type: ignore[arg-type]
        posted = float(mail["date"])  # type: ignore[arg-type]
        first[_year(posted)].append(
            max(0.0, (min(dates) - posted) / 3600) if dates else None
        )
        key = (str(mail["sender"]), _key(str(mail["subject"])))
        family = families.setdefault(
            key, {"date": posted, "answered": False, "files": set()}
        )
        family["date"] = min(float(family["date"]), posted)  # type: ignore[arg-type]
        family["answered"] = bool(family["answered"]) or bool(answers)
        family["files"].update(mail["files"])  # type: ignore[attr-defined]
    print("first-response (hours), per patch version, by year of posting")
    for year in sorted(first):
        values = [v for v in first[year] if v is not None]
        print(f"  {year}: {_spread(values)} n={len(values)}/{len(first[year])}")
    ignored: dict[str, list[bool]] = defaultdict(list)
    for (_, key), family in families.items():
        tracked = any(
            f in paths or f.rpartition("/")[0] in paths
            for f in family["files"]  # type: ignore[attr-defined]
        )
        if not tracked:
            continue
        applied = key in subjects
        ignored[_year(float(family["date"]))].append(  # type: ignore[arg-type]
            not family["answered"] and not applied
        )
    print("ignored, per patch (its versions), by year of its first posting")
    for year in sorted(ignored):
        found = ignored[year]
        print(f"  {year}: {sum(found)}/{len(found)} ({sum(found) / len(found):.0%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
