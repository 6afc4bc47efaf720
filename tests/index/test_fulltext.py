"""The full-text index (e2g.index.fulltext): prefixes, ranking, updates, crashes, rebuild."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from e2g.errors import IndexError_, QueryError
from e2g.index.fulltext import MERGE_FACTOR, Found, Fulltext, IndexDoc, rebuild


def make_doc(subject: str, **fields: object) -> IndexDoc:
    values: dict[str, object] = {
        "subject": subject,
        "author_name": "Jens Axboe",
        "author_email": "axboe@kernel.dk",
        "lists": ("io-uring.vger.kernel.org",),
        "date": datetime(2020, 1, 1, tzinfo=UTC),
        "kind": "patch",
        "version": 1,
        "files": (),
        "body": None,
    }
    values.update(fields)
    return IndexDoc(**values)  # type: ignore[arg-type]


DOCS = (
    make_doc(
        "[PATCH v2 1/3] mm/slab: fix use after free in kmem_cache_free",
        lists=("linux-mm.kvack.org",),
        date=datetime(2019, 3, 10, 12, 0, tzinfo=UTC),
        version=2,
        files=("mm/slab.c", "include/linux/slab.h"),
        seq=1,
        diff=True,
    ),
    make_doc(
        "[PATCH net-next] io_uring: add support for IORING_OP_SEND",
        author_name="Pavel Begunkov",
        author_email="asml.silence@gmail.com",
        lists=("io-uring.vger.kernel.org", "netdev.vger.kernel.org"),
        date=datetime(2020, 5, 1, tzinfo=UTC),
        files=("io_uring/net.c",),
        seq=2,
        diff=True,
    ),
    make_doc(
        "Re: [PATCH v2 1/3] mm/slab: fix use after free in kmem_cache_free",
        author_name="José Pérez",
        author_email="jose@example.org",
        lists=("linux-mm.kvack.org",),
        date=datetime(2019, 3, 11, 8, 0, tzinfo=UTC),
        kind="reply",
        version=2,
        body="Looks good to me.",
        seq=3,
    ),
    make_doc(
        "[PATCH 0/3] mm: cleanup for slab",
        author_name="Kernel Test Robot",
        author_email="lkp@intel.com",
        lists=("linux-mm.kvack.org",),
        date=datetime(2019, 6, 30, 23, 30, tzinfo=UTC),
        kind="cover",
        seq=4,
    ),
    make_doc(
        "[GIT PULL] io_uring fixes for 5.10-rc1",
        date=datetime(2020, 10, 20, tzinfo=UTC),
        kind="pull",
        body="This fixes a use after free in the poll path, and a leak.",
        seq=5,
    ),
    make_doc(
        "[PATCH] x86/mm: random fix",
        author_name="张三",
        author_email="zhang@example.cn",
        lists=("linux-kernel.vger.kernel.org",),
        date=None,
        seq=6,
    ),
    make_doc(
        "Re: [PATCH] io_uring/poll: KASAN: use-after-free Read in io_poll",
        author_name="patchwork-bot+netdevbpf",
        author_email="patchwork-bot+netdevbpf@kernel.org",
        date=datetime(2021, 1, 1, tzinfo=UTC),
        kind="reply",
        seq=7,
        diff=True,  # a reply carrying a diff: is:reply, and has:diff
    ),
)


# The index keys documents by store seq; the tests on DOCS name them by Message-ID.
LABELS = dict(
    enumerate(
        (
            "slab-v2@kernel.dk",
            "send@gmail.com",
            "review@example.org",
            "cover@intel.com",
            "pull@kernel.dk",
            "fair@example.cn",
            "bot@kernel.org",
        ),
        start=1,
    )
)
assert sorted(LABELS) == [doc.seq for doc in DOCS]


def build(directory: Path, docs: tuple[IndexDoc, ...] = DOCS) -> Fulltext:
    fulltext = Fulltext.open(directory)
    with fulltext.writer() as writer:
        for doc in docs:
            writer.add(doc)
        writer.commit()
    return fulltext


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Fulltext:
    return build(tmp_path_factory.mktemp("fulltext") / "index")


def numbers(fulltext: Fulltext, query: str, **options: object) -> list[int]:
    """The seqs of every hit of `query`, in order."""
    hits, total = fulltext.search(query, limit=500, **options)  # type: ignore[arg-type]
    assert total == len(hits)
    return [hit.seq for hit in hits]


def ids(fulltext: Fulltext, query: str, **options: object) -> list[str]:
    return [LABELS[seq] for seq in numbers(fulltext, query, **options)]


def named(hits: list[Found]) -> list[str]:
    return [LABELS[hit.seq] for hit in hits]


def found(fulltext: Fulltext, query: str) -> set[str]:
    return set(ids(fulltext, query))


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("s:io_uring", {"send@gmail.com", "pull@kernel.dk", "bot@kernel.org"}),
        ("subject:kmem_cache_free", {"slab-v2@kernel.dk", "review@example.org"}),
        ("s:uring", {"send@gmail.com", "pull@kernel.dk", "bot@kernel.org"}),
        ("f:axboe", {"slab-v2@kernel.dk", "pull@kernel.dk"}),
        ("f:Jens", {"slab-v2@kernel.dk", "pull@kernel.dk"}),
        ("from:AXBOE@kernel.dk", {"slab-v2@kernel.dk", "pull@kernel.dk"}),
        ('f:"jens axboe"', {"slab-v2@kernel.dk", "pull@kernel.dk"}),
        ("f:asml.silence", {"send@gmail.com"}),
        ("f:gmail.com", {"send@gmail.com"}),
        ("file:mm/", {"slab-v2@kernel.dk"}),
        ("file:mm/slab.c", {"slab-v2@kernel.dk"}),
        ("file:mm", {"slab-v2@kernel.dk"}),
        ("file:slab.h", {"slab-v2@kernel.dk"}),
        ("file:include/linux/", {"slab-v2@kernel.dk"}),
        ("file:io_uring/net.c", {"send@gmail.com"}),
        ("file:mm/slub.c", set()),
        ("file:mm/sla*", {"slab-v2@kernel.dk"}),  # a prefix of a path component
        ("file:io_uring/ne*", {"send@gmail.com"}),
        ("file:sla*", {"slab-v2@kernel.dk"}),  # of a base name
        ("file:mm/slu*", set()),
        (
            "list:linux-mm.kvack.org",
            {"slab-v2@kernel.dk", "review@example.org", "cover@intel.com"},
        ),
        ("l:linux-mm", {"slab-v2@kernel.dk", "review@example.org", "cover@intel.com"}),
        ("is:patch", {"slab-v2@kernel.dk", "send@gmail.com", "fair@example.cn"}),
        ("is:cover", {"cover@intel.com"}),
        ("is:pull", {"pull@kernel.dk"}),
        ("is:reply", {"review@example.org", "bot@kernel.org"}),
        ("has:diff", {"slab-v2@kernel.dk", "send@gmail.com", "bot@kernel.org"}),
        ("has:diff -is:reply", {"slab-v2@kernel.dk", "send@gmail.com"}),
        ("v:2", {"slab-v2@kernel.dk", "review@example.org"}),
        ("v:3", set()),
        ("mm:", {"slab-v2@kernel.dk", "review@example.org", "cover@intel.com"}),
        ("x86:", {"fair@example.cn"}),
        ("x86/mm:", {"fair@example.cn"}),
        ("mm/slab:", {"slab-v2@kernel.dk", "review@example.org"}),
        ("net-next", {"send@gmail.com"}),
        ("io_uring/poll:", {"bot@kernel.org"}),
        ("5.10-rc1", {"pull@kernel.dk"}),
        ("slab", {"slab-v2@kernel.dk", "review@example.org", "cover@intel.com"}),
        ("leak", {"pull@kernel.dk"}),  # body only: bodies were given for this doc
        ("s:leak", set()),
    ],
)
def test_every_prefix(index: Fulltext, query: str, expected: set[str]) -> None:
    assert found(index, query) == expected


def test_phrases(index: Fulltext) -> None:
    assert found(index, '"use after free"') == {
        "slab-v2@kernel.dk",
        "review@example.org",
        "bot@kernel.org",  # "use-after-free" in the subject
        "pull@kernel.dk",  # in the body
    }
    assert found(index, 's:"use after free"') == {
        "slab-v2@kernel.dk",
        "review@example.org",
        "bot@kernel.org",
    }
    assert found(index, '"free after use"') == set()
    assert found(index, '"mm/slab: fix"') == {"slab-v2@kernel.dk", "review@example.org"}


def test_negation(index: Fulltext) -> None:
    assert found(index, "s:slab -is:reply") == {"slab-v2@kernel.dk", "cover@intel.com"}
    assert found(index, '"use after free" -f:bot') == {
        "slab-v2@kernel.dk",
        "review@example.org",
        "pull@kernel.dk",
    }
    # the first document matching both sides (Whoosh's AndNot let it through)
    assert found(index, "s:slab -f:axboe") == {"review@example.org", "cover@intel.com"}
    assert found(index, "f:axboe -s:slab") == {"pull@kernel.dk"}
    only_negative = found(index, "-is:reply -is:patch")
    assert only_negative == {"cover@intel.com", "pull@kernel.dk"}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("f:pavel OR is:pull", {"send@gmail.com", "pull@kernel.dk"}),
        ("f:pavel or is:pull", set()),  # lower-case `or` is a word to find
        ("s:slab AND (f:jose OR f:lkp)", {"review@example.org", "cover@intel.com"}),
        ("s:slab (f:jose OR f:lkp)", {"review@example.org", "cover@intel.com"}),
        (
            "NOT is:reply is:patch",
            {"slab-v2@kernel.dk", "send@gmail.com", "fair@example.cn"},
        ),
        ("s:slab NOT (is:reply OR is:cover)", {"slab-v2@kernel.dk"}),
        ("s:slab -(is:reply OR is:cover)", {"slab-v2@kernel.dk"}),
        ("f:axboe v:2 OR is:cover", {"slab-v2@kernel.dk", "cover@intel.com"}),
        # a date range or a negation inside an OR: evaluated as sets
        ("d:2019-03-11 OR is:pull", {"review@example.org", "pull@kernel.dk"}),
        ("(d:2021 OR d:..2019-03-10) -f:bot", {"slab-v2@kernel.dk"}),
        (
            "is:cover OR -d:..2020-12-31",
            {"cover@intel.com", "bot@kernel.org", "fair@example.cn"},
        ),
        (
            "x86 OR (s:slab NOT is:reply)",
            {"fair@example.cn", "slab-v2@kernel.dk", "cover@intel.com"},
        ),
        (
            "NOT (is:patch OR d:2020 OR f:bot)",
            {"review@example.org", "cover@intel.com"},
        ),
    ],
)
def test_or_and_not_and_groups(index: Fulltext, query: str, expected: set[str]) -> None:
    assert found(index, query) == expected
    assert set(ids(index, query, sort="relevance")) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "d:2019-01-01..2019-06-30",
            {"slab-v2@kernel.dk", "review@example.org", "cover@intel.com"},
        ),
        ("d:2019-03-11", {"review@example.org"}),
        ("d:..2019-03-10", {"slab-v2@kernel.dk"}),
        ("d:2020-01-01..", {"send@gmail.com", "pull@kernel.dk", "bot@kernel.org"}),
        ("d:2019-07", set()),
        ("d:2020 is:patch", {"send@gmail.com"}),
        ("-d:..2020-12-31", {"bot@kernel.org", "fair@example.cn"}),
    ],
)
def test_date_ranges(index: Fulltext, query: str, expected: set[str]) -> None:
    assert found(index, query) == expected
    assert set(ids(index, query, sort="relevance")) == expected


def test_newest_first_by_default_and_undated_last(index: Fulltext) -> None:
    assert ids(index, "-is:cover") == [
        "bot@kernel.org",
        "pull@kernel.dk",
        "send@gmail.com",
        "review@example.org",
        "slab-v2@kernel.dk",
        "fair@example.cn",
    ]


def test_relevance_puts_subject_hits_above_body_only_hits(index: Fulltext) -> None:
    ranked = ids(index, "use after free", sort="relevance")
    assert ranked[-1] == "pull@kernel.dk"  # the only body-only hit
    assert set(ranked[:-1]) == {
        "slab-v2@kernel.dk",
        "review@example.org",
        "bot@kernel.org",
    }
    hits, _ = index.search("use after free", sort="relevance")
    assert hits[0].score >= hits[-1].score > 0


def test_non_ascii_names(index: Fulltext) -> None:
    for query in ("f:josé", "f:jose", "f:PÉREZ", 'f:"José Pérez"'):
        assert found(index, query) == {"review@example.org"}, query
    assert found(index, "f:张三") == {"fair@example.cn"}


def test_hits_are_seqs_and_scores_only(index: Fulltext) -> None:
    """What a hit shows comes from the store (api.core.search): the index keeps
    nothing else, not even a stored field, and nothing else leaks out of it."""
    hits, total = index.search("list:netdev")
    assert total == 1
    assert hits == [Found(2, 0.0)]
    ranked, _ = index.search("list:netdev", sort="relevance")
    assert named(ranked) == ["send@gmail.com"]
    assert ranked[0].score > 0
    with index._index.searcher() as searcher:  # noqa: SLF001 - the schema itself
        assert searcher.schema.stored_names() == []
        assert "message_id" not in searcher.schema.names()


def test_cross_post_found_by_either_list(index: Fulltext) -> None:
    assert "send@gmail.com" in found(index, "list:io-uring.vger.kernel.org")
    assert "send@gmail.com" in found(index, "list:netdev.vger.kernel.org")


def test_limit_offset_and_no_hits(index: Fulltext) -> None:
    everything = ids(index, "-is:cover")
    hits, total = index.search("-is:cover", limit=2, offset=1)
    assert total == len(everything)
    assert named(hits) == everything[1:3]
    assert index.search("nosuchwordanywhere") == ([], 0)
    assert index.search("-is:cover", limit=0) == ([], len(everything))


def test_bad_queries_raise_query_error(index: Fulltext) -> None:
    for query in ['"unbalanced', "d:garbage", "is:bogus", ""]:
        with pytest.raises(QueryError):
            index.search(query)
    with pytest.raises(QueryError, match="unknown sort"):
        index.search("slab", sort="size")


def test_update_by_seq_does_not_duplicate(tmp_path: Path) -> None:
    fulltext = build(tmp_path / "index")
    changed = DOCS[0]._replace(subject="[PATCH v3] mm/slab: rewritten completely")
    with fulltext.writer() as writer:
        writer.add(changed)
        writer.add(DOCS[1]._replace(lists=("linux-mm.kvack.org",)))
        writer.add(DOCS[1])  # twice in one batch: the last one counts
        writer.commit()
    assert fulltext.count() == len(DOCS)
    assert fulltext.seqs() == sorted(doc.seq for doc in DOCS)
    assert found(fulltext, "kmem_cache_free") == {"review@example.org"}
    assert found(fulltext, "rewritten") == {"slab-v2@kernel.dk"}
    assert ids(fulltext, "list:netdev") == ["send@gmail.com"]
    assert fulltext.last_seq() == 7
    with fulltext.writer() as writer:
        writer.delete(2)
        writer.commit()
    assert fulltext.count() == len(DOCS) - 1
    assert found(fulltext, "list:netdev") == set()


def test_spilled_posting_runs_in_chunks_make_the_same_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pool small enough to spill many runs, read back a chunk at a time
    (fulltext.write._ChunkedRuns), writes the same files as Whoosh's own pool."""
    import hashlib

    from whoosh.writing import PostingPool

    from e2g.index.fulltext import write as module

    monkeypatch.setattr(module, "WRITER_LIMIT_MB", 0.02)  # ~100 postings a run
    monkeypatch.setattr(module, "RUN_CHUNK", 7)  # runs end mid-chunk too
    docs = tuple(
        DOCS[number % len(DOCS)]._replace(seq=number + 1, files=(f"mm/f{number}.c",))
        for number in range(300)
    )
    spilled: list[int] = []
    real_save = PostingPool.save

    def counted(pool: PostingPool) -> None:
        spilled.append(len(pool.current))
        real_save(pool)

    monkeypatch.setattr(PostingPool, "save", counted)

    def contents(directory: Path) -> list[tuple[str, str]]:
        rebuild(directory, iter(docs))
        return sorted(
            (path.suffix, hashlib.sha256(path.read_bytes()).hexdigest())
            for path in directory.iterdir()
            if path.suffix in (".trm", ".pst", ".col")
        )

    ours = contents(tmp_path / "ours")
    assert len(spilled) > 10
    monkeypatch.setattr(module, "_ChunkedRuns", PostingPool)
    assert contents(tmp_path / "whoosh") == ours
    assert Fulltext.open(tmp_path / "ours").search("f:jose")[1] == len(
        [doc for doc in docs if doc.author_name.startswith("José")]
    )


