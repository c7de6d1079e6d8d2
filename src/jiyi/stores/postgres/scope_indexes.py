"""HNSW indexes of their own for the users whose memories outgrow exact search.

One global graph searched for one user's memories walks past everyone else's: at 1M memories a user with 100k of
them (10 % of the graph) got recall@10 0.89-0.94 whatever the search settings (bench/results/pg_vectors-builds.json).
A partial index per large user, `... USING hnsw (embedding vector_ip_ops) WHERE user_id = '<id>' AND deleted_at IS
NULL`, holds that user's vectors alone: the planner picks it for a query on that user (plans are custom, so it sees
the user id), and no filter loses rows.

The lifecycle, safe with any number of API processes on any number of machines:
- A search that finds its scope too large to score, and no ready index for its user, asks for one
  (ScopeIndexer.request: at most once a minute per user and process); the process's builder thread builds it while
  searches go on with the global index.
- The builder holds a session-level advisory lock on the user while it builds: another process that asks meanwhile
  gets "busy". A builder that dies releases the lock with its connection; the invalid index it left is dropped by
  the next attempt, which the next search of that user asks for.
- The attempt is recorded (scope_vector_indexes, status building), the index built with CREATE INDEX CONCURRENTLY
  (writes go on), then recorded ready, or failed (asked for again after RETRY_FAILED_AFTER).
- A search reads the record in the statement that sizes its scope: only a ready index changes how it searches.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import tuple_row

log = logging.getLogger(__name__)

# Advisory lock class of a user's index build, as pg_try_advisory_lock(class, hashtext(user_id)): two-key locks are
# apart from the one-key ones of migrations.py.
SCOPE_INDEX_LOCK = 0x6A790004
INDEX_PREFIX = "memories_hnsw_user_"
RETRY_FAILED_AFTER = 3600  # seconds before a user whose build failed is asked for again
REQUEST_EVERY = 60.0  # seconds: one process asks for one user's index at most this often
# pgvector's HNSW index takes vectors of up to 2,000 dimensions, halfvec ones up to 4,000; beyond, search is exact.
_HNSW_MAX_DIMS, _HALFVEC_MAX_DIMS = 2000, 4000
# A graph built within maintenance_work_mem is built ~10x faster than one that spills: the build asks for about
# what the user's graph takes (vector + neighbour lists + overhead per row), never less than the server's setting.
_BUILD_BYTES_PER_ROW = 1024
_BUILD_MEMORY_MOST = 2 * 2**30


def ann_expression(dims: int) -> tuple[str, str] | None:
    """(indexed expression, operator class) of an HNSW index for this dimension, or None when pgvector has none."""
    if dims <= _HNSW_MAX_DIMS:
        return "embedding", "vector_ip_ops"
    if dims <= _HALFVEC_MAX_DIMS:
        return f"(embedding::halfvec({dims}))", "halfvec_ip_ops"
    return None


def index_name(user_id: str) -> str:
    """The index's name: a digest of the user id (any text; a name holds 63 bytes)."""
    return INDEX_PREFIX + hashlib.sha256(user_id.encode()).hexdigest()[:24]


def state_sql(user: str) -> str:
    """SQL of the user's index state for a search (`user`: the placeholder of the user id): 'ready'; 'resting' (its
    build failed within RETRY_FAILED_AFTER); 'wanted' (none yet, a build under way or dead, a failure long ago)."""
    return ("coalesce((SELECT CASE WHEN s.status = 'ready' THEN 'ready' WHEN s.status = 'failed' AND s.started_at > "
            f"now() - make_interval(secs => {RETRY_FAILED_AFTER}) THEN 'resting' ELSE 'wanted' END "
            f"FROM scope_vector_indexes s WHERE s.user_id = {user}), 'wanted')")


def drop_scope_indexes(db: psycopg.Connection[Any]) -> None:
    """Every user's index and its record (a reset, vectors of a new dimension); in the caller's transaction."""
    with db.cursor(row_factory=tuple_row) as cur:
        names = [row[0] for row in cur.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'memories' "
                                               "AND starts_with(indexname, %s)", (INDEX_PREFIX,))]
        for name in names:
            cur.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(name)))
        cur.execute("DELETE FROM scope_vector_indexes")


def build_scope_index(db: psycopg.Connection[Any], user_id: str, build: tuple[int, int],
                      closing: threading.Event | None = None) -> str:
    """Build the user's index on `db` (autocommit, a connection of its own: a build takes minutes). Returns 'built',
    'ready' (it was there), 'busy' (another process is building it) or 'none' (no vectors bound). A build that fails
    is recorded failed and raises; one cancelled because the process is `closing` leaves no record."""
    with db.cursor(row_factory=tuple_row) as cur:
        locked = cur.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", (SCOPE_INDEX_LOCK, user_id)).fetchone()
        if not (locked and locked[0]):
            return "busy"
        try:
            return _build_locked(cur, user_id, build, closing)
        finally:
            with contextlib.suppress(psycopg.Error):  # a connection that is gone took its lock with it
                cur.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (SCOPE_INDEX_LOCK, user_id))


