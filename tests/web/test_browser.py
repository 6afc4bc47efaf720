"""A real browser against a real server: headless Chromium (Debian's, never a download)
pastes the sample's demo commit into the box, lands on its page, follows a posting into
the thread, and saves screenshots (desktop and phone) under the test's tmp dir, the
commit page's and the token page's also as the README's (docs/img/); from
a blame page, clicks a run's commit, follows its posting and sees the applied banner;
and on a token page, clicks a token and reads its commit's review in the panel."""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from e2g import config
from e2g.api import core as api
from e2g.api.match import match
from e2g.web.app import create_app
from tests.conftest import sample_repo, sample_store

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
SAMPLE = Path(__file__).resolve().parents[2] / "sample-mbox"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """Debian's headless Chromium through playwright, closed after; the test skips
    where either is missing."""
    if not CHROMIUM.exists() or shutil.which(str(CHROMIUM)) is None:
        pytest.skip("chromium is not installed at /usr/bin/chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=ARGS, headless=True
        )
        try:
            yield browser
        finally:
            browser.close()


README_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "img"


def readme_screenshot(page: Any, name: str) -> None:
    """The first screen of `page` as docs/img/NAME.png, the README's picture: taken
    here, so it shows the pages as they are (rewritten only when it changed)."""
    shot = page.screenshot()
    target = README_IMAGES / f"{name}.png"
    if not target.exists() or target.read_bytes() != shot:
        README_IMAGES.mkdir(parents=True, exist_ok=True)
        target.write_bytes(shot)


