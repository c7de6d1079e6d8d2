"""Who is calling, and what they may touch.

Three modes, from the keys configured:
- no keys: open, as mem0's server (fine on 127.0.0.1 behind your own app);
- an admin key only: admin routes (/configure, /reset, DELETE /memories) need it, the rest stays open;
- user keys: every memory route needs a key, and a user key is tied to its user_id (and, if it was made for one, an
  agent_id): asking for another user is refused, memories of other users are "not found", and an omitted user_id is
  filled in. This is the tenant isolation mem0's server lacks.

User keys come from the environment (JIYI_API_KEYS, key → user_id) or are issued with `jiyi keys create` and kept
hashed in the store (jiyi/keys.py), with a scope: "read" keys may look but not change.

Revoking the last issued key does not open the server: a key is revoked when it leaked, and the one who holds it must
not find the door open. The way back to open mode is said in every 401 such a server gives and in `jiyi keys
revoke`'s output: `jiyi keys reopen`. A server on an address other than loopback, started without --insecure, never
goes back to open mode that way (`jiyi serve` would not have started it keyless there); its 401 says so.
"""

from __future__ import annotations

import hmac
import threading
import time
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol, cast

from jiyi.capability import CapabilityCheck
from jiyi.errors import Forbidden, Unauthorized
from jiyi.filters import named_values, split_scope
from jiyi.keys import ApiKey, KeyRegistry, KeyScope, active_keys, key_hash, keys_close_server, reopened
from jiyi.records import utcnow
from jiyi.stores.base import KeyStore, MemoryStore

TOUCH_EVERY = 60.0  # seconds between two writes of a key's last-used time (not a write per request)
KEYS_FRESH = 2.0  # seconds a looked-up key (or its absence) is trusted before the store is asked again: a revoked
# key stops working within this, in every server process, and a request does not cost a store read


@dataclass(frozen=True, slots=True)
class Principal:
    kind: str  # "admin" | "user" | "open"
    user_id: str | None = None
    agent_id: str | None = None  # a key made for one agent of its user
    scope: str = KeyScope.WRITE.value  # "read" | "write" | "admin"
    key_id: str | None = None  # a managed key's id (never the key)

    @property
    def project_id(self) -> str:
        """The project a key stands for in mem0's platform API (ping, webhooks): a user key is a project of one user,
        whose webhooks hear only that user's changes; the admin key (or an open server) is the whole server."""
        return f"user-{self.user_id}" if self.kind == "user" else "default"

    @property
    def may_write(self) -> bool:
        return self.scope != KeyScope.READ.value


ADMIN = Principal("admin", scope=KeyScope.ADMIN.value)
OPEN = Principal("open")
NEEDS_KEY = "this server needs an API key (X-API-Key or Authorization: Bearer)"


class _Keys(KeyStore, KeyRegistry, Protocol):
    """A store that keeps issued keys, with its named state (where `jiyi keys reopen` is recorded)."""


class NeedsStore(Exception):
    """identify_from_memory() could not answer without reading or writing the key store."""


class _StoreNotNow:
    """The key store as identify_from_memory() sees it: any use of it is a NeedsStore, raised before the policy
    changes any of what it holds (so the same call, made again with the store, does all of it)."""

    def __getattr__(self, name: str) -> Any:
        raise NeedsStore(name)


_FROM_MEMORY: ContextVar[bool] = ContextVar("jiyi_auth_from_memory", default=False)
_keeps_keys = CapabilityCheck[KeyStore](KeyStore)  # asked on every request (has_user_keys)


def presented_key(x_api_key: str | None, authorization: str | None) -> str | None:
    if x_api_key:
        return x_api_key
    if authorization and authorization[:7].lower() == "bearer ":
        return authorization[7:].strip() or None
    if authorization and authorization[:6].lower() == "token ":  # mem0's client sends "Token <key>"
        return authorization[6:].strip() or None
    return None