def test_documents_above_the_mark_are_replaced_not_doubled(tmp_path: Path) -> None:
    """A crash between Whoosh's commit and the sidecar's leaves documents past the
    mark; the catch-up adds them again as new seqs, and they replace themselves."""
    from e2g.index.fulltext import sidecar as module

    fulltext = build(tmp_path / "index")
    module.write_sidecar(fulltext.directory, module.IndexMark(3))
    assert fulltext.last_seq() == 3
    with fulltext.writer() as writer:
        for doc in DOCS[3:]:
            writer.add(doc)
        writer.commit()
    assert fulltext.seqs() == [doc.seq for doc in DOCS]
    assert fulltext.last_seq() == 7
    assert ids(fulltext, "is:cover") == ["cover@intel.com"]


def test_last_seq_persists_across_reopen(tmp_path: Path) -> None:
    directory = tmp_path / "index"
    fresh = Fulltext.open(directory)
    assert (fresh.last_seq(), fresh.count()) == (0, 0)
    fresh.close()
    build(directory).close()
    with Fulltext.open(directory, create=False) as reopened:
        assert reopened.last_seq() == 7
        assert reopened.count() == len(DOCS)
        # an older seq arriving later never moves last_seq back
        with reopened.writer() as writer:
            writer.add(DOCS[0]._replace(seq=2))
            writer.commit()
        assert reopened.last_seq() == 7


