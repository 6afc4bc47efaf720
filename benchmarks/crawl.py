"""Every page answers: serve a real archive and repository and request every kind of page.

    python benchmarks/crawl.py --set sparse
    python benchmarks/crawl.py --set liburing --archive IO_URING_EPOCH.git --repo LIBURING
    python benchmarks/crawl.py --repo REPO --data-dir DIR [--archive PATH ...]

`--set sparse` builds its world from `../shared/corpus/sparse` (the bundle cloned, the
mbox ingested, HEAD matched) in a temporary directory; `--set liburing` needs the
io-uring public-inbox epoch and a liburing clone (fetched as the corpus README says).
With `--data-dir`, a store already there is used as it is, else the archives are
ingested and HEAD matched first.

Then `e2g serve` runs in its own process on a free loopback port and is asked for:
every merge commit and `--commits` other commits (page and API twin each), `--threads`
threads (page and API twin), the way back of `--mails` mails (`/api/v1/messages/ID`,
which names the commit that applied a patch), the raw download of a few, the line and
token blame of `--files` files (pages and API twins, a second page where the file has
one), `/`, `/audit`, `/stats` by every grouping with their charts and API twins,
search pages and `/api/v1/search` with every query prefix of the query language and
paging, the API docs, the patch queue (`/patches` and `/api/v1/patches` with every
state, `all`, a list, an author, a moment, a query and `flat`, several pages deep;
`/patches.atom` and `/events.atom` with filters; `/api/v1/events`; `/series/ID` and
`/api/v1/series/ID` for `--series` series), the tree's token counts (`/tree/HEAD` and
every directory of HEAD, page and API twin, and the `/tree/` path of `--files` files,
which goes to their tokens), and every page that later work adds, where the server
has it (`/metrics`; one answering 404 is counted as absent, not as a failure).

Prints the count per status and per page kind, the slowest requests, and exits 1 on
any 5xx, any request that fails to answer, or one slower than `--slow` seconds (30).
"""

from __future__ import annotations

import argparse
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
SPARSE = CORPUS / "sparse"
# Pages later work adds, listed here until they land: absent (404) is no failure.
OPTIONAL: tuple[str, ...] = ()
# The queue's kinds: each asks for a stored message or a list, so a 404 is a finding.
QUEUE_KINDS = (
    "patches",
    "api-patches",
    "patches-atom",
    "events-atom",
    "api-events",
    "series",
    "api-series",
    # ... and so does each of lore's and Patchwork's URLs and the metrics' pages.
    "lore",
    "patchwork",
    "metrics",
    "metrics-svg",
    "api-metrics",
)
# The tree's token counts (issue 37): each asks for HEAD or a directory of it.
TREE_KINDS = ("tree", "api-tree")
# The patch queue's states (e2g.api.queue.states.STATES) and `all`.
STATES = (
    "new",
    "under-review",
    "reviewed",
    "rejected",
    "not-applied",
    "untracked",
    "superseded",
    "applied",
    "all",
)
# One query per prefix and operator of the query language (e2g help query).
QUERIES = (
    "fix",
    '"io_uring: fix"',
    "s:fix",
    "subject:cleanup",
    "f:jens",
    "from:axboe",
    "file:src/",
    "file:src/queue.c",
    "file:sr*",
    "list:io-uring",
    "d:2021-01-01..2021-06-30",
    "d:2022-01-01..",
    "is:patch",
    "is:cover",
    "is:pull",
    "is:reply",
    "has:diff",
    "v:2",
    "fix -is:reply",
    "fix OR cleanup",
    "fix AND test",
    "NOT fix",
    "(fix OR add) is:patch",
    "\u00e9t\u00e9 \u2603",
    ")(",
)


class Answer(NamedTuple):
    kind: str
    url: str
    status: int | str  # an HTTP status, or what went wrong
    seconds: float


def git(repo: Path, *args: str) -> list[str]:
    found = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    )
    return found.stdout.split()


