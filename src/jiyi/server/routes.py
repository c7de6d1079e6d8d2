"""mem0's REST routes (both generations). Each handler parses, calls the Memory, shapes the answer."""

from __future__ import annotations

import asyncio
import time
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, Request, Response, Security
from fastapi.responses import JSONResponse, PlainTextResponse, RedirectResponse
from fastapi.security import APIKeyHeader
from prometheus_client import generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from jiyi.errors import Forbidden, InvalidInput, NotFound
from jiyi.filters import split_scope
from jiyi.graph_view import all_relations, search_relations
from jiyi.memory import AsyncMemory, ReplayedAnswer
from jiyi.projects import project_categories
from jiyi.requests import AddRequest, ContextRequest, ListRequest, SearchQuery
from jiyi.server.auth import AccessPolicy, NeedsStore, Principal, presented_key
from jiyi.server.limits import RequestLimits
from jiyi.server.metrics import Metrics
from jiyi.server.responses import (
    AddAccepted,
    AddResult,
    Context,
    Event,
    Health,
    HistoryRow,
    Maintenance,
    MemoryItem,
    MemoryList,
    Message,
    SearchResults,
    answers,
)
from jiyi.server.schemas import ContextBody, ErrorBody, MemoryCreate, MemoryUpdate, SearchBody, as_messages
from jiyi.server.state import ServerState
from jiyi.wiring import redact, redact_config

# Every answer a route may give besides its 200, in one error schema, so that the OpenAPI document is the truth
# (schemathesis checks it in tests/server/test_openapi_fuzz.py).
_ERRORS = {
    400: "the request is invalid; `detail` says what to fix",
    401: "an API key is needed, or the key is unknown",
    403: "the key may not do this (another user's memories, an admin route)",
    413: "the body or a field is larger than the limit `detail` names",
    429: "this key sent more requests than its rate allows; retry after the Retry-After header's seconds",
    415: "the body is not JSON",
    422: "a field has the wrong type or is out of range; `detail` names it and says what it must be",
    503: "a backend is unavailable or the server is overloaded; retry after the Retry-After header's seconds",
}
COMMON_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": text} for status, text in _ERRORS.items()
}
NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorBody, "description": "no such memory or event, or it belongs to another user"}}
CHANGED: dict[int | str, dict[str, Any]] = {
    409: {"model": ErrorBody, "description": "the memory is no longer at the version asked for (If-Match / version)"}}

router = APIRouter(responses=COMMON_ERRORS)


def state(request: Request) -> ServerState:
    current: ServerState = request.app.state.jiyi  # made by create_app; Starlette's State is untyped
    return current


# Dependencies that do no I/O are coroutines: FastAPI runs a plain function dependency on a worker thread, a hop that
# cost each request more than the lookup itself (py-spy under 8 clients: ~3 % of the server's busy time).
async def memory(request: Request) -> AsyncMemory:
    return state(request).memory


async def metrics(request: Request) -> Metrics:
    return state(request).metrics


async def limits(request: Request) -> RequestLimits:
    return state(request).limits


# FastAPI solves each dependency of a request on its own, ~25 us each (FastAPI 0.165, a route with four trivial
# dependencies vs one): the routes every chat turn calls (search, context, add) take the server's state as one.
async def server(request: Request) -> ServerState:
    return state(request)


# What a read-only key may do: look (GET), and the POSTs that only read (search, recall, listing, summaries).
READING_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
READING_POSTS = frozenset({"/search", "/context", "/v3/memories/", "/v2/memories/", "/v3/memories/search/",
                           "/v2/memories/search/", "/v1/memories/search/", "/v1/exports/get/", "/v1/summary/"})

# The two ways to present a key, as OpenAPI security schemes (a generated client knows where the key goes).
API_KEY_HEADER = APIKeyHeader(name="X-API-Key", scheme_name="X-API-Key", auto_error=False,
                              description="a jiyi API key (a user's key, or the admin key)")
AUTHORIZATION_HEADER = APIKeyHeader(name="Authorization", scheme_name="Authorization", auto_error=False,
                                    description='"Bearer <key>", or "Token <key>" as mem0\'s SDKs send it')


async def principal(
    request: Request,
    x_api_key: Annotated[str | None, Security(API_KEY_HEADER)] = None,
    authorization: Annotated[str | None, Security(AUTHORIZATION_HEADER)] = None,
) -> Principal:
    address = request.client.host if request.client else ""
    key, server = presented_key(x_api_key, authorization), state(request)
    try:
        who = server.authenticate(key, address, from_memory=True)
    except NeedsStore:  # a key not looked up lately: the store is read on a worker thread
        who = await asyncio.to_thread(server.authenticate, key, address)
    if not who.may_write and request.method not in READING_METHODS and request.url.path not in READING_POSTS:
        raise Forbidden("this API key may read but not change memories (scope \"read\")")
    return who


