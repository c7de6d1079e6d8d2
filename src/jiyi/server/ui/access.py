"""Who is looking at the console, and what they may see: the session or the open server, the language, the CSRF
token of the page, and the scopes and memories a key reaches (the REST API's rule: a user key its own user only,
everything else "not found")."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, TypeVar, TypeVarTuple

from fastapi import Depends, Request

from jiyi.errors import Forbidden, NotFound, Unauthorized
from jiyi.memory import AsyncMemory
from jiyi.records import MemoryRecord, Scope
from jiyi.server.auth import AccessPolicy, Principal
from jiyi.server.state import ServerState
from jiyi.server.ui.i18n import Translator, negotiate
from jiyi.server.ui.session import (
    LANG_COOKIE,
    SESSION_COOKIE,
    VISITOR_COOKIE,
    ConsoleSessions,
    csrf_token,
    csrf_valid,
    new_visitor_id,
)


class LoginNeeded(Exception):
    def __init__(self, target: str) -> None:
        super().__init__(target)
        self.target = target



@dataclass(slots=True)
class Visitor:
    """A browser before sign-in (or on an open server): its language and its CSRF token."""

    lang: str
    holder: str  # the session id when signed in, else the visitor id: what the CSRF token is bound to
    csrf: str
    new_visitor: str | None  # a visitor id to set as a cookie
    session_id: str | None  # a session that lasts, else None
    key_hash: str | None = field(default=None, repr=False)  # the session's key, by its SHA-256

    @property
    def t(self) -> Translator:
        return Translator(self.lang)


_T = TypeVar("_T")
_Args = TypeVarTuple("_Args")

OPEN = Principal("open")


@dataclass(slots=True)
class Viewer(Visitor):
    principal: Principal = OPEN

    @property
    def signed_in(self) -> bool:
        return self.session_id is not None

    @property
    def sees_everyone(self) -> bool:
        return self.principal.kind != "user"


def sessions_of(request: Request) -> ConsoleSessions:
    sessions: ConsoleSessions = request.app.state.console_sessions  # made by create_app
    return sessions


def server_state(request: Request) -> ServerState:
    state: ServerState = request.app.state.jiyi  # made by create_app; Starlette's State is untyped
    return state


def language(request: Request) -> str:
    return negotiate(request.headers.get("accept-language"), request.cookies.get(LANG_COOKIE))


def visitor(request: Request) -> Visitor:
    """(A sync dependency: FastAPI runs it in a worker thread, as the store read it makes should.)"""
    session_id = request.cookies.get(SESSION_COOKIE)
    hashed_key = sessions_of(request).find(session_id)
    if hashed_key is None:
        session_id = None
    visitor_id = request.cookies.get(VISITOR_COOKIE)
    new = None if visitor_id else new_visitor_id()
    holder = session_id or visitor_id or new or ""
    return Visitor(language(request), holder, csrf_token(holder), new, session_id, hashed_key)


def viewer(request: Request, guest: Annotated[Visitor, Depends(visitor)]) -> Viewer:
    """Who is signed in; a closed server (one with keys) sends everyone else to the login page."""
    state = server_state(request)
    if guest.key_hash is not None:
        try:
            principal = state.authenticate_hash(guest.key_hash)
            return Viewer(guest.lang, guest.holder, guest.csrf, guest.new_visitor, guest.session_id, guest.key_hash,
                          principal)
        except Unauthorized:  # revoked since sign-in, or gone from the config: the session ends with it
            sessions_of(request).close(guest.session_id)
    if state.policy.closed:
        raise LoginNeeded(request.url.path + (f"?{request.url.query}" if request.url.query else ""))
    principal = state.authenticate(None, request.client.host if request.client else "")
    return Viewer(guest.lang, guest.holder, guest.csrf, guest.new_visitor, None, None, principal)


def actor(request: Request, who: Annotated[Viewer, Depends(viewer)]) -> Viewer:
    """A viewer sending a form: the page's CSRF token must come with it."""
    if not csrf_valid(who.holder, request.headers.get("x-csrf-token")):
        raise Forbidden(who.t("error.csrf"))
    return who


def writer(who: Annotated[Viewer, Depends(actor)]) -> Viewer:
    if not who.principal.may_write:
        raise Forbidden(who.t("error.read_only"))
    return who


Looking = Annotated[Viewer, Depends(viewer)]
Acting = Annotated[Viewer, Depends(actor)]
Writing = Annotated[Viewer, Depends(writer)]


def memory_of(request: Request) -> AsyncMemory:
    return server_state(request).memory


async def io(fn: Callable[[*_Args], _T], *args: *_Args) -> _T:
    return await asyncio.to_thread(fn, *args)


def scope_for(who: Viewer, user_id: str, agent_id: str | None = None, run_id: str | None = None) -> Scope:
    """The scope a page shows; a user key's own user only (others are "not found"), its own agent if bound to one."""
    principal = who.principal
    if principal.kind == "user":
        if user_id != principal.user_id or (principal.agent_id and agent_id not in (None, principal.agent_id)):
            raise NotFound(who.t("error.no_user", user=user_id))
        agent_id = agent_id or principal.agent_id
    return Scope(user_id, agent_id or None, run_id or None)


async def visible_record(request: Request, who: Viewer, memory_id: str) -> MemoryRecord:
    """The memory (deleted ones too: they can be restored) if this viewer may see it."""
    record = await io(memory_of(request).store.get, memory_id, True)
    if record is None or not AccessPolicy.may_read(who.principal, record.scope.as_dict()):
        raise NotFound(who.t("error.no_memory", memory=memory_id))
    return record
