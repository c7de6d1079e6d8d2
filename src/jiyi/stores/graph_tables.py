"""The entity graph's tables and statements, one implementation for the SQLite and the PostgreSQL store.

Both stores keep the graph the same way (text ids, ISO-8601 UTC times as text, aliases as a JSON list), so one set of
statements serves both; only the placeholder and the "one of these ids" spelling differ (GraphSql). The graph is
small beside the memories (tens to hundreds of rows a user) and read by user, so nothing here needs either
database's own types. Every function runs inside the caller's transaction (`db`: a sqlite3 or psycopg connection
whose rows read by column name).

The corrections by hand (merge_entities, rename_entity, close_relation) read the user's whole graph, decide in Python
and write what changed: a user's graph is small, and the history rows need the names before and after anyway.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from jiyi.errors import InvalidInput, NotFound
from jiyi.records import new_id
from jiyi.stores.entities import (
    USER,
    EntityMerge,
    Graph,
    GraphChange,
    GraphEntity,
    GraphEvent,
    GraphRelation,
    search_forms,
    unique_forms,
)

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
    lock_user: str
    memory_counts: str
    update_relation: str
    move_support: str
    delete_support_for: str
    move_mentions: str
    delete_mentions_for: str

    @classmethod
    def build(cls, mark: str, any_of: str, lock_user: str = "") -> GraphSql:
        """`mark`: the placeholder ('?' or '%s'); `any_of`: how 'column is one of a JSON list' is written, with
        {column} and {mark} to fill; `lock_user`: a statement (with the user id to fill) that makes the transaction
        the user's graph's only writer until it ends, where the database does not already do so."""
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
            lock_user=q(lock_user),
            memory_counts=q(
                "SELECT x.entity_id, COUNT(*) AS n FROM ("
                "SELECT entity_id, memory_id FROM graph_mentions WHERE user_id = ? "
                "UNION SELECT r.source, s.memory_id FROM graph_support s JOIN graph_relations r "
                "ON r.id = s.relation_id WHERE r.user_id = ? AND r.invalid_at IS NULL "
                "UNION SELECT r.target, s.memory_id FROM graph_support s JOIN graph_relations r "
                "ON r.id = s.relation_id WHERE r.user_id = ? AND r.invalid_at IS NULL"
                ") x JOIN memories m ON m.id = x.memory_id AND m.deleted_at IS NULL AND m.category <> 'message' "
                "GROUP BY x.entity_id"),
            update_relation=q("UPDATE graph_relations SET source = ?, target = ?, valid_at = ?, invalid_at = ?, "
                              "updated_at = ? WHERE id = ?"),
            # (the WHERE also tells SQLite's parser that ON CONFLICT is the upsert, not a join's ON)
            move_support=q("INSERT INTO graph_support (relation_id, memory_id, user_id) SELECT ?, memory_id, user_id "
                           "FROM graph_support WHERE relation_id = ? ON CONFLICT DO NOTHING"),
            delete_support_for=q("DELETE FROM graph_support WHERE relation_id = ?"),
            move_mentions=q("INSERT INTO graph_mentions (entity_id, memory_id, user_id) SELECT ?, memory_id, user_id "
                            "FROM graph_mentions WHERE entity_id = ? ON CONFLICT DO NOTHING"),
            delete_mentions_for=q("DELETE FROM graph_mentions WHERE entity_id = ?"),
        )


# SQLite's writes are one at a time already (BEGIN IMMEDIATE); PostgreSQL's need a lock so that a correction and a
# turn's change to the same user's graph never decide on the same graph read (the class key, 0x6a69, keeps these
# apart from any other advisory lock).
SQLITE = GraphSql.build("?", "{column} IN (SELECT value FROM json_each({mark}))")
POSTGRES = GraphSql.build("%s", "{column} IN (SELECT json_array_elements_text({mark}::json))",
                          "SELECT pg_advisory_xact_lock(27241, hashtext(?))")


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


def lock_user(db: Any, sql: GraphSql, user_id: str) -> None:
    """Make this transaction the only one changing the user's graph until it ends (PostgreSQL; SQLite's
    BEGIN IMMEDIATE already is)."""
    if sql.lock_user:
        db.execute(sql.lock_user, (user_id,))


def save_graph(db: Any, sql: GraphSql, user_id: str, change: GraphChange, when: datetime) -> None:
    lock_user(db, sql, user_id)
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


def entity_memory_counts(db: Any, sql: GraphSql, user_id: str) -> dict[str, int]:
    rows = db.execute(sql.memory_counts, (user_id, user_id, user_id)).fetchall()
    return {row["entity_id"]: int(row["n"]) for row in rows if row["entity_id"] != USER}


def _owned_entity(graph: Graph, user_id: str, entity_id: str) -> GraphEntity:
    entity = graph.entities.get(entity_id)
    if entity is None:  # unknown, or another user's: the same answer, so that no one learns another's ids
        raise NotFound(f"entity {entity_id} not found among user {user_id}'s entities (an unknown id, or another "
                       "user's entity)")
    return entity


def _write_entity(db: Any, sql: GraphSql, user_id: str, entity: GraphEntity, when: datetime) -> None:
    db.execute(sql.upsert_entity, (entity.id, user_id, entity.kind, entity.name,
                                   json.dumps(entity.aliases, ensure_ascii=False),
                                   _time(entity.created_at or when), _time(when)))
    entity.updated_at = when


def _write_relation(db: Any, sql: GraphSql, relation: GraphRelation, when: datetime) -> None:
    db.execute(sql.update_relation, (relation.source, relation.target, _time(relation.valid_at),
                                     _time(relation.invalid_at), _time(when), relation.id))
    relation.updated_at = when


def _earliest(a: datetime | None, b: datetime | None) -> datetime | None:
    return b if a is None else a if b is None else min(a, b)


def merge_entities(db: Any, sql: GraphSql, user_id: str, keep_id: str, merge_id: str,
                   when: datetime) -> EntityMerge:
    lock_user(db, sql, user_id)
    graph = read_graph(db, sql, user_id)
    keep, gone = _owned_entity(graph, user_id, keep_id), _owned_entity(graph, user_id, merge_id)
    if keep_id == merge_id:
        raise InvalidInput(f"entity {keep_id} cannot be merged into itself: name two different entities")
    before = graph.names()
    kept_text = _entity_text(keep)
    keep.aliases = unique_forms([*keep.aliases, gone.name, *gone.aliases])
    _write_entity(db, sql, user_id, keep, when)
    after = {**before, merge_id: keep.name}
    merged_text = json.dumps({"id": keep.id, "kind": keep.kind, "name": keep.name, "aliases": keep.aliases},
                             ensure_ascii=False)
    _history(db, sql, user_id, GraphEvent(keep.id, "entity", "MERGE", kept_text, merged_text, when))

    current = {(r.source, r.relation, r.target): r for r in graph.relations
               if r.is_current and merge_id not in (r.source, r.target)}
    moved, joined, dropped = [], [], []
    for relation in [r for r in graph.relations if merge_id in (r.source, r.target)]:
        old_text = relation.describe(before)
        relation.source = keep_id if relation.source == merge_id else relation.source
        relation.target = keep_id if relation.target == merge_id else relation.target
        same = current.get((relation.source, relation.relation, relation.target)) if relation.is_current else None
        if relation.source == relation.target:  # 小雅 cousin_of 表姐, once they are one person
            db.execute(sql.delete_support_for, (relation.id,))
            db.execute(sql.delete_relation, (relation.id,))
            _history(db, sql, user_id, GraphEvent(relation.id, "relation", "DELETE", old_text, None, when))
            dropped.append(relation.id)
        elif same is not None:  # the kept entity already has it: one relation, backed by both's memories
            db.execute(sql.move_support, (same.id, relation.id))
            db.execute(sql.delete_support_for, (relation.id,))
            db.execute(sql.delete_relation, (relation.id,))
            _history(db, sql, user_id, GraphEvent(relation.id, "relation", "MERGE", old_text,
                                                  f"{same.describe(after)} ({same.id})", when))
            if (valid_at := _earliest(same.valid_at, relation.valid_at)) != same.valid_at:
                same_text = same.describe(after)
                same.valid_at = valid_at
                _write_relation(db, sql, same, when)
                _history(db, sql, user_id, GraphEvent(same.id, "relation", "UPDATE", same_text, same_text, when))
            joined.append(relation.id)
        else:
            _write_relation(db, sql, relation, when)
            _history(db, sql, user_id, GraphEvent(relation.id, "relation", "UPDATE", old_text,
                                                  relation.describe(after), when))
            if relation.is_current:
                current[(relation.source, relation.relation, relation.target)] = relation
            moved.append(relation.id)
    db.execute(sql.move_mentions, (keep_id, merge_id))
    db.execute(sql.delete_mentions_for, (merge_id,))
    db.execute(sql.delete_entity, (merge_id,))
    _history(db, sql, user_id, GraphEvent(merge_id, "entity", "MERGE", _entity_text(gone), merged_text, when))
    return EntityMerge(keep, moved, joined, dropped)


MAX_NAME_CHARS = 200


def rename_entity(db: Any, sql: GraphSql, user_id: str, entity_id: str, name: str, when: datetime) -> GraphEntity:
    lock_user(db, sql, user_id)
    graph = read_graph(db, sql, user_id)
    entity = _owned_entity(graph, user_id, entity_id)
    name = name.strip()
    if not name or len(name) > MAX_NAME_CHARS:
        raise InvalidInput(f"an entity's name must be 1 to {MAX_NAME_CHARS} characters")
    if name == entity.name:
        return entity
    for other in graph.entities.values():
        if other.id != entity_id and other.name.casefold() == name.casefold():
            raise InvalidInput(f"user {user_id} already has an entity named {other.name} ({other.id}): merge the "
                               "two instead of giving them one name")
    old_text = _entity_text(entity)
    entity.aliases = unique_forms([*entity.aliases, entity.name, name])
    entity.name = name
    _write_entity(db, sql, user_id, entity, when)
    _history(db, sql, user_id, GraphEvent(entity.id, "entity", "UPDATE", old_text, _entity_text(entity), when))
    return entity


def close_relation(db: Any, sql: GraphSql, user_id: str, relation_id: str, when: datetime,
                   invalid_at: datetime | None) -> GraphRelation:
    lock_user(db, sql, user_id)
    graph = read_graph(db, sql, user_id)
    relation = next((r for r in graph.relations if r.id == relation_id), None)
    if relation is None:
        raise NotFound(f"relation {relation_id} not found among user {user_id}'s relations (an unknown id, or "
                       "another user's relation)")
    text = relation.describe(graph.names())
    if not relation.is_current:
        raise InvalidInput(f"relation {relation_id} ({text}) was already closed at {_time(relation.invalid_at)}")
    ended = invalid_at or when
    if ended.tzinfo is None:
        ended = ended.replace(tzinfo=UTC)
    if relation.valid_at is not None and ended < relation.valid_at:
        raise InvalidInput(f"relation {relation_id} ({text}) began at {_time(relation.valid_at)}: it cannot end "
                           "before that")
    relation.invalid_at = ended
    _write_relation(db, sql, relation, when)
    _history(db, sql, user_id, GraphEvent(relation.id, "relation", "CLOSE", text, text, when))
    return relation


def forget_graph(db: Any, sql: GraphSql, user_id: str) -> None:
    for statement in sql.delete_user:
        db.execute(statement, (user_id,))