def test_uncommitted_batch_is_invisible_and_discarded(tmp_path: Path) -> None:
    directory = tmp_path / "index"
    fulltext = build(directory, DOCS[:3])
    reader = Fulltext.open(directory, create=False)
    assert reader.count() == 3
    with fulltext.writer() as writer:
        for doc in DOCS[3:]:
            writer.add(doc)
        assert found(reader, "is:cover") == set()  # a reader sees the last commit
        writer.commit()
        assert found(reader, "is:cover") == {"cover@intel.com"}
        writer.add(make_doc("never committed", seq=99))
    assert found(reader, "committed") == set()
    assert reader.last_seq() == 7
    reader.close()


def test_two_writers_collide_with_a_clear_error(tmp_path: Path) -> None:
    fulltext = Fulltext.open(tmp_path / "index")
    with fulltext.writer(), pytest.raises(IndexError_, match="another e2g process"):
        fulltext.writer()
    with fulltext.writer() as writer:  # the lock was released
        writer.add(DOCS[0])
        writer.commit()
        with fulltext.writer() as second:  # committed: the first holds nothing now
            second.cancel()


def test_missing_or_broken_index(tmp_path: Path) -> None:
    with pytest.raises(IndexError_, match="e2g reindex"):
        Fulltext.open(tmp_path / "absent", create=False)
    directory = tmp_path / "broken"
    build(directory).close()
    for toc in directory.glob("_MAIN_*.toc"):
        toc.write_bytes(b"\x00garbage" * 10)
    with pytest.raises(IndexError_, match="e2g reindex"):
        Fulltext.open(directory)
    assert rebuild(directory, iter(DOCS)) == len(DOCS)  # and reindex repairs it
    with Fulltext.open(directory, create=False) as repaired:
        assert found(repaired, "is:cover") == {"cover@intel.com"}


