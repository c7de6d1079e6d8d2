"""The store for teams: PostgreSQL with pgvector, shared by any number of API processes on any number of machines.

Nothing is cached in process: every read asks the database, so a worker never serves what another worker changed
(the SQLite store's per-scope vector cache has no counterpart here). Connections come from a psycopg pool.

- Vector search is exact within the scope while the scope (with the filter) is small, and every nearest memory is
  found: the scope's memories are read with their vectors from one index (memories_user_vectors, for vectors of up
  to 384 dimensions) and pgvector scores them all. Whether the scope is small is counted first, without the vectors,
  up to one past the bound. The scope is searched exactly up to max(EXACT_SCAN_FLOOR, sqrt(_INDEX_COST_RATIO x all
  memories)). Larger scopes are searched with an HNSW index: the user's own (scope_indexes.py: a partial index of
  that user's memories, asked for by the first search that finds the scope past the bound and built in the
  background, ~1 minute per 100k memories), and until it is ready the global one. The global graph holds everyone's
  memories, and the search walks past the others': pgvector's iterative scan is asked for HnswSearch.candidates of
  the scope (200) and the best are kept, and recall@10 stays at 0.89-0.95 at 100k of 1M whatever the settings. The
  user's own graph holds the scope alone: SCOPE_HNSW_SEARCH (ef_search 1000) finds more in a fraction of the time.
  Measured by bench/pg_vectors.py on 1M memories shaped like e5's over 10k users, one run each on the same loaded
  store (2 cores, load 2-7; bench/results/pg_vectors.json, pg_vectors-before-own-indexes.json): the exact scan
  takes ~1.6 ms per 1,000 memories of the scope (1k: 3 ms p50, 10k: 16 ms); at 100k the user's own index: recall@10
  0.983, vector_search p50/p99 38/95 ms, Memory.search 55/158 ms; the global one: 0.950, 104/237 ms, 80/190 ms (an
  earlier run at load 10-12: 0.939, 184/501 ms, 155/329 ms).
- Keyword search matches jiyi.text's terms with a GIN index on `keywords` (and CJK words as substrings of the
  memory's CJK characters, as the SQLite store's phrase queries do) and ranks with BM25, using document frequencies
  kept in keyword_stats in the same transactions as the memories (of the terms and of the CJK characters). Each
  memory a word matches in the store is read to check its scope, so the work is bounded by KEYWORD_SCAN_ROWS: the
  rarest words while their matches add up to it find all of theirs, the others are looked for among the scope's
  newest KEYWORD_SCAN_ROWS memories.
- The history table is the change log the webhooks read past a cursor, so its positions must follow commit order:
  a writer takes a transaction-level advisory lock before its first history row and keeps it to its commit.
"""

from __future__ import annotations

import logging
import math
import time
import weakref
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np
import psycopg
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import dict_row, tuple_row
from psycopg.types import TypeInfo
from psycopg_pool import ConnectionPool, PoolTimeout

from jiyi.errors import BackendUnavailable, ConfigError, Conflict, EmbeddingMismatch, InvalidInput
from jiyi.filters import Node
from jiyi.keys import ApiKey
from jiyi.records import (
    Category,
    HistoryEvent,
    MemoryRecord,
    Scope,
    StoredMessage,
    TurnRecord,
    TurnStatus,
)
from jiyi.stores import graph_tables
from jiyi.stores.base import (
    BROWSE_ORDERS,
    ConsoleSession,
    ConsoleStore,
    Entity,
    KeyStore,
    MemoryStore,
    RecordPage,
    ScopeTally,
    ScoredId,
    SessionStore,
    Tally,
    Vitals,
    WebhookStore,
)
from jiyi.stores.entities import EntityMerge, EntityStore, Graph, GraphChange, GraphEntity, GraphEvent, GraphRelation
from jiyi.stores.postgres.codec import (
    CHAR_PREFIX,
    DELIVERY_COLUMNS,
    HISTORY_COLUMNS,
    MEMORY_COLUMNS,
    MEMORY_FROM,
    MEMORY_SELECT,
    MESSAGE_COLUMNS,
    TURN_COLUMNS,
    WEBHOOK_COLUMNS,
    Row,
    add_keyword_stats,
    delivery_params,
    history_params,
    json_text,
    keyword_columns,
    keyword_counts,
    memory_params,
    message_params,
    register_vector,
    row_to_delivery,
    row_to_history,
    row_to_key,
    row_to_memory,
    row_to_message,
    row_to_turn,
    row_to_webhook,
    turn_params,
    utc,
    webhook_params,
)
from jiyi.stores.postgres.migrations import BINDING_LOCK, CHANGE_LOG_LOCK, WEBHOOK_CURSOR, migrate
from jiyi.stores.postgres.scope_indexes import ScopeIndexer, ann_expression, drop_scope_indexes, state_sql
from jiyi.stores.postgres.sql_filters import Params, to_sql
from jiyi.text import has_cjk
from jiyi.tracing import store_call
from jiyi.webhooks.model import Change, Webhook, WebhookDelivery

log = logging.getLogger(__name__)

# Scopes with more candidates than max(EXACT_SCAN_FLOOR, sqrt(_INDEX_COST_RATIO x all memories)) are searched with
# the HNSW index (measured: see the module's docstring and below).
EXACT_SCAN_FLOOR = 10_000
_INDEX_COST_RATIO = 1000


@dataclass(frozen=True, slots=True)
class HnswSearch:
    """How a scope too large to score whole is searched with the HNSW index (pgvector's settings, set for that one
    query): the index is asked for its `candidates` nearest rows of the scope (at least the number of hits wanted),
    and the best of them are kept. `ef_search`: how many candidates the graph search keeps as it goes;
    `iterative_scan`: pgvector's iterative scan mode, which goes on through the graph until enough rows pass the
    scope and the filter; `max_scan_tuples`: index rows visited before it gives up (the scope is then scored
    whole). The defaults are measured: see the module's docstring."""

    candidates: int = 200
    ef_search: int = 40
    iterative_scan: str = "relaxed_order"
    max_scan_tuples: int = 20_000

    def __post_init__(self) -> None:
        if self.candidates < 1:
            raise ConfigError(f"candidates must be at least 1, got {self.candidates}")
        if not 1 <= self.ef_search <= 1000:  # pgvector's own bounds
            raise ConfigError(f"ef_search must be between 1 and 1000, got {self.ef_search}")
        if self.iterative_scan not in ("relaxed_order", "strict_order"):
            raise ConfigError(f"iterative_scan must be relaxed_order or strict_order, got {self.iterative_scan!r}")
        if self.max_scan_tuples < 1:
            raise ConfigError(f"max_scan_tuples must be at least 1, got {self.max_scan_tuples}")


# How a scope with an HNSW index of its own (scope_indexes.py) is searched: its graph holds the scope alone, so
# recall is bought with ef_search, and candidates past the hits wanted add nothing. At 100k memories (of 1M, e5's
# shape), recall@10 was 0.80 / 0.89 / 0.95 / 0.97 / 0.98 / 0.99 at ef_search 40 / 100 / 200 / 300 / 400 / 600
# on 100 of the queries, 8-30 ms (bench/pg_vectors.py --sweep; bench/results/pg_vectors-own-index-sweep.json); on
# all 600, 0.958 at 400 (bench/corpus.py's queries 0.90) and 0.983 at 1,000 (0.95), p50/p99 17/30 and 26/39 ms.
# pgvector's largest ef_search: the ~10 ms buy the margin over 0.95.
SCOPE_HNSW_SEARCH = HnswSearch(candidates=40, ef_search=1000)
# The HNSW graphs' build parameters, pgvector's (m, ef_construction): see migration m017.
HNSW_BUILD = (16, 128)
# A btree entry holds at most ~2,700 bytes: the index exact searches read carries the vector up to this dimension
# (the default embedder's), with room to spare for the ids beside it; wider vectors are read from the table.
SCAN_INDEX_MAX_DIMS = 384
KEYWORD_SCAN_ROWS = 5000  # see keyword_search
KEYWORD_COMMON_ROWS = 1000
_BM25_K1, _BM25_B = 1.2, 0.75  # FTS5's, as in the SQLite store
_CHARS_WEIGHT = 0.6  # a CJK word found among the characters weighs this much of a word found among the terms
_POOL_OPTIONS = {"pool_min_size": 1, "pool_max_size": 10}
_TRUSTED_FOR = 2.0  # seconds after its last use that a pooled connection is handed out without a check
_OWNER_COLUMNS = {"user": "user_id", "agent": "agent_id", "run": "run_id"}

_INSERT_MEMORY = (f"INSERT INTO memories ({', '.join(MEMORY_COLUMNS)}, embedding, keywords, cjk) "
                  f"VALUES ({', '.join('%s' for _ in MEMORY_COLUMNS)}, %s, %s, %s)")
# Every column but the id and the version, which only the store moves on (+ 1 per change).
_UPDATED_COLUMNS = [c for c in MEMORY_COLUMNS[1:] if c != "version"]
_INSERT_MESSAGE = (f"INSERT INTO messages ({', '.join(MESSAGE_COLUMNS)}) "
                   f"VALUES ({', '.join('%s' for _ in MESSAGE_COLUMNS)})")
# A history row and its place in the change log, skipped whole when an import brings a row it already has.
_INSERT_HISTORY = (f"WITH row AS (INSERT INTO history ({', '.join(HISTORY_COLUMNS)}) "
                   f"VALUES ({', '.join('%s' for _ in HISTORY_COLUMNS)}) {{conflict}} RETURNING id) "
                   "INSERT INTO history_log (history_id, reason) SELECT id, %s FROM row")
