"""A real headless browser for the HTML report tests: Debian's chromium through Playwright.

Playwright drives the system browser (``/usr/bin/chromium``, or ``ENTROPY_CHROMIUM``); it
never downloads one. Outside CI a missing browser or Playwright skips with the reason; with
``CI`` set the tests fail instead, so a CI machine cannot pass them by not running them.
Every request the page makes is routed: anything but a ``file:`` or ``data:`` URL is
recorded and aborted, and the tests assert that nothing was.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.state.config import is_ci
from tests.browser_support import CHROMIUM, block_network, chromium_context


def _unavailable() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install playwright)"
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        return f"no chromium at {CHROMIUM} (apt-get install chromium, or set ENTROPY_CHROMIUM)"
    return None


@dataclass
class Visit:
    """One page load: what the console said, what failed, and what was requested."""

    page: Any
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)


# Module scope, not session: while Playwright's sync API is running it keeps an asyncio
# event loop marked as running in this thread, so any other test on the same worker that
# calls asyncio.run() would fail; the browser closes when this module's tests are done.
@pytest.fixture(scope="module")
def browser_context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    reason = _unavailable()
    if reason is not None:
        if is_ci():
            pytest.fail(f"CI is set but the browser tests cannot run: {reason}")
        pytest.skip(reason)
    with chromium_context(str(tmp_path_factory.mktemp("chromium-profile")), height=900) as context:
        yield context


@pytest.fixture
def open_page(browser_context: Any) -> Iterator[Any]:
    """``open_page(path) -> Visit``: load a file with every request watched."""
    pages: list[Any] = []

    def visit(path: Path) -> Visit:
        page = browser_context.new_page()
        pages.append(page)
        seen = Visit(page)
        page.on(
            "console",
            lambda message: (
                seen.console_errors.append(message.text) if message.type == "error" else None
            ),
        )
        page.on("pageerror", lambda error: seen.page_errors.append(str(error)))
        block_network(page, seen.blocked.append)
        page.goto(path.resolve().as_uri(), wait_until="load")
        return seen

    yield visit
    for page in pages:
        page.close()
