"""`e2g audit`'s verdicts on a repository and a list built for it (tests/audit_world.py),
its summary and JSON and SARIF shapes (the pure rules: tests/test_audit_rules.py)."""

from __future__ import annotations

import os
import re
from datetime import timedelta
from pathlib import Path

import pytest

from e2g import errors
from e2g.api.answers import repo_key
from e2g.api.audit import AuditOptions, CommitAudit, Verdict, audit
from e2g.api.audit.facts import (
    People,
    Sources,
    archive_window,
    read_facts,
    version_of,
)
from e2g.api.audit.reviews import _posting_reviews, authors, reviews_of
from e2g.api.audit.verdicts import Rules, decide
from e2g.api.basis import open_store
from e2g.git.repo import Repo
from e2g.model import Kind
from e2g.render.audit import audit_json, audit_sarif, audit_summary_json
from tests.audit_world import COMMIT_DATE, build
from tests.conftest import BASE_DATE, clone, git

IDENTITY = {
    **os.environ,
    "GIT_AUTHOR_NAME": "A",
    "GIT_AUTHOR_EMAIL": "a@example.org",
    "GIT_COMMITTER_NAME": "A",
    "GIT_COMMITTER_EMAIL": "a@example.org",
}

VERDICTS = {
    "reviewed": Verdict.REVIEWED,
    "changed": Verdict.CHANGED,
    "trivial": Verdict.TRIVIAL,
    "self-acked": Verdict.UNREVIEWED,
    "maintainer-edit": Verdict.CHANGED,
    "commented": Verdict.REVIEWED,
    "acked": Verdict.REVIEWED,
    "committer-only": Verdict.REVIEWED,
    "earlier": Verdict.EARLIER,
    "unreviewed": Verdict.UNREVIEWED,
    "not-posted": Verdict.NOT_POSTED,
    "initial": Verdict.OUTSIDE,
    "postdates": Verdict.OUTSIDE,
    "revert": Verdict.EXEMPT,
    "release": Verdict.EXEMPT,
}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    return build(tmp_path_factory.mktemp("audit"))


def run(world, **options) -> dict[str, CommitAudit]:
    settings, repo, shas = world
    names = {sha: name for name, sha in shas.items()}
    found: dict[str, CommitAudit] = {}
    audit(
        settings,
        repo=repo,
        options=AuditOptions(**options),
        on_commit=lambda one: found.__setitem__(names.get(one.sha, one.sha), one),
    )
    return found


@pytest.fixture(scope="module")
def audits(world) -> dict[str, CommitAudit]:
    return run(world)


@pytest.mark.parametrize(("case", "verdict"), sorted(VERDICTS.items()))
def test_each_case_gets_its_verdict(audits, case, verdict):
    assert audits[case].verdict is verdict, audits[case].evidence


def test_a_one_line_change_after_review_is_shown_with_its_hunk(audits):
    found = audits["changed"]
    assert found.delta is not None
    assert (found.delta.from_version, found.delta.files) == (2, ("b.c",))
    assert (found.delta.added, found.delta.removed) == (1, 1)
    assert found.delta.disclosed == ""
    (change,) = found.delta.changes
    assert change.kind == "edited"
    assert "+int b8 = 80;" in change.posted.lines
    assert "+int b8 = 88;" in change.applied.lines
    assert found.applied is not None and found.applied.version == 3
    assert [(v.version, v.reviewed, v.same_code) for v in found.versions] == [
        (3, False, True),
        (2, True, False),
    ]


def test_the_commit_is_read_in_its_posting_form(world):
    """A posting without rename detection (git before 2.9) is compared with the
    commit read the same way, so a patch-id that differs only by that form is
    still the same code."""
    settings, repo, shas = world
    repository = Repo.open(repo)
    commits = list(repository.commit_messages([shas["reviewed"]]))[:1]
    asked: list[bool] = []

    def commit_diff(sha: str, renames: bool) -> str | None:
        asked.append(renames)
        with repository.reader(renames=renames) as reader:
            return next(iter(reader.commits([sha]))).patch.diff

    with open_store(settings) as store:
        (facts,) = read_facts(store, repo_key(repository), commits)
        facts = facts._replace(row=facts.row._replace(patch_id="0" * 40))
        sources = Sources(store.diff, store.body, commit_diff)
        found = decide(facts, people=People(None), rules=Rules(), sources=sources)
    assert found.verdict is Verdict.REVIEWED
    assert asked == [False]


