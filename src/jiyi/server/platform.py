"""mem0's platform API, the routes mem0's SDKs call: `MemoryClient(api_key=…, host="http://jiyi:8000")` (Python) and
`new MemoryClient({apiKey, host})` (npm) work unchanged, and so does every integration built on them.

Each SDK key is a jiyi key (server/auth.py): a user key acts as a project of one user, bound to that user whatever a
request names; the admin key (or an open server) is the whole server. The ids may come at the top level or inside
`filters`, also nested in the platform's {"AND": [...]} form. What jiyi does not have is refused with a 400 that
says so, never silently dropped: app_id is not a scope here (it is kept and filtered as metadata.app_id)."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from jiyi.core.categories import parse_custom_categories
from jiyi.errors import InvalidInput, NotFound, NotOffered
from jiyi.filters import split_scope
from jiyi.graph_view import all_relations, search_relations
from jiyi.memory import AsyncMemory
from jiyi.projects import project_categories, project_settings, update_project_settings
from jiyi.requests import AddRequest, ListRequest, SearchQuery
from jiyi.server.auth import AccessPolicy, Principal
from jiyi.server.platform_schemas import (
    Batch,
    Entities,
    ExportCreate,
    ExportGet,
    Feedback,
    PlatformAdd,
    PlatformList,
    PlatformSearch,
    PlatformUpdate,
    ProjectUpdate,
    Summary,
)
from jiyi.server.responses import Entities as EntityList
from jiyi.server.responses import (
    EntityDeleted,
    Export,
    ExportAccepted,
    FeedbackEntry,
    HistoryRow,
    Message,
    Page,
    Ping,
    PlatformAdded,
    PlatformHit,
    PlatformItem,
    PlatformResults,
    Project,
    answers,
)
from jiyi.server.responses import Summary as SummaryAnswer
from jiyi.server.routes import (
    CHANGED,
    COMMON_ERRORS,
    NOT_FOUND,
    Caller,
    Limits,
    MemoryDep,
    MetricsDep,
    Server,
    _owned,
    state,
)
from jiyi.server.schemas import ErrorBody, as_messages
from jiyi.views import entity_deletion

ORG_ID = "jiyi"
FEEDBACK_VALUES = ("POSITIVE", "NEGATIVE", "VERY_NEGATIVE")
KEPT_EXPORTS = 20  # per project; older exports are dropped
SUMMARY_MEMORIES = 30

router = APIRouter(tags=["mem0 platform"], responses=COMMON_ERRORS)


# --- who and what a request is about -----------------------------------------------------------------------------


class Target:
    """The scope a platform request names, bound to the caller's key, with the rest of its filters."""

    def __init__(self, who: Principal, body: Entities | None = None, **ids: str | None) -> None:
        fields = {**(body.model_dump(include={"user_id", "agent_id", "run_id", "app_id"}) if body else {}), **ids}
        filters = dict(body.filters or {}) if body is not None else {}
        if fields.get("app_id") is not None:
            filters.setdefault("app_id", fields["app_id"])  # a metadata filter: jiyi has no app scope
        named, _ = split_scope(filters)
        self.user_id = AccessPolicy.bind_user(who, fields.get("user_id"), filters)
        self.agent_id = AccessPolicy.bind_agent(who, fields.get("agent_id"), filters)
        self.run_id = fields.get("run_id")
        self.filters = filters or None
        self.app_id = fields.get("app_id")
        self.scoped = any((self.user_id, self.agent_id, self.run_id, *named.values()))

    def require(self) -> Target:
        if not self.scoped:
            raise InvalidInput("name a user_id, agent_id or run_id (at the top level or in filters, also inside "
                               "AND); jiyi keeps app_id as metadata, not as a scope of its own")
        return self

    @property
    def ids(self) -> dict[str, Any]:
        return {"user_id": self.user_id, "agent_id": self.agent_id, "run_id": self.run_id, "filters": self.filters}


def _platform_item(item: dict[str, Any]) -> dict[str, Any]:
    """jiyi's memory item with the platform's extra fields: the null ids (its `categories` are mem0's already)."""
    out = {"user_id": None, "agent_id": None, "app_id": None, "run_id": None, **item}
    out["app_id"] = (item.get("metadata") or {}).get("app_id")
    out.setdefault("categories", [])
    out.setdefault("expiration_date", None)
    return out


