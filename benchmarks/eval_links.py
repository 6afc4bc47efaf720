"""Accuracy of e2g's matcher against a ground truth, next to two baselines, in one run.

    python benchmarks/eval_links.py --data-dir STORE_DIR --repo REPO --truth TRUTH.tsv

TRUTH.tsv has a header and the columns `commit`, `message_id` (and optionally
`in_archive`): the Message-ID that commit's own Link: trailer names. Matching runs with
trailers ignored, on the labelled commits dated inside the archive's date window whose
label is in the store. A commit's answer is its applied posting; it is correct when it
is the labelled message or another posting of the same patch (the label's family: the
same patch-id, or the same subject key from the same person -- same address or same
name --, i.e. versions, resends and cross-posts). Rows:

- e2g: the whole cascade (`Matcher.match`, trailers ignored);
- subject-only: the newest patch whose subject key equals the commit summary
  (email2git's first step);
- patch-id-only: the newest patch with an equal `git patch-id --stable` (what
  patchwork and b4 bots do).

Precision = correct / answered, recall = correct / labelled, over the labelled commits
whose label carries a diff (and, separately, over all labelled commits).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from e2g import config
from e2g.git.repo import Repo
from e2g.index.store import Store, from_epoch
from e2g.mail.patch import diff_lines
from e2g.matcher.batch import request_for
from e2g.matcher.cascade import Matcher
from e2g.matcher.postings import same_author
from e2g.model.links import Commit
from e2g.model.stored import StoredMessage


@dataclass(slots=True)
class Tally:
    labelled: int = 0
    answered: int = 0
    correct: int = 0
    exact: int = 0  # the answer is exactly the Link target
    postings: int = 0  # every patch posting returned (e2g returns several per commit)
    postings_correct: int = 0
    wrong: list[tuple[str, str, str]] = field(default_factory=list)

    def add(
        self, commit: str, answer: str | None, label: str, family: set[str]
    ) -> None:
        self.labelled += 1
        if answer is None:
            return
        self.answered += 1
        if answer in family:
            self.correct += 1
            self.exact += int(answer == label)
        else:
            self.wrong.append((commit, answer, label))

    def row(self, name: str) -> dict[str, object]:
        precision = self.correct / self.answered if self.answered else 0.0
        recall = self.correct / self.labelled if self.labelled else 0.0
        f1 = (
            2 * precision * recall / (precision + recall) if precision + recall else 0.0
        )
        return {
            "method": name,
            "labelled": self.labelled,
            "answered": self.answered,
            "correct": self.correct,
            "exact_link_target": self.exact,
            "precision": round(precision, 4),
            "recall": round(recall, 4),
            "f1": round(f1, 4),
            "postings": self.postings,
            "postings_correct": self.postings_correct,
        }


def read_truth(path: Path) -> dict[str, str]:
    truth: dict[str, str] = {}
    with path.open(newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if row.get("in_archive", "1") == "1":
                truth.setdefault(row["commit"], row["message_id"])
    return truth


def family_of(store: Store, label: StoredMessage) -> set[str]:
    """The label and every other posting of the same patch."""
    members = {label.message_id}
    if label.patch_id:
        members |= {m.message_id for m in store.patches_with_patch_id(label.patch_id)}
    members |= {
        m.message_id
        for m in store.patches_with_subject(label.subject_key)
        if same_author(label, m)
    }
    return members


def newest_before(found: list[StoredMessage], commit: Commit) -> str | None:
    if not found:
        return None
    dated = [
        m
        for m in found
        if m.date is not None
        and m.date.timestamp() <= commit.commit_date.timestamp() + 86400
    ]
    pool = dated or found
    return max(pool, key=lambda m: m.date.timestamp() if m.date else 0).message_id


def subject_only(store: Store, commit: Commit) -> str | None:
    return newest_before(
        store.patches_with_subject(commit.subject_key),
        commit,
    )


def patch_id_only(store: Store, commit: Commit) -> str | None:
    if not commit.patch.patch_id:
        return None
    return newest_before(
        store.patches_with_patch_id(commit.patch.patch_id),
        commit,
    )


def archive_window(store: Store) -> tuple[float, float]:
    dates = store.date_range()
    if dates is None:
        raise SystemExit("eval_links: the store holds no dated message")
    return dates[0].timestamp(), dates[1].timestamp()


def evaluate(
    settings: config.Settings, repo: Path, truth: dict[str, str]
) -> dict[str, object]:
    repository = Repo.open(repo)
    store = Store(settings.store_path)
    matcher = Matcher(store, lines_of=diff_lines, url_for=settings.url_for)
    low, high = archive_window(store)
    returned: dict[str, list[str]] = {}
    methods: dict[str, Callable[[Commit], str | None]] = {
        "e2g": lambda c: _applied(matcher, c, returned),
        "subject-only": lambda c: subject_only(store, c),
        "patch-id-only": lambda c: patch_id_only(store, c),
    }
    with_diff = {name: Tally() for name in methods}
    every = {name: Tally() for name in methods}
    shas = [sha for sha in truth if _exists(repository, sha)]
    started = time.monotonic()
    skipped = {"outside window": 0, "label not in store": 0}
    for commit in repository.commits(shas):
        if not low <= commit.commit_date.timestamp() <= high:
            skipped["outside window"] += 1
            continue
        label = store.message(truth[commit.sha])
        if label is None:
            skipped["label not in store"] += 1
            continue
        family = family_of(store, label)
        for name, method in methods.items():
            answer = method(commit)
            every[name].add(commit.sha, answer, label.message_id, family)
            if label.kind == "patch":
                with_diff[name].add(commit.sha, answer, label.message_id, family)
        if label.kind == "patch" and answer_postings(returned, commit.sha):
            tally = with_diff["e2g"]
            tally.postings += len(returned[commit.sha])
            tally.postings_correct += sum(
                1 for mid in returned[commit.sha] if mid in family
            )
    elapsed = time.monotonic() - started
    window = [from_epoch(int(low)), from_epoch(int(high))]
    return {
        "window": [str(value) for value in window],
        "skipped": skipped,
        "seconds": round(elapsed, 1),
        "label_carries_diff": [with_diff[name].row(name) for name in methods],
        "all_labelled": [every[name].row(name) for name in methods],
        "e2g_wrong": with_diff["e2g"].wrong[:20],
    }


def _applied(
    matcher: Matcher, commit: Commit, seen: dict[str, list[str]]
) -> str | None:
    result = matcher.match(request_for(commit, ignore_trailers=True))
    seen[commit.sha] = [p.message_id for p in result.postings if p.kind == "patch"]
    return next((p.message_id for p in result.postings if p.applied), None)


def answer_postings(returned: dict[str, list[str]], sha: str) -> bool:
    return bool(returned.get(sha))


def _exists(repository: Repo, sha: str) -> bool:
    try:
        repository.resolve(sha)
    except Exception:
        return False
    return True


def print_table(title: str, rows: list[dict[str, object]]) -> None:
    print(title)
    print(
        f"  {'method':<14} {'labelled':>8} {'answered':>8} {'correct':>8} {'precision':>9} {'recall':>7} {'F1':>6}  exact-link"
    )
    for row in rows:
        print(
            f"  {row['method']:<14} {row['labelled']:>8} {row['answered']:>8} {row['correct']:>8} "
            f"{row['precision']:>9.2%} {row['recall']:>7.2%} {row['f1']:>6.3f}  {row['exact_link_target']}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-dir",
        type=Path,
        required=True,
        help="the e2g data dir holding the ingested archive",
    )
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--truth", type=Path, required=True)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    settings = config.resolve(data_dir=args.data_dir)
    report = evaluate(settings, args.repo, read_truth(args.truth))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(
        f"archive window {report['window'][0]} .. {report['window'][1]}; skipped {report['skipped']}; {report['seconds']} s"
    )
    print_table(
        "labelled commits whose label carries a diff (trailers ignored):",
        report["label_carries_diff"],
    )  # type: ignore[arg-type]
    print_table(
        "all labelled commits (labels may be covers or reports):",
        report["all_labelled"],
    )  # type: ignore[arg-type]
    e2g = report["label_carries_diff"][0]  # type: ignore[index]
    share = e2g["postings_correct"] / e2g["postings"] if e2g["postings"] else 0.0
    print(
        f"e2g patch postings returned for those commits: {e2g['postings']}, in the label's family: {e2g['postings_correct']} ({share:.2%})"
    )
    for commit, answer, label in report["e2g_wrong"]:  # type: ignore[attr-defined]
        print(f"  e2g wrong: {commit[:12]} answered <{answer}> label <{label}>")
    return 0


if __name__ == "__main__":
    sys.exit(main())
