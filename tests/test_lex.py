"""The token lexer: what a token is, and properties that hold for any text.

A whole comment or string is one token; whitespace is none; the view has one line
per token; and a change of layout alone (re-indent, a line split or join outside
comments and strings) changes no token, so token blame gives nobody such commits.
"""

from __future__ import annotations

import string

from hypothesis import example, given, settings
from hypothesis import strategies as st

from e2g.tokens.lex import LineLexer, PygmentsLexer, Token, lexer_for

C = lexer_for("drivers/frob/frob.c")


def texts(tokens: list[Token]) -> list[str]:
    return [token.text for token in tokens]


def test_c_tokens_comments_and_strings_are_one_each() -> None:
    source = (
        'a->b >>= 0x1fUL; /* one\n * comment */ s = "x \\" y"; // end\nc = \'\\n\';\n'
    )
    assert texts(C.tokens(source)) == [
        "a", "->", "b", ">>=", "0x1fUL", ";", "/* one\n * comment */",
        "s", "=", '"x \\" y"', ";", "// end", "c", "=", "'\\n'", ";",
    ]  # fmt: skip


def test_positions_are_lines_and_character_columns_from_one() -> None:
    tokens = C.tokens('int x;\n\tchar *é = "ü";\n')
    assert [(t.line, t.column, t.text) for t in tokens][3:] == [
        (2, 2, "char"), (2, 7, "*"), (2, 8, "é"), (2, 10, "="), (2, 12, '"ü"'), (2, 15, ";"),
    ]  # fmt: skip


def test_a_comment_over_blank_lines_is_one_token_and_one_view_line() -> None:
    source = "x;\n/* a\n\n   b */\ny;\n"
    assert texts(C.tokens(source)) == ["x", ";", "/* a\n\n   b */", "y", ";"]
    assert C.view(source) == "x\n;\n/* a b */\ny\n;\n"


def test_python_docstrings_and_hash_comments() -> None:
    python = lexer_for("tools/x.py")
    source = 'def f():\n    """Doc.\n\n    More."""\n    return 1  # why\n'
    assert texts(python.tokens(source)) == [
        "def", "f", "(", ")", ":", '"""Doc.\n\n    More."""', "return", "1", "# why",
    ]  # fmt: skip


def test_files_pygments_knows_are_lexed_by_it() -> None:
    lua = lexer_for("init.lua")
    assert isinstance(lua, PygmentsLexer)
    source = '-- note\nlocal x = "a b" .. 2\n--[[ long\ncomment ]]\n'
    assert texts(lua.tokens(source)) == [
        "-- note",
        "local",
        "x",
        "=",
        '"a b"',
        "..",
        "2",
        "--[[ long\ncomment ]]",
    ]
    assert len(lua.view(source).splitlines()) == 8


def test_translation_catalogs_keep_comments_and_strings_whole() -> None:
    catalog = lexer_for("po/fr.po")
    assert (
        isinstance(catalog, LineLexer) and lexer_for("po/git.pot").name == catalog.name
    )
    source = (
        '#: builtin/add.c:42 builtin/am.c:7\n#, c-format\nmsgid "Could not open \\"%s\\""\n'
        'msgstr ""\n"Impossible d\'ouvrir "\n"\\"%s\\""\n'
    )
    assert texts(catalog.tokens(source)) == [
        "#: builtin/add.c:42 builtin/am.c:7", "#, c-format", "msgid",
        '"Could not open \\"%s\\""', "msgstr", '""', '"Impossible d\'ouvrir "',
        '"\\"%s\\""',
    ]  # fmt: skip


def test_perl_by_any_of_its_suffixes_is_lexed_line_by_line() -> None:
    """`.perl` as `.pl` (pygments lexed git.git's gitweb.perl whole at each of its
    778 revisions: 340 s of a warm; line by line, its paragraphs cached: 17 s)."""
    names = (
        "gitweb/gitweb.perl",
        "git-svn.perl",
        "lib/Git.pm",
        "t/x.t",
        "a.pl",
        "b.ph",
    )
    assert {lexer_for(name).name for name in names} == {"line-hash"}
    assert lexer_for("shared.mak").name == lexer_for("config.mk").name == "line-hash"
    perl = lexer_for("gitweb/gitweb.perl")
    # `$#list` (the last index) and the shell's `${#name}` (a length) are no
    # comments; a `#` in a regular expression still reads as one (telling a
    # regular expression from a division takes a Perl parser).
    source = 'my $n = $#list + 1; # last\nprint "a # b", ${#x}, s/#//r;\n'
    assert texts(perl.tokens(source)) == [
        "my", "$", "n", "=", "$", "#", "list", "+", "1", ";", "# last",
        "print", '"a # b"', ",", "$", "{", "#", "x", "}", ",", "s", "/", "#//r;",
    ]  # fmt: skip


def test_unknown_files_fall_back_to_words() -> None:
    lexer = lexer_for("NOTES.unknownsuffix")
    assert isinstance(lexer, LineLexer)
    assert texts(lexer.tokens("hello, world 42\n")) == ["hello", ",", "world", "42"]


# -- properties ---------------------------------------------------------------------------

