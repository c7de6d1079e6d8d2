"""Schema as an append-only list of named migrations. Never edit one that has shipped: append a new one.

All pending migrations run in one transaction under a transaction-level advisory lock, so several processes that
start at once against a new database wait for the first instead of racing it (PostgreSQL's DDL is transactional).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg.rows import tuple_row

from jiyi.stores import graph_tables
from jiyi.stores.postgres.codec import add_keyword_stats, keyword_columns, keyword_counts

log = logging.getLogger(__name__)

Migration = Callable[[psycopg.Connection[Any]], None]
MIGRATIONS: list[tuple[str, Migration]] = []

# pg_advisory_xact_lock keys: any bigint; these spell "jiyi" + a role, so they are unlikely to collide with an
# application sharing the database.
MIGRATION_LOCK = 0x6A697969_0001
CHANGE_LOG_LOCK = 0x6A697969_0002  # held by a writer from its first history row to its commit: see store._log_lock
BINDING_LOCK = 0x6A697969_0003

# m017 rebuilds an HNSW index of up to this many rows itself (seconds; a migration holds off every other process).
REBUILD_IN_MIGRATION = 20_000

WEBHOOK_CURSOR = "webhooks.cursor"  # the state row: how far the webhook fan-out has read the change log


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append((fn.__name__, fn))
    return fn


@migration
def m001_pgvector(db: psycopg.Connection[Any]) -> None:
    db.execute("CREATE EXTENSION IF NOT EXISTS vector")


@migration
def m002_memories(db: psycopg.Connection[Any]) -> None:
    # `embedding` is typed vector(dims) when an embedder is bound (store.bind_embedding): pgvector's HNSW index
    # needs the dimension, and the first embedder decides it. `keywords` holds jiyi.text's terms in order (with
    # repeats: term frequencies) followed by each CJK character prefixed with "#" (a term is never written with "#"),
    # `cjk` the CJK characters as one string: see store.keyword_search. How often a memory was read lives in
    # memory_access (m003), so that counting a read rewrites neither the row nor its HNSW entry.
    db.execute(
        """
        CREATE TABLE memories (
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id text NOT NULL UNIQUE,
            content text NOT NULL,
            hash text NOT NULL,
            user_id text, agent_id text, run_id text, actor_id text, role text,
            memory_type text NOT NULL, layer text NOT NULL, category text NOT NULL,
            importance double precision NOT NULL, strength double precision NOT NULL,
            confidence double precision NOT NULL, source text NOT NULL, verified boolean NOT NULL,
            tags jsonb NOT NULL, metadata jsonb NOT NULL, provenance json NOT NULL,
            related_ids json NOT NULL, compression_source_ids json NOT NULL,
            created_at timestamptz NOT NULL, updated_at timestamptz, event_time timestamptz,
            expiration_date timestamptz, deleted_at timestamptz, delete_reason text,
            version integer NOT NULL DEFAULT 1,
            embedding vector,
            keywords text[],
            cjk text
        )
        """
    )
    for column in ("user_id", "agent_id", "run_id"):
        db.execute(f"CREATE INDEX memories_{column} ON memories ({column}, created_at) WHERE deleted_at IS NULL")
    # Every search also asks for the scope's core memories, and for messages apart from facts: by category.
    db.execute("CREATE INDEX memories_user_category ON memories (user_id, category) WHERE deleted_at IS NULL")
    db.execute("CREATE INDEX memories_tags ON memories USING gin (tags jsonb_path_ops) WHERE deleted_at IS NULL")
    db.execute("CREATE INDEX memories_keywords ON memories USING gin (keywords) WHERE deleted_at IS NULL")
    db.execute("CREATE INDEX memories_hash ON memories (hash)")
    db.execute("CREATE INDEX memories_deleted ON memories (deleted_at) WHERE deleted_at IS NOT NULL")


@migration
def m003_memory_access(db: psycopg.Connection[Any]) -> None:
    # Reads are counted on every search: a narrow row of its own, updated in place, instead of a new version of the
    # memory's row (with its vector) and of every index entry, the HNSW graph's included.
    db.execute(
        """
        CREATE TABLE memory_access (
            memory_id text PRIMARY KEY,
            access_count bigint NOT NULL,
            last_accessed_at timestamptz
        )
        """
    )


@migration
def m004_history(db: psycopg.Connection[Any]) -> None:
    # mem0's exact columns, so tools written against mem0's history table read ours.
    db.execute(
        """
        CREATE TABLE history (
            id text PRIMARY KEY,
            memory_id text,
            old_memory text,
            new_memory text,
            event text,
            created_at timestamptz,
            updated_at timestamptz,
            is_deleted integer,
            actor_id text,
            role text
        )
        """
    )
    db.execute("CREATE INDEX history_memory ON history (memory_id, created_at)")
    # Beside it, one row per history row: its place in the change log the webhooks are fed from (positions are
    # handed out in commit order: see store._log_lock) and why the lifecycle made the change, if it says.
    db.execute(
        """
        CREATE TABLE history_log (
            position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            history_id text NOT NULL UNIQUE,
            reason text
        )
        """
    )


@migration
def m005_messages(db: psycopg.Connection[Any]) -> None:
    db.execute(
        """
        CREATE TABLE messages (
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id text NOT NULL UNIQUE,
            user_id text, agent_id text, run_id text,
            role text NOT NULL, name text, content text NOT NULL,
            created_at timestamptz NOT NULL, external_id text, metadata json NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX messages_user ON messages (user_id, seq)")
    db.execute("CREATE INDEX messages_agent ON messages (agent_id, seq)")
    db.execute("CREATE INDEX messages_run ON messages (run_id, seq)")


@migration
def m006_meta(db: psycopg.Connection[Any]) -> None:
    db.execute("CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL)")


@migration
def m007_keyword_stats(db: psycopg.Connection[Any]) -> None:
    # Document frequencies for BM25 and document_frequencies(): per term, how many indexed memories hold it; the
    # row with term '' holds how many memories are indexed and their total length. Each writer adds to the row of
    # its own shard (its backend's pid modulo 16), so writers of common words rarely wait for each other; a count is
    # the sum over the shards.
    db.execute(
        """
        CREATE TABLE keyword_stats (
            term text NOT NULL,
            shard smallint NOT NULL,
            docs bigint NOT NULL,
            length bigint NOT NULL,
            PRIMARY KEY (term, shard)
        )
        """
    )


@migration
def m008_turns(db: psycopg.Connection[Any]) -> None:
    db.execute(
        """
        CREATE TABLE turns (
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id text NOT NULL UNIQUE,
            user_id text, agent_id text, run_id text,
            message_ids json NOT NULL, options json NOT NULL,
            status text NOT NULL, attempts integer NOT NULL, next_attempt_at timestamptz NOT NULL,
            lease_until timestamptz, last_error text, extractor text, results json NOT NULL,
            created_at timestamptz NOT NULL, updated_at timestamptz
        )
        """
    )
    # The worker's question: which unfinished turns are due. Finished turns stay out of this index.
    db.execute("CREATE INDEX turns_due ON turns (next_attempt_at, seq) "
               "WHERE status IN ('queued', 'retry', 'processing')")
    db.execute("CREATE TABLE state (key text PRIMARY KEY, value text NOT NULL)")


@migration
def m009_locks(db: psycopg.Connection[Any]) -> None:
    # Named locks with a lease, for work that must run one at a time across processes (the write path's decisions
    # for one scope): a holder that dies lets go when its lease runs out.
    db.execute("CREATE TABLE locks (name text PRIMARY KEY, holder text NOT NULL, expires_at timestamptz NOT NULL)")


@migration
def m010_requests(db: psycopg.Connection[Any]) -> None:
    # Idempotent adds: a request key claimed once (response NULL while its first request runs), then its answer.
    db.execute("CREATE TABLE requests (key text PRIMARY KEY, response text, created_at timestamptz NOT NULL)")
    db.execute("CREATE INDEX requests_created ON requests (created_at)")


@migration
def m011_webhooks(db: psycopg.Connection[Any]) -> None:
    db.execute(
        """
        CREATE TABLE webhooks (
            id text PRIMARY KEY,
            project_id text NOT NULL, user_id text,
            name text NOT NULL, url text NOT NULL, event_types json NOT NULL, secret text NOT NULL,
            is_active boolean NOT NULL, after_change bigint NOT NULL,
            created_at timestamptz NOT NULL, updated_at timestamptz,
            last_status text, last_status_code integer, last_error text, last_attempt_at timestamptz
        )
        """
    )
    db.execute("CREATE INDEX webhooks_project ON webhooks (project_id, created_at)")
    db.execute(
        """
        CREATE TABLE webhook_deliveries (
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id text NOT NULL UNIQUE,
            webhook_id text NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
            change_id text NOT NULL, event_type text NOT NULL, body text NOT NULL,
            status text NOT NULL, attempts integer NOT NULL, next_attempt_at timestamptz NOT NULL,
            lease_until timestamptz, last_status_code integer, last_error text,
            created_at timestamptz NOT NULL, updated_at timestamptz,
            UNIQUE (webhook_id, change_id)
        )
        """
    )
    # The sender's question: which deliveries are due. Finished ones stay out of this index.
    db.execute("CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, seq)"
               " WHERE status = 'pending'")
    db.execute("CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, seq)")
    db.execute("CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (updated_at) WHERE status <> 'pending'")


@migration
def m012_api_keys(db: psycopg.Connection[Any]) -> None:
    # Keys made with `jiyi keys create`: the SHA-256 of each key, never the key.
    db.execute(
        """
        CREATE TABLE api_keys (
            id text PRIMARY KEY,
            key_hash text NOT NULL UNIQUE,
            scope text NOT NULL, user_id text, agent_id text, name text,
            created_at timestamptz NOT NULL, last_used_at timestamptz, revoked_at timestamptz
        )
        """
    )


@migration
def m013_console_sessions(db: psycopg.Connection[Any]) -> None:
    # Console sign-ins, shared by every server process and kept across restarts: the SHA-256 of each session's id
    # (the browser holds the id) and the key's hash sealed under the id, never the id or the key
    # (server/ui/session.py).
    db.execute(
        """
        CREATE TABLE console_sessions (
            id_hash text PRIMARY KEY,
            sealed_key text NOT NULL,
            opened_at timestamptz NOT NULL,
            seen_at timestamptz NOT NULL
        )
        """
    )


@migration
def m014_scope_vitals_index(db: psycopg.Connection[Any]) -> None:
    # The console's overview of a scope counts its memories per agent, run, layer and category, and draws their
    # retention from kind, importance and times (recalls are in memory_access): this index answers both with an
    # index-only scan instead of reading every row with its text and vector (the page at 100k: 1.6 -> 0.4 s on a
    # busy 2-core machine, bench/results/console-100k-postgresql-*.json). The id is there for the join with
    # memory_access.
    db.execute("CREATE INDEX memories_user_vitals ON memories (user_id, agent_id, run_id, layer, category) "
               "INCLUDE (memory_type, importance, created_at, updated_at, id) WHERE deleted_at IS NULL")



@migration
def m015_keywords_without_stamps(db: psycopg.Connection[Any]) -> None:
    # The keyword index leaves out the time stamp a summary starts with (jiyi.text.analyze_for_index): index again
    # the memories indexed with theirs, and move their document frequencies with them.
    with db.cursor(row_factory=tuple_row) as cur:
        stamped = cur.execute("SELECT id, content, keywords FROM memories "
                              "WHERE deleted_at IS NULL AND keywords IS NOT NULL AND content LIKE '[%'").fetchall()
    moved: Counter[str] = Counter()
    length = 0
    for memory_id, content, old_keywords in stamped:
        keywords, cjk = keyword_columns(content)
        db.execute("UPDATE memories SET keywords = %s, cjk = %s WHERE id = %s", (keywords, cjk, memory_id))
        old_terms, old_length = keyword_counts(old_keywords)
        new_terms, new_length = keyword_counts(keywords)
        moved.update(new_terms)
        moved.subtract(old_terms)
        length += new_length - old_length
    add_keyword_stats(db, moved, length, 0)


@migration
def m016_keyword_stats_of_cjk_characters(db: psycopg.Connection[Any]) -> None:
    # keyword_search bounds its work by how many memories a word can match, and a Chinese word also matches its
    # characters in a row, which the terms' counts miss (钱: a term in no memory, a character of 5 % of 1M in
    # bench/pg_vectors.py's store; matching it read 54k rows, 380 ms). keyword_stats now also counts each CJK
    # character ('#' + the character, as in `keywords`; codec.keyword_counts): counted here for the memories
    # already indexed, from scratch.
    db.execute("DELETE FROM keyword_stats WHERE term LIKE '#%'")
    db.execute("INSERT INTO keyword_stats (term, shard, docs, length) "
               "SELECT c.k, 0, count(*), 0 FROM memories m, "
               "LATERAL (SELECT DISTINCT k FROM unnest(m.keywords) AS u(k) WHERE k LIKE '#%') AS c "
               "WHERE m.deleted_at IS NULL AND m.keywords IS NOT NULL GROUP BY c.k")


@migration
def m017_hnsw_graph_ef_construction_128(db: psycopg.Connection[Any]) -> None:
    # pgvector's default graph (m 16, ef_construction 64) is too loose for e5's crowded vectors (every cosine between
    # 0.7 and 0.95). bench/pg_vectors.py, 1M memories shaped like e5's, a 100k-memory scope, the index asked for 200
    # candidates: the 10 nearest were found 0.85 of the time with the default graph, 0.89 with ef_construction 128,
    # 0.88 with m 24 as well (bench/results/pg_vectors-builds.json). ef_construction 128 doubles the build (1M:
    # 505 -> 1,066 s on 2 busy cores) and costs inserts into a large store ~7 % (197 -> 184 rows/s); m 24 would cost
    # 26 % for no gain. The numbers go into the index's options (store.HNSW_BUILD builds new ones with them); an
    # index of up to REBUILD_IN_MIGRATION rows is rebuilt here, a larger one keeps its graph until an operator
    # rebuilds it without stopping searches (logged).
    with db.cursor(row_factory=tuple_row) as cur:
        row = cur.execute("SELECT reltuples, reloptions FROM pg_class "
                          "WHERE oid = to_regclass('memories_embedding_hnsw')").fetchone()
    if row is None:  # no embedder bound yet
        return
    rows, options = row
    if "ef_construction=128" in (options or ()):
        return
    db.execute("ALTER INDEX memories_embedding_hnsw SET (m = 16, ef_construction = 128)")
    if rows <= REBUILD_IN_MIGRATION:
        db.execute("REINDEX INDEX memories_embedding_hnsw")
    else:
        log.warning("the HNSW index of %d memories keeps its old graph until it is rebuilt: run "
                    "REINDEX INDEX CONCURRENTLY memories_embedding_hnsw at a quiet time (about 20 minutes per "
                    "million memories on 2 cores; searches and writes go on meanwhile)", int(rows))


@migration
def m018_memories_user_memory_type(db: psycopg.Connection[Any]) -> None:
    # A request for advice searches the scope for preferences and constraints: tagged ones (the tags GIN index) or
    # of memory_type preference, which no index held, so the search read every memory of the scope (100k: 260 ms
    # per search, p99 of the whole hybrid search; bench/pg_vectors.py). With this index the three are looked up.
    db.execute("CREATE INDEX memories_user_memory_type ON memories (user_id, memory_type) WHERE deleted_at IS NULL")


@migration
def m019_memories_user_vectors(db: psycopg.Connection[Any]) -> None:
    # An exact search read one table page per memory of the scope (a user's memories lie among everyone else's, and
    # a third of the vectors sit out of line in TOAST): 10k memories in 33 ms, 100k in 320 ms at 1M memories. From
    # an index holding each user's memories with their vectors and what a search filters on, the same scans take
    # 7.6 and 90 ms (bench/pg_vectors.py), so exact search (every nearest found) pays for scopes ~10x larger. Only
    # for vectors of up to 384 dimensions (store.SCAN_INDEX_MAX_DIMS: a btree entry holds ~2.7 KB); a store bound
    # to an embedder later gets it then. ~20 s for 1M memories.
    with db.cursor(row_factory=tuple_row) as cur:
        row = cur.execute("SELECT value FROM meta WHERE key = 'embedding_dims'").fetchone()
    if row is not None and 0 < int(row[0]) <= 384:
        db.execute("CREATE INDEX IF NOT EXISTS memories_user_vectors ON memories (user_id) "
                   "INCLUDE (agent_id, run_id, category, expiration_date, id, seq, embedding) "
                   "WHERE deleted_at IS NULL")


@migration
def m020_memory_categories(db: psycopg.Connection[Any]) -> None:
    # mem0's categories of each memory (personal_details, food, … or a project's own; jiyi/categorizing.py), a jsonb
    # list beside jiyi's own `category`, with a GIN index for {"categories": {"in": [...]}} across a large scope.
    # Memories written before have none until they are changed.
    db.execute("ALTER TABLE memories ADD COLUMN categories jsonb NOT NULL DEFAULT '[]'::jsonb")
    db.execute("CREATE INDEX memories_categories ON memories USING gin (categories jsonb_path_ops) "
               "WHERE deleted_at IS NULL")


@migration
def m021_entity_graph(db: psycopg.Connection[Any]) -> None:
    # The people, pets, places, ... of each user's life and the relations between them (issue 32; stores/entities.py).
    # The same tables as SQLite's, text columns included (stores/graph_tables.py): one set of statements for both.
    for statement in graph_tables.SCHEMA:
        db.execute(statement)


@migration
def m022_scope_vector_indexes(db: psycopg.Connection[Any]) -> None:
    # The users whose memories have an HNSW index of their own (stores/postgres/scope_indexes.py): one row per user,
    # written by the process that builds the index, read by every search of a large scope. `status`: building,
    # ready or failed; `started_at`: the last attempt's start (a failed build is tried again an hour later).
    db.execute("CREATE TABLE scope_vector_indexes (user_id text PRIMARY KEY, index_name text NOT NULL UNIQUE, "
               "status text NOT NULL, attempts integer NOT NULL DEFAULT 0, started_at timestamptz NOT NULL, "
               "ready_at timestamptz, rows bigint, error text)")


def migrate(db: psycopg.Connection[Any]) -> list[str]:
    """Apply pending migrations in order, in one transaction (`db` is in autocommit mode); returns their names."""
    with db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        db.execute("CREATE TABLE IF NOT EXISTS _migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL)")
        with db.cursor(row_factory=tuple_row) as cur:
            done = {row[0] for row in cur.execute("SELECT name FROM _migrations").fetchall()}
        applied = []
        for name, fn in MIGRATIONS:
            if name in done:
                continue
            fn(db)
            db.execute("INSERT INTO _migrations (name, applied_at) VALUES (%s, now())", (name,))
            applied.append(name)
    return applied