_SET_ACCESS = ("INSERT INTO memory_access (memory_id, access_count, last_accessed_at) VALUES (%s, %s, %s) "
               "ON CONFLICT (memory_id) DO UPDATE SET access_count = excluded.access_count, "
               "last_accessed_at = excluded.last_accessed_at")
# A delivery is queued only while its webhook exists (a delete may land between the fan-out's read and its write).
_ENQUEUE_DELIVERY = (f"INSERT INTO webhook_deliveries ({', '.join(DELIVERY_COLUMNS)}) "
                     f"SELECT {', '.join('%s' for _ in DELIVERY_COLUMNS)} WHERE EXISTS "
                     "(SELECT 1 FROM webhooks WHERE id = %s) ON CONFLICT (webhook_id, change_id) DO NOTHING")
_DUE_DELIVERY = ("d.status = 'pending' AND d.next_attempt_at <= %(now)s "
                 "AND (d.lease_until IS NULL OR d.lease_until < %(now)s)")


def _split_url(url: str) -> tuple[str, dict[str, int]]:
    """The libpq connection string, and jiyi's own options taken out of the URL's query (?pool_max_size=20)."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    options = dict(_POOL_OPTIONS)
    kept = []
    for key, value in query:
        if key in _POOL_OPTIONS:
            try:
                options[key] = int(value)
            except ValueError:
                raise ConfigError(f"{key} in the store URL must be a whole number, got {value!r}") from None
        else:
            kept.append((key, value))
    if options["pool_min_size"] < 0 or options["pool_max_size"] < max(1, options["pool_min_size"]):
        raise ConfigError("the store URL's pool_max_size must be at least 1 and at least pool_min_size")
    return urlunsplit(parts._replace(query=urlencode(kept))), options


def _where(conninfo: str) -> str:
    """host:port/dbname for messages: never the password."""
    try:
        info = conninfo_to_dict(conninfo)
    except psycopg.ProgrammingError as exc:
        raise ConfigError(f"not a valid PostgreSQL URL: {exc}") from None
    return f"{info.get('host') or 'localhost'}:{info.get('port') or 5432}/{info.get('dbname') or ''}"


def _scope_sql(scope: Scope, p: Params, alias: str = "m") -> str:
    return " AND ".join(f"{alias}.{key} = {p.add(value)}" for key, value in scope.as_dict().items()) or "true"


def _live_sql(p: Params, include_expired: bool) -> str:
    if include_expired:
        return "m.deleted_at IS NULL"
    return f"m.deleted_at IS NULL AND (m.expiration_date IS NULL OR m.expiration_date > {p.add(datetime.now(UTC))})"


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part.isdigit())


def _check_version(memory_id: str, current: int, expected: int | None) -> None:
    # Read with FOR UPDATE inside the write transaction: no other writer can move it meanwhile.
    if expected is not None and current != expected:
        raise Conflict(f"memory {memory_id} is at version {current}, not {expected}: it changed since it was read")


class PostgresStore(MemoryStore, KeyStore, SessionStore, ConsoleStore, EntityStore, WebhookStore):
    db_system = "postgresql"  # OpenTelemetry's db.system.name, on the spans of @store_call methods

    def __init__(self, url: str, *, exact_scan_limit: int | None = None, hnsw_search: HnswSearch | None = None,
                 scope_indexes: bool = True, scope_hnsw_search: HnswSearch = SCOPE_HNSW_SEARCH,
                 connect_timeout: float = 10.0) -> None:
        """`url`: postgresql://user:password@host:port/dbname, with libpq's options in its query, and the pool's
        size as pool_min_size / pool_max_size (default 1 and 10). `exact_scan_limit`: the largest scope searched
        exactly; by default it grows with the store (see the module's docstring). `hnsw_search`: how larger ones
        are searched with the global index (HnswSearch's defaults are the measured ones). `scope_indexes`: whether
        a user whose memories are searched past the limit gets an HNSW index of their own, built in the background
        (scope_indexes.py); `scope_hnsw_search`: how a scope with one is searched."""
        self.url = url
        self.exact_scan_limit = exact_scan_limit
        self.hnsw_search = hnsw_search or HnswSearch()
        self.scope_indexes = scope_indexes
        self.scope_hnsw_search = scope_hnsw_search
        self._timeout = connect_timeout
        conninfo, options = _split_url(url)
        self._where = _where(conninfo)
        self._indexer = ScopeIndexer(conninfo, HNSW_BUILD, connect_timeout)
        try:
            with psycopg.connect(conninfo, autocommit=True, row_factory=dict_row,
                                 connect_timeout=max(1, round(connect_timeout))) as db:
                migrate(db)
                info = TypeInfo.fetch(db, "vector")
                row = db.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
                version = row["extversion"] if row else "0"
                # Iterative index scans (pgvector 0.8) are what make the HNSW index usable within one scope: an
                # older pgvector gets exact search only, and no index to keep up.
                self._hnsw = _version(version) >= (0, 8)
                if not self._hnsw:
                    log.warning("pgvector %s is older than 0.8: vector search stays exact in every scope", version)
                binding = self._binding(db)
                if binding is not None:  # made before an upgrade of pgvector, say
                    self._index_scopes_vectors(db, binding[1])
                    if self._hnsw:
                        self._index_vectors(db, binding[1])
        except (pg_errors.InsufficientPrivilege, pg_errors.UndefinedFile, pg_errors.FeatureNotSupported) as exc:
            raise ConfigError(
                f"PostgreSQL at {self._where} could not be prepared for jiyi: {exc.diag.message_primary or exc}. "
                "jiyi needs the pgvector extension (a superuser runs `CREATE EXTENSION vector` once in the "
                "database) and a user that may create tables in it") from None
        except psycopg.OperationalError as exc:
            raise BackendUnavailable(f"cannot connect to PostgreSQL at {self._where}: {exc}") from None
        assert info is not None  # migration m001 created the extension
        self._vector_oid = info.oid
        self._last_used: weakref.WeakKeyDictionary[psycopg.Connection[Any], float] = weakref.WeakKeyDictionary()
        self._pool: ConnectionPool[psycopg.Connection[Row]] = ConnectionPool(
            conninfo,
            min_size=options["pool_min_size"],
            max_size=options["pool_max_size"],
            kwargs={"autocommit": True, "row_factory": dict_row},
            configure=self._configure,
            check=self._check,
            timeout=connect_timeout,
            name=f"jiyi {self._where}",
            open=False,
        )
        try:
            self._pool.open(wait=True, timeout=connect_timeout)
        except PoolTimeout as exc:
            self._pool.close()
            raise BackendUnavailable(f"cannot connect to PostgreSQL at {self._where}: {exc}") from None

    def _check(self, conn: psycopg.Connection[Any]) -> None:
        """A connection that sat idle is tried before it is handed out (one round trip), so one that a restart or
        a failover broke is replaced instead of failing a request; one used a moment ago is trusted."""
        if time.monotonic() - self._last_used.get(conn, 0.0) > _TRUSTED_FOR:
            ConnectionPool.check_connection(conn)

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        register_vector(conn.adapters, self._vector_oid)
        # Short queries: JIT compilation (where the server has it) would cost more than it saves. Scopes differ by
        # orders of magnitude in size: a statement is planned for its own values, never with a generic plan.
        conn.execute("SET jit = off")
        conn.execute("SET plan_cache_mode = force_custom_plan")

    # --- plumbing --------------------------------------------------------------------------------------------

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Row]]:
        """A pooled connection in autocommit mode, with PostgreSQL's errors turned into jiyi's."""
        try:
            with self._pool.connection(timeout=self._timeout) as conn:
                try:
                    yield conn
                finally:
                    self._last_used[conn] = time.monotonic()
        except PoolTimeout as exc:
            raise BackendUnavailable(f"no connection to PostgreSQL at {self._where} within {self._timeout:g} s "
                                     "(the pool is exhausted or the server is down)") from exc
        except psycopg.DataError as exc:
            message = str(exc.diag.message_primary or exc)
            if "dimensions" in message:  # pgvector: "expected 384 dimensions, not 387"
                raise EmbeddingMismatch(f"{message}: this store holds vectors of another dimension") from None
            raise InvalidInput(f"PostgreSQL cannot store this value: {message}") from None
        except psycopg.OperationalError as exc:
            raise BackendUnavailable(f"PostgreSQL at {self._where} failed: {exc}") from exc

    @contextmanager
    def _write(self) -> Iterator[psycopg.Connection[Row]]:
        with self._connection() as conn, conn.transaction():
            yield conn

    def _fetch(self, sql: str, params: Any = None) -> list[Row]:
        """One statement on its own (autocommit), its rows."""
        with self._connection() as conn:
            return conn.execute(sql, params).fetchall()

    @staticmethod
    def _log_lock(db: psycopg.Connection[Row]) -> None:
        """Taken before a transaction's first history row and held to its commit: change-log positions are then
        handed out in commit order, and a reader past position n never misses a row committed later below n."""
        db.execute("SELECT pg_advisory_xact_lock(%s)", (CHANGE_LOG_LOCK,))

    def _insert_history(self, db: psycopg.Connection[Row], events: Sequence[HistoryEvent],
                        ignore_existing: bool = False) -> None:
        if not events:
            return
        self._log_lock(db)
        sql = _INSERT_HISTORY.format(conflict="ON CONFLICT (id) DO NOTHING" if ignore_existing else "")
        with db.cursor() as cur:
            cur.executemany(sql, [(*history_params(e), e.reason) for e in events])

    # --- embedding binding ----------------------------------------------------------------------------------

    @staticmethod
    def _binding(db: psycopg.Connection[Row]) -> tuple[str, int] | None:
        rows = db.execute("SELECT key, value FROM meta WHERE key IN ('embedding_model', 'embedding_dims')").fetchall()
        values = {row["key"]: row["value"] for row in rows}
        if "embedding_model" not in values:
            return None
        return values["embedding_model"], int(values.get("embedding_dims") or 0)

    def bind_embedding(self, model_id: str, dims: int) -> None:
        with self._connection() as conn:
            stored = self._binding(conn)
        if stored is None:
            with self._write() as db:
                db.execute("SELECT pg_advisory_xact_lock(%s)", (BINDING_LOCK,))
                stored = self._binding(db)
                if stored is None:
                    self._type_vectors(db, dims)
                    db.execute("INSERT INTO meta (key, value) VALUES ('embedding_model', %s), ('embedding_dims', %s)",
                               (model_id, str(dims)))
                    return
        if stored != (model_id, dims):
            raise EmbeddingMismatch(
                f"postgresql://{self._where} holds vectors of {stored[0]} ({stored[1]} dims) but the configured "
                f"embedder is {model_id} ({dims} dims); use the same embedder, or a new store (or re-embed with "
                "`jiyi export` + `jiyi import`)"
            )

    def _type_vectors(self, db: psycopg.Connection[Row], dims: int) -> None:
        """Give the vector column its dimension and build the vector indexes (on an empty table, at once)."""
        row = db.execute("SELECT atttypmod FROM pg_attribute WHERE attrelid = 'memories'::regclass "
                         "AND attname = 'embedding'").fetchone()
        if row is None or row["atttypmod"] != dims:
            db.execute("DROP INDEX IF EXISTS memories_embedding_hnsw")
            drop_scope_indexes(db)
            db.execute("DROP INDEX IF EXISTS memories_user_vectors")
            try:
                db.execute(f"ALTER TABLE memories ALTER COLUMN embedding TYPE vector({int(dims)})")
            except psycopg.DataError as exc:
                raise EmbeddingMismatch(f"the store holds vectors of another dimension than {dims}: "
                                        f"{exc.diag.message_primary}") from None
        self._index_scopes_vectors(db, dims)
        if self._hnsw:
            self._index_vectors(db, dims)

    @staticmethod
    def _index_scopes_vectors(db: psycopg.Connection[Row], dims: int) -> None:
        """The index an exact search reads: each user's memories with their vectors and what a search filters on,
        so the scope is scored from the index alone instead of one table page per memory (see migration m019)."""
        present = db.execute("SELECT to_regclass('memories_user_vectors') IS NOT NULL AS present").fetchone()
        if dims <= SCAN_INDEX_MAX_DIMS and not (present and present["present"]):
            db.execute("CREATE INDEX IF NOT EXISTS memories_user_vectors ON memories (user_id) "
                       "INCLUDE (agent_id, run_id, category, expiration_date, id, seq, embedding) "
                       "WHERE deleted_at IS NULL")

    @staticmethod
    def _index_vectors(db: psycopg.Connection[Row], dims: int, build: tuple[int, int] = HNSW_BUILD) -> None:
        ann = ann_expression(dims)
        # Looked up first: CREATE INDEX IF NOT EXISTS would lock out writers even when the index is there.
        present = db.execute("SELECT to_regclass('memories_embedding_hnsw') IS NOT NULL AS present").fetchone()
        if ann is not None and not (present and present["present"]):
            expression, opclass = ann
            m, ef_construction = build
            db.execute(f"CREATE INDEX IF NOT EXISTS memories_embedding_hnsw ON memories USING hnsw "
                       f"({expression} {opclass}) WITH (m = {int(m)}, ef_construction = {int(ef_construction)}) "
                       "WHERE deleted_at IS NULL")

    def embedding_binding(self) -> tuple[str, int] | None:
        with self._connection() as conn:
            return self._binding(conn)

    # --- writes ---------------------------------------------------------------------------------------------

    @store_call("insert")
    def insert(self, records: Sequence[MemoryRecord], vectors: np.ndarray, history: Sequence[HistoryEvent]) -> None:
        vectors = np.asarray(vectors, dtype=np.float32).reshape(len(records), -1) if records else vectors
        rows, access = [], []
        stats: Counter[str] = Counter()
        length = docs = 0
        for record, vector in zip(records, vectors, strict=True):
            if vector.ndim != 1:
                raise EmbeddingMismatch(f"a memory's vector must be one-dimensional, got shape {vector.shape}")
            record.scope.require()
            keywords: list[str] | None = None
            cjk = None
            if record.deleted_at is None:  # imported deleted records keep their audit trail, not their index
                keywords, cjk = keyword_columns(record.content)
                terms, size = keyword_counts(keywords)
                stats.update(terms)
                length, docs = length + size, docs + 1
            rows.append((*memory_params(record), vector, keywords, cjk))
            if record.access_count or record.last_accessed_at:
                access.append((record.id, int(record.access_count), utc(record.last_accessed_at)))
        try:
            with self._write() as db:
                with db.cursor() as cur:
                    cur.executemany(_INSERT_MEMORY, rows)
                    if access:
                        cur.executemany(_SET_ACCESS, access)
                self._insert_history(db, history)
                add_keyword_stats(db, stats, length, docs)
        except pg_errors.UniqueViolation as exc:
            raise InvalidInput(f"a memory with this id already exists ({exc.diag.message_detail})") from None

    @store_call("update")
    def update(self, record: MemoryRecord, vector: np.ndarray | None, history: HistoryEvent | None, *,
               expected_version: int | None = None) -> None:
        with self._write() as db:
            row = db.execute("SELECT version, content, keywords FROM memories WHERE id = %s AND deleted_at IS NULL "
                             "FOR UPDATE", (record.id,)).fetchone()
            if row is None:
                raise InvalidInput(f"memory {record.id} does not exist or was deleted")
            _check_version(record.id, row["version"], expected_version)
            values = dict(zip(MEMORY_COLUMNS, memory_params(record), strict=True))
            changes = {c: values[c] for c in _UPDATED_COLUMNS}
            if vector is not None:
                if np.asarray(vector).ndim != 1:
                    raise EmbeddingMismatch("a memory's vector must be one-dimensional")
                changes["embedding"] = np.asarray(vector)
            reindexed = row["content"] != record.content
            if reindexed:
                changes["keywords"], changes["cjk"] = keyword_columns(record.content)
            # One new version of the row (and of its index entries, the HNSW graph's included) per update.
            db.execute(f"UPDATE memories SET {', '.join(f'{c} = %s' for c in changes)}, version = version + 1 "
                       "WHERE id = %s", (*changes.values(), record.id))
            if record.access_count or record.last_accessed_at:
                db.execute(_SET_ACCESS, (record.id, int(record.access_count), utc(record.last_accessed_at)))
            else:  # never read: no row, as after insert
                db.execute("DELETE FROM memory_access WHERE memory_id = %s", (record.id,))
            record.version = row["version"] + 1
            if history is not None:
                self._insert_history(db, [history])
            if reindexed:
                old_terms, old_length = keyword_counts(row["keywords"])
                new_terms, new_length = keyword_counts(changes["keywords"])
                moved = Counter(new_terms)
                moved.subtract(old_terms)
                add_keyword_stats(db, moved, new_length - old_length, 0)

    @store_call("delete")
    def soft_delete(self, memory_id: str, reason: str, history: HistoryEvent, when: datetime, *,
                    expected_version: int | None = None) -> None:
        with self._write() as db:
            row = db.execute("SELECT version, keywords FROM memories WHERE id = %s AND deleted_at IS NULL FOR UPDATE",
                             (memory_id,)).fetchone()
            if row is None:
                raise InvalidInput(f"memory {memory_id} does not exist or was deleted")
            _check_version(memory_id, row["version"], expected_version)
            db.execute("UPDATE memories SET deleted_at = %s, delete_reason = %s, updated_at = %s, "
                       "version = version + 1, keywords = NULL, cjk = NULL WHERE id = %s",
                       (utc(when), reason, utc(when), memory_id))
            self._insert_history(db, [history])
            graph_tables.drop_support(db, graph_tables.POSTGRES, memory_id, when)
            if row["keywords"] is not None:
                terms, length = keyword_counts(row["keywords"])
                add_keyword_stats(db, Counter({term: -1 for term in terms}), -length, -1)

    @store_call("insert", "history")
    def add_history(self, events: Sequence[HistoryEvent]) -> None:
        with self._write() as db:
            self._insert_history(db, events, ignore_existing=True)

    @store_call("record_access")
    def record_access(self, memory_ids: Sequence[str], when: datetime) -> None:
        if not memory_ids:
            return
        counts = Counter(memory_ids)
        ids = sorted(counts)
        with self._connection() as db:
            # Rows locked in id order: two workers counting overlapping reads never deadlock.
            db.execute(
                "INSERT INTO memory_access (memory_id, access_count, last_accessed_at) "
                "SELECT c.id, c.n, %s FROM unnest(%s::text[], %s::bigint[]) AS c(id, n) "
                "WHERE EXISTS (SELECT 1 FROM memories m WHERE m.id = c.id) ORDER BY c.id "
                "ON CONFLICT (memory_id) DO UPDATE SET "
                "access_count = memory_access.access_count + excluded.access_count, "
                "last_accessed_at = excluded.last_accessed_at",
                (utc(when), ids, [counts[i] for i in ids]),
            )

    def add_messages(self, messages: Sequence[StoredMessage]) -> None:
        if not messages:
            return
        with self._write() as db, db.cursor() as cur:
            cur.executemany(_INSERT_MESSAGE, [message_params(m) for m in messages])

    def reset(self) -> None:
        with self._write() as db:
            self._log_lock(db)
            # RESTART IDENTITY: the change log starts again at 1; webhooks (which stay) hear it from there.
            db.execute("TRUNCATE memories, memory_access, history, history_log, messages, meta, keyword_stats, "
                       "turns, state, " + ", ".join(graph_tables.TABLES) + " RESTART IDENTITY")
            drop_scope_indexes(db)
            db.execute("UPDATE webhooks SET after_change = 0")

    def close(self) -> None:
        self._indexer.close()
        self._pool.close()

    def index_scope(self, user_id: str) -> str:
        """Build the user's own HNSW index now (what a search past the exact-scan limit has built in the
        background): 'built', 'ready' (it was there), 'busy' (another process is building it), 'none' (no vectors
        bound, or too wide for an index)."""
        try:
            return self._indexer.build(user_id)
        except psycopg.OperationalError as exc:
            raise BackendUnavailable(f"PostgreSQL at {self._where} failed: {exc}") from exc

    def wait_for_scope_indexes(self, timeout: float | None = None) -> None:
        """Until the indexes searches have asked for so far are built (or `timeout` seconds)."""
        self._indexer.wait(timeout)

    # --- the entity graph (stores/entities.py EntityStore; the statements are stores/graph_tables.py) ---------

    def graph(self, user_id: str) -> Graph:
        with self._connection() as db:
            return graph_tables.read_graph(db, graph_tables.POSTGRES, user_id)

    def current_graph(self, user_id: str) -> Graph:
        with self._connection() as db:
            return graph_tables.read_current_graph(db, graph_tables.POSTGRES, user_id)

    def save_graph(self, user_id: str, change: GraphChange, when: datetime) -> None:
        with self._write() as db:
            graph_tables.save_graph(db, graph_tables.POSTGRES, user_id, change, when)

    def update_graph(self, user_id: str, edit: Callable[[Graph], GraphChange], when: datetime) -> GraphChange:
        with self._write() as db:
            # One user's graph updates run one after another (others' do not wait, bar a hash collision); the read
            # below then sees what the one before committed.
            graph_tables.lock_user(db, graph_tables.POSTGRES, user_id)  # the corrections' lock too (graph_tables)
            change = edit(graph_tables.read_graph(db, graph_tables.POSTGRES, user_id))
            if change:
                graph_tables.save_graph(db, graph_tables.POSTGRES, user_id, change, when)
            return change

    def entity_memories(self, user_id: str, entity_ids: Sequence[str], limit: int) -> list[str]:
        with self._connection() as db:
            return graph_tables.entity_memories(db, graph_tables.POSTGRES, user_id, entity_ids, limit)

    def graph_history(self, user_id: str, subject_id: str) -> list[GraphEvent]:
        with self._connection() as db:
            return graph_tables.graph_history(db, graph_tables.POSTGRES, user_id, subject_id)

    def forget_graph(self, user_id: str) -> None:
        with self._write() as db:
            graph_tables.forget_graph(db, graph_tables.POSTGRES, user_id)

    def entity_memory_counts(self, user_id: str) -> dict[str, int]:
        with self._connection() as db:
            return graph_tables.entity_memory_counts(db, graph_tables.POSTGRES, user_id)

    def merge_entities(self, user_id: str, keep_id: str, merge_id: str, when: datetime) -> EntityMerge:
        with self._write() as db:
            merged = graph_tables.merge_entities(db, graph_tables.POSTGRES, user_id, keep_id, merge_id, when)
            return merged

    def rename_entity(self, user_id: str, entity_id: str, name: str, when: datetime) -> GraphEntity:
        with self._write() as db:
            renamed = graph_tables.rename_entity(db, graph_tables.POSTGRES, user_id, entity_id, name, when)
            return renamed

    def close_relation(self, user_id: str, relation_id: str, when: datetime,
                       invalid_at: datetime | None = None) -> GraphRelation:
        with self._write() as db:
            closed = graph_tables.close_relation(db, graph_tables.POSTGRES, user_id, relation_id, when, invalid_at)
            return closed

    # --- reads ----------------------------------------------------------------------------------------------

    def get(self, memory_id: str, include_deleted: bool = False) -> MemoryRecord | None:
        sql = f"SELECT {MEMORY_SELECT} FROM {MEMORY_FROM} WHERE m.id = %s"
        if not include_deleted:
            sql += " AND m.deleted_at IS NULL"
        rows = self._fetch(sql, (memory_id,))
        return row_to_memory(rows[0]) if rows else None

    def get_many(self, memory_ids: Sequence[str]) -> dict[str, MemoryRecord]:
        if not memory_ids:
            return {}
        rows = self._fetch(f"SELECT {MEMORY_SELECT} FROM {MEMORY_FROM} WHERE m.id = ANY(%s) AND m.deleted_at IS NULL",
                          (list(dict.fromkeys(memory_ids)),))
        return {row["id"]: row_to_memory(row) for row in rows}

    def known_ids(self, memory_ids: Sequence[str]) -> set[str]:
        if not memory_ids:
            return set()
        rows = self._fetch("SELECT id FROM memories WHERE id = ANY(%s)", (list(dict.fromkeys(memory_ids)),))
        return {row["id"] for row in rows}

    def iter_records(self, scope: Scope | None = None, include_deleted: bool = False) -> Iterator[MemoryRecord]:
        last = 0
        while True:
            p = Params()
            where = f"m.seq > {p.add(last)}"
            if scope is not None and not scope.is_empty:
                where += " AND " + _scope_sql(scope, p)
            if not include_deleted:
                where += " AND m.deleted_at IS NULL"
            rows = self._fetch(f"SELECT m.seq, {MEMORY_SELECT} FROM {MEMORY_FROM} WHERE {where} ORDER BY m.seq "
                              "LIMIT 500", p)
            if not rows:
                return
            for row in rows:
                yield row_to_memory(row)
            last = rows[-1]["seq"]

    def _listing(self, p: Params, scope: Scope, where: Node | None, include_expired: bool, every_scope: bool) -> str:
        return " AND ".join([_scope_sql(scope if every_scope else scope.require(), p),
                             _live_sql(p, include_expired), to_sql(where, p)])

    def list_records(
        self,
        scope: Scope,
        where: Node | None = None,
        limit: int | None = None,
        include_expired: bool = False,
        offset: int = 0,
        every_scope: bool = False,
    ) -> list[MemoryRecord]:
        p = Params()
        sql = (f"SELECT {MEMORY_SELECT} FROM {MEMORY_FROM} "
               f"WHERE {self._listing(p, scope, where, include_expired, every_scope)} "
               "ORDER BY m.created_at DESC, m.seq DESC")
        if limit is not None:
            sql += f" LIMIT {p.add(int(limit))}"
        if offset:
            sql += f" OFFSET {p.add(int(offset))}"
        return [row_to_memory(row) for row in self._fetch(sql, p)]

    def count_records(self, scope: Scope, where: Node | None = None, include_expired: bool = False,
                      every_scope: bool = False) -> int:
        p = Params()
        rows = self._fetch(f"SELECT count(*) AS n FROM {MEMORY_FROM} "
                          f"WHERE {self._listing(p, scope, where, include_expired, every_scope)}", p)
        return int(rows[0]["n"])

    def entities(self, user_id: str | None = None) -> list[Entity]:
        found: list[Entity] = []
        with self._connection() as conn:
            for kind, column in (("user", "user_id"), ("agent", "agent_id"), ("run", "run_id")):
                p = Params()
                sql = (f"SELECT {column} AS name, count(*) AS n, min(created_at) AS first, "
                       "max(coalesce(updated_at, created_at)) AS last FROM memories "
                       f"WHERE deleted_at IS NULL AND category <> {p.add(Category.MESSAGE.value)} "
                       f"AND {column} IS NOT NULL")
                if user_id is not None:
                    sql += f" AND user_id = {p.add(user_id)}"
                rows = conn.execute(sql + f" GROUP BY {column} ORDER BY {column} COLLATE \"C\"", p).fetchall()
                found.extend(Entity(kind, row["name"], int(row["n"]), utc(row["first"]) or datetime.now(UTC),
                                    utc(row["last"]) or datetime.now(UTC)) for row in rows)
        return found

    @store_call("vector_search")
    def vector_search(
        self,
        scope: Scope,
        query: np.ndarray,
        limit: int,
        where: Node | None = None,
        include_expired: bool = False,
    ) -> list[ScoredId]:
        scope.require()
        query = np.asarray(query, dtype=np.float32)
        if query.ndim != 1:
            raise EmbeddingMismatch(f"a query vector must be one-dimensional, got shape {query.shape}")
        if limit <= 0:
            return []
        with self._connection() as conn:
            large, index = self._size_up(conn, scope, query.shape[0], limit, where)
            if large:
                if index == "wanted" and self.scope_indexes and scope.user_id is not None:
                    self._indexer.request(scope.user_id)
                settings = self.scope_hnsw_search if index == "ready" else self.hnsw_search
                hits = self._approximate_search(conn, scope, query, limit, where, include_expired, settings)
                if hits is not None and len(hits) >= limit:
                    return hits
                # The filter let too few of the index's nearest through: score the scope whole after all.
            p = Params()
            vector = p.add(query)
            sql = (f"SELECT m.id, -(m.embedding <#> {vector}) AS score FROM {MEMORY_FROM} "
                   f"WHERE {_scope_sql(scope, p)} AND {_live_sql(p, include_expired)} AND m.embedding IS NOT NULL "
                   f"AND {to_sql(where, p)} ORDER BY score DESC, m.seq LIMIT {p.add(int(limit))}")
            return [ScoredId(row["id"], float(row["score"])) for row in conn.execute(sql, p).fetchall()]

    def _size_up(self, conn: psycopg.Connection[Row], scope: Scope, dims: int, limit: int,
                 where: Node | None) -> tuple[bool, str | None]:
        """Whether more of the scope's memories pass the filter than an exact scan should score, and the state of
        its user's own index (scope_indexes.state_sql; None without a user). They are counted up to one past that
        bound without their vectors, from the scope's index where the filter allows it (an index-only scan:
        31,619 rows in 6.6 ms, where scoring them took ~120 ms; bench/results/pg_vectors.json). Expired memories
        are counted too: the bound is a cost, not a result."""
        if not self._hnsw or ann_expression(dims) is None:
            return False, None
        p = Params()
        if self.exact_scan_limit is None:
            # The planner's estimate of the table's rows: free, and close enough to place the crossover.
            most = (f"SELECT greatest({p.add(EXACT_SCAN_FLOOR)}, {p.add(int(limit))}, "
                    f"sqrt({_INDEX_COST_RATIO} * greatest(reltuples, 0)))::bigint AS most "
                    "FROM pg_class WHERE oid = 'memories'::regclass")
        else:
            most = f"SELECT {p.add(max(self.exact_scan_limit, int(limit)))}::bigint AS most"
        index = "NULL" if scope.user_id is None else state_sql(p.add(scope.user_id))
        sql = (f"WITH bound AS MATERIALIZED ({most}) SELECT (SELECT count(*) FROM (SELECT 1 FROM {MEMORY_FROM} "
               f"WHERE {_scope_sql(scope, p)} AND m.deleted_at IS NULL AND {to_sql(where, p)} "
               f"LIMIT (SELECT most FROM bound) + 1) s) > most AS large, {index} AS index FROM bound")
        row = conn.execute(sql, p).fetchone()
        return (bool(row["large"]), row["index"]) if row else (False, None)

    def _approximate_search(self, conn: psycopg.Connection[Row], scope: Scope, query: np.ndarray, limit: int,
                            where: Node | None, include_expired: bool, settings: HnswSearch) -> list[ScoredId] | None:
        """The HNSW index's nearest in the scope (the planner picks the user's own index where there is one), or
        None when this dimension has no index."""
        ann = ann_expression(query.shape[0])
        if ann is None or not self._hnsw:
            return None
        expression = "m." + ann[0] if ann[0] == "embedding" else ann[0].replace("embedding", "m.embedding")
        p = Params()
        vector = p.add(query)
        target = vector if ann[0] == "embedding" else f"{vector}::halfvec({query.shape[0]})"
        sql = (f"SELECT m.id, m.seq, {expression} <#> {target} AS distance FROM memories m "
               f"LEFT JOIN memory_access a ON a.memory_id = m.id WHERE {_scope_sql(scope, p)} "
               f"AND {_live_sql(p, include_expired)} AND {to_sql(where, p)} "
               f"ORDER BY {expression} <#> {target} LIMIT {p.add(max(settings.candidates, int(limit)))}")
        with conn.transaction():
            # Iterative scans go on through the graph until enough rows pass the scope and the filter (or
            # max_scan_tuples were visited). The planner is told not to prefer reading the whole scope, which is what
            # the caller decided against.
            conn.execute("SELECT set_config('hnsw.iterative_scan', %s, true), set_config('hnsw.ef_search', %s, true), "
                         "set_config('hnsw.max_scan_tuples', %s, true), set_config('enable_sort', 'off', true), "
                         "set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true)",
                         (settings.iterative_scan, str(settings.ef_search), str(settings.max_scan_tuples)))
            rows = conn.execute(sql, p).fetchall()
        # The candidates come in about the index's order (relaxed_order), each with its exact distance: the best
        # `limit` of them are kept.
        rows.sort(key=lambda row: (row["distance"], row["seq"]))
        return [ScoredId(row["id"], -float(row["distance"])) for row in rows[:limit]]

    @store_call("keyword_search")
    def keyword_search(
        self,
        scope: Scope,
        terms: Sequence[str],
        limit: int,
        where: Node | None = None,
        include_expired: bool = False,
    ) -> list[ScoredId]:
        scope.require()
        terms = [t for t in dict.fromkeys(terms) if t]
        if not terms or limit <= 0:
            return []
        chars = sorted({CHAR_PREFIX + c for t in terms if has_cjk(t) for c in t if has_cjk(c)})
        with self._connection() as conn:
            frequencies, total, length = self._keyword_stats(conn, [*terms, *chars])
            avgdl = max(length, 1) / max(total, 1)
            p = Params()
            scope_sql = f"{_scope_sql(scope, p)} AND {_live_sql(p, include_expired)} AND {to_sql(where, p)}"
            # Every memory a word matches in the store is read to see whether it is in the scope: a word in tens of
            # thousands of memories (住, live, 喜欢 in a large store) would cost seconds. So the words are taken
            # rarest first while the memories they can match add up to at most KEYWORD_SCAN_ROWS: those find all of
            # their memories in the scope, and they weigh the most in BM25. The commoner ones are looked for among
            # the scope's newest KEYWORD_SCAN_ROWS memories only (their newest KEYWORD_COMMON_ROWS matches kept).
            # Rows read: at most 2 x KEYWORD_SCAN_ROWS, whatever the words (bench/pg_vectors.py: at 1M memories, a
            # Chinese question's p99 went from 470 to ~100 ms).
            rare: list[str] = []
            budget = KEYWORD_SCAN_ROWS
            for term in sorted(terms, key=lambda t: self._matches_at_most(t, frequencies)):
                budget -= self._matches_at_most(term, frequencies)
                if budget < 0:
                    break
                rare.append(term)
            common = [t for t in terms if t not in rare]
            # BM25 with FTS5's k1 and b, IDF from keyword_stats (store-wide, as document_frequencies): a word's
            # frequency in a memory is its count among the terms, plus 0.6 x its count among the CJK characters.
            # Everything in float8: a numeric constant (0.6, avgdl) made PostgreSQL compute in numeric, ~3x slower.
            frequency, score = [], []
            for i, term in enumerate(terms):
                placeholder = p.add(term)
                count = f"cardinality(array_positions(m.keywords, {placeholder}))::float8"
                if has_cjk(term):
                    count += (f" + {_CHARS_WEIGHT}::float8 * ((length(m.cjk) - length(replace(m.cjk, {placeholder}, "
                              f"''))) / length({placeholder}))")
                frequency.append(f"{count} AS f{i}")
                df = frequencies.get(term, 0)
                idf = math.log(1 + (max(total - df, 0) + 0.5) / (df + 0.5))
                score.append(f"{idf!r}::float8 * t.f{i} / (t.f{i} + t.k)")
            # The frequencies are computed once per row where the row is found (OFFSET 0 keeps PostgreSQL from folding
            # that query into the outer one, which evaluated each of them twice), then weighed; the rows are not
            # looked up again by id (~20 % of the time with a thousand candidates).
            columns = (f"m.id, m.seq, {', '.join(frequency)}, {_BM25_K1}::float8 * ({1 - _BM25_B}::float8 + "
                       f"{_BM25_B}::float8 * cardinality(m.keywords) / {avgdl!r}::float8) AS k")
            if common:
                # The scope's newest rows first (its index's order), then the words: a word sparse in this scope
                # but common in the store does not walk the whole scope looking for its matches.
                found = [f"(SELECT {columns} FROM (SELECT m.id, m.seq, m.created_at, m.keywords, m.cjk "
                         f"FROM {MEMORY_FROM} WHERE {scope_sql} ORDER BY m.created_at DESC "
                         f"LIMIT {p.add(KEYWORD_SCAN_ROWS)}) m WHERE {self._matching(common, p)} "
                         f"ORDER BY m.created_at DESC LIMIT {p.add(KEYWORD_COMMON_ROWS)})"]
                if rare:  # a memory found both ways is the same row twice: UNION keeps one
                    found.append(f"SELECT {columns} FROM {MEMORY_FROM} WHERE {scope_sql} "
                                 f"AND {self._matching(rare, p)}")
                candidates = " UNION ".join(found)
            else:
                candidates = f"SELECT {columns} FROM {MEMORY_FROM} WHERE {scope_sql} AND {self._matching(terms, p)}"
            sql = (f"SELECT t.id, ({' + '.join(score)}) * {_BM25_K1 + 1}::float8 AS score "
                   f"FROM ({candidates} OFFSET 0) t ORDER BY score DESC, t.seq LIMIT {p.add(int(limit))}")
            rows = conn.execute(sql, p).fetchall()
        return [ScoredId(row["id"], float(row["score"])) for row in rows]

    @staticmethod
    def _matches_at_most(term: str, frequencies: dict[str, int]) -> int:
        """How many memories of the store a word can match: as a term, and for a Chinese word as its characters in
        a row, at most as many as hold its rarest character (钱: a term in no memory of bench/pg_vectors.py's 1M,
        a character of 54k)."""
        bound = frequencies.get(term, 0)
        if has_cjk(term):
            bound += min(frequencies.get(CHAR_PREFIX + c, 0) for c in term if has_cjk(c))
        return bound

    @staticmethod
    def _matching(terms: Sequence[str], p: Params) -> str:
        """A memory holds one of the words: as its term in the index or, for Chinese, its characters in a row (every
        character is looked up in the index, the row checked by substring, so 虾 finds 大虾 whatever jieba cut)."""
        matches = [f"m.keywords && {p.add(list(terms))}"]
        for term in terms:
            if has_cjk(term):
                chars = sorted({CHAR_PREFIX + c for c in term if has_cjk(c)})
                matches.append(f"(m.keywords @> {p.add(chars)} AND strpos(m.cjk, {p.add(term)}) > 0)")
        return f"({' OR '.join(matches)})"

    @staticmethod
    def _keyword_stats(conn: psycopg.Connection[Row], terms: Sequence[str]) -> tuple[dict[str, int], int, int]:
        """Document frequencies of these terms, how many memories are indexed, and their total length."""
        rows = conn.execute("SELECT term, sum(docs) AS docs, sum(length) AS length FROM keyword_stats "
                            "WHERE term = ANY(%s) GROUP BY term", ([*terms, ""],)).fetchall()
        counts = {row["term"]: (int(row["docs"]), int(row["length"])) for row in rows}
        total, length = counts.pop("", (0, 0))
        return {term: docs for term, (docs, _) in counts.items() if docs > 0}, total, length

    def document_frequencies(self, terms: Sequence[str]) -> tuple[dict[str, int], int]:
        terms = [t for t in dict.fromkeys(terms) if t]
        if not terms:
            return {}, 0
        with self._connection() as conn:
            frequencies, total, _ = self._keyword_stats(conn, terms)
        return frequencies, total

    @store_call("select", "history")
    def history(self, memory_id: str) -> list[HistoryEvent]:
        rows = self._fetch("SELECT h.*, l.reason FROM history h JOIN history_log l ON l.history_id = h.id "
                          "WHERE h.memory_id = %s ORDER BY h.created_at, l.position", (memory_id,))
        return [row_to_history(row) for row in rows]

    def purged_history(self) -> Iterator[HistoryEvent]:
        last = 0
        while True:
            rows = self._fetch("SELECT l.position, l.reason, h.* FROM history_log l "
                              "JOIN history h ON h.id = l.history_id WHERE l.position > %s "
                              "AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = h.memory_id) "
                              "ORDER BY l.position LIMIT 500", (last,))
            if not rows:
                return
            for row in rows:
                yield row_to_history(row)
            last = rows[-1]["position"]

    def list_messages(self, scope: Scope, limit: int | None = None, after: str | None = None) -> list[StoredMessage]:
        p = Params()
        sql = f"SELECT * FROM messages m WHERE {_scope_sql(scope.require(), p)}"
        if after is not None:
            sql += f" AND m.seq > coalesce((SELECT seq FROM messages WHERE id = {p.add(after)}), 0)"
        sql += " ORDER BY m.seq DESC"
        if limit is not None:
            sql += f" LIMIT {p.add(int(limit))}"
        return [row_to_message(row) for row in reversed(self._fetch(sql, p))]

    def get_messages(self, message_ids: Sequence[str]) -> list[StoredMessage]:
        if not message_ids:
            return []
        rows = self._fetch("SELECT * FROM messages WHERE id = ANY(%s) ORDER BY seq", (list(message_ids),))
        return [row_to_message(row) for row in rows]

    def previous_messages(self, message_ids: Sequence[str]) -> dict[str, str]:
        if not message_ids:
            return {}
        # One lookup per message down the index of its first present id (IS NOT DISTINCT FROM alone uses no index).
        def before(column: str) -> str:
            return (f"(SELECT p.id FROM messages p WHERE p.{column} = m.{column}"
                    " AND p.user_id IS NOT DISTINCT FROM m.user_id AND p.agent_id IS NOT DISTINCT FROM m.agent_id"
                    " AND p.run_id IS NOT DISTINCT FROM m.run_id AND p.seq < m.seq ORDER BY p.seq DESC LIMIT 1)")
        sql = (f"SELECT m.id, CASE WHEN m.user_id IS NOT NULL THEN {before('user_id')}"
               f" WHEN m.agent_id IS NOT NULL THEN {before('agent_id')} ELSE {before('run_id')} END AS previous"
               " FROM messages m WHERE m.id = ANY(%s)")
        rows = self._fetch(sql, (list(message_ids),))
        return {row["id"]: row["previous"] for row in rows if row["previous"] is not None}

    # --- the write path's queue ------------------------------------------------------------------------------

    def add_turn(self, turn: TurnRecord, messages: Sequence[StoredMessage]) -> None:
        with self._write() as db:
            with db.cursor() as cur:
                cur.executemany(_INSERT_MESSAGE, [message_params(m) for m in messages])
            db.execute(f"INSERT INTO turns ({', '.join(TURN_COLUMNS)}) "
                       f"VALUES ({', '.join('%s' for _ in TURN_COLUMNS)})", turn_params(turn))

    def get_turn(self, turn_id: str) -> TurnRecord | None:
        rows = self._fetch("SELECT * FROM turns WHERE id = %s", (turn_id,))
        return row_to_turn(rows[0]) if rows else None

    def save_turn(self, turn: TurnRecord) -> None:
        values = turn_params(turn)
        assignments = ", ".join(f"{column} = %s" for column in TURN_COLUMNS[1:])
        with self._connection() as conn:
            conn.execute(f"UPDATE turns SET {assignments} WHERE id = %s", (*values[1:], turn.id))

    def claim_turns(self, now: datetime, lease_until: datetime, limit: int, *,
                    abandoned_only: bool = False) -> list[TurnRecord]:
        # SKIP LOCKED: claimers in other processes take other turns instead of waiting; the due test is repeated
        # outside the subquery so that a turn another claimer just leased is seen as not due any more.
        statuses = "('processing')" if abandoned_only else "('queued', 'retry', 'processing')"
        due = (f"status IN {statuses} AND next_attempt_at <= %(now)s "
               "AND (status <> 'processing' OR lease_until IS NULL OR lease_until < %(now)s)")
        with self._connection() as conn:
            rows = conn.execute(
                f"WITH claimed AS MATERIALIZED (SELECT seq FROM turns WHERE {due} ORDER BY seq LIMIT %(limit)s "
                "FOR UPDATE SKIP LOCKED) UPDATE turns t SET status = 'processing', lease_until = %(lease)s "
                f"FROM claimed WHERE t.seq = claimed.seq AND {due} RETURNING t.*",
                {"now": utc(now), "lease": utc(lease_until), "limit": int(limit)},
            ).fetchall()
        rows.sort(key=lambda row: row["seq"])
        turns = [row_to_turn(row) for row in rows]
        for turn in turns:
            turn.status = TurnStatus.PROCESSING
        return turns

    def renew_turns(self, turn_ids: Sequence[str], lease_until: datetime) -> list[str]:
        if not turn_ids:
            return []
        rows = self._fetch("UPDATE turns SET lease_until = %s WHERE id = ANY(%s) AND status = 'processing' "
                           "RETURNING id", (utc(lease_until), list(turn_ids)))
        return [row["id"] for row in rows]

    def turn_counts(self) -> dict[str, int]:
        rows = self._fetch("SELECT status, count(*) AS n FROM turns GROUP BY status")
        return {row["status"]: int(row["n"]) for row in rows}

    def try_lock(self, name: str, holder: str, until: datetime) -> bool:
        # One statement: the row is taken if there is none, or taken over if its lease ran out; a row another
        # holder keeps is left as it is (and nothing is returned).
        rows = self._fetch(
            "INSERT INTO locks (name, holder, expires_at) VALUES (%s, %s, %s) ON CONFLICT (name) DO UPDATE "
            "SET holder = excluded.holder, expires_at = excluded.expires_at WHERE locks.expires_at < %s "
            "RETURNING holder", (name, holder, utc(until), datetime.now(UTC)))
        return bool(rows)

    def unlock(self, name: str, holder: str) -> None:
        with self._connection() as conn:
            conn.execute("DELETE FROM locks WHERE name = %s AND holder = %s", (name, holder))

    def renew_lock(self, name: str, holder: str, until: datetime) -> bool:
        return bool(self._fetch("UPDATE locks SET expires_at = %s WHERE name = %s AND holder = %s RETURNING name",
                                (utc(until), name, holder)))

    def claim_request(self, key: str, now: datetime, keep: timedelta) -> tuple[bool, str | None]:
        with self._write() as db:
            db.execute("DELETE FROM requests WHERE created_at < %s", (utc(now - keep),))
            if db.execute("INSERT INTO requests (key, response, created_at) VALUES (%s, NULL, %s) "
                          "ON CONFLICT (key) DO NOTHING RETURNING key", (key, utc(now))).fetchone():
                return True, None
            row = db.execute("SELECT response FROM requests WHERE key = %s", (key,)).fetchone()
        return False, row["response"] if row else None

    def finish_request(self, key: str, response: str | None) -> None:
        with self._connection() as conn:
            if response is None:
                conn.execute("DELETE FROM requests WHERE key = %s", (key,))
            else:
                conn.execute("UPDATE requests SET response = %s WHERE key = %s", (response, key))

    def get_state(self, key: str) -> str | None:
        rows = self._fetch("SELECT value FROM state WHERE key = %s", (key,))
        return rows[0]["value"] if rows else None

    def set_state(self, key: str, value: str) -> None:
        with self._connection() as conn:
            conn.execute("INSERT INTO state (key, value) VALUES (%s, %s) "
                         "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value))

    def get_vectors(self, memory_ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not memory_ids:
            return {}
        with self._connection() as conn, conn.cursor(binary=True) as cur:
            cur.execute("SELECT id, embedding FROM memories WHERE id = ANY(%s) AND deleted_at IS NULL "
                        "AND embedding IS NOT NULL", (list(dict.fromkeys(memory_ids)),))
            return {row["id"]: row["embedding"] for row in cur.fetchall()}

    def user_ids(self) -> list[str]:
        rows = self._fetch("SELECT user_id FROM memories WHERE deleted_at IS NULL AND user_id IS NOT NULL "
                           "GROUP BY user_id ORDER BY user_id COLLATE \"C\"")
        return [row["user_id"] for row in rows]

    def purge(self, deleted_before: datetime, scope: Scope | None = None) -> int:
        p = Params()
        where = f"m.deleted_at IS NOT NULL AND m.deleted_at < {p.add(utc(deleted_before))}"
        if scope is not None and not scope.is_empty:
            where += " AND " + _scope_sql(scope, p)
        with self._write() as db:
            # The audit trail stays (event, time, reason); what was remembered goes.
            row = db.execute(
                f"WITH gone AS (DELETE FROM memories m WHERE {where} RETURNING m.id), "
                "counts AS (DELETE FROM memory_access a USING gone WHERE a.memory_id = gone.id), "
                "scrubbed AS (UPDATE history h SET old_memory = NULL, new_memory = NULL FROM gone "
                "WHERE h.memory_id = gone.id) SELECT count(*) AS n FROM gone", p).fetchone()
        return int(row["n"]) if row else 0

    def count(self, scope: Scope | None = None) -> dict[str, int]:
        p = Params()
        where = _scope_sql(scope, p) if scope is not None and not scope.is_empty else "true"
        rows = self._fetch(f"SELECT layer, count(*) AS n FROM memories m WHERE {where} AND m.deleted_at IS NULL "
                          "GROUP BY layer", p)
        return {row["layer"]: int(row["n"]) for row in rows}

    # --- API keys -------------------------------------------------------------------------------------------

    def add_api_key(self, key: ApiKey) -> None:
        with self._connection() as conn:
            conn.execute("INSERT INTO api_keys (id, key_hash, scope, user_id, agent_id, name, created_at, "
                         "last_used_at, revoked_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                         (key.id, key.key_hash, key.scope.value, key.user_id, key.agent_id, key.name,
                          utc(key.created_at), utc(key.last_used_at), utc(key.revoked_at)))

    def api_key_by_hash(self, key_hash: str) -> ApiKey | None:
        rows = self._fetch("SELECT * FROM api_keys WHERE key_hash = %s", (key_hash,))
        return row_to_key(rows[0]) if rows else None

    def list_api_keys(self) -> list[ApiKey]:
        rows = self._fetch("SELECT * FROM api_keys ORDER BY created_at DESC, id COLLATE \"C\"")
        return [row_to_key(row) for row in rows]

    def revoke_api_key(self, key_id: str, when: datetime) -> bool:
        rows = self._fetch("UPDATE api_keys SET revoked_at = %s WHERE id = %s AND revoked_at IS NULL RETURNING id",
                          (utc(when), key_id))
        return bool(rows)

    def touch_api_key(self, key_id: str, when: datetime) -> None:
        with self._connection() as conn:
            conn.execute("UPDATE api_keys SET last_used_at = %s WHERE id = %s", (utc(when), key_id))

    def keys_issued(self) -> bool:
        return bool(self._fetch("SELECT 1 FROM api_keys LIMIT 1"))

    # --- console sign-ins (stores/base.py SessionStore) -----------------------------------------------------

    def add_console_session(self, session: ConsoleSession) -> None:
        with self._connection() as conn:
            conn.execute("INSERT INTO console_sessions (id_hash, sealed_key, opened_at, seen_at) "
                         "VALUES (%s, %s, %s, %s)",
                         (session.id_hash, session.sealed_key, utc(session.opened_at), utc(session.seen_at)))

    def console_session_by_hash(self, id_hash: str) -> ConsoleSession | None:
        rows = self._fetch("SELECT * FROM console_sessions WHERE id_hash = %s", (id_hash,))
        if not rows:
            return None
        row = rows[0]
        return ConsoleSession(row["id_hash"], row["sealed_key"], utc(row["opened_at"]) or datetime.now(UTC),
                              utc(row["seen_at"]) or datetime.now(UTC))

    def touch_console_session(self, id_hash: str, when: datetime) -> None:
        with self._connection() as conn:
            conn.execute("UPDATE console_sessions SET seen_at = %s WHERE id_hash = %s", (utc(when), id_hash))

    def delete_console_session(self, id_hash: str) -> bool:
        return bool(self._fetch("DELETE FROM console_sessions WHERE id_hash = %s RETURNING id_hash", (id_hash,)))

    def prune_console_sessions(self, seen_before: datetime, opened_before: datetime) -> int:
        with self._connection() as conn:
            return conn.execute("DELETE FROM console_sessions WHERE seen_at < %s OR opened_at < %s",
                                (utc(seen_before), utc(opened_before))).rowcount

    # --- webhooks and their delivery queue ------------------------------------------------------------------

    def add_webhook(self, webhook: Webhook) -> None:
        with self._write() as db:
            self._log_lock(db)  # no writer is between its first history row and its commit: the end is the end
            row = db.execute("SELECT coalesce(max(position), 0) AS n FROM history_log").fetchone()
            webhook.after_change = int(row["n"]) if row else 0
            db.execute(f"INSERT INTO webhooks ({', '.join(WEBHOOK_COLUMNS)}) "
                       f"VALUES ({', '.join('%s' for _ in WEBHOOK_COLUMNS)})", webhook_params(webhook))

    def get_webhook(self, webhook_id: str) -> Webhook | None:
        rows = self._fetch("SELECT * FROM webhooks WHERE id = %s", (webhook_id,))
        return row_to_webhook(rows[0]) if rows else None

    def list_webhooks(self, project_id: str | None = None) -> list[Webhook]:
        if project_id is None:
            rows = self._fetch("SELECT * FROM webhooks ORDER BY created_at, id COLLATE \"C\"")
        else:
            rows = self._fetch("SELECT * FROM webhooks WHERE project_id = %s ORDER BY created_at, id COLLATE \"C\"",
                               (project_id,))
        return [row_to_webhook(row) for row in rows]

    def save_webhook(self, webhook: Webhook) -> None:
        with self._connection() as conn:
            conn.execute("UPDATE webhooks SET name = %s, url = %s, event_types = %s, is_active = %s, updated_at = %s "
                         "WHERE id = %s", (webhook.name, webhook.url, json_text(webhook.event_types),
                                           bool(webhook.is_active), utc(webhook.updated_at), webhook.id))

    def delete_webhook(self, webhook_id: str) -> bool:
        # Its deliveries go with it (ON DELETE CASCADE).
        return bool(self._fetch("DELETE FROM webhooks WHERE id = %s RETURNING id", (webhook_id,)))

    def changes_after(self, position: int, limit: int) -> list[Change]:
        rows = self._fetch(
            "SELECT l.position, l.reason, h.*, m.id AS memory_row, m.user_id, m.agent_id, m.run_id, m.category, "
            "m.categories, m.content AS memory_content "
            "FROM history_log l JOIN history h ON h.id = l.history_id LEFT JOIN memories m ON m.id = h.memory_id "
            "WHERE l.position > %s ORDER BY l.position LIMIT %s", (int(position), int(limit)))
        return [Change(int(row["position"]), row_to_history(row),
                       Scope(row["user_id"], row["agent_id"], row["run_id"]) if row["memory_row"] else None,
                       row["category"], tuple(row["categories"] or ()), row["memory_content"]) for row in rows]

    def webhook_cursor(self) -> int:
        return int(self.get_state(WEBHOOK_CURSOR) or 0)

    def enqueue_deliveries(self, deliveries: Sequence[WebhookDelivery], cursor: int, new_cursor: int) -> bool:
        try:
            with self._write() as db:
                if cursor == 0:  # no row (a new store, or after a reset) also means 0
                    moved = db.execute(
                        "INSERT INTO state (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE "
                        "SET value = excluded.value WHERE state.value = '0' RETURNING key",
                        (WEBHOOK_CURSOR, str(new_cursor))).fetchone()
                else:
                    moved = db.execute("UPDATE state SET value = %s WHERE key = %s AND value = %s RETURNING key",
                                       (str(new_cursor), WEBHOOK_CURSOR, str(cursor))).fetchone()
                if moved is None:
                    return False
                if deliveries:
                    with db.cursor() as cur:
                        cur.executemany(_ENQUEUE_DELIVERY, [(*delivery_params(d), d.webhook_id) for d in deliveries])
        except pg_errors.ForeignKeyViolation:
            return False  # a webhook was deleted meanwhile: the next fan-out reads the same changes again
        return True

    def claim_deliveries(self, now: datetime, lease_until: datetime, limit: int,
                         exclude_webhooks: Sequence[str] = ()) -> list[WebhookDelivery]:
        params = {"now": utc(now), "lease": utc(lease_until), "limit": int(limit),
                  "excluded": list(exclude_webhooks)}
        due = (f"FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE {_DUE_DELIVERY} "
               "AND w.is_active AND NOT d.webhook_id = ANY(%(excluded)s)")
        with self._connection() as conn:
            if conn.execute(f"SELECT 1 {due} LIMIT 1", params).fetchone() is None:
                return []  # an idle sender polls without writing
            # The oldest due delivery of each webhook; SKIP LOCKED leaves those another sender is taking, and the due
            # test is repeated outside the subquery, so one that was leased meanwhile is not taken again.
            rows = conn.execute(
                "WITH claimed AS MATERIALIZED (SELECT seq FROM webhook_deliveries WHERE seq IN "
                f"(SELECT min(d.seq) {due} GROUP BY d.webhook_id) ORDER BY seq LIMIT %(limit)s FOR UPDATE SKIP LOCKED) "
                "UPDATE webhook_deliveries d SET lease_until = %(lease)s FROM claimed "
                f"WHERE d.seq = claimed.seq AND {_DUE_DELIVERY} RETURNING d.*", params).fetchall()
        rows.sort(key=lambda row: row["seq"])
        return [row_to_delivery(row) for row in rows]

    def record_attempt(self, delivery: WebhookDelivery, when: datetime) -> None:
        delivery.lease_until, delivery.updated_at = None, when
        with self._write() as db:
            db.execute("UPDATE webhook_deliveries SET status = %s, attempts = %s, next_attempt_at = %s, "
                       "lease_until = NULL, last_status_code = %s, last_error = %s, updated_at = %s WHERE id = %s",
                       (delivery.status.value, delivery.attempts, utc(delivery.next_attempt_at),
                        delivery.last_status_code, delivery.last_error, utc(when), delivery.id))
            db.execute("UPDATE webhooks SET last_status = %s, last_status_code = %s, last_error = %s, "
                       "last_attempt_at = %s WHERE id = %s",
                       (delivery.status.value, delivery.last_status_code, delivery.last_error, utc(when),
                        delivery.webhook_id))

    def release_deliveries(self, delivery_ids: Sequence[str]) -> None:
        if not delivery_ids:
            return
        with self._connection() as conn:
            conn.execute("UPDATE webhook_deliveries SET lease_until = NULL WHERE id = ANY(%s) AND status = 'pending'",
                         (list(delivery_ids),))

    def list_deliveries(self, webhook_id: str, limit: int = 50) -> list[WebhookDelivery]:
        rows = self._fetch("SELECT * FROM webhook_deliveries WHERE webhook_id = %s ORDER BY seq DESC LIMIT %s",
                          (webhook_id, int(limit)))
        return [row_to_delivery(row) for row in rows]

    def delivery_counts(self, webhook_id: str) -> dict[str, int]:
        rows = self._fetch("SELECT status, count(*) AS n FROM webhook_deliveries WHERE webhook_id = %s GROUP BY status",
                          (webhook_id,))
        return {row["status"]: int(row["n"]) for row in rows}

    def prune_deliveries(self, finished_before: datetime) -> int:
        rows = self._fetch("DELETE FROM webhook_deliveries WHERE status <> 'pending' AND updated_at < %s RETURNING 1",
                          (utc(finished_before),))
        return len(rows)

    # --- un-deleting, and the console's reads (stores/base.py ConsoleStore) ------------------------------------

    def restore(self, memory_id: str, history: HistoryEvent, when: datetime, *,
                expected_version: int | None = None) -> MemoryRecord:
        with self._write() as db:
            row = db.execute(f"SELECT {MEMORY_SELECT} FROM {MEMORY_FROM} WHERE m.id = %s AND m.deleted_at IS NOT NULL "
                             "FOR UPDATE OF m", (memory_id,)).fetchone()
            if row is None:
                raise InvalidInput(f"memory {memory_id} is not deleted, or was purged")
            _check_version(memory_id, row["version"], expected_version)
            keywords, cjk = keyword_columns(row["content"])
            db.execute("UPDATE memories SET deleted_at = NULL, delete_reason = NULL, updated_at = %s, "
                       "version = version + 1, keywords = %s, cjk = %s WHERE id = %s",
                       (utc(when), keywords, cjk, memory_id))
            record = replace(row_to_memory(row), deleted_at=None, delete_reason=None, updated_at=when,
                             version=row["version"] + 1)
            self._insert_history(db, [history])
            terms, length = keyword_counts(keywords)
            add_keyword_stats(db, Counter(terms), length, 1)
        return record

    def tallies(self, kind: str, user_id: str | None = None) -> list[Tally]:
        column = _OWNER_COLUMNS.get(kind)
        if column is None:
            raise InvalidInput(f"kind must be one of {sorted(_OWNER_COLUMNS)}, got {kind!r}")
        p = Params()
        sql = (f"SELECT {column} AS owner, layer, category, count(*) AS n FROM memories "
               f"WHERE deleted_at IS NULL AND {column} IS NOT NULL")
        if user_id is not None:
            sql += f" AND user_id = {p.add(user_id)}"
        rows = self._fetch(f"{sql} GROUP BY {column}, layer, category ORDER BY {column} COLLATE \"C\", layer, category",
                           p)
        return [Tally(row["owner"], row["layer"], row["category"], int(row["n"])) for row in rows]

    def browse_records(self, scope: Scope, where: Node | None = None, *, order_by: str = "created_at",
                       descending: bool = True, limit: int = 50, offset: int = 0, contains: str | None = None,
                       deleted: bool = False) -> RecordPage:
        if order_by not in BROWSE_ORDERS:
            raise InvalidInput(f"order_by must be one of {list(BROWSE_ORDERS)}, got {order_by!r}")
        p = Params()
        clauses = [_scope_sql(scope.require(), p), "m.deleted_at IS NOT NULL" if deleted else "m.deleted_at IS NULL",
                   to_sql(where, p)]
        if contains:
            clauses.append(f"strpos(m.content, {p.add(contains)}) > 0")
        condition = " AND ".join(clauses)
        expression = {"access_count": "coalesce(a.access_count, 0)", "last_accessed_at": "a.last_accessed_at"}.get(
            order_by, f"m.{order_by}")
        # Newest first is the scope index's own order; other columns may be empty (never read): those go last.
        order = ("m.created_at DESC, m.seq DESC" if order_by == "created_at" and descending else
                 f"{expression} IS NULL, {expression} {'DESC' if descending else 'ASC'}, m.created_at DESC, m.seq DESC")
        with self._connection() as conn:
            total = conn.execute(f"SELECT count(*) AS n FROM {MEMORY_FROM} WHERE {condition}", p).fetchone()
            rows = conn.execute(f"SELECT {MEMORY_SELECT} FROM {MEMORY_FROM} WHERE {condition} ORDER BY {order} "
                                f"LIMIT {p.add(max(int(limit), 0))} OFFSET {p.add(max(int(offset), 0))}", p).fetchall()
        return RecordPage(int(total["n"]) if total else 0, [row_to_memory(row) for row in rows])

    def list_turns(self, scope: Scope, statuses: Sequence[TurnStatus], limit: int = 50) -> list[TurnRecord]:
        if not statuses:
            return []
        p = Params()
        rows = self._fetch(f"SELECT * FROM turns t WHERE {_scope_sql(scope.require(), p, 't')} "
                           f"AND t.status = ANY({p.add([TurnStatus(s).value for s in statuses])}) "
                           f"ORDER BY t.seq DESC LIMIT {p.add(int(limit))}", p)
        return [row_to_turn(row) for row in rows]

    def scope_turn_counts(self, scope: Scope) -> dict[str, int]:
        p = Params()
        rows = self._fetch(f"SELECT status, count(*) AS n FROM turns t WHERE {_scope_sql(scope.require(), p, 't')} "
                           "GROUP BY status", p)
        return {row["status"]: int(row["n"]) for row in rows}

    def turns_with_messages(self, scope: Scope, message_ids: Sequence[str]) -> list[TurnRecord]:
        ids = list(dict.fromkeys(message_ids))[:500]  # a memory's provenance: a handful of messages
        if not ids:
            return []
        p = Params()
        rows = self._fetch(f"SELECT * FROM turns t WHERE {_scope_sql(scope.require(), p, 't')} AND EXISTS "
                           "(SELECT 1 FROM json_array_elements_text(t.message_ids) AS e(v) "
                           f"WHERE e.v = ANY({p.add(ids)})) ORDER BY t.seq", p)
        return [row_to_turn(row) for row in rows]

    def scope_tallies(self, scope: Scope) -> list[ScopeTally]:
        p = Params()
        rows = self._fetch(f"SELECT m.agent_id, m.run_id, m.layer, m.category, count(*) AS n FROM memories m "
                           f"WHERE {_scope_sql(scope.require(), p)} AND m.deleted_at IS NULL "
                           "GROUP BY m.agent_id, m.run_id, m.layer, m.category", p)
        return [ScopeTally(row["agent_id"], row["run_id"], row["layer"], row["category"], int(row["n"]))
                for row in rows]

    def vitals(self, scope: Scope, where: Node | None = None) -> Vitals:
        p = Params()
        condition = f"{_scope_sql(scope.require(), p)} AND m.deleted_at IS NULL AND {to_sql(where, p)}"
        with self._connection() as conn, conn.cursor(row_factory=tuple_row) as cur:
            # Tuples, not dicts, and the latest time as POSIX seconds, not a datetime: 100k rows stay cheap.
            rows = cur.execute("SELECT m.category, m.memory_type, m.importance, coalesce(a.access_count, 0), "
                               "extract(epoch FROM greatest(m.created_at, m.updated_at, a.last_accessed_at))::float8 "
                               f"FROM {MEMORY_FROM} WHERE {condition}", p).fetchall()
        if not rows:
            return Vitals(*(np.array([], dtype=kind) for kind in (object, object, np.float64, np.float64, np.float64)))
        categories, kinds, importance, recalls, times = zip(*rows, strict=True)
        return Vitals(np.array(categories, dtype=object), np.array(kinds, dtype=object),
                      np.array(importance, dtype=np.float64), np.array(recalls, dtype=np.float64),
                      np.array(times, dtype=np.float64))