def _listed(items: list[dict[str, Any]], output_format: str | None) -> Any:
    results = [_platform_item(item) for item in items]
    return results if output_format == "v1.0" else {"results": results}


def _list_filters(body: PlatformList | PlatformSearch, target: Target) -> dict[str, Any] | None:
    """The target's filters AND the body's categories and dates, as jiyi filter conditions."""
    extra: list[dict[str, Any]] = []
    if body.categories:
        extra.append({"categories": {"in": body.categories}})
    if isinstance(body, PlatformList):
        if body.start_date:
            extra.append({"created_at": {"gte": body.start_date}})
        if body.end_date:
            extra.append({"created_at": {"lte": body.end_date}})
    if not extra:
        return target.filters
    return {"AND": [*([target.filters] if target.filters else []), *extra]}


async def _state(request: Request, key: str) -> Any:
    raw = await asyncio.to_thread(state(request).memory.store.get_state, key)
    return json.loads(raw) if raw else None


async def _set_state(request: Request, key: str, value: Any) -> None:
    await asyncio.to_thread(state(request).memory.store.set_state, key, json.dumps(value, ensure_ascii=False))


def _now() -> str:
    return datetime.now(UTC).isoformat()


# --- identity -----------------------------------------------------------------------------------------------------


@router.get("/v1/ping/", response_model=None, responses=answers(Ping))
async def ping(who: Caller) -> dict[str, Any]:
    """What the SDKs call first: is the key good, and which organisation and project it belongs to."""
    return {"status": "ok", "message": "API key is valid", "org_id": ORG_ID, "project_id": who.project_id,
            "user_email": None, "user_id": who.user_id}


@router.get("/api/v1/orgs/organizations/{org_id}/projects/{project_id}/", response_model=None,
            responses=answers(Project, NOT_FOUND))
async def get_project(org_id: str, project_id: str, request: Request, who: Caller) -> dict[str, Any]:
    """The project's settings the SDK reads (custom instructions and categories)."""
    _own_project(who, org_id, project_id)
    settings = await project_settings(state(request).memory.store, project_id)
    return {"id": project_id, "name": project_id, "organization": ORG_ID,
            "custom_instructions": settings.get("custom_instructions"),
            "custom_categories": settings.get("custom_categories") or []}


@router.patch("/api/v1/orgs/organizations/{org_id}/projects/{project_id}/", response_model=None,
              responses=answers(Message, NOT_FOUND))
async def update_project(org_id: str, project_id: str, body: ProjectUpdate, request: Request,
                         who: Caller, cap: Limits) -> dict[str, Any]:
    """custom_instructions become the extraction prompt of the project's adds (when an LLM extracts)."""
    _own_project(who, org_id, project_id)
    cap.check_query(body.custom_instructions, "custom_instructions")
    if body.custom_categories:
        parse_custom_categories(body.custom_categories)  # a 400 that names what is wrong, before it is kept
    await update_project_settings(state(request).memory.store, project_id, body.model_dump(exclude_unset=True))
    return {"message": "Updated custom instructions" if "custom_instructions" in body.model_fields_set
            else "Project updated"}


NO_PROJECTS = ("a single-tenant jiyi server has no projects to create or delete and no members to manage: each API "
               "key is a project of its own (issue one per user with `jiyi keys create`)")
NOT_OFFERED: dict[int | str, dict[str, Any]] = {
    501: {"model": ErrorBody, "description": "jiyi has no such thing; `detail` says what it has instead"}}


async def project_administration(who: Caller) -> None:
    """mem0's project and member administration: a 501 that says why, which mem0's SDK shows as the error's
    message (not a 404, which it would report as a missing memory)."""
    raise NotOffered(NO_PROJECTS)


# What mem0's SDK calls (client.project.create, delete, get_members, add_member, update_member, remove_member), each
# an operation of its own in the OpenAPI document.
_PROJECTS = "/api/v1/orgs/organizations/{org_id}/projects/"
_MEMBERS = _PROJECTS + "{project_id}/members/"
for method, path, name in (
        ("POST", _PROJECTS, "create_project"), ("DELETE", _PROJECTS + "{project_id}/", "delete_project"),
        ("GET", _MEMBERS, "get_project_members"), ("POST", _MEMBERS, "add_project_member"),
        ("PUT", _MEMBERS, "update_project_member"), ("DELETE", _MEMBERS, "remove_project_member")):
    router.add_api_route(path, project_administration, methods=[method], name=name, response_model=None,
                         status_code=501, responses=NOT_OFFERED)


