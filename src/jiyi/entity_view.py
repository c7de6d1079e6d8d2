"""A user's entity graph as the MCP tools answer it: entities with their kind, aliases, how many memories back them
and their current relations; relations with their times and the memories they came from.

Names stand beside ids (a model reads "Arjun brother_of alice", and needs the ids to correct it); the user themself
is named by their user_id, as mem0's relations name them. mem0's `relations` list (graph_view.py) is the other,
mem0-shaped view of the same graph.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from jiyi.errors import NotFound, NotSupportedYet
from jiyi.stores.entities import USER, EntityStore, Graph, GraphEntity, GraphRelation

EARLIEST = datetime.min.replace(tzinfo=UTC)


def entity_store(store: object) -> EntityStore:
    if not isinstance(store, EntityStore):
        raise NotSupportedYet(f"the store {type(store).__name__} keeps no entity graph (stores/entities.py "
                              "EntityStore)")
    return store


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def names_of(graph: Graph, user_id: str) -> dict[str, str]:
    return {**graph.names(), USER: user_id}


def relation_item(relation: GraphRelation, names: dict[str, str]) -> dict[str, Any]:
    return {"id": relation.id, "source": names.get(relation.source, relation.source), "source_id": relation.source,
            "relation": relation.relation, "target": names.get(relation.target, relation.target),
            "target_id": relation.target, "valid_at": _time(relation.valid_at),
            "invalid_at": _time(relation.invalid_at), "current": relation.is_current,
            "memory_ids": relation.memory_ids}


def entity_item(entity: GraphEntity, graph: Graph, names: dict[str, str], memories: int) -> dict[str, Any]:
    """The entity with its current relations (each as "source relation target", with ids)."""
    return {"id": entity.id, "kind": entity.kind, "name": entity.name, "aliases": entity.surface_forms()[1:],
            "memories": memories,
            "relations": [{key: value for key, value in relation_item(r, names).items()
                           if key not in ("invalid_at", "current", "memory_ids")}
                          for r in graph.relations if r.is_current and entity.id in (r.source, r.target)]}


def entity_items(store: EntityStore, user_id: str, kind: str | None = None) -> list[dict[str, Any]]:
    """The user's entities, those backed by the most memories first (then by name)."""
    graph = store.graph(user_id)
    counts = store.entity_memory_counts(user_id)
    names = names_of(graph, user_id)
    found = [e for e in graph.entities.values() if kind is None or e.kind == kind]
    found.sort(key=lambda e: (-counts.get(e.id, 0), e.name.casefold()))
    return [entity_item(e, graph, names, counts.get(e.id, 0)) for e in found]


def relation_items(store: EntityStore, user_id: str, entity_id: str | None = None,
                   include_closed: bool = False) -> list[dict[str, Any]]:
    """The user's relations (current only, unless `include_closed`), of one entity when `entity_id` is given; the
    latest to begin first."""
    graph = store.graph(user_id)
    if entity_id is not None and entity_id not in graph.entities:
        raise NotFound(f"entity {entity_id} not found among user {user_id}'s entities (an unknown id, or another "
                       "user's entity)")
    names = names_of(graph, user_id)
    found = [r for r in graph.relations if (include_closed or r.is_current)
             and (entity_id is None or entity_id in (r.source, r.target))]
    found.sort(key=lambda r: r.valid_at or r.created_at or EARLIEST, reverse=True)
    return [relation_item(r, names) for r in found]