def test_an_index_of_an_older_format_asks_for_a_reindex(tmp_path: Path) -> None:
    """FORMAT 3 added has:diff; an index written before it cannot answer it."""
    import json

    from e2g.index.fulltext import FORMAT, SIDECAR

    directory = tmp_path / "old"
    build(directory).close()
    sidecar = directory / SIDECAR
    data = json.loads(sidecar.read_text())
    sidecar.write_text(json.dumps({**data, "format": FORMAT - 1}))
    with pytest.raises(
        IndexError_, match=f"has format {FORMAT - 1}.*run `e2g reindex`"
    ):
        Fulltext.open(directory)
    rebuild(directory, iter(DOCS))
    with Fulltext.open(directory, create=False) as rebuilt:
        assert found(rebuilt, "has:diff is:reply") == {"bot@kernel.org"}


def test_rebuild_gives_the_same_hits_as_incremental(tmp_path: Path) -> None:
    incremental = Fulltext.open(tmp_path / "incremental")
    for start in range(0, len(DOCS), 3):  # several batches, with a resend in between
        with incremental.writer() as writer:
            for doc in DOCS[start : start + 3]:
                writer.add(doc)
            writer.add(DOCS[0]._replace(seq=DOCS[0].seq))
            writer.commit()
    progress: list[int] = []
    assert rebuild(tmp_path / "rebuilt", iter(DOCS), progress=progress.append) == len(
        DOCS
    )
    assert progress[-1] == len(DOCS)
    rebuilt = Fulltext.open(tmp_path / "rebuilt", create=False)
    assert rebuilt.last_seq() == incremental.last_seq() == 7
    assert rebuilt.count() == incremental.count()
    queries = [
        "-is:pull",
        "mm:",
        '"use after free"',
        "f:jose",
        "file:mm/",
        "d:2019",
        "slab",
    ]
    for query in queries:
        assert incremental.search(query) == rebuilt.search(query)
        # scores differ slightly: replaced documents linger in the statistics until
        # Whoosh merges their segment; the order and the stored fields must not
        assert unscored(incremental, query) == unscored(rebuilt, query)