async def require_admin(request: Request, who: Annotated[Principal, Depends(principal)]) -> None:
    state(request).policy.require_admin(who)


MemoryDep = Annotated[AsyncMemory, Depends(memory)]
MetricsDep = Annotated[Metrics, Depends(metrics)]
Caller = Annotated[Principal, Depends(principal)]
Limits = Annotated[RequestLimits, Depends(limits)]
Server = Annotated[ServerState, Depends(server)]
Admin = Depends(require_admin)


def _require_scope(user_id: str | None, agent_id: str | None, run_id: str | None,
                   filters: dict[str, Any] | None = None) -> None:
    named = split_scope(filters)[0] if isinstance(filters, dict) else {}  # also inside {"AND": [...]}
    ids = [user_id, agent_id, run_id, *((filters or {}).get(k) for k in ("user_id", "agent_id", "run_id")),
           *named.values()]
    if not any(ids):
        raise InvalidInput("at least one of user_id, agent_id or run_id is required")


def _expected_version(in_body: int | None, if_match: str | None) -> int | None:
    if if_match is None:
        return in_body
    tag = if_match.strip().removeprefix("W/").strip('"')
    if not tag.isdigit() or int(tag) < 1:
        raise InvalidInput(f"If-Match must be a memory version (a positive integer), got {if_match!r}")
    if in_body is not None and in_body != int(tag):
        raise InvalidInput("If-Match and version name different versions; give one")
    return int(tag)


async def _owned(m: AsyncMemory, who: Principal, memory_id: str) -> dict[str, Any]:
    """The memory, if this caller may see it; another user's memory is simply not found."""
    item = await m.get(memory_id)
    if not AccessPolicy.may_read(who, item):
        raise NotFound(f"memory {memory_id} not found")
    return item


@router.get("/", include_in_schema=False)
async def root() -> RedirectResponse:
    return RedirectResponse("/docs")


@router.get("/health", tags=["ops"], response_model=None, responses=answers(Health))
async def health(request: Request) -> dict[str, Any]:
    """Cheap enough for a liveness probe: one indexed read, no counting (counts are in /metrics)."""
    current = state(request).memory
    await asyncio.to_thread(current.store.embedding_binding)
    return {"status": "ok", "store": redact(current.store.url), "embedder": current.embedder.model_id}


@router.get("/metrics", tags=["ops"], responses={
    200: {"description": "Prometheus text format", "content": {CONTENT_TYPE_LATEST: {"schema": {"type": "string"}}}}})
async def prometheus(m: MetricsDep) -> PlainTextResponse:
    body = await asyncio.to_thread(generate_latest, m.registry)
    return PlainTextResponse(body, media_type=CONTENT_TYPE_LATEST)


@router.post("/configure", tags=["admin"], dependencies=[Admin], response_model=None, responses=answers(Message))
async def configure(config: dict[str, Any], request: Request) -> dict[str, str]:
    await state(request).reconfigure(config)
    return {"message": "Configuration set successfully"}


@router.get("/configure", tags=["admin"], dependencies=[Admin])
async def get_configuration(m: MemoryDep) -> dict[str, Any]:
    return redact_config(m.config)


@router.post("/memories", tags=["memories"], response_model=None, responses={
    **answers(AddResult, description="the changes the add made"),
    202: {"model": AddAccepted, "description": "async_mode: the turn is stored; poll GET /events/{event_id}"},
    **NOT_FOUND, **CHANGED})
async def add_memory(body: MemoryCreate, served: Server, who: Caller, response: Response,
                     idempotency_key: Annotated[str | None, Header(max_length=256, description=(
                         "a key of the client's for this add: sent again with the same key (a retry), the add "
                         "stores nothing and answers what the first one answered"))] = None) -> dict[str, Any]:
    """Sync (default): answers with the ADD / UPDATE / DELETE events. `async_mode`: answers 202 once the turn is
    stored, with an `event_id` to poll at GET /events/{event_id}."""
    if idempotency_key and body.idempotency_key and idempotency_key != body.idempotency_key:
        raise InvalidInput("the Idempotency-Key header and idempotency_key name different keys; give one")
    m, mx, cap = served.memory, served.metrics, served.limits
    messages = as_messages(body.messages)
    cap.check_messages(messages)
    cap.check_metadata(body.metadata)
    cap.check_query(body.prompt, "prompt")
    user_id = AccessPolicy.bind_user(who, body.user_id)
    agent_id = AccessPolicy.bind_agent(who, body.agent_id)
    _require_scope(user_id, agent_id, body.run_id)
    started = time.perf_counter()
    result = await m.run_add(AddRequest.build(
        [msg.model_dump(exclude_none=True) for msg in messages],
        user_id=user_id, agent_id=agent_id, run_id=body.run_id, metadata=body.metadata,
        infer=body.infer, memory_type=body.memory_type, prompt=body.prompt,
        expiration_date=body.expiration_date, timestamp=body.timestamp,
        async_mode=body.async_mode and body.infer, injected_memory_ids=body.injected_memory_ids,
        idempotency_key=idempotency_key or body.idempotency_key,
        custom_categories=body.custom_categories or await project_categories(m.store, who.project_id),
    ))
    mx.add_latency.observe(time.perf_counter() - started)
    if result.get("status") == "PENDING":
        response.status_code = 202
    if isinstance(result, ReplayedAnswer):
        response.headers["Idempotent-Replayed"] = "true"  # as Stripe says it; the changes were counted the first time
        return result
    mx.count_changes(result["results"])
    return result