class AccessPolicy:
    def __init__(self, admin_api_key: str | None = None, user_api_keys: Mapping[str, str] | None = None,
                 store: Callable[[], MemoryStore] | None = None, *, reopen_allowed: bool = True) -> None:
        """`store`: where keys issued with `jiyi keys create` are kept (the memory store, which /configure may
        replace, hence a function). `reopen_allowed`: whether `jiyi keys reopen` may open this server again once
        every issued key is revoked (False on an address other than loopback, see the module's docstring)."""
        self._reopen_allowed = reopen_allowed
        self._admin = admin_api_key or None
        self._users = dict(user_api_keys or {})
        # The same keys by their SHA-256, for a console session, which keeps only that (server/ui/session.py).
        self._admin_hash = key_hash(self._admin) if self._admin else None
        self._user_hashes = {key_hash(key): user_id for key, user_id in self._users.items()}
        self._store = store
        self._touched: dict[str, float] = {}
        self._touch_lock = threading.Lock()
        self._seen: dict[str, tuple[float, ApiKey | None]] = {}  # key hash -> (when looked up, the key)
        self._any_keys: tuple[float, bool] = (-KEYS_FRESH, False)
        self._way_back: tuple[float, str] = (-KEYS_FRESH, "")

    def _keys(self) -> _Keys | None:
        store = self._store() if self._store is not None else None
        if not _keeps_keys(store):
            return None
        return cast(_Keys, _StoreNotNow()) if _FROM_MEMORY.get() else cast(_Keys, store)

    def identify_from_memory(self, key: str | None) -> Principal:
        """identify(), answered from what this process holds (keys looked up in the last KEYS_FRESH seconds), on the
        event loop; NeedsStore when it would read or write the store — the caller then asks identify() on a thread.
        A request with a key seen a moment ago, or on an open server, costs no hop to a worker thread (which took ~8 %
        of the server's time holding the GIL under 8 clients, py-spy --gil)."""
        token = _FROM_MEMORY.set(True)
        try:
            return self.identify(key)
        finally:
            _FROM_MEMORY.reset(token)

    def identify(self, key: str | None) -> Principal:
        if key is not None:
            if self._admin and hmac.compare_digest(key.encode(), self._admin.encode()):
                return ADMIN
            for candidate, user_id in self._users.items():
                if hmac.compare_digest(key.encode(), candidate.encode()):
                    return Principal("user", user_id)
            managed = self._managed(key)
            if managed is not None:
                return managed
            if self.closed:
                raise Unauthorized("unknown API key" + self._how_to_reopen())
        if self.has_user_keys:
            raise Unauthorized(NEEDS_KEY + self._how_to_reopen())
        return OPEN

    def _how_to_reopen(self) -> str:
        """What a 401 adds when every key issued with `jiyi keys create` was revoked: the way back to open mode.
        Never a key, nor which ids or users there were."""
        if self._users:
            return ""  # keys from the environment are in use: nothing to say
        keys = self._keys()
        if keys is None:
            return ""
        when, said = self._way_back
        if time.monotonic() - when >= KEYS_FRESH:  # a 401 without a key is cheap to send: bounded store reads
            said = ""
            if keys.keys_issued() and not active_keys(keys):
                if not reopened(keys):
                    said = ("; every key issued for it was revoked: run `jiyi keys reopen` on its store to take "
                            "requests without a key again (open local mode), or issue a key with `jiyi keys create`")
                elif not self._reopen_allowed:
                    said = ("; every issued key was revoked and `jiyi keys reopen` was run, but this server listens "
                            "on an address other than loopback and does not run there without keys: restart it "
                            "with --insecure (a trusted network only), or issue a key with `jiyi keys create`")
            self._way_back = (time.monotonic(), said)
        return said

    def identify_hash(self, digest: str) -> Principal | None:
        """Who holds the key with this SHA-256 now (a console session keeps only that), or None: the key was
        revoked, or is no longer configured."""
        if self._admin_hash and hmac.compare_digest(digest, self._admin_hash):
            return ADMIN
        for candidate, user_id in self._user_hashes.items():
            if hmac.compare_digest(digest, candidate):
                return Principal("user", user_id)
        return self._managed_by_hash(digest)

    def _managed(self, key: str) -> Principal | None:
        return self._managed_by_hash(key_hash(key))

    def _managed_by_hash(self, digest: str) -> Principal | None:
        keys = self._keys()
        if keys is None:
            return None
        now = time.monotonic()
        when, found = self._seen.get(digest, (-KEYS_FRESH, None))
        if now - when >= KEYS_FRESH:
            found = keys.api_key_by_hash(digest)
            if len(self._seen) > 10_000:  # unknown keys sent at random must not grow this without bound
                self._seen.clear()
            self._seen[digest] = (now, found)
        if found is None or not found.active:
            return None
        with self._touch_lock:
            due = now - self._touched.get(found.id, -TOUCH_EVERY) >= TOUCH_EVERY
        if due:  # written before it is marked: a NeedsStore leaves it due for the call that can write
            keys.touch_api_key(found.id, utcnow())
            with self._touch_lock:
                self._touched[found.id] = now
        if found.scope is KeyScope.ADMIN:
            return Principal("admin", scope=KeyScope.ADMIN.value, key_id=found.id)
        return Principal("user", found.user_id, found.agent_id, found.scope.value, found.id)

    @property
    def closed(self) -> bool:
        """Whether any key is configured: then a key that is not one of them is refused."""
        return bool(self._admin or self.has_user_keys or self._has_managed_keys())

    @property
    def has_user_keys(self) -> bool:
        """Every memory route needs a key (keys from the environment, or any issued with `jiyi keys create`)."""
        return bool(self._users) or self._has_managed_keys()

    def _has_managed_keys(self) -> bool:
        keys = self._keys()
        if keys is None:
            return False
        when, known = self._any_keys
        if time.monotonic() - when >= KEYS_FRESH:
            known = keys_close_server(keys, reopen_allowed=self._reopen_allowed)
            self._any_keys = (time.monotonic(), known)
        return known

    @property
    def has_admin_key(self) -> bool:
        return self._admin is not None

    def require_admin(self, principal: Principal) -> None:
        if principal.kind == "admin" or (principal.kind == "open" and self._admin is None):
            return
        if principal.kind == "user":
            raise Forbidden("this route is for the admin key only")
        raise Unauthorized("this route needs the admin API key (X-API-Key or Authorization: Bearer)")

    @staticmethod
    def bind_user(principal: Principal, user_id: str | None, filters: dict[str, Any] | None = None) -> str | None:
        """The user_id a request may use: a user key's own, whatever the request says (or refuse a different one)."""
        if principal.kind != "user":
            return user_id
        hoisted = split_scope(filters)[0].get("user_id") if isinstance(filters, dict) else None
        asked = [user_id, hoisted, *named_values((filters or {}).get("user_id"))]
        if any(asked_id is not None and asked_id != principal.user_id for asked_id in asked):
            raise Forbidden("this API key may only access its own user's memories")
        return principal.user_id

    @staticmethod
    def bind_agent(principal: Principal, agent_id: str | None, filters: dict[str, Any] | None = None) -> str | None:
        """The agent_id a request may use: a key made for one agent always works on that agent's memories."""
        if principal.agent_id is None:
            return agent_id
        hoisted = split_scope(filters)[0].get("agent_id") if isinstance(filters, dict) else None
        if any(asked is not None and asked != principal.agent_id
               for asked in (agent_id, hoisted, *named_values((filters or {}).get("agent_id")))):
            raise Forbidden("this API key may only access its own agent's memories")
        return principal.agent_id

    @staticmethod
    def may_read(principal: Principal, item: Mapping[str, Any]) -> bool:
        if principal.kind != "user":
            return True
        return item.get("user_id") == principal.user_id and (
            principal.agent_id is None or item.get("agent_id") == principal.agent_id)
