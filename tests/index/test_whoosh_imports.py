"""Whoosh loads without urllib.request, asyncio and morph_en's regexes, and the
stand-ins leave nothing behind: later imports get the real modules."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_opening_the_index_module_skips_what_whoosh_never_runs() -> None:
    out = _run(
        """
        import sys
        import e2g.index.fulltext
        print(sorted(m for m in ("urllib.request", "asyncio", "cached_property",
                                 "whoosh.lang.morph_en", "hashlib", "_hashlib")
                     if m in sys.modules))
        """
    )
    assert out.strip() == "[]"


def test_the_real_modules_come_back_after_the_stand_ins() -> None:
    out = _run(
        """
        import sys
        import e2g.index.fulltext
        import whoosh.compat, whoosh.query.terms
        import urllib.request, cached_property
        from whoosh.lang import morph_en
        print(hasattr(urllib.request, "urlopen"), hasattr(morph_en, "rules"),
              cached_property.__file__.endswith("cached_property.py"))
        # Whoosh's deferred names call into the real modules.
        print(sorted(whoosh.query.terms.variations("render")) ==
              sorted(morph_en.variations("render")), "rendering" in
              whoosh.query.terms.variations("render"))
        print(whoosh.compat.urlretrieve.__name__)
        # Term lookups hash with the same md5 as hashlib's.
        import hashlib, whoosh.filedb.filetables as tables
        print(tables.md5(b"io_uring").hexdigest() == hashlib.md5(b"io_uring").hexdigest(),
              "openssl_md5" in dir(sys.modules["hashlib"]) or hasattr(hashlib, "sha256"))
        """
    )
    assert out.split() == [
        "True",
        "True",
        "True",
        "True",
        "True",
        "urlretrieve",
        "True",
        "True",
    ]


def test_a_module_already_loaded_is_left_alone() -> None:
    out = _run(
        """
        import urllib.request, asyncio, sys
        real = sys.modules["urllib.request"]
        import e2g.index.fulltext, whoosh.compat
        print(sys.modules["urllib.request"] is real,
              whoosh.compat.urlretrieve is real.urlretrieve)
        """
    )
    assert out.split() == ["True", "True"]
