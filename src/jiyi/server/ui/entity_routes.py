"""The console's pages of a user's entity graph (issue 32): the list of the people, pets, places… in the user's life,
and one entity's page (aliases, relations over time with the memories behind each, a picture of its neighbours), with
the corrections a person makes: rename it, merge another into it, close a relation.

The graph is the user's as a whole, made from every agent's memories: a key held to one agent does not reach it.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from jiyi.entity_view import entity_store
from jiyi.errors import Forbidden, InvalidInput, NotFound
from jiyi.records import Scope
from jiyi.server.ui import entity_data
from jiyi.server.ui.access import Looking, Viewer, Writing, io, memory_of, scope_for
from jiyi.server.ui.pictures import MAX_NEIGHBOURS, GraphNode, neighbourhood
from jiyi.server.ui.rendering import go, json_form, render, seg, text_field, url
from jiyi.server.ui.routes import ConsoleRoute
from jiyi.stores.entities import USER, EntityStore

router = APIRouter(prefix="/ui", include_in_schema=False, route_class=ConsoleRoute)


def graph_scope(who: Viewer, user_id: str) -> Scope:
    """The user whose graph a page shows: the viewer's own (a user key) or any (the admin key, an open server)."""
    scope = scope_for(who, user_id)
    if who.principal.agent_id is not None:
        raise Forbidden(who.t("error.graph_agent", agent=who.principal.agent_id))
    return Scope(scope.user_id)


def _entities_of(request: Request) -> EntityStore:
    return entity_store(memory_of(request).store)


def entity_url(user_id: str, entity_id: str, **query: str | None) -> str:
    return url(f"/ui/users/{seg(user_id)}/entities/{seg(entity_id)}", **query)


@router.get("/users/{user_id}/entities")
async def entities_page(request: Request, who: Looking, user_id: str,
                        kind: Annotated[str | None, Query(max_length=32)] = None) -> Response:
    scope = graph_scope(who, user_id)
    if kind and kind not in entity_data.KINDS:
        raise InvalidInput(f"kind must be one of {list(entity_data.KINDS)}, got {kind!r}")
    rows = await io(entity_data.entity_rows, memory_of(request), user_id, kind or None)
    return render(request, who, "entities.html", scope=scope, tab="entities", rows=rows, kind=kind or "",
                  kinds=entity_data.KINDS, scope_query={})


@router.get("/users/{user_id}/entities/{entity_id}")
async def entity_page(request: Request, who: Looking, user_id: str, entity_id: str,
                      done: str | None = None) -> Response:
    scope = graph_scope(who, user_id)
    try:
        page = await io(entity_data.entity_page, memory_of(request), user_id, entity_id)
    except NotFound:
        raise NotFound(who.t("error.no_entity", entity=entity_id)) from None
    t = who.t
    grouped: dict[str, GraphNode] = {}
    for view in page.relations:
        known = grouped.get(view.other)
        edge = (view.relation.relation, view.outgoing, view.relation.is_current)
        if known is None:
            href = None if view.other == USER else entity_url(user_id, view.other)
            name = t("entity.user_node", user=user_id) if view.other == USER else view.other_name
            grouped[view.other] = GraphNode(name, view.other_kind, href, (edge,))
        else:
            grouped[view.other] = GraphNode(known.name, known.kind, known.href, (*known.edges, edge))
    picture = neighbourhood(t("entity.picture_label", name=page.entity.name),
                            GraphNode(page.entity.name, page.entity.kind), list(grouped.values()),
                            t("relation.ended")) if grouped else None
    return render(request, who, "entity.html", scope=scope, tab="entities", page=page, picture=picture,
                  hidden=max(len(grouped) - MAX_NEIGHBOURS, 0), scope_query={},
                  done=done if done in ("renamed", "merged", "closed") else None)


@router.post("/users/{user_id}/entities/{entity_id}/rename")
async def rename_entity(request: Request, who: Writing, user_id: str, entity_id: str) -> Response:
    graph_scope(who, user_id)
    name = text_field(await json_form(request), "name", limit=200)
    assert name is not None
    await io(_entities_of(request).rename_entity, user_id, entity_id, name, memory_of(request).clock())
    return go(request, who, entity_url(user_id, entity_id, done="renamed"))


@router.post("/users/{user_id}/entities/{entity_id}/merge")
async def merge_entity(request: Request, who: Writing, user_id: str, entity_id: str) -> Response:
    """Merge the entity the form names into this one (this one is kept)."""
    graph_scope(who, user_id)
    merge_id = text_field(await json_form(request), "merge_id", limit=200)
    assert merge_id is not None
    await io(_entities_of(request).merge_entities, user_id, entity_id, merge_id, memory_of(request).clock())
    return go(request, who, entity_url(user_id, entity_id, done="merged"))


@router.post("/users/{user_id}/entities/{entity_id}/relations/{relation_id}/close")
async def close_relation(request: Request, who: Writing, user_id: str, entity_id: str, relation_id: str) -> Response:
    graph_scope(who, user_id)
    await io(_entities_of(request).close_relation, user_id, relation_id, memory_of(request).clock())
    return go(request, who, entity_url(user_id, entity_id, done="closed"))
