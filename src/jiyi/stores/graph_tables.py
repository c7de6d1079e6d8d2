"""The entity graph's tables and statements, one implementation for the SQLite and the PostgreSQL store.

Both stores keep the graph the same way (text ids, ISO-8601 UTC times as text, aliases as a JSON list), so one set of
statements serves both; only the placeholder and the "one of these ids" spelling differ (GraphSql). The graph is
small beside the memories (tens to hundreds of rows a user) and read by user, so nothing here needs either
database's own types. Every function runs inside the caller's transaction (`db`: a sqlite3 or psycopg connection
whose rows read by column name).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from jiyi.errors import InvalidInput
from jiyi.records import new_id
from jiyi.stores.entities import USER, Graph, GraphChange, GraphEntity, GraphEvent, GraphRelation, search_forms

# The schema both stores' migrations create (sqlite m019, postgres m021).
SCHEMA = (
    "CREATE TABLE graph_entities (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, kind TEXT NOT NULL, "
    "name TEXT NOT NULL, aliases TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)",
    "CREATE INDEX graph_entities_user ON graph_entities (user_id)",
    "CREATE TABLE graph_relations (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, source TEXT NOT NULL, "
    "relation TEXT NOT NULL, target TEXT NOT NULL, valid_at TEXT, invalid_at TEXT, created_at TEXT NOT NULL, "
    "updated_at TEXT NOT NULL)",
    "CREATE INDEX graph_relations_user ON graph_relations (user_id)",
    # Which memories a relation came from; a relation with none left is deleted (drop_support).
    "CREATE TABLE graph_support (relation_id TEXT NOT NULL, memory_id TEXT NOT NULL, user_id TEXT NOT NULL, "
    "PRIMARY KEY (relation_id, memory_id))",
    "CREATE INDEX graph_support_memory ON graph_support (memory_id)",
    "CREATE TABLE graph_mentions (entity_id TEXT NOT NULL, memory_id TEXT NOT NULL, user_id TEXT NOT NULL, "
    "PRIMARY KEY (entity_id, memory_id))",
    "CREATE INDEX graph_mentions_memory ON graph_mentions (memory_id)",
    "CREATE TABLE graph_history (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, subject_id TEXT NOT NULL, "
    "subject TEXT NOT NULL, event TEXT NOT NULL, old_value TEXT, new_value TEXT, created_at TEXT NOT NULL)",
    "CREATE INDEX graph_history_subject ON graph_history (user_id, subject_id, created_at)",
)
TABLES = ("graph_entities", "graph_relations", "graph_support", "graph_mentions", "graph_history")


def _time(value: datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")


def _parse(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


@dataclass(frozen=True, slots=True)
class GraphSql:
    """The statements in one database's spelling, built once at import (nothing is formatted per call)."""

    select_entities: str
    select_relations: str
    select_support: str
    select_names: str
    select_current: str
    upsert_entity: str
    upsert_relation: str
    insert_support: str
    insert_mention: str
    insert_history: str
    owners_of: str
    memories_of: str
    history_of: str
    supported_by: str
    unsupported: str
    delete_support_of: str
    delete_mentions_of: str
    orphans: str
    delete_relation: str
    delete_entity: str
    delete_user: tuple[str, ...]

    @classmethod
    def build(cls, mark: str, any_of: str) -> GraphSql:
        """`mark`: the placeholder ('?' or '%s'); `any_of`: how 'column is one of a JSON list' is written, with
        {column} and {mark} to fill."""
        def q(sql: str) -> str:
            return sql.replace("?", mark)

        def one_of(column: str) -> str:
            return any_of.format(column=column, mark=mark)

        return cls(
            select_entities=q("SELECT * FROM graph_entities WHERE user_id = ? ORDER BY created_at, id"),
            select_relations=q("SELECT * FROM graph_relations WHERE user_id = ? ORDER BY created_at, id"),
            select_names=q("SELECT id, kind, name, aliases FROM graph_entities WHERE user_id = ?"),
            select_current=q("SELECT id, source, relation, target FROM graph_relations WHERE user_id = ? "
                             "AND invalid_at IS NULL"),
            select_support=q("SELECT relation_id, memory_id FROM graph_support WHERE user_id = ? "
                             "ORDER BY relation_id, memory_id"),
            upsert_entity=q("INSERT INTO graph_entities (id, user_id, kind, name, aliases, created_at, updated_at) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, "
                            "name = excluded.name, aliases = excluded.aliases, updated_at = excluded.updated_at"),
            upsert_relation=q("INSERT INTO graph_relations (id, user_id, source, relation, target, valid_at, "
                              "invalid_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                              "ON CONFLICT (id) DO UPDATE SET valid_at = excluded.valid_at, "
                              "invalid_at = excluded.invalid_at, updated_at = excluded.updated_at"),
            insert_support=q("INSERT INTO graph_support (relation_id, memory_id, user_id) VALUES (?, ?, ?) "
                             "ON CONFLICT DO NOTHING"),
            insert_mention=q("INSERT INTO graph_mentions (entity_id, memory_id, user_id) VALUES (?, ?, ?) "
                             "ON CONFLICT DO NOTHING"),
            insert_history=q("INSERT INTO graph_history (id, user_id, subject_id, subject, event, old_value, "
                             "new_value, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
            owners_of=q("SELECT id, user_id FROM graph_entities WHERE ") + one_of("id")
            + q(" UNION ALL SELECT id, user_id FROM graph_relations WHERE ") + one_of("id"),
            memories_of=(
                "SELECT x.memory_id FROM ("
                + q("SELECT memory_id FROM graph_mentions WHERE user_id = ? AND ") + one_of("entity_id")
                + q(" UNION SELECT s.memory_id FROM graph_support s JOIN graph_relations r ON r.id = s.relation_id "
                    "WHERE r.user_id = ? AND r.invalid_at IS NULL AND (")
                + one_of("r.source") + " OR " + one_of("r.target") + ")"
                + q(") x JOIN memories m ON m.id = x.memory_id AND m.deleted_at IS NULL "
                    "ORDER BY m.created_at DESC, m.id LIMIT ?")
            ),
            history_of=q("SELECT * FROM graph_history WHERE user_id = ? AND subject_id = ? ORDER BY created_at, id"),
            supported_by=q("SELECT DISTINCT relation_id FROM graph_support WHERE memory_id = ?"),
            unsupported=q("SELECT r.* FROM graph_relations r WHERE r.id = ? AND NOT EXISTS "
                          "(SELECT 1 FROM graph_support s WHERE s.relation_id = r.id)"),
            delete_support_of=q("DELETE FROM graph_support WHERE memory_id = ?"),
            delete_mentions_of=q("DELETE FROM graph_mentions WHERE memory_id = ?"),
            orphans=q("SELECT e.id FROM graph_entities e WHERE e.user_id = ? "
                      "AND NOT EXISTS (SELECT 1 FROM graph_mentions g WHERE g.entity_id = e.id) "
                      "AND NOT EXISTS (SELECT 1 FROM graph_relations r WHERE r.source = e.id OR r.target = e.id)"),
            delete_relation=q("DELETE FROM graph_relations WHERE id = ?"),
            delete_entity=q("DELETE FROM graph_entities WHERE id = ?"),
            delete_user=tuple(q(f"DELETE FROM {table} WHERE user_id = ?") for table in TABLES),
        )


SQLITE = GraphSql.build("?", "{column} IN (SELECT value FROM json_each({mark}))")
POSTGRES = GraphSql.build("%s", "{column} IN (SELECT json_array_elements_text({mark}::json))")


def _entity(row: Any) -> GraphEntity:
    return GraphEntity(kind=row["kind"], name=row["name"], aliases=json.loads(row["aliases"]), id=row["id"],
                       created_at=_parse(row["created_at"]), updated_at=_parse(row["updated_at"]))


def _relation(row: Any, memory_ids: list[str]) -> GraphRelation:
    return GraphRelation(source=row["source"], relation=row["relation"], target=row["target"], memory_ids=memory_ids,
                         valid_at=_parse(row["valid_at"]), invalid_at=_parse(row["invalid_at"]), id=row["id"],
                         created_at=_parse(row["created_at"]), updated_at=_parse(row["updated_at"]))


def read_graph(db: Any, sql: GraphSql, user_id: str) -> Graph:
    support: dict[str, list[str]] = {}
    for row in db.execute(sql.select_support, (user_id,)).fetchall():
        support.setdefault(row["relation_id"], []).append(row["memory_id"])
    entities = {row["id"]: _entity(row) for row in db.execute(sql.select_entities, (user_id,)).fetchall()}
    relations = [_relation(row, support.get(row["id"], []))
                 for row in db.execute(sql.select_relations, (user_id,)).fetchall()]
    return Graph(entities, relations)


def read_current_graph(db: Any, sql: GraphSql, user_id: str) -> Graph:
    """Entities and current relations only, without times or supporting memories: what a search reads."""
    rows = db.execute(sql.select_names, (user_id,)).fetchall()
    # one parse for all the alias lists, not one a row (it was 40 % of the read)
    aliases = json.loads("[" + ",".join(row["aliases"] for row in rows) + "]") if rows else []
    entities = {row["id"]: GraphEntity(kind=row["kind"], name=row["name"], aliases=known, id=row["id"])
                for row, known in zip(rows, aliases, strict=True)}
    relations = [GraphRelation(source=row["source"], relation=row["relation"], target=row["target"], id=row["id"])
                 for row in db.execute(sql.select_current, (user_id,)).fetchall()]
    graph = Graph(entities, relations)
    graph.frozen_forms = search_forms(graph)
    return graph


def _history(db: Any, sql: GraphSql, user_id: str, event: GraphEvent) -> None:
    db.execute(sql.insert_history, (new_id(), user_id, event.subject_id, event.subject, event.event, event.old,
                                    event.new, _time(event.created_at)))


def _entity_text(entity: GraphEntity) -> str:
    return json.dumps({"kind": entity.kind, "name": entity.name, "aliases": entity.aliases}, ensure_ascii=False)


def save_graph(db: Any, sql: GraphSql, user_id: str, change: GraphChange, when: datetime) -> None:
    ids = [e.id for e in change.entities] + [r.id for r in change.relations]
    if ids:
        foreign = [row["id"] for row in db.execute(sql.owners_of, (json.dumps(ids), json.dumps(ids))).fetchall()
                   if row["user_id"] != user_id]
        if foreign:
            raise InvalidInput(f"entity or relation {foreign[0]} belongs to another user")
    before = read_graph(db, sql, user_id)
    names = {**before.names(), **{e.id: e.name for e in change.entities}}
    for entity in change.entities:
        old = before.entities.get(entity.id)
        if old is not None and (old.kind, old.name, old.aliases) == (entity.kind, entity.name, entity.aliases):
            continue
        created = old.created_at if old is not None and old.created_at else when
        db.execute(sql.upsert_entity, (entity.id, user_id, entity.kind, entity.name,
                                       json.dumps(entity.aliases, ensure_ascii=False), _time(created), _time(when)))
        _history(db, sql, user_id, GraphEvent(entity.id, "entity", "UPDATE" if old else "ADD",
                                              _entity_text(old) if old else None, _entity_text(entity), when))
    known = {r.id: r for r in before.relations}
    for relation in change.relations:
        if (relation.source != USER and relation.source not in names) or \
                (relation.target != USER and relation.target not in names):
            raise InvalidInput(f"relation {relation.relation} refers to an entity this user does not have")
        old_relation = known.get(relation.id)
        text = relation.describe(names)
        if old_relation is None or (old_relation.valid_at, old_relation.invalid_at) != (relation.valid_at,
                                                                                        relation.invalid_at):
            created = old_relation.created_at if old_relation is not None and old_relation.created_at else when
            db.execute(sql.upsert_relation, (relation.id, user_id, relation.source, relation.relation,
                                             relation.target, _time(relation.valid_at), _time(relation.invalid_at),
                                             _time(created), _time(when)))
            if old_relation is None:
                event = "ADD"
            else:
                event = "CLOSE" if relation.invalid_at is not None and old_relation.invalid_at is None else "UPDATE"
            _history(db, sql, user_id, GraphEvent(relation.id, "relation", event,
                                                  text if old_relation else None, text, when))
        for memory_id in relation.memory_ids:
            db.execute(sql.insert_support, (relation.id, memory_id, user_id))
    for entity_id, memory_id in change.mentions:
        if entity_id not in names or entity_id == USER:
            raise InvalidInput(f"mention of entity {entity_id}, which this user does not have")
        db.execute(sql.insert_mention, (entity_id, memory_id, user_id))


def drop_support(db: Any, sql: GraphSql, memory_id: str, when: datetime) -> None:
    """A memory was deleted: it mentions nothing now, and a relation it alone supported goes (with a DELETE row),
    as does an entity left with no mention and no relation."""
    relation_ids = [row["relation_id"] for row in db.execute(sql.supported_by, (memory_id,)).fetchall()]
    db.execute(sql.delete_support_of, (memory_id,))
    db.execute(sql.delete_mentions_of, (memory_id,))
    users: set[str] = set()
    for relation_id in relation_ids:
        row = db.execute(sql.unsupported, (relation_id,)).fetchone()
        if row is None:
            continue
        users.add(row["user_id"])
        text = f"{row['source']} {row['relation']} {row['target']}"
        db.execute(sql.delete_relation, (relation_id,))
        _history(db, sql, row["user_id"], GraphEvent(relation_id, "relation", "DELETE", text, None, when))
    for user_id in users:
        for row in db.execute(sql.orphans, (user_id,)).fetchall():
            db.execute(sql.delete_entity, (row["id"],))
            _history(db, sql, user_id, GraphEvent(row["id"], "entity", "DELETE", None, None, when))


def entity_memories(db: Any, sql: GraphSql, user_id: str, entity_ids: Sequence[str], limit: int) -> list[str]:
    if not entity_ids or limit <= 0:
        return []
    ids = json.dumps(list(entity_ids))
    rows = db.execute(sql.memories_of, (user_id, ids, user_id, ids, ids, limit)).fetchall()
    return [row["memory_id"] for row in rows]


def graph_history(db: Any, sql: GraphSql, user_id: str, subject_id: str) -> list[GraphEvent]:
    rows = db.execute(sql.history_of, (user_id, subject_id)).fetchall()
    return [GraphEvent(row["subject_id"], row["subject"], row["event"], row["old_value"], row["new_value"],
                       datetime.fromisoformat(row["created_at"])) for row in rows]


def forget_graph(db: Any, sql: GraphSql, user_id: str) -> None:
    for statement in sql.delete_user:
        db.execute(statement, (user_id,))
