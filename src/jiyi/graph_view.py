"""mem0's `relations` beside `results`, for a search or a listing asked with enable_graph=True.

mem0's graph memory answers a search with the relations of the entities the query names, as
{"source", "relationship", "destination"}, and a listing with every relation, as {"source", "relationship",
"target"}; the user themself is named by their user_id. jiyi answers the same from the user's entity graph
(stores/entities.py): current relations only, names rather than ids.
"""

from __future__ import annotations

from typing import Any

from jiyi.core.graph_recall import asked_entities
from jiyi.stores.entities import USER, EntityStore, Graph, GraphRelation


def _shape(relation: GraphRelation, names: dict[str, str], last: str) -> dict[str, Any]:
    return {"source": names[relation.source], "relationship": relation.relation, last: names[relation.target]}


def _names(graph: Graph, user_id: str) -> dict[str, str]:
    return {**graph.names(), USER: user_id}


def search_relations(store: object, user_id: str | None, query: str) -> list[dict[str, Any]]:
    """The current relations of the entities `query` names (and of those a chained question reaches)."""
    if not user_id or not isinstance(store, EntityStore):
        return []
    graph = store.current_graph(user_id)
    asked = asked_entities(query, graph)
    wanted = set(asked.named) | set(asked.reached)
    names = _names(graph, user_id)
    return [_shape(r, names, "destination") for r in graph.relations
            if r.is_current and (r.source in wanted or r.target in wanted)]


def all_relations(store: object, user_id: str | None) -> list[dict[str, Any]]:
    if not user_id or not isinstance(store, EntityStore):
        return []
    graph = store.current_graph(user_id)
    names = _names(graph, user_id)
    return [_shape(r, names, "target") for r in graph.relations]