def _own_project(who: Principal, org_id: str, project_id: str) -> None:
    if org_id != ORG_ID or project_id != who.project_id:
        raise NotFound(f"project {project_id} not found")


# --- memories -----------------------------------------------------------------------------------------------------


async def _add(body: PlatformAdd, request: Request, m: AsyncMemory, mx: Any, who: Principal, cap: Any,
               idempotency_key: str | None, async_default: bool) -> dict[str, Any]:
    messages = as_messages(body.messages)
    cap.check_messages(messages)
    cap.check_metadata(body.metadata)
    cap.check_query(body.custom_instructions, "custom_instructions")
    target = Target(who, body).require()
    metadata = dict(body.metadata or {})
    if target.app_id is not None:
        metadata["app_id"] = target.app_id
    project = await project_settings(m.store, who.project_id)
    prompt = body.custom_instructions
    if prompt is None:
        prompt = project.get("custom_instructions")
    # mem0's order: the add's own categories, else the project's, else the default fifteen.
    categories = body.custom_categories or project.get("custom_categories") or None
    async_mode = body.infer and (async_default if body.async_mode is None else body.async_mode)
    started = time.perf_counter()
    result = await m.run_add(AddRequest.build(
        [msg.model_dump(exclude_none=True) for msg in messages], **target.ids, metadata=metadata or None,
        infer=body.infer, prompt=prompt, timestamp=body.timestamp, expiration_date=body.expiration_date,
        async_mode=async_mode, idempotency_key=idempotency_key or body.idempotency_key,
        custom_categories=categories,
    ))
    mx.add_latency.observe(time.perf_counter() - started)
    if result.get("status") == "PENDING":
        return {"results": [{"message": "Memory processing has been queued for background execution",
                             "status": "PENDING", "event_id": result["event_id"]}]}
    results = [{**item, "data": {"memory": item.get("memory")}} for item in result["results"]]
    return {"results": results, "event_id": result.get("event_id")}


@router.post("/v3/memories/add/", response_model=None, responses=answers(PlatformAdded, CHANGED))
async def add_v3(body: PlatformAdd, request: Request, m: MemoryDep, mx: MetricsDep, who: Caller,
                 cap: Limits) -> dict[str, Any]:
    """Add a turn. With infer (the default) the answer comes once the turn is stored, with an `event_id` to poll at
    /v1/event/{event_id}/, as on the platform; `async_mode: false` waits for the memories instead."""
    return await _add(body, request, m, mx, who, cap, request.headers.get("idempotency-key"), True)


@router.post("/v1/memories/", response_model=None, responses=answers(PlatformAdded, CHANGED))
async def add_v1(body: PlatformAdd, request: Request, m: MemoryDep, mx: MetricsDep, who: Caller,
                 cap: Limits) -> dict[str, Any]:
    """The older SDKs' add: waits for the memories unless `async_mode` is true."""
    return await _add(body, request, m, mx, who, cap, request.headers.get("idempotency-key"), False)


async def _page(body: PlatformList, request: Request, m: AsyncMemory, who: Principal, page: int | None,
                page_size: int | None) -> dict[str, Any]:
    target = Target(who, body)
    if not target.scoped and who.kind == "open":
        state(request).policy.require_admin(who)  # everyone's memories: for the admin (or a server with no keys)
    number, size = page or 1, page_size or 100
    found = await m.run_list(ListRequest.build_page(
        **target.ids | {"filters": _list_filters(body, target)}, page=number, page_size=size,
        show_expired=body.show_expired, every_scope=not target.scoped))

    def link(to: int) -> str:
        return str(request.url.include_query_params(page=to, page_size=size))

    return {"count": found["count"], "next": link(number + 1) if number * size < found["count"] else None,
            "previous": link(number - 1) if number > 1 else None,
            "results": [_platform_item(item) for item in found["results"]]}


PageNumber = Annotated[int | None, Query(ge=1, le=1_000_000)]
PageSize = Annotated[int | None, Query(ge=1, le=1000)]


@router.post("/v3/memories/", response_model=None, responses=answers(Page))
@router.post("/v2/memories/", include_in_schema=False)
async def list_v3(body: PlatformList, request: Request, m: MemoryDep, who: Caller,
                  page: PageNumber = None, page_size: PageSize = None) -> dict[str, Any]:
    """Memories newest first, one page at a time: {count, next, previous, results}. Without a user, agent or run
    (an admin key, or a server without keys): everyone's."""
    return await _page(body, request, m, who, page, page_size)


