"""Token blame on a history built here, where every token's origin is known.

The history (one C file, then renamed) has an identifier rename, a line split and
a join, a literal change, a function moved within the file, a whole-file re-indent,
a commit listed in `.git-blame-ignore-revs`, a file rename, and a merge that brings a
function from its second parent. Every token of the final file is checked against
the commit that wrote it, and the commits that changed no token must own none.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from e2g import config, errors
from e2g.api.tokens import token_blame, token_history
from e2g.git.filehistory import file_history
from e2g.git.repo import UNCOMMITTED, Repo
from e2g.git.tokenview import TokenHistory, cache_key
from e2g.tokens.lex import lexer_for
from tests.conftest import SAMPLE_ARCHIVES, git, sample_repo

BASE = """\
/* calc:   adds things */
int add(int a, int b)
{
\treturn a + b;
}

int scale(int x)
{
\treturn x * 2;
}

static int helper(int v)
{
\treturn v - 1;
}
"""

FINAL = """\
/* calc: adds things */
static int helper(int v)
{
    return v - 2;
}

int add(int a, int bb)
{
    return a + bb;
}

int scale(const int x)
{
    return x * 3;
}
/* renamed */
int twice(int t)
{
    return t + t;
}
"""


class History:
    """A repository built commit by commit, each with its own author and date."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.count = 0
        git(root.parent, "init", "-q", "-b", "main", str(root))

    def commit(self, name: str, files: dict[str, str | None]) -> str:
        for path, text in files.items():
            target = self.root / path
            if text is None:
                git(self.root, "rm", "-q", path)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            git(self.root, "add", path)
        return self.commit_staged(name)

    def commit_staged(self, name: str, *extra: str) -> str:
        env = self._identity(name)
        git(self.root, "commit", "-q", "-m", f"{name}: change", *extra, env=env)
        return git(self.root, "rev-parse", "HEAD").strip()

    def _identity(self, name: str) -> dict[str, str]:
        """Each commit its own author and a date a day after the one before."""
        self.count += 1
        return _identity_env(name, f"2020-01-{self.count:02d}T12:00:00+00:00")

    def merge(self, name: str, branch: str) -> str:
        env = self._identity(name)
        git(
            self.root, "merge", "-q", "--no-ff", "-m", f"{name}: merge", branch, env=env
        )
        return git(self.root, "rev-parse", "HEAD").strip()


def _identity_env(name: str, date: str) -> dict[str, str]:
    return {
        **_clean_env(),
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": f"{name}@example.org",
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": f"{name}@example.org",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
    }


def _clean_env() -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent"}


def build(root: Path) -> dict[str, str]:
    """The history; the sha of each step by name."""
    history = History(root)
    shas: dict[str, str] = {}
    text = BASE
    shas["base"] = history.commit("base", {"src/calc.c": text})
    text = text.replace("int b)", "int bb)").replace("a + b;", "a + bb;")
    shas["rename-identifier"] = history.commit("rename", {"src/calc.c": text})
    text = text.replace("int add(int a, int bb)", "int add(int a,\n\tint bb)")
    shas["split"] = history.commit("split", {"src/calc.c": text})
    text = text.replace("x * 2", "x * 3")
    shas["literal"] = history.commit("literal", {"src/calc.c": text})
    helper = "static int helper(int v)\n{\n\treturn v - 1;\n}\n"
    text = text.replace("\n" + helper, "")
    text = text.replace(
        "/* calc:   adds things */\n", "/* calc:   adds things */\n" + helper + "\n"
    )
    shas["move"] = history.commit("move", {"src/calc.c": text})
    text = text.replace("\t", "    ").replace("calc:   adds", "calc: adds")
    shas["reindent"] = history.commit("reindent", {"src/calc.c": text})
    text = text.replace("int add(int a,\n    int bb)", "int add(int a, int bb)")
    shas["join"] = history.commit("join", {"src/calc.c": text})
    text = text.replace("v - 1", "v - 2")
    shas["ignored"] = history.commit("ignored", {"src/calc.c": text})
    shas["ignore-file"] = history.commit(
        "ignorefile", {".git-blame-ignore-revs": f"# bulk change\n{shas['ignored']}\n"}
    )
    git(root, "mv", "src/calc.c", "src/math.c")
    (root / "src" / "math.c").write_text(text + "/* renamed */\n")
    git(root, "add", "src/math.c")
    shas["file-rename"] = history.commit_staged("filerename")
    git(root, "checkout", "-q", "-b", "side")
    twice = "int twice(int t)\n{\n    return t + t;\n}\n"
    shas["side"] = history.commit(
        "side", {"src/math.c": text + "/* renamed */\n" + twice}
    )
    git(root, "checkout", "-q", "main")
    main_text = (
        text.replace("int scale(int x)", "int scale(const int x)") + "/* renamed */\n"
    )
    shas["main"] = history.commit("main", {"src/math.c": main_text})
    shas["merge"] = history.merge("merge", "side")
    assert (root / "src" / "math.c").read_text() == FINAL
    return shas


