"""The headless browser the HTML report tests and ``bench/bench_html.py`` share: Debian's
chromium driven through Playwright (never a downloaded one), and pages that may load only
``file:`` and ``data:`` URLs."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

CHROMIUM = os.environ.get("ENTROPY_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@contextmanager
def chromium_context(profile: str, *, height: int) -> Iterator[Any]:
    """A persistent headless chromium context (profile in ``profile``), 1200 x ``height``."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1200, "height": height},
        )
        try:
            yield context
        finally:
            context.close()


def block_network(page: Any, blocked: Callable[[str], None]) -> None:
    """Let ``page`` load ``file:`` and ``data:`` URLs only; every other request is aborted
    and its URL given to ``blocked``."""

    def route(request_route: Any) -> None:
        url = request_route.request.url
        if url.startswith(("file:", "data:")):
            request_route.continue_()
        else:
            blocked(url)
            request_route.abort()

    page.route("**/*", route)
