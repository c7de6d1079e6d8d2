"""The entity store port: the people, pets, places, organisations, things and events of a user's life, the relations
between them over time, and which memories mention them (issue 32).

A port of its own beside MemoryStore, not more methods on it: a backend that keeps memories need not keep a graph,
and the graph's operations are all the write path, the read path and the console need.

The graph can be corrected by hand (the console, the MCP tools): two entities the extraction kept apart merged, an
entity renamed, a relation closed. Each is one transaction, scoped to one user like every other operation here,
with history rows for what it changed.

The user is the implicit entity USER (never stored): "my cousin Xiaoya" is (xiaoya, cousin_of, USER). A relation
is never deleted because it ended: a move sets `invalid_at` on "lives in Denver" and adds "lives in Seattle". It is
deleted only when every memory it came from is (MemoryStore.soft_delete drops the deleted memory's support).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, runtime_checkable

from jiyi.records import new_id

USER = "user"  # the user themself, as a relation's source or target
ENTITY_KINDS = ("person", "pet", "place", "organisation", "thing", "event")


@dataclass(slots=True)
class GraphEntity:
    kind: str
    name: str
    aliases: list[str] = field(default_factory=list)
    id: str = field(default_factory=new_id)
    created_at: datetime | None = None
    updated_at: datetime | None = None

    def surface_forms(self) -> list[str]:
        return [self.name, *(a for a in self.aliases if a != self.name)]


@dataclass(slots=True)
class GraphRelation:
    source: str  # an entity id or USER
    relation: str  # snake_case, source IS the <relation> OF target: (mom, mother_of, USER)
    target: str
    memory_ids: list[str] = field(default_factory=list)  # the memories it came from (and the one that ended it)
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    id: str = field(default_factory=new_id)
    created_at: datetime | None = None
    updated_at: datetime | None = None

    @property
    def is_current(self) -> bool:
        return self.invalid_at is None

    def describe(self, names: dict[str, str]) -> str:
        """'小雅 cousin_of user' with names for ids: the text of the relation's history rows."""
        return f"{names.get(self.source, self.source)} {self.relation} {names.get(self.target, self.target)}"


@dataclass(slots=True)
class Graph:
    """One user's entities and relations (ended ones included), as a store holds them."""

    entities: dict[str, GraphEntity] = field(default_factory=dict)
    relations: list[GraphRelation] = field(default_factory=list)
    # (casefolded form, entity id), longest first, for a graph no one changes any more (a store's cached one);
    # built on first use by core/entities.find_mentions
    frozen_forms: list[tuple[str, str]] | None = None

    def names(self) -> dict[str, str]:
        return {USER: USER, **{e.id: e.name for e in self.entities.values()}}


def unique_forms(items: Iterable[str]) -> list[str]:
    """The items in order, each once however it is cased ("Mochi" and "mochi" are one alias), blanks left out."""
    seen: dict[str, str] = {}
    for item in items:
        if item and item.casefold() not in seen:
            seen[item.casefold()] = item
    return list(seen.values())


def search_forms(graph: Graph) -> list[tuple[str, str]]:
    """(casefolded name or alias, entity id), longest first: what a text's words are matched against."""
    return sorted(((form.casefold(), e.id) for e in graph.entities.values() for form in e.surface_forms()
                   if len(form) >= 2), key=lambda f: -len(f[0]))


@dataclass(slots=True)
class GraphChange:
    """What one turn changed, saved in one transaction: entities and relations written whole (new ones added, known
    ids replaced) and which memories mention which entities."""

    entities: list[GraphEntity] = field(default_factory=list)
    relations: list[GraphRelation] = field(default_factory=list)
    mentions: list[tuple[str, str]] = field(default_factory=list)  # (entity id, memory id)

    def __bool__(self) -> bool:
        return bool(self.entities or self.relations or self.mentions)


@dataclass(frozen=True, slots=True)
class GraphEvent:
    """A history row of the graph: ADD / UPDATE (an entity renamed or given an alias, a relation's end moved to the
    entity it was merged into) / CLOSE (a relation ended) / DELETE (a relation whose memories were all deleted, or
    one a merge made an entity's relation to itself) / MERGE (an entity merged into another, on both: `new` is the
    kept entity afterwards, with its id; a relation joined to the same relation of the kept entity: `new` is the one
    it joined, with its id)."""

    subject_id: str
    subject: str  # "entity" | "relation"
    event: str
    old: str | None
    new: str | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class EntityMerge:
    """What merging one entity into another did: the kept entity as it is now, and the merged one's relations by
    what became of them (their ids)."""

    entity: GraphEntity
    moved: list[str]  # now the kept entity's
    joined: list[str]  # the kept entity had the same current relation: it took their memories, they are gone
    dropped: list[str]  # between the two entities: a relation of the kept one to itself, deleted


@runtime_checkable
class EntityStore(Protocol):
    def graph(self, user_id: str) -> Graph:
        """The user's entities and every relation, current and ended; an empty Graph for a user with none."""
        ...

    def current_graph(self, user_id: str) -> Graph:
        """The user's entities and current relations, without times or the memories behind them: what a search
        needs of the graph, read in a fraction of graph()'s time."""
        ...

    def save_graph(self, user_id: str, change: GraphChange, when: datetime) -> None:
        """Write a turn's change with a history row for each entity or relation added or changed, in one
        transaction. Ids of another user's entities are refused (InvalidInput)."""
        ...

    def update_graph(self, user_id: str, edit: Callable[[Graph], GraphChange], when: datetime) -> GraphChange:
        """Read the user's graph, let `edit` work out a change from it and save that change as save_graph does,
        with no other update of the user's graph, in this process or another, between the read and the save: two
        adds naming the same new person at once make one entity. `edit` runs inside the store's transaction, so it
        must be quick and do no I/O (the rules take about a millisecond; an LLM's reading is done before)."""
        ...

    def entity_memories(self, user_id: str, entity_ids: Sequence[str], limit: int) -> list[str]:
        """Live memories that mention these entities or support their current relations, newest first."""
        ...

    def graph_history(self, user_id: str, subject_id: str) -> list[GraphEvent]:
        ...

    def forget_graph(self, user_id: str) -> None:
        """Delete the user's whole graph (entities, relations, mentions, history)."""
        ...

    def entity_memory_counts(self, user_id: str) -> dict[str, int]:
        """For each entity with any, how many live memories (messages kept as evidence left out) mention it or
        support one of its current relations: what a list of the user's entities shows."""
        ...

    def merge_entities(self, user_id: str, keep_id: str, merge_id: str, when: datetime) -> EntityMerge:
        """Merge entity `merge_id` into `keep_id`, both the user's: the aliases united (the merged name among them),
        its relations and mentions moved to the kept entity, a current relation the kept one already has joined to
        it (memories united, the earlier valid_at kept), the merged entity deleted; a history row for each change.
        NotFound for an id that is not one of the user's entities (unknown, or another user's)."""
        ...

    def rename_entity(self, user_id: str, entity_id: str, name: str, when: datetime) -> GraphEntity:
        """Give the user's entity a new name; the old one stays an alias (so what was said with it still finds it).
        InvalidInput when another of the user's entities has that name (merge them instead)."""
        ...

    def close_relation(self, user_id: str, relation_id: str, when: datetime,
                       invalid_at: datetime | None = None) -> GraphRelation:
        """End the user's current relation at `invalid_at` (default `when`): kept, with its times and a CLOSE row,
        no longer current. InvalidInput for a relation already closed or an end before it began."""
        ...
