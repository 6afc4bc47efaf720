"""Posting-level precision: is every posting `e2g match` returns for a commit that
commit's own (a version, resend, cross-post of its patch), or a sibling, a revert,
another commit's patch?

    python benchmarks/eval_postings.py --data-dir STORE_DIR --repo REPO [--jsonl FILE]
    python benchmarks/eval_postings.py --ablation --data-dir STORE_DIR --repo REPO \
        [--truth TRUTH.tsv] [--name SET] [--sample N --seed S] [--json FILE]

It matches the repository's history (trailers ignored, as if commits had no Link:;
`--jsonl` reads a `match --jsonl` output instead) and sorts each returned posting
that carries the patch (a patch mail, a reply quoting it, a thread whose first mail
is lost):

- proven: its `git patch-id --stable` is the commit's, its subject key is the
  commit's summary, or its date is the commit's author date (git am kept it);
- another commit's: it is the applied posting of another commit (wrong for at most
  one of the two, so precision is at most (all - these)/all);
- to read: the rest, printed with both subjects, for a person to decide.

Precision lies between proven/all and (all - another's)/all; reading the rest gives
the figure. No ground truth is needed, so any
archive and repository can be measured.

`--ablation` matches HEAD's commits dated inside the archive's dates (eval_links.py's
window; `--sample N` takes a fixed random N of them, `--seed`) in this process,
the store only read, once with every matching rule on and once with each rule of
e2g.matcher.rules off, and prints a Markdown row per configuration: the commits,
those answered (an applied posting) and of those the ones whose applied posting is
proven as above; the postings carrying the patch, proven, another's, and the
posting precision's bounds. With `--truth` (make_truth.py's TSV), over the
labelled commits whose label is a patch the store holds: posting recall (the
share of the label's family -- its patch-id's patches, its subject key's from the
same person -- that the commit's patch postings hold), commit precision and recall
(the applied posting in the label's family, eval_links.py's rule); and of the
labelled commits whose label the archive lacks, how many are answered and how many
by a mail whose parent or thread root is the label. Then every answer that differs
from the all-rules one.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import subprocess
import sys
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path

from e2g import config
from e2g.git.repo import Repo
from e2g.index.store import Store
from e2g.mail.patch import diff_lines
from e2g.mail.subject import subject_key
from e2g.matcher.batch import request_for
from e2g.matcher.cascade import Matcher
from e2g.matcher.postings import same_author
from e2g.matcher.rules import RULES, Rules
from e2g.model.stored import StoredMessage
from e2g.render import link_json

POSTING_KINDS = ("patch", "reply")
ANOTHER = "another commit's applied posting"  # a reply: a quoted patch or a lost thread's mail


def answers(data_dir: Path, repo: Path, jsonl: Path | None) -> list[dict[str, object]]:
    if jsonl is not None:
        lines = jsonl.read_text().splitlines()
    else:
        lines = subprocess.run(
            [sys.executable, "-m", "e2g", "--data-dir", str(data_dir), "match"]
            + ["-C", str(repo), "--redo", "--ignore-trailers", "--jsonl"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def commit_patch_ids(repo: Path, shas: list[str]) -> dict[str, str]:
    """`git patch-id --stable` of each commit, as git computes it."""
    shown = subprocess.run(
        ["git", "-C", str(repo), "show", "--no-color", "--format=commit %H", *shas],
        capture_output=True,
        check=True,
    ).stdout
    ids = subprocess.run(
        ["git", "patch-id", "--stable"], input=shown, capture_output=True, check=True
    ).stdout.decode()
    return {
        sha: patch_id for patch_id, sha in (line.split() for line in ids.splitlines())
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--jsonl", type=Path)
    parser.add_argument(
        "--ablation",
        action="store_true",
        help="match with every rule on, then with each rule off, and print a table",
    )
    parser.add_argument("--truth", type=Path, help="make_truth.py's TSV (--ablation)")
    parser.add_argument("--name", default="", help="the set's name in the table")
    parser.add_argument(
        "--sample", type=int, default=0, help="match this many commits (--ablation)"
    )
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    if args.ablation:
        return ablation(args)
    results = [
        r for r in answers(args.data_dir, args.repo, args.jsonl) if r["postings"]
    ]
    patch_ids = commit_patch_ids(args.repo, [str(r["commit"]) for r in results])
    with Store(args.data_dir / "store.sqlite3") as store:
        tally, to_read = sort_postings(store, results, patch_ids)
    total = tally["postings"]
    proven = sum(count for key, count in tally.items() if key.startswith("proven"))
    print(
        f"commits with postings: {len(results)}; postings carrying the patch: {total}"
    )
    for key in sorted(tally):
        if key != "postings":
            print(f"  {key}: {tally[key]}")
    another = tally[ANOTHER]
    if total:
        print(
            f"precision at least {proven / total:.4f} (proven), "
            f"at most {1 - another / total:.4f} (one of each shared posting is wrong)"
        )
    print("\n".join(to_read))
    return 0


def sort_postings(
    store: Store, results: list[dict[str, object]], patch_ids: dict[str, str]
) -> tuple[dict[str, int], list[str]]:
    """Each returned posting carrying the patch counted as proven (and why), another
    commit's applied posting, or to read; and the rows a person should read."""
    applied_by: dict[str, str] = {}
    for result in results:
        for posting in result["postings"]:  # type: ignore[attr-defined]
            if posting["applied"]:
                applied_by[posting["message_id"]] = str(result["commit"])
    tally: dict[str, int] = defaultdict(int)
    to_read: list[str] = []
    for result in results:
        sha = str(result["commit"])
        postings = [p for p in result["postings"] if p["kind"] in POSTING_KINDS]  # type: ignore[attr-defined]
        stored = {
            m.message_id: m for m in store.messages(p["message_id"] for p in postings)
        }
        for posting in postings:
            tally["postings"] += 1
            message = stored.get(posting["message_id"])
            why = _proof(result, posting, message, patch_ids.get(sha))
            if why:
                tally[f"proven: {why}"] += 1
            elif applied_by.get(posting["message_id"], sha) != sha:
                tally[ANOTHER] += 1
                to_read.append(_row(result, posting, "ANOTHER'S"))
            else:
                tally["to read"] += 1
                to_read.append(_row(result, posting, "read"))
    return tally, to_read


