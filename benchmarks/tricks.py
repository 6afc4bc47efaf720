"""Whether each speed trick in e2g still pays: the same work with the trick and without.

    python benchmarks/tricks.py --data-dir STORE_DIR --repo REPO [--commits N] [--rounds R]

A speed trick stays in e2g only where this shows it pays (STYLE: "one home per rule";
a trick's figure is cited in a one-line comment next to it). Each row runs the same
work with the trick (as shipped) and with the plain way, `--rounds` times each,
alternating, and prints the best time of each and the saving. In-process; the
machine should be otherwise idle.

- match, prepared-lines cache: `Matcher.match` over the repository's newest commits
  (trailers ignored, as the heuristics are the cost), with `matcher.similarity`
  keeping what it derives from a line list per object (by identity) against
  deriving it anew.
- search, date column: reading the index's date column for newest-first sorting
  through Whoosh's column file directly against the public per-document reader.
- index, lengths in memory: building the full-text index of the store's first
  `--docs` messages with `fulltext.write._LengthsInMemory` against Whoosh's own reader of
  the new segment's lengths (one seek per posting).
- index, posting runs in chunks: the same build with `fulltext.write._ChunkedRuns`
  against Whoosh's posting pool, which spills and reads back its sorted runs one
  marshal call per posting.
- search, listing by blocks: every document a broad query matches (`--query`, one
  or more; default `is:patch` and `is:reply`, which every store has) listed with
  `fulltext.search._listed` (a posting block at a time) against Whoosh's `docs_for_query`
  (a matcher step per document), in the data dir's own index.
- import, Whoosh stand-ins: a new process importing the Whoosh modules e2g uses, with
  `index.whoosh_imports`' stand-ins against without (whole process, as each
  `e2g search` pays it).
- git, allocator kept: `git blame -w -M -C` of the repository's largest text file
  (up to 1 MiB) at HEAD, in the environment e2g gives every git
  (`git.objects.git_environment`) against the caller's own (whole process).

Tricks this removed (2026-12-04, liburing, 600 commits, 5 rounds): padding SQL IN
lists to a power of two saved 1.7% of a match run, and a ForkingPickler reducer for
timezones 0.4% of pickling 20,000 offset datetimes; both went. `model.Compact`
(pickling a frozen dataclass as its values, 6% of pickling postings) went on
2026-12-05 with the frozen dataclasses: records are named tuples, which pickle so.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from e2g import config, model
from e2g.git.repo import Repo
from e2g.index import fulltext
from e2g.index.fulltext import columns, query, search, write
from e2g.index.store import Store
from e2g.mail.patch import diff_lines
from e2g.matcher import similarity
from e2g.matcher.batch import request_for
from e2g.matcher.cascade import Matcher


def best_of(rounds: int, runs: dict[str, Callable[[], object]]) -> dict[str, float]:
    """The best wall time of each run, the runs alternating round by round, after
    one untimed round (files in the page cache, imports and caches warm)."""
    for run in runs.values():
        run()
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(rounds):
        for name, run in runs.items():
            started = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - started)
    return best


@contextmanager
def patched(owner: object, name: str, value: object) -> Iterator[None]:
    old = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, old)


class Unprepared:
    """similarity._Prepared without its memory: derives anew on every call."""

    def __init__(self, make: Callable[[object], object]) -> None:
        self._make = make

    def __call__(self, source: object) -> object:
        return self._make(source)


def match_runs(
    data_dir: Path, repo: Path, commits: int
) -> dict[str, Callable[[], object]]:
    settings = config.resolve(data_dir=data_dir)
    repository = Repo.open(repo)
    shas = repository.rev_list([])[:commits]
    with repository.reader() as reader:
        requests = [
            request_for(c, ignore_trailers=True, lines=lines)
            for c, lines in reader.read(shas)
        ]

    def run() -> None:
        with Store(settings.store_path) as opened:
            matcher = Matcher(opened, lines_of=diff_lines, url_for=settings.url_for)
            for request in requests:
                matcher.match(request)

    def without_prepared() -> None:
        side, totals = similarity._side, similarity._totals
        with (
            patched(similarity, "_side", Unprepared(side._make)),
            patched(similarity, "_totals", Unprepared(totals._make)),
        ):
            run()

    return {"shipped": run, "no prepared cache": without_prepared}


def column_runs(count: int) -> dict[str, Callable[[], object]]:
    directory = Path(tempfile.mkdtemp(prefix="e2g-tricks-")) / "fulltext"
    docs = (
        fulltext.IndexDoc(
            subject=f"io_uring: fix {n}",
            author_name="Jane Doe",
            author_email="jane@example.org",
            lists=("io-uring.vger.kernel.org",),
            date=datetime(2020, 1, 1, tzinfo=UTC) + timedelta(minutes=n),
            kind=model.Kind.PATCH,
            version=1,
            files=("io_uring/net.c",),
            body=None,
            seq=n + 1,
        )
        for n in range(count)
    )
    fulltext.rebuild(directory, docs)
    index = fulltext.Fulltext.open(directory, create=False)
    searcher = index._fresh_searcher()

    def slow(column: object, size: int) -> object:
        from array import array

        if column is None:
            return array("q", bytes(8 * size))
        return array("q", (column[number] for number in range(size)))  # type: ignore[index]

    def public() -> None:
        with patched(columns, "column_array", slow):
            columns.date_values(searcher)

    return {"shipped": lambda: columns.date_values(searcher), "public reader": public}


def index_runs(
    data_dir: Path, count: int
) -> dict[str, dict[str, Callable[[], object]]]:
    """Building the index of the store's first `count` messages, as shipped and
    without each of the index writer's tricks (one row each)."""
    from whoosh.writing import PostingPool

    from e2g.ingest.indexing import index_doc

    with Store(data_dir / "store.sqlite3") as store:
        docs = []
        for stored in store.iter_messages():
            docs.append(index_doc(stored, body=None))
            if len(docs) == count:
                break

    def build() -> None:
        directory = Path(tempfile.mkdtemp(prefix="e2g-tricks-"))
        try:
            fulltext.rebuild(directory / "fulltext", iter(docs))
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    def whooshs_reader() -> None:
        with patched(write, "_LengthsInMemory", lambda reader: reader):
            build()

    def whooshs_runs() -> None:
        with patched(write, "_ChunkedRuns", PostingPool):
            build()

    return {
        "index, lengths in memory": {
            "shipped": build,
            "Whoosh's reader": whooshs_reader,
        },
        "index, posting runs in chunks": {
            "shipped": build,
            "Whoosh's runs": whooshs_runs,
        },
    }


