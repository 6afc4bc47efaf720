"""Ground truth for eval_links.py from a repository's own Link:/Message-Id: trailers.

    python benchmarks/make_truth.py --data-dir STORE_DIR --repo REPO [--out TRUTH.tsv]

Walks every non-merge commit reachable from the repository's HEAD and writes one TSV
row (header `commit, commit_date, message_id, in_archive, subject`) per commit whose
trailers name a Message-ID, read as e2g reads trailers (lore and patch.msgid.link
URLs, bare `<msgid>`, `%40` decoding; GitHub URLs name none). The label is the first
named Message-ID that the store in STORE_DIR holds (`in_archive` 1), else the first
named (`in_archive` 0) -- the same label eval_links.py takes from a TSV with one row
per Link. Rows come newest first, as `git rev-list` gives them; the store is only
read. Commits git cannot read (a snapshot or partial clone missing some blobs) are
skipped and counted. Without `--out` the TSV goes to stdout; a one-line summary
(commits, labelled, labels in the archive) goes to stderr.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TextIO

from e2g import config
from e2g.errors import RepoError
from e2g.git.repo import Repo
from e2g.index.store import Store
from e2g.mail.trailers import linked_message_ids
from e2g.model.links import Commit

COLUMNS = ("commit", "commit_date", "message_id", "in_archive", "subject")
BATCH = 1000


def readable_commits(
    repo: Repo, shas: Sequence[str], unreadable: list[str]
) -> Iterator[Commit]:
    """The commits of `shas` (no diff text), halving a batch git fails on until the
    commits it cannot read are found; their shas are appended to `unreadable`."""
    for start in range(0, len(shas), BATCH):
        pending = [list(shas[start : start + BATCH])]
        while pending:
            batch = pending.pop()
            try:
                # Trailers come from the commit message alone: skip the diff text.
                read = list(repo.commits(batch, diffs=False))
            except RepoError:
                if len(batch) == 1:
                    unreadable.extend(batch)
                else:  # the second half goes on the stack first: order is kept
                    pending += [batch[len(batch) // 2 :], batch[: len(batch) // 2]]
                continue
            yield from read


def truth_rows(
    store: Store, repo: Repo, shas: Sequence[str], unreadable: list[str]
) -> Iterator[tuple[str, str, str, str, str]]:
    """(commit, commit_date, message_id, in_archive, subject) per labelled commit."""
    for commit in readable_commits(repo, shas, unreadable):
        ids = linked_message_ids(commit.trailers)
        if not ids:
            continue
        held = next((mid for mid in ids if store.message(mid) is not None), None)
        yield (
            commit.sha,
            commit.commit_date.isoformat(),
            held or ids[0],
            "0" if held is None else "1",
            commit.subject,
        )


def write_truth(
    store: Store, repo: Repo, shas: Sequence[str], out: TextIO, unreadable: list[str]
) -> tuple[int, int]:
    """Write the TSV to `out`; return (labelled commits, labels in the store)."""
    writer = csv.writer(out, delimiter="\t", lineterminator="\n")
    writer.writerow(COLUMNS)
    labelled = in_archive = 0
    for row in truth_rows(store, repo, shas, unreadable):
        writer.writerow(row)
        labelled += 1
        in_archive += row[3] == "1"
    return labelled, in_archive


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-dir",
        type=Path,
        required=True,
        help="the e2g data dir holding the ingested archive",
    )
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--out", type=Path, help="the TSV to write (default: stdout)")
    args = parser.parse_args()
    settings = config.resolve(data_dir=args.data_dir)
    repo = Repo.open(args.repo)
    shas = repo.rev_list()
    unreadable: list[str] = []
    with Store(settings.store_path) as store:
        if args.out is None:
            labelled, in_archive = write_truth(
                store, repo, shas, sys.stdout, unreadable
            )
        else:
            with args.out.open("w", encoding="utf-8", newline="") as handle:
                labelled, in_archive = write_truth(
                    store, repo, shas, handle, unreadable
                )
    skipped = f" ({len(unreadable)} unreadable, skipped)" if unreadable else ""
    print(
        f"{len(shas)} non-merge commits{skipped}, {labelled} labelled, "
        f"{in_archive} labels in the archive",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