@router.get("/v1/memories/", response_model=None, responses=answers(dict[str, list[PlatformItem]] | list[PlatformItem]))
async def list_v1(request: Request, m: MemoryDep, who: Caller, user_id: str | None = None,
                  agent_id: str | None = None, run_id: str | None = None, app_id: str | None = None,
                  limit: PageSize = None, output_format: str | None = None, enable_graph: bool = False) -> Any:
    """The older SDKs' get_all, ids as query parameters; with enable_graph, the user's current relations beside."""
    body = PlatformList(user_id=user_id, agent_id=agent_id, run_id=run_id, app_id=app_id)
    found = await _page(body, request, m, who, 1, limit or 100)
    if output_format == "v1.0":
        return found["results"]
    if enable_graph:
        owner = Target(who, body).user_id
        return {"results": found["results"], "relations": await asyncio.to_thread(all_relations, m.store, owner)}
    return {"results": found["results"]}


async def _search(body: PlatformSearch, m: AsyncMemory, mx: Any, who: Principal, cap: Any) -> Any:
    cap.check_query(body.query)
    target = Target(who, body).require()
    if body.limit is not None and body.top_k is not None and body.limit != body.top_k:
        raise InvalidInput("give the result count once, as top_k or as limit")
    started = time.perf_counter()
    result = await m.run_search(SearchQuery.build(
        body.query, **target.ids | {"filters": _list_filters(body, target)}, top_k=body.top_k or body.limit,
        threshold=body.threshold, rerank=body.rerank, show_expired=body.show_expired))
    listed = _listed(result["results"], body.output_format)
    if body.enable_graph and isinstance(listed, dict):  # mem0's graph answer: relations beside the results
        listed["relations"] = await asyncio.to_thread(search_relations, m.store, _named_user(target), body.query)
    mx.search_latency.observe(time.perf_counter() - started)
    return listed


def _named_user(target: Target) -> str | None:
    """The one user a request is about, at the top level or among its filters (mem0 v2 puts it there)."""
    named = (target.filters or {}).get("user_id")
    return target.user_id or (named if isinstance(named, str) else None)


@router.post("/v3/memories/search/", response_model=None,
             responses=answers(PlatformResults | list[PlatformHit]))
@router.post("/v2/memories/search/", include_in_schema=False)
@router.post("/v1/memories/search/", include_in_schema=False)
async def search_v3(body: PlatformSearch, served: Server, who: Caller) -> Any:
    """Hybrid search in one scope: {"results": [...]} (a bare list with output_format "v1.0")."""
    return await _search(body, served.memory, served.metrics, who, served.limits)


@router.get("/v1/memories/{memory_id}/", response_model=None, responses=answers(PlatformItem, NOT_FOUND))
async def get_one(memory_id: str, m: MemoryDep, who: Caller) -> dict[str, Any]:
    return _platform_item(await _owned(m, who, memory_id))


@router.put("/v1/memories/{memory_id}/", response_model=None, responses=answers(PlatformItem, NOT_FOUND, CHANGED))
async def update_one(memory_id: str, body: PlatformUpdate, request: Request, m: MemoryDep, mx: MetricsDep,
                     who: Caller, cap: Limits) -> dict[str, Any]:
    """Change a memory's text (re-embedded), metadata or expiry; answers with the memory as it now is."""
    cap.check_message_text(body.text, "text")
    cap.check_metadata(body.metadata)
    if body.timestamp is not None:
        raise InvalidInput("timestamp cannot be changed on a stored memory in jiyi (its time comes from its turn)")
    await _owned(m, who, memory_id)
    options: dict[str, Any] = {"text": body.text, "metadata": body.metadata}
    if "expiration_date" in body.model_fields_set:
        options["expiration_date"] = body.expiration_date
    if body.text is not None:  # a new text is categorised anew, in the project's categories
        options["custom_categories"] = await project_categories(m.store, who.project_id)
    await m.update(memory_id, **options)
    mx.update_total.inc()
    item = _platform_item(await m.get(memory_id))
    return {**item, "text": item["memory"]}


@router.delete("/v1/memories/{memory_id}/", response_model=None, responses=answers(Message, NOT_FOUND))
async def delete_one(memory_id: str, m: MemoryDep, mx: MetricsDep, who: Caller,
                     delete_linked: bool = False) -> dict[str, str]:
    """`delete_linked` is accepted: jiyi updates a memory in place, so there is no chain of older ones to follow."""
    await _owned(m, who, memory_id)
    await m.delete(memory_id)
    mx.delete_total.inc()
    return {"message": "Memory deleted successfully!"}


