"""Schema as an append-only list of named migrations. Never edit one that has shipped: append a new one."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime

from jiyi.stores import graph_tables
from jiyi.text import analyze_for_index

Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: list[tuple[str, Migration]] = []


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append((fn.__name__, fn))
    return fn


@migration
def m001_memories(db: sqlite3.Connection) -> None:
    db.execute(
        """
        CREATE TABLE memories (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            content TEXT NOT NULL,
            hash TEXT NOT NULL,
            user_id TEXT, agent_id TEXT, run_id TEXT, actor_id TEXT, role TEXT,
            memory_type TEXT NOT NULL, layer TEXT NOT NULL, category TEXT NOT NULL,
            importance REAL NOT NULL, strength REAL NOT NULL, access_count INTEGER NOT NULL,
            confidence REAL NOT NULL, source TEXT NOT NULL, verified INTEGER NOT NULL,
            tags TEXT NOT NULL, metadata TEXT NOT NULL, provenance TEXT NOT NULL,
            related_ids TEXT NOT NULL, compression_source_ids TEXT NOT NULL,
            created_at TEXT NOT NULL, updated_at TEXT, last_accessed_at TEXT, event_time TEXT,
            expiration_date TEXT, deleted_at TEXT, delete_reason TEXT,
            embedding BLOB
        )
        """
    )
    for column in ("user_id", "agent_id", "run_id"):
        db.execute(f"CREATE INDEX memories_{column} ON memories({column}, created_at) WHERE deleted_at IS NULL")
    db.execute("CREATE INDEX memories_hash ON memories(hash)")


@migration
def m002_history(db: sqlite3.Connection) -> None:
    # mem0's exact columns, so tools written against mem0's history.db read ours.
    db.execute(
        """
        CREATE TABLE history (
            id TEXT PRIMARY KEY,
            memory_id TEXT,
            old_memory TEXT,
            new_memory TEXT,
            event TEXT,
            created_at DATETIME,
            updated_at DATETIME,
            is_deleted INTEGER,
            actor_id TEXT,
            role TEXT
        )
        """
    )
    db.execute("CREATE INDEX history_memory ON history(memory_id, created_at)")


@migration
def m003_messages(db: sqlite3.Connection) -> None:
    db.execute(
        """
        CREATE TABLE messages (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            user_id TEXT, agent_id TEXT, run_id TEXT,
            role TEXT NOT NULL, name TEXT, content TEXT NOT NULL,
            created_at TEXT NOT NULL, external_id TEXT, metadata TEXT NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX messages_scope ON messages(user_id, agent_id, run_id, rowid)")


@migration
def m004_keyword_index(db: sqlite3.Connection) -> None:
    # terms: segmented words; chars: CJK characters for substring phrases; scope: one token per owner id, so a
    # scoped query intersects posting lists instead of filtering every user's matches.
    # Text arrives segmented and stemmed (jiyi.text), so FTS5 only splits on spaces; memory_vocab gives document
    # frequencies for the same strings.
    db.execute("CREATE VIRTUAL TABLE memory_fts USING fts5(terms, chars, scope, tokenize='unicode61')")
    db.execute("CREATE VIRTUAL TABLE memory_vocab USING fts5vocab(memory_fts, 'col')")


@migration
def m005_meta(db: sqlite3.Connection) -> None:
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")


@migration
def m006_turns(db: sqlite3.Connection) -> None:
    db.execute(
        """
        CREATE TABLE turns (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            user_id TEXT, agent_id TEXT, run_id TEXT,
            message_ids TEXT NOT NULL, options TEXT NOT NULL,
            status TEXT NOT NULL, attempts INTEGER NOT NULL, next_attempt_at TEXT NOT NULL, lease_until TEXT,
            last_error TEXT, extractor TEXT, results TEXT NOT NULL,
            created_at TEXT NOT NULL, updated_at TEXT
        )
        """
    )
    # The worker's question: which unfinished turns are due. Finished turns stay out of this index.
    db.execute("CREATE INDEX turns_due ON turns(next_attempt_at, rowid)"
               " WHERE status IN ('queued', 'retry', 'processing')")
    db.execute("CREATE TABLE state (key TEXT PRIMARY KEY, value TEXT NOT NULL)")


@migration
def m007_history_reason(db: sqlite3.Connection) -> None:
    # Why the lifecycle forgot, kept, promoted or merged a memory: the audit a soft delete needs. Beside the history
    # table, whose columns stay exactly mem0's.
    db.execute("CREATE TABLE history_reason (history_id TEXT PRIMARY KEY, reason TEXT NOT NULL)")
    db.execute("CREATE INDEX memories_deleted ON memories(deleted_at) WHERE deleted_at IS NOT NULL")


@migration
def m008_scope_category_index(db: sqlite3.Connection) -> None:
    # Every search also looks for the scope's core and system memories (a vector search restricted by category):
    # without this index that filter read each of the user's rows, 13 ms of a search at 10k memories.
    db.execute("CREATE INDEX memories_user_category ON memories(user_id, category) WHERE deleted_at IS NULL")



@migration
def m009_scope_facets_index(db: sqlite3.Connection) -> None:
    # The filters that recall itself uses (category for core memories; tags and memory_type for the rules path: a
    # slot such as 老家, preferences and constraints) read only these columns. An index that holds them all answers
    # those filters without reading a row with its embedding: a tag filter at 10k memories took 13-16 ms, now ~2.
    # Its first columns are m008's index, which it replaces.
    # deleted_at is a column, not a partial-index condition: SQLite reads a partial index's rows back from the table
    # to check the condition again, and the point is not to read them.
    db.execute("CREATE INDEX memories_user_facets ON memories(user_id, deleted_at, category, memory_type, tags)")
    db.execute("DROP INDEX IF EXISTS memories_user_category")


@migration
def m010_memory_versions(db: sqlite3.Connection) -> None:
    # Compare-and-swap updates (store.update / soft_delete with expected_version): concurrent writers of one memory
    # each replace the text they read, or fail, instead of the last one silently winning.
    db.execute("ALTER TABLE memories ADD COLUMN version INTEGER NOT NULL DEFAULT 1")



@migration
def m011_locks(db: sqlite3.Connection) -> None:
    # Named locks with a lease, for work that must run one at a time across processes (the write path's decisions
    # for one scope): a holder that dies lets go when its lease runs out.
    db.execute("CREATE TABLE locks (name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at TEXT NOT NULL)")



@migration
def m012_requests(db: sqlite3.Connection) -> None:
    # Idempotent adds: a request key claimed once (response NULL while its first request runs), then its answer.
    db.execute("CREATE TABLE requests (key TEXT PRIMARY KEY, response TEXT, created_at TEXT NOT NULL)")
    db.execute("CREATE INDEX requests_created ON requests(created_at)")


WEBHOOK_CURSOR = "webhooks.cursor"  # the state row: how far the webhook fan-out has read the history table


@migration
def m013_webhooks(db: sqlite3.Connection) -> None:
    # Webhooks and their durable delivery queue. The history table is the change log they are fed from: its rowid
    # order is commit order (writers take the write lock for the whole transaction), read past a cursor.
    db.execute(
        """
        CREATE TABLE webhooks (
            id TEXT PRIMARY KEY,
            project_id TEXT NOT NULL, user_id TEXT,
            name TEXT NOT NULL, url TEXT NOT NULL, event_types TEXT NOT NULL, secret TEXT NOT NULL,
            is_active INTEGER NOT NULL, after_change INTEGER NOT NULL,
            created_at TEXT NOT NULL, updated_at TEXT,
            last_status TEXT, last_status_code INTEGER, last_error TEXT, last_attempt_at TEXT
        )
        """
    )
    db.execute("CREATE INDEX webhooks_project ON webhooks(project_id, created_at)")
    db.execute(
        """
        CREATE TABLE webhook_deliveries (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
            change_id TEXT NOT NULL, event_type TEXT NOT NULL, body TEXT NOT NULL,
            status TEXT NOT NULL, attempts INTEGER NOT NULL, next_attempt_at TEXT NOT NULL, lease_until TEXT,
            last_status_code INTEGER, last_error TEXT,
            created_at TEXT NOT NULL, updated_at TEXT,
            UNIQUE (webhook_id, change_id)
        )
        """
    )
    # The sender's question: which deliveries are due. Finished ones stay out of this index.
    db.execute("CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at, rowid)"
               " WHERE status = 'pending'")
    db.execute("CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries(webhook_id, rowid)")
    db.execute("CREATE INDEX webhook_deliveries_finished ON webhook_deliveries(updated_at) WHERE status != 'pending'")
    # A store that already has history starts its log here: what happened before webhooks existed is not news.
    db.execute("INSERT OR REPLACE INTO state (key, value) SELECT ?, CAST(coalesce(max(rowid), 0) AS TEXT) FROM history",
               (WEBHOOK_CURSOR,))



@migration
def m014_api_keys(db: sqlite3.Connection) -> None:
    # Keys made with `jiyi keys create`: the SHA-256 of each key, never the key.
    db.execute(
        """
        CREATE TABLE api_keys (
            id TEXT PRIMARY KEY,
            key_hash TEXT NOT NULL UNIQUE,
            scope TEXT NOT NULL, user_id TEXT, agent_id TEXT, name TEXT,
            created_at TEXT NOT NULL, last_used_at TEXT, revoked_at TEXT
        )
        """
    )


@migration
def m015_console_sessions(db: sqlite3.Connection) -> None:
    # Console sign-ins, shared by every process on the file and kept across restarts: the SHA-256 of each session's
    # id (the browser holds the id) and the key's hash sealed under the id, never the id or the key
    # (server/ui/session.py).
    db.execute(
        """
        CREATE TABLE console_sessions (
            id_hash TEXT PRIMARY KEY,
            sealed_key TEXT NOT NULL,
            opened_at TEXT NOT NULL,
            seen_at TEXT NOT NULL
        )
        """
    )


@migration
def m016_scope_vitals_index(db: sqlite3.Connection) -> None:
    # The console's overview of a scope counts its memories per agent, run, layer and category, and draws their
    # retention from kind, importance, recalls and times. Read from the rows (each with its text and vector), that
    # took a second of CPU at 100k memories; this index holds every column those two questions ask, so they never
    # touch a row (the page at 100k: 0.97 -> 0.18 s of CPU, bench/results/console-100k-sqlite-*.json). It also answers
    # the users page's counts. Times are ISO text of one fixed format, so their order is their text's order.
    db.execute("CREATE INDEX memories_user_vitals ON memories(user_id, deleted_at, agent_id, run_id, layer, category, "
               "memory_type, importance, access_count, created_at, updated_at, last_accessed_at)")


@migration
def m017_keywords_without_stamps(db: sqlite3.Connection) -> None:
    # The keyword index leaves out the time stamp a summary starts with (jiyi.text.analyze_for_index): index again
    # the memories indexed with theirs. Only live memories are indexed; their scope tokens stay as they were.
    stamped = db.execute("SELECT f.rowid, m.content, f.scope FROM memories m JOIN memory_fts f ON f.rowid = m.rowid "
                         "WHERE m.deleted_at IS NULL AND m.content LIKE '[%'").fetchall()
    for rowid, content, scope in stamped:
        analyzed = analyze_for_index(content)
        db.execute("DELETE FROM memory_fts WHERE rowid = ?", (rowid,))
        db.execute("INSERT INTO memory_fts(rowid, terms, chars, scope) VALUES (?, ?, ?, ?)",
                   (rowid, analyzed.terms, analyzed.chars, scope))


@migration
def m018_memory_categories(db: sqlite3.Connection) -> None:
    # mem0's categories of each memory (personal_details, food, … or a project's own; jiyi/categorizing.py), a JSON
    # list beside jiyi's own `category`. Memories written before have none until they are changed.
    db.execute("ALTER TABLE memories ADD COLUMN categories TEXT NOT NULL DEFAULT '[]'")


@migration
def m019_entity_graph(db: sqlite3.Connection) -> None:
    # The people, pets, places, ... of each user's life and the relations between them (issue 32; stores/entities.py).
    for statement in graph_tables.SCHEMA:
        db.execute(statement)


@migration
def m020_memory_times_by_id(db: sqlite3.Connection) -> None:
    # The entity graph's recall path orders the memories that mention an entity by when they were made
    # (graph_tables.entity_memories): read from the rows, each lookup stepped over the row's text and vector to its
    # times - 5.6 ms of CPU for an entity 1,450 of 10k memories mention, a search's largest cost when it named one
    # (bench/search_stages.py's profile); from this index, which holds all the lookup reads, 1.9 ms.
    db.execute("CREATE INDEX memories_id_times ON memories(id, deleted_at, created_at)")


def migrate(db: sqlite3.Connection) -> list[str]:
    """Apply pending migrations in order, each in its own transaction (`db` is in autocommit mode)."""
    db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    done = {row[0] for row in db.execute("SELECT name FROM _migrations")}
    applied = []
    for name, fn in MIGRATIONS:
        if name in done:
            continue
        db.execute("BEGIN IMMEDIATE")
        try:
            fn(db)
            db.execute("INSERT INTO _migrations VALUES (?, ?)", (name, datetime.now(UTC).isoformat()))
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        applied.append(name)
    return applied