def expected_origins(shas: dict[str, str]) -> dict[tuple[int, str], str]:
    """(line, token) -> the commit that wrote it; every other token is the base's."""
    return {
        (7, "bb"): shas["rename-identifier"],
        (9, "bb"): shas["rename-identifier"],
        (12, "const"): shas["main"],
        (14, "3"): shas["literal"],
        (16, "/* renamed */"): shas["file-rename"],
        **dict.fromkeys(_tokens_of_lines(range(17, 21)), shas["side"]),
    }


def moved_punctuation(line: int, token: str) -> bool:
    """A punctuation token of the moved function (lines 2-5). git's -M looks for a
    moved block's lines in the parent by diffing the block against the whole file,
    which pairs its last `;` and `}` lines with the first `;` and `}` it meets, and
    then scores that piece by its letters and digits (none): those two stay with
    the move. cregit names this its one failure mode (diff misalignment); the issue
    asks for identifiers, keywords, literals and comments, which are all right."""
    return 2 <= line <= 5 and not any(character.isalnum() for character in token)


def _tokens_of_lines(lines: range) -> list[tuple[int, str]]:
    tokens = lexer_for("x.c").tokens(FINAL)
    return [(token.line, token.text) for token in tokens if token.line in lines]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("tokens") / "repo"
    return root, build(root)


def blame_view(
    repo_path: Path,
    cache: Path,
    path: str = "src/math.c",
    rev: str = "HEAD",
    *,
    ignore: bool = True,
) -> list[tuple[int, int, str, str]]:
    """(line, column, token, real sha) for each token of `path` at `rev`."""
    repo = Repo.open(repo_path)
    head = repo.resolve(rev)
    lexer = lexer_for(path)
    revisions, tip = file_history(repo, head, path)
    assert tip is not None
    with TokenHistory(
        repo, path, lexer, cache / cache_key(repo, path, lexer)
    ) as history:
        history.update(revisions)
        blamed = history.blame(tip, ignore=repo.ignored_revs() if ignore else ())
    tokens = lexer.tokens(repo.file_text(head, path))
    assert len(tokens) == len(blamed.origins)
    return [
        (token.line, token.column, token.text, origin.sha)
        for token, origin in zip(tokens, blamed.origins, strict=True)
    ]


def test_every_token_is_blamed_on_the_commit_that_wrote_it(
    built, tmp_path: Path
) -> None:
    root, shas = built
    expected = expected_origins(shas)
    found = blame_view(root, tmp_path)
    assert len(found) == len(lexer_for("x.c").tokens(FINAL))
    wrong = [
        (line, column, token, sha[:8])
        for line, column, token, sha in found
        if sha != expected.get((line, token), shas["base"])
        and not moved_punctuation(line, token)
    ]
    assert wrong == []
    owners = {sha for _, _, _, sha in found}
    for step in ("split", "reindent", "join", "ignored", "merge"):
        assert shas[step] not in owners, f"{step} changed no token but owns one"
    moved = [(line, token) for line, _, token, sha in found if sha == shas["move"]]
    assert all(moved_punctuation(line, token) for line, token in moved)