@router.get("/v1/memories/{memory_id}/history/", response_model=None, responses=answers(list[HistoryRow], NOT_FOUND))
async def history_one(memory_id: str, m: MemoryDep, who: Caller) -> list[dict[str, Any]]:
    item = await _owned(m, who, memory_id)
    return [{**row, "user_id": item.get("user_id"), "input": [], "categories": item.get("categories") or []}
            for row in await m.history(memory_id)]


@router.delete("/v1/memories/", response_model=None, responses=answers(Message))
async def delete_all(request: Request, m: MemoryDep, who: Caller, user_id: str | None = None,
                     agent_id: str | None = None, run_id: str | None = None,
                     app_id: str | None = None) -> dict[str, str]:
    """Delete one scope's memories (a user key: its own user's)."""
    if who.kind != "user":
        state(request).policy.require_admin(who)
    target = Target(who, None, user_id=user_id, agent_id=agent_id, run_id=run_id, app_id=app_id).require()
    await m.delete_all(**target.ids)
    return {"message": "Memories deleted successfully!"}


# --- batches --------------------------------------------------------------------------------------------------------


async def _all_owned(m: AsyncMemory, who: Principal, ids: list[str]) -> None:
    """Every memory of a batch is checked before any is changed: a batch with one bad id changes nothing."""
    if len(set(ids)) != len(ids):
        raise InvalidInput("a batch names the same memory_id twice")
    for memory_id in ids:
        await _owned(m, who, memory_id)


@router.put("/v1/batch/", response_model=None, responses=answers(Message, NOT_FOUND, CHANGED))
async def batch_update(body: Batch, m: MemoryDep, mx: MetricsDep, who: Caller, cap: Limits) -> dict[str, str]:
    """Up to 1000 memories' text or metadata; all or none (every id is checked first)."""
    for item in body.memories:
        cap.check_message_text(item.text, "memories[].text")
        cap.check_metadata(item.metadata, "memories[].metadata")
        if item.text is None and item.metadata is None:
            raise InvalidInput(f"memory {item.memory_id}: give text or metadata to change")
    await _all_owned(m, who, [item.memory_id for item in body.memories])
    for item in body.memories:
        await m.update(item.memory_id, text=item.text, metadata=item.metadata)
        mx.update_total.inc()
    return {"message": f"Successfully updated {len(body.memories)} memories"}


@router.delete("/v1/batch/", response_model=None, responses=answers(Message, NOT_FOUND))
async def batch_delete(body: Batch, m: MemoryDep, mx: MetricsDep, who: Caller) -> dict[str, str]:
    await _all_owned(m, who, [item.memory_id for item in body.memories])
    for item in body.memories:
        await m.delete(item.memory_id)
        mx.delete_total.inc()
    return {"message": f"Successfully deleted {len(body.memories)} memories"}


# --- entities -------------------------------------------------------------------------------------------------------


@router.get("/v1/entities/", response_model=None, responses=answers(EntityList))
@router.get("/entities", tags=["memories"], include_in_schema=False)
async def list_entities(m: MemoryDep, who: Caller) -> dict[str, Any]:
    """The users, agents and runs that have memories (a user key: only within its own user's memories)."""
    found = await m.entities(user_id=who.user_id if who.kind == "user" else None)
    owner = who.project_id
    results = [{**entity, "owner": owner, "metadata": None} for entity in found]
    return {"count": len(results), "next": None, "previous": None, "results": results}


@router.delete("/v2/entities/{entity_type}/{entity_id}/", response_model=None,
               responses=answers(EntityDeleted, NOT_FOUND))
@router.delete("/v1/entities/{entity_type}/{entity_id}/", include_in_schema=False)
async def delete_entity(entity_type: str, entity_id: str, m: MemoryDep, who: Caller) -> dict[str, Any]:
    """Delete every memory of one user, agent or run (soft: history keeps the trail until the purge), and say what
    went. One that an earlier delete already emptied (the user before its agents, as `reset()` deletes them) is
    answered with nothing deleted, not an error."""
    deleted = await m.delete_entity(entity_type, entity_id, user_id=who.user_id if who.kind == "user" else None,
                                    agent_id=who.agent_id)
    return entity_deletion(entity_type, entity_id, deleted)


