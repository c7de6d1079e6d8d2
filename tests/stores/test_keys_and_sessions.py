"""The KeyStore and SessionStore ports' contracts (stores/base.py): every store (conftest.STORE_KINDS) declares
and passes them."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from jiyi.stores.base import MemoryStore


def test_api_keys_are_found_by_hash_listed_touched_and_revoked(store: MemoryStore) -> None:
    from jiyi.keys import key_hash, new_key
    from jiyi.stores.base import KeyStore

    assert isinstance(store, KeyStore)
    assert not store.keys_issued()
    key, secret = new_key("read", "alice", "helper", "phone")
    store.add_api_key(key)
    found = store.api_key_by_hash(key_hash(secret))
    assert found is not None and (found.id, found.user_id, found.agent_id, found.scope.value) == \
        (key.id, "alice", "helper", "read")
    assert store.api_key_by_hash(key_hash(secret + "x")) is None
    when = datetime(2026, 5, 1, tzinfo=UTC)
    store.touch_api_key(key.id, when)
    assert store.list_api_keys()[0].last_used_at == when
    assert store.revoke_api_key(key.id, when) and not store.revoke_api_key(key.id, when)
    assert not store.revoke_api_key("key_unknown", when)
    assert store.api_key_by_hash(key_hash(secret)).revoked_at == when  # type: ignore[union-attr]
    assert store.keys_issued()  # revoked keys still count: the server stays closed
    store.reset()
    assert [k.id for k in store.list_api_keys()] == [key.id]  # a reset of memories keeps the keys


def test_console_sessions_are_found_by_hash_touched_ended_and_pruned(store: MemoryStore) -> None:
    from jiyi.stores.base import ConsoleSession, SessionStore

    assert isinstance(store, SessionStore)
    t0 = datetime(2026, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)
    fresh = ConsoleSession("a" * 64, "0f" * 32, t0, t0)
    idle = ConsoleSession("b" * 64, "1e" * 32, t0 - timedelta(days=1), t0 - timedelta(hours=13))
    old = ConsoleSession("c" * 64, "2d" * 32, t0 - timedelta(days=8), t0)
    for session in (fresh, idle, old):
        store.add_console_session(session)
    assert store.console_session_by_hash("a" * 64) == fresh  # times to the microsecond, in UTC
    assert store.console_session_by_hash("d" * 64) is None
    store.touch_console_session("a" * 64, t0 + timedelta(minutes=5))
    assert store.console_session_by_hash("a" * 64) == replace(fresh, seen_at=t0 + timedelta(minutes=5))
    store.reset()  # a reset of memories keeps the sign-ins
    assert store.prune_console_sessions(t0 - timedelta(hours=12), t0 - timedelta(days=7)) == 2  # idle, and too old
    assert store.console_session_by_hash("b" * 64) is None and store.console_session_by_hash("c" * 64) is None
    assert store.delete_console_session("a" * 64) and not store.delete_console_session("a" * 64)
    assert store.console_session_by_hash("a" * 64) is None
