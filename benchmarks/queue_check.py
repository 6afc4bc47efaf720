"""Does the patch queue agree with the maintainers' word?

    python benchmarks/queue_check.py --data-dir DATA_DIR [--name SET] [--misses N] [--json FILE]

Reads a store whose queue is derived (the next `e2g match` or `e2g ingest` derives
it), through the store's own queries only. A reply says a patch landed when one of
its own lines (quoted lines and the "On ... wrote:" line above them are skipped)
starts with "applied", "pushed", "merged", "queued" or "picked up" (after an
optional "thanks," or "ok,"), or says "I've applied", "I have pushed", "I merged",
"has been applied", "now queued", ... (`LANDED`): the words a maintainer writes,
b4 ty's "Applied, thanks!" among them; a line that also says "not", "n't", "if",
"once", "when", "should", "will" or "can" before the word ("once it is merged")
does not count. The reply must come from someone other than the patch's sender and
in-body author.

A reply counts for the patch it sits below (its nearest patch or cover letter up
the thread, as e2g.api.queue.lifecycle reads replies): below a patch, that patch;
below a cover letter, every part of its series, or, when the reply lists parts as
b4 ty does ("[2/5] subject"), those parts only (a "(subset)" reply).

The queue agrees when the patch is `applied`, or `superseded` by a version that
was applied (the facts' superseded_applied, or the newer version's own row is
applied). `untracked` patches are counted apart: their tree is not matched, so
the queue cannot know (a kernel patch on io-uring with liburing matched); so are,
in the second share, the patches of another state (superseded, mostly) whose
paths no matched repository holds (the row's untracked reason).

Prints, per set, both shares, the misses per state, and the first N misses
(--misses, default all): the patch, its state, and the reply's sentence that says
it landed, its sender and Message-ID. --json writes every word with its verdict
(agree, miss, untracked, elsewhere).

`--sample N --seed S` prints instead, per state, N patch versions drawn at random
(random.Random(S).sample of the state's rows in Message-ID order) with what a
reader needs to judge the state without opening the thread: the files, the
applied commits' subjects, the successor (its date, version, subject and state),
the untracked reason, the replies from others (each one's first own sentences),
and, for a patch not applied, the stored commits whose subject is its title (a
commit the matcher may have missed). benchmarks/README.md ("Patch queue
accuracy") gives what was read and found.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from e2g import config
from e2g.index.store import QueueRow, Store, ThreadNode
from e2g.mail.subject import parse_subject
from e2g.model.stored import StoredMessage

_WORD = r"(?:applied|pushed|merged|queued|picked(?:\s+\w+){0,2}\s+up)"
LANDED = re.compile(
    r"^\W*(?:(?:thanks|thank you|ok|okay|great|looks good|lgtm)\W+)?"
    + _WORD
    + r"\b"
    + r"|\b(?:i|i've|i have|we|we've|we have|has been|have been|was|were|got|now)"
    + r"\s+(?:\w+\s+)?"
    + _WORD
    + r"\b",
    re.IGNORECASE,
)
NOT_LANDED = re.compile(
    r"\b(?:not|never|if|once|when|whether|should|will|would|could|can|cannot|"
    r"after|before|until|please|\w+n't)\b",
    re.IGNORECASE,
)
# "Applied 2-3", "applied patches 1 and 2": the parts a reply to a cover names.
NAMED_PARTS = re.compile(
    r"^\s*(?:patch(?:es)?\s+)?#?(\d+)(?:\s*(?:-|to)\s*(\d+))?"
    r"((?:\s*(?:,|and|&)\s*#?\d+)*)\b(?!\.\d)",
    re.IGNORECASE,
)
PART_LINE = re.compile(r"^\s*\[(?:\w+\s+)*(\d+)/(\d+)\]\s", re.MULTILINE)
_ATTRIBUTION = re.compile(r"\bwrote:\s*$|^On .*\d.*[,:]\s*$", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_HEADS = frozenset({"patch", "cover"})
_STATES = (
    "applied",
    "superseded",
    "untracked",
    "rejected",
    "not-applied",
    "reviewed",
    "under-review",
    "new",
)


def own_sentences(body: str) -> list[str]:
    """The reply's own sentences, quoted lines, the attribution above them and
    the signature left out; a paragraph's wrapped lines joined first."""
    paragraphs: list[list[str]] = [[]]
    for raw in body.splitlines():
        line = raw.strip()
        if line in ("--", "-- "):
            break
        if not line or line.startswith(">") or _ATTRIBUTION.search(line):
            paragraphs.append([])
        else:
            paragraphs[-1].append(line)
    return [
        sentence
        for paragraph in paragraphs
        if paragraph
        for sentence in _SENTENCE_END.split(" ".join(paragraph))
    ]


def landed(body: str) -> tuple[str, set[int]]:
    """The reply's own sentence that says the patch landed ("" if none), and the
    parts it names ("Applied 2-3", or b4 ty's "[2/5] subject" lines)."""
    for sentence in own_sentences(body)[:40]:  # the word is near the top
        found = LANDED.search(sentence)
        if found is None or NOT_LANDED.search(sentence[: found.start() + 1]):
            continue
        return sentence[:160], _named(sentence[found.end() :]) | listed_parts(body)
    return "", set()


