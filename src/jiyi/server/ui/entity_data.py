"""What the console's entity pages show, gathered from the store's EntityStore port: a user's entities with their
memory counts, and one entity with its aliases, its relations over time, the memories behind each, its history and
its one-hop neighbours. Blocking reads; the routes run them in a worker thread. Nothing here knows HTTP or HTML."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime

from jiyi.entity_view import entity_store
from jiyi.errors import NotFound
from jiyi.memory import AsyncMemory
from jiyi.records import MemoryRecord
from jiyi.stores.entities import ENTITY_KINDS, USER, EntityStore, GraphEntity, GraphEvent, GraphRelation

KINDS = ENTITY_KINDS
MAX_BEHIND = 200  # memories looked up for one entity page (its relations' and its mentions')
MAX_MENTIONS = 50
EARLIEST = datetime.min.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class EntityRow:
    entity: GraphEntity
    memories: int
    relations: int  # current ones


def entity_rows(memory: AsyncMemory, user_id: str, kind: str | None) -> list[EntityRow]:
    """The user's entities, those backed by the most memories first, then by name."""
    store = entity_store(memory.store)
    graph = store.current_graph(user_id)
    counts = store.entity_memory_counts(user_id)
    related: dict[str, int] = {}
    for relation in graph.relations:
        for end in {relation.source, relation.target}:
            related[end] = related.get(end, 0) + 1
    rows = [EntityRow(e, counts.get(e.id, 0), related.get(e.id, 0)) for e in graph.entities.values()
            if kind is None or e.kind == kind]
    rows.sort(key=lambda row: (-row.memories, row.entity.name.casefold()))
    return rows


@dataclass(frozen=True, slots=True)
class RelationView:
    relation: GraphRelation
    other: str  # the other end's id (USER for the user)
    other_name: str
    other_kind: str  # "user" for the user
    outgoing: bool  # this entity is the source: "<this> brother_of <other>"
    behind: list[tuple[str, MemoryRecord | None]]  # each memory it came from, None when it is gone for good


@dataclass(frozen=True, slots=True)
class EntityPage:
    entity: GraphEntity
    memories: int
    relations: list[RelationView]  # current ones first, each group the latest to begin first
    mentioned_in: list[MemoryRecord]  # live memories that name it or back a current relation, newest first
    history: list[tuple[GraphEvent, str | None, str | None]]  # each row, with its old and new value as text
    others: list[GraphEntity]  # the user's other entities (what can be merged into this one)


def _records(memory: AsyncMemory, ids: list[str]) -> dict[str, MemoryRecord]:
    """The memories by id, deleted ones too (their page says so and offers to restore them)."""
    store = memory.store
    found = store.get_many(ids)
    for memory_id in ids:
        if memory_id not in found and (record := store.get(memory_id, include_deleted=True)) is not None:
            found[memory_id] = record
    return found


def entity_page(memory: AsyncMemory, user_id: str, entity_id: str) -> EntityPage:
    store: EntityStore = entity_store(memory.store)
    graph = store.graph(user_id)
    entity = graph.entities.get(entity_id)
    if entity is None:
        raise NotFound(f"entity {entity_id} not found among user {user_id}'s entities")
    names = {**graph.names(), USER: user_id}
    own = [r for r in graph.relations if entity_id in (r.source, r.target)]
    own.sort(key=lambda r: (not r.is_current, -(r.valid_at or r.created_at or EARLIEST).timestamp()))
    mentioned = store.entity_memories(user_id, [entity_id], MAX_MENTIONS)
    wanted = list(dict.fromkeys([m for r in own for m in r.memory_ids] + mentioned))[:MAX_BEHIND]
    records = _records(memory, wanted)
    views = []
    for relation in own:
        outgoing = relation.source == entity_id
        other = relation.target if outgoing else relation.source
        kind = "user" if other == USER else graph.entities[other].kind if other in graph.entities else "thing"
        views.append(RelationView(relation, other, names.get(other, other), kind, outgoing,
                                  [(m, records.get(m)) for m in relation.memory_ids]))
    return EntityPage(
        entity=entity, memories=store.entity_memory_counts(user_id).get(entity_id, 0), relations=views,
        mentioned_in=[records[m] for m in mentioned if m in records],
        history=[(event, readable(event.old), readable(event.new))
                 for event in store.graph_history(user_id, entity_id)],
        others=sorted((e for e in graph.entities.values() if e.id != entity_id), key=lambda e: e.name.casefold()),
    )



def readable(value: str | None) -> str | None:
    """An entity's history value (its JSON: kind, name, aliases, and the kept entity's id after a merge) as a line:
    "Arjun · my older brother, 阿俊"; any other value as it is."""
    if not value or not value.startswith("{"):
        return value
    try:
        entity = json.loads(value)
    except ValueError:
        return value
    name = str(entity.get("name", ""))
    aliases = [str(a) for a in entity.get("aliases", []) if a != name]
    return f"{name} · {', '.join(aliases)}" if aliases else name
