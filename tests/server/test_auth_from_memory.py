"""AccessPolicy.identify_from_memory: the event loop answers who a request is from what the process looked up in the
last KEYS_FRESH seconds, and hands anything that needs the key store to a thread — never half done (a real SQLite
store; a closed one proves the store was not touched)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jiyi import build_store
from jiyi.errors import Unauthorized
from jiyi.keys import new_key
from jiyi.server import auth
from jiyi.server.auth import KEYS_FRESH, OPEN, AccessPolicy, NeedsStore
from jiyi.stores.sqlite import SqliteStore


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    ticking = Clock()
    monkeypatch.setattr(auth.time, "monotonic", ticking)
    return ticking


def test_a_key_seen_a_moment_ago_is_known_without_the_store(tmp_path: Path, clock: Clock) -> None:
    store = build_store(f"sqlite:///{tmp_path / 'k.db'}")
    assert isinstance(store, SqliteStore)
    key, secret = new_key("write", "alice")
    store.add_api_key(key)
    policy = AccessPolicy(store=lambda: store)
    with pytest.raises(NeedsStore):
        policy.identify_from_memory(secret)  # never looked up
    assert policy.identify(secret).user_id == "alice"  # on a thread: looked up, its use written
    touched = store.list_api_keys()[0].last_used_at
    assert touched is not None
    store.close()  # from here, any use of the store fails
    assert policy.identify_from_memory(secret).user_id == "alice"
    with pytest.raises(NeedsStore):
        policy.identify_from_memory("not-a-key")  # an unknown key is a store read too
    clock.now += KEYS_FRESH
    with pytest.raises(NeedsStore):
        policy.identify_from_memory(secret)  # what it knew is stale: a revoked key must stop working


def test_a_key_whose_use_is_due_to_be_written_goes_to_the_thread_and_is_written_there(tmp_path: Path,
                                                                                        clock: Clock) -> None:
    store = build_store(f"sqlite:///{tmp_path / 'k.db'}")
    key, secret = new_key("write", "alice")
    store.add_api_key(key)
    policy = AccessPolicy(store=lambda: store)
    policy.identify(secret)
    first = store.list_api_keys()[0].last_used_at
    clock.now += auth.TOUCH_EVERY  # its last use is due again; its lookup is stale too
    policy.identify(secret)  # fresh again, touched again
    second = store.list_api_keys()[0].last_used_at
    assert second is not None and first is not None and second > first
    clock.now += auth.TOUCH_EVERY - 1
    policy.identify(secret)  # looked up again; its use is not due yet
    clock.now += 1.0  # looked up a second ago, and its use is due: the loop must not mark it and leave it unwritten
    with pytest.raises(NeedsStore):
        policy.identify_from_memory(secret)
    policy.identify(secret)  # the thread writes it
    assert store.list_api_keys()[0].last_used_at > second  # type: ignore[operator]


def test_an_open_server_is_open_from_memory_and_a_closed_one_refuses(tmp_path: Path, clock: Clock) -> None:
    store = build_store(f"sqlite:///{tmp_path / 'k.db'}")
    policy = AccessPolicy(store=lambda: store)
    with pytest.raises(NeedsStore):
        policy.identify_from_memory(None)  # whether keys were issued is not known yet
    assert policy.identify(None) == OPEN
    assert policy.identify_from_memory(None) == OPEN
    key, _ = new_key("write", "alice")
    store.add_api_key(key)
    clock.now += KEYS_FRESH
    with pytest.raises(NeedsStore):
        policy.identify_from_memory(None)
    with pytest.raises(Unauthorized):
        policy.identify(None)  # keys were issued: closed, within KEYS_FRESH
    assert AccessPolicy(admin_api_key="adm").identify_from_memory("adm").kind == "admin"  # no store at all