def test_a_reader_without_renames_shows_a_deletion_and_an_addition(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "old.c").write_text("".join(f"int x{n};\n" for n in range(20)))
    git(repo, "add", "old.c")
    git(repo, "commit", "-q", "-m", "one", env=IDENTITY)
    git(repo, "mv", "old.c", "new.c")
    git(repo, "commit", "-q", "-m", "two", env=IDENTITY)
    repository = Repo.open(repo)
    with repository.reader() as reader:
        (renamed,) = reader.commits(["HEAD"])
    with repository.reader(renames=False) as reader:
        (plain,) = reader.commits(["HEAD"])
    assert "rename from old.c" in renamed.patch.diff
    assert "deleted file mode" in plain.patch.diff
    assert "new file mode" in plain.patch.diff


def test_a_maintainer_edit_disclosed_between_sign_offs(audits):
    found = audits["maintainer-edit"]
    assert found.delta is not None
    assert found.delta.disclosed == "[mia: e9 is 99, not 90]"
    assert "disclosed" in found.evidence


def test_a_rebase_that_moved_only_context_keeps_the_review(audits):
    found = audits["trivial"]
    assert [review.person.email for review in found.reviews] == ["bob@example.org"]
    assert found.delta is None


def test_a_tag_no_mail_backs_is_shown_as_such(audits):
    tags = {tag.person.email: tag for tag in audits["reviewed"].tags}
    assert tags["bob@example.org"].backed_by == "a1r@x"
    assert tags["bob@example.org"].version == 1
    assert tags["carol@example.org"].backed_by is None
    assert not tags["carol@example.org"].by_author


def test_an_ack_only_from_the_author_is_no_review(audits):
    found = audits["self-acked"]
    assert found.reviews == ()
    (tag,) = found.tags
    assert (tag.trailer, tag.by_author, tag.backed_by) == ("Acked-by", True, "d1r@x")


def test_comments_on_the_quoted_patch_are_a_review(audits):
    (review,) = audits["commented"].reviews
    assert (review.trailer, review.person.email) == ("comment", "bob@example.org")


def test_a_bare_ack_of_the_cover_reviews_its_patches_and_backs_the_tag(audits):
    """The cover letter says v2, its patch no version: the ack is of v1, the
    version of the series' patch, which landed."""
    found = audits["acked"]
    assert [(v.kind, v.version) for v in found.versions] == [
        ("cover", 2),
        ("patch", 1),
    ]
    (review,) = found.reviews
    assert (review.trailer, review.person.email) == ("ack", "carol@example.org")
    assert review.version == 1
    assert found.evidence == "v1 ack Carol Tester"
    (tag,) = found.tags
    assert (tag.trailer, tag.backed_by, tag.version) == ("Acked-by", "l0r@x", 1)


def test_skipping_a_reviewed_versions_cover_replies_changes_no_verdict(world):
    """reviews_of reads a cover letter's replies only for a version with no review
    yet from anyone but the committer: what verdicts use (the versions reviewed,
    and by whom other than the committer) is what reading every reply gives."""
    settings, repo, shas = world
    repository = Repo.open(repo)
    commits = list(repository.commit_messages(list(shas.values()), walk=False))
    people = People(None)

    def used(reviews) -> set[tuple[int, bool]]:
        return {(review.version, review.committer) for review in reviews}

    with open_store(settings) as store:
        sources = Sources(store.diff, store.body, lambda sha, renames: None)
        for facts in read_facts(store, repo_key(repository), commits):
            named = people.group(authors(facts))
            every = [
                review
                for posted in facts.postings
                for review in _posting_reviews(
                    posted, people=people, authors=named, sources=sources,
                    facts=facts, settled=set(),
                )
            ]  # fmt: skip
            fast = reviews_of(facts, people=people, authors=named, sources=sources)
            assert {v for v, committer in used(fast) if not committer} == {
                v for v, committer in used(every) if not committer
            }
            assert {v for v, _ in used(fast)} == {v for v, _ in used(every)}


