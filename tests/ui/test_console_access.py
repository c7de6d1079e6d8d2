"""Who may see and change what in the console, over plain HTTP against a real server: nothing without a key when
keys are configured; the admin key sees everyone, a user key only its own user (others are 404, direct URLs tried);
the key lives only on the server (the browser holds a session id in an HttpOnly, SameSite=Strict cookie); every POST
needs the page's CSRF token; revocation, read-only keys and rate limits apply as on the API."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from jiyi.records import utcnow
from jiyi.server.auth import KEYS_FRESH
from jiyi.server.limits import RequestLimits
from tests.conftest import RunningServer
from tests.ui.helpers import ADMIN_KEY, ALICE_KEY, KEYS, api, managed_server, ok, seed

TOKEN = re.compile(r'"X-CSRF-Token": "([0-9a-f]+)"')


class Browser:
    """What a browser does, with httpx: cookies kept, forms sent as htmx sends them (JSON, the page's token)."""

    def __init__(self, base_url: str) -> None:
        self.http = httpx.Client(base_url=base_url, timeout=30)
        self.token = ""

    def page(self, path: str) -> httpx.Response:
        response = self.http.get(path)
        if found := TOKEN.search(response.text):
            self.token = found.group(1)
        return response

    def post(self, path: str, form: dict[str, Any] | None = None, token: str | None = None) -> httpx.Response:
        return self.http.post(path, json=form or {}, headers={"HX-Request": "true",
                                                              "X-CSRF-Token": self.token if token is None else token})

    def login(self, key: str) -> httpx.Response:
        self.page("/ui/login")
        response = self.post("/ui/login", {"key": key, "next": "/ui"})
        assert response.status_code == 200 and response.headers["hx-redirect"] == "/ui", response.text
        return response


def test_nothing_without_a_key_when_keys_are_configured(make_server: Callable[..., RunningServer]) -> None:
    server = make_server(**KEYS)
    with api(server.url) as admin:
        ids = seed(admin)
    browser = Browser(server.url)
    for path in ["/ui", "/ui/users", "/ui/users/alice", "/ui/users/alice/memories", "/ui/users/alice/search?q=x",
                 f"/ui/memories/{ids['alice'][0]}"]:
        response = browser.http.get(path)
        assert response.status_code == 303 and response.headers["location"].startswith("/ui/login?next="), path
        assert "海鲜" not in response.text
    page = browser.page("/ui/login")
    assert page.status_code == 200 and 'type="password"' in page.text
    assert browser.post(f"/ui/memories/{ids['alice'][0]}/delete").headers.get("hx-redirect", "").startswith(
        "/ui/login")  # a form without a session goes to the login page, and changes nothing
    with api(server.url) as admin:
        ok(admin.get(f"/memories/{ids['alice'][0]}"))
    assert browser.post("/ui/login", {"key": ADMIN_KEY}, token="forged").status_code == 403
    wrong = browser.post("/ui/login", {"key": "not-a-key"})
    assert wrong.status_code == 401 and "jiyi_console" not in wrong.headers.get("set-cookie", "")


def test_the_key_stays_on_the_server(make_server: Callable[..., RunningServer]) -> None:
    server = make_server(**KEYS)
    with api(server.url) as admin:
        seed(admin)
    browser = Browser(server.url)
    signed_in = browser.login(ADMIN_KEY)
    cookie = signed_in.headers["set-cookie"]
    assert cookie.startswith("jiyi_console=") and "HttpOnly" in cookie and "SameSite=strict" in cookie \
        and "Path=/ui" in cookie
    assert ADMIN_KEY not in cookie and ADMIN_KEY not in str(browser.http.cookies)
    for path in ["/ui/users", "/ui/users/alice", "/ui/users/alice/memories", "/ui/users/alice/search?q=海鲜"]:
        page = browser.page(path)
        assert page.status_code == 200, path
        assert ADMIN_KEY not in page.text
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        assert page.headers["cache-control"] == "no-store"
    assert "alice" in browser.page("/ui/users").text and "bob" in browser.page("/ui/users").text


def test_a_user_key_cannot_open_another_users_pages(make_server: Callable[..., RunningServer]) -> None:
    server = make_server(**KEYS)
    with api(server.url) as admin:
        ids = seed(admin)
    browser = Browser(server.url)
    browser.login(ALICE_KEY)
    assert browser.http.get("/ui").headers["location"] == "/ui/users/alice"
    assert browser.http.get("/ui/users").headers["location"] == "/ui/users/alice"
    assert browser.page("/ui/users/alice").status_code == 200
    bob_memory = ids["bob"][0]
    for path in ["/ui/users/bob", "/ui/users/bob/memories", "/ui/users/bob/search?q=Shanghai",
                 f"/ui/memories/{bob_memory}", "/ui/users/bob?agent_id=xiaolin", "/ui/users/alice/../bob"]:
        page = browser.page(path)
        assert page.status_code == 404, (path, page.status_code)
        assert "Vancouver" not in page.text and "Shanghai" not in page.text.replace("q=Shanghai", "")
    for action in ["edit", "delete", "promote", "restore"]:
        response = browser.post(f"/ui/memories/{bob_memory}/{action}", {"text": "hacked", "reason": "x"})
        assert response.status_code == 404, action
    assert browser.post("/ui/users/bob/context", {"conversation": "user: Shanghai"}).status_code == 404
    assert browser.post("/ui/users/bob/retry-failed").status_code == 404
    with api(server.url) as admin:
        assert ok(admin.get(f"/memories/{bob_memory}"))["memory"] == "I moved to Shanghai last spring"
    mine = browser.page(f"/ui/memories/{ids['alice'][0]}")
    assert mine.status_code == 200 and "海鲜" in mine.text


def test_every_form_needs_the_pages_csrf_token(make_server: Callable[..., RunningServer]) -> None:
    server = make_server(**KEYS)
    with api(server.url) as admin:
        ids = seed(admin)
    browser = Browser(server.url)
    browser.login(ADMIN_KEY)
    browser.page("/ui/users")
    target = ids["alice"][0]
    other = Browser(server.url)
    other.login(ADMIN_KEY)
    other.page("/ui/users")
    assert other.token != browser.token
    for token in ["", "0" * 64, other.token]:
        response = browser.post(f"/ui/memories/{target}/delete", {"reason": "csrf"}, token=token)
        assert response.status_code == 403, token
    with api(server.url) as admin:
        ok(admin.get(f"/memories/{target}"))
    assert browser.post(f"/ui/memories/{target}/delete", {"reason": "asked"}).status_code == 200
    with api(server.url) as admin:
        assert admin.get(f"/memories/{target}").status_code == 404


def test_signing_out_ends_the_session(make_server: Callable[..., RunningServer]) -> None:
    server = make_server(**KEYS)
    browser = Browser(server.url)
    browser.login(ADMIN_KEY)
    session = browser.http.cookies["jiyi_console"]
    browser.page("/ui/users")
    assert browser.post("/ui/logout").headers["hx-redirect"] == "/ui/login"
    replay = httpx.get(server.url + "/ui/users", cookies={"jiyi_console": session})
    assert replay.status_code == 303 and replay.headers["location"].startswith("/ui/login")


def test_managed_keys_revocation_read_scope_and_rate_limits_apply(make_server: Callable[..., RunningServer],
                                                                 tmp_path: Path) -> None:
    server, keys, key_ids = managed_server(make_server, tmp_path, {"admin": ("", "admin"),
                                                                   "alice": ("alice", "write"),
                                                                   "reader": ("alice", "read")})
    with api(server.url, keys["admin"]) as admin:
        ids = seed(admin)
    reader = Browser(server.url)
    reader.login(keys["reader"])
    page = reader.page(f"/ui/memories/{ids['alice'][0]}")
    assert page.status_code == 200 and 'id="edit-form"' not in page.text
    assert reader.post(f"/ui/memories/{ids['alice'][0]}/delete").status_code == 403
    alice = Browser(server.url)
    alice.login(keys["alice"])
    assert alice.page("/ui/users/alice").status_code == 200
    assert _store_of(server).revoke_api_key(key_ids["alice"], utcnow())  # `jiyi keys revoke`
    time.sleep(KEYS_FRESH + 0.1)  # a revoked key stops working within KEYS_FRESH seconds, sessions with it
    after = alice.http.get("/ui/users/alice")
    assert after.status_code == 303 and after.headers["location"].startswith("/ui/login")


def _store_of(server: RunningServer) -> Any:
    return server.server.config.app.state.jiyi.memory.store


@pytest.mark.parametrize("rate", [4])
def test_console_pages_count_against_the_keys_rate(make_server: Callable[..., RunningServer], rate: int) -> None:
    server = make_server(**KEYS, limits=RequestLimits(rate_per_minute=rate))
    browser = Browser(server.url)
    browser.login(ADMIN_KEY)  # one request of the key's rate
    statuses = [browser.page("/ui/users").status_code for _ in range(rate + 1)]
    assert statuses[0] == 200 and statuses[-1] == 429, statuses


def test_an_open_server_has_an_open_console(make_server: Callable[..., RunningServer]) -> None:
    server = make_server()
    with api(server.url, None) as client:
        seed(client)
    browser = Browser(server.url)
    assert browser.http.get("/ui/login").headers["location"] == "/ui"
    page = browser.page("/ui/users")
    assert page.status_code == 200 and "alice" in page.text and "Open server" in page.text
    assert browser.page("/ui/users/alice/memories").status_code == 200
