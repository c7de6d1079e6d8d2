"""The console's tests: a real jiyi server (tests/conftest.py make_server) and Debian's Chromium driven by Playwright
(as the SillyTavern suite launches it: no browser download). A missing chromium fails the tests, never skips them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext

from tests.sillytavern.browser import launch_browser
from tests.sillytavern.services import CHROMIUM


# Module scope: Playwright's sync API keeps an asyncio loop running in this thread while it lives, and the other
# tests (asyncio.run in tests/ui/test_console_store.py, the rest of the suite) must not see it.
@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM.is_file(), f"{CHROMIUM} is missing: apt-get install chromium (the console tests drive it)"
    playwright, launched = launch_browser()
    yield launched
    launched.close()
    playwright.stop()


@pytest.fixture
def contexts(browser: Browser) -> Iterator[Any]:
    """new_context(base_url, locale='en-US') for this test; all closed at its end."""
    opened: list[BrowserContext] = []

    def open_context(base_url: str, locale: str = "en-US") -> BrowserContext:
        context = browser.new_context(base_url=base_url, locale=locale, viewport={"width": 1360, "height": 900})
        opened.append(context)
        return context

    yield open_context
    for context in opened:
        context.close()