def _build_locked(cur: psycopg.Cursor[tuple[Any, ...]], user_id: str, build: tuple[int, int],
                  closing: threading.Event | None) -> str:
    row = cur.execute("SELECT value FROM meta WHERE key = 'embedding_dims'").fetchone()
    ann = ann_expression(int(row[0])) if row and int(row[0]) > 0 else None
    if ann is None:
        return "none"
    name = index_name(user_id)
    ready = cur.execute("SELECT s.status = 'ready' AND coalesce(i.indisvalid, false) FROM scope_vector_indexes s "
                        "LEFT JOIN pg_index i ON i.indexrelid = to_regclass(s.index_name) WHERE s.user_id = %s",
                        (user_id,)).fetchone()
    if ready and ready[0]:
        return "ready"
    cur.execute("INSERT INTO scope_vector_indexes (user_id, index_name, status, attempts, started_at) "
                "VALUES (%s, %s, 'building', 1, now()) ON CONFLICT (user_id) DO UPDATE SET status = 'building', "
                "attempts = scope_vector_indexes.attempts + 1, started_at = now(), ready_at = NULL, error = NULL",
                (user_id, name))
    drop = sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier(name))
    cur.execute(drop)  # what a build that died left: an invalid index, which writes keep up all the same
    counted = cur.execute("SELECT count(*) FROM memories WHERE user_id = %s AND deleted_at IS NULL",
                          (user_id,)).fetchone()
    rows = int(counted[0]) if counted else 0
    wanted = min(_BUILD_MEMORY_MOST, rows * _BUILD_BYTES_PER_ROW) // 1024
    cur.execute("SELECT set_config('maintenance_work_mem', greatest(%s, "
                "(SELECT setting::bigint FROM pg_settings WHERE name = 'maintenance_work_mem'))::text || 'kB', false)",
                (wanted,))
    expression, opclass = ann
    m, ef_construction = build
    started = time.perf_counter()
    try:
        cur.execute(sql.SQL("CREATE INDEX CONCURRENTLY {} ON memories USING hnsw ({} {}) "
                            "WITH (m = {}, ef_construction = {}) WHERE user_id = {} AND deleted_at IS NULL").format(
            sql.Identifier(name), sql.SQL(expression), sql.SQL(opclass), sql.Literal(int(m)),
            sql.Literal(int(ef_construction)), sql.Literal(user_id)))
    except psycopg.Error as exc:
        _record_failure(cur, user_id, drop, exc, closing is not None and closing.is_set())
        raise
    cur.execute("UPDATE scope_vector_indexes SET status = 'ready', ready_at = now(), rows = %s WHERE user_id = %s",
                (rows, user_id))
    log.info("HNSW index of user %r's %d memories built in %.0f s", user_id, rows, time.perf_counter() - started)
    return "built"


def _record_failure(cur: psycopg.Cursor[tuple[Any, ...]], user_id: str, drop: sql.Composed, exc: psycopg.Error,
                    closing: bool) -> None:
    try:
        if closing:  # not the index's fault: the next process that needs it asks again, and drops what is left
            cur.execute("DELETE FROM scope_vector_indexes WHERE user_id = %s", (user_id,))
        else:
            cur.execute(drop)  # waits for transactions under way, as the build did
            cur.execute("UPDATE scope_vector_indexes SET status = 'failed', error = %s WHERE user_id = %s",
                        (str(exc)[:1000], user_id))
    except psycopg.Error:  # the connection broke: the record says building, and the next attempt cleans up
        pass


class ScopeIndexer:
    """Builds users' indexes in one background thread of this process, owned by the store: started by the first
    request, stopped by close() (which cancels a build under way)."""

    def __init__(self, conninfo: str, build: tuple[int, int], connect_timeout: float) -> None:
        self._conninfo = conninfo
        self._build = build
        self._connect_timeout = max(1, round(connect_timeout))
        self._lock = threading.Lock()
        self._asked: dict[str, float] = {}  # user -> when this process last asked (users past the limit: few)
        self._pending: list[Future[str]] = []
        self._executor: ThreadPoolExecutor | None = None
        self._building: set[psycopg.Connection[Any]] = set()
        self._closing = threading.Event()

    def request(self, user_id: str) -> None:
        """Have the user's index built in the background, unless this process asked within REQUEST_EVERY."""
        now = time.monotonic()
        with self._lock:
            if self._closing.is_set() or now - self._asked.get(user_id, -math.inf) < REQUEST_EVERY:
                return
            self._asked[user_id] = now
            if self._executor is None:
                self._executor = ThreadPoolExecutor(1, thread_name_prefix="jiyi-scope-index")
            self._pending = [f for f in self._pending if not f.done()]
            self._pending.append(self._executor.submit(self._build_in_background, user_id))

    def _build_in_background(self, user_id: str) -> str:
        try:
            return self.build(user_id)
        except Exception:  # recorded in scope_vector_indexes; the schedule goes on
            if self._closing.is_set():  # cancelled by close()
                return "closed"
            log.exception("the HNSW index of user %r could not be built", user_id)
            return "failed"

    def build(self, user_id: str) -> str:
        """Build the user's index now, in this thread (build_scope_index's answers; 'closed' after close())."""
        with psycopg.connect(self._conninfo, autocommit=True, connect_timeout=self._connect_timeout) as db:
            with self._lock:
                if self._closing.is_set():
                    return "closed"
                self._building.add(db)
            try:
                return build_scope_index(db, user_id, self._build, self._closing)
            finally:
                with self._lock:
                    self._building.discard(db)

    def wait(self, timeout: float | None = None) -> None:
        """Until the builds asked for so far are done (or `timeout` seconds)."""
        with self._lock:
            pending = list(self._pending)
        wait(pending, timeout)

    def close(self) -> None:
        """Stop: builds not begun are dropped, a build under way is cancelled (again, until it has stopped: a
        cancel that lands between two of its statements cancels nothing)."""
        with self._lock:
            self._closing.set()
            executor = self._executor
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
        while True:
            with self._lock:
                building = list(self._building)
                pending = [f for f in self._pending if not f.done()]
            if not building and not pending:
                return
            for db in building:
                db.cancel_safe()
            wait(pending, 0.1) if pending else time.sleep(0.1)