@router.get("/events/{event_id}", tags=["memories"], response_model=None, responses=answers(Event, NOT_FOUND))
@router.get("/v1/event/{event_id}/", include_in_schema=False)  # the path mem0's platform clients poll
async def get_event(event_id: str, m: MemoryDep, who: Caller) -> dict[str, Any]:
    """The extraction state of a turn added with async_mode (or any infer=True add): status, results, attempts."""
    event = await m.get_event(event_id)
    if not AccessPolicy.may_read(who, event):
        raise NotFound(f"event {event_id} not found")
    return event


@router.get("/memories", tags=["memories"], response_model=None, responses=answers(MemoryList))
async def list_memories(
    request: Request,
    m: MemoryDep,
    who: Caller,
    user_id: str | None = None,
    agent_id: str | None = None,
    run_id: str | None = None,
    top_k: Annotated[int | None, Query(ge=1, le=1000)] = None,
    limit: Annotated[int | None, Query(ge=1, le=1000)] = None,
    show_expired: bool = False,
    include_messages: Annotated[bool, Query(description="also list the messages kept word for word as evidence "
                                                        "(category \"message\"); by default only memories")] = False,
    enable_graph: Annotated[bool, Query(description="also answer `relations`: the user's current relations "
                                                    "(mem0's graph memory)")] = False,
) -> dict[str, Any]:
    user_id = AccessPolicy.bind_user(who, user_id)
    agent_id = AccessPolicy.bind_agent(who, agent_id)
    if not any((user_id, agent_id, run_id)):
        # Everyone's memories, as mem0's server lists them: only for the admin (or a server without keys).
        state(request).policy.require_admin(who)
        if top_k is not None and limit is not None and top_k != limit:
            raise InvalidInput("give the result count once, as limit or as top_k")
        page = await m.run_list(ListRequest.build_page(page_size=top_k or limit or 100, show_expired=show_expired,
                                                       include_messages=include_messages, every_scope=True))
        return {"results": page["results"]}
    listed = await m.run_list(ListRequest.build_all(user_id=user_id, agent_id=agent_id, run_id=run_id, top_k=top_k,
                                                    limit=limit, show_expired=show_expired,
                                                    include_messages=include_messages))
    if enable_graph:
        listed["relations"] = await asyncio.to_thread(all_relations, m.store, user_id)
    return listed


@router.get("/memories/{memory_id}", tags=["memories"], response_model=None, responses=answers(MemoryItem, NOT_FOUND))
async def get_memory(memory_id: str, m: MemoryDep, who: Caller) -> dict[str, Any]:
    return await _owned(m, who, memory_id)


@router.post("/search", tags=["memories"], response_model=None, responses=answers(SearchResults))
async def search(body: SearchBody, served: Server, who: Caller) -> JSONResponse:
    m, mx = served.memory, served.metrics
    served.limits.check_query(body.query)
    user_id = AccessPolicy.bind_user(who, body.user_id, body.filters)
    agent_id = AccessPolicy.bind_agent(who, body.agent_id, body.filters)
    _require_scope(user_id, agent_id, body.run_id, body.filters)
    started = time.perf_counter()
    result = await m.run_search(SearchQuery.build(
        body.query, user_id=user_id, agent_id=agent_id, run_id=body.run_id, filters=body.filters,
        limit=body.limit, top_k=body.top_k, threshold=body.threshold, explain=body.explain,
        show_expired=body.show_expired, rerank=body.rerank,
    ))
    if body.enable_graph:
        named = (body.filters or {}).get("user_id")  # mem0 v2 names the user among the filters
        owner = user_id or (named if isinstance(named, str) else None)
        result["relations"] = await asyncio.to_thread(search_relations, m.store, owner, body.query)
    mx.search_latency.observe(time.perf_counter() - started)
    return JSONResponse(result)  # already JSON's types: FastAPI's jsonable_encoder would walk it again


