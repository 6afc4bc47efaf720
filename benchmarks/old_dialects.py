"""How many old (pre-2006) patch mails e2g parses to the files a developer would name.

    python benchmarks/old_dialects.py DIR [--expected FILE] [--json]

Parses every `DIR/*.eml` with `e2g.mail.message.parse_message`, prints one line per
mail with the files its patch names (or why it has none), and, for the mails listed in
the expectations file, whether the parse gives exactly the expected files. The last
line is the share of listed mails that parse exactly right.

The expectations file (default `DIR/expected.tsv`) is hand-made: one mail a line,
`FILENAME<TAB>PATH PATH ...` (space-separated repository paths, in any order; `-` for a
mail that carries no patch); blank lines and lines starting with `#` are skipped.

The mails are meant to be real list mail kept outside the project (they are the
authors' copyright, not test data): e2g's own dialect fixtures are the `5x-*` mails in
`tests/data/mail/`.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

from e2g.mail.message import parse_message
from e2g.model.mail import Malformed, Origin, RawMessage

NOW = datetime(2026, 1, 1, tzinfo=UTC)  # parse_message never reads the clock


def read_expected(path: Path) -> dict[str, frozenset[str]]:
    """FILENAME -> the set of paths it should parse to (empty: no patch)."""
    expected: dict[str, frozenset[str]] = {}
    if not path.exists():
        return expected
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, _, paths = line.partition("\t")
        files = paths.split()
        expected[name.strip()] = frozenset(() if files == ["-"] else files)
    return expected


def parsed_files(path: Path) -> tuple[tuple[str, ...], str]:
    """The paths of the mail's patch in order (duplicates dropped), and a note."""
    result = parse_message(
        RawMessage(path.read_bytes(), Origin(path.name, "0")), now=NOW
    )
    if isinstance(result, Malformed):
        return (), f"malformed: {result.reason}"
    if result.patch is None:
        return (), "no patch"
    return tuple(dict.fromkeys(result.patch.paths)), ""


def run(directory: Path, expected_path: Path, as_json: bool) -> float | None:
    expected = read_expected(expected_path)
    mails = sorted(directory.glob("*.eml"))
    right = listed = 0
    for mail in mails:
        files, note = parsed_files(mail)
        want = expected.get(mail.name)
        verdict = "-"
        if want is not None:
            listed += 1
            exact = frozenset(files) == want
            right += exact
            verdict = "ok" if exact else "WRONG"
        if as_json:
            row = {"mail": mail.name, "files": files, "note": note, "verdict": verdict}
            if verdict == "WRONG" and want is not None:
                row["expected"] = sorted(want)
            print(json.dumps(row))
        else:
            shown = " ".join(files) or f"({note})"
            print(f"{verdict:5}  {mail.name}  {shown}")
            if verdict == "WRONG" and want is not None:
                print(
                    f"{'':5}  {'':{len(mail.name)}}  expected: {' '.join(sorted(want)) or '-'}"
                )
    share = right / listed if listed else None
    summary = (
        f"{right}/{listed} listed mails parse to exactly the expected files"
        + (f" ({share:.0%})" if share is not None else "")
        + f"; {len(mails)} mails in {directory}"
    )
    print(
        json.dumps({"right": right, "listed": listed, "mails": len(mails)})
        if as_json
        else summary
    )
    return share


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path, help="a folder of *.eml mails")
    parser.add_argument("--expected", type=Path, help="default: DIRECTORY/expected.tsv")
    parser.add_argument("--json", action="store_true", help="one JSON object per mail")
    args = parser.parse_args(argv)
    if not args.directory.is_dir():
        print(f"old_dialects: not a directory: {args.directory}", file=sys.stderr)
        return 2
    run(args.directory, args.expected or args.directory / "expected.tsv", args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
