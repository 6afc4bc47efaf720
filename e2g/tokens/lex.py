"""A file's tokens, and its "token view": the same tokens one to a line.

What a token is (as cregit has it): an identifier, keyword, number, operator or
punctuation mark; a whole comment, or a whole string literal, is one token, even when
it runs over several lines; whitespace is none. A change of whitespace alone, a line
split or join, or a re-indent therefore changes no token, and token blame gives
nobody those commits.

Two lexers, chosen by the file's name:

- `LineLexer`, for the languages whose tokens are C's or the shell's (C and its
  family, Go, Rust, Java, JavaScript, Python, shell, Perl, make, ...): a regular
  expression per line that carries one state from line to line (inside a block comment
  or a triple-quoted string). Because a line's tokens depend only on the line and that
  state, the view of a revision is built from paragraphs cached by their text: a
  history of many revisions lexes each distinct paragraph once. Measured on git.git's
  diff.c (1,696 revisions, 7,858 lines): pygments on every revision whole would take
  about 8 minutes; this takes seconds, most of it reading the blobs.
- `PygmentsLexer`, for every other language pygments knows (about 600): the file
  lexed whole, its comment and string parts merged into one token each.

Translation catalogs (`.po`, `.pot`: `# comments`, keywords, C strings) are the
shell's family: pygments split their reference comments into words and took 121 s
to lex the 1,067 revisions of git.git's 19 catalogs.

Nothing here reads files or runs anything: text in, tokens out.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any, NamedTuple, Protocol

# A token of many lines is one line of the view: its lines' own whitespace folded to
# one space each, so re-indenting a comment changes nothing.
_FOLD = re.compile(r"\s+")
MAX_TOKEN_VIEW = 4096  # characters of one token written to the view (a huge comment)
# Bump whenever a lexer splits any text differently: token histories cached by an
# older one are built again (e2g.git.tokenview keys its caches by it).
VERSION = 3


class Token(NamedTuple):
    """A token of a file: `line` and `column` from 1, `column` counting characters."""

    line: int
    column: int
    text: str  # may run over several lines (a block comment, a multi-line string)

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")


class Lexer(Protocol):
    name: str

    def view(self, text: str) -> str:
        """The tokens of `text`, one to a line, in order: what git will blame."""
        ...

    def tokens(self, text: str) -> list[Token]:
        """The tokens of `text` where they stand; one for each line of view()."""
        ...

    def forget(self) -> None:
        """Drop what was kept of the texts lexed so far (a long history's views are
        done: git.git's po/fr.po, 70 revisions, kept 79 MB)."""
        ...


def view_text(text: str, *, folded: bool) -> str:
    """How one token reads in the view: never a newline; a multi-line token's (and a
    comment's) whitespace folded, so that only a change of its words counts."""
    if folded or "\n" in text:
        text = _FOLD.sub(" ", text).strip()
    return text[:MAX_TOKEN_VIEW]


# -- the line lexer ---------------------------------------------------------------------


class Syntax(NamedTuple):
    """A family of languages, as far as tokens go."""

    name: str
    # Where a line comment starts (regular expressions): the shell's and Perl's
    # `$#` and `${#` are the count or last index of something, not comments.
    line_comments: tuple[str, ...]
    # (opener, closer, is_comment): tokens that may run over several lines
    blocks: tuple[tuple[str, str, bool], ...]
    single_quote_is_char: bool  # C's 'a' (short); else a string like "..."


_OPERATORS = (
    r">>>=|<<=|>>=|\.\.\.|\*\*=|//=|->|=>|<=>|\+\+|--|<<|>>>|>>|<=|>=|==|!=|"
    r"&&|\|\||::|\*\*|\?\?|##|:=|[-+*/%&|^!=<>]="
)

C_SYNTAX = Syntax("c", ("//",), (("/*", "*/", True),), single_quote_is_char=True)
HASH_SYNTAX = Syntax("hash", (r"(?<![$\{])#",), (), single_quote_is_char=False)
PYTHON_SYNTAX = Syntax(
    "python",
    ("#",),
    (('"""', '"""', False), ("'''", "'''", False)),
    single_quote_is_char=False,
)


def _words(text: str) -> list[str]:
    return text.split()


_BY_SUFFIX = {
    **dict.fromkeys(
        _words(
            "c h cc cpp cxx c++ hh hpp hxx inl cu cuh m mm java js mjs cjs jsx ts tsx go "
            "rs cs swift kt kts scala dart groovy gradle proto y l d zig v sv svh vhd "
            "css scss less php"
        ),
        C_SYNTAX,
    ),
    **dict.fromkeys(
        _words(
            "sh bash zsh ksh pl pm t perl ph rb mk mak cmake awk tcl r conf cfg ini "
            "toml yaml yml spec bb bbappend nix po pot"
        ),
        HASH_SYNTAX,
    ),
    **dict.fromkeys(_words("py pyi pyw"), PYTHON_SYNTAX),
}
_BY_NAME = {
    **dict.fromkeys(
        _words(
            "Makefile GNUmakefile makefile Kbuild Kconfig Dockerfile CMakeLists.txt "
            "Rakefile Gemfile"
        ),
        HASH_SYNTAX,
    ),
}


def _pattern(syntax: Syntax) -> re.Pattern[str]:
    openers = "|".join(re.escape(opener) for opener, _, _ in syntax.blocks)
    # A line comment ends at its last visible character, not at the line's end.
    comments = "|".join(f"{prefix}(?:.*\\S)?" for prefix in syntax.line_comments)
    single = (
        r"'(?:\\.|[^'\\]){1,8}'"
        if syntax.single_quote_is_char
        else r"'(?:\\.|[^'\\])*'|'(?:.*\S)?"
    )
    parts = [
        r"(?P<ws>\s+)",
        *([f"(?P<open>{openers})"] if openers else []),
        *([f"(?P<comment>{comments})"] if comments else []),
        # A string not closed on its line ends at the line's last visible character.
        r'(?P<string>"(?:\\.|[^"\\])*"|"(?:.*\S)?|' + single + ")",
        r"(?P<token>\.?\d(?:[eEpP][+-]|[\w.'])*|[^\W\d]\w*|" + _OPERATORS + r"|\S)",
    ]
    return re.compile("|".join(parts))


# One lexed line: its pieces (0-based column, text, folded), the piece continuing the
# open token first when the line began inside one; and the state it ends in.
_Piece = tuple[int, str, bool]
_Line = tuple[tuple[_Piece, ...], str | None]


class LineLexer:
    """Tokens line by line, one state carried (the closer of an open block token)."""

    def __init__(self, syntax: Syntax) -> None:
        self.name = f"line-{syntax.name}"
        self._pattern = _pattern(syntax)
        self._closers = {
            opener: (closer, fold) for opener, closer, fold in syntax.blocks
        }
        self._folded = {closer: fold for _, closer, fold in syntax.blocks}
        self._lines: dict[tuple[str | None, str], _Line] = {}
        self._paragraphs: dict[tuple[str | None, str], tuple[str, str | None]] = {}
        # The paragraphs that begin and end outside any open token: their view.
        self._closed: dict[str, str] = {}

    def forget(self) -> None:
        self._lines.clear()
        self._paragraphs.clear()
        self._closed.clear()

    def lex_line(self, line: str, state: str | None) -> _Line:
        """The pieces of one line entered in `state` (None: no open token)."""
        key = (state, line)
        found = self._lines.get(key)
        if found is None:
            found = self._lex_line(line, state)
            if len(self._lines) > 500_000:  # bounded: a long history of a huge file
                self._lines.clear()
            self._lines[key] = found
        return found

    def _lex_line(self, line: str, state: str | None) -> _Line:
        pieces: list[_Piece] = []
        position = 0
        if state is not None:
            end = line.find(state)
            if end < 0:
                return ((0, line, True),), state
            position = end + len(state)
            pieces.append((0, line[:position], True))
        for match in self._pattern.finditer(line, position):
            kind = match.lastgroup
            if kind == "ws":
                continue
            if kind == "open":
                closer, fold = self._closers[match.group()]
                end = line.find(closer, match.end())
                if end < 0:
                    pieces.append((match.start(), line[match.start() :], fold))
                    return tuple(pieces), closer
                # The rest of the line is lexed after the closer: restart there.
                pieces.append(
                    (match.start(), line[match.start() : end + len(closer)], fold)
                )
                rest, state_out = self._lex_line(line[end + len(closer) :], None)
                offset = end + len(closer)
                pieces += [(column + offset, text, f) for column, text, f in rest]
                return tuple(pieces), state_out
            pieces.append((match.start(), match.group(), kind == "comment"))
        return tuple(pieces), None

    def tokens(self, text: str) -> list[Token]:
        """A line that begins and ends outside any open token (nearly every line)
        gives its tokens as they are; a run of lines from one that opens a token to
        the one where no token is open is walked whole (the 108 files of an update
        of git.git: 1.94 s -> 0.96 s)."""
        lines = _split_lines(text)
        make = Token._make  # tuple.__new__ itself: 2x the class's own __new__
        found: list[Token] = []
        index, count = 0, len(lines)
        while index < count:
            pieces, state = self.lex_line(lines[index], None)
            if state is None:
                number = index + 1
                found += [
                    make((number, column + 1, part)) for column, part, _ in pieces
                ]
                index += 1
                continue
            stop = index + 1
            while stop < count and state is not None:
                state = self.lex_line(lines[stop], state)[1]
                stop += 1
            done, open_token, _ = self._walk(lines[index:stop], None)
            if open_token is not None:
                done.append((*open_token, True))
            found += [
                make((line + index, column, "\n".join(parts)))
                for line, column, parts, _ in done
            ]
            index = stop
        return found

    def view(self, text: str) -> str:
        """Built from paragraphs (text between blank lines) cached by their text and
        the state they begin in: most of a revision is its parent's paragraphs.

        Paragraphs that begin and end outside any open token (nearly all) are found
        in one map and joined in runs without a Python step per paragraph; only the
        others (new, or inside a comment that spans a blank line) are walked. git.git's
        diff.c, 1,670 revisions: 3.1 s of lexing before, 0.9 s after."""
        paragraphs = text.split("\n\n")
        found = list(map(self._closed.get, paragraphs))
        parts: list[str] = []
        state: str | None = None
        index, count = 0, len(paragraphs)
        while index < count:
            if state is None:
                try:
                    stop = found.index(None, index)
                except ValueError:
                    stop = count
                parts.extend(filter(None, found[index:stop]))
                if stop == count:
                    break
                index = stop
            chunk, state_out = self._paragraph(paragraphs[index], state)
            if chunk and state is not None and parts:
                # A paragraph that begins inside an open token goes on its line.
                parts[-1] = f"{parts[-1]} {chunk}"
            elif chunk:
                parts.append(chunk)
            state = state_out
            index += 1
        return "\n".join(parts) + "\n" if parts else ""

    def _paragraph(self, paragraph: str, state: str | None) -> tuple[str, str | None]:
        """A paragraph's view, cached by its text and the state it begins in."""
        key = (state, paragraph)
        found = self._paragraphs.get(key)
        if found is None:
            found = self._paragraph_view(paragraph, state)
            if (
                len(self._paragraphs) > 200_000
            ):  # bounded: a long history of a huge file
                self._paragraphs.clear()
                self._closed.clear()
            self._paragraphs[key] = found
            if state is None and found[1] is None:
                self._closed[paragraph] = found[0]
        return found

    def _paragraph_view(
        self, paragraph: str, state: str | None
    ) -> tuple[str, str | None]:
        """A paragraph's view lines; when it begins in an open token, its first line
        continues that token (so the caller joins it with a space, not a newline)."""
        done, open_token, state_out = self._walk(paragraph.split("\n"), state)
        if open_token is not None:
            done.append((*open_token, True))
        items = [
            view_text(" ".join(parts), folded=folded or len(parts) > 1)
            for _, _, parts, folded in done
        ]
        return "\n".join(items), state_out

    def _walk(
        self, lines: list[str], state: str | None
    ) -> tuple[list[_Found], tuple[int, int, list[str]] | None, str | None]:
        """The tokens of `lines` entered in `state`: those complete, as (line, column,
        their lines' parts, folded), the one still open at the end, and the state
        there. Entered in an open token, its continuation comes first, at line 0."""
        done: list[_Found] = []
        open_token: tuple[int, int, list[str]] | None = (
            None if state is None else (0, 0, [])
        )
        for number, line in enumerate(lines, start=1):
            pieces, state_out = self.lex_line(line, state)
            rest = pieces
            if open_token is not None:
                open_token[2].append(pieces[0][1])
                rest = pieces[1:]
                if state_out is not None and not rest:
                    continue  # the whole line is inside the open token
                done.append((*open_token, True))
                open_token = None
            for index, (column, text, folded) in enumerate(rest):
                if index == len(rest) - 1 and state_out is not None:
                    open_token = (number, column + 1, [text])
                else:
                    done.append((number, column + 1, [text], folded))
            state = state_out
        return done, open_token, state


# A token found: its line, column, its text's lines, and whether it is folded.
_Found = tuple[int, int, list[str], bool]


def _split_lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line starts no line
    return lines


# -- pygments, for everything else ------------------------------------------------------


class PygmentsLexer:
    """A pygments lexer, its comment and string parts merged into one token each."""

    def __init__(self, lexer: object) -> None:
        self._lexer = lexer
        self.name = f"pygments-{getattr(lexer, 'aliases', ['text'])[0]}"

    def forget(self) -> None:
        """Nothing is kept: each text is lexed whole."""

    def tokens(self, text: str) -> list[Token]:
        starts = [0] + [match.end() for match in re.finditer("\n", text)]
        found: list[Token] = []
        for offset, piece, _ in self._merged(text):
            line = bisect.bisect_right(starts, offset)
            found.append(Token(line, offset - starts[line - 1] + 1, piece))
        return found

    def view(self, text: str) -> str:
        items = [
            view_text(piece, folded=folded) for _, piece, folded in self._merged(text)
        ]
        return "".join(f"{item}\n" for item in items)

    def _merged(self, text: str) -> Iterator[tuple[int, str, bool]]:
        """(offset, text, is a comment) per token; adjacent comment parts, and adjacent
        string parts, make one token; other parts are split at whitespace."""
        from pygments.token import Comment, String  # only for files pygments lexes

        pending: tuple[int, str, object] | None = None
        for offset, kind, value in self._lexer.get_tokens_unprocessed(text):  # type: ignore[attr-defined]
            group = (
                Comment
                if kind in Comment and kind not in Comment.Preproc
                else String
                if kind in String
                else None
            )
            if pending is not None and group is not None and pending[2] is group:
                pending = (pending[0], pending[1] + value, group)
                continue
            if pending is not None:
                yield from _stripped(pending[0], pending[1], pending[2] is Comment)
                pending = None
            if group is not None:
                pending = (offset, value, group)
                continue
            for match in re.finditer(r"\S+", value):
                yield offset + match.start(), match.group(), False
        if pending is not None:
            yield from _stripped(pending[0], pending[1], pending[2] is Comment)


def _stripped(offset: int, text: str, comment: bool) -> Iterator[tuple[int, str, bool]]:
    """A merged comment or string without the whitespace at its ends (a line comment
    of pygments carries its newline)."""
    stripped = text.lstrip()
    offset += len(text) - len(stripped)
    stripped = stripped.rstrip()
    if stripped:
        yield offset, stripped, comment


# -- choosing one ----------------------------------------------------------------------


def lexer_for(path: str) -> Lexer:
    """The lexer for a file named `path` (its name only: never its content, so every
    revision of the file is lexed alike)."""
    name = PurePosixPath(path).name
    syntax = _BY_NAME.get(name)
    if syntax is None and "." in name.lstrip("."):
        syntax = _BY_SUFFIX.get(name.rpartition(".")[2].lower())
    if syntax is not None:
        return LineLexer(syntax)
    found = _pygments_class(name)
    if found is None:
        return LineLexer(HASH_SYNTAX if name.startswith(".") else _WORDS)
    return PygmentsLexer(found(stripnl=False, stripall=False, ensurenl=False))


@functools.lru_cache(maxsize=4096)
def _pygments_class(name: str) -> type[Any] | None:
    """pygments' lexer for a file name, as find_lexer_class_for_filename chooses it
    (of the lexers with a pattern the name matches, the one of highest priority,
    half a point more for a pattern without `*`, then the greatest class name),
    the patterns looked up by the name and its endings instead of each matched in
    turn: 0.2 ms a name, 0.9 s before a warm of git.git's 4,845 files started."""
    patterns = _patterns()
    found = list(patterns.exact.get(name, ()))
    for start in range(len(name) + 1):
        found += patterns.endings.get(name[start:], ())
    found += [
        (load, pattern)
        for load, pattern, matcher in patterns.others
        if matcher.match(name)
    ]
    if not found:
        return None
    rated = [(load(), pattern) for load, pattern in found]
    best: type[Any] = max(
        rated,
        key=lambda item: (
            item[0].priority + (0 if "*" in item[1] else 0.5),
            item[0].__name__,
        ),
    )[0]
    return best


class _Patterns(NamedTuple):
    """pygments' file name patterns, each with the loader of its lexer's class:
    plain names, `*` and an ending, and the others (matched as fnmatch would)."""

    exact: dict[str, list[tuple[Any, str]]]
    endings: dict[str, list[tuple[Any, str]]]
    others: list[tuple[Any, str, re.Pattern[str]]]


@functools.cache
def _patterns() -> _Patterns:
    import fnmatch
    import importlib

    from pygments.lexers._mapping import LEXERS
    from pygments.plugin import find_plugin_lexers

    def loader(module: str, attribute: str) -> Any:
        return functools.cache(
            lambda: getattr(importlib.import_module(module), attribute)
        )

    classes: list[tuple[Any, tuple[str, ...]]] = [
        (loader(module, key), tuple(filenames))
        for key, (module, _, _, filenames, _) in LEXERS.items()
    ]
    classes += [
        (lambda found=found: found, tuple(found.filenames))
        for found in find_plugin_lexers()
    ]
    found = _Patterns({}, {}, [])
    for load, filenames in classes:
        for pattern in filenames:
            wild = [at for at, char in enumerate(pattern) if char in "*?["]
            if not wild:
                found.exact.setdefault(pattern, []).append((load, pattern))
            elif wild == [0] and pattern[0] == "*":
                found.endings.setdefault(pattern[1:], []).append((load, pattern))
            else:
                matcher = re.compile(fnmatch.translate(pattern))
                found.others.append((load, pattern, matcher))
    return found


# Plain text and files nobody can lex: words, numbers and punctuation marks.
_WORDS = Syntax("words", (), (), single_quote_is_char=True)
