"""The docs site in a real headless chromium, served on loopback: the search finds
"ratchet", every page loads with no console error, every internal link (and its anchor)
resolves, and no request leaves the machine.

The site is the one ``.ci/run`` built (``ENTROPY_DOCS_SITE``), else this test builds it with
``mkdocs build --strict``. Without either, and without CI, it skips with the reason.
"""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urldefrag, urlsplit

import pytest

from pytest_entropy.state.config import is_ci

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]


def _unavailable_or_fail(reason: str) -> None:
    if is_ci():
        pytest.fail(f"CI is set but the docs site test cannot run: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def docs_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("ENTROPY_DOCS_SITE")
    if given:
        site = Path(given)
        if not (site / "index.html").is_file():
            pytest.fail(f"ENTROPY_DOCS_SITE={given} holds no built site (no index.html)")
        return site
    try:
        import mkdocs  # noqa: F401
        import mkdocstrings  # noqa: F401
    except ImportError:
        _unavailable_or_fail(
            "mkdocs is not installed and ENTROPY_DOCS_SITE names no built site"
            ' (pip install -c constraints/docs.txt -e ".[docs]")'
        )
    site = tmp_path_factory.mktemp("docs") / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode == 0, result.stderr
    return site


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def served(docs_site: Path) -> Iterator[str]:
    """The site's base URL on a loopback port of its own."""
    handler = functools.partial(_QuietHandler, directory=str(docs_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@dataclass
class Watched:
    """Everything the pages of this module asked for that is not the local server."""

    blocked: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def watched(browser_context: Any, served: str) -> Watched:
    seen = Watched()

    def route(request_route: Any) -> None:
        url = request_route.request.url
        if url.startswith((served, "data:", "blob:")):
            request_route.continue_()
        else:
            seen.blocked.append(url)
            request_route.abort()

    # On the context, not a page: the search runs in a web worker, whose requests a page's
    # route would not see.
    browser_context.route("**/*", route)
    return seen


@dataclass
class PageVisit:
    url: str
    status: int
    console_errors: list[str]
    page_errors: list[str]
    links: list[str]
    ids: set[str]


class _Visitor:
    """One tab that loads page after page, keeping what each one logged."""

    def __init__(self, context: Any) -> None:
        self.page = context.new_page()
        self.console: list[str] = []
        self.errors: list[str] = []
        self.page.on(
            "console",
            lambda message: self.console.append(message.text) if message.type == "error" else None,
        )
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def visit(self, url: str) -> PageVisit:
        self.console, self.errors = [], []
        response = self.page.goto(url, wait_until="load")
        status = response.status if response is not None else 0
        links = self.page.eval_on_selector_all("a[href]", "nodes => nodes.map(n => n.href)")
        ids = set(self.page.eval_on_selector_all("[id]", "nodes => nodes.map(n => n.id)"))
        return PageVisit(url, status, self.console, self.errors, links, ids)


def _page_urls(site: Path, base: str) -> list[str]:
    pages = []
    for index in sorted(site.rglob("index.html")):
        relative = index.parent.relative_to(site).as_posix()
        pages.append(base if relative == "." else f"{base}{relative}/")
    return pages


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:  # loopback only
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code


def test_every_page_loads_clean_and_every_internal_link_resolves(
    browser_context: Any, served: str, docs_site: Path, watched: Watched
) -> None:
    pages = _page_urls(docs_site, served)
    assert len(pages) >= 30, pages  # the nav's pages, generated reference pages included
    visitor = _Visitor(browser_context)
    try:
        visits = {url: visitor.visit(url) for url in pages}
    finally:
        visitor.page.close()
    for visit in visits.values():
        assert visit.status == 200, visit.url
        assert visit.console_errors == [], (visit.url, visit.console_errors)
        assert visit.page_errors == [], (visit.url, visit.page_errors)
    broken = []
    checked_files: dict[str, int] = {}
    for visit in visits.values():
        for link in visit.links:
            if not link.startswith(served):
                continue  # an external link: never followed (and never loaded, see below)
            target, fragment = urldefrag(link)
            path = urlsplit(target).path
            if path.endswith("/") or path.endswith(".html"):
                page_url = target if path.endswith("/") else target.rsplit("/", 1)[0] + "/"
                landed = visits.get(page_url)
                if landed is None:
                    broken.append(f"{visit.url}: {link} (no such page)")
                elif fragment and unquote(fragment) not in landed.ids:
                    broken.append(f"{visit.url}: {link} (no anchor #{fragment})")
            else:
                if target not in checked_files:
                    checked_files[target] = _status(target)
                if checked_files[target] != 200:
                    broken.append(f"{visit.url}: {link} (HTTP {checked_files[target]})")
    assert broken == []
    linked = {urldefrag(link)[0] for visit in visits.values() for link in visit.links}
    assert served + "reference/cli/" in linked and served + "ratchet/" in linked
    assert watched.blocked == []


def test_the_search_finds_ratchet(browser_context: Any, served: str, watched: Watched) -> None:
    page = browser_context.new_page()
    errors: list[str] = []
    page.on(
        "console", lambda message: errors.append(message.text) if message.type == "error" else None
    )
    try:
        page.goto(served, wait_until="load")
        search = page.locator("input.md-search__input")
        search.click()
        search.type("ratchet", delay=20)
        results = page.locator(".md-search-result__item")
        results.first.wait_for(timeout=15_000)
        assert results.count() >= 3
        meta = page.inner_text(".md-search-result__meta")
        assert "matching" in meta, meta
        hrefs = page.eval_on_selector_all(
            ".md-search-result__item a", "nodes => nodes.map(n => n.href)"
        )
        assert any(href.startswith(served + "ratchet/") for href in hrefs), hrefs
        assert errors == []
    finally:
        page.close()
    assert watched.blocked == []


def test_the_site_names_no_remote_font_or_script(docs_site: Path) -> None:
    # What the route would block is not even asked for: theme.font is off, and no page or
    # stylesheet names a font or script host.
    for path in [*docs_site.rglob("*.html"), *docs_site.rglob("*.css")]:
        text = path.read_text(encoding="utf-8", errors="replace")
        for host in ("fonts.googleapis.com", "fonts.gstatic.com", "cdn.jsdelivr.net", "unpkg.com"):
            assert host not in text, (path.relative_to(docs_site), host)