def e2g(data_dir: Path, *args: str) -> None:
    env = {**os.environ, "E2G_DATA_DIR": str(data_dir)}
    subprocess.run([sys.executable, "-m", "e2g", "-q", *args], check=True, env=env)


def prepare(
    data_dir: Path, repo: Path, archives: list[str], *, jobs: int
) -> tuple[float, float]:
    """Ingest and match when the data dir holds no store yet: (ingest s, match s)."""
    if (data_dir / "store.sqlite3").exists() or not archives:
        return 0.0, 0.0
    start = time.perf_counter()
    e2g(data_dir, "ingest", "-j", str(jobs), *archives)
    middle = time.perf_counter()
    e2g(data_dir, "match", "HEAD", "-C", str(repo), "-j", str(jobs))
    return middle - start, time.perf_counter() - middle


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def serve(data_dir: Path, repo: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, "E2G_DATA_DIR": str(data_dir)}
    with log.open("wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "e2g", "serve", "--host", "127.0.0.1"]
            + ["--port", str(port), "-C", str(repo)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"crawl: e2g serve exited {server.returncode}: see {log}")
        try:
            with urllib.request.urlopen(base + "/static/style.css", timeout=5):
                return server, base
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit("crawl: e2g serve did not answer within 60 s")


def quoted(text: str) -> str:
    return urllib.parse.quote(text, safe="@")


class Stored(NamedTuple):
    message_id: str
    kind: str
    list: str
    author: str  # the sender's address


def stored_messages(data_dir: Path) -> list[Stored]:
    """Every stored message, read through the store's queries."""
    from e2g import config
    from e2g.api.basis import open_store

    store = open_store(config.resolve(data_dir=data_dir))
    try:
        return [
            Stored(
                found.message_id,
                found.kind,
                (found.lists[0] if found.lists else found.list_id) or "",
                found.author_email,
            )
            for found in store.iter_messages()
        ]
    finally:
        store.close()


def queue_plan(
    messages: list[Stored], rnd: random.Random, series: int
) -> list[tuple[str, str]]:
    """The patch queue's pages: /patches and its JSON twin with each filter and
    several pages deep, the feeds with filters, the events, and `series` series."""
    posted = [one for one in messages if one.kind in ("patch", "cover")]
    lists = sorted({one.list for one in posted if one.list})
    authors = sorted({one.author for one in posted if one.author})
    filters = [f"state={state}" for state in STATES]
    filters += [f"state=all&list={quoted(name)}" for name in lists[:3]]
    filters += [
        f"state=all&from={quoted(who)}"
        for who in rnd.sample(authors, min(3, len(authors)))
    ]
    filters += [
        "state=all&since=2020-01-01",
        "state=all&since=30+days+ago",
        "state=all&until=2015-01-01",
        "state=all&q=fix",
        "q=is%3Apatch+fix",
        "state=all&flat=1",
        "state=new,reviewed&flat=1&since=2010-01-01",
        "state=bogus",  # a 400, not a 5xx
    ]
    urls: list[tuple[str, str]] = []
    for query in filters:
        urls += [
            ("patches", f"/patches?{query}"),
            ("api-patches", f"/api/v1/patches?{query}"),
            ("patches-atom", f"/patches.atom?{query}"),
        ]
    for page in (2, 3, 5, 10, 2000):
        urls += [
            ("patches", f"/patches?state=all&page={page}"),
            ("patches", f"/patches?state=all&flat=1&n=200&page={page}"),
            ("api-patches", f"/api/v1/patches?state=all&limit=100&offset={page * 100}"),
        ]
    events = ["since=0", "since=5", "since=2020-01-01", "since=0&limit=1000"]
    events += [f"list={quoted(name)}" for name in lists[:2]]
    events += [f"from={quoted(who)}" for who in authors[:2]]
    for query in events:
        urls += [
            ("api-events", f"/api/v1/events?{query}"),
            ("events-atom", f"/events.atom?{query}"),
        ]
    urls.append(("events-atom", "/events.atom"))
    for one in rnd.sample(posted, min(series, len(posted))):
        urls += [
            ("series", f"/series/{quoted(one.message_id)}"),
            ("api-series", f"/api/v1/series/{quoted(one.message_id)}"),
        ]
    return urls


def plan(
    repo: Path, data_dir: Path, rnd: random.Random, args: argparse.Namespace
) -> list[tuple[str, str]]:
    """Every (kind, URL) to request, in a fixed order for one seed."""
    urls: list[tuple[str, str]] = [
        ("front", "/"),
        ("api-docs", "/api/v1/"),
        ("audit", "/audit"),
        ("audit", "/audit?strict=true"),
        ("api-audit", "/api/v1/audit"),
    ]
    for by in ("dir", "list", "year", "method", "tree"):
        urls += [
            ("stats", f"/stats?by={by}"),
            ("stats-svg", f"/stats.svg?by={by}"),
            ("api-stats", f"/api/v1/stats?by={by}"),
        ]
    urls.append(("stats", "/stats?by=dir&depth=3"))
    merges = git(repo, "rev-list", "--merges", "HEAD")
    others = git(repo, "rev-list", "--no-merges", "HEAD")
    for sha in merges:
        urls += [("merge", f"/commit/{sha}"), ("api-merge", f"/api/v1/commits/{sha}")]
    for sha in rnd.sample(others, min(args.commits, len(others))):
        urls += [("commit", f"/commit/{sha}"), ("api-commit", f"/api/v1/commits/{sha}")]
    urls.append(("commit", "/commit/HEAD?order=series"))
    messages = stored_messages(data_dir)
    # Patches and covers first among the threads: their pages carry the way back.
    posted = [one.message_id for one in messages if one.kind in ("patch", "cover")]
    rest = [one.message_id for one in messages if one.kind not in ("patch", "cover")]
    chosen = rnd.sample(posted, min(args.threads // 2, len(posted)))
    chosen += rnd.sample(rest, min(args.threads - len(chosen), len(rest)))
    for mid in chosen:
        urls += [
            ("thread", f"/thread/{quoted(mid)}"),
            ("api-thread", f"/api/v1/threads/{quoted(mid)}"),
        ]
    for mid in rnd.sample(posted, min(args.mails, len(posted))):
        urls.append(("way-back", f"/api/v1/messages/{quoted(mid)}"))
    for mid in chosen[:10]:
        urls.append(("raw", f"/raw/{quoted(mid)}"))
    files = [
        path
        for path in git(repo, "ls-tree", "-r", "--name-only", "HEAD")
        if path.endswith((".c", ".h", ".py", ".sh", ".md", "Makefile"))
    ]
    for path in rnd.sample(files, min(args.files, len(files))):
        for kind in ("blame", "tokens"):
            urls += [
                (kind, f"/{kind}/HEAD/{quoted(path)}"),
                (f"api-{kind}", f"/api/v1/{kind}/HEAD/{quoted(path)}"),
                (kind, f"/{kind}/HEAD/{quoted(path)}?page=2"),
            ]
        urls += [
            ("tokens", f"/tokens/HEAD/{quoted(path)}?by={by}")
            for by in ("author", "age")
        ]
    # The tree's token counts: every directory (page and API twin), and a file's
    # path, which goes to its tokens.
    urls += [("tree", "/tree/HEAD"), ("api-tree", "/api/v1/tree/HEAD")]
    for directory in git(repo, "ls-tree", "-r", "-d", "--name-only", "HEAD"):
        urls += [
            ("tree", f"/tree/HEAD/{quoted(directory)}"),
            ("api-tree", f"/api/v1/tree/HEAD/{quoted(directory)}"),
        ]
    for path in rnd.sample(files, min(args.files, len(files))):
        urls.append(("tree", f"/tree/HEAD/{quoted(path)}"))
    for query in QUERIES:
        text = urllib.parse.quote(query)
        urls += [
            ("search", f"/search?q={text}"),
            ("search", f"/search?q={text}&page=2&sort=relevance"),
            ("api-search", f"/api/v1/search?q={text}&limit=20&offset=20"),
        ]
    urls.append(("search", "/search?q=fix&page=500"))
    urls += queue_plan(messages, rnd, args.series)
    urls += clients_plan(messages, rnd, args.series)
    urls += metrics_plan()
    urls += [("optional", path) for path in OPTIONAL]
    return urls


def clients_plan(
    messages: list[Stored], rnd: random.Random, count: int
) -> list[tuple[str, str]]:
    """What the clients people already use ask for: lore's URL shapes (b4, a pasted
    link) for `count` patches and threads, and Patchwork's API (git-pw, pwclient)
    with its filters and pages, `count` patches and series by id."""
    from e2g.mail.lists import short_name

    urls = [
        ("patchwork", "/api/"),
        ("patchwork", "/api/1.3/"),
        ("patchwork", "/api/1.3/projects/"),
        ("patchwork", "/api/1.3/people/"),
        ("patchwork", "/api/1.3/events/"),
        ("patchwork", "/api/1.3/covers/"),
        ("patchwork", "/api/1.3/series/?per_page=50"),
        ("patchwork", "/api/1.3/series/?per_page=50&page=2"),
    ]
    for state in ("new", "accepted", "superseded", "not-applicable", "deferred"):
        urls.append(("patchwork", f"/api/1.3/patches/?state={state}&per_page=30"))
    for page in (1, 2, 5):
        urls.append(("patchwork", f"/api/1.3/patches/?per_page=100&page={page}"))
    lists = sorted({one.list for one in messages if one.list})
    for name in lists[:3]:
        short = short_name(name)
        urls += [
            ("patchwork", f"/api/1.3/patches/?project={short}&state=new"),
            ("lore", f"/{short}/?q=fix&x=m"),
            ("lore", f"/{short}/?q=fix"),
        ]
    posted = [one for one in messages if one.kind in ("patch", "cover") and one.list]
    for one in rnd.sample(posted, min(count, len(posted))):
        mid, short = quoted(one.message_id), short_name(one.list)
        urls += [
            ("lore", f"/{short}/{mid}/"),
            ("lore", f"/{short}/{mid}/raw"),
            ("lore", f"/{short}/{mid}/t.mbox.gz"),
            ("lore", f"/all/{mid}/T/"),
            ("patchwork", f"/api/1.3/patches/?msgid={mid}"),
        ]
    # Patchwork's ids are e2g's: a patch's is its message seq, a series' its row.
    ids = range(1, len(messages) + 1)
    for number in rnd.sample(ids, min(count, len(ids))):
        urls += [
            ("patchwork-id", f"/api/1.3/patches/{number}/"),
            ("patchwork-id", f"/api/1.3/patches/{number}/mbox/"),
            ("patchwork-id", f"/api/1.3/covers/{number}/"),
        ]
    for number in range(1, count + 1):
        urls += [
            ("patchwork-id", f"/api/1.3/series/{number}/"),
            ("patchwork-id", f"/api/1.3/series/{number}/mbox/"),
        ]
    return urls


def metrics_plan() -> list[tuple[str, str]]:
    """The review metrics' page, chart and JSON twin by each period and grouping."""
    urls = [("metrics", "/metrics"), ("api-metrics", "/api/v1/metrics")]
    for by in ("month", "quarter", "year"):
        for group in ("", "dir", "person", "list"):
            query = f"by={by}&group={group}"
            urls += [
                ("metrics", f"/metrics?{query}"),
                ("metrics-svg", f"/metrics.svg?{query}"),
                ("api-metrics", f"/api/v1/metrics?{query}"),
            ]
    return urls


def fetch(base: str, kind: str, url: str, timeout: float) -> Answer:
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(base + url, timeout=timeout) as response:
            response.read()
            status: int | str = response.status
    except urllib.error.HTTPError as error:
        status = error.code
    except Exception as error:  # noqa: BLE001 - every failure is a finding
        status = type(error).__name__
    return Answer(kind, url, status, time.perf_counter() - start)


def is_bad(answer: Answer, slow: float) -> bool:
    if answer.kind == "optional" and answer.status == 404:
        return False
    return (
        not isinstance(answer.status, int)
        or (answer.kind in (*QUEUE_KINDS, *TREE_KINDS) and answer.status == 404)
        or answer.status >= 500
        or answer.seconds > slow
    )


def report(name: str, answers: list[Answer], merges: int, slow: float) -> bool:
    by_status = Counter(str(answer.status) for answer in answers)
    by_kind: dict[str, Counter[str]] = defaultdict(Counter)
    for answer in answers:
        by_kind[answer.kind][str(answer.status)] += 1
    bad = [answer for answer in answers if is_bad(answer, slow)]
    for kind in sorted(by_kind):
        counts = ", ".join(
            f"{status}: {n}" for status, n in sorted(by_kind[kind].items())
        )
        print(f"  {kind:<11} {counts}")
    for answer in sorted(answers, key=lambda a: -a.seconds)[:5]:
        print(f"  slowest {answer.seconds:6.2f} s  {answer.status}  {answer.url[:90]}")
    for answer in bad[:20]:
        print(f"  FAILED {answer.status} {answer.seconds:.1f} s {answer.url[:100]}")
    statuses = ", ".join(f"{status}: {n}" for status, n in sorted(by_status.items()))
    print(
        f"crawl {name}: {len(answers)} requests ({merges} merges): {statuses}; "
        f"{len(bad)} 5xx, errors or over {slow:.0f} s"
    )
    return not bad


def crawl(name: str, data_dir: Path, repo: Path, args: argparse.Namespace) -> bool:
    rnd = random.Random(args.seed)
    urls = plan(repo, data_dir, rnd, args)
    server, base = serve(data_dir, repo, data_dir.parent / f"serve-{name}.log")
    start = time.perf_counter()
    try:
        with ThreadPoolExecutor(args.clients) as pool:
            answers = list(pool.map(lambda one: fetch(base, *one, args.slow + 5), urls))
    finally:
        server.terminate()
        server.wait(timeout=30)
    elapsed = time.perf_counter() - start
    print(
        f"crawl {name}: {len(urls)} requests in {elapsed:.1f} s, {args.clients} clients"
    )
    merges = sum(1 for answer in answers if answer.kind == "merge")
    return report(name, answers, merges, args.slow)


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--set", choices=("sparse", "liburing"), help="a named real set"
    )
    parser.add_argument("--repo", type=Path, help="the git repository to serve")
    parser.add_argument("--data-dir", type=Path, help="e2g's data dir (built if empty)")
    parser.add_argument("--archive", action="append", default=[], help="to ingest")
    parser.add_argument("--commits", type=int, default=300)
    parser.add_argument("--threads", type=int, default=150)
    parser.add_argument("--mails", type=int, default=100)
    parser.add_argument("--files", type=int, default=15)
    parser.add_argument("--series", type=int, default=50)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument(
        "--slow", type=float, default=30.0, help="seconds a page may take"
    )
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=20261205)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    with tempfile.TemporaryDirectory(prefix="e2g-crawl-") as scratch:
        root = Path(scratch)
        repo, archives = args.repo, list(args.archive)
        if args.set == "sparse":
            if not SPARSE.is_dir():
                print(f"crawl: skipped, {SPARSE} is absent")
                return 0
            if repo is None:
                repo = root / "sparse"
                subprocess.run(
                    ["git", "clone", "-q", str(SPARSE / "sparse.bundle"), str(repo)],
                    check=True,
                    capture_output=True,
                )
            archives = archives or [str(SPARSE / "linux-sparse.mbox.gz")]
        elif (
            args.set == "liburing"
            and args.data_dir is None
            and (repo is None or not archives)
        ):
            print("crawl: --set liburing needs --repo and --archive (or --data-dir)")
            return 2
        if repo is None:
            print("crawl: --repo (or --set sparse) is required")
            return 2
        data_dir = args.data_dir or root / "data"
        took = prepare(data_dir, repo, archives, jobs=args.jobs)
        if any(took):
            print(f"crawl: ingest {took[0]:.1f} s, match {took[1]:.1f} s")
        ok = crawl(args.set or repo.name, data_dir, repo, args)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
