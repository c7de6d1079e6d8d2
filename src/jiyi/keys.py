"""API keys that can be issued and revoked (`jiyi keys create | list | revoke`).

A key is shown once, when it is made; the store keeps only its SHA-256 (a key is 256 random bits, so a fast hash is
enough: nothing can be guessed from it). Each key is bound to one user (and optionally one agent of theirs) with a
scope: "read" (look, search, recall), "write" (also add, change, forget), or "admin" (every user, the admin routes)."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from jiyi.errors import InvalidInput
from jiyi.records import utcnow

KEY_PREFIX = "jiyi_"
# When `jiyi keys reopen` was last run (ISO 8601; "" when never): the store's state, so that every server process on
# the store learns of it.
REOPENED_AT = "api_keys:reopened_at"


class KeyScope(StrEnum):
    READ = "read"
    WRITE = "write"
    ADMIN = "admin"


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(slots=True)
class ApiKey:
    """A stored key: everything but the key itself."""

    id: str
    key_hash: str
    scope: KeyScope
    user_id: str | None = None
    agent_id: str | None = None
    name: str | None = None
    created_at: datetime = field(default_factory=utcnow)
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    def as_dict(self) -> dict[str, object]:
        """What `jiyi keys list` shows: never the key, nor its hash."""
        return {"id": self.id, "user_id": self.user_id, "agent_id": self.agent_id, "scope": self.scope.value,
                "name": self.name, "created_at": self.created_at.isoformat(),
                "last_used_at": self.last_used_at.isoformat() if self.last_used_at else None,
                "revoked_at": self.revoked_at.isoformat() if self.revoked_at else None}


def new_key(scope: str, user_id: str | None = None, agent_id: str | None = None,
            name: str | None = None) -> tuple[ApiKey, str]:
    """A new key record and the key itself (to show once)."""
    try:
        kind = KeyScope(scope)
    except ValueError:
        raise InvalidInput(f"scope must be one of {[s.value for s in KeyScope]}, got {scope!r}") from None
    if kind is KeyScope.ADMIN and (user_id or agent_id):
        raise InvalidInput("an admin key reaches every user: give no --user or --agent with --scope admin")
    if kind is not KeyScope.ADMIN and not user_id:
        raise InvalidInput("a read or write key belongs to one user: give --user")
    for label, value in (("user", user_id), ("agent", agent_id), ("name", name)):
        if value is not None and (not value.strip() or len(value) > 256):
            raise InvalidInput(f"--{label} must be 1 to 256 characters")
    key_id = "key_" + secrets.token_hex(6)
    secret = KEY_PREFIX + secrets.token_urlsafe(32)
    return ApiKey(key_id, key_hash(secret), kind, user_id, agent_id, name), secret


class KeyRegistry(Protocol):
    """What of a store the functions below use (stores/base.py: KeyStore, and the memory store's named state)."""

    def keys_issued(self) -> bool: ...

    def list_api_keys(self) -> list[ApiKey]: ...

    def get_state(self, key: str) -> str | None: ...

    def set_state(self, key: str, value: str) -> None: ...


def reopened(store: KeyRegistry) -> bool:
    """Whether `jiyi keys reopen` was run after the last key was revoked, and no key was issued since: servers on
    the store take requests without a key again (those allowed to, see server/auth.py)."""
    marker = store.get_state(REOPENED_AT)
    if not marker:
        return False
    since = datetime.fromisoformat(marker)
    # Read from the keys themselves, not from a flag `keys create` would have to clear: a key issued later (by any
    # path) closes the server again, and so does revoking it, as long as it was revoked after the reopening.
    return all(key.revoked_at is not None and key.revoked_at <= since for key in store.list_api_keys())


def keys_close_server(store: KeyRegistry, *, reopen_allowed: bool = True) -> bool:
    """Whether the store's issued keys close the servers on it: one was ever issued (revoking the last key must not
    open a server to everyone), unless `jiyi keys reopen` has been run since and `reopen_allowed`."""
    if not store.keys_issued():
        return False
    return not (reopen_allowed and reopened(store))


def end_reopening(store: KeyRegistry) -> None:
    """A key was issued: servers are closed again. reopened() reads that from the keys as well; clearing the mark
    spares every server process reading the whole key list every few seconds from then on."""
    if store.get_state(REOPENED_AT):
        store.set_state(REOPENED_AT, "")


def active_keys(store: KeyRegistry) -> list[ApiKey]:
    return [key for key in store.list_api_keys() if key.active]


def reopen(store: KeyRegistry, when: datetime) -> None:
    """Let servers on the store take requests without a key again (`jiyi keys reopen`); refused while a key is
    active, since those who hold one would find the door open to everyone."""
    still = active_keys(store)
    if still:
        raise InvalidInput(f"{len(still)} key(s) still active ({', '.join(key.id for key in still[:5])}): revoke "
                           "them first (jiyi keys revoke KEY_ID), or keep the server closed")
    store.set_state(REOPENED_AT, when.isoformat())
