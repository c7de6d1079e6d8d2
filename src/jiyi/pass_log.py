"""The log of maintenance passes the console draws: what each pass did and the layer sizes after it, kept in the
store's state rows, the last KEPT per user and for the whole store. maintain() writes it; the console reads it."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from jiyi.records import Scope
from jiyi.stores.base import Coordination, MemoryStore

STATE_KEY = "maintenance.passes"
KEPT = 20


def _key(user_id: str | None) -> str:
    return STATE_KEY if user_id is None else f"{STATE_KEY}:user:{user_id}"


def log_pass(store: MemoryStore, scope: Scope | None, result: dict[str, Any], now: datetime) -> None:
    """Keep what a pass did over one user's memories (`scope`) or over the whole store's (None)."""
    key = _key(None if scope is None else scope.user_id)
    entry = {"at": now.isoformat(), **result, "layers": store.count(scope)}
    kept = json.loads(store.get_state(key) or "[]")
    store.set_state(key, json.dumps([entry, *kept][:KEPT], ensure_ascii=False))


def logged_passes(store: Coordination, user_id: str | None = None) -> list[dict[str, Any]]:
    """The last passes, newest first: over one user's memories, or (without `user_id`) the whole store's. Each is
    maintain()'s result plus `at` and `layers` (live memories per layer after it)."""
    return list(json.loads(store.get_state(_key(user_id)) or "[]"))
