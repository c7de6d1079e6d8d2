"""MCP over streamable HTTP at /mcp on the REST app, behind the same keys as the REST routes.

Each request is authenticated before the MCP SDK sees it — an unknown key is a 401 (too many requests a 429) with
the REST API's error body, never an MCP session — and the caller it stands for rides in the ASGI scope to the tool
handlers. Stateless, with JSON answers: every MCP message is one plain request and response, so it passes the REST
app's body limits, request ids and metrics like any other, holds no per-client state, and works the same whichever
server process (of several on one store) answers it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio.to_thread
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Match, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from jiyi.errors import JiyiError, Unauthorized
from jiyi.mcp.caller import Caller, caller_for_principal
from jiyi.mcp.server import build_mcp_server
from jiyi.mcp.tools import DEFAULT_MAX_QUERY_CHARS, DEFAULT_MAX_TEXT_CHARS, ToolNames
from jiyi.memory import AsyncMemory

CALLER = "jiyi.mcp.caller"  # the ASGI scope key the authenticated caller travels under


class McpEndpoint:
    """The ASGI app for /mcp. `authenticate(request)` returns the REST principal of the request's key or raises
    (Unauthorized, RateLimited); `refuse(error)` is the REST API's error answer for it."""

    def __init__(self, memory: AsyncMemory | Callable[[], AsyncMemory], *,
                 authenticate: Callable[[Request], Any], refuse: Callable[[JiyiError], ASGIApp],
                 tool_names: ToolNames | str = ToolNames.UNDERSCORE, max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
                 max_query_chars: int = DEFAULT_MAX_QUERY_CHARS,
                 on_changes: Callable[[list[dict[str, Any]]], None] | None = None) -> None:
        self.server = build_mcp_server(memory, caller_of_request, tool_names=tool_names,
                                       max_text_chars=max_text_chars, max_query_chars=max_query_chars,
                                       on_changes=on_changes)
        self._authenticate = authenticate
        self._refuse = refuse
        self._sessions: StreamableHTTPSessionManager | None = None

    def route(self, path: str = "/mcp") -> Route:
        """The route to add to the app (outside the OpenAPI document: MCP is not a REST operation)."""
        return _NamedRoute(path, self, include_in_schema=False)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """For the app's lifespan: the SDK's request handling runs inside a task group it owns. A new manager per
        run, so an app can be started again (a manager runs once)."""
        sessions = StreamableHTTPSessionManager(self.server, stateless=True, json_response=True)
        async with sessions.run():
            self._sessions = sessions
            try:
                yield
            finally:
                self._sessions = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        try:
            # Off the event loop, as FastAPI runs the REST routes' key check: a managed key may be read from the store.
            scope[CALLER] = caller_for_principal(await anyio.to_thread.run_sync(self._authenticate, request))
        except JiyiError as exc:
            await self._refuse(exc)(scope, receive, send)
            return
        if scope["method"] != "POST":
            # No server-to-client stream (GET) and no session to end (DELETE): the specification's answer is a 405.
            await Response(status_code=405, headers={"Allow": "POST"})(scope, receive, send)
            return
        if self._sessions is None:
            await JSONResponse({"detail": "MCP is not running: the app's lifespan has not started"},
                               status_code=503)(scope, receive, send)
            return
        await self._sessions.handle_request(scope, receive, send)


def caller_of_request(ctx: ServerRequestContext[Any, Any]) -> Caller:
    request = ctx.request
    caller = request.scope.get(CALLER) if isinstance(request, Request) else None
    if not isinstance(caller, Caller):  # only McpEndpoint hands requests to this server
        raise Unauthorized("this MCP request was not authenticated")
    return caller


class _NamedRoute(Route):
    """A route that puts itself in the scope, as FastAPI's routes do: request metrics are labelled by its path."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        match, child = super().matches(scope)
        if match is not Match.NONE:
            child["route"] = self
        return match, child