def listing_runs(data_dir: Path, queries: list[str]) -> dict[str, Callable[[], object]]:
    from e2g.index import query as ql

    index = fulltext.Fulltext.open(data_dir / "fulltext", create=False)
    searcher = index._fresh_searcher()
    plans = [query.translate(ql.parse_query(text)).query for text in queries]

    def shipped() -> None:
        for plan in plans:
            search._listed(searcher, plan)

    def whooshs() -> None:
        for plan in plans:
            list(searcher.docs_for_query(plan))

    return {"shipped": shipped, "docs_for_query": whooshs}


WHOOSH_MODULES = (
    "import whoosh.index, whoosh.query, whoosh.analysis, whoosh.columns, "
    "whoosh.fields, whoosh.filedb.filestore, whoosh.reading, whoosh.searching, "
    "whoosh.writing"
)


def import_runs() -> dict[str, Callable[[], object]]:
    def process(code: str) -> Callable[[], object]:
        return lambda: subprocess.run([sys.executable, "-c", code], check=True)

    return {
        "shipped": process(f"import e2g.index.whoosh_imports; {WHOOSH_MODULES}"),
        "plain imports": process(WHOOSH_MODULES),
    }


def allocator_runs(repo: Path) -> dict[str, Callable[[], object]]:
    from e2g.git.objects import git_environment

    listing = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "-r", "-l", "HEAD"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    sizes = [
        (int(size), path)
        for meta, _, path in (line.partition("\t") for line in listing.splitlines())
        for kind, size in [meta.split()[1:4:2]]
        if kind == "blob" and size.isdigit() and int(size) <= 1 << 20
    ]
    path = next(
        name
        for _, name in sorted(sizes, reverse=True)
        if b"\0"
        not in subprocess.run(
            ["git", "-C", str(repo), "cat-file", "blob", f"HEAD:{name}"],
            check=True,
            capture_output=True,
        ).stdout[:8000]
    )  # the largest that is text
    print(f"git, allocator kept: blame of {path}", file=sys.stderr)

    def blame(env: dict[str, str]) -> Callable[[], object]:
        command = [
            "git",
            "-C",
            str(repo),
            "blame",
            "-w",
            "-M",
            "-C",
            "HEAD",
            "--",
            path,
        ]
        return lambda: subprocess.run(
            command, check=True, stdout=subprocess.DEVNULL, env=env
        )

    return {"shipped": blame(git_environment()), "plain": blame(dict(os.environ))}


def report(name: str, best: dict[str, float], as_json: bool) -> None:
    shipped = best["shipped"]
    for other, seconds in best.items():
        if other == "shipped":
            continue
        saving = 1 - shipped / seconds if seconds else 0.0
        row = {
            "trick": name,
            "against": other,
            "shipped_s": round(shipped, 4),
            "plain_s": round(seconds, 4),
            "saving": round(saving, 3),
        }
        if as_json:
            print(json.dumps(row))
        else:
            print(
                f"{name:28} shipped {shipped:8.4f} s   {other:18} {seconds:8.4f} s   saves {saving:6.1%}"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data-dir", type=Path, required=True, help="an e2g data dir (store and index)"
    )
    parser.add_argument(
        "--repo",
        type=Path,
        required=True,
        help="the git repository the store's lists carry",
    )
    parser.add_argument(
        "--commits", type=int, default=600, help="newest commits to match (default 600)"
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="runs of each variant (best counts)"
    )
    parser.add_argument(
        "--docs", type=int, default=100_000, help="index documents for the date column"
    )
    parser.add_argument(
        "--query",
        action="append",
        help="a broad query for the listing row (repeatable; default is:patch, is:reply)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    options = parser.parse_args(argv)
    print(
        "e2g speed tricks: the same work with and without each (best of rounds)",
        file=sys.stderr,
    )
    runs = match_runs(options.data_dir, options.repo, options.commits)
    best = best_of(options.rounds, runs)
    report("match, prepared-lines cache", best, options.json)
    report(
        "search, date column",
        best_of(options.rounds, column_runs(options.docs)),
        options.json,
    )
    for name, variants in index_runs(options.data_dir, options.docs).items():
        report(name, best_of(options.rounds, variants), options.json)
    report(
        "search, listing by blocks",
        best_of(
            max(options.rounds, 10),
            listing_runs(options.data_dir, options.query or ["is:patch", "is:reply"]),
        ),
        options.json,
    )
    report(
        "import, Whoosh stand-ins",
        best_of(max(options.rounds, 10), import_runs()),
        options.json,
    )
    report(
        "git, allocator kept",
        best_of(options.rounds, allocator_runs(options.repo)),
        options.json,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