def _named(rest: str) -> set[int]:
    found = NAMED_PARTS.match(rest)
    if found is None:
        return set()
    first = int(found.group(1))
    last = int(found.group(2)) if found.group(2) else first
    named = set(range(first, min(last, first + 100) + 1))
    named.update(int(number) for number in re.findall(r"\d+", found.group(3)))
    return named


def listed_parts(body: str) -> set[int]:
    """The part numbers a b4-ty-like reply lists ("[2/5] subject"), unquoted."""
    own = "\n".join(line for line in body.splitlines() if not line.startswith(">"))
    return {int(found.group(1)) for found in PART_LINE.finditer(own)}


class Word(NamedTuple):
    patch: QueueRow
    reply: str  # the reply's Message-ID
    sender: str
    line: str


class Check(NamedTuple):
    agree: list[Word]
    miss: list[Word]
    untracked: list[Word]  # state untracked
    elsewhere: list[Word]  # another state, but no matched repository holds it


def find_words(store: Store) -> Iterator[Word]:
    """Every (patch, reply) where someone else's reply says the patch landed; one
    per patch (its first such reply)."""
    rows = store.queue_all()
    by_id = {row.message_id: row for row in rows}
    by_series: dict[str, list[QueueRow]] = {}
    for row in rows:
        by_series.setdefault(row.series, []).append(row)
    messages: dict[str, StoredMessage] = {}
    for start in range(0, len(rows), 2000):
        chunk = store.by_seqs([row.seq for row in rows[start : start + 2000]])
        messages.update((message.message_id, message) for message in chunk)
    roots = sorted({message.thread_root for message in messages.values()})
    nodes: list[ThreadNode] = []
    for start in range(0, len(roots), 500):
        nodes += store.thread_nodes(roots[start : start + 500])
    parent = {node.message_id: node.parent_id for node in nodes}
    kind = {node.message_id: node.kind for node in nodes}
    seen: set[str] = set()
    for node in nodes:
        if node.kind in _HEADS:
            continue
        head = _head(node.message_id, parent, kind)
        if head is None:
            continue
        targets = _targets(head, by_id, by_series, listed=False)
        if not targets:
            continue
        senders = {
            email.lower()
            for row in targets
            if (message := messages.get(row.message_id)) is not None
            for email in (message.author_email, message.credited_email)
        }
        if node.author_email.lower() in senders:
            continue
        line, parts = landed(store.body(node.seq))
        if not line:
            continue
        if parts:
            targets = _targets(head, by_id, by_series, listed=True)
        if len(targets) == 1:
            parts = set()
        for row in targets:
            if parts and row.part not in parts:
                continue
            if row.message_id in seen:
                continue
            seen.add(row.message_id)
            yield Word(row, node.message_id, node.author_email, line)


def _head(
    message_id: str, parent: dict[str, str | None], kind: dict[str, str]
) -> str | None:
    """The nearest patch or cover letter above a reply (iterative: mail's threads)."""
    seen = {message_id}
    current = parent.get(message_id)
    while current is not None and current not in seen:
        if kind.get(current) in _HEADS:
            return current
        seen.add(current)
        current = parent.get(current)
    return None


def _targets(
    head: str,
    by_id: dict[str, QueueRow],
    by_series: dict[str, list[QueueRow]],
    *,
    listed: bool,
) -> list[QueueRow]:
    """The patches a reply below `head` speaks for: the patch, or, below a cover
    letter, its series' parts; when the reply lists parts (b4 ty threads its
    "(subset)" reply to the first part when there is no cover), the series'."""
    if head in by_id:
        row = by_id[head]
        return by_series.get(row.series, [row]) if listed else [row]
    return by_series.get(head, [])  # a cover letter: its series' parts


def check(store: Store) -> Check:
    by_id = {row.message_id: row for row in store.queue_all()}
    result = Check([], [], [], [])
    for word in find_words(store):
        row = word.patch
        if row.state == "untracked":
            result.untracked.append(word)
        elif row.state == "applied" or (
            row.state == "superseded" and _later_applied(row, by_id)
        ):
            result.agree.append(word)
        elif row.untracked:
            result.elsewhere.append(word)
        else:
            result.miss.append(word)
    return result


def _later_applied(row: QueueRow, by_id: dict[str, QueueRow]) -> bool:
    if json.loads(row.facts).get("superseded_applied"):
        return True
    seen: set[str] = set()
    later = by_id.get(row.superseded_by)
    while later is not None and later.message_id not in seen:
        if later.state == "applied":
            return True
        seen.add(later.message_id)
        later = by_id.get(later.superseded_by)
    return False


def describe(word: Word) -> dict[str, object]:
    row = word.patch
    return {
        "message_id": row.message_id,
        "state": row.state,
        "subject": row.subject,
        "superseded_by": row.superseded_by,
        "untracked": row.untracked,
        "reply": word.reply,
        "sender": word.sender,
        "line": word.line,
    }


