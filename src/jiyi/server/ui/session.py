"""Console sign-in: a browser cannot send X-API-Key when it follows a link, so the key is entered once on the login
page and kept here, in the server's memory, under a random session id. The browser holds only that id, in an
HttpOnly, SameSite=Strict cookie; the key is never in a cookie, a page or a log. Every request still goes through
ServerState.authenticate with the key, so rate limits apply and a revoked key ends its sessions at once.

Forms are CSRF-safe twice over: SameSite=Strict keeps the cookies off requests from other sites, and every POST must
carry a token that only a page of this console holds (an HMAC of the session id, or of a random visitor id before
sign-in, under a secret of this process).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

SESSION_COOKIE = "jiyi_console"
VISITOR_COOKIE = "jiyi_visitor"
LANG_COOKIE = "jiyi_lang"
COOKIE_PATH = "/ui"
IDLE_SECONDS = 12 * 3600.0  # a session unused this long ends
LIFETIME_SECONDS = 7 * 86400.0  # and every session ends after this, used or not
CAPACITY = 10_000  # sessions kept at most (only a valid key opens one); beyond, the least recently used ends


@dataclass(slots=True)
class ConsoleSession:
    key: str
    opened: float
    seen: float


class ConsoleSessions:
    """Sessions of one server process: a restart signs everyone out, which is the safe direction."""

    def __init__(self, idle: float = IDLE_SECONDS, lifetime: float = LIFETIME_SECONDS,
                 capacity: int = CAPACITY) -> None:
        self.idle, self.lifetime, self.capacity = idle, lifetime, capacity
        self._secret = secrets.token_bytes(32)
        self._sessions: OrderedDict[str, ConsoleSession] = OrderedDict()  # by the id's hash, oldest use first
        self._lock = threading.Lock()

    @staticmethod
    def _slot(session_id: str) -> str:
        return hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()

    def open(self, key: str) -> str:
        """A new session for this (already authenticated) key; returns its id, for the cookie."""
        session_id = secrets.token_urlsafe(32)
        now = time.monotonic()
        with self._lock:
            self._sessions[self._slot(session_id)] = ConsoleSession(key, now, now)
            while len(self._sessions) > self.capacity:
                self._sessions.popitem(last=False)
        return session_id

    def find(self, session_id: str | None) -> ConsoleSession | None:
        if not session_id:
            return None
        slot, now = self._slot(session_id), time.monotonic()
        with self._lock:
            session = self._sessions.get(slot)
            if session is None:
                return None
            if now - session.seen > self.idle or now - session.opened > self.lifetime:
                del self._sessions[slot]
                return None
            session.seen = now
            self._sessions.move_to_end(slot)
            return session

    def close(self, session_id: str | None) -> None:
        if session_id:
            with self._lock:
                self._sessions.pop(self._slot(session_id), None)

    def csrf_token(self, holder: str) -> str:
        """The token a page of `holder` (a session id, or a visitor id before sign-in) sends with each POST."""
        return hmac.new(self._secret, b"csrf:" + holder.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()

    def csrf_valid(self, holder: str, token: str | None) -> bool:
        return bool(token) and hmac.compare_digest(self.csrf_token(holder), token or "")


def new_visitor_id() -> str:
    return secrets.token_urlsafe(24)
