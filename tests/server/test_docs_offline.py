"""/docs works without internet: the page names only jiyi's own files, jiyi serves them without a key, and Swagger UI
renders every operation in a real browser that may reach nothing but 127.0.0.1."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Route
from tests.conftest import RunningServer
from tests.sillytavern.browser import launch_browser
from tests.sillytavern.services import CHROMIUM

from jiyi.server.docs import SWAGGER_UI

KEYS = {"admin_api_key": "admin-key", "user_api_keys": {"key-alice": "alice"}}
CONTENT_TYPES = {".js": "text/javascript", ".css": "text/css", ".png": "image/png", ".json": "application/json"}


def referenced_urls(html: str) -> list[str]:
    """Every address the page loads: src/href attributes and Swagger UI's `url:` (the OpenAPI document)."""
    return re.findall(r'(?:src|href)="([^"]*)"', html) + re.findall(r"\burl: '([^']*)'", html)


def test_the_docs_page_loads_only_jiyis_own_files(make_server: Callable[..., RunningServer]) -> None:
    server = make_server(**KEYS)  # with keys: the page and its files still need none (they hold no data)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        page = client.get("/docs")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert re.search(r"https?://", page.text) is None, page.text
        urls = referenced_urls(page.text)
        assert len(urls) == 4, urls  # stylesheet, icon, script, OpenAPI document
        for url in urls:
            assert url.startswith("/") and not url.startswith("//"), url
            answer = client.get(url)
            assert answer.status_code == 200, (url, answer.status_code)
            assert answer.headers["content-type"].startswith(CONTENT_TYPES[Path(url).suffix]), (url, answer.headers)
            assert answer.content, url
        assert client.get("/docs/assets/LICENSE").status_code == 404  # only the page's own files are served
        assert client.get("/docs/assets/..%2F..%2Fdocs.py").status_code == 404
        assert client.get("/redoc").status_code == 404  # ReDoc would load its script from a CDN: not offered


def test_the_shipped_swagger_ui_is_5x_with_its_license() -> None:
    package = json.loads((SWAGGER_UI / "package.json").read_text())
    assert package["name"] == "swagger-ui-dist" and package["version"].startswith("5.")
    assert "Apache License" in (SWAGGER_UI / "LICENSE").read_text()
    assert (SWAGGER_UI / "NOTICE").is_file()


def test_swagger_ui_renders_every_operation_with_no_internet(make_server: Callable[..., RunningServer]) -> None:
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: run tests/sillytavern/install.sh (installs Debian's chromium)")
    server = make_server(**KEYS)
    spec = httpx.get(f"{server.url}/openapi.json", timeout=30).json()
    operations = [(method.upper(), path) for path, item in spec["paths"].items() for method in item]
    playwright, browser = launch_browser()
    try:
        page = browser.new_page()
        outside: list[str] = []

        def only_loopback(route: Route) -> None:
            url = route.request.url
            if urlsplit(url).hostname == "127.0.0.1":
                route.continue_()
            else:
                outside.append(url)
                route.abort()

        page.route("**/*", only_loopback)
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{server.url}/docs")
        try:
            page.wait_for_selector(".opblock-post .opblock-summary-path[data-path='/search']", timeout=30_000)
        except Exception as error:
            raise AssertionError(f"Swagger UI did not render POST /search; blocked: {outside}, errors: {errors}") \
                from error
        shown = page.eval_on_selector_all(
            ".opblock", "blocks => blocks.map(b => [b.querySelector('.opblock-summary-method').textContent,"
                        " b.querySelector('.opblock-summary-path').dataset.path])")
        title = page.text_content(".information-container .title")
        # Swagger UI's stylesheet applied: a POST operation is drawn green (rgba(73, 204, 144, .1)).
        post_background = page.eval_on_selector(".opblock-post", "b => getComputedStyle(b).backgroundColor")
    finally:
        browser.close()
        playwright.stop()
    assert outside == []
    assert errors == []
    assert {tuple(operation) for operation in shown} == set(operations)  # one block per tag: an operation may repeat
    assert title is not None and title.startswith("jiyi")
    assert post_background == "rgba(73, 204, 144, 0.1)"