def _proof(result, posting, message, patch_id: str | None) -> str:  # type: ignore[no-untyped-def]
    if message is not None and patch_id and message.patch_id == patch_id:
        return "same patch-id"
    if subject_key(_title(posting["subject"])) == subject_key(str(result["subject"])):
        return "same subject"
    written = datetime.fromisoformat(str(result["author_date"]))
    if posting["date"] and datetime.fromisoformat(posting["date"]) == written:
        return "same author date"
    return ""


def _title(subject: str) -> str:
    from e2g.mail.subject import parse_subject

    return parse_subject(subject).title


def _row(result, posting, mark: str) -> str:  # type: ignore[no-untyped-def]
    return (
        f"{mark:9} {str(result['commit'])[:12]} {result['subject']!s:.60}\n"
        f"          <- {posting['method']} {posting['score']} "
        f"{'applied ' if posting['applied'] else ''}{posting['subject']:.70} "
        f"<{posting['message_id']}>"
    )


# The configurations of --ablation: every rule on (as shipped), then each one off.
CONFIGS = [("all rules", Rules())] + [
    (f"no {rule}", Rules.without(rule)) for rule in RULES
]
COLUMNS = (
    "set",
    "rules",
    "commits",
    "answered",
    "applied proven",
    "postings",
    "proven",
    "another's",
    "posting P",
    "posting R",
    "commit P",
    "commit R",
    "lost labels: answered / in thread",
)


