"""The web console's pages and actions, at /ui. Server-rendered (Jinja2) with htmx for the forms; every page has a
stable address (/ui/users/{user_id}, /ui/memories/{memory_id}) that a link from SillyTavern or a ticket can open.

Who sees what is the REST API's rule: the admin key (or an open server) sees every user, a user key only its own
user's pages (another user's are "not found", as on every route). Pages are not in the OpenAPI document.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Coroutine
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, RedirectResponse
from fastapi.routing import APIRoute

from jiyi.core.injection import MEMORY_HEADER, memory_block
from jiyi.core.messages import check_text, parse_chat
from jiyi.core.retrieval import SearchRequest
from jiyi.errors import Forbidden, InvalidInput, JiyiError, NotFound, Unauthorized
from jiyi.read_path import RecallRequest, injected_text
from jiyi.records import Scope, TurnStatus
from jiyi.server.auth import AccessPolicy
from jiyi.server.errors import status_for
from jiyi.server.ui import data
from jiyi.server.ui.access import (
    Acting,
    LoginNeeded,
    Looking,
    Visitor,
    Writing,
    io,
    memory_of,
    scope_for,
    server_state,
    sessions_of,
    visible_record,
    visitor,
)
from jiyi.server.ui.i18n import LANGUAGES
from jiyi.server.ui.pictures import (
    COLORS,
    HORIZONS,
    LAYER_COLORS,
    RETENTION_BUCKETS,
    grouped_bars,
    horizontal_bars,
    lines,
)
from jiyi.server.ui.rendering import cookie, error, go, json_form, render, seg, text_field, to_login, url
from jiyi.server.ui.session import COOKIE_PATH, LANG_COOKIE, SESSION_COOKIE, csrf_valid
from jiyi.server.validation import validation_sentence

HERE = Path(__file__).parent
# The only files served from static/: a fixed list, so a path can never name anything else on disk.
ASSETS = {"htmx.min.js": "text/javascript", "json-enc.js": "text/javascript", "console.js": "text/javascript",
          "console.css": "text/css"}
# Pages hold a user's memories: not cached, not framed, scripts only from this server (htmx runs no eval here).
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                               "img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}
MAX_QUERY_TOP_K = 50


class ConsoleRoute(APIRoute):
    """Console routes answer errors as pages (or, to htmx, as a short text it shows), never as the API's JSON."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            try:
                response = await handler(request)
            except LoginNeeded as needed:
                response = to_login(request, needed.target)
            except JiyiError as exc:
                response = error(request, status_for(exc), str(exc))
            except RequestValidationError as exc:
                response = error(request, 400, validation_sentence(exc.errors()))
            if not request.url.path.startswith("/ui/static/"):
                response.headers.update(PAGE_HEADERS)
            return response

        return guarded


router = APIRouter(prefix="/ui", include_in_schema=False, route_class=ConsoleRoute)


# --- pages ------------------------------------------------------------------------------------------------------


@router.get("/static/{name}")
async def asset(name: str) -> FileResponse:
    if name not in ASSETS:
        raise NotFound(f"no console asset {name!r}")
    return FileResponse(HERE / "static" / name, media_type=ASSETS[name],
                        headers={"Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff"})


@router.get("")
@router.get("/")
async def home(request: Request, who: Looking) -> Response:
    if who.principal.kind == "user" and who.principal.user_id:
        return go(request, who, f"/ui/users/{seg(who.principal.user_id)}")
    return go(request, who, "/ui/users")


@router.get("/lang/{code}")
async def choose_language(request: Request, code: str, next: str = "/ui") -> Response:
    if code not in LANGUAGES:
        raise NotFound(f"no language {code!r}; the console speaks {', '.join(LANGUAGES)}")
    response = RedirectResponse(_local(next), status_code=303)
    cookie(response, request, LANG_COOKIE, code, max_age=365 * 86400)
    return response


def _local(target: str) -> str:
    """Only a console address: a `next` parameter must not send a signed-in browser to another site."""
    return target if target.startswith("/ui") and not target.startswith("//") and "\\" not in target else "/ui"