def report(name: str, result: Check, *, misses: int, seconds: float) -> list[str]:
    agree, miss = len(result.agree), len(result.miss)
    elsewhere = len(result.elsewhere)
    lines = [
        f"{name}: {agree} of {agree + miss + elsewhere} "
        f"({_share(agree, agree + miss + elsewhere)}) agree, the untracked apart "
        f"({len(result.untracked)}); {agree} of {agree + miss} "
        f"({_share(agree, agree + miss)}) with the {elsewhere} of another state "
        f"that no matched repository holds apart too; read in {seconds:.1f} s",
        "  misses by state: "
        + ", ".join(
            f"{state} {count}"
            for state, count in sorted(
                Counter(word.patch.state for word in result.miss).items(),
                key=lambda item: _STATES.index(item[0]),
            )
        ),
    ]
    for word in result.miss[:misses]:
        row = word.patch
        lines.append(f"  {row.state:<12} <{row.message_id}> {row.subject[:90]}")
        lines.append(f"      {word.sender}: {word.line[:100]}  <{word.reply}>")
    return lines


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "-"


def sample(store: Store, *, count: int, seed: int) -> Iterator[str]:
    """The digest of `count` random patch versions per state (see the docstring)."""
    rows = sorted(store.queue_all(), key=lambda row: row.message_id)
    by_id = {row.message_id: row for row in rows}
    for state in _STATES:
        chosen = [row for row in rows if row.state == state]
        picked = random.Random(seed).sample(chosen, min(count, len(chosen)))
        yield f"## {state}: {len(picked)} of {len(chosen)}"
        for number, row in enumerate(picked, 1):
            yield f"{number:>2}. <{row.message_id}> {_day(row.date)} {row.subject[:100]}"
            yield from _digest(store, row, by_id)


def _digest(store: Store, row: QueueRow, by_id: dict[str, QueueRow]) -> Iterator[str]:
    (message,) = store.by_seqs([row.seq])
    yield f"      by {message.credited_email}; files: {', '.join(message.files[:5])}"
    facts = json.loads(row.facts)
    for commit in facts["commits"][:2]:
        info = store.stored_commits(commit["repo"], [commit["commit"]])
        subject = info[commit["commit"]].subject if commit["commit"] in info else "?"
        yield f"      commit {commit['commit'][:12]} {subject[:90]}"
    if row.superseded_by:
        later = by_id.get(row.superseded_by)
        said = (
            f"{_day(later.date)} v{later.version} {later.state}: {later.subject[:80]}"
            if later
            else "(a cover letter)"
        )
        yield f"      superseded by <{row.superseded_by}> {said}"
    if row.untracked:
        yield f"      {row.untracked[:110]}"
    others = {message.author_email.lower(), message.credited_email.lower()}
    shown = 0
    for node in store.thread_nodes([message.thread_root]):
        if node.kind in _HEADS or node.author_email.lower() in others or shown >= 4:
            continue
        if _head_of(node, store, message.message_id):
            words = " ".join(own_sentences(store.body(node.seq))[:2])[:110]
            yield f"      reply {node.author_email}: {words}"
            shown += 1
    if row.state != "applied":
        title = parse_subject(message.subject).title
        found = store.commits_with_subjects([title]).get(title, [])
        for commit in found[:2]:
            yield f"      same-title commit {commit.sha[:12]} {_day(commit.commit_date)}"


def _head_of(node: ThreadNode, store: Store, patch: str) -> bool:
    """Whether the reply sits below `patch` (its nearest patch or cover above)."""
    nodes = store.thread_nodes([node.thread_root])
    parent = {one.message_id: one.parent_id for one in nodes}
    kind = {one.message_id: one.kind for one in nodes}
    head = _head(node.message_id, parent, kind)
    return head == patch or (head is not None and kind.get(head) == "cover")


def _day(stamp: int | None) -> str:
    return "?" if stamp is None else time.strftime("%Y-%m-%d", time.gmtime(stamp))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--name", default="", help="the set's name in the report")
    parser.add_argument("--misses", type=int, default=10_000, help="misses to list")
    parser.add_argument("--json", type=Path, help="also write every word here")
    parser.add_argument("--sample", type=int, default=0, help="patches per state")
    parser.add_argument("--seed", type=int, default=35)
    args = parser.parse_args(argv)
    settings = config.resolve(data_dir=args.data_dir)
    if args.sample:
        with Store(settings.store_path) as store:
            print("\n".join(sample(store, count=args.sample, seed=args.seed)))
        return 0
    started = time.perf_counter()
    with Store(settings.store_path) as store:
        result = check(store)
    seconds = time.perf_counter() - started
    name = args.name or args.data_dir.name
    print("\n".join(report(name, result, misses=args.misses, seconds=seconds)))
    if args.json:
        with args.json.open("w", encoding="utf-8") as out:
            for verdict, words in zip(Check._fields, result, strict=True):
                for word in words:
                    out.write(json.dumps({"verdict": verdict, **describe(word)}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