def ablation(args: argparse.Namespace) -> int:
    """Match the commits dated inside the archive's window (or a fixed sample of
    them) once per configuration of CONFIGS, in this process (the store is only
    read), and print one table row per configuration."""
    settings = config.resolve(data_dir=args.data_dir)
    store = Store(settings.store_path)
    shas = window_shas(args.repo, store)
    if 0 < args.sample < len(shas):
        picked = set(random.Random(args.seed).sample(shas, args.sample))
        shas = [sha for sha in shas if sha in picked]
    started = time.monotonic()
    commits = list(Repo.open(args.repo).commits(shas))
    requests = [request_for(commit, ignore_trailers=True) for commit in commits]
    patch_ids = {c.sha: c.patch.patch_id for c in commits if c.patch.patch_id}
    print(
        f"{args.name}: {len(requests)} commits read in {time.monotonic() - started:.0f} s",
        file=sys.stderr,
    )
    truth = read_labels(args.truth) if args.truth else None
    families: dict[str, set[str]] = {}
    rows = []
    baseline: dict[str, list[tuple[str, str, bool]]] = {}
    changes: list[str] = []
    for name, rules in CONFIGS:
        started = time.monotonic()
        matcher = Matcher(
            store, lines_of=diff_lines, url_for=settings.url_for, rules=rules
        )
        results = [link_json(matcher.match(request)) for request in requests]
        row = measure(store, results, patch_ids, truth, families)
        row = {"set": args.name, "rules": name, **row}
        rows.append(row)
        print(f"  {name}: {time.monotonic() - started:.0f} s", file=sys.stderr)
        answers = {str(r["commit"]): _postings(r) for r in results}
        if not baseline:
            baseline = answers
        changes += _changes(name, results, baseline, answers)
    print(markdown(rows))
    print("\nAnswers that differ from every rule on (+ added, - gone):")
    print("\n".join(changes) or "  none")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


def _postings(result: dict[str, object]) -> list[tuple[str, str, bool]]:
    return [
        (str(p["message_id"]), str(p["method"]), bool(p["applied"]))
        for p in result["postings"]  # type: ignore[attr-defined]
    ]


def _changes(
    name: str,
    results: list[dict[str, object]],
    baseline: dict[str, list[tuple[str, str, bool]]],
    answers: dict[str, list[tuple[str, str, bool]]],
) -> list[str]:
    """A line per commit whose postings differ from the baseline's, a line per
    posting added or gone (applied ones marked *)."""
    lines = []
    for result in results:
        sha = str(result["commit"])
        before, after = set(baseline[sha]), set(answers[sha])
        if before == after:
            continue
        lines.append(f"{name}: {sha[:12]} {result['subject']!s:.70}")
        for mark, found in (("-", before - after), ("+", after - before)):
            for message_id, method, applied in sorted(found):
                star = "*" if applied else " "
                lines.append(f"    {mark}{star} {method:<10} <{message_id}>")
    return lines


