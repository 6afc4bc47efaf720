"""Posting-level precision: is every posting `e2g match` returns for a commit that
commit's own (a version, resend, cross-post of its patch), or a sibling, a revert,
another commit's patch?

    python benchmarks/eval_postings.py --data-dir STORE_DIR --repo REPO [--jsonl FILE]

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
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import defaultdict
from datetime import datetime
from pathlib import Path

from e2g.index.store import Store
from e2g.mail.subject import subject_key

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
    args = parser.parse_args()
    results = [
        r for r in answers(args.data_dir, args.repo, args.jsonl) if r["postings"]
    ]
    patch_ids = commit_patch_ids(args.repo, [str(r["commit"]) for r in results])
    applied_by: dict[str, str] = {}
    for result in results:
        for posting in result["postings"]:  # type: ignore[attr-defined]
            if posting["applied"]:
                applied_by[posting["message_id"]] = str(result["commit"])
    tally: dict[str, int] = defaultdict(int)
    to_read: list[str] = []
    with Store(args.data_dir / "store.sqlite3") as store:
        for result in results:
            sha = str(result["commit"])
            postings = [p for p in result["postings"] if p["kind"] in POSTING_KINDS]  # type: ignore[attr-defined]
            stored = {
                m.message_id: m
                for m in store.messages(p["message_id"] for p in postings)
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


if __name__ == "__main__":
    sys.exit(main())
