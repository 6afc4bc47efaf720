"""Benchmark the full-text index: build rate, size on disk, query latency, vs SQLite FTS5.

    python benchmarks/search.py --docs 100000            # synthetic kernel-like mail
    python benchmarks/search.py --store DATA/e2g.sqlite3  # the messages of a real store

Builds the index the way `e2g ingest` does (one writer, a commit per batch), then runs
200 fixed realistic queries (a fixed seed) through `Fulltext.search`, and the same
queries, translated from the same parsed tree, through SQLite FTS5 over the same
documents and tokens, in the same run. Prints docs/s, bytes, p50/p99 and the ratios.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from datetime import time as clock
from pathlib import Path

from e2g.index import analysis
from e2g.index import query as ql
from e2g.index.fulltext import Fulltext, IndexDoc

SUBSYSTEMS = [
    "mm",
    "mm/slab",
    "mm/slub",
    "mm/page_alloc",
    "mm/hugetlb",
    "io_uring",
    "io_uring/net",
    "io_uring/poll",
    "io_uring/rw",
    "net",
    "net/ipv4",
    "net/ipv6",
    "net/sched",
    "tcp",
    "netfilter",
    "bpf",
    "libbpf",
    "selftests/bpf",
    "fs",
    "btrfs",
    "ext4",
    "xfs",
    "f2fs",
    "nfs",
    "fuse",
    "block",
    "blk-mq",
    "nvme",
    "nvme-pci",
    "scsi",
    "dm",
    "md/raid5",
    "x86/mm",
    "x86/entry",
    "arm64",
    "arm64: dts",
    "riscv",
    "powerpc/64s",
    "sched/fair",
    "sched/core",
    "locking/rwsem",
    "rcu",
    "perf",
    "perf tools",
    "tracing",
    "kvm",
    "kvm: x86",
    "drm/i915",
    "drm/amdgpu",
    "drm/msm",
    "usb: dwc3",
    "usb: gadget",
    "iio: adc",
    "pinctrl",
    "gpio",
    "spi",
    "i2c",
    "thermal",
    "cpufreq",
    "liburing",
    "test",
]
DIRECTORIES = {
    "mm": "mm",
    "io_uring": "io_uring",
    "net": "net",
    "tcp": "net/ipv4",
    "bpf": "kernel/bpf",
    "libbpf": "tools/lib/bpf",
    "selftests": "tools/testing/selftests",
    "fs": "fs",
    "btrfs": "fs/btrfs",
    "ext4": "fs/ext4",
    "xfs": "fs/xfs",
    "f2fs": "fs/f2fs",
    "nfs": "fs/nfs",
    "fuse": "fs/fuse",
    "block": "block",
    "blk-mq": "block",
    "nvme": "drivers/nvme/host",
    "nvme-pci": "drivers/nvme/host",
    "scsi": "drivers/scsi",
    "dm": "drivers/md",
    "md": "drivers/md",
    "x86": "arch/x86",
    "arm64": "arch/arm64",
    "riscv": "arch/riscv",
    "powerpc": "arch/powerpc",
    "sched": "kernel/sched",
    "locking": "kernel/locking",
    "rcu": "kernel/rcu",
    "perf": "tools/perf",
    "tracing": "kernel/trace",
    "kvm": "virt/kvm",
    "drm": "drivers/gpu/drm",
    "usb": "drivers/usb",
    "iio": "drivers/iio",
    "pinctrl": "drivers/pinctrl",
    "gpio": "drivers/gpio",
    "spi": "drivers/spi",
    "i2c": "drivers/i2c",
    "thermal": "drivers/thermal",
    "cpufreq": "drivers/cpufreq",
    "liburing": "src",
    "test": "test",
    "netfilter": "net/netfilter",
}
VERBS = [
    "fix",
    "add",
    "remove",
    "convert",
    "use",
    "avoid",
    "introduce",
    "drop",
    "handle",
    "simplify",
    "refactor",
    "rework",
    "support",
    "clean up",
    "move",
    "make",
    "don't",
]
OBJECTS = [
    "use after free in {f}",
    "memory leak in {f}",
    "NULL pointer dereference in {f}",
    "race between {f} and {g}",
    "deadlock in {f}",
    "error handling in {f}",
    "support for {F}",
    "unused variable in {f}",
    "locking in {f}",
    "refcount leak",
    "out-of-bounds read in {f}",
    "WARN_ON in {f}",
    "missing barrier in {f}",
    "helpers for {f}",
    "{F} flag",
    "kerneldoc for {f}",
    "overflow check in {f}",
    "sparse warning",
    "build failure with clang",
    "compile warning on 32-bit",
]
FUNCTIONS = [
    "kmem_cache_free",
    "io_poll_add",
    "io_recv",
    "tcp_sendmsg",
    "bio_endio",
    "blk_mq_run_hw_queue",
    "folio_put",
    "copy_to_user",
    "nvme_reset_ctrl",
    "btrfs_commit_transaction",
    "ext4_map_blocks",
    "sched_tick",
    "rcu_read_lock",
    "io_uring_setup",
    "napi_poll",
    "skb_free",
    "xa_store",
    "kvm_vcpu_run",
]
FLAGS = [
    "IORING_OP_SEND",
    "IORING_SETUP_SQPOLL",
    "MSG_ZEROCOPY",
    "O_DIRECT",
    "GFP_NOWAIT",
    "FOLL_PIN",
    "BPF_F_LOCK",
    "REQ_NOWAIT",
    "SO_REUSEPORT",
    "MADV_COLLAPSE",
]
FIRST = [
    "Jens",
    "Pavel",
    "Christoph",
    "Ming",
    "Jakub",
    "Eric",
    "David",
    "Andrii",
    "Alexei",
    "Greg",
    "Linus",
    "Thomas",
    "Peter",
    "Ingo",
    "Hannes",
    "Johannes",
    "Vlastimil",
    "Matthew",
    "Darrick",
    "Ted",
    "José",
    "Zoë",
    "Ævar",
    "Łukasz",
    "Jérôme",
    "Ilpo",
    "Uwe",
    "Krzysztof",
    "Geert",
    "Sebastian",
    "Frédéric",
    "Björn",
    "Søren",
]
LAST = [
    "Axboe",
    "Begunkov",
    "Hellwig",
    "Lei",
    "Kicinski",
    "Dumazet",
    "Miller",
    "Nakryiko",
    "Starovoitov",
    "Kroah-Hartman",
    "Torvalds",
    "Gleixner",
    "Zijlstra",
    "Molnar",
    "Reinecke",
    "Weiner",
    "Babka",
    "Wilcox",
    "Wong",
    "Ts'o",
    "Pérez",
    "Müller",
    "Kozlowski",
    "Järvinen",
    "Kleine-König",
    "Andrzej Siewior",
    "Glisse",
    "Töpel",
]
DOMAINS = [
    "kernel.dk",
    "gmail.com",
    "lst.de",
    "redhat.com",
    "kernel.org",
    "google.com",
    "suse.cz",
    "infradead.org",
    "intel.com",
    "linutronix.de",
    "linaro.org",
    "fb.com",
]
LISTS = [
    "linux-kernel.vger.kernel.org",
    "io-uring.vger.kernel.org",
    "netdev.vger.kernel.org",
    "linux-mm.kvack.org",
    "linux-block.vger.kernel.org",
    "bpf.vger.kernel.org",
    "linux-fsdevel.vger.kernel.org",
    "linux-arm-kernel.lists.infradead.org",
    "dri-devel.lists.freedesktop.org",
    "linux-usb.vger.kernel.org",
]
KINDS = ["patch"] * 45 + ["reply"] * 40 + ["cover"] * 8 + ["pull"] * 2 + ["other"] * 5
START = datetime(2019, 1, 1, tzinfo=UTC)
SPAN = (datetime(2026, 6, 30, tzinfo=UTC) - START).total_seconds()


def synthetic_docs(count: int, *, seed: int, bodies: bool) -> Iterator[IndexDoc]:
    """Kernel-like messages: "[PATCH v2 3/7] mm/slab: fix use after free in x"."""
    rng = random.Random(seed)
    people = [
        (f"{rng.choice(FIRST)} {rng.choice(LAST)}", rng.choice(DOMAINS))
        for _ in range(800)
    ]
    for seq in range(1, count + 1):
        name, domain = people[min(int(rng.paretovariate(1.2)) - 1, len(people) - 1)]
        subsystem = rng.choice(SUBSYSTEMS)
        kind = rng.choice(KINDS)
        version = rng.choice([1, 1, 1, 1, 2, 2, 3, 4, 5])
        title = _title(rng, subsystem)
        tag = f"PATCH v{version}" if version > 1 else "PATCH"
        if rng.random() < 0.15:
            tag += (
                " net-next" if subsystem.startswith(("net", "tcp", "bpf")) else " RFC"
            )
        subject = f"[{tag} {rng.randint(1, 9)}/9] {subsystem}: {title}"
        if kind == "reply":
            subject = "Re: " + subject
        elif kind == "pull":
            subject = f"[GIT PULL] {subsystem} fixes for 6.{rng.randint(1, 15)}-rc{rng.randint(1, 7)}"
        top = DIRECTORIES.get(
            subsystem.split("/")[0].split(":")[0].split(" ")[0], "lib"
        )
        files = tuple(
            f"{top}/{rng.choice(FUNCTIONS)}.c" for _ in range(rng.randint(1, 4))
        )
        date = START + timedelta(seconds=rng.random() * SPAN)
        yield IndexDoc(
            message_id=f"{seq}.{rng.getrandbits(40):x}@{domain}",
            subject=subject,
            author_name=name,
            author_email=f"{name.split()[-1].lower()}@{domain}",
            lists=tuple(rng.sample(LISTS, rng.choice([1, 1, 1, 2, 3]))),
            date=date,
            kind=kind,
            version=version,
            files=files if kind in ("patch", "pull") else (),
            body=_body(rng) if bodies else None,
            seq=seq,
        )


def _title(rng: random.Random, subsystem: str) -> str:
    thing = rng.choice(OBJECTS).format(
        f=rng.choice(FUNCTIONS), g=rng.choice(FUNCTIONS), F=rng.choice(FLAGS)
    )
    return f"{rng.choice(VERBS)} {thing}"


def _body(rng: random.Random) -> str:
    sentences = [f"This {_title(rng, '')} when the queue is full." for _ in range(12)]
    return " ".join(sentences)


def store_docs(path: Path, *, bodies: bool) -> Iterator[IndexDoc]:
    """The messages of a real e2g store, as the pipeline would index them."""
    from e2g.index.store import Store
    from e2g.ingest.pipeline import index_doc

    with Store(path) as store:
        for stored in store.iter_messages():
            yield index_doc(stored, body=store.body(stored.seq) if bodies else None)


def realistic_queries(count: int, *, seed: int) -> list[str]:
    """A fixed mix of what people type: words, prefixes, phrases, ranges, negations."""
    rng = random.Random(seed)

    def day() -> str:
        return (START + timedelta(days=rng.randint(0, 2500))).date().isoformat()

    makers = [
        lambda: rng.choice(FUNCTIONS),
        lambda: rng.choice(SUBSYSTEMS).split(" ")[0].rstrip(":") + ":",
        lambda: f"s:{rng.choice(FLAGS)}",
        lambda: (
            f'"{rng.choice(["use after free", "memory leak", "null pointer dereference", "error handling", "out-of-bounds read"])}"'
        ),
        lambda: f"f:{rng.choice(LAST).split()[0].lower()}",
        lambda: f"f:{rng.choice(FIRST)}",
        lambda: f"file:{rng.choice(list(DIRECTORIES.values()))}/",
        lambda: (
            f"file:{rng.choice(list(DIRECTORIES.values()))}/{rng.choice(FUNCTIONS)}.c"
        ),
        lambda: f"list:{rng.choice(LISTS).split('.')[0]}",
        lambda: "d:{}..{}".format(*sorted([day(), day()])),
        lambda: f"d:{day()}.." if rng.random() < 0.5 else f"d:..{day()}",
        lambda: (
            f"{rng.choice(SUBSYSTEMS).split(' ')[0].rstrip(':')}: is:patch -is:reply"
        ),
        lambda: (
            f"{rng.choice(VERBS).split()[0]} {rng.choice(FUNCTIONS)} v:{rng.randint(2, 4)}"
        ),
        lambda: f"is:cover f:{rng.choice(LAST).split()[0].lower()}",
        lambda: f"s:fix d:{2019 + rng.randint(0, 7)}",
        lambda: f"{rng.choice(FUNCTIONS)} -f:{rng.choice(LAST).split()[0].lower()}",
        lambda: "net-next is:patch",
        lambda: f"is:pull d:..{day()}",
    ]
    return [makers[n % len(makers)]() for n in range(count)]


# --- SQLite FTS5 over the same documents and tokens -----------------------------------

FTS_TOKENS = "unicode61 remove_diacritics 0 tokenchars '-./+:@_'"


def fts_build(docs: list[IndexDoc], path: Path) -> tuple[float, float]:
    """The same tokens (our analysis) in FTS5 columns, and the filters in a plain table."""
    db = sqlite3.connect(path)
    db.executescript(
        f"""
        CREATE VIRTUAL TABLE text USING fts5(words, parts, body_words, body_parts,
            author, files, lists, tokenize="{FTS_TOKENS}");
        CREATE TABLE meta(rowid INTEGER PRIMARY KEY, message_id TEXT UNIQUE, subject TEXT,
            date INTEGER, day INTEGER, kind TEXT, version INTEGER);
        CREATE INDEX meta_date ON meta(date);
        CREATE INDEX meta_kind ON meta(kind, date);
        """
    )
    started, cpu = time.perf_counter(), time.process_time()
    for number in range(0, len(docs), 10_000):
        rows = [_fts_row(doc) for doc in docs[number : number + 10_000]]
        db.executemany(
            "INSERT INTO text(rowid, words, parts, body_words, body_parts, author, files, lists) VALUES (?,?,?,?,?,?,?,?)",
            [r[0] for r in rows],
        )
        db.executemany("INSERT INTO meta VALUES (?,?,?,?,?,?,?)", [r[1] for r in rows])
        db.commit()
    elapsed = time.perf_counter() - started, time.process_time() - cpu
    db.close()
    return elapsed


def _fts_row(doc: IndexDoc) -> tuple[tuple[object, ...], tuple[object, ...]]:
    stamp = int(doc.date.timestamp()) if doc.date else 0
    words = " ".join(word for _, word in analysis.word_tokens(doc.subject))
    body = doc.body or ""
    text = (
        doc.seq,
        words,
        " ".join(analysis.phrase_words(doc.subject)),
        " ".join(word for _, word in analysis.word_tokens(body)),
        " ".join(analysis.phrase_words(body)),
        " ".join(analysis.author_tokens(doc.author_name, doc.author_email)),
        " ".join(analysis.path_tokens(doc.files)),
        " ".join(analysis.list_tokens(doc.lists)),
    )
    meta = (
        doc.seq,
        doc.message_id,
        doc.subject,
        stamp,
        stamp // 86_400,
        doc.kind,
        doc.version,
    )
    return text, meta


def fts_search(
    db: sqlite3.Connection, query: str, limit: int = 20
) -> tuple[list[str], int]:
    """The same parsed query as SQL: one FTS5 MATCH for the text clauses (negated ones
    with FTS5's NOT), joined to a plain table for kind, version and date."""
    positive, negative, where, params = [], [], [], []
    for clause in ql.parse_query(query).clauses:
        negated = isinstance(clause, ql.Not)
        inner = clause.clause if isinstance(clause, ql.Not) else clause
        if isinstance(inner, ql.Match):
            (negative if negated else positive).append(f"({_fts_match(inner)})")
            continue
        sql, values = _fts_clause(inner)
        where.append(f"NOT ({sql})" if negated else sql)
        params += values
    source = "meta"
    if positive:
        match = " AND ".join(positive)
        if negative:
            match = f"({match}) NOT ({' OR '.join(negative)})"
        source = "text JOIN meta ON meta.rowid = text.rowid"
        where.insert(0, "text MATCH ?")
        params.insert(0, match)
    elif negative:
        where.append("meta.rowid NOT IN (SELECT rowid FROM text WHERE text MATCH ?)")
        params.append(" OR ".join(negative))
    condition = " AND ".join(where) or "1"
    total = db.execute(
        f"SELECT count(*) FROM {source} WHERE {condition}", params
    ).fetchone()[0]
    rows = db.execute(
        f"SELECT message_id FROM {source} WHERE {condition} ORDER BY meta.date DESC LIMIT ?",
        [*params, limit],
    ).fetchall()
    return [row[0] for row in rows], total


def _fts_clause(
    clause: ql.DateRange | ql.KindIs | ql.VersionIs,
) -> tuple[str, list[object]]:
    if isinstance(clause, ql.KindIs):
        return "kind = ?", [clause.kind]
    if isinstance(clause, ql.VersionIs):
        return "version = ?", [clause.version]
    low = _day(clause.start) if clause.start else 1
    high = _day(clause.end) + 86_399 if clause.end else 2**62
    return "meta.date BETWEEN ? AND ?", [low, high]


def _fts_match(clause: ql.Match) -> str:
    def quoted(token: str) -> str:
        return '"' + token.replace('"', '""') + '"'

    if clause.field is ql.Field.FROM:  # as fulltext._author_word: whole, or its parts
        words = []
        for word in clause.value.split():
            folded = analysis.fold(word).strip()
            parts = analysis.NAME_WORD.findall(folded)
            each = " AND ".join(f"author : {quoted(part)}" for part in parts)
            whole = f"author : {quoted(folded)}"
            multi = len(parts) > 1 and "@" not in folded
            words.append(f"({whole} OR ({each}))" if multi else whole)
        return " AND ".join(words)
    if clause.field is ql.Field.FILE:
        path = analysis.clean_path(clause.value)
        return f"files : ({quoted(path)} OR {quoted(path + '/')})"
    if clause.field is ql.Field.LIST:
        return f"lists : {quoted(analysis.fold(clause.value))}"
    subject_only = clause.field is ql.Field.SUBJECT
    if clause.phrase:
        phrase = quoted(" ".join(analysis.phrase_words(clause.value)))
        return (
            f"parts : {phrase}" if subject_only else f"{{parts body_parts}} : {phrase}"
        )
    columns = "words" if subject_only else "{words body_words}"
    return " AND ".join(
        f"{columns} : {quoted(w)}" for w in analysis.query_words(clause.value)
    )


def _day(day: object) -> int:
    return int(datetime.combine(day, clock(0), UTC).timestamp())  # type: ignore[call-overload]


# --- measuring ------------------------------------------------------------------------


def build_index(
    directory: Path, docs: list[IndexDoc], batch: int
) -> tuple[float, float]:
    """Index as `e2g ingest` does: one writer per batch, commit, repeat."""
    fulltext = Fulltext.open(directory)
    started, cpu = time.perf_counter(), time.process_time()
    for number in range(0, len(docs), batch):
        with fulltext.writer() as writer:
            for doc in docs[number : number + batch]:
                writer.add(doc)
            writer.commit()
    elapsed = time.perf_counter() - started, time.process_time() - cpu
    fulltext.close()
    return elapsed


def latencies(run: object, queries: list[str]) -> list[float]:
    timings = []
    for query in queries:
        started = time.perf_counter()
        run(query)  # type: ignore[operator]
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(fraction * len(ordered)), len(ordered) - 1)]


