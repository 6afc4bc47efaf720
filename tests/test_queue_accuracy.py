"""The patch queue's states where real lists proved the first rules wrong
(benchmarks/queue_check.py and the hand-read samples in benchmarks/README.md), each on
a real repository and archive (tests.audit_world's World): a later version posted
before the earlier one, a new directory below one the repository has, and another
project's patch that shares only a top-level Makefile with the repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from e2g import config
from e2g.api.basis import open_store
from e2g.api.queue import states
from e2g.api.queue.refresh import refresh
from e2g.index.schema import QUEUE_RULES_KEY
from e2g.index.store import QueueRow
from e2g.index.store_writer import StoreWriter
from e2g.mail.subject import parse_subject, release_line
from tests.audit_world import World, matched
from tests.conftest import git
from tests.queue_world import FRESH

World_ = tuple[config.Settings, dict[str, str]]

# The repository's own tree beside World's a.c .. n.c: a nested source tree.
TREE = {
    "Makefile": "all:\n\tcc -o lib src/queue.c\n",
    "src/queue.c": "int queue;\n",
    "src/arch/x86/lib.h": "#define PAGE 4096\n",
}


def posted_only(world: World, files: dict[str, str], subject: str) -> str:
    """The diff of a change writing `files`, committed and taken back: posted,
    never applied."""
    for path, text in files.items():
        target = world.repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    sha = world.commit(subject, add_all=True)
    diff = world.diff_of(sha)
    git(world.repo, "reset", "-q", "--hard", "HEAD~1")
    return diff


def build(root: Path) -> World_:
    world = World(root)
    for path, text in TREE.items():
        (world.repo / path).parent.mkdir(parents=True, exist_ok=True)
        (world.repo / path).write_text(text)
    world.commit("build: a Makefile and the src tree", days=-30, add_all=True)
    ids: dict[str, str] = {}
    ids["new-arch"] = world.post(
        "arch/arm64: add lib.h",
        posted_only(world, {"src/arch/arm64/lib.h": "#define PAGE 65536\n"}, "a"),
        message_id="arm64@x",
    )
    ids["other-project"] = world.post(
        "compiler: add the analysis",
        posted_only(
            world,
            {
                "Makefile": "all:\n\tcc -o lib src/queue.c -Wanalysis\n",
                "include/linux/compiler-analysis.h": "#define ANALYSIS 1\n",
                "lib/Kconfig.debug": "config ANALYSIS\n",
            },
            "k",
        ),
        message_id="kernel@x",
    )
    ids["new-top-file"] = world.post(
        "z: a new file beside the others",
        posted_only(world, {"z.c": "int z0 = 0;\n"}, "z"),
        message_id="z@x",
    )
    # A v3 posted first (for another branch), then a v2: the v2 is the newer word.
    ids["v3-first"] = world.post(
        "b: set b3",
        posted_only(world, {"b.c": "int b3 = 33;\n"}, "b"),
        version=3,
        message_id="b3@x",
    )
    ids["v2-after"] = world.post(
        "b: set b3",
        posted_only(world, {"b.c": "int b3 = 32;\n"}, "b"),
        version=2,
        message_id="b2@x",
    )
    # The same for a series' lineage (v1, then a v3 for another branch, then the
    # v2), its parts' subjects all different, so only the lineage ties them.
    cover = world.cover("tune c", version=1, parts=1, message_id="c1-0@x")
    world.post(
        "c: set c3 to 31",
        posted_only(world, {"c.c": "int c3 = 31;\n"}, "c"),
        part="1/1",
        parent=cover,
        message_id="c1-1@x",
    )
    cover = world.cover("tune c", version=3, parts=1, message_id="c3-0@x")
    world.post(
        "c: set c3 to 33",
        posted_only(world, {"c.c": "int c3 = 33;\n"}, "c"),
        version=3,
        part="1/1",
        parent=cover,
        message_id="c3-1@x",
    )
    cover = world.cover("tune c", version=2, parts=1, message_id="c2-0@x")
    ids["series-v2-after"] = world.post(
        "c: set c3 to thirty-two",
        posted_only(world, {"c.c": "int c3 = 32;\n"}, "c"),
        version=2,
        part="1/1",
        parent=cover,
        message_id="c2-1@x",
    )
    # Backports of one change to two stable branches: neither is the other's version.
    ids["for-5.15"] = world._send(
        "[PATCH 5.15.y] e: set e3",
        "Backport.\n\nSigned-off-by: Alice Author <alice@example.org>\n---\n"
        + posted_only(world, {"e.c": "int e3 = 35;\n"}, "e"),
        "Alice Author <alice@example.org>",
        "e515@x",
        None,
    )
    world._send(
        "[PATCH v2 6.1.y] e: set e3",
        "Backport.\n\nSigned-off-by: Alice Author <alice@example.org>\n---\n"
        + posted_only(world, {"e.c": "int e3 = 36;\n"}, "e"),
        "Alice Author <alice@example.org>",
        "e61@x",
        None,
    )
    world.announce(days=30)
    settings, _ = matched(world)
    return settings, ids


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World_:
    return build(tmp_path_factory.mktemp("accuracy"))


def _rows(settings: config.Settings) -> dict[str, QueueRow]:
    refresh(settings, now=FRESH)
    with open_store(settings) as store:
        return {row.message_id: row for row in store.queue_all()}


def test_a_file_in_a_new_directory_below_a_known_one_is_tracked(
    world: World_,
) -> None:
    settings, ids = world
    row = _rows(settings)[ids["new-arch"]]
    assert (row.state, row.untracked) == (states.NEW, "")


def test_a_new_top_level_file_beside_files_of_its_kind_is_tracked(
    world: World_,
) -> None:
    settings, ids = world
    row = _rows(settings)[ids["new-top-file"]]
    assert (row.state, row.untracked) == (states.NEW, "")


def test_a_patch_sharing_only_a_top_level_file_is_untracked(world: World_) -> None:
    settings, ids = world
    row = _rows(settings)[ids["other-project"]]
    assert row.state == states.UNTRACKED
    assert "include/linux/compiler-analysis.h" in row.untracked


def test_a_higher_version_posted_before_does_not_supersede(world: World_) -> None:
    settings, ids = world
    rows = _rows(settings)
    later, earlier = rows[ids["v2-after"]], rows[ids["v3-first"]]
    assert (later.state, later.superseded_by) == (states.NEW, "")
    assert earlier.superseded_by == ""  # a lower version never supersedes


def test_a_series_of_a_higher_version_posted_before_does_not_supersede(
    world: World_,
) -> None:
    settings, ids = world
    row = _rows(settings)[ids["series-v2-after"]]
    assert (row.state, row.superseded_by) == (states.NEW, "")


def test_a_backport_to_another_stable_branch_does_not_supersede(
    world: World_,
) -> None:
    settings, ids = world
    row = _rows(settings)[ids["for-5.15"]]
    assert (row.state, row.superseded_by) == (states.NEW, "")


def test_release_line_of_a_subject() -> None:
    def line(subject: str) -> str:
        return release_line(parse_subject(subject).tags)

    assert line("[PATCH v2 01/27 5.10.y] x") == line("[PATCH 5.10 1/2] x") == "5.10"
    assert line("[PATCH 15/19 v6.1.y] x") == "6.1"
    assert line("[for-stable-4.19 PATCH v2 1/2] x") == "4.19"
    assert line("[PATCH AUTOSEL 6.3 36/37] x") == "6.3"
    assert line("[PATCH for-next v2 06/25] x") == line("[PATCH v3] x") == ""
    assert line("[PATCH liburing v2 2/2] x") == ""


def test_untracked_rule_weighs_the_patch_files() -> None:
    known = {
        "repo": states.known_paths(
            {"Makefile", "README", "optimize.c", "src/queue.c", "src/arch/x86/lib.h"}
        )
    }

    def tracked(files: list[str]) -> bool:
        return states.untracked_because(files, known) == ""

    assert tracked(["src/arch/arm64/lib.h"])  # a new directory below src/arch
    assert not tracked(["include/linux/compiler.h"])
    assert not tracked(["src2/arch/x.h"])  # no directory of the repository above
    assert tracked(["Makefile"])
    assert tracked(["code-sink.c", "Makefile", "optimize.c"])  # a flat repository
    assert tracked(["meson.build", "src/meson.build"])
    assert tracked(["verify-format.c"])  # a new file beside optimize.c
    assert not tracked(["configure.ac"])  # no .ac file at the top
    # What only a top-level file every project has ties to the repository.
    assert not tracked(["Makefile", "include/linux/c.h", "lib/Kconfig.debug"])
    assert not tracked(
        ["README", "configure.ac", "include/builddefs.in", "ltp/Makefile"]
    )


def test_a_queue_derived_by_older_rules_is_derived_again(world: World_) -> None:
    settings, _ = world
    refresh(settings, now=FRESH)
    assert refresh(settings, now=FRESH).derived == 0  # nothing new, nothing derived
    with StoreWriter(settings.store_path) as writer:
        writer.set_meta(QUEUE_RULES_KEY, "0")  # as a store of an older e2g left it
        writer.connection.commit()
    with open_store(settings) as store:
        patches = len(store.queue_all())
    assert refresh(settings, now=FRESH).derived == patches
    assert refresh(settings, now=FRESH).derived == 0
