"""Options for the mail golden tests: --update-golden (or E2G_UPDATE_GOLDEN=1).

pytest reads pytest_addoption only from the rootdir's conftest, plugins and the
conftest files of the paths given on the command line. So `pytest tests/mail
--update-golden` works from here; a plain `pytest` run from the project root does
not load this file early enough, and there E2G_UPDATE_GOLDEN=1 does the same job.
"""

from __future__ import annotations

import os

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    try:
        parser.addoption(
            "--update-golden",
            action="store_true",
            default=False,
            help="rewrite tests/data/golden/*.json from the parser's current output",
        )
    except ValueError:  # already added (by tests/conftest.py, say)
        pass


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    """Whether golden files are rewritten instead of compared."""
    try:
        option = bool(request.config.getoption("--update-golden"))
    except ValueError:  # the option was not registered in this run
        option = False
    return option or os.environ.get("E2G_UPDATE_GOLDEN", "") not in ("", "0")