# --- exports, summary, feedback -------------------------------------------------------------------------------------


@router.post("/v1/exports/", response_model=None, responses=answers(ExportAccepted))
async def create_export(body: ExportCreate, request: Request, m: MemoryDep, who: Caller) -> dict[str, Any]:
    """A snapshot of the scope's memories, kept with the schema it was asked for. Fitting the memories into that
    schema is an LLM's job on the platform; jiyi returns the memories themselves beside the schema."""
    target = Target(who, body).require()
    found = await m.run_list(ListRequest.build_page(**target.ids, page=1, page_size=1000))
    export_id = str(uuid.uuid4())
    export = {"id": export_id, "status": "COMPLETED", "schema": body.schema_, "filters": body.filters,
              "scope": {k: v for k, v in target.ids.items() if k != "filters" and v is not None},
              "export_instructions": body.export_instructions, "created_at": _now(),
              "count": found["count"], "memories": [_platform_item(item) for item in found["results"]]}
    await _set_state(request, f"platform:export:{who.project_id}:{export_id}", export)
    index_key = f"platform:exports:{who.project_id}"
    index = [export_id, *(await _state(request, index_key) or [])]
    for dropped in index[KEPT_EXPORTS:]:
        await _set_state(request, f"platform:export:{who.project_id}:{dropped}", None)
    await _set_state(request, index_key, index[:KEPT_EXPORTS])
    return {"message": "Memory export request received. The export will be ready in a few seconds.",
            "id": export_id}


@router.post("/v1/exports/get/", response_model=None, responses=answers(Export, NOT_FOUND))
async def get_export(body: ExportGet, request: Request, who: Caller) -> dict[str, Any]:
    """An export by id, or the newest one for the same scope."""
    project = who.project_id
    ids = [body.memory_export_id] if body.memory_export_id else await _state(request, f"platform:exports:{project}")
    wanted = None if body.memory_export_id else {
        k: v for k, v in Target(who, body).ids.items() if k != "filters" and v is not None}
    for export_id in ids or []:
        export = await _state(request, f"platform:export:{project}:{export_id}")
        if export and (wanted is None or export["scope"] == wanted):
            return dict(export)
    raise NotFound("no such export")


@router.post("/v1/summary/", response_model=None, responses=answers(SummaryAnswer))
async def summary(body: Summary, m: MemoryDep, who: Caller) -> dict[str, Any]:
    """A short account of a scope's memories: how many, by category, and the most important ones."""
    target = Target(who, Entities(filters=body.filters)).require()
    found = await m.run_list(ListRequest.build_page(**target.ids, page=1, page_size=1000))
    items = found["results"]
    by_category: dict[str, int] = {}
    for item in items:
        by_category[item["category"]] = by_category.get(item["category"], 0) + 1
    top = sorted(items, key=lambda item: item["importance"], reverse=True)[:SUMMARY_MEMORIES]
    return {"count": found["count"], "categories": by_category,
            "summary": "\n".join(f"- {item['memory']}" for item in top),
            "memories": [_platform_item(item) for item in top]}


@router.post("/v1/feedback/", response_model=None, responses=answers(FeedbackEntry, NOT_FOUND))
async def feedback(body: Feedback, request: Request, m: MemoryDep, who: Caller) -> dict[str, Any]:
    """Feedback on a memory, kept with it (read back with GET /v1/feedback/{memory_id}/)."""
    value = body.feedback.upper() if body.feedback else None
    if value is not None and value not in FEEDBACK_VALUES:
        raise InvalidInput(f"feedback must be one of {', '.join(FEEDBACK_VALUES)} or null")
    await _owned(m, who, body.memory_id)
    entry = {"id": str(uuid.uuid4()), "memory_id": body.memory_id, "feedback": value,
             "feedback_reason": body.feedback_reason, "created_at": _now()}
    key = f"platform:feedback:{body.memory_id}"
    await _set_state(request, key, [*(await _state(request, key) or []), entry][-100:])
    return entry


@router.get("/v1/feedback/{memory_id}/", response_model=None, responses=answers(list[FeedbackEntry], NOT_FOUND))
async def read_feedback(memory_id: str, request: Request, m: MemoryDep, who: Caller) -> list[dict[str, Any]]:
    await _owned(m, who, memory_id)
    return list(await _state(request, f"platform:feedback:{memory_id}") or [])
