"""The review metrics (e2g.api.metrics) on a world whose every value is known by
construction: a real repository, real mbox bytes ingested and matched, the queue
derived as `e2g match` leaves it. Times are minutes after BASE_DATE; the commits
are dated COMMIT_DATE (BASE_DATE + 9 days).

- a: posted at 1 h, reviewed at 3.5 h by Dan from another domain; applied.
- b: v1 at 2 h, no reply; v2 two days later, reviewed 1 h after by Bob (the
  author's domain); v2 applied.
- c: at 4 h, no reply, never applied: ignored.
- d: at 5 h, answered only by the kernel test robot (a bot): ignored.
- e: at 6 h, Nacked-by Bob half an hour later: rejected.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from e2g import config
from e2g.api import metrics as m
from e2g.api.metrics import Query, compute, metrics
from e2g.api.metrics.facts import Version
from e2g.render.metrics import metric_json, metrics_svg
from tests.audit_world import BOB, World, matched
from tests.queue_world import unapplied

DAN = "Dan Other <dan@other.net>"
ROBOT = "kernel test robot <lkp@intel.com>"
DAY_MINUTES = 24 * 60


def _at(world: World, minutes: int) -> None:
    world.clock = minutes - 1  # the next mail is dated `minutes` after BASE_DATE


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> config.Settings:
    world = World(tmp_path_factory.mktemp("metrics"))
    world.edit("a.c", 3, "int a3 = 33;")
    applied_a = world.commit("a: set a3")
    _at(world, 60)
    world.post("a: set a3", world.diff_of(applied_a), message_id="a@x")
    _at(world, 210)
    world.reply(
        "a@x",
        "Reviewed-by: Dan Other <dan@other.net>\n",
        sender=DAN,
        message_id="a-r@x",
    )

    _at(world, 120)
    world.post(
        "b: set b3", unapplied(world, "b.c", "int b3 = 30;", "b"), message_id="b1@x"
    )
    world.edit("b.c", 3, "int b3 = 31;")
    applied_b = world.commit("b: set b3")
    _at(world, 120 + 2 * DAY_MINUTES)
    world.post("b: set b3", world.diff_of(applied_b), version=2, message_id="b2@x")
    _at(world, 180 + 2 * DAY_MINUTES)
    world.reply(
        "b2@x", "Reviewed-by: Bob Reviewer <bob@example.org>\n", message_id="b-r@x"
    )

    _at(world, 240)
    world.post(
        "c: set c3", unapplied(world, "c.c", "int c3 = 303;", "c"), message_id="c@x"
    )
    _at(world, 300)
    world.post(
        "d: set d3", unapplied(world, "d.c", "int d3 = 304;", "d"), message_id="d@x"
    )
    _at(world, 310)
    world.reply("d@x", "Build failed.\n", sender=ROBOT, message_id="d-r@x")
    _at(world, 360)
    world.post(
        "e: set e3", unapplied(world, "e.c", "int e3 = 305;", "e"), message_id="e@x"
    )
    _at(world, 390)
    world.reply(
        "e@x",
        "Nacked-by: Bob Reviewer <bob@example.org>\n",
        sender=BOB,
        message_id="e-r@x",
    )
    world.announce(days=30)
    found, _ = matched(world)
    return found


def _one(settings: config.Settings, name: str, **query: object) -> dict[str, object]:
    (row,) = metrics(settings, Query(names=(name,), **query))  # type: ignore[arg-type]
    return metric_json(row)


def test_first_response_leaves_the_robot_and_unanswered_versions_out(
    settings: config.Settings,
) -> None:
    # Answered: a after 2.5 h, b v2 after 1 h, e after 0.5 h; b v1, c, d (the
    # robot only) not: 3 of 6.
    found = _one(settings, m.FIRST_RESPONSE)
    assert found == {
        "metric": "first-response",
        "period": None,
        "group": None,
        "n": 3,
        "median": 1.0,
        "p25": 0.75,
        "p75": 1.75,
        "unit": "hours",
        "total": 6,
    }


def test_a_robot_counts_when_the_config_lists_no_robots(
    settings: config.Settings,
) -> None:
    found = _one(settings._replace(metrics_bots=()), m.FIRST_RESPONSE)
    assert (found["n"], found["total"]) == (4, 6)


def test_time_to_accept_runs_from_the_first_version(settings: config.Settings) -> None:
    # a: 9 days less 1 h; b: 9 days less 2 h (from v1, not v2); 2 of 5 applied.
    found = _one(settings, m.TIME_TO_ACCEPT)
    assert (found["n"], found["total"]) == (2, 5)
    assert found["median"] == round((9 * 24 - 1.5) / 24, 2)
    assert (found["p25"], found["p75"]) == (
        round((9 * 24 - 1.75) / 24, 2),
        round((9 * 24 - 1.25) / 24, 2),
    )


def test_review_cycles_count_versions_and_the_gap_between(
    settings: config.Settings,
) -> None:
    versions, gaps = metrics(settings, Query(names=(m.REVIEW_CYCLES,)))
    assert (versions.unit, versions.n, versions.median) == ("versions", 2, 1.5)
    assert (gaps.unit, gaps.n, gaps.median) == ("days between versions", 1, 2.0)


def test_reviewed_share_and_the_other_domain(settings: config.Settings) -> None:
    found = _one(settings, m.REVIEWED_SHARE)
    assert found["numerator"] == found["denominator"] == 2
    assert (found["other_domain"], found["other_domain_value"]) == (1, 0.5)


def test_acceptance_counts_applied_not_applied_and_rejected(
    settings: config.Settings,
) -> None:
    found = _one(settings, m.ACCEPTANCE)
    assert (found["numerator"], found["denominator"], found["value"]) == (2, 5, 0.4)


def test_ignored_is_no_reply_but_a_robot_and_never_applied(
    settings: config.Settings,
) -> None:
    found = _one(settings, m.IGNORED)
    assert (found["numerator"], found["denominator"]) == (2, 5)


def test_reviewer_load_and_absence_factor(settings: config.Settings) -> None:
    # Reviews: Dan 1 (a), Bob 2 (b v2, e), all in March 2021.
    load = _one(settings, m.REVIEWER_LOAD)
    assert (load["n"], load["total"], load["median"]) == (2, 3, 1.5)
    assert load["p95"] == 1.95
    absence = _one(settings, m.ABSENCE_FACTOR)
    assert (absence["value"], absence["numerator"], absence["denominator"]) == (
        1.0,
        2,
        3,
    )
    by_person = metrics(settings, Query(names=(m.REVIEWER_LOAD,), group="person"))
    assert {row.group: row.total for row in by_person} == {
        "bob@example.org": 2,
        "dan@other.net": 1,
    }


def test_by_period_directory_and_window(settings: config.Settings) -> None:
    (row,) = metrics(settings, Query(names=(m.IGNORED,), by="quarter", group="dir"))
    assert (row.period, row.group) == ("2021-Q1", "(top)")
    (month,) = metrics(settings, Query(names=(m.ACCEPTANCE,), by="month"))
    assert month.period == "2021-03"
    empty = metrics(settings, Query(names=(m.FIRST_RESPONSE,), since=2**40))
    assert empty == []


def test_the_chart_links_each_point(settings: config.Settings) -> None:
    rows = metrics(settings, Query(by="month"))
    svg = metrics_svg(rows, link=lambda row: f"/patches?m={row.metric}&a=<b>")
    assert svg.startswith("<svg") and "&amp;a=&lt;b&gt;" in svg
    assert svg.count("<a href=") == len(rows)  # one period: bars, each linked


def test_every_definition_is_on_the_reference_page() -> None:
    """The module's definitions and `e2g help metrics` say the same, word for word."""
    page = (Path(__file__).parents[1] / "docs" / "commands" / "metrics.md").read_text()
    text = (m.__doc__ or "").split("DEFINITIONS", 1)[1]
    for paragraph in text.split("\n\n"):
        assert " ".join(paragraph.split()) in " ".join(page.split())
    for name in m.METRICS:
        assert f"- {name} (" in page


