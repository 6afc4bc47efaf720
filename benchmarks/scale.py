"""Lore scale: e2g on an archive built from a whole real git history, measured.

    python benchmarks/scale.py --repo REPO [--count N] [--workdir DIR] [--skip-notmuch]

1. Builds (or reuses, in --workdir) an archive of about --count messages from REPO's
   history with gen_history.py: every non-merge commit posted as its real patch, with
   earlier versions, series, resends, replies and chatter, and the ground truth.
2. Ingests the first 99% of it into a fresh data dir with default options
   (`e2g ingest --json FILE`, as a user types it), polling the store and the index
   from outside: msgs/s per tenth of the archive for each, peak RSS of the process
   tree, store and index size against the mbox's size.
   The growth control: the last tenth of those messages alone, ingested into a
   fresh store, and each tenth's MB/s, so that a store slowing as it grows is
   told apart from later mail being heavier.
3. Appends the last 1% to the same file and ingests it again: the incremental cost.
4. Search: in process, newest first and by relevance, for realistic queries drawn from
   the history (authors, subject words, files, dates, kinds), each with the index kept
   open (as `e2g serve` does) and opened per query (as one `e2g search` does);
   p50/p99. Then `e2g search` end to end, as a new process.
5. Match: `e2g match` over the commits up to the one at 99% of the truth, then over
   the whole range (the incremental run), against git's floor
   (`git log -p --no-merges | git patch-id --stable`) on the same range, as a ratio;
   peak RSS; recall of the ground truth (the applied version among the postings) and
   how many links point at another commit's patch.
6. The same archive through `notmuch new` (a Maildir, converted untimed), as a ratio;
   skipped with a note when notmuch is absent or with --skip-notmuch.
7. A projection to 10M messages and 1.3M commits: the slowest of the whole run's
   rate and the last tenth's store and index rates; size per message; commits/s.

Numbers go to stdout (a table, or one JSON object with --json); progress to stderr.
CI runs it on a small --count only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import gen_history  # noqa: E402
import ingest as ingest_bench  # noqa: E402
from match_floor import floor_patch_ids  # noqa: E402

from e2g import config  # noqa: E402
from e2g.ingest.indexing import INDEX_COMMIT_EVERY  # noqa: E402

ingest_bench.POLL_SECONDS = 0.5  # its 20 Hz walk of /proc took ~15% of a core here

POLL_SECONDS = 1.0  # polls cost CPU the measured run shares
INCREMENT = 0.01  # the share of the archive appended for the incremental run
TEN_MILLION = 10_000_000
KERNEL_COMMITS = 1_300_000


def note(text: str) -> None:
    print(f"scale: {text}", file=sys.stderr, flush=True)


# --- the archive ----------------------------------------------------------------------


def build_archive(workdir: Path, repo: Path, count: int, seed: int) -> Path:
    archive = workdir / f"history-{count}-{seed}.mbox"
    truth = archive.with_suffix(".truth.jsonl")
    if archive.exists() and truth.exists():
        return archive
    note(f"building about {count:,} messages from {repo} ...")
    partial = archive.with_name(archive.name + ".partial")
    with partial.open("wb", buffering=1 << 20) as out, truth.open("wb") as facts:
        gen_history.write(out, facts, repo, [], count, seed)
    partial.rename(archive)
    return archive


def entries(path: Path) -> Iterator[bytes]:
    """The archive's mbox entries, each with its `From ` line (the generators escape
    body lines that would start one)."""
    entry = bytearray()
    with path.open("rb") as stream:
        for line in stream:
            if line.startswith(b"From ") and entry:
                yield bytes(entry)
                entry.clear()
            entry += line
    if entry:
        yield bytes(entry)


@dataclass
class Split:
    """The archive cut for the run, from one pass over it."""

    head: Path  # the first 99% of the messages: the file to ingest
    tail: bytes  # the rest, appended later for the incremental ingest
    kept: int  # messages in `head`
    messages: int  # messages in the archive
    control: Path  # the last tenth of `head`, alone: the growth control
    control_count: int
    tenth_bytes: list[int]  # bytes of each tenth of `head`


def split_archive(archive: Path, workdir: Path) -> Split:
    """The file to ingest, the rest's bytes, and the growth control's file."""
    messages = sum(1 for _ in entries(archive))
    keep = messages - max(1, int(messages * INCREMENT))
    control_count = max(1, keep // 10)
    split = Split(
        head=workdir / "ingested.mbox",
        tail=b"",
        kept=keep,
        messages=messages,
        control=workdir / "last-tenth.mbox",
        control_count=control_count,
        tenth_bytes=[0] * 10,
    )
    tail = bytearray()
    with (
        split.head.open("wb", buffering=1 << 20) as out,
        split.control.open("wb", buffering=1 << 20) as control,
    ):
        for number, entry in enumerate(entries(archive)):
            if number >= keep:
                tail += entry
                continue
            out.write(entry)
            split.tenth_bytes[min(9, number * 10 // keep)] += len(entry)
            if number >= keep - control_count:
                control.write(entry)
    split.tail = bytes(tail)
    return split


# --- watching a run from outside ------------------------------------------------------


@dataclass
class Progress:
    """(seconds since start, store messages, index documents) samples."""

    samples: list[tuple[float, int, int]] = field(default_factory=list)

    def rate(self, total: int, column: int) -> float:
        """Messages/s over the whole run of `column` (from its tenths)."""
        rates = self.tenths(total, column)
        if not rates:
            return 0.0
        return total * len(rates) / 10 / sum(total / 10 / rate for rate in rates)

    def tenths(self, total: int, column: int) -> list[float]:
        """Messages/s within each tenth of `total`, from the samples of `column`
        (the moment a tenth was crossed interpolated between two samples)."""
        rates, before = [], 0.0
        samples = iter(self.samples)
        low: tuple[float, int, int] = (0.0, 0, 0)
        high = low
        for tenth in range(1, 11):
            goal = total * tenth / 10
            while high[column] < goal:
                following = next(samples, None)
                if following is None:
                    return rates
                low, high = high, following
            span = max(high[column] - low[column], 1)
            when = low[0] + (goal - low[column]) / span * (high[0] - low[0])
            rates.append(total / 10 / max(when - before, 1e-6))
            before = when
        return rates


def settings_for(data: Path) -> config.Settings:
    return config.resolve(data_dir=data, env={}, home=data)


def counts(settings: config.Settings) -> tuple[int, int]:
    """(the store's highest seq, the index's mark), read without taking any lock."""
    from e2g.index.fulltext import read_mark

    stored = 0
    if settings.store_path.exists():
        try:
            uri = f"file:{settings.store_path}?mode=ro"
            connection = sqlite3.connect(uri, uri=True)
            try:
                row = connection.execute("SELECT max(seq) FROM messages").fetchone()
                stored = int(row[0] or 0)
            finally:
                connection.close()
        except sqlite3.Error:
            pass
    try:
        indexed = read_mark(settings.index_dir).seq
    except Exception:  # noqa: BLE001 - a sidecar being replaced: next poll
        indexed = 0
    return stored, indexed


class Watcher:
    """Polls the store's highest seq and the index's mark while a run goes on."""

    def __init__(self, data: Path) -> None:
        self.settings = settings_for(data)
        self.progress = Progress()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._started = time.perf_counter()

    def _record(self) -> None:
        stored, indexed = counts(self.settings)
        self.progress.samples.append(
            (time.perf_counter() - self._started, stored, indexed)
        )

    def _run(self) -> None:
        while not self._stop.wait(POLL_SECONDS):
            self._record()

    def __enter__(self) -> Watcher:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        self._record()


def e2g(data: Path, *arguments: str) -> list[str]:
    return [sys.executable, "-m", "e2g", "--data-dir", str(data), *arguments]


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def size_of(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# --- the runs -------------------------------------------------------------------------


def run_ingest(
    data: Path, archive: Path, logs: Path
) -> tuple[ingest_bench.Measured, Progress]:
    with Watcher(data) as watcher:
        run = ingest_bench.measure(
            e2g(data, "ingest", "--json", str(archive)), env=environment(), logs=logs
        )
    if run.returncode != 0:
        raise SystemExit(f"scale: ingest exited {run.returncode}: {run.stderr[-2000:]}")
    return run, watcher.progress


def queries(repo: Path, truth: list[dict[str, object]], seed: int) -> list[str]:
    """Realistic queries drawn from the history: what people type about it."""
    import random

    rnd = random.Random(seed)
    picked = rnd.sample(truth, min(12, len(truth)))
    found: list[str] = []
    for number, fact in enumerate(picked):
        shown = subprocess.run(
            [
                "git",
                "-C",
                str(repo),
                "show",
                "--no-patch",
                "--format=%an%x1f%s%x1f%as",
                str(fact["commit"]),
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        name, subject, day = shown.split("\x1f")
        files = subprocess.run(
            ["git", "-C", str(repo), "show", "--format=", "--name-only"]
            + [str(fact["commit"])],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        words = sorted(
            (w.strip(":,.()'\"") for w in subject.split()), key=len, reverse=True
        )
        word = next((w for w in words if w.isalnum()), "fix").lower()
        last = name.split()[-1].lower() if name.split() else "git"
        year = day[:4]
        options = [
            f"f:{last}",
            word,
            f"file:{files[0].rpartition('/')[0] or files[0]}" if files else "t/",
            f"file:{files[0]}" if files else "Makefile",
            f"s:{word} is:patch",
            f"d:{year}",
            f"{word} -is:reply",
            f"is:cover f:{last}",
            f"is:patch d:{day}..",
            f"{word} f:{last}",
            "Makefile",
            f"d:{year}-01-01..{year}-03-31 is:patch",
        ]
        found.append(options[number % len(options)])
    return found


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def search_latency(data: Path, asked: list[str], rounds: int) -> dict[str, float]:
    from e2g.api import core
    from e2g.index.fulltext import Fulltext

    settings = settings_for(data)
    figures: dict[str, float] = {}
    with Fulltext.open(settings.index_dir, create=False) as fulltext:
        for sort in ("date", "relevance"):
            fulltext.search(asked[0], sort=sort)  # warm the open searcher
            timings = []
            for _ in range(rounds):
                for query in asked:
                    started = time.perf_counter()
                    fulltext.search(query, limit=20, sort=sort)
                    timings.append((time.perf_counter() - started) * 1000)
            figures[f"open_{sort}_p50_ms"] = percentile(timings, 0.5)
            figures[f"open_{sort}_p99_ms"] = percentile(timings, 0.99)
    timings = []
    for query in asked:
        started = time.perf_counter()
        core.search(settings, query, limit=20, catch_up=False)
        timings.append((time.perf_counter() - started) * 1000)
    figures["per_call_date_p50_ms"] = percentile(timings, 0.5)
    figures["per_call_date_p99_ms"] = percentile(timings, 0.99)
    walls = []
    for query in asked[:4]:
        started = time.perf_counter()
        subprocess.run(
            e2g(data, "search", "--json", query),
            env=environment(),
            capture_output=True,
            check=True,
        )
        walls.append(time.perf_counter() - started)
    figures["end_to_end_median_s"] = statistics.median(walls)
    figures["end_to_end_max_s"] = max(walls)
    return figures


def run_match(
    data: Path, repo: Path, revs: list[str], logs: Path
) -> tuple[ingest_bench.Measured, list[dict[str, object]]]:
    run = ingest_bench.measure(
        e2g(data, "-q", "match", "-C", str(repo), "--jsonl", *revs),
        env=environment(),
        logs=logs,
    )
    if run.returncode != 0:
        raise SystemExit(f"scale: match exited {run.returncode}: {run.stderr[-2000:]}")
    return run, [json.loads(line) for line in run.stdout.splitlines() if line]


def recall(
    truth: list[dict[str, object]],
    results: list[dict[str, object]],
    patch_ids: dict[str, str],
) -> tuple[float, int, int, int, int]:
    """Share of posted commits whose applied version is among their postings, how
    many postings belong to another commit's family (wrong links), how many of those
    carry the same patch as the commit they were linked to (the same change applied
    twice, as on two branches: by git's own patch-ids, right answers), how many were
    found, and how many posted commits the matched range did not hold (a side
    branch merged after the range's last commit)."""
    family: dict[str, str] = {}
    for fact in truth:
        for key in ("final", "earlier"):
            for message_id in fact[key]:  # type: ignore[attr-defined]
                family[message_id] = str(fact["commit"])
    linked = {
        str(r["commit"]): {str(p["message_id"]) for p in r["postings"]}  # type: ignore[attr-defined]
        for r in results
    }
    inside = [fact for fact in truth if str(fact["commit"]) in linked]
    found = sum(
        bool(linked[str(f["commit"])] & set(f["final"]))  # type: ignore[arg-type]
        for f in inside
    )
    wrong = [
        (commit, family[message_id])
        for commit, postings in linked.items()
        for message_id in postings
        if message_id in family and family[message_id] != commit
    ]
    same_patch = sum(
        1
        for commit, other in wrong
        if patch_ids.get(commit) is not None
        and patch_ids.get(commit) == patch_ids.get(other)
    )
    return (
        found / max(len(inside), 1),
        len(wrong),
        same_patch,
        found,
        len(truth) - len(inside),
    )


# --- the report ----------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:  # noqa: PLR0915 - one run, in order
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True, help="a git repository")
    parser.add_argument("--count", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", type=Path, help="keep files here (reused)")
    parser.add_argument("--skip-notmuch", action="store_true")
    parser.add_argument("--skip-match", action="store_true")
    parser.add_argument("--rounds", type=int, default=3, help="search rounds")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    args = parser.parse_args(argv)

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="e2g-scale-"))
    workdir.mkdir(parents=True, exist_ok=True)
    archive = build_archive(workdir, args.repo, args.count, args.seed)
    truth = [
        json.loads(line)
        for line in archive.with_suffix(".truth.jsonl").read_text().splitlines()
    ]
    split = split_archive(archive, workdir)
    head, tail, kept, messages = split.head, split.tail, split.kept, split.messages
    data = workdir / "data"
    shutil.rmtree(data, ignore_errors=True)
    result: dict[str, object] = {
        "messages": messages,
        "ingested_first": kept,
        "mbox_mb": round(size_of(archive) / 1e6, 1),
        "commits_posted": len(truth),
    }

    note(f"e2g ingest of {kept:,} messages ...")
    run, progress = run_ingest(data, head, workdir / "logs" / "ingest")
    summary = json.loads(run.stdout)
    stored = progress.tenths(kept, 1)
    # The index's mark moves only when it commits (every INDEX_COMMIT_EVERY
    # documents): below ten commits a run, its tenths are steps, not rates.
    indexed = progress.tenths(kept, 2) if kept >= 10 * INDEX_COMMIT_EVERY else []
    result |= {
        "ingest_s": round(run.seconds, 1),
        "ingest_msgs_per_s": round(kept / run.seconds, 1),
        "store_msgs_per_s_by_tenth": [round(r) for r in stored],
        "index_msgs_per_s_by_tenth": [round(r) for r in indexed]
        or f"not measurable: the index commits every {INDEX_COMMIT_EVERY:,} documents",
        "last_tenth_vs_first": round(stored[-1] / stored[0], 2) if stored else None,
        "ingest_peak_rss_mb": round(
            max(run.peak_process_rss, run.peak_tree_rss) / 2**20
        ),
        "index_lag": summary["index_lag"],
        "warnings": summary["warnings"],
        "store_mb": round(size_of(settings_for(data).store_path) / 1e6, 1),
        "index_mb": round(size_of(settings_for(data).index_dir) / 1e6, 1),
        "data_dir_mb": round(size_of(data) / 1e6, 1),
    }
    result["data_dir_share"] = round(
        size_of(data) / size_of(head), 3
    )  # of the mbox it was built from

    # Later mail may be larger (git.git's later patches are): the same messages'
    # rate in a fresh store, and each tenth's MB/s, tell a store that slows as it
    # grows from mail that is heavier to parse.
    control, control_count, sizes = (
        split.control,
        split.control_count,
        split.tenth_bytes,
    )
    note(f"the last tenth alone ({control_count:,} messages) into a fresh store ...")
    # A fresh store: one left by an interrupted run would skip every message.
    shutil.rmtree(workdir / "data-control", ignore_errors=True)
    _, fresh = run_ingest(
        workdir / "data-control", control, workdir / "logs" / "control"
    )
    fresh_rate = fresh.rate(control_count, 1)
    fresh_index_rate = fresh.rate(control_count, 2)
    by_bytes = [
        size / 1e6 / (kept / 10 / rate)
        for size, rate in zip(sizes, stored, strict=False)
    ]
    result |= {
        "store_mb_per_s_by_tenth": [round(r, 2) for r in by_bytes],
        "last_tenth_vs_first_by_mb": round(by_bytes[-1] / by_bytes[0], 2)
        if by_bytes
        else None,
        "last_tenth_fresh_store_msgs_per_s": round(fresh_rate),
        "last_tenth_vs_fresh_store": round(stored[-1] / fresh_rate, 2)
        if stored and fresh_rate
        else None,
        # A message is ingested once the index has it too: the index's column is
        # the rate of complete ingest (the store runs ahead of it).
        "index_last_tenth_vs_first": round(indexed[-1] / indexed[0], 2)
        if len(indexed) == 10
        else None,
        "last_tenth_fresh_index_msgs_per_s": round(fresh_index_rate),
        "index_last_tenth_vs_fresh": round(indexed[-1] / fresh_index_rate, 2)
        if len(indexed) == 10 and fresh_index_rate
        else None,
    }
    shutil.rmtree(workdir / "data-control", ignore_errors=True)

    with head.open("ab") as out:
        out.write(tail)
    note(f"e2g ingest again after appending {messages - kept:,} messages ...")
    again, _ = run_ingest(data, head, workdir / "logs" / "ingest-again")
    result["incremental_s"] = round(again.seconds, 2)
    result["incremental_share"] = round(again.seconds / run.seconds, 3)
    stored_count, indexed_count = counts(settings_for(data))
    result["store_messages"] = stored_count
    result["index_documents"] = indexed_count
    problems = []
    if stored_count != messages:
        problems.append(f"the store holds {stored_count:,} of {messages:,} messages")
    if indexed_count != stored_count:
        problems.append(f"the index follows {indexed_count:,} of {stored_count:,}")

    note("search ...")
    asked = queries(args.repo, truth, args.seed)
    result["queries"] = asked
    result |= {
        key: round(value, 3)
        for key, value in search_latency(data, asked, args.rounds).items()
    }

    if not args.skip_match:
        cut = str(truth[int(len(truth) * (1 - INCREMENT))]["commit"])
        last = str(truth[-1]["commit"])
        note(f"e2g match up to {cut[:12]} ...")
        first, first_results = run_match(
            data, args.repo, [cut], workdir / "logs" / "m1"
        )
        note(f"e2g match up to {last[:12]} (incremental) ...")
        second, second_results = run_match(
            data, args.repo, [last], workdir / "logs" / "m2"
        )
        note("git's floor ...")
        patch_ids, floor = floor_patch_ids(args.repo, [last])
        rate, wrong, same_patch, found, outside = recall(
            truth, first_results + second_results, patch_ids
        )
        result |= {
            "match_commits": len(patch_ids),
            "match_s": round(first.seconds, 1),
            "match_incremental_s": round(second.seconds, 2),
            "floor_s": round(floor, 1),
            "match_vs_floor": round(first.seconds / floor, 2),
            "match_commits_per_s": round(len(first_results) / first.seconds, 1),
            "match_peak_rss_mb": round(
                max(first.peak_process_rss, first.peak_tree_rss) / 2**20
            ),
            "recall": round(rate, 4),
            "recall_found": found,
            "truth_outside_range": outside,
            "wrong_links": wrong,
            "wrong_links_same_patch": same_patch,
        }

    if args.skip_notmuch or shutil.which(ingest_bench.NOTMUCH) is None:
        result["notmuch"] = "skipped" + (
            "" if args.skip_notmuch else ": notmuch is not installed"
        )
    else:
        target = ingest_bench.Archive("scale", head, head, messages, size_of(head))
        measured, counted = ingest_bench.run_notmuch(target, workdir)
        result["notmuch_s"] = round(measured.seconds, 1)
        result["notmuch_indexed"] = counted
        result["e2g_vs_notmuch"] = round(
            (kept / run.seconds) / (messages / measured.seconds), 2
        )

    per_message = size_of(data) / messages
    # The whole run's rate, index included: the slower of the two sets the pace.
    last_rate = min([kept / run.seconds, *stored[-1:], *indexed[-1:]])
    result["projection_10M"] = {
        "ingest_hours": round(TEN_MILLION / last_rate / 3600, 1),
        "data_dir_gb": round(per_message * TEN_MILLION / 1e9, 1),
    }
    if "match_commits_per_s" in result:
        result["projection_10M"]["match_1.3M_commits_hours"] = round(  # type: ignore[index]
            KERNEL_COMMITS / float(result["match_commits_per_s"]) / 3600,
            1,  # type: ignore[arg-type]
        )

    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>28}  {value}")
    for problem in problems:
        note(f"FAILED: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