def test_a_revision_named_in_ignore_revs_is_looked_through_only_when_listed(
    built, tmp_path: Path
) -> None:
    root, shas = built
    found = blame_view(root, tmp_path, ignore=False)
    two = [sha for line, _, token, sha in found if (line, token) == (4, "2")]
    assert two == [shas["ignored"]]


def test_line_blame_gives_whole_lines_where_token_blame_does_not(
    built, tmp_path: Path
) -> None:
    """The reason for tokens: line blame gives line 14 to the literal change, and
    line 12 to the commit that added `const`, although most of their tokens are older."""
    root, shas = built
    out = git(root, "blame", "-w", "-M", "--porcelain", "-L12,14", "src/math.c")
    assert out.split()[0] == shas["main"]
    found = blame_view(root, tmp_path)
    line_12 = {token: sha for line, _, token, sha in found if line == 12}
    assert line_12["scale"] == shas["base"] and line_12["const"] == shas["main"]


def test_an_older_revision_and_a_later_one_share_the_cache(
    built, tmp_path: Path
) -> None:
    """A second revision of the same file imports only the revisions it adds."""
    root, shas = built
    repo = Repo.open(root)
    lexer = lexer_for("src/calc.c")
    directory = tmp_path / cache_key(repo, "src/calc.c", lexer)
    revisions, tip = file_history(repo, shas["literal"], "src/calc.c")
    with TokenHistory(repo, "src/calc.c", lexer, directory) as history:
        assert history.update(revisions) == 4
        assert tip is not None
        blamed = history.blame(tip)
    assert {origin.sha for origin in blamed.origins} == {
        shas["base"],
        shas["rename-identifier"],
        shas["literal"],
    }
    revisions, tip = file_history(repo, shas["join"], "src/calc.c")
    with TokenHistory(repo, "src/calc.c", lexer, directory) as history:
        assert history.update(revisions) == 3  # move, reindent, join
        assert tip == f"{shas['join']}:src/calc.c"
    # The throwaway repository has none of a template's files (sample hooks...),
    # and git never packs it on its own.
    views = directory / "view.git"
    assert not (views / "hooks").exists() and not (views / "description").exists()
    found = subprocess.run(
        ["git", "--git-dir", str(views), "config", "gc.auto"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert found.stdout.strip() == "0"


def test_a_damaged_cache_is_rebuilt(built, tmp_path: Path) -> None:
    root, shas = built
    first = blame_view(root, tmp_path)
    for state in tmp_path.glob("*/state.json"):
        state.write_text("{not json")
    assert blame_view(root, tmp_path) == first


def test_a_path_deleted_and_added_again_keeps_its_first_life(tmp_path: Path) -> None:
    """git's apply.c was deleted and added back years later (from builtin/apply.c);
    the tokens that came back keep the commits that first wrote them."""
    history = History(tmp_path / "repo")
    first = history.commit("first", {"a.c": "int keep(void);\nint other(void);\n"})
    history.commit("moved", {"a.c": None, "b.c": "int keep(void);\nint other(void);\n"})
    back = history.commit(
        "back",
        {"b.c": None, "a.c": "int keep(void);\nint other(void);\nint added(void);\n"},
    )
    found = blame_view(history.root, tmp_path / "cache", path="a.c")
    owners = {sha for line, _, _, sha in found if line <= 2}
    assert owners == {first}
    assert {sha for line, _, _, sha in found if line == 3} == {back}


# -- through the API and the command line, against the sample's mail ------------------


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[config.Settings, Path]:
    from e2g.api.core import ingest

    for path in SAMPLE_ARCHIVES:
        if not path.exists():
            pytest.skip(f"{path} is not there")
    root = tmp_path_factory.mktemp("sample-tokens")
    repo = sample_repo(root / "repo")
    settings = config.resolve(data_dir=root / "data", env={}, home=root)
    ingest(settings, [str(path) for path in SAMPLE_ARCHIVES], workers=1)
    return settings, repo


OFF_BY_ONE = "c225ab88"  # changed `>` into `>=` on line 23 of drivers/frob/frob.c


def test_a_data_dir_it_cannot_write_caches_in_a_private_temp_dir(
    sample, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The web reading a store it may not write (a read-only mount) still answers:
    the token histories go to the user's own directory in the temp dir, and a
    directory another user planted there is never used."""
    import shutil
    import tempfile

    settings, repo = sample
    data = tmp_path / "data"
    shutil.copytree(settings.data_dir, data, ignore=shutil.ignore_patterns("tokens"))
    (data / "tokens").write_text("not a directory\n")  # as unwritable as it gets
    copy = settings._replace(data_dir=data)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    mine = tmp_path / "tmp" / f"e2g-{os.getuid()}"
    mine.mkdir(mode=0o755)  # planted with the wrong mode: refused
    with pytest.raises(errors.UsageError, match="cache directory it can write"):
        token_blame(copy, "drivers/frob/frob.c", "HEAD", repo=repo)
    mine.rmdir()
    result = token_blame(copy, "drivers/frob/frob.c", "HEAD", repo=repo)
    expected = token_blame(settings, "drivers/frob/frob.c", "HEAD", repo=repo)
    assert result.spans == expected.spans
    assert oct(mine.stat().st_mode & 0o777) == oct(0o700)
    assert list((mine / "tokens").glob("*/results/*.json"))


def test_spans_name_the_commit_of_each_token_with_its_review(sample) -> None:
    settings, repo = sample
    result = token_blame(settings, "drivers/frob/frob.c", "HEAD", repo=repo)
    line_23 = [span for span in result.spans if span.line == 23]
    assert [span.text for span in line_23] == ["if (*ppos", ">=", "frob_dev.len)"]
    fix = line_23[1]
    assert fix.sha.startswith(OFF_BY_ONE) and fix.column == len("\tif (*ppos ") + 1
    review = result.reviews[fix.sha]
    assert review.status == "matched" and review.postings
    assert line_23[0].sha == line_23[2].sha != fix.sha


def test_a_cached_answer_is_the_same(sample) -> None:
    settings, repo = sample
    first = token_blame(settings, "drivers/frob/frob.c", "HEAD", repo=repo)
    assert list((settings.data_dir / "tokens").glob("*/results/*.json"))
    again = token_blame(settings, "drivers/frob/frob.c", "HEAD", repo=repo)
    assert again.spans == first.spans


def test_history_of_one_token_goes_back_through_what_it_replaced(sample) -> None:
    settings, repo = sample
    reviews = token_history(
        settings,
        "drivers/frob/frob.c",
        "HEAD",
        repo=repo,
        line=23,
        column=len("\tif (*ppos ") + 1,
    )
    shas = [review.commit.sha for review in reviews]
    assert shas[0].startswith(OFF_BY_ONE)
    assert (
        len(shas) == 2
        and shas[1] == git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    )


def test_work_tree_changes_are_not_committed_yet(sample) -> None:
    settings, repo = sample
    path = repo / "drivers" / "frob" / "frob.c"
    original = path.read_text()
    try:
        path.write_text(original.replace("frob_dev.len)", "frob_dev.size)", 1))
        result = token_blame(settings, "drivers/frob/frob.c", repo=repo)
    finally:
        path.write_text(original)
    changed = [span for span in result.spans if span.sha == UNCOMMITTED]
    assert [(span.line, span.text) for span in changed] == [(23, "size")]
    assert result.reviews[UNCOMMITTED].status == "not-committed"


def test_a_bare_repository_blames_head(sample, tmp_path: Path) -> None:
    settings, repo = sample
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    tokens = token_blame(settings, "drivers/frob/frob.c", repo=bare)
    assert tokens.rev == git(repo, "rev-parse", "HEAD").strip()
    from e2g.api.blame import blame

    lines = blame(settings, "drivers/frob/frob.c", repo=bare)
    assert lines.rev == tokens.rev and lines.runs


def test_no_token_there_is_a_clear_error(sample) -> None:
    settings, repo = sample
    with pytest.raises(errors.UsageError, match="no token at line 23, column 1"):
        token_history(
            settings, "drivers/frob/frob.c", "HEAD", repo=repo, line=23, column=1
        )


def e2g(
    settings: config.Settings, repo: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "e2g", "--data-dir", str(settings.data_dir), *args],
        capture_output=True,
        text=True,
        cwd=repo,
        env={**os.environ, "E2G_PAGER": "cat"},
        check=False,
    )


def test_command_line_json_spans_keep_their_keys(sample) -> None:
    settings, repo = sample
    done = e2g(
        settings,
        repo,
        "blame",
        "--tokens",
        "drivers/frob/frob.c",
        "HEAD",
        "--json",
        "-L",
        "23,23",
    )
    assert done.returncode == 0, done.stderr
    spans = [json.loads(line) for line in done.stdout.splitlines()]
    assert [span["text"] for span in spans] == ["if (*ppos", ">=", "frob_dev.len)"]
    keys = {
        "line",
        "column",
        "text",
        "commit",
        "subject",
        "author",
        "date",
        "status",
        "trees",
        "postings",
    }
    assert all(set(span) == keys for span in spans)
    assert spans[1]["postings"][0]["message_id"]


def test_command_line_text_colours_only_when_asked(sample) -> None:
    settings, repo = sample
    plain = e2g(
        settings, repo, "blame", "--tokens", "drivers/frob/frob.c", "-L", "23,23"
    )
    assert plain.returncode == 0, plain.stderr
    assert "\x1b[" not in plain.stdout
    assert OFF_BY_ONE in plain.stdout and "if (*ppos >= frob_dev.len)" in plain.stdout
    coloured = e2g(
        settings,
        repo,
        "blame",
        "--tokens",
        "drivers/frob/frob.c",
        "-L",
        "23,23",
        "--color=always",
    )
    assert "\x1b[38;5;" in coloured.stdout


def test_command_line_location_gives_a_token_history(sample) -> None:
    settings, repo = sample
    done = e2g(
        settings,
        repo,
        "blame",
        "--tokens",
        f"drivers/frob/frob.c:23:{len(chr(9) + 'if (*ppos ') + 1}",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    commits = [json.loads(line)["commit"] for line in done.stdout.splitlines()]
    assert commits[0].startswith(OFF_BY_ONE) and len(commits) == 2
    bad = e2g(
        settings, repo, "blame", "--tokens", "drivers/frob/frob.c", "--column", "3"
    )
    assert bad.returncode == 2 and "needs -L" in bad.stderr


def test_code_moved_in_from_another_file_keeps_its_commit(tmp_path: Path) -> None:
    """The view follows one file; code moved in from another file in the same commit
    (git's builtin/apply.c -> apply.c) keeps its commit through line blame's -C: a
    token is never newer than the commit line blame gives its line."""
    from e2g.api.tokens import token_origins

    history = History(tmp_path / "repo")
    # Each side of the edited line has the 40 letters and digits git's -C asks of a copy.
    function = (
        "static int frobnicate_the_device(int requested_level)\n{\n"
        "\tint limit = requested_level * 16;\n"
        "\treturn limit + requested_level + default_offset_value;\n}\n"
    )
    first = history.commit(
        "first",
        {"a.c": "int keep_a(void);\n\n" + function, "b.c": "int keep_b(void);\n"},
    )
    moved = function.replace("level * 16", "level * 32")
    move = history.commit(
        "move", {"a.c": "int keep_a(void);\n", "b.c": "int keep_b(void);\n\n" + moved}
    )
    settings = config.resolve(data_dir=tmp_path / "data", env={}, home=tmp_path)
    repo = Repo.open(history.root)
    text = repo.file_text(move, "b.c")
    tokens, blamed = token_origins(
        settings, repo, "b.c", move, lexer_for("b.c"), text=text, contents=None
    )
    origin = {
        (token.line, token.text): found.sha
        for token, found in zip(tokens, blamed.origins, strict=True)
    }
    assert (
        origin[(3, "frobnicate_the_device")] == origin[(3, "requested_level")] == first
    )
    assert origin[(6, "limit")] == origin[(6, "default_offset_value")] == first
    assert origin[(5, "32")] == move
    assert origin[(1, "keep_b")] == first


@pytest.mark.parametrize(
    "fault",
    [
        "kill@tokens.revision",
        "kill@tokens.state",
        "kill@tokens.result",
    ],
)
def test_a_run_killed_while_it_writes_the_cache_leaves_it_whole(
    sample, tmp_path: Path, fault: str
) -> None:
    """SIGKILL while the throwaway history, its state or an answer is written: the
    next run gives what a run on an empty cache gives."""
    from tests import fault_hook

    settings, repo = sample
    data = tmp_path / "data"
    shutil.copytree(settings.data_dir, data, ignore=shutil.ignore_patterns("tokens"))
    command = [
        sys.executable,
        "-m",
        "e2g",
        "--data-dir",
        str(data),
        "blame",
        "--tokens",
        "drivers/frob/frob.c",
        "HEAD",
        "--json",
    ]
    env = {
        **os.environ,
        "E2G_PAGER": "cat",
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
    }
    killed = subprocess.run(
        command,
        cwd=repo,
        env={**env, **fault_hook.environment(fault)},
        capture_output=True,
        text=True,
        check=False,
        start_new_session=True,
    )
    assert killed.returncode == -9
    again = subprocess.run(
        command, cwd=repo, env=env, capture_output=True, text=True, check=False
    )
    assert again.returncode == 0, again.stderr
    shutil.copytree(
        settings.data_dir,
        tmp_path / "fresh",
        ignore=shutil.ignore_patterns("tokens"),
        dirs_exist_ok=True,
    )
    fresh = subprocess.run(
        [*command[:4], str(tmp_path / "fresh"), *command[5:]],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert fresh.returncode == 0, fresh.stderr
    assert again.stdout == fresh.stdout and again.stdout.count("\n") > 50


def test_bad_input_gets_one_line_and_its_exit_code(sample) -> None:
    settings, repo = sample
    for args, code, words in [
        (["drivers/frob/firmware.bin"], 2, "binary file"),
        (["drivers"], 2, "is a directory"),
        (["nope.c"], 1, "no file nope.c"),
        (["drivers/frob/frob.c", "nosuchrev"], 1, "unknown revision"),
        (
            ["drivers/frob/frob.c", "-L", "999", "--column", "1"],
            2,
            "outside drivers/frob/frob.c",
        ),
        (["drivers/frob/frob.c", "--color=sometimes"], 2, "bad --color"),
    ]:
        done = e2g(settings, repo, "blame", "--tokens", *args)
        assert done.returncode == code, (args, done.stderr)
        assert words in done.stderr and "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


def test_the_command_gives_every_token_its_commit(built, tmp_path: Path) -> None:
    """What `e2g blame --tokens` answers (the view's answer, then line blame's -M -C
    where it names an older commit): every token right but the moved function's
    last punctuation (see moved_punctuation)."""
    from e2g.api.tokens import token_origins

    root, shas = built
    settings = config.resolve(data_dir=tmp_path / "data", env={}, home=tmp_path)
    repo = Repo.open(root)
    head = repo.resolve("HEAD")
    text = repo.file_text(head, "src/math.c")
    tokens, blamed = token_origins(
        settings, repo, "src/math.c", head, lexer_for("x.c"), text=text, contents=None
    )
    expected = expected_origins(shas)
    wrong = [
        (token.line, token.text, origin.sha[:8])
        for token, origin in zip(tokens, blamed.origins, strict=True)
        if origin.sha != expected.get((token.line, token.text), shas["base"])
        and not moved_punctuation(token.line, token.text)
    ]
    assert wrong == []


def test_span_lines_are_the_spans_json_byte_for_byte(sample) -> None:
    """The command writes each span's commit once per commit: the same text as
    encoding token_span_json per span."""
    from e2g.render import token_span_json, token_span_lines

    settings, repo = sample
    result = token_blame(settings, "drivers/frob/frob.c", "HEAD", repo=repo)
    for dumps in (json.dumps, lambda data: json.dumps(data, ensure_ascii=False)):
        lines = list(token_span_lines(result.spans, result.reviews, dumps))
        expected = [
            dumps(token_span_json(span, result.reviews[span.sha]))
            for span in result.spans
        ]
        assert lines == expected and len(lines) > 50