@router.post("/context", tags=["memories"], response_model=None, responses=answers(Context))
async def context(body: ContextBody, served: Server, who: Caller) -> JSONResponse:
    """For chat clients, before each reply: the memory block for this conversation and the messages with it
    appended to the first system message. Query enhancement: the last user message, then the recent conversation,
    then (with `rewrite`) an LLM rewrite. If recall fails or misses its deadline, the messages come back unchanged
    with `degraded: true`."""
    m, mx, cap = served.memory, served.metrics, served.limits
    cap.check_messages(body.messages)
    cap.check_query(body.rewritten_query, "rewritten_query")
    cap.check_query(body.rewrite_prompt, "rewrite_prompt")
    user_id = AccessPolicy.bind_user(who, body.user_id, body.filters)
    agent_id = AccessPolicy.bind_agent(who, body.agent_id, body.filters)
    _require_scope(user_id, agent_id, body.run_id, body.filters)
    started = time.perf_counter()
    result = await m.run_context(ContextRequest.build(
        body.messages, user_id=user_id, agent_id=agent_id, run_id=body.run_id, filters=body.filters,
        top_k=body.top_k, budget_chars=body.budget_chars, rewrite=body.rewrite, rewrite_prompt=body.rewrite_prompt,
        rewritten_query=body.rewritten_query, user_name=body.user_name, char_name=body.char_name,
        context_messages=body.context_messages, min_relevance=body.min_relevance,
        deadline=body.deadline_ms / 1000 if body.deadline_ms else None, only_stages=body.only_stages,
    ))
    mx.observe_context(time.perf_counter() - started, result)
    return JSONResponse(result)


@router.put("/memories/{memory_id}", tags=["memories"], response_model=None,
            responses=answers(Message, NOT_FOUND, CHANGED))
async def update_memory(
    memory_id: str, body: MemoryUpdate, m: MemoryDep, mx: MetricsDep, who: Caller, cap: Limits,
    if_match: Annotated[str | None, Header(description="a memory version (GET's `version`), optionally quoted as "
                                                       "an ETag: apply only if the memory is still at it, else 409")]
    = None,
) -> dict[str, str]:
    texts = {t for t in (body.text, body.data, body.memory) if t is not None}
    for text in texts:
        cap.check_message_text(text, "text")
    cap.check_metadata(body.metadata)
    await _owned(m, who, memory_id)
    if len(texts) > 1:
        raise InvalidInput("give the new text once (text, data or memory)")
    options: dict[str, Any] = {"text": texts.pop() if texts else None, "metadata": body.metadata}
    if "expiration_date" in body.model_fields_set:
        options["expiration_date"] = body.expiration_date
    options["version"] = _expected_version(body.version, if_match)
    if options["text"] is not None:  # a new text is categorised anew, in the project's categories
        options["custom_categories"] = await project_categories(m.store, who.project_id)
    result = await m.update(memory_id, **options)
    mx.update_total.inc()
    return result


@router.get("/memories/{memory_id}/history", tags=["memories"], response_model=None,
            responses=answers(list[HistoryRow], NOT_FOUND))
async def memory_history(memory_id: str, m: MemoryDep, who: Caller) -> list[dict[str, Any]]:
    if who.kind == "user":
        await _owned(m, who, memory_id)  # deleted memories' history stays admin-only for user keys
    return await m.history(memory_id)


@router.delete("/memories/{memory_id}", tags=["memories"], response_model=None, responses=answers(Message, NOT_FOUND))
async def delete_memory(memory_id: str, m: MemoryDep, mx: MetricsDep, who: Caller) -> dict[str, str]:
    await _owned(m, who, memory_id)
    result = await m.delete(memory_id)
    mx.delete_total.inc()
    return result


@router.delete("/memories", tags=["memories"], dependencies=[Admin], response_model=None, responses=answers(Message))
async def delete_all_memories(
    m: MemoryDep, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
) -> dict[str, str]:
    _require_scope(user_id, agent_id, run_id)
    return await m.delete_all(user_id=user_id, agent_id=agent_id, run_id=run_id)


@router.post("/maintain", tags=["admin"], dependencies=[Admin], response_model=None,
             responses=answers(Maintenance))
async def maintain(request: Request, user_id: str | None = None) -> dict[str, Any]:
    """Run a lifecycle pass now (the server also runs one every JIYI_MAINTENANCE_INTERVAL seconds): decay,
    forgetting, review, consolidation, purge; for one user or every user."""
    return await state(request).maintain(user_id)


@router.post("/reset", tags=["admin"], dependencies=[Admin], response_model=None, responses=answers(Message))
async def reset(m: MemoryDep) -> dict[str, str]:
    return await m.reset()