WORDS = st.sampled_from(
    [
        "int",
        "x",
        "frob_dev",
        "0x10",
        "1.5e3",
        "(",
        ")",
        "{",
        "}",
        ";",
        "->",
        ">>=",
        "==",
        "*",
        "&&",
    ]
)
SPACE = st.sampled_from([" ", "  ", "\t", "\n", "\n\n", " \n\t"])
COMMENTS = st.builds(
    lambda words: "/* " + " ".join(words) + " */",
    st.lists(
        st.text(alphabet=string.ascii_letters, min_size=1, max_size=6),
        min_size=1,
        max_size=4,
    ),
)


@st.composite
def programs(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """(tokens, the whitespace after each): code whose tokens are known."""
    tokens = draw(st.lists(st.one_of(WORDS, COMMENTS), min_size=1, max_size=40))
    spaces = [draw(SPACE) for _ in tokens]
    return tokens, spaces


def join(tokens: list[str], spaces: list[str]) -> str:
    return "".join(token + space for token, space in zip(tokens, spaces, strict=True))


@settings(max_examples=300, deadline=None)
@given(programs())
def test_tokens_are_what_was_written_whatever_the_layout(program) -> None:
    tokens, spaces = program
    source = join(tokens, spaces)
    assert [t.text for t in C.tokens(source)] == tokens
    assert C.view(source) == "".join(f"{token}\n" for token in tokens)


@settings(max_examples=300, deadline=None)
@given(programs(), st.lists(SPACE, min_size=40, max_size=40))
def test_the_view_does_not_change_with_the_layout(program, other) -> None:
    tokens, spaces = program
    relaid = join(tokens, other[: len(tokens)])
    assert C.view(join(tokens, spaces)) == C.view(relaid)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
@example('" ')  # an unclosed string ended with the line's spaces
@example("/* open\n\n  x")
@example("'a  ")
def test_any_text_lexes_into_tokens_where_they_stand(text) -> None:
    """Any text: one view line per token, each token's text found at its place."""
    lines = text.split("\n")
    tokens = C.tokens(text)
    view = C.view(text)
    assert view.count("\n") == len(tokens) and (not view or view.endswith("\n"))
    for token in tokens:
        first = token.text.split("\n")[0]
        line = lines[token.line - 1]
        assert line[token.column - 1 : token.column - 1 + len(first)] == first
        assert token.text.strip() == token.text and token.text


BLOCKS = st.lists(
    st.one_of(
        WORDS,
        SPACE,
        st.sampled_from(["/*", "*/", "/* a\n\n b */", '"s', '"', "'", "//", "\\\n"]),
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(BLOCKS)
@example(["x", "/*", "\n", "a", "\n\n", "*/", "y"])
@example(["/*", "\n", "never closed"])
def test_tokens_made_line_by_line_are_the_whole_walk(pieces) -> None:
    """tokens() gives a line outside any open token its tokens directly and walks
    only the runs inside one: the same tokens as walking every line (_walk, the
    definition the view is built from)."""
    text = "".join(pieces)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    done, open_token, _ = C._walk(lines, None)
    if open_token is not None:
        done.append((*open_token, True))
    walked = [(line, column, "\n".join(parts)) for line, column, parts, _ in done]
    assert [tuple(token) for token in C.tokens(text)] == walked


# -- pygments' choice of a lexer, by patterns looked up --------------------------------


def _names_from_patterns() -> list[str]:
    """File names that match pygments' own patterns, a wildcard filled each way."""
    from pygments.lexers._mapping import LEXERS

    names: set[str] = set()
    for _, _, _, patterns, _ in LEXERS.values():
        for pattern in patterns:
            for fill in ("", "x", "a.b", "Makefile", ".c"):
                name = pattern.replace("*", fill).replace("?", "q")
                while "[" in name and "]" in name[name.index("[") :]:
                    start = name.index("[")
                    end = name.index("]", start)
                    name = name[:start] + name[start + 1 : end][:1] + name[end + 1 :]
                names.add(name)
    return sorted(name for name in names if name)


def test_the_lexer_chosen_for_every_pygments_pattern_is_pygments_own() -> None:
    from pygments.lexers import find_lexer_class_for_filename

    from e2g.tokens.lex import _pygments_class

    names = _names_from_patterns()
    assert len(names) > 2000
    wrong = [
        (name, _pygments_class(name), find_lexer_class_for_filename(name))
        for name in names
        if _pygments_class(name) is not find_lexer_class_for_filename(name)
    ]
    assert wrong == []


_PIECES = st.sampled_from(
    ["", ".", "c", "h", "in", "Makefile", "txt", "py", "CMakeLists", "rc", "bash_"]
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_PIECES, min_size=1, max_size=4), st.text(string.ascii_letters, max_size=3)
)
@example(["Kconfig", ".", "debug"], "")
@example(["Config.in", ".", "x"], "Sys")
def test_any_name_gets_the_lexer_pygments_would_give_it(
    pieces: list[str], head: str
) -> None:
    from pygments.lexers import find_lexer_class_for_filename

    from e2g.tokens.lex import _pygments_class

    name = head + "".join(pieces)
    if not name:
        return
    assert _pygments_class(name) is find_lexer_class_for_filename(name)