def unscored(fulltext: Fulltext, query: str) -> tuple[list[Found], int]:
    hits, total = fulltext.search(query, sort="relevance")
    return [hit._replace(score=0.0) for hit in hits], total


def test_rebuild_swaps_in_place_while_a_reader_is_open(tmp_path: Path) -> None:
    directory = tmp_path / "index"
    reader = build(directory, DOCS[:2])
    assert rebuild(directory, iter(DOCS)) == len(DOCS)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]  # temp dirs gone
    with Fulltext.open(directory, create=False) as reopened:
        assert reopened.count() == len(DOCS)
        assert reopened.last_seq() == 7
    reader.close()


CHILD = textwrap.dedent(
    """
    import sys, time
    from dataclasses import replace
    from pathlib import Path
    from e2g.index.fulltext import Fulltext
    sys.path.insert(0, sys.argv[3])
    from test_fulltext import DOCS
    fulltext = Fulltext.open(Path(sys.argv[1]))
    mode = sys.argv[2]
    seq = 0
    def batch(size):
        global seq
        writer = fulltext.writer()
        for number in range(size):
            seq += 1
            doc = DOCS[number % len(DOCS)]
            writer.add(doc._replace(seq=seq))
        return writer
    batch(50).commit()
    print("committed", flush=True)
    if mode == "idle":
        writer = batch(2000)
        print("adding", flush=True)
        time.sleep(60)
    while True:  # mode "busy": kill lands anywhere, often inside a commit
        batch(300).commit()
    """
)


def run_child(directory: Path, mode: str) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(directory), mode, str(Path(__file__).parent)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "committed"
    return child


def kill(child: subprocess.Popen[str]) -> None:
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL


def test_writer_killed_mid_batch_keeps_the_last_commit(tmp_path: Path) -> None:
    directory = tmp_path / "index"
    child = run_child(directory, "idle")
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "adding"
    with Fulltext.open(directory, create=False) as reader:  # readers work meanwhile
        assert reader.count() == 50
    kill(child)
    with Fulltext.open(directory, create=False) as fulltext:
        assert fulltext.last_seq() == 50
        assert fulltext.count() == 50
        hits, total = fulltext.search("is:cover", limit=100)
        assert total == len(
            [n for n in range(50) if DOCS[n % len(DOCS)].kind == "cover"]
        )
        with fulltext.writer() as writer:  # the dead writer's lock is gone
            writer.add(DOCS[0]._replace(seq=51))
            writer.commit()
        assert fulltext.last_seq() == 51


