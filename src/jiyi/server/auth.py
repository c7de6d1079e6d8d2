"""Who is calling, and what they may touch.

Three modes, from the keys configured:
- no keys: open, as mem0's server (fine on 127.0.0.1 behind your own app);
- an admin key only: admin routes (/configure, /reset, DELETE /memories) need it, the rest stays open;
- user keys (key → user_id): every memory route needs a key, and a user key is tied to its user_id: asking for another
  user is refused, memories of other users are "not found", and an omitted user_id is filled in. This is the tenant
  isolation mem0's server lacks.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jiyi.core.filters import split_scope
from jiyi.errors import Forbidden, Unauthorized


@dataclass(frozen=True, slots=True)
class Principal:
    kind: str  # "admin" | "user" | "open"
    user_id: str | None = None

    @property
    def project_id(self) -> str:
        """The project a key stands for in mem0's platform API (ping, webhooks): a user key is a project of one user,
        whose webhooks hear only that user's changes; the admin key (or an open server) is the whole server."""
        return f"user-{self.user_id}" if self.kind == "user" else "default"


ADMIN = Principal("admin")
OPEN = Principal("open")


def presented_key(x_api_key: str | None, authorization: str | None) -> str | None:
    if x_api_key:
        return x_api_key
    if authorization and authorization[:7].lower() == "bearer ":
        return authorization[7:].strip() or None
    if authorization and authorization[:6].lower() == "token ":  # mem0's client sends "Token <key>"
        return authorization[6:].strip() or None
    return None


class AccessPolicy:
    def __init__(self, admin_api_key: str | None = None, user_api_keys: Mapping[str, str] | None = None) -> None:
        self._admin = admin_api_key or None
        self._users = dict(user_api_keys or {})

    def identify(self, key: str | None) -> Principal:
        if key is not None:
            if self._admin and hmac.compare_digest(key.encode(), self._admin.encode()):
                return ADMIN
            for candidate, user_id in self._users.items():
                if hmac.compare_digest(key.encode(), candidate.encode()):
                    return Principal("user", user_id)
            if self._admin or self._users:
                raise Unauthorized("unknown API key")
        if self._users:
            raise Unauthorized("this server needs an API key (X-API-Key or Authorization: Bearer)")
        return OPEN

    @property
    def has_user_keys(self) -> bool:
        return bool(self._users)

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
        asked = [user_id, hoisted, *_named_users((filters or {}).get("user_id"))]
        if any(asked_id is not None and asked_id != principal.user_id for asked_id in asked):
            raise Forbidden("this API key may only access its own user's memories")
        return principal.user_id

    @staticmethod
    def may_read(principal: Principal, item: Mapping[str, Any]) -> bool:
        return principal.kind != "user" or item.get("user_id") == principal.user_id


def _named_users(condition: Any) -> list[Any]:
    """The user ids a top-level user_id filter names: a value, {"eq": v}, {"in": [...]}. Any other form (ne, nin,
    "*", a comparison) names no one: it stays a condition AND-ed with the key's own scope, so it can only narrow."""
    if condition is None or condition == "*":
        return []
    if isinstance(condition, dict):
        named: list[Any] = []
        for op, value in condition.items():
            if op == "eq":
                named.append(value)
            elif op == "in":
                named.extend(value if isinstance(value, list) else [value])
        return named
    return [condition]