def keep_errors(page: Any, problems: list[str]) -> None:
    """Collect the page's console errors (a refused script or style shows there)."""
    page.on(
        "console",
        lambda message: (
            problems.append(message.text) if message.type == "error" else None
        ),
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def sample(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[config.Settings, Path, str]:
    for name in ("frob-devel.mbox", "sample-repo.bundle", "expected.json"):
        if not (SAMPLE / name).exists():
            pytest.skip(f"sample-mbox/{name} is not there yet")
    root = tmp_path_factory.mktemp("browser")
    repo = sample_repo(root / "repo")
    settings = config.resolve(data_dir=root / "data", env={}, home=root / "home")
    api.ingest(settings, [str(SAMPLE / "frob-devel.mbox")], workers=1)
    # blame pages are read-only: they show the links `e2g match` stored
    match(settings, ["HEAD"], repo=repo, jobs=1)
    demo = json.loads((SAMPLE / "expected.json").read_text())["demo_commit"]
    return settings, repo, str(demo)


@pytest.fixture(scope="module")
def server(sample: tuple[config.Settings, Path, str]) -> Iterator[str]:
    settings, repo, _ = sample
    yield from serve(settings, repo)


def serve(settings: config.Settings, repo: Path) -> Iterator[str]:
    """A uvicorn server of the app on a free port, in a thread, until closed."""
    import uvicorn

    port = free_port()
    app = create_app(settings, repo=repo)
    uvicorn_server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=uvicorn_server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not uvicorn_server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    uvicorn_server.should_exit = True
    thread.join(timeout=10)


def check_commit_content(page: Any) -> None:
    """The commit page shows the commit message, the review and the folded diff,
    and a file of the diffstat opens its part of the diff."""
    assert page.locator("section.commit-message pre").inner_text().strip()
    assert page.locator("section.reviews article.review").count() >= 1
    assert page.locator("ul.excerpts blockquote").count() >= 1
    diff = page.locator("section.commit-diff details.diff")
    assert diff.get_attribute("open") is None  # folded
    first = page.locator("ul.files a").first
    path = first.inner_text()
    first.click()
    assert diff.get_attribute("open") is not None  # opened by the anchor
    target = page.locator("section.file:target h3")
    assert path in target.inner_text()
    assert page.locator("section.file:target pre.diff span.add").count() >= 1
    page.evaluate("window.scrollTo(0, 0)")


def check_thread_tree(page: Any) -> None:
    """The overview at the thread's foot: one line per message, the current marked."""
    tree = page.locator("nav.tree pre")
    assert tree.locator("a").count() == page.locator("article.msg").count()
    assert "[this message]" in tree.locator(".current").inner_text() + tree.inner_text()
    assert tree.locator(".current a").get_attribute("href") == "#focus"


def test_paste_commit_then_follow_posting(server: str, sample, tmp_path: Path):
    _, _, demo = sample
    problems: list[str] = []
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        keep_errors(page, problems)
        page.goto(server + "/")
        box = page.locator("form.box.big input[name=q]")
        box.fill(demo[:12])  # the abbreviated id, as people paste it
        box.press("Enter")
        page.wait_for_url(f"**/commit/{demo[:12]}")
        assert demo in page.locator("code.sha").inner_text()
        check_commit_content(page)
        page.screenshot(path=str(tmp_path / "commit-desktop.png"), full_page=True)
        readme_screenshot(page, "commit-page")
        posting = page.locator("a.thread-link").first
        subject = posting.inner_text()
        posting.click()
        page.wait_for_url("**/thread/**")
        focused = page.locator("article.focus")
        assert focused.count() == 1
        assert focused.locator(".subject").inner_text() == subject
        check_thread_tree(page)
        page.screenshot(path=str(tmp_path / "thread-desktop.png"), full_page=True)
        phone = browser.new_page(
            viewport={"width": 390, "height": 844},
            device_scale_factor=2,
            is_mobile=True,
        )
        phone.goto(server + f"/commit/{demo}")
        check_commit_content(phone)
        # on a phone the postings start on the first screen
        top = phone.locator("a.thread-link").first.bounding_box()
        assert top is not None and top["y"] < 844, top
        phone.screenshot(path=str(tmp_path / "commit-phone.png"), full_page=True)
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390
        phone.goto(page.url)
        check_thread_tree(phone)
        phone.screenshot(path=str(tmp_path / "thread-phone.png"), full_page=True)
        width = phone.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, "the phone page scrolls sideways"
    assert not [text for text in problems if "Content Security Policy" in text], (
        problems
    )
    for name in ("commit-desktop", "thread-desktop", "commit-phone", "thread-phone"):
        assert (tmp_path / f"{name}.png").stat().st_size > 5_000


def test_blame_run_to_commit_to_applied_banner(server: str, sample, tmp_path: Path):
    """From a line of code to its review and back: blame, click the run, land on the
    commit, follow its posting, and the thread says which commit applied it."""
    _, _, demo = sample
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(server + "/blame/HEAD/net/frob_stats.c")
        runs = page.locator(f'td.gutter a[href="/commit/{demo}"]')
        assert runs.count() >= 1, "the demo commit wrote runs of frob_stats.c"
        run = runs.first
        link = page.locator(f'a[href="/commit/{demo}"]')
        gutter = page.locator("td.gutter", has=link).first
        cell = gutter.locator(".review").inner_text()
        assert "frob-devel" in cell, cell  # the review cell names its list
        assert "not matched" not in cell and "no review" not in cell, cell
        page.screenshot(path=str(tmp_path / "blame-desktop.png"), full_page=True)
        run.click()
        page.wait_for_url(f"**/commit/{demo}")
        assert demo in page.locator("code.sha").inner_text()
        page.locator("a.thread-link").first.click()
        page.wait_for_url("**/thread/**")
        banner = page.locator("section.applied")
        assert banner.count() == 1
        text = banner.inner_text()
        assert "Applied" in text, text
        assert banner.locator(f'a[href="/commit/{demo}"]').count() >= 1, text
        page.screenshot(path=str(tmp_path / "applied-desktop.png"), full_page=True)
    assert (tmp_path / "blame-desktop.png").stat().st_size > 5_000


# c225ab88 changed one token of drivers/frob/frob.c line 23 (`>` to `>=`); its patch
# was posted to the pipermail archive, so this store holds every archive of the sample.
READ_EOF = "c225ab8883d0fea03bae28921832d64daf4bdde4"
READ_EOF_SUBJECT = "frob: fix off-by-one in frob_read()"
READ_EOF_POSTING = "45EBD43C.9020502@example.com"


@pytest.fixture(scope="module")
def token_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not (SAMPLE / "sample-repo.bundle").exists():
        pytest.skip("sample-mbox/sample-repo.bundle is not there yet")
    settings, repo = sample_store(tmp_path_factory.mktemp("tokens"))
    match(settings, ["HEAD"], repo=repo, jobs=1)  # token pages read the stored links
    yield from serve(settings, repo)


def test_token_click_opens_its_commit_and_review(token_server: str, tmp_path: Path):
    """Token blame finds the commit that changed one operator of a line another
    commit wrote; a click on it (or Enter) opens that commit's review in the panel."""
    problems: list[str] = []
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        keep_errors(page, problems)
        page.goto(token_server + "/tokens/HEAD/drivers/frob/frob.c")
        token = page.locator(f'#L23 .t[data-commit="{READ_EOF}"]')
        assert token.count() == 1
        assert token.inner_text() == ">="
        assert READ_EOF_SUBJECT in (token.get_attribute("title") or "")
        # the rest of the line is an older commit's
        older = page.locator("#L23 .t").first
        assert older.get_attribute("data-commit") != READ_EOF
        panel = page.locator("#token-panel")
        assert panel.is_hidden()
        token.click()
        panel.wait_for(state="visible")
        text = panel.inner_text()
        assert READ_EOF in text and READ_EOF_SUBJECT in text, text
        assert "Linh Tran" in text, text
        thread = panel.locator(
            f'a.thread-link[href="/thread/{READ_EOF_POSTING}#focus"]'
        )
        assert thread.count() == 1, text
        assert panel.locator(f'a[href="/commit/{READ_EOF}"]').count() >= 1
        page.screenshot(path=str(tmp_path / "tokens-desktop.png"), full_page=True)
        readme_screenshot(page, "token-page")
        page.keyboard.press("Escape")
        panel.wait_for(state="hidden")
        older.focus()
        page.keyboard.press("Enter")
        panel.wait_for(state="visible")
        assert READ_EOF_SUBJECT not in panel.inner_text()
        token.click()
        assert READ_EOF_SUBJECT in panel.inner_text()
        thread.click()
        page.wait_for_url("**/thread/**")
        assert page.locator("article.focus").count() == 1
    assert not problems, problems
    assert (tmp_path / "tokens-desktop.png").stat().st_size > 5_000