def test_writer_killed_during_commits_is_never_ahead(tmp_path: Path) -> None:
    directory = tmp_path / "index"
    child = run_child(directory, "busy")
    searches = 0
    with Fulltext.open(directory, create=False) as reader:
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:  # search while the child commits
            hits, total = reader.search("is:patch", limit=5)
            assert total >= 1 and len(hits) == 5
            searches += 1
    assert searches > 5
    kill(child)
    with Fulltext.open(directory, create=False) as fulltext:
        last, count = fulltext.last_seq(), fulltext.count()
        # the sidecar is written after the commit: it may lag, never lead
        assert 50 <= last <= count
        assert (count - 50) % 300 == 0 and (last - 50) % 300 == 0
        assert fulltext.search("mm:")[1] > 0
        with fulltext.writer() as writer:
            writer.add(DOCS[0]._replace(seq=count + 1))
            writer.commit()


def test_a_searcher_whose_segment_went_is_opened_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A commit can delete a merged segment's files before a new searcher opens its
    columns: that searcher is dropped and another opened, a bounded number of times;
    a segment with documents but no seq column is what says so."""
    from e2g.index.fulltext import columns as module

    fulltext = build(tmp_path / "index")
    real_open = module.Columns.open
    calls: list[int] = []

    def gone_then_back(searcher: object) -> object:
        calls.append(1)
        return None if len(calls) < 3 else real_open(searcher)  # type: ignore[arg-type]

    monkeypatch.setattr(module.Columns, "open", gone_then_back)
    assert ids(fulltext, "is:cover") == ["cover@intel.com"]
    assert len(calls) == 3
    fulltext.close()
    monkeypatch.setattr(module.Columns, "open", lambda searcher: None)
    with pytest.raises(IndexError_, match="changed under every read"):
        fulltext.search("is:cover")
    # the check itself: a segment with documents and no seq column is gone
    monkeypatch.setattr(module.Columns, "open", real_open)
    with fulltext._index.searcher() as searcher:  # noqa: SLF001
        assert real_open(searcher) is not None
        (leaf,) = [leaf.reader() for leaf, _ in searcher.leaf_searchers()]
        monkeypatch.setattr(type(leaf), "has_column", lambda self, name: False)
        assert real_open(searcher) is None


def test_many_small_commits_keep_few_segments(tmp_path: Path) -> None:
    fulltext = Fulltext.open(tmp_path / "index")
    for number in range(3 * MERGE_FACTOR):
        with fulltext.writer() as writer:
            writer.add(DOCS[number % len(DOCS)]._replace(seq=number + 1))
            writer.commit()
    assert 1 <= fulltext.segments() <= MERGE_FACTOR  # one per commit without merging
    assert fulltext.count() == 3 * MERGE_FACTOR
    assert fulltext.search("s:slab")[1] == len(
        [n for n in range(3 * MERGE_FACTOR) if "slab" in DOCS[n % len(DOCS)].subject]
    )


def test_a_final_segment_is_never_merged_until_optimize(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Segments of FINAL_SEGMENT documents (every commit of a large ingest) stay as
    they were written, however many pile up; `optimize` merges them once, and every
    search answers the same before and after."""
    from e2g.index.fulltext import write as module

    monkeypatch.setattr(module, "FINAL_SEGMENT", 3)
    fulltext = Fulltext.open(tmp_path / "index")
    commits = 2 * MERGE_FACTOR + 1
    for commit in range(commits):
        with fulltext.writer() as writer:
            for n in range(3):
                number = commit * 3 + n
                doc = DOCS[number % len(DOCS)]
                writer.add(doc._replace(seq=number + 1))
            writer.commit()
    assert fulltext.segments() == commits
    queries = ["s:slab", "mm:", "f:alice", "is:patch"]
    before = [fulltext.search(query, limit=100) for query in queries]
    assert fulltext.optimize() == commits
    assert fulltext.segments() == 1
    assert [fulltext.search(query, limit=100) for query in queries] == before
    assert before[0][1] == len(
        [n for n in range(3 * commits) if "slab" in DOCS[n % len(DOCS)].subject]
    )


NAMES = ["Ann Lee", "Bob Ray", "Cy Dunn", "Di Fox", "Ed Hale", "Flo Kim", "Gus Poe"]
WORDS = ["alpha", "bravo", "delta", "echo", "golf"]