def test_the_web_page_links_to_the_patches_behind_a_figure(
    settings: config.Settings,
) -> None:
    from fastapi.testclient import TestClient

    from e2g.web.app import create_app

    client = TestClient(create_app(settings, repo=settings.data_dir))
    page = client.get("/metrics?name=ignored&by=month")
    assert page.status_code == 200
    href = "/patches?state=new%2Cnot-applied&amp;since=2021-03-01&amp;until=2021-04-01"
    assert href in page.text and "2/5 (40%)" in page.text
    behind = client.get(href.replace("&amp;", "&"))
    assert "c: set c3" in behind.text and "d: set d3" in behind.text
    api = client.get("/api/v1/metrics?name=ignored&by=month").json()
    assert api["metrics"][0]["numerator"] == 2


def _version(seq: int, *, state: str, untracked: bool, version: int) -> Version:
    return Version(
        seq=seq,
        message_id=f"k{seq}@x",
        list_name="l",
        date=1_600_000_000 + seq,
        author="kim@example.org",
        version=version,
        state=state,
        untracked=untracked,
        family="k1@x",
        family_date=1_600_000_001,
        responses=[],
        approvals=[],
        applied=[],
        committed=None,
        releases=[],
    )


def test_a_patch_for_another_tree_is_left_out_though_superseded() -> None:
    """v1 is superseded (its state says so first), v2 untracked: the patch is no
    matched repository's, so it is no ignored patch of this one."""
    versions = [
        _version(1, state="superseded", untracked=True, version=1),
        _version(2, state="untracked", untracked=True, version=2),
    ]
    assert compute(versions, Query(names=(m.IGNORED,))) == []
    (first,) = compute(versions, Query(names=(m.FIRST_RESPONSE,)))
    assert (first.n, first.total) == (0, 2)  # a version's response is asked anyway
    versions[1] = _version(2, state="new", untracked=False, version=2)
    (ignored,) = compute(versions, Query(names=(m.IGNORED,)))
    assert (ignored.numerator, ignored.denominator) == (1, 1)


def test_the_command_line(settings: config.Settings, tmp_path: Path) -> None:
    """Exit codes, the stream split, --csv's header and --svg's file."""
    import subprocess
    import sys

    def e2g(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "e2g", "--data-dir", str(settings.data_dir), *args],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path)},
        )

    chart = tmp_path / "m.svg"
    done = e2g("metrics", "ignored", "acceptance", "--csv", "--svg", str(chart))
    assert (done.returncode, done.stderr) == (0, "")
    header, *lines = done.stdout.splitlines()
    assert header.startswith("metric,period,group,n,median,p25,p75,unit,total,")
    assert [line.split(",")[0] for line in lines] == ["ignored", "acceptance"]
    assert chart.read_text().startswith("<svg")
    table = e2g("metrics", "ignored", "--by", "year")
    assert table.stdout.splitlines()[:3] == [
        "ignored",
        "period    group  figure",
        "2021             2/5 (40%)",
    ]
    wrong = e2g("metrics", "time-to-nothing")
    assert wrong.returncode == 2 and wrong.stdout == ""
    assert wrong.stderr.count("\n") == 1 and "first-response" in wrong.stderr
    empty = subprocess.run(
        [sys.executable, "-m", "e2g", "--data-dir", str(tmp_path / "none"), "metrics"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert empty.returncode == 1 and empty.stderr.startswith("e2g: error:")