@router.get("/login")
async def login_page(request: Request, guest: Annotated[Visitor, Depends(visitor)], next: str = "/ui") -> Response:
    if not server_state(request).policy.closed:
        return go(request, guest, _local(next))  # an open server has nothing to sign in to
    return render(request, guest, "login.html", next=_local(next))


@router.post("/login")
async def login(request: Request, guest: Annotated[Visitor, Depends(visitor)]) -> Response:
    if not csrf_valid(guest.holder, request.headers.get("x-csrf-token")):
        raise Forbidden(guest.t("error.csrf"))
    form = await json_form(request)
    key = text_field(form, "key", limit=512)
    assert key is not None
    try:
        server_state(request).authenticate(key, request.client.host if request.client else "")
    except Unauthorized:
        raise Unauthorized(guest.t("error.bad_key")) from None
    sessions = sessions_of(request)
    await io(sessions.close, guest.session_id)
    response = go(request, guest, _local(str(form.get("next") or "/ui")))
    # A new id: one set before sign-in is not reused.
    cookie(response, request, SESSION_COOKIE, await io(sessions.open, key))
    return response


@router.post("/logout")
async def logout(request: Request, who: Acting) -> Response:
    await io(sessions_of(request).close, who.session_id)
    response = go(request, who, "/ui/login")
    response.delete_cookie(SESSION_COOKIE, path=COOKIE_PATH, httponly=True, samesite="strict")
    return response