def grid_docs() -> list[IndexDoc]:
    """300 documents whose words and authors overlap in every combination."""
    docs = []
    for number in range(300):
        name = NAMES[(number * 5 + number // 7) % len(NAMES)]
        words = [
            WORDS[(number + step * (number % 3 + 1)) % len(WORDS)] for step in range(2)
        ]
        docs.append(
            make_doc(
                f"[PATCH] {' '.join(words)}",
                author_name=name,
                author_email=f"{name.split()[1].lower()}@example.org",
                date=datetime(2020, 1, 1, tzinfo=UTC)
                + (number * (DOCS[1].date - DOCS[0].date) / 400),  # type: ignore[operator]
                seq=number + 1,
            )
        )
    return docs


def test_negation_excludes_a_match_that_follows_excluded_ones(tmp_path: Path) -> None:
    # Whoosh 2.7.5's AndNot returns the last document here (the excluded author's
    # earlier documents make it skip past the check); e2g subtracts sets instead.
    docs = [
        make_doc(subject, author_name="Björn Dumazet", seq=number + 1)
        for number, subject in enumerate(["a leak", "a race", "a flag", "kvm_vcpu_run"])
    ]
    fulltext = build(tmp_path / "index", tuple(docs))
    assert numbers(fulltext, "kvm_vcpu_run") == [4]
    assert found(fulltext, "kvm_vcpu_run -f:dumazet") == set()
    assert fulltext.search("kvm_vcpu_run -f:dumazet", sort="relevance") == ([], 0)


def test_negation_agrees_with_set_arithmetic(tmp_path: Path) -> None:
    docs = grid_docs()
    fulltext = build(tmp_path / "index", tuple(docs))
    for word in WORDS:
        for name in NAMES:
            last = name.split()[1]
            expected = {
                doc.seq
                for doc in docs
                if word in doc.subject.split() and last not in doc.author_name
            }
            for sort in ("date", "relevance"):
                hits, total = fulltext.search(f"{word} -f:{last}", limit=300, sort=sort)
                assert {hit.seq for hit in hits} == expected, (word, name)
                assert total == len(expected)


def test_an_undated_message_is_in_no_date_range(index: Fulltext) -> None:
    """Undated is stored as 0, the first second of 1970: a range from 1970-01-01 must
    not take it for a date, and a negated range must not drop it."""
    for query in (
        "x86 d:1970-01-01..1970-12-31",
        "x86 d:1970-01-01..",
        "x86 d:..2099-01-01",
    ):
        hits, total = index.search(query)
        assert total == 0, query
    kept, _ = index.search("x86 -d:1970-01-01..1970-12-31")
    assert named(kept) == ["fair@example.cn"]
    # inside an OR or a group too, where ranges run as sets
    assert index.search("x86 (d:1970 OR d:..2099-01-01 OR v:9)")[1] == 0
    assert index.search("x86 NOT (d:1970 OR v:9)")[1] == 1


def _many(tmp_path: Path) -> Fulltext:
    """120 documents over 120 days, every third a reply, in two segments, with
    deletions in the first."""
    fulltext = Fulltext.open(tmp_path / "index")
    start = datetime(2021, 1, 1, 9, tzinfo=UTC)
    for part in (range(0, 60), range(60, 120)):
        with fulltext.writer() as writer:
            for n in part:
                writer.add(
                    make_doc(
                        f"{'Re: ' if n % 3 == 0 else ''}[PATCH] frob: step {n}",
                        kind="reply" if n % 3 == 0 else "patch",
                        date=start + timedelta(days=n),
                        seq=n + 1,
                    )
                )
            writer.commit()
    with fulltext.writer() as writer:
        for n in (5, 10, 11):
            writer.delete(n + 1)
        writer.commit()
    return fulltext


@pytest.mark.parametrize("skip_limit", [1, 10_000])
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # a date-only query, answered from the date column: deleted ones are gone
        ("d:2021-01-01..2021-01-20", [n for n in range(20) if n not in (5, 10, 11)]),
        ("d:2021-04", list(range(90, 120))),
        # negations, by skipping through the negated matches or listing them
        ("frob -is:reply", [n for n in range(120) if n % 3 and n not in (5, 10, 11)]),
        (
            "d:2021-01-01..2021-01-31 -is:reply",
            [n for n in range(31) if n % 3 and n not in (5, 10, 11)],
        ),
        ("-is:patch d:2021-02", [n for n in range(31, 59) if n % 3 == 0]),
    ],
)
def test_date_only_and_negated_searches_answer_exactly(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    skip_limit: int,
    query: str,
    expected: list[int],
) -> None:
    from e2g.index.fulltext import search as module

    monkeypatch.setattr(module, "SKIP_LIMIT", skip_limit)
    fulltext = _many(tmp_path)
    newest = [n + 1 for n in sorted(expected, reverse=True)]
    for sort in ("date", "relevance"):
        hits, total = fulltext.search(query, limit=500, sort=sort)
        assert total == len(expected)
        if sort == "date":
            assert [hit.seq for hit in hits] == newest
        else:
            assert sorted(hit.seq for hit in hits) == sorted(newest)