def window_shas(repo: Path, store: Store) -> list[str]:
    """HEAD's non-merge commits whose commit date is inside the archive's dates,
    newest first (eval_links.py's window)."""
    dates = store.date_range()
    if dates is None:
        raise SystemExit("eval_postings: the store holds no dated message")
    low, high = (int(date.timestamp()) for date in dates)
    log = subprocess.run(
        ["git", "-C", str(repo), "log", "--no-merges", "--format=%H %ct", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [
        sha
        for sha, stamp in (line.split() for line in log.splitlines())
        if low <= int(stamp) <= high
    ]


def read_labels(path: Path) -> dict[str, str]:
    """Each commit's label, as eval_links.py takes it: its first row held by the
    archive (in_archive 1), else its first row."""
    labels: dict[str, str] = {}
    held: set[str] = set()
    with path.open(newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            sha = row["commit"]
            if sha in held:
                continue
            if row.get("in_archive", "1") == "1":
                labels[sha] = row["message_id"]
                held.add(sha)
            else:
                labels.setdefault(sha, row["message_id"])
    return labels


def measure(
    store: Store,
    results: list[dict[str, object]],
    patch_ids: dict[str, str],
    truth: dict[str, str] | None,
    families: dict[str, set[str]],
) -> dict[str, object]:
    """One configuration's figures (COLUMNS); `families` caches each label's."""
    tally, _ = sort_postings(store, [r for r in results if r["postings"]], patch_ids)
    total, another = tally["postings"], tally[ANOTHER]
    proven = sum(count for key, count in tally.items() if key.startswith("proven"))
    applied = {str(r["commit"]): _applied(r) for r in results}
    answered = {sha: p for sha, p in applied.items() if p is not None}
    stored = {
        m.message_id: m
        for m in store.messages(p["message_id"] for p in answered.values())
    }
    by_sha = {str(r["commit"]): r for r in results}
    applied_proven = sum(
        1
        for sha, posting in answered.items()
        if _proof(
            by_sha[sha], posting, stored.get(posting["message_id"]), patch_ids.get(sha)
        )
    )
    row: dict[str, object] = {
        "commits": len(results),
        "answered": len(answered),
        "applied proven": applied_proven,
        "postings": total,
        "proven": proven,
        "another's": another,
        "posting P": (proven / total, 1 - another / total) if total else None,
    }
    if truth is not None:
        row.update(_against_truth(store, results, truth, families, stored))
    return row


def _against_truth(
    store: Store,
    results: list[dict[str, object]],
    truth: dict[str, str],
    families: dict[str, set[str]],
    stored: dict[str, StoredMessage],
) -> dict[str, object]:
    """Commit precision and recall over the labelled commits whose label is a
    patch the store holds (an answer is right when it is in the label's family,
    eval_links.py's rule); posting recall, the share of the label's family the
    commit's patch postings hold; and, of the commits whose label the archive
    lacks, how many are answered, and how many by a mail of the label's thread
    (its parent or its root is the label)."""
    labelled = answered = correct = family_size = family_found = 0
    lost = lost_answered = lost_in_thread = 0
    for result in results:
        label_id = truth.get(str(result["commit"]))
        if label_id is None:
            continue
        posting = _applied(result)
        label = store.message(label_id)
        if label is None:
            lost += 1
            message = stored.get(posting["message_id"]) if posting else None
            lost_answered += posting is not None
            lost_in_thread += message is not None and label_id in (
                message.parent_id,
                message.thread_root,
            )
            continue
        if label.kind != "patch":
            continue
        if label_id not in families:
            families[label_id] = _family(store, label)
        family = families[label_id]
        labelled += 1
        if posting is not None:
            answered += 1
            correct += posting["message_id"] in family
        returned = {
            p["message_id"]
            for p in result["postings"]  # type: ignore[attr-defined]
            if p["kind"] == "patch"
        }
        family_size += len(family)
        family_found += len(returned & family)
    return {
        "posting R": (family_found, family_size),
        "commit P": (correct, answered),
        "commit R": (correct, labelled),
        "lost labels: answered / in thread": (lost_answered, lost_in_thread, lost),
    }


def _family(store: Store, label: StoredMessage) -> set[str]:
    """eval_links.family_of: the label and every patch with its patch-id, or with
    its subject key from the same person."""
    members = {label.message_id}
    if label.patch_id:
        members |= {m.message_id for m in store.patches_with_patch_id(label.patch_id)}
    members |= {
        m.message_id
        for m in store.patches_with_subject(label.subject_key)
        if same_author(label, m)
    }
    return members


def _applied(result: dict[str, object]) -> dict[str, object] | None:
    postings = result["postings"]
    return next((p for p in postings if p["applied"]), None)  # type: ignore[attr-defined]


def markdown(rows: list[dict[str, object]]) -> str:
    lines = [
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    for row in rows:
        lines.append("| " + " | ".join(_cell(row.get(key)) for key in COLUMNS) + " |")
    return "\n".join(lines)


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], float):
        return f"{value[0]:.4f}-{value[1]:.4f}"
    if isinstance(value, tuple) and len(value) == 2:
        found, of = value
        return f"{found / of:.4f} ({found}/{of})" if of else "-"
    if isinstance(value, tuple):
        return f"{value[0]} / {value[1]} of {value[2]}"
    return str(value)


if __name__ == "__main__":
    sys.exit(main())