@router.get("/users")
async def users_page(request: Request, who: Looking, q: Annotated[str | None, Query(max_length=200)] = None,
                     page: Annotated[int, Query(ge=1)] = 1) -> Response:
    if not who.sees_everyone:
        return go(request, who, f"/ui/users/{seg(who.principal.user_id or '')}")
    memory = memory_of(request)
    found = await io(data.users, memory, q)
    size = 100
    pages = max((len(found) + size - 1) // size, 1)
    totals = await io(memory.store.count, None)
    return render(request, who, "users.html", q=q or "", users=found[(page - 1) * size:page * size], page=page,
                  pages=pages, matched=len(found), totals=totals, layers=data.LAYERS, categories=data.CATEGORIES,
                  turn_counts=await io(memory.store.turn_counts), passes=await io(data.passes, memory, None))


@router.get("/users/{user_id}")
async def user_page(request: Request, who: Looking, user_id: str, agent_id: str | None = None,
                    run_id: str | None = None) -> Response:
    scope = scope_for(who, user_id, agent_id, run_id)
    memory = memory_of(request)
    now = memory.clock()
    view = await io(data.overview, memory, scope, now)
    passes = await io(data.passes, memory, user_id)
    t = who.t
    retention = grouped_bars(
        t("chart.retention"), [label for _, label in RETENTION_BUCKETS],
        [(t(f"chart.{key}"), COLORS[i], view.spread.counts[key]) for i, (key, _) in enumerate(HORIZONS)])
    layer_bars = horizontal_bars(t("chart.layers"), [(t(f"layer.{layer}"), view.counts.layers.get(layer, 0),
                                                      LAYER_COLORS[layer]) for layer in data.LAYERS])
    times, sizes = data.layer_history(passes)
    layer_lines = lines(t("chart.layers_over_time"), times, [
        (t(f"layer.{layer}"), LAYER_COLORS[layer], sizes[layer]) for layer in data.LAYERS]) if len(times) > 1 else None
    return render(request, who, "user.html", scope=scope, tab="overview", view=view, passes=passes,
                  retention=retention, layer_bars=layer_bars, layer_lines=layer_lines, layers=data.LAYERS,
                  categories=data.CATEGORIES, scope_query=_scope_query(scope))


def _scope_query(scope: Scope) -> dict[str, str | None]:
    return {"agent_id": scope.agent_id, "run_id": scope.run_id}


@router.get("/users/{user_id}/memories")
async def memories_page(
    request: Request, who: Looking, user_id: str, agent_id: str | None = None, run_id: str | None = None,
    q: Annotated[str | None, Query(max_length=500)] = None, category: str | None = None, layer: str | None = None,
    memory_type: str | None = None, deleted: bool = False, sort: str = "created_at", dir: str = "desc",
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1, size: int = 50,
    topic: Annotated[str | None, Query(max_length=64)] = None,
) -> Response:
    started = time.perf_counter()
    scope = scope_for(who, user_id, agent_id, run_id)
    question = data.Browse(q or None, category or None, layer or None, memory_type or None, deleted, sort,
                           dir != "asc", page, size, topic=topic or None).check()
    memory = memory_of(request)
    await memory.read_path.settle()  # access counts include every search that has answered
    found = await io(data.browse, memory, scope, question)
    now = memory.clock()
    curve = data.curve_of(memory)
    rows = [(record, curve.retention(record, now)) for record in found.records]
    pages = max((found.total + question.size - 1) // question.size, 1)
    filters = {"q": q, "category": category, "layer": layer, "memory_type": memory_type, "deleted": deleted,
               "size": size if size != 50 else None, "topic": topic, **_scope_query(scope)}
    response = render(request, who, "memories.html", scope=scope, tab="memories", rows=rows, total=found.total,
                      question=question, pages=pages, filters=filters, layers=data.LAYERS,
                      categories=data.CATEGORIES, memory_types=data.MEMORY_TYPES, page_sizes=data.PAGE_SIZES,
                      topics=data.TOPICS, scope_query=_scope_query(scope))
    response.headers["Server-Timing"] = f"page;dur={(time.perf_counter() - started) * 1000:.1f}"
    return response


@router.get("/users/{user_id}/search")
async def search_page(
    request: Request, who: Looking, user_id: str, agent_id: str | None = None, run_id: str | None = None,
    q: Annotated[str | None, Query(max_length=4000)] = None,
    top_k: Annotated[int, Query(ge=1, le=MAX_QUERY_TOP_K)] = 10,
) -> Response:
    scope = scope_for(who, user_id, agent_id, run_id)
    memory = memory_of(request)
    hits, timings, candidates = [], {}, {}
    if q and q.strip():
        check_text(q, "q")
        server_state(request).limits.check_query(q, "q")
        # An inspection, not a recall: what the console finds does not count as reviewed (no access_count + 1).
        retrieval = await memory.read_path.search(
            SearchRequest(q.strip(), scope, top_k=top_k, explain=True), refresh=False)
        hits, timings, candidates = retrieval.hits, retrieval.timings_ms, retrieval.paths
    curve, now = data.curve_of(memory), memory.clock()
    return render(request, who, "search.html", scope=scope, tab="search", q=q or "", top_k=top_k,
                  hits=[(hit, curve.retention(hit.record, now)) for hit in hits], timings=timings,
                  candidates=candidates, paths=("vector", "keyword", "rules"),
                  scope_query=_scope_query(scope))


@router.post("/users/{user_id}/context")
async def context_explain(request: Request, who: Acting, user_id: str, agent_id: str | None = None,
                          run_id: str | None = None) -> Response:
    """The query-enhancement stages /context would run for a pasted conversation, and what it would inject."""
    scope = scope_for(who, user_id, agent_id, run_id)
    form = await json_form(request)
    conversation = text_field(form, "conversation", limit=server_state(request).limits.max_body_bytes)
    assert conversation is not None
    messages = data.parse_conversation(conversation)
    server_state(request).limits.check_messages(messages)
    memory = memory_of(request)
    started = time.perf_counter()
    # recall() itself: the stages and hits /context would use, without counting them as reviewed.
    asked = RecallRequest(parse_chat(messages), scope, rewrite=bool(form.get("rewrite")))
    recall = await memory.read_path.recall(asked)
    block, used = memory_block([injected_text(h.record) for h in recall.hits], 1200, MEMORY_HEADER)
    return render(request, who, "context_result.html", stages=[s.as_dict() for s in recall.stages],
                  hits=[recall.hits[i] for i in used], block=block,
                  elapsed_ms=(time.perf_counter() - started) * 1000, messages=len(messages))


@router.get("/memories/{memory_id}")
async def memory_page(request: Request, who: Looking, memory_id: str, done: str | None = None) -> Response:
    record = await visible_record(request, who, memory_id)
    memory = memory_of(request)
    why = await io(data.provenance, memory, record)
    policy = memory.lifecycle
    purge_at = (record.deleted_at + timedelta(days=policy.purge_after_days)) if record.deleted_at else None
    return render(request, who, "memory.html", record=record, why=why,
                  retention=data.curve_of(memory).retention(record, memory.clock()), purge_at=purge_at,
                  done=done if done in ("edited", "deleted", "restored", "promoted") else None, topics=data.TOPICS)


# --- actions ------------------------------------------------------------------------------------------------------


@router.post("/memories/{memory_id}/edit")
async def edit_memory(request: Request, who: Writing, memory_id: str) -> Response:
    record = await visible_record(request, who, memory_id)
    form = await json_form(request)
    text = text_field(form, "text", limit=server_state(request).limits.max_message_chars)
    version = _version(form)
    await memory_of(request).update(record.id, text=text, version=version)
    server_state(request).metrics.update_total.inc()
    return go(request, who, url(f"/ui/memories/{seg(record.id)}", done="edited"))


@router.post("/memories/{memory_id}/delete")
async def delete_memory(request: Request, who: Writing, memory_id: str) -> Response:
    record = await visible_record(request, who, memory_id)
    form = await json_form(request)
    reason = text_field(form, "reason", required=False, limit=server_state(request).limits.max_query_chars)
    await memory_of(request).delete(record.id, reason=reason)
    server_state(request).metrics.delete_total.inc()
    return go(request, who, url(f"/ui/memories/{seg(record.id)}", done="deleted"))


@router.post("/memories/{memory_id}/restore")
async def restore_memory(request: Request, who: Writing, memory_id: str) -> Response:
    record = await visible_record(request, who, memory_id)
    form = await json_form(request)
    reason = text_field(form, "reason", required=False, limit=server_state(request).limits.max_query_chars)
    await memory_of(request).restore(record.id, reason=reason)
    return go(request, who, url(f"/ui/memories/{seg(record.id)}", done="restored"))


@router.post("/memories/{memory_id}/promote")
async def promote_memory(request: Request, who: Writing, memory_id: str) -> Response:
    record = await visible_record(request, who, memory_id)
    await memory_of(request).promote(record.id, version=_version(await json_form(request)))
    return go(request, who, url(f"/ui/memories/{seg(record.id)}", done="promoted"))


@router.post("/events/{event_id}/retry")
async def retry_event(request: Request, who: Writing, event_id: str) -> Response:
    memory = memory_of(request)
    turn = await io(memory.store.get_turn, event_id)
    if turn is None or not AccessPolicy.may_read(who.principal, turn.scope.as_dict()):
        raise NotFound(who.t("error.no_event", event=event_id))
    await memory.retry_event(event_id)
    return go(request, who, _return_to(request, _back(turn.scope)))


@router.post("/users/{user_id}/retry-failed")
async def retry_failed(request: Request, who: Writing, user_id: str, agent_id: str | None = None,
                       run_id: str | None = None) -> Response:
    scope = scope_for(who, user_id, agent_id, run_id)
    memory = memory_of(request)
    failed = await io(data.console_store(memory).list_turns, scope, [TurnStatus.FAILED], 500)
    for turn in failed:
        await memory.retry_event(turn.id)
    return go(request, who, url(f"/ui/users/{seg(user_id)}", **_scope_query(scope)))


def _back(scope: Scope) -> str:
    if scope.user_id:
        return url(f"/ui/users/{seg(scope.user_id)}", **_scope_query(scope))
    return "/ui"


def _return_to(request: Request, fallback: str) -> str:
    """The page the form was on (htmx names it in HX-Current-URL), if it is a console page."""
    current = urlsplit(request.headers.get("hx-current-url") or "")
    target = current.path + (f"?{current.query}" if current.query else "")
    return _local(target) if current.path.startswith("/ui") else fallback


def _version(form: dict[str, Any]) -> int | None:
    value = form.get("version")
    if value in (None, ""):
        return None
    if isinstance(value, str) and value.isdigit():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise InvalidInput("version must be a memory version (a positive integer)")