BASES = ["frob", "is:reply", "d:2021-02", "d:2021-01-01..2021-01-20", "-is:patch"]


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(BASES),
    st.sampled_from(BASES),
    st.sampled_from(["OR", "AND", ""]),
    st.booleans(),
)
def test_boolean_queries_agree_with_set_arithmetic(
    many: Fulltext, first: str, second: str, operator: str, negate: bool
) -> None:
    """Every combination of two clauses, deletions included, is what sets say."""
    left, right = set(numbers(many, first)), set(numbers(many, second))
    everything = set(numbers(many, "d:2020..2022"))
    expected = left | right if operator == "OR" else left & right
    query = f"({first} {operator} {second})"
    if negate:
        query, expected = f"NOT {query}", everything - expected
    assert set(numbers(many, query)) == expected
    assert set(numbers(many, query, sort="relevance")) == expected


LISTED_WORDS = ["frob", "step", "1", "2", "patch", "missing", "reply"]


@settings(max_examples=80, deadline=None)
@given(
    st.recursive(
        st.sampled_from(LISTED_WORDS).map(lambda word: ("subject", word)),
        lambda inner: st.tuples(
            st.sampled_from(["OR", "AND"]), st.lists(inner, min_size=1, max_size=3)
        ),
        max_leaves=6,
    ),
    st.sampled_from(["subject", "kind"]),
)
def test_listing_by_posting_blocks_is_whooshs_listing(
    many: Fulltext, tree: object, field: str
) -> None:
    """`_listed` (whole posting blocks, terms joined by OR and AND) lists what
    Whoosh's own matchers list, over two segments with deletions; other queries
    (a prefix) fall back to Whoosh's own walk."""
    import whoosh.query as wq

    from e2g.index.fulltext import search as module

    def build_query(node: object) -> wq.Query:
        if isinstance(node, tuple) and node[0] in ("OR", "AND"):
            parts = [build_query(part) for part in node[1]]
            return wq.Or(parts) if node[0] == "OR" else wq.And(parts)
        assert isinstance(node, tuple)
        return wq.Term(field if node[1] in ("patch", "reply") else node[0], node[1])

    searcher = many._fresh_searcher()
    for query in (build_query(tree), wq.Prefix("subject", "fro")):
        listed = module._listed(searcher, query)
        assert listed == list(searcher.docs_for_query(query))
        assert len(listed) == len(set(listed))


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Fulltext:
    return _many(tmp_path_factory.mktemp("many"))


def test_lengths_read_into_memory_answer_as_whooshs_reader(tmp_path: Path) -> None:
    """The segment writer's lengths come from memory (fulltext.write._LengthsInMemory):
    every document's length in every field, and the default for a field without
    lengths, equal what Whoosh's reader of the same segment answers."""
    from e2g.index.fulltext import write as fulltext

    docs = (
        *DOCS,
        make_doc(" ".join(f"word{n}" for n in range(300)), seq=8),
        make_doc("", seq=9),
    )
    built = build(tmp_path / "ix", docs)
    whoosh_index = built._index
    (segment,) = whoosh_index._segments()
    reader = segment.codec().per_document_reader(whoosh_index.storage, segment)
    ours = fulltext._LengthsInMemory(reader)
    fields = [*whoosh_index.schema.names(), "message_id"]  # and a field it lacks
    compared = 0
    for number in range(segment.doc_count()):
        for name in fields:
            assert ours.doc_field_length(number, name, 7) == reader.doc_field_length(
                number, name, 7
            ), (number, name)
            compared += 1
    assert compared >= len(docs) * 10
    # Whoosh keeps a length in one byte: 300 words read back as about 300
    assert max(ours.doc_field_length(n, "subject") or 0 for n in range(len(docs))) > 250
    assert ours.doc_count() == len(docs)  # everything else is the reader's own


@settings(max_examples=300, deadline=None)
@given(
    data=st.lists(st.integers(min_value=0, max_value=60), max_size=90),
    shuffled=st.booleans(),
    low=st.integers(min_value=-5, max_value=65),
    width=st.integers(min_value=0, max_value=70),
)
def test_date_column_within_is_the_plain_scan(
    data: list[int], shuffled: bool, low: int, width: int
) -> None:
    """The span summary never changes an answer: mostly ordered dates (as archives
    are indexed), any order, undated zeros, windows across, inside and outside."""
    from array import array

    from e2g.index.fulltext import columns as fulltext

    values = data if shuffled else sorted(data)
    high = low + width
    column = fulltext.DateColumn(array("q", values))
    expected = [n for n, stamp in enumerate(values) if low <= stamp <= high]
    original = fulltext.SPAN
    try:
        fulltext.SPAN = 7  # many spans from a short list, and a short last one
        assert column.within(low, high) == expected
        assert column.within(low, high) == expected  # the summary, made once, reused
        assert column.at_most(low, high) >= len(expected)
    finally:
        fulltext.SPAN = original
    assert fulltext.DateColumn(array("q", values)).within(low, high) == expected
