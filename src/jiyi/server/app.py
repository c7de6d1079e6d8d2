"""The FastAPI application factory."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import inspect
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute
from starlette.routing import Route

from jiyi import __version__
from jiyi.jobs.extraction_worker import ExtractionWorker
from jiyi.jobs.maintenance import MaintenanceScheduler
from jiyi.mcp.http import McpEndpoint
from jiyi.memory import AsyncMemory
from jiyi.server import docs
from jiyi.server.auth import AccessPolicy, presented_key
from jiyi.server.errors import error_response, install_error_handlers, internal_error_response
from jiyi.server.limits import BodyGuard, RequestLimits
from jiyi.server.platform import router as platform_router
from jiyi.server.profile_routes import router as profile_router
from jiyi.server.request_log import RequestLog
from jiyi.server.restore_routes import router as restore_router
from jiyi.server.routes import require_admin, router
from jiyi.server.state import ServerState
from jiyi.server.trace_context import TraceContext
from jiyi.server.ui import router as console_router
from jiyi.server.ui.session import ConsoleSessions
from jiyi.server.webhook_routes import router as webhook_router
from jiyi.webhooks.dispatcher import WebhookDispatcher, WebhookOptions

log = logging.getLogger("jiyi.server")
CLOSE_TIMEOUT = 1.5  # seconds the lifespan waits for the store to close at shutdown


def create_app(
    memory: AsyncMemory,
    *,
    admin_api_key: str | None = None,
    user_api_keys: Mapping[str, str] | None = None,
    run_worker: bool = True,
    worker_poll_interval: float = 2.0,
    cors_origins: Sequence[str] = (),
    maintenance_interval: float = 0.0,
    limits: RequestLimits | None = None,
    webhooks: WebhookOptions | None = None,
    mcp_tool_names: str = "underscore",
    reopen_allowed: bool = True,
) -> FastAPI:
    """`user_api_keys` maps API keys to the one user_id each may access (see server/auth.py). `run_worker`: the
    server extracts queued turns (async adds, LLM retries) in the background; turn it off when separate workers do.
    `cors_origins`: browser origins allowed to call the API directly (e.g. a SillyTavern page), "*" for any.
    `maintenance_interval`: seconds between lifecycle passes over every user (0: only on demand, POST /maintain).
    `limits`: the largest body, message, query and metadata accepted (RequestLimits' defaults when omitted).
    `webhooks`: how deliveries are sent and retried (WebhookOptions' defaults when omitted).
    `mcp_tool_names`: how /mcp lists jiyi's tools, "underscore" (memory_add) or "dotted" (memory.add).
    `reopen_allowed`: whether `jiyi keys reopen` may open the server again after its issued keys were all revoked
    (see server/auth.py); `jiyi serve` turns it off on an address other than loopback unless --insecure."""
    limits = limits or RequestLimits()
    webhooks = webhooks or WebhookOptions()
    policy = AccessPolicy(admin_api_key, user_api_keys, store=lambda: state.memory.store,
                          reopen_allowed=reopen_allowed)
    state = ServerState(memory, policy, limits)
    mcp = McpEndpoint(lambda: state.memory, tool_names=mcp_tool_names, refuse=error_response,
                      authenticate=lambda r: state.authenticate(presented_key(r.headers.get("x-api-key"),
                                                                              r.headers.get("authorization")),
                                                                r.client.host if r.client else ""),
                      max_text_chars=limits.max_message_chars, max_query_chars=limits.max_query_chars,
                      on_changes=lambda changes: state.metrics.count_changes(changes))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        worker = ExtractionWorker(lambda: state.memory, poll_interval=worker_poll_interval) if run_worker else None
        if worker is not None:
            worker.start()
        scheduler = MaintenanceScheduler(lambda: state.maintain(), maintenance_interval)
        scheduler.start()
        dispatcher = WebhookDispatcher(lambda: state.memory.store, webhooks)
        dispatcher.start()
        # mem0's category prototypes: seconds of embedding on a new store (read back from it afterwards), made now
        # beside start-up rather than inside the first add.
        warming = asyncio.create_task(asyncio.to_thread(_prepare_categories, state.memory), name="jiyi-categories")
        # What exists now (modules, the app, the model) lives as long as the server: out of the collector's sight,
        # a full collection in the middle of a request no longer walks it (~9 ms of a ~28 ms pause, bench/scale.py).
        gc.freeze()
        try:
            async with mcp.running():
                yield
        finally:
            gc.unfreeze()  # an app embedded in a longer process (tests) gives its objects back to the collector
            warming.cancel()  # its thread ends with its current batch; what it made is kept, or made again later
            with contextlib.suppress(asyncio.CancelledError):
                await warming
            # Bounded: a thread stuck in an embedding or a store call must not hold the shutdown. The worker puts
            # the turns it had claimed back in the queue; whatever is cut short is processed after the next start.
            await scheduler.stop()
            await dispatcher.stop()
            if worker is not None:
                await worker.stop()
            try:
                await asyncio.wait_for(state.close(), CLOSE_TIMEOUT)
            except TimeoutError:
                log.warning("the store did not close within %g s (a worker thread still holds it)", CLOSE_TIMEOUT)

    app = FastAPI(
        title="jiyi",
        version=__version__,
        description="Long-term memory for AI chat assistants. mem0-compatible REST API.",
        lifespan=lifespan,
        docs_url=None,  # served by server/docs.py from jiyi's own copy of Swagger UI, not a CDN
        redoc_url=None,
        generate_unique_id_function=lambda route: route.name,  # operation ids a generated client can call
        **_without_fastapis_own_tracing(),
    )
    app.state.jiyi = state
    app.state.console_sessions = ConsoleSessions(lambda: state.memory.store)  # kept in the store: see its module
    routers = (router, restore_router, webhook_router, platform_router, profile_router, docs.router)
    app.openapi = lambda: openapi_for(app, state.policy, routers)  # type: ignore[method-assign]
    app.state.webhook_options = webhooks
    install_error_handlers(app)
    # Inside the request-id middleware below (added later, so it wraps this one): refusals carry an id and count.
    app.add_middleware(BodyGuard, limits=limits, reject=error_response)
    app.add_middleware(RequestLog, metrics=lambda: state.metrics, error=internal_error_response,
                       allowed_methods=lambda path: allowed_methods(routers, path))
    app.add_middleware(TraceContext)  # around the request log: a 500 it answers is inside the request's span

    if cors_origins:
        # Added last, so it wraps everything: preflights are answered before routing, and error responses carry
        # the CORS headers too (a browser hides the body of a response without them).
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(cors_origins),
            allow_methods=["GET", "POST", "PUT", "DELETE", "OPTIONS"],
            allow_headers=["Authorization", "Content-Type", "X-API-Key", "X-Request-ID", "Mcp-Protocol-Version",
                           "Mcp-Session-Id", "Idempotency-Key", "If-Match"],
            expose_headers=["X-Request-ID"],
            max_age=600,
        )
    for included in routers:
        app.include_router(included)
    app.router.routes.append(mcp.route("/mcp"))  # MCP over streamable HTTP (jiyi/mcp/http.py)
    app.include_router(console_router)  # the web console at /ui (server/ui/): HTML pages, not in the OpenAPI
    return app


def _without_fastapis_own_tracing() -> dict[str, Any]:
    """FastAPI 0.165 traces requests by itself once a tracer provider is configured, and its spans carry url.path
    and url.query (user ids: GET /v1/memories/?user_id=…), its logs the input a validation refused. jiyi's request
    span (server/trace_context.py) names the route template only; one span per request, not two."""
    if "telemetry" not in inspect.signature(FastAPI.__init__).parameters:  # an older FastAPI traces nothing
        return {}
    return {"telemetry": {"tracing": False, "logs": False}}


def _prepare_categories(memory: AsyncMemory) -> None:
    try:
        memory.categorizer.prepare()
    except Exception:  # the first add makes them then (or categorises by words while the embedder is down)
        log.warning("mem0's category prototypes could not be made at start-up", exc_info=True)


def openapi_for(app: FastAPI, policy: AccessPolicy, routers: Sequence[APIRouter]) -> dict[str, Any]:
    """The OpenAPI document, saying which operations need a key under this server's keys: every memory route
    with user keys, the admin routes with only an admin key, none on an open server. Made anew each time: issuing
    the first key (`jiyi keys create`) changes which operations need one."""
    document = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
    needs_admin = {(route.path, method.lower()) for included in routers for route in included.routes
                   if isinstance(route, APIRoute) and any(dep.dependency is require_admin for dep in route.dependencies)
                   for method in route.methods or ()}
    for path, operations in document.get("paths", {}).items():
        for method, operation in operations.items():
            if not (policy.has_user_keys or (policy.has_admin_key and (path, method) in needs_admin)):
                operation.pop("security", None)
    return document


def allowed_methods(routers: Sequence[APIRouter], path: str) -> str:
    """Every method some route serves at this path. Starlette's 405 names only the first route that matched the
    path, but GET, PUT and DELETE /memories/{id} are three routes."""
    methods = {method for included in routers for route in included.routes
               if isinstance(route, APIRoute | Route) and route.path_regex.match(path)
               for method in route.methods or ()}
    return ", ".join(sorted(methods | ({"HEAD"} if "GET" in methods else set())))


__all__ = ["create_app"]