def test_a_cover_is_of_its_series_patch_version(world):
    settings, repo, shas = world
    repository = Repo.open(repo)
    commits = list(repository.commit_messages([shas["acked"]]))[:1]
    with open_store(settings) as store:
        (facts,) = read_facts(store, repo_key(repository), commits)
    found = {
        posted.message.kind: version_of(posted, facts) for posted in facts.postings
    }
    assert found == {Kind.COVER: 1, Kind.PATCH: 1}


def test_a_review_by_the_committer_alone_is_flagged_and_strict_drops_it(world, audits):
    found = audits["committer-only"]
    assert found.committer_only
    assert "committer only" in found.evidence
    strict = run(world, strict=True)
    assert strict["committer-only"].verdict is Verdict.UNREVIEWED
    assert strict["reviewed"].verdict is Verdict.REVIEWED


def test_earlier_version_reviewed_names_the_changelog_of_the_later_one(audits):
    found = audits["earlier"]
    assert found.delta is not None and found.delta.disclosed == "changelog in v2"
    assert {change.kind for change in found.delta.changes} == {"added", "dropped"}


def test_outside_the_archive_says_which_end_and_its_dates(audits):
    assert audits["initial"].evidence == (
        "no posting found; written 2021-01-09, before the archive's first mail "
        "(2021-03-01)"
    )
    assert audits["postdates"].evidence == (
        "no posting found; committed 2021-04-24, after the archive's last mail "
        "(2021-04-09)"
    )
    assert audits["not-posted"].evidence == "no posting found"


def test_the_archive_is_the_repositorys_lists_else_every_list(world):
    """The other list's mail, years before and after, widens no window of a
    repository whose postings were seen on frob-devel only; a repository with no
    posting is judged against every list."""
    settings, repo, _ = world
    summary = audit(settings, repo=repo, options=AuditOptions(limit=1))
    archive = summary.archive
    assert archive is not None
    assert archive.lists == ("frob-devel.lists.example.org",)
    assert (archive.first, archive.last) == (
        BASE_DATE + timedelta(minutes=1),
        COMMIT_DATE + timedelta(days=30),
    )
    with open_store(settings) as store:
        every = archive_window(store, "/no/such/repo")
    assert every is not None
    assert every.lists == ("frob-devel.lists.example.org", "other.lists.example.org")
    assert (every.first, every.last) == (
        COMMIT_DATE - timedelta(days=3650),
        COMMIT_DATE + timedelta(days=1500),
    )


def test_exempt_from_the_config(world):
    settings, repo, shas = world
    exempting = settings._replace(audit_exempt=("^i: ",))
    found: list[CommitAudit] = []
    audit(exempting, repo=repo, options=AuditOptions(revs=(shas["unreviewed"],) ,
          limit=1), on_commit=found.append)  # fmt: skip
    assert found[0].verdict is Verdict.EXEMPT
    assert found[0].evidence == "the config exempts /^i: /"


def test_a_bad_exempt_pattern_is_a_usage_error(world):
    settings, repo, _ = world
    broken = settings._replace(audit_exempt=("(",))
    with pytest.raises(errors.UsageError, match="no regular expression"):
        audit(broken, repo=repo, options=AuditOptions())


def test_a_fuzzy_low_score_match_with_other_code_is_uncertain(world):
    settings, repo, shas = world
    repository = Repo.open(repo)
    commits = list(repository.commit_messages([shas["unreviewed"]]))[:1]
    with open_store(settings) as store:
        (facts,) = read_facts(store, repo_key(repository), commits)
        posted = facts.postings[0]
        weak = posted._replace(link=posted.link._replace(method="subject", score=0.65))
        facts = facts._replace(
            row=facts.row._replace(patch_id="0" * 40),
            postings=(weak,),
        )
        sources = Sources(store.diff, store.body, lambda sha, renames: None)
        found = decide(facts, people=People(None), rules=Rules(), sources=sources)
    assert found.verdict is Verdict.UNCERTAIN
    assert found.evidence == "v1 found by subject, score 0.65"


