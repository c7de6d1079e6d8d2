"""Console sign-in: a browser cannot send X-API-Key when it follows a link, so the key is entered once on the login
page and the browser gets a random session id instead, in an HttpOnly, SameSite=Strict cookie; the key is never in
a cookie, a page or a log.

Sessions are kept in the store (stores/base.py SessionStore), so every server process on it (`jiyi serve
--workers N`, several machines on one PostgreSQL) knows them, and a restart signs no one out. The store holds
neither the session id nor the key: a row is found by the id's SHA-256, and it keeps the key's SHA-256 sealed (XOR)
under a pad derived from the session id. Only a request that carries the cookie can unseal it; a copy of the
database can neither use a session nor test guesses of a key from the environment (a weak JIYI_ADMIN_API_KEY stays
as unknown as before). Every request then identifies that hash as a presented key is identified
(ServerState.authenticate_hash): the keys configured now, the admin key, managed keys by their hash with the same
KEYS_FRESH cache, the same request rate. So a revoked managed key ends its sessions within KEYS_FRESH on every
process, and a key removed from the environment ends them at the restart that removes it.

Forms are CSRF-safe twice over: SameSite=Strict keeps the cookies off requests from other sites, and every POST must
carry a token that only a page of this console holds: an HMAC keyed by the session id (or, before sign-in, by a
random visitor id), which every process computes alike and no other site can.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from collections.abc import Callable
from datetime import datetime, timedelta

from jiyi.keys import key_hash
from jiyi.records import utcnow
from jiyi.stores.base import ConsoleSession, SessionStore

SESSION_COOKIE = "jiyi_console"
VISITOR_COOKIE = "jiyi_visitor"
LANG_COOKIE = "jiyi_lang"
COOKIE_PATH = "/ui"
IDLE = timedelta(hours=12)  # a session unused this long ends
LIFETIME = timedelta(days=7)  # and every session ends after this, used or not
TOUCH_EVERY = timedelta(minutes=1)  # a session's last use is written at most this often, not on every request


def _digest(secret: str, purpose: bytes) -> bytes:
    return hmac.new(secret.encode("utf-8", "surrogatepass"), purpose, hashlib.sha256).digest()


def id_hash(session_id: str) -> str:
    """What the store finds a session by."""
    return hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()


def seal(hashed_key: str, session_id: str) -> str:
    """The key's hash, XOR a pad only the session id yields (a one-time pad: every session id is new)."""
    pad = _digest(session_id, b"jiyi console key")
    return bytes(a ^ b for a, b in zip(bytes.fromhex(hashed_key), pad, strict=True)).hex()


def unseal(sealed: str, session_id: str) -> str | None:
    try:
        return seal(sealed, session_id)  # XOR undoes itself
    except ValueError:  # not 32 bytes of hex: nothing this module wrote
        return None


class ProcessSessions:
    """SessionStore in this process's memory, for a store without that role: a restart signs everyone out, and
    several processes do not share it."""

    def __init__(self) -> None:
        self._sessions: dict[str, ConsoleSession] = {}
        self._lock = threading.Lock()

    def add_console_session(self, session: ConsoleSession) -> None:
        with self._lock:
            self._sessions[session.id_hash] = session

    def console_session_by_hash(self, id_hash: str) -> ConsoleSession | None:
        with self._lock:
            return self._sessions.get(id_hash)

    def touch_console_session(self, id_hash: str, when: datetime) -> None:
        with self._lock:
            found = self._sessions.get(id_hash)
            if found is not None:
                self._sessions[id_hash] = ConsoleSession(found.id_hash, found.sealed_key, found.opened_at, when)

    def delete_console_session(self, id_hash: str) -> bool:
        with self._lock:
            return self._sessions.pop(id_hash, None) is not None

    def prune_console_sessions(self, seen_before: datetime, opened_before: datetime) -> int:
        with self._lock:
            ended = [h for h, s in self._sessions.items() if s.seen_at < seen_before or s.opened_at < opened_before]
            for gone in ended:
                del self._sessions[gone]
            return len(ended)


class ConsoleSessions:
    """Opening, finding and ending sessions in the store (`store`: the memory store, which /configure may
    replace, hence a function)."""

    def __init__(self, store: Callable[[], object], idle: timedelta = IDLE, lifetime: timedelta = LIFETIME,
                 clock: Callable[[], datetime] = utcnow) -> None:
        self.idle, self.lifetime, self.clock = idle, lifetime, clock
        self._store = store
        self._fallback = ProcessSessions()

    def _sessions(self) -> SessionStore:
        store = self._store()
        return store if isinstance(store, SessionStore) else self._fallback

    def open(self, key: str) -> str:
        """A new session for this (already authenticated) key; returns its id, for the cookie. Sessions that ended
        by themselves (idle, or too old) are removed first: the table holds live sessions, and a few just ended."""
        sessions, now = self._sessions(), self.clock()
        sessions.prune_console_sessions(now - self.idle, now - self.lifetime)
        session_id = secrets.token_urlsafe(32)
        sessions.add_console_session(ConsoleSession(id_hash(session_id), seal(key_hash(key), session_id), now, now))
        return session_id

    def find(self, session_id: str | None) -> str | None:
        """The hash of the key the session was opened with, while the session lasts; else None."""
        if not session_id:
            return None
        sessions, slot = self._sessions(), id_hash(session_id)
        found = sessions.console_session_by_hash(slot)
        if found is None:
            return None
        now = self.clock()
        if now - found.seen_at > self.idle or now - found.opened_at > self.lifetime:
            sessions.delete_console_session(slot)
            return None
        if now - found.seen_at >= TOUCH_EVERY:
            sessions.touch_console_session(slot, now)
        return unseal(found.sealed_key, session_id)

    def close(self, session_id: str | None) -> None:
        if session_id:
            self._sessions().delete_console_session(id_hash(session_id))


def csrf_token(holder: str) -> str:
    """The token a page of `holder` (a session id, or a visitor id before sign-in) sends with each POST."""
    return _digest(holder, b"jiyi console csrf").hex()


def csrf_valid(holder: str, token: str | None) -> bool:
    return bool(token) and hmac.compare_digest(csrf_token(holder), token or "")


def new_visitor_id() -> str:
    return secrets.token_urlsafe(24)
