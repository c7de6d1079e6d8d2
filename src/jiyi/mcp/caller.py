"""Whose memory an MCP call may touch: the configured user (stdio) or the user bound to the caller's key (HTTP).

A bound caller's user (and agent, for a key made for one agent) is used whatever a tool argument says, and naming
another is refused; a memory of someone else is "not found", as in the REST routes. An admin key, or a server without
keys, is bound to no one: the tools then need the user named.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jiyi.errors import Forbidden, InvalidInput
from jiyi.filters import named_values, split_scope
from jiyi.projects import DEFAULT_PROJECT

READ_ONLY = ("this API key is read-only (scope \"read\"): it may search and read memories, not add, change or "
             "delete them")


@dataclass(frozen=True, slots=True)
class Caller:
    user_id: str | None = None  # bound: every call is this user's
    agent_id: str | None = None  # bound: every call is this agent's (within the user)
    may_write: bool = True
    project_id: str = DEFAULT_PROJECT  # whose project settings apply (its custom categories): the key's

    def user(self, asked: str | None, *, required: bool = True) -> str | None:
        """The user a call acts for: the bound one (refusing another), else the one it names."""
        if self.user_id is not None:
            if asked is not None and asked != self.user_id:
                raise Forbidden("this connection may only use its own user's memories; leave user_id out")
            return self.user_id
        if asked is None and required:
            raise InvalidInput("user_id is required: this connection (an admin key, or a server without keys) is not "
                               "tied to one user, so name the user whose memories to use")
        return asked

    def agent(self, asked: str | None) -> str | None:
        if self.agent_id is not None:
            if asked is not None and asked != self.agent_id:
                raise Forbidden("this connection may only use its own agent's memories; leave agent_id out")
            return self.agent_id
        return asked

    def check_filters(self, filters: Mapping[str, Any] | None) -> None:
        """Refuse filters that name another user or agent (what they name within the caller's scope only narrows)."""
        if not filters:
            return
        if not isinstance(filters, dict):
            raise InvalidInput("filters must be an object")
        hoisted = split_scope(filters)[0]
        for key, bound in (("user_id", self.user_id), ("agent_id", self.agent_id)):
            if bound is None:
                continue
            named = [hoisted.get(key), *named_values(filters.get(key))]
            if any(value is not None and value != bound for value in named):
                raise Forbidden(f"this connection may only use its own {key.removesuffix('_id')}'s memories; "
                                f"leave {key} out of filters")

    def sees(self, item: Mapping[str, Any]) -> bool:
        """Whether a memory (a memory item, or a record's scope as a dict) is this caller's to see."""
        return ((self.user_id is None or item.get("user_id") == self.user_id)
                and (self.agent_id is None or item.get("agent_id") == self.agent_id))


def caller_for_principal(who: Any) -> Caller:
    """The MCP caller of a REST principal (server/auth.py): a user key is bound to its user (and agent), a "read"
    key may not write; the admin key and an open server are bound to no one. Each is the key's project."""
    may_write = getattr(who, "scope", "write") != "read"
    project_id = getattr(who, "project_id", DEFAULT_PROJECT)
    if getattr(who, "kind", None) == "user":
        return Caller(who.user_id, getattr(who, "agent_id", None), may_write, project_id)
    return Caller(None, getattr(who, "agent_id", None), may_write, project_id)