def test_read_only_leaves_unmatched_commits_uncertain(world, tmp_path):
    settings, repo, _ = world
    other = clone(repo, tmp_path / "other")
    found: list[CommitAudit] = []
    audit(settings, repo=other, options=AuditOptions(match_first=False),
          on_commit=found.append)  # fmt: skip
    assert {one.verdict for one in found} <= {Verdict.UNCERTAIN, Verdict.EXEMPT}
    assert any(one.evidence.startswith("not matched yet") for one in found)


def test_summary_counts_coverage_and_tags(world):
    settings, repo, _ = world
    summary = audit(settings, repo=repo, options=AuditOptions(by="dir"))
    tally = summary.tally
    assert tally.total == 15
    assert tally.audited == 11  # neither the 2 exempt nor the 2 outside the archive
    assert tally.counts[Verdict.REVIEWED] == 4
    assert tally.counts[Verdict.OUTSIDE] == 2
    assert tally.strict == pytest.approx(4 / 11)
    assert tally.lenient == pytest.approx(7 / 11)
    # The Reviewed-by of a commit outside the archive is counted apart.
    assert (summary.tags, summary.tags_backed, summary.tags_outside) == (4, 3, 1)
    assert summary.groups["(top)"].total == 15
    assert summary.matched == 0  # the module's first audit matched them


def test_json_keeps_the_issue_keys(audits):
    data = audit_json(audits["changed"])
    assert list(data)[:3] == ["commit", "subject", "verdict"]
    for key in ("applied", "versions", "reviews", "tags", "delta"):
        assert key in data
    assert set(data["applied"]) == {"message_id", "version"}
    assert {"trailer", "name", "email", "message_id", "version"} <= set(
        data["reviews"][0]
    )
    assert {"from_version", "files", "added", "removed", "disclosed"} <= set(
        data["delta"]
    )
    assert data["delta"]["hunks"][0]["kind"] == "edited"
    tags = audit_json(audits["reviewed"])["tags"]
    assert {"trailer", "name", "email", "backed_by"} <= set(tags[0])


def test_sarif_is_a_minimal_valid_log(world, audits):
    settings, repo, _ = world
    summary = audit(settings, repo=repo, options=AuditOptions())
    log = audit_sarif(list(audits.values()), summary, version="0")
    assert log["version"] == "2.1.0"
    (run_,) = log["runs"]
    assert run_["tool"]["driver"]["name"] == "e2g"
    rules = {rule["id"] for rule in run_["tool"]["driver"]["rules"]}
    results = run_["results"]
    assert len(results) == sum(
        a.verdict is not Verdict.REVIEWED for a in audits.values()
    )
    for result in results:
        assert result["ruleId"] in rules
        assert result["level"] in ("none", "note", "warning", "error")
        assert result["message"]["text"]
        (location,) = result["locations"]
        (logical,) = location["logicalLocations"]
        assert re.fullmatch(r"[0-9a-f]{40}", logical["name"])
    assert audit_summary_json(summary)["summary"]["commits"] == 15


def test_the_benchmark_runs_and_its_verdicts_agree(world, audits, tmp_path, capsys):
    """benchmarks/audit.py on the built store (`audits` matched it first): a round
    per -j, one JSON object."""
    import importlib.util
    import json
    import sys

    settings, repo, _ = world
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "audit.py"
    spec = importlib.util.spec_from_file_location("bench_audit", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    code = module.main(
        [
            "--data-dir", str(settings.data_dir), "--repo", str(repo),
            "--jobs", "1", "2", "--rounds", "1", "--logs", str(tmp_path), "--json",
        ]
    )  # fmt: skip
    result = json.loads(capsys.readouterr().out)
    assert code == 0
    assert result["verdicts_agree"]
    assert [run["commits"] for run in result["runs"]] == [15, 15]
    assert result["counts"]["reviewed"] == 4
