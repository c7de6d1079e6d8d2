"""Console sessions live in the store (server/ui/session.py), on every store: any process on it finds them, a restart
keeps them, they end when idle, when too old, at sign-out, and with their key; the store holds neither the session id
nor the key. (Several real `jiyi serve` processes: tests/reliability/test_console_sessions.py.)"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from jiyi import AsyncMemory, build_embedder, build_store
from jiyi.keys import key_hash
from jiyi.server.ui.session import IDLE, LIFETIME, TOUCH_EVERY, ConsoleSessions, ProcessSessions, id_hash
from jiyi.stores.base import MemoryStore, SessionStore
from tests.conftest import RunningServer
from tests.ui.helpers import ADMIN_KEY, ALICE_KEY, KEYS

KEY = "alice-key-0123456789"


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 5, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def test_a_session_is_found_by_every_process_on_the_store_and_holds_no_secret(store: MemoryStore) -> None:
    assert isinstance(store, SessionStore)
    clock = Clock()
    here, there = ConsoleSessions(lambda: store, clock=clock), ConsoleSessions(lambda: store, clock=clock)
    session_id = here.open(KEY)
    assert there.find(session_id) == key_hash(KEY)  # another process (server object) on the same store
    row = store.console_session_by_hash(id_hash(session_id))
    assert row is not None and row.opened_at == row.seen_at == clock.now
    assert session_id not in (row.id_hash, row.sealed_key) and row.sealed_key != key_hash(KEY)
    assert there.find(session_id + "x") is None and there.find(None) is None and there.find("") is None
    other = here.open(KEY)  # the same key, another sign-in: another seal
    assert store.console_session_by_hash(id_hash(other)).sealed_key != row.sealed_key  # type: ignore[union-attr]
    there.close(session_id)
    assert here.find(session_id) is None and here.find(other) == key_hash(KEY)


def test_nothing_in_a_sqlite_store_leads_to_the_key_or_the_session(tmp_path: Path) -> None:
    store = build_store(f"sqlite:///{tmp_path / 'sessions.db'}")
    session_id = ConsoleSessions(lambda: store).open(KEY)
    store.close()
    raw = b"".join(path.read_bytes() for path in tmp_path.iterdir())  # the file and its WAL
    for secret in (KEY, key_hash(KEY), session_id):
        assert secret.encode() not in raw


def test_sessions_end_when_idle_or_too_old_and_are_pruned(store: MemoryStore) -> None:
    assert isinstance(store, SessionStore)
    clock = Clock()
    sessions = ConsoleSessions(lambda: store, clock=clock)
    idle, kept = sessions.open(KEY), sessions.open(KEY)
    clock.now += TOUCH_EVERY / 2
    assert sessions.find(kept) == key_hash(KEY)
    assert store.console_session_by_hash(id_hash(kept)).seen_at < clock.now  # type: ignore[union-attr]  # not yet
    for _ in range(5):  # used every four hours: lasts past IDLE
        clock.now += IDLE / 3
        assert sessions.find(kept) == key_hash(KEY)
    assert store.console_session_by_hash(id_hash(kept)).seen_at == clock.now  # type: ignore[union-attr]
    assert sessions.find(idle) is None  # unused for longer than IDLE
    assert store.console_session_by_hash(id_hash(idle)) is None  # and gone from the store
    while clock.now < datetime(2026, 5, 1, tzinfo=UTC) + LIFETIME:
        assert sessions.find(kept) == key_hash(KEY)
        clock.now += IDLE / 2
    assert sessions.find(kept) is None  # used all along, but older than LIFETIME

    forgotten = [sessions.open(KEY) for _ in range(3)]
    clock.now += IDLE + timedelta(seconds=1)
    fresh = sessions.open(KEY)  # a sign-in removes the sessions that ended by themselves
    assert all(store.console_session_by_hash(id_hash(s)) is None for s in forgotten)
    assert sessions.find(fresh) == key_hash(KEY)


def test_a_store_without_the_role_keeps_sessions_in_the_process() -> None:
    sessions = ConsoleSessions(lambda: object())
    session_id = sessions.open(KEY)
    assert sessions.find(session_id) == key_hash(KEY)
    sessions.close(session_id)
    assert sessions.find(session_id) is None
    assert isinstance(ProcessSessions(), SessionStore)


def _signed_in(server: RunningServer, key: str) -> httpx.Client:
    browser = httpx.Client(base_url=server.url, timeout=30)
    token = browser.get("/ui/login").text.split('"X-CSRF-Token": "')[1].split('"')[0]
    signed_in = browser.post("/ui/login", json={"key": key, "next": "/ui/users"},
                             headers={"X-CSRF-Token": token, "HX-Request": "true"})
    assert signed_in.status_code == 200 and signed_in.headers["hx-redirect"] == "/ui/users", signed_in.text
    return browser


def _restart(make_server: Callable[..., RunningServer], server: RunningServer, db: Path,
             **keys: Any) -> RunningServer:
    server.__exit__()
    return make_server(AsyncMemory(build_store(f"sqlite:///{db}"), build_embedder("hashing")), **keys)


def test_a_restart_keeps_the_session_and_a_key_gone_from_the_config_ends_it(
        make_server: Callable[..., RunningServer], tmp_path: Path) -> None:
    db = tmp_path / "restart.db"
    server = make_server(AsyncMemory(build_store(f"sqlite:///{db}"), build_embedder("hashing")), **KEYS)
    admin, alice = _signed_in(server, ADMIN_KEY), _signed_in(server, ALICE_KEY)
    server = _restart(make_server, server, db, **KEYS)
    for browser, page in ((admin, "/ui/users"), (alice, "/ui/users/alice")):
        browser.base_url = httpx.URL(server.url)
        assert browser.get(page).status_code == 200, page  # still signed in: the session is in the store
    server = _restart(make_server, server, db, admin_api_key="a-new-admin-key",
                      user_api_keys={ALICE_KEY: "alice"})  # the admin key changed, alice's stayed
    admin.base_url = alice.base_url = httpx.URL(server.url)
    refused = admin.get("/ui/users")
    assert refused.status_code == 303 and refused.headers["location"].startswith("/ui/login")
    assert alice.get("/ui/users/alice").status_code == 200