def size_of(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(item.stat().st_size for item in path.rglob("*") if item.is_file())


def end_to_end(directory: Path, query: str) -> float:
    """Wall time of a fresh process that imports e2g, opens the index and searches."""
    code = (
        "import sys; from pathlib import Path; from e2g.index.fulltext import Fulltext; "
        "f = Fulltext.open(Path(sys.argv[1]), create=False); f.search(sys.argv[2])"
    )
    runs = []
    for _ in range(5):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code, str(directory), query], check=True)
        runs.append(time.perf_counter() - started)
    return statistics.median(runs)


def report(label: str, timings: list[float]) -> tuple[float, float]:
    p50, p99 = percentile(timings, 0.50), percentile(timings, 0.99)
    print(
        f"{label:<28} p50 {p50:7.2f} ms   p99 {p99:7.2f} ms   max {max(timings):7.2f} ms"
    )
    return p50, p99


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100_000, help="synthetic documents")
    parser.add_argument("--store", type=Path, help="index this e2g store instead")
    parser.add_argument("--bodies", action="store_true", help="index bodies too")
    parser.add_argument("--batch", type=int, default=10_000, help="docs per commit")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2019)
    parser.add_argument(
        "--keep", type=Path, help="build here and keep it (else a temp dir)"
    )
    options = parser.parse_args()

    source = (
        store_docs(options.store, bodies=options.bodies)
        if options.store
        else synthetic_docs(options.docs, seed=options.seed, bodies=options.bodies)
    )
    docs = list(source)
    work = options.keep or Path(tempfile.mkdtemp(prefix="e2g-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    index_dir, fts_path = work / "fulltext", work / "fts5.sqlite3"
    shutil.rmtree(index_dir, ignore_errors=True)
    fts_path.unlink(missing_ok=True)
    print(
        f"{len(docs):,} documents ({'store ' + str(options.store) if options.store else 'synthetic'}), bodies {'on' if options.bodies else 'off'}, batch {options.batch:,}"
    )

    builds = {
        "whoosh": (build_index(index_dir, docs, options.batch), index_dir),
        "fts5": (fts_build(docs, fts_path), fts_path),
    }
    for name, ((wall, cpu), path) in builds.items():
        print(
            f"build  {name:<7}{len(docs) / wall:9,.0f} docs/s wall "
            f"{len(docs) / cpu:9,.0f} docs/CPU-s  {size_of(path) / 2**20:7.1f} MiB"
        )

    queries = realistic_queries(options.queries, seed=options.seed)
    fulltext = Fulltext.open(index_dir, create=False)
    for query in queries[:20]:  # warm the OS cache and Whoosh's column readers
        fulltext.search(query)
    database = sqlite3.connect(fts_path)
    by_date = report("whoosh  sort=date", latencies(fulltext.search, queries))
    report(
        "whoosh  sort=relevance",
        latencies(lambda q: fulltext.search(q, sort="relevance"), queries),
    )
    fts = report(
        "fts5    sort=date", latencies(lambda q: fts_search(database, q), queries)
    )
    print(
        f"ratio whoosh/fts5 (date)      p50 {by_date[0] / fts[0]:5.1f}x   p99 {by_date[1] / fts[1]:5.1f}x"
    )
    differ = [q for q in queries if fulltext.search(q)[1] != fts_search(database, q)[1]]
    print(
        f"same total hits in both engines: {len(queries) - len(differ)}/{len(queries)} queries"
    )
    for query in differ[:5]:
        print(
            f"  differs: {query!r}: whoosh {fulltext.search(query)[1]}, fts5 {fts_search(database, query)[1]}"
        )
    slow = sorted(queries, key=lambda q: -latencies(fulltext.search, [q])[0])[:5]
    print("slowest whoosh queries:", "; ".join(slow))
    print(
        f"end to end (new process: import, open, search) {end_to_end(index_dir, 'mm: is:patch') * 1000:.0f} ms"
    )
    fulltext.close()
    database.close()
    if not options.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
