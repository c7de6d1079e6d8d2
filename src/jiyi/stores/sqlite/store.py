"""The embedded default store: one SQLite file in WAL mode holding memories, vectors, history, raw messages and a
keyword index.

Vectors are searched exactly within the caller's scope. Each scope's vectors are kept in a numpy matrix cached in
process: a search is then one matrix-vector product. The cache follows this store's own writes incrementally and is
dropped as a whole when `PRAGMA data_version` says another process wrote to the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from jiyi.errors import Conflict, EmbeddingMismatch, InvalidInput
from jiyi.filters import Condition, Logic, Node
from jiyi.keys import ApiKey, KeyScope
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
from jiyi.stores.sqlite import checkpoints, vocabulary
from jiyi.stores.sqlite.checkpoints import Checkpointer
from jiyi.stores.sqlite.codec import (
    MEMORY_COLUMNS,
    TURN_COLUMNS,
    format_datetime,
    history_to_row,
    memory_to_row,
    message_to_row,
    parse_datetime,
    parse_json,
    row_to_history,
    row_to_memory,
    row_to_message,
    row_to_turn,
    turn_to_row,
    values_to_memory,
)
from jiyi.stores.sqlite.migrations import WEBHOOK_CURSOR, migrate
from jiyi.stores.sqlite.record_cache import MAX_CACHED_RECORDS, RecordCache, freeze, thaw
from jiyi.stores.sqlite.scope_keywords import (
    IndexedRow,
    Phrase,
    ScopeKeywords,
    Statistics,
    bm25_scores,
    length_terms,
    query_phrases,
)
from jiyi.stores.sqlite.sql_filters import to_sql
from jiyi.text import analyze_for_index, has_cjk
from jiyi.tracing import store_call
from jiyi.webhooks.model import Change, DeliveryStatus, Webhook, WebhookDelivery

_SCOPE_KEYS = ("user_id", "agent_id", "run_id")
MAX_CACHED_GRAPHS = 10_000  # users whose current graph is kept in process (most recently searched)
MAX_CACHED_RECALLS = 10_000  # entity_memories answers kept (all dropped past it: a few hundred bytes each)
# The console's counts and retention read only this index (m016); named, because the planner would rather take the
# narrower agent or run index and then read every row it finds.
_VITALS_INDEX = "memories INDEXED BY memories_user_vitals"
_OWNER_COLUMNS = {"user": "user_id", "agent": "agent_id", "run": "run_id"}
_INSERT_MEMORY = (
    f"INSERT INTO memories ({', '.join(MEMORY_COLUMNS)}, embedding) "
    f"VALUES ({', '.join('?' for _ in MEMORY_COLUMNS)}, ?) RETURNING rowid"
)
# Every column but the id and the version, which only the store moves on (+ 1 per change).
_UPDATED_COLUMNS = [c for c in MEMORY_COLUMNS[1:] if c != "version"]
_UPDATE_MEMORY = (f"UPDATE memories SET {', '.join(f'{c} = ?' for c in _UPDATED_COLUMNS)}, version = version + 1 "
                  "WHERE id = ?")


def _scope_token(kind: str, value: str) -> str:
    # A hex digest is one token for FTS5's unicode61 tokenizer whatever characters the id holds.
    return kind[0] + hashlib.blake2b(value.encode("utf-8"), digest_size=10).hexdigest()


def _scope_tokens(scope: Scope) -> str:
    return " ".join(_scope_token(k, v) for k, v in scope.as_dict().items())


def _fts_phrase(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


# BM25 costs FTS5 ~5 us per matching memory (2 cores), and a word in a large share of a scope matches thousands: a
# search with two words each in 14 % of 2,000 memories spent 2.9 ms of its ~9 ms CPU outside the model ranking 490
# matches, where finding them took 0.4 ms (bench/throughput.py). So a word in more than KEYWORD_COMMON_ROWS memories
# of the store brings only the newest KEYWORD_COMMON_ROWS of the scope's memories it matches to be ranked; the rarer
# words bring all of theirs (they weigh the most in BM25 anyway) - as the PostgreSQL store bounds it. LoCoMo dev
# any@10 (infer=false, bench/locomo.py): no bound 82.5, 500 82.9 (with the lexicon), 200 82.1.
KEYWORD_COMMON_ROWS = 500
MAX_PREVIOUS_MESSAGES = 200_000  # previous_messages' answers kept (two ids each: ~200 bytes); all dropped past it


def _keyword_query(scope: Scope, terms: Sequence[str]) -> str:
    alternatives = []
    for term in terms:
        alternatives.append(f"terms:{_fts_phrase(term)}")
        if has_cjk(term):
            # Match the characters as a phrase: a substring match that does not depend on how jieba cut the text.
            alternatives.append(f"chars:{_fts_phrase(' '.join(term))}")
    scope_part = " AND ".join(f"scope:{token}" for token in _scope_tokens(scope).split())
    return f"{scope_part} AND ({' OR '.join(alternatives)})"


def _scope_sql(scope: Scope, params: list[Any], prefix: str = "") -> str:
    parts = []
    for key, value in scope.as_dict().items():
        parts.append(f"{prefix}{key} = ?")
        params.append(value)
    return " AND ".join(parts) or "1"


def _insert_history(db: sqlite3.Connection, events: Sequence[HistoryEvent], ignore_existing: bool = False) -> None:
    # The history table keeps mem0's exact columns; the lifecycle's reasons live beside it, keyed by the row's id.
    verb = "INSERT OR IGNORE" if ignore_existing else "INSERT"
    db.executemany(f"{verb} INTO history VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [history_to_row(e) for e in events])
    reasons = [(e.id, e.reason) for e in events if e.reason]
    if reasons:
        db.executemany(f"{verb} INTO history_reason VALUES (?, ?)", reasons)


def _vector_blob(vector: np.ndarray) -> bytes:
    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


def _check_version(memory_id: str, current: int, expected: int | None) -> None:
    # Read and checked inside the write transaction: no other writer (thread or process) can move it meanwhile.
    if expected is not None and current != expected:
        raise Conflict(f"memory {memory_id} is at version {current}, not {expected}: it changed since it was read")


_WEBHOOK_COLUMNS = ("id", "project_id", "user_id", "name", "url", "event_types", "secret", "is_active", "after_change",
                    "created_at", "updated_at", "last_status", "last_status_code", "last_error", "last_attempt_at")
_DELIVERY_COLUMNS = ("id", "webhook_id", "change_id", "event_type", "body", "status", "attempts", "next_attempt_at",
                     "lease_until", "last_status_code", "last_error", "created_at", "updated_at")
# A delivery is queued only while its webhook exists (a delete may land between the fan-out's read and its write).
_ENQUEUE_DELIVERY = (f"INSERT OR IGNORE INTO webhook_deliveries ({', '.join(_DELIVERY_COLUMNS)}) "
                     f"SELECT {', '.join('?' for _ in _DELIVERY_COLUMNS)} WHERE EXISTS "
                     "(SELECT 1 FROM webhooks WHERE id = ?)")
_DUE_DELIVERIES = ("FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.status = 'pending' "
                   "AND d.next_attempt_at <= ? AND (d.lease_until IS NULL OR d.lease_until < ?) AND w.is_active = 1")


def _webhook_to_row(webhook: Webhook) -> tuple[Any, ...]:
    return (webhook.id, webhook.project_id, webhook.user_id, webhook.name, webhook.url, json.dumps(webhook.event_types),
            webhook.secret, int(webhook.is_active), webhook.after_change, format_datetime(webhook.created_at),
            format_datetime(webhook.updated_at), webhook.last_status, webhook.last_status_code, webhook.last_error,
            format_datetime(webhook.last_attempt_at))


def _row_to_webhook(row: sqlite3.Row) -> Webhook:
    return Webhook(
        id=row["id"], project_id=row["project_id"], user_id=row["user_id"], name=row["name"], url=row["url"],
        event_types=json.loads(row["event_types"]), secret=row["secret"], is_active=bool(row["is_active"]),
        after_change=row["after_change"], created_at=parse_datetime(row["created_at"]) or datetime.now(UTC),
        updated_at=parse_datetime(row["updated_at"]), last_status=row["last_status"],
        last_status_code=row["last_status_code"], last_error=row["last_error"],
        last_attempt_at=parse_datetime(row["last_attempt_at"]),
    )


def _delivery_to_row(delivery: WebhookDelivery) -> tuple[Any, ...]:
    return (delivery.id, delivery.webhook_id, delivery.change_id, delivery.event_type, delivery.body,
            delivery.status.value, delivery.attempts, format_datetime(delivery.next_attempt_at),
            format_datetime(delivery.lease_until), delivery.last_status_code, delivery.last_error,
            format_datetime(delivery.created_at), format_datetime(delivery.updated_at))


def _row_to_delivery(row: sqlite3.Row) -> WebhookDelivery:
    return WebhookDelivery(
        id=row["id"], webhook_id=row["webhook_id"], change_id=row["change_id"], event_type=row["event_type"],
        body=row["body"], status=DeliveryStatus(row["status"]), attempts=row["attempts"],
        next_attempt_at=parse_datetime(row["next_attempt_at"]) or datetime.now(UTC),
        lease_until=parse_datetime(row["lease_until"]), last_status_code=row["last_status_code"],
        last_error=row["last_error"], created_at=parse_datetime(row["created_at"]) or datetime.now(UTC),
        updated_at=parse_datetime(row["updated_at"]),
    )


_MEMORY_SELECT = ", ".join(MEMORY_COLUMNS)
_CATEGORY_CODES = {category.value: code for code, category in enumerate(Category)}


class _ScopeVectors:
    """One scope's live vectors in a growable matrix, so appending a memory never copies the others."""

    def __init__(self, dims: int) -> None:
        self.ids: list[str] = []
        self.rowids: list[int] = []
        self._vectors = np.zeros((16, dims), dtype=np.float32)
        self._expires = np.zeros(16, dtype=np.float64)
        self._categories = np.zeros(16, dtype=np.int8)  # each row's category code: see category_mask
        # category_mask's answers, for as many rows as `_masks_rows`: rows are only ever appended (any other change
        # replaces this object), so an answer holds until the next append.
        self._masks: dict[tuple[bool, tuple[str, ...]], np.ndarray] = {}
        self._derived: dict[object, Any] = {}  # category_rows' and earliest_expiry's answers, kept as the masks are
        self._masks_rows = 0

    def append(self, rowid: int, memory_id: str, vector: np.ndarray, expires: float, category: str) -> None:
        n = len(self.ids)
        if n == self._vectors.shape[0]:
            self._vectors = np.concatenate([self._vectors, np.zeros_like(self._vectors)])
            self._expires = np.concatenate([self._expires, np.zeros_like(self._expires)])
            self._categories = np.concatenate([self._categories, np.zeros_like(self._categories)])
        self._vectors[n] = vector
        self._expires[n] = expires
        self._categories[n] = _CATEGORY_CODES.get(category, -1)
        self.ids.append(memory_id)
        self.rowids.append(rowid)

    @classmethod
    def from_arrays(cls, rowids: list[int], ids: list[str], matrix: np.ndarray, expires: np.ndarray,
                    categories: list[str]) -> _ScopeVectors:
        cached = cls(matrix.shape[1])
        capacity = max(16, len(ids) + len(ids) // 4)
        cached._vectors = np.zeros((capacity, matrix.shape[1]), dtype=np.float32)
        cached._vectors[: len(ids)] = matrix
        cached._expires = np.zeros(capacity, dtype=np.float64)
        cached._expires[: len(ids)] = expires
        cached._categories = np.zeros(capacity, dtype=np.int8)
        cached._categories[: len(ids)] = [_CATEGORY_CODES.get(c, -1) for c in categories]
        cached.ids, cached.rowids = ids, rowids
        return cached

    def view(self) -> tuple[np.ndarray, np.ndarray]:
        n = len(self.ids)
        return self._vectors[:n], self._expires[:n]

    def category_mask(self, where: Node) -> np.ndarray | None:
        """The rows a filter on the category alone allows (eq / ne / in / nin, or NOT of one), or None for any other
        filter. Every search filters by category (core memories; facts apart from kept messages): a few
        microseconds here against 2-3 ms of SQL over a 10k-memory scope."""
        key = self._category_key(where)
        return None if key is None else self._category_mask(key)

    def category_rows(self, where: Node) -> np.ndarray | None:
        """np.flatnonzero(category_mask(where)), kept as the mask is (read only, until an append): the rows a search
        that no expiry narrows ranks (see earliest_expiry)."""
        key = self._category_key(where)
        if key is None:
            return None
        self._fresh()
        rows = self._derived.get(("rows", key))
        if rows is None:
            rows = np.flatnonzero(self._category_mask(key))
            rows.flags.writeable = False
            self._derived[("rows", key)] = rows
        return rows

    def earliest_expiry(self) -> float:
        """The soonest of the rows' expiries (inf: none expires, or no rows), kept until an append: while it is still to
        come, the expiry mask of a search (expires > now) allows every row, and is left out."""
        self._fresh()
        earliest = self._derived.get("earliest")
        if earliest is None:
            n = len(self.ids)
            earliest = self._derived["earliest"] = float(self._expires[:n].min()) if n else float("inf")
        return earliest

    def _fresh(self) -> None:
        """Drop what was worked out for fewer rows than there are."""
        n = len(self.ids)
        if self._masks_rows != n:
            self._masks, self._derived, self._masks_rows = {}, {}, n

    @staticmethod
    def _category_key(where: Node) -> tuple[bool, tuple[str, ...]] | None:
        negate = False
        if isinstance(where, Logic) and where.kind == "NOT" and len(where.items) == 1:
            negate, where = True, where.items[0]
        if not (isinstance(where, Condition) and where.column == "category" and where.op in ("eq", "ne", "in", "nin")):
            return None
        values = tuple(where.value) if where.op in ("in", "nin") else (where.value,)
        if not all(isinstance(v, str) for v in values):
            return None
        return negate ^ (where.op in ("ne", "nin")), values

    def _category_mask(self, key: tuple[bool, tuple[str, ...]]) -> np.ndarray:
        # Every search asks for the same few filters, each over the whole scope: kept (read only) until an append.
        values = key[1]
        n = len(self.ids)
        self._fresh()
        mask = self._masks.get(key)
        if mask is None:
            # A lookup table over the codes' bytes, not np.isin: 25 us against 135 over 10k rows. -1 (a row of an
            # unknown category) and -2 (an unknown value asked for) are different bytes, as with isin.
            wanted = np.zeros(256, dtype=bool)
            wanted[np.asarray([_CATEGORY_CODES.get(v, -2) for v in values], dtype=np.int8).view(np.uint8)] = True
            mask = wanted[self._categories[:n].view(np.uint8)]
            if key[0]:
                mask = ~mask
            mask.flags.writeable = False
            self._masks[key] = mask
        return mask


def _newest_common_rowid(index: ScopeKeywords, postings: Sequence[tuple[np.ndarray, np.ndarray]],
                         is_common: Sequence[bool], alive: np.ndarray) -> int | None:
    """The rowid of the KEYWORD_COMMON_ROWS-th newest live row a common phrase matches (None: fewer match): older
    rows are ranked by the rare words alone (a mask, not np.unique: 30 us, not 650)."""
    held = np.zeros(len(index), dtype=bool)
    for (held_rows, _), is_it in zip(postings, is_common, strict=True):
        if is_it:
            held[held_rows] = True
    common_rowids = index.rowids()[held & alive]
    if common_rowids.size < KEYWORD_COMMON_ROWS:
        return None
    place = common_rowids.size - KEYWORD_COMMON_ROWS
    return int(np.partition(common_rowids, place)[place])


def _stable_smallest(values: np.ndarray, limit: int) -> np.ndarray:
    """np.argsort(values, kind="stable")[:limit] - the `limit` smallest, ties in the order they come - without sorting
    every value: a common word's matches are thousands, and the whole sort took more than the scoring. Every value
    below the limit-th smallest is in, then as many of those equal to it as there is room for, first ones first;
    those sorted stably are the whole sort's first `limit`."""
    if limit <= 0:
        return np.zeros(0, dtype=np.intp)
    if values.shape[0] <= 4 * limit:
        return np.argsort(values, kind="stable")[:limit]
    kth = np.partition(values, limit - 1)[limit - 1]
    if kth != kth:  # NaN: not among the values compared here (a score never is)
        return np.argsort(values, kind="stable")[:limit]
    ahead = np.flatnonzero(values < kth)
    chosen = np.concatenate((ahead, np.flatnonzero(values == kth)[:limit - ahead.shape[0]]))
    return chosen[np.argsort(values[chosen], kind="stable")]


def _expiry_seconds(record: MemoryRecord) -> float:
    return record.expiration_date.timestamp() if record.expiration_date else float("inf")


class SqliteStore(MemoryStore, KeyStore, SessionStore, ConsoleStore, EntityStore, WebhookStore):
    db_system = "sqlite"  # OpenTelemetry's db.system.name, on the spans of @store_call methods

    def __init__(self, path: str | os.PathLike[str] = ":memory:", max_cached_vectors: int = 2_000_000,
                 max_cached_keyword_rows: int = 200_000, max_cached_records: int = MAX_CACHED_RECORDS) -> None:
        """`max_cached_vectors` bounds the in-process vector cache (rows over all scopes; 384-d e5 rows take
        1.5 kB, so the default is about 3 GB at most); `max_cached_keyword_rows` the keyword indexes' (~1 kB a
        row of a dozen words: ~200 MB); the scopes searched least recently are dropped first.
        `max_cached_records` bounds the decoded memories get_many keeps (record_cache.py)."""
        self.max_cached_vectors = max_cached_vectors
        self.max_cached_keyword_rows = max_cached_keyword_rows
        self._cached_rows = 0
        self._last_scores: tuple[weakref.ref[_ScopeVectors], int, bytes, np.ndarray] | None = None
        self.path = str(path)
        self.url = f"sqlite:///{self.path}"
        if self.path != ":memory:":
            Path(self.path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(
            str(Path(self.path).expanduser()) if self.path != ":memory:" else ":memory:",
            isolation_level=None,  # autocommit; transactions are explicit (see _write)
            check_same_thread=False,
            timeout=30.0,
        )
        self._db.row_factory = sqlite3.Row
        self._lock = threading.RLock()
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            migrate(self._db)
        # Checkpoints run on a thread of their own, not inside a commit that holds the lock: see checkpoints.py.
        self._checkpointer: Checkpointer | None = None
        if self.path != ":memory:":
            self._db.execute(f"PRAGMA wal_autocheckpoint={checkpoints.BACKSTOP_PAGES}")
            self._checkpointer = Checkpointer(str(Path(self.path).expanduser()), self._lock)
        self._dims = 0
        self._vectors: OrderedDict[Scope, _ScopeVectors] = OrderedDict()  # least recently searched first
        # Each scope's keyword index (scope_keywords.py), kept up to date by this store's writes, like the vectors.
        self._keywords: OrderedDict[Scope, ScopeKeywords] = OrderedDict()
        self._keyword_rows = 0
        self._index_epoch = 0  # moves with every change to what keyword indexes hold: see keyword_search
        # Each user's current graph as searches read it (current_graph), dropped on any graph write here and, with the
        # vectors, when another process wrote to the file.
        self._graphs: OrderedDict[str, Graph] = OrderedDict()
        # entity_memories' answers by (user, entities, limit): a question naming an entity that 1,450 of 10k memories
        # mention spent ~2 ms of CPU in SQL ordering them all by time, and the same entities are asked about search
        # after search. An answer depends on memories (their times, whether they live) and the graph alike, so every
        # write drops them all but record_access, which touches neither (see _write).
        self._entity_recall: dict[tuple[str, tuple[str, ...], int], tuple[str, ...]] = {}
        self._vocabulary = vocabulary.Vocabulary()  # kept while the index's stamp stands: see its module
        # The message stored just before each message asked about (None: the first of its scope), as the read path
        # asks for its candidates' sources search after search. The log only grows here (rowids grow with it), so an
        # answer holds until a reset or another process's write, which drop it with the other caches.
        self._previous: dict[str, str | None] = {}
        self._records = RecordCache(max_cached_records)
        self._data_version = self._read_data_version()
        binding = self._meta("embedding_model")
        if binding:
            self._dims = int(self._meta("embedding_dims") or 0)

    # --- plumbing --------------------------------------------------------------------------------------------

    def _read_data_version(self) -> int:
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    @contextmanager
    def _write(self, *, keeps_records: bool = False, counts_access: bool = False) -> Iterator[sqlite3.Connection]:
        """One write transaction. Once it commits, the decoded memories kept for get_many are dropped, unless
        the write says (`keeps_records`) that it changes no memory a reader may have kept - it writes other tables
        (the turn queue, the message log, locks, the graph), adds new ids (insert) - or keeps them right itself
        (record_access). A write whose statements touch the memories table leaves the default. The graph recall
        answers (entity_memories) are dropped too, unless the write only `counts_access` (record_access)."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                self._drop_cache()  # the cache may hold rows of the rolled-back transaction
                raise
            if not keeps_records:
                self._records.clear()
            if not counts_access:
                self._entity_recall.clear()
        if self._checkpointer is not None:
            self._checkpointer.wrote()

    def _drop_cache(self) -> None:
        self._records.clear()
        self._graphs.clear()
        self._entity_recall.clear()
        self._previous.clear()
        self._vectors.clear()
        self._cached_rows = 0
        self._keywords.clear()
        self._keyword_rows = 0
        self._index_epoch += 1

    def _check_foreign_writes(self) -> None:
        version = self._read_data_version()
        if version != self._data_version:
            self._drop_cache()
            self._data_version = version
            self._dims = int(self._meta("embedding_dims") or 0)

    def _check_vector(self, vector: np.ndarray) -> None:
        if vector.ndim != 1 or (self._dims and vector.shape[0] != self._dims):
            raise EmbeddingMismatch(
                f"vector has {vector.shape[-1]} dimensions but this store holds {self._dims}-dimensional vectors"
            )

    # --- embedding binding ----------------------------------------------------------------------------------

    def bind_embedding(self, model_id: str, dims: int) -> None:
        with self._write() as db:
            stored_model, stored_dims = self._meta("embedding_model"), self._meta("embedding_dims")
            if stored_model is None:
                db.executemany(
                    "INSERT INTO meta VALUES (?, ?)", [("embedding_model", model_id), ("embedding_dims", str(dims))]
                )
            elif stored_model != model_id or int(stored_dims or 0) != dims:
                raise EmbeddingMismatch(
                    f"{self.url} holds vectors of {stored_model} ({stored_dims} dims) but the configured embedder is "
                    f"{model_id} ({dims} dims); use the same embedder, or a new store (or re-embed with "
                    "`jiyi export` + `jiyi import`)"
                )
        self._dims = dims

    def embedding_binding(self) -> tuple[str, int] | None:
        with self._lock:
            model = self._meta("embedding_model")
            return (model, int(self._meta("embedding_dims") or 0)) if model else None

    # --- writes ---------------------------------------------------------------------------------------------

    def _index_text(self, db: sqlite3.Connection, rowid: int, record: MemoryRecord) -> tuple[str, str, str]:
        """Index the memory's text; what its row in memory_fts holds (terms, chars, scope)."""
        analyzed = analyze_for_index(record.content)
        columns = (analyzed.terms, analyzed.chars, _scope_tokens(record.scope))
        db.execute("INSERT INTO memory_fts(rowid, terms, chars, scope) VALUES (?, ?, ?, ?)", (rowid, *columns))
        vocabulary.stamp(db)
        self._index_epoch += 1
        return columns

    def _unindex(self, db: sqlite3.Connection, rowid: int) -> None:
        db.execute("DELETE FROM memory_fts WHERE rowid = ?", (rowid,))
        vocabulary.stamp(db)
        self._index_epoch += 1

    @store_call("insert")
    def insert(self, records: Sequence[MemoryRecord], vectors: np.ndarray, history: Sequence[HistoryEvent]) -> None:
        vectors = np.asarray(vectors, dtype=np.float32).reshape(len(records), -1) if records else vectors
        added: list[tuple[int, MemoryRecord, np.ndarray, tuple[str, str, str]]] = []
        # New ids only (an id already stored fails the INSERT, and the rollback drops the cache): no memory a
        # reader kept changes.
        with self._write(keeps_records=True) as db:
            self._check_foreign_writes()
            for record, vector in zip(records, vectors, strict=True):
                self._check_vector(vector)
                record.scope.require()
                try:
                    rowid = db.execute(_INSERT_MEMORY, (*memory_to_row(record), _vector_blob(vector))).fetchone()[0]
                except sqlite3.IntegrityError as exc:
                    raise InvalidInput(f"a memory with id {record.id} already exists") from exc
                if record.deleted_at is None:  # imported deleted records keep their audit trail, not their index
                    added.append((rowid, record, vector, self._index_text(db, rowid, record)))
            _insert_history(db, history)
            if records:
                vocabulary.stamp(db)  # max(rowid), the IDF's N, moved (an imported deleted memory is not indexed)
            for rowid, record, vector, indexed in added:
                for scope, cached in self._vectors.items():
                    if self._in_scope(record.scope, scope):
                        cached.append(rowid, record.id, vector, _expiry_seconds(record), record.category.value)
                        self._cached_rows += 1
                self._keywords_add(IndexedRow(rowid, record.id, _expiry_seconds(record), *indexed), record.scope)

    @staticmethod
    def _in_scope(owner: Scope, scope: Scope) -> bool:
        return all(getattr(owner, key) == value for key, value in scope.as_dict().items())

    def _keywords_add(self, indexed: IndexedRow, owner: Scope) -> None:
        for scope, index in self._keywords.items():
            if self._in_scope(owner, scope):
                index.append(indexed)
                self._keyword_rows += 1

    def _keywords_remove(self, rowid: int, owner: Scope) -> None:
        for scope in [s for s in self._keywords if self._in_scope(owner, s)]:
            index = self._keywords[scope]
            index.remove(rowid)
            if index.dead > len(index) // 4:  # rebuilt on its next search: dead rows cost every search a little
                self._keyword_rows -= len(self._keywords.pop(scope))

    def _forget_cached(self, owner: Scope) -> None:
        for scope in [s for s in self._vectors if self._in_scope(owner, s)]:
            self._cached_rows -= len(self._vectors.pop(scope).ids)

    @store_call("update")
    def update(self, record: MemoryRecord, vector: np.ndarray | None, history: HistoryEvent | None, *,
               expected_version: int | None = None) -> None:
        with self._write() as db:
            self._check_foreign_writes()
            row = db.execute("SELECT rowid, user_id, agent_id, run_id, content, expiration_date, category, version "
                             "FROM memories WHERE id = ? AND deleted_at IS NULL", (record.id,)).fetchone()
            if row is None:
                raise InvalidInput(f"memory {record.id} does not exist or was deleted")
            _check_version(record.id, row["version"], expected_version)
            old_scope = Scope(row["user_id"], row["agent_id"], row["run_id"])
            values = dict(zip(MEMORY_COLUMNS, memory_to_row(record), strict=True))
            db.execute(_UPDATE_MEMORY, (*(values[c] for c in _UPDATED_COLUMNS), record.id))
            record.version = row["version"] + 1
            if vector is not None:
                self._check_vector(vector)
                db.execute("UPDATE memories SET embedding = ? WHERE id = ?", (_vector_blob(vector), record.id))
            reindexed = None
            if row["content"] != record.content or old_scope != record.scope:
                self._unindex(db, row["rowid"])
                reindexed = self._index_text(db, row["rowid"], record)
            if history is not None:
                _insert_history(db, [history])
            expires = _expiry_seconds(record)
            if reindexed is not None:
                self._keywords_remove(row["rowid"], old_scope)
                self._keywords_add(IndexedRow(row["rowid"], record.id, expires, *reindexed), record.scope)
            elif row["expiration_date"] != format_datetime(record.expiration_date):
                self._index_epoch += 1
                for scope, index in self._keywords.items():
                    if self._in_scope(old_scope, scope):
                        index.set_expiry(row["rowid"], expires)
            # Cached search vectors only change with the vector, the owner, the expiry or the category; other edits
            # (importance, provenance, metadata) keep the scope's cache warm.
            if vector is not None or old_scope != record.scope or row["category"] != record.category.value \
                    or row["expiration_date"] != format_datetime(record.expiration_date):
                self._forget_cached(old_scope)
                self._forget_cached(record.scope)

    @store_call("delete")
    def soft_delete(self, memory_id: str, reason: str, history: HistoryEvent, when: datetime, *,
                    expected_version: int | None = None) -> None:
        with self._write() as db:
            self._check_foreign_writes()
            row = db.execute("SELECT rowid, user_id, agent_id, run_id, version FROM memories WHERE id = ? "
                             "AND deleted_at IS NULL", (memory_id,)).fetchone()
            if row is None:
                raise InvalidInput(f"memory {memory_id} does not exist or was deleted")
            _check_version(memory_id, row["version"], expected_version)
            db.execute("UPDATE memories SET deleted_at = ?, delete_reason = ?, updated_at = ?, version = version + 1 "
                       "WHERE id = ?",
                       (format_datetime(when), reason, format_datetime(when), memory_id))
            self._unindex(db, row["rowid"])
            self._keywords_remove(row["rowid"], Scope(row["user_id"], row["agent_id"], row["run_id"]))
            _insert_history(db, [history])
            graph_tables.drop_support(db, graph_tables.SQLITE, memory_id, when)
            self._graphs.pop(row["user_id"], None)
            self._forget_cached(Scope(row["user_id"], row["agent_id"], row["run_id"]))

    @store_call("insert", "history")
    def add_history(self, events: Sequence[HistoryEvent]) -> None:
        with self._write(keeps_records=True) as db:
            _insert_history(db, events, ignore_existing=True)

    @store_call("record_access")
    def record_access(self, memory_ids: Sequence[str], when: datetime) -> None:
        if not memory_ids:
            return
        stamp = format_datetime(when)
        # After every search: the memories kept for get_many are counted as the database counts them, not dropped.
        with self._write(keeps_records=True, counts_access=True) as db:
            db.executemany(
                "UPDATE memories SET access_count = access_count + 1, last_accessed_at = ? WHERE id = ?",
                [(stamp, memory_id) for memory_id in memory_ids],
            )
            self._records.count_access(memory_ids, parse_datetime(stamp))

    def add_messages(self, messages: Sequence[StoredMessage]) -> None:
        with self._write(keeps_records=True) as db:
            db.executemany(
                "INSERT INTO messages (id, user_id, agent_id, run_id, role, name, content, created_at, external_id,"
                " metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [message_to_row(m) for m in messages],
            )

    def reset(self) -> None:
        with self._write() as db:
            for table in ("memories", "history", "messages", "memory_fts", "meta", "turns", "state",
                          *graph_tables.TABLES):
                db.execute(f"DELETE FROM {table}")
            # Webhooks stay; the change log starts again from its first row, and they hear it from there.
            db.execute("UPDATE webhooks SET after_change = 0")
            vocabulary.stamp(db)
        self._drop_cache()
        self._dims = 0

    def close(self) -> None:
        if self._checkpointer is not None:
            self._checkpointer.close()
        with self._lock:
            self._db.close()

    # --- the entity graph (stores/entities.py EntityStore; the statements are stores/graph_tables.py) ---------

    def graph(self, user_id: str) -> Graph:
        with self._lock:
            return graph_tables.read_graph(self._db, graph_tables.SQLITE, user_id)

    def current_graph(self, user_id: str) -> Graph:
        """Cached per user (every search of a user with entities reads it: 600 rows for 300 entities took ~2 ms);
        the caller must not change what it gets."""
        with self._lock:
            self._check_foreign_writes()
            graph = self._graphs.get(user_id)
            if graph is None:
                graph = graph_tables.read_current_graph(self._db, graph_tables.SQLITE, user_id)
                self._graphs[user_id] = graph
                if len(self._graphs) > MAX_CACHED_GRAPHS:
                    self._graphs.popitem(last=False)
            else:
                self._graphs.move_to_end(user_id)
            return graph

    def save_graph(self, user_id: str, change: GraphChange, when: datetime) -> None:
        with self._write(keeps_records=True) as db:
            graph_tables.save_graph(db, graph_tables.SQLITE, user_id, change, when)
            self._graphs.pop(user_id, None)

    def update_graph(self, user_id: str, edit: Callable[[Graph], GraphChange], when: datetime) -> GraphChange:
        # BEGIN IMMEDIATE: another writer of the file, here or elsewhere, waits for COMMIT
        with self._write(keeps_records=True) as db:
            change = edit(graph_tables.read_graph(db, graph_tables.SQLITE, user_id))
            if change:
                graph_tables.save_graph(db, graph_tables.SQLITE, user_id, change, when)
                self._graphs.pop(user_id, None)
            return change

    def entity_memories(self, user_id: str, entity_ids: Sequence[str], limit: int) -> list[str]:
        key = (user_id, tuple(entity_ids), limit)
        with self._lock:
            self._check_foreign_writes()
            found = self._entity_recall.get(key)
            if found is None:
                if len(self._entity_recall) >= MAX_CACHED_RECALLS:
                    self._entity_recall.clear()
                found = tuple(graph_tables.entity_memories(self._db, graph_tables.SQLITE, user_id, entity_ids, limit))
                self._entity_recall[key] = found
        return list(found)

    def graph_history(self, user_id: str, subject_id: str) -> list[GraphEvent]:
        with self._lock:
            return graph_tables.graph_history(self._db, graph_tables.SQLITE, user_id, subject_id)

    def forget_graph(self, user_id: str) -> None:
        with self._write(keeps_records=True) as db:
            graph_tables.forget_graph(db, graph_tables.SQLITE, user_id)
            self._graphs.pop(user_id, None)

    def entity_memory_counts(self, user_id: str) -> dict[str, int]:
        with self._lock:
            return graph_tables.entity_memory_counts(self._db, graph_tables.SQLITE, user_id)

    def merge_entities(self, user_id: str, keep_id: str, merge_id: str, when: datetime) -> EntityMerge:
        with self._write(keeps_records=True) as db:
            merged = graph_tables.merge_entities(db, graph_tables.SQLITE, user_id, keep_id, merge_id, when)
            self._graphs.pop(user_id, None)
            return merged

    def rename_entity(self, user_id: str, entity_id: str, name: str, when: datetime) -> GraphEntity:
        with self._write(keeps_records=True) as db:
            renamed = graph_tables.rename_entity(db, graph_tables.SQLITE, user_id, entity_id, name, when)
            self._graphs.pop(user_id, None)
            return renamed

    def close_relation(self, user_id: str, relation_id: str, when: datetime,
                       invalid_at: datetime | None = None) -> GraphRelation:
        with self._write(keeps_records=True) as db:
            closed = graph_tables.close_relation(db, graph_tables.SQLITE, user_id, relation_id, when, invalid_at)
            self._graphs.pop(user_id, None)
            return closed

    # --- reads ----------------------------------------------------------------------------------------------

    def get(self, memory_id: str, include_deleted: bool = False) -> MemoryRecord | None:
        if not include_deleted:
            return self.get_many([memory_id]).get(memory_id)
        with self._lock:
            sql = f"SELECT {', '.join(MEMORY_COLUMNS)} FROM memories WHERE id = ?"
            if not include_deleted:
                sql += " AND deleted_at IS NULL"
            row = self._db.execute(sql, (memory_id,)).fetchone()
        return row_to_memory(row) if row else None

    def _live_rows(self, columns: str, memory_ids: Sequence[str], condition: str = "1", *,
                   as_tuples: bool = False) -> list[Any]:
        """Rows of these live memories, asked for in chunks (SQLite limits the number of parameters); plain tuples
        with `as_tuples` (no sqlite3.Row to build for each)."""
        ids = list(dict.fromkeys(memory_ids))
        rows: list[Any] = []
        with self._lock:
            cursor = self._db.cursor()
            if as_tuples:
                cursor.row_factory = None
            for start in range(0, len(ids), 500):
                chunk = ids[start:start + 500]
                rows += cursor.execute(
                    f"SELECT {columns} FROM memories WHERE deleted_at IS NULL AND {condition} AND id IN "
                    f"({', '.join('?' for _ in chunk)})", chunk,
                ).fetchall()
        return rows

    def get_many(self, memory_ids: Sequence[str]) -> dict[str, MemoryRecord]:
        """Read through the decoded memories kept in process (record_cache.py); each call gets records of its own."""
        ids = list(dict.fromkeys(memory_ids))
        with self._lock:
            self._check_foreign_writes()
            kept, missing = self._records.take(ids)
            generation = self._records.generation
            # Tuples, not sqlite3.Row: a search reads some 60 rows, and a Row's keys() and zip cost 3 us of the 11.
            rows = self._live_rows(_MEMORY_SELECT, missing, as_tuples=True) if missing else []
        read = [values_to_memory(values) for values in rows]
        if read:
            frozen = [freeze(record) for record in read]
            with self._lock:
                self._records.put(frozen, generation)
        found = {memory_id: thaw(values) for memory_id, values in kept.items()}  # in the order asked
        if not read:
            return found
        found.update((record.id, record) for record in read)
        return {memory_id: found[memory_id] for memory_id in ids if memory_id in found}

    def known_ids(self, memory_ids: Sequence[str]) -> set[str]:
        ids = list(dict.fromkeys(memory_ids))
        known: set[str] = set()
        with self._lock:
            for start in range(0, len(ids), 500):
                chunk = ids[start:start + 500]
                rows = self._db.execute(
                    f"SELECT id FROM memories WHERE id IN ({', '.join('?' for _ in chunk)})", chunk
                ).fetchall()
                known.update(row[0] for row in rows)
        return known

    def iter_records(self, scope: Scope | None = None, include_deleted: bool = False) -> Iterator[MemoryRecord]:
        last_rowid = 0
        while True:
            params: list[Any] = [last_rowid]
            where = _scope_sql(scope, params) if scope is not None and not scope.is_empty else "1"
            if not include_deleted:
                where += " AND deleted_at IS NULL"
            with self._lock:
                rows = self._db.execute(
                    f"SELECT rowid, {', '.join(MEMORY_COLUMNS)} FROM memories WHERE rowid > ? AND {where} "
                    "ORDER BY rowid LIMIT 500", params,
                ).fetchall()
            if not rows:
                return
            for row in rows:
                yield row_to_memory(row)
            last_rowid = rows[-1]["rowid"]

    def _live_clause(self, params: list[Any], include_expired: bool, prefix: str = "") -> str:
        if include_expired:
            return f"{prefix}deleted_at IS NULL"
        params.append(format_datetime(datetime.now(UTC)))
        return f"{prefix}deleted_at IS NULL AND ({prefix}expiration_date IS NULL OR {prefix}expiration_date > ?)"

    def list_records(
        self,
        scope: Scope,
        where: Node | None = None,
        limit: int | None = None,
        include_expired: bool = False,
        offset: int = 0,
        every_scope: bool = False,
    ) -> list[MemoryRecord]:
        params: list[Any] = []
        clauses = [_scope_sql(scope if every_scope else scope.require(), params),
                   self._live_clause(params, include_expired),
                   to_sql(where, params)]
        sql = (f"SELECT {', '.join(MEMORY_COLUMNS)} FROM memories WHERE {' AND '.join(clauses)} "
               "ORDER BY created_at DESC, rowid DESC")
        if limit is not None or offset:
            sql += " LIMIT ? OFFSET ?"
            params.extend((-1 if limit is None else int(limit), int(offset)))
        with self._lock:
            rows = self._db.execute(sql, params).fetchall()
        return [row_to_memory(row) for row in rows]

    def count_records(self, scope: Scope, where: Node | None = None, include_expired: bool = False,
                      every_scope: bool = False) -> int:
        params: list[Any] = []
        clauses = [_scope_sql(scope if every_scope else scope.require(), params),
                   self._live_clause(params, include_expired),
                   to_sql(where, params)]
        with self._lock:
            (total,) = self._db.execute(f"SELECT COUNT(*) FROM memories WHERE {' AND '.join(clauses)}",
                                        params).fetchone()
        return int(total)

    def entities(self, user_id: str | None = None) -> list[Entity]:
        found: list[Entity] = []
        for kind, column in (("user", "user_id"), ("agent", "agent_id"), ("run", "run_id")):
            params: list[Any] = [Category.MESSAGE.value]
            sql = (f"SELECT {column}, COUNT(*), MIN(created_at), MAX(COALESCE(updated_at, created_at)) FROM memories "
                   f"WHERE deleted_at IS NULL AND category != ? AND {column} IS NOT NULL")
            if user_id is not None:
                sql += " AND user_id = ?"
                params.append(user_id)
            with self._lock:
                rows = self._db.execute(sql + f" GROUP BY {column} ORDER BY {column}", params).fetchall()
            found.extend(Entity(kind, name, count, datetime.fromisoformat(first), datetime.fromisoformat(last))
                         for name, count, first, last in rows)
        return found

    def _scope_vectors(self, scope: Scope) -> _ScopeVectors:
        cached = self._vectors.get(scope)
        if cached is not None:
            self._vectors.move_to_end(scope)
            return cached
        params: list[Any] = []
        rows = self._db.execute(
            f"SELECT rowid, id, expiration_date, embedding, category FROM memories WHERE {_scope_sql(scope, params)} "
            "AND deleted_at IS NULL ORDER BY rowid", params,
        ).fetchall()
        dims = self._dims or (len(rows[0][3]) // 4 if rows else 1)
        # One buffer for all rows: per-row appends made loading a 100k scope take seconds.
        matrix = np.frombuffer(b"".join(row[3] for row in rows), dtype=np.float32).reshape(len(rows), dims)
        expires = np.array([datetime.fromisoformat(row[2]).timestamp() if row[2] else np.inf for row in rows],
                           dtype=np.float64)
        cached = _ScopeVectors.from_arrays([row[0] for row in rows], [row[1] for row in rows], matrix, expires,
                                           [row[4] for row in rows])
        self._vectors[scope] = cached
        self._cached_rows += len(cached.ids)
        while self._cached_rows > self.max_cached_vectors and len(self._vectors) > 1:
            _, evicted = self._vectors.popitem(last=False)
            self._cached_rows -= len(evicted.ids)
        return cached

    def _scores(self, cached: _ScopeVectors, matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
        """Cosine of the query with each row. A search asks several times for one query in one scope (facts, core
        memories, kept messages, rule-tagged memories: different filters): the last scores are kept and reused, as
        long as the scope's vectors are the same object with the same rows (appends grow it; any other change
        replaces it). Read only, so callers may keep the array after the lock is released."""
        key = query.tobytes()
        last = self._last_scores
        if last is not None and last[0]() is cached and last[1] == matrix.shape[0] and last[2] == key:
            return last[3]
        # einsum, not `matrix @ query`: as fast for this memory-bound product, and it never wakes BLAS's thread
        # pool, whose spinning threads slowed the embedder's next query by 8 ms on 2 cores (bench/scale.py).
        scores: np.ndarray = np.einsum("ij,j->i", matrix, query)
        scores.flags.writeable = False
        self._last_scores = (weakref.ref(cached), matrix.shape[0], key, scores)
        return scores

    def _allowed_rowids(self, scope: Scope, where: Node) -> np.ndarray:
        params: list[Any] = []
        sql = (f"SELECT rowid FROM memories WHERE {_scope_sql(scope, params)} AND deleted_at IS NULL "
               f"AND {to_sql(where, params)}")
        return np.fromiter((row[0] for row in self._db.execute(sql, params)), dtype=np.int64)

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
        with self._lock:
            self._check_foreign_writes()
            self._check_vector(query)
            cached = self._scope_vectors(scope)
            matrix, expires = cached.view()
            if matrix.shape[0] == 0:
                return []
            scores = self._scores(cached, matrix, query)
            mask: np.ndarray | None = None
            # An expiry mask that allows every row (no row expires before now) changes nothing: left out, and a
            # category filter's rows are then the ones kept for it (category_rows).
            if not include_expired:
                now = datetime.now(UTC).timestamp()
                if not cached.earliest_expiry() > now:
                    mask = expires > now
            rows = cached.category_rows(where) if where is not None and mask is None else None
            if where is not None and rows is None:
                allowed = cached.category_mask(where)
                if allowed is None:
                    allowed = np.isin(np.asarray(cached.rowids, dtype=np.int64), self._allowed_rowids(scope, where))
                mask = allowed if mask is None else mask & allowed
            ids = cached.ids
        # The best among the rows the filters allow, selected from those rows alone: a search's core memories and
        # kept messages are a small share of a scope, and partitioning all its rows cost ~80 us a call at 10k.
        if rows is None:
            rows = np.arange(scores.shape[0]) if mask is None else np.flatnonzero(mask)
        # Every row (no filter, or one that every row passes): the scores as they are, not a copy of them.
        candidates = scores if rows.shape[0] == scores.shape[0] else scores[rows]
        limit = min(limit, rows.shape[0])
        top = np.argpartition(-candidates, limit - 1)[:limit] if limit < rows.shape[0] else np.arange(rows.shape[0])
        top = top[np.argsort(-candidates[top], kind="stable")]
        best = candidates[top]
        kept = np.isfinite(best)  # whole arrays, not numpy scalars one by one: a third of what this took past einsum
        return [ScoredId(ids[i], score) for i, score in zip(rows[top[kept]].tolist(), best[kept].tolist(), strict=True)]

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
        with self._lock:
            frequencies = self._findable(terms)
            terms = [t for t in terms if t in frequencies]
            if not terms:
                return []
            if where is None:
                self._check_foreign_writes()
                index = self._keywords.get(scope)
                if index is None:
                    epoch, indexed_rows = self._index_epoch, self._indexed_rows(scope)
        if where is None:
            if index is None:
                # Built outside the lock (~0.3 s CPU for 10k memories): other users' searches do not wait for it. Kept
                # if the index did not change meanwhile; else this search asks FTS5, and the next one builds again.
                built = ScopeKeywords.from_rows(indexed_rows)
                with self._lock:
                    self._check_foreign_writes()
                    if self._index_epoch == epoch and scope not in self._keywords:
                        self._keep_keywords(scope, built)
            with self._lock:
                index = self._keywords.get(scope)
                if index is not None:
                    self._keywords.move_to_end(scope)
                    found = self._ranked_in_memory(index, terms, frequencies, limit, include_expired)
                    if found is not None:
                        return found
        if where is not None:
            params: list[Any] = [_keyword_query(scope, terms)]
            live = self._live_clause(params, include_expired, prefix="m.")
            sql = (
                "SELECT m.id, bm25(memory_fts, 1.0, 0.6, 0.0) AS rank FROM memory_fts "
                "JOIN memories m ON m.rowid = memory_fts.rowid "
                f"WHERE memory_fts MATCH ? AND {live} AND {to_sql(where, params)} ORDER BY rank LIMIT ?"
            )
            params.append(int(limit))
            with self._lock:
                rows = self._db.execute(sql, params).fetchall()
            # FTS5's bm25() is "lower is better" (negative); flip it so every path agrees that higher is better.
            return [ScoredId(row[0], -float(row[1])) for row in rows]
        with self._lock:
            common = [t for t in terms if frequencies[t] > KEYWORD_COMMON_ROWS]
            cut = None
            if common:  # the rowid of the newest KEYWORD_COMMON_ROWS-th memory of the scope a common word matches
                cut = self._vocabulary.newest_match(self._db, _keyword_query(scope, common), KEYWORD_COMMON_ROWS - 1)
            if cut is None:
                rows = self._ranked(_keyword_query(scope, terms), limit, include_expired)
            else:
                # BM25 sums over the query's words, each weighed by its store-wide IDF: a memory older than the cut
                # scored with the rare words alone gets what the whole query gives it, less its common words' share.
                rows = self._ranked(_keyword_query(scope, terms), limit, include_expired, "rowid >= ?", cut)
                rare = [t for t in terms if t not in common]
                if rare:
                    rows = sorted(rows + self._ranked(_keyword_query(scope, rare), limit, include_expired,
                                                      "rowid < ?", cut), key=lambda row: row[1])[:limit]
        return [ScoredId(row[0], -float(row[1])) for row in rows]

    def _ranked_in_memory(self, index: ScopeKeywords, terms: list[str], frequencies: dict[str, int], limit: int,
                          include_expired: bool) -> list[ScoredId] | None:
        """keyword_search without a filter, from the scope's keyword index (scope_keywords.py): what the SQL below
        answers, common words bounded the same way, scored the same; None for a query it leaves to FTS5."""
        if not len(index):
            return []
        by_term = [(term, query_phrases([term])) for term in terms]
        phrases = [phrase for _, term_phrases in by_term for phrase in term_phrases]
        postings = [index.phrase_postings(phrase) for phrase in phrases]
        found = [p for p in postings if p is not None]
        if len(found) < len(postings):
            return None
        rows, average_size = self._vocabulary.averages(self._db)
        statistics = Statistics(rows, average_size, self._phrase_rows(phrases))
        lengths = length_terms(index, statistics)
        scores, matched = bm25_scores(index, phrases, found, statistics, lengths)
        alive = index.alive()
        matched &= alive if include_expired else alive & index.unexpired(datetime.now(UTC).timestamp())
        common = {term for term in terms if frequencies[term] > KEYWORD_COMMON_ROWS}
        if common:  # as the SQL below: memories older than the newest KEYWORD_COMMON_ROWS that a common word matches
            # are ranked by the rare words alone
            is_common = [term in common for term, term_phrases in by_term for _ in term_phrases]
            # Where that begins depends on the index alone: kept with it, as the same common words come back.
            key = ("newest common", KEYWORD_COMMON_ROWS,
                   tuple(phrase for phrase, is_it in zip(phrases, is_common, strict=True) if is_it))
            cut = index.kept(key, lambda: _newest_common_rowid(index, found, is_common, alive))
            if cut is not None:
                rowids = index.rowids()
                rare = [(phrase, p, n) for phrase, p, n, is_it
                        in zip(phrases, found, statistics.phrase_rows, is_common, strict=True) if not is_it]
                rare_scores, rare_matched = bm25_scores(index, [r[0] for r in rare], [r[1] for r in rare],
                                                        Statistics(rows, average_size, [r[2] for r in rare]), lengths)
                older = rowids < cut
                scores[older] = rare_scores[older]
                matched &= ~older | rare_matched
        candidates = np.flatnonzero(matched)
        best = candidates[_stable_smallest(-scores[candidates], limit)]
        return [ScoredId(index.ids[i], score) for i, score in zip(best.tolist(), scores[best].tolist(), strict=True)]

    def _indexed_rows(self, scope: Scope) -> list[IndexedRow]:
        params: list[Any] = []
        return [IndexedRow(rowid, memory_id, datetime.fromisoformat(expires).timestamp() if expires else float("inf"),
                           terms, chars, scope_tokens)
                for rowid, memory_id, expires, terms, chars, scope_tokens in self._db.execute(
                    "SELECT m.rowid, m.id, m.expiration_date, f.terms, f.chars, f.scope FROM memories m "
                    f"JOIN memory_fts f ON f.rowid = m.rowid WHERE {_scope_sql(scope, params, 'm.')} "
                    "AND m.deleted_at IS NULL ORDER BY m.rowid", params)]

    def _keep_keywords(self, scope: Scope, index: ScopeKeywords) -> None:
        self._keywords[scope] = index
        self._keyword_rows += len(index)
        while self._keyword_rows > self.max_cached_keyword_rows and len(self._keywords) > 1:
            _, evicted = self._keywords.popitem(last=False)
            self._keyword_rows -= len(evicted)

    def _phrase_rows(self, phrases: Sequence[Phrase]) -> list[int]:
        """The rows of the whole index holding each phrase (a single token's: its column's document count), read
        through the vocabulary's cache in two calls, not one a phrase."""
        words = self._vocabulary.docs(self._db, [(p.column, p.tokens[0]) for p in phrases if len(p.tokens) == 1])
        matches = self._vocabulary.phrase_rows(
            self._db, [f"{p.column}:{_fts_phrase(' '.join(p.tokens))}" for p in phrases if len(p.tokens) > 1])
        return [0 if not p.tokens else words[p.column, p.tokens[0]] if len(p.tokens) == 1
                else matches[f"{p.column}:{_fts_phrase(' '.join(p.tokens))}"] for p in phrases]

    def _ranked(self, match: str, limit: int, include_expired: bool, rowids: str = "1",
                *bounds: int) -> list[tuple[str, float]]:
        """(id, FTS5's bm25: lower is better) of the live memories `match` finds among `rowids`, best first. Ranked
        inside the index, joined only for the best: a common word can match a large share of a scope."""
        params: list[Any] = [match, *bounds, int(limit) * 2]  # room for expired memories, dropped below
        live = self._live_clause(params, include_expired, prefix="m.")
        params.append(int(limit))
        sql = ("SELECT m.id, f.rank FROM (SELECT rowid, bm25(memory_fts, 1.0, 0.6, 0.0) AS rank FROM memory_fts "
               f"WHERE memory_fts MATCH ? AND {rowids} ORDER BY rank LIMIT ?) f JOIN memories m ON m.rowid = f.rowid "
               f"WHERE {live} ORDER BY f.rank LIMIT ?")
        return [(row[0], row[1]) for row in self._db.execute(sql, params).fetchall()]

    def _findable(self, terms: Sequence[str]) -> dict[str, int]:
        """The words the index can match, each with its memories holding it as a term: a word held as a term, and a
        Chinese word whose every character some memory holds (it may match as a phrase of them). The others are left
        out of the query: each costs FTS5 a lookup, a Chinese one a phrase over its characters, and finds nothing.
        The words a query reaches through the lexicon are many (a head word reaches its whole concept: 猫 医生 ~300
        words, most in no memory): with them all, keyword search took 13.7 ms on bench/throughput.py's store of
        2,000 memories; with the findable ones, 2.3 (terms alone: 1.9). Read through the vocabulary's cache
        (vocabulary.py), under the caller's lock."""
        words = list(dict.fromkeys(t for t in terms if t))
        chars = list(dict.fromkeys(c for t in words if has_cjk(t) for c in t if has_cjk(c)))
        if not words:
            return {}
        docs = self._vocabulary.docs(self._db, [*(("terms", w) for w in words), *(("chars", c) for c in chars)])
        return {t: docs["terms", t] for t in words
                if docs["terms", t] or (has_cjk(t) and all(docs["chars", c] for c in t if has_cjk(c)))}

    def document_frequencies(self, terms: Sequence[str]) -> tuple[dict[str, int], int]:
        if not terms:
            return {}, 0
        with self._lock:
            # The total counts deleted memories too: fine for telling common words from rare ones.
            docs, total = self._vocabulary.docs_and_total(self._db, [("terms", t) for t in terms])
        return {term: count for (_, term), count in docs.items() if count}, total

    @store_call("select", "history")
    def history(self, memory_id: str) -> list[HistoryEvent]:
        with self._lock:
            rows = self._db.execute(
                "SELECT h.*, r.reason FROM history h LEFT JOIN history_reason r ON r.history_id = h.id "
                "WHERE h.memory_id = ? ORDER BY h.created_at, h.rowid", (memory_id,)
            ).fetchall()
        return [row_to_history(row) for row in rows]

    def purged_history(self) -> Iterator[HistoryEvent]:
        last_rowid = 0
        while True:
            with self._lock:
                rows = self._db.execute(
                    "SELECT h.rowid AS position, h.*, r.reason FROM history h "
                    "LEFT JOIN history_reason r ON r.history_id = h.id WHERE h.rowid > ? "
                    "AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = h.memory_id) ORDER BY h.rowid LIMIT 500",
                    (last_rowid,),
                ).fetchall()
            if not rows:
                return
            for row in rows:
                yield row_to_history(row)
            last_rowid = rows[-1]["position"]

    def list_messages(self, scope: Scope, limit: int | None = None, after: str | None = None) -> list[StoredMessage]:
        params: list[Any] = []
        sql = f"SELECT * FROM messages WHERE {_scope_sql(scope.require(), params)}"
        if after is not None:
            sql += " AND rowid > coalesce((SELECT rowid FROM messages WHERE id = ?), 0)"
            params.append(after)
        sql += " ORDER BY rowid DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        with self._lock:
            rows = self._db.execute(sql, params).fetchall()
        return [row_to_message(row) for row in reversed(rows)]

    def get_messages(self, message_ids: Sequence[str]) -> list[StoredMessage]:
        if not message_ids:
            return []
        marks = ", ".join("?" * len(message_ids))
        with self._lock:
            rows = self._db.execute(f"SELECT * FROM messages WHERE id IN ({marks}) ORDER BY rowid",
                                    list(message_ids)).fetchall()
        return [row_to_message(row) for row in rows]

    def previous_messages(self, message_ids: Sequence[str]) -> dict[str, str]:
        if not message_ids:
            return {}
        # `IS` matches a missing id to a missing id and still walks messages_scope (user, agent, run, rowid) backwards.
        sql = ("SELECT m.id, (SELECT p.id FROM messages p WHERE p.user_id IS m.user_id AND p.agent_id IS m.agent_id"
               " AND p.run_id IS m.run_id AND p.rowid < m.rowid ORDER BY p.rowid DESC LIMIT 1)"
               " FROM messages m WHERE m.id IN ({marks})")
        with self._lock:
            self._check_foreign_writes()
            known = self._previous
            missing = list(dict.fromkeys(m for m in message_ids if m not in known))
            if missing:
                if len(known) + len(missing) > MAX_PREVIOUS_MESSAGES:
                    known.clear()
                marks = ", ".join("?" * len(missing))
                rows = self._db.execute(sql.format(marks=marks), missing).fetchall()
                known.update((row[0], row[1]) for row in rows)  # unknown ids are asked again next time
            # In the order asked, each id once (a dict keeps where a key first came).
            return {message: before for message in message_ids if (before := known.get(message)) is not None}

    # --- the write path's queue ------------------------------------------------------------------------------

    def add_turn(self, turn: TurnRecord, messages: Sequence[StoredMessage]) -> None:
        with self._write(keeps_records=True) as db:
            db.executemany(
                "INSERT INTO messages (id, user_id, agent_id, run_id, role, name, content, created_at, external_id,"
                " metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [message_to_row(m) for m in messages],
            )
            db.execute(f"INSERT INTO turns ({', '.join(TURN_COLUMNS)}) VALUES ({', '.join('?' * len(TURN_COLUMNS))})",
                       turn_to_row(turn))

    def get_turn(self, turn_id: str) -> TurnRecord | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM turns WHERE id = ?", (turn_id,)).fetchone()
        return row_to_turn(row) if row else None

    def save_turn(self, turn: TurnRecord) -> None:
        row = turn_to_row(turn)
        assignments = ", ".join(f"{column} = ?" for column in TURN_COLUMNS[1:])
        with self._write(keeps_records=True) as db:
            db.execute(f"UPDATE turns SET {assignments} WHERE id = ?", (*row[1:], turn.id))

    def claim_turns(self, now: datetime, lease_until: datetime, limit: int, *,
                    abandoned_only: bool = False) -> list[TurnRecord]:
        stamp, lease = format_datetime(now), format_datetime(lease_until)
        statuses = "('processing')" if abandoned_only else "('queued', 'retry', 'processing')"
        with self._write(keeps_records=True) as db:  # BEGIN IMMEDIATE: two processes never claim the same turn
            rows = db.execute(
                f"SELECT * FROM turns WHERE status IN {statuses} AND next_attempt_at <= ?"
                " AND (status != 'processing' OR lease_until IS NULL OR lease_until < ?) ORDER BY rowid LIMIT ?",
                (stamp, stamp, int(limit)),
            ).fetchall()
            turns = [row_to_turn(row) for row in rows]
            for turn in turns:
                turn.status, turn.lease_until = TurnStatus.PROCESSING, lease_until
            db.executemany("UPDATE turns SET status = 'processing', lease_until = ? WHERE id = ?",
                           [(lease, turn.id) for turn in turns])
        return turns

    def renew_turns(self, turn_ids: Sequence[str], lease_until: datetime) -> list[str]:
        lease = format_datetime(lease_until)
        renewed: list[str] = []
        with self._write(keeps_records=True) as db:
            for start in range(0, len(turn_ids), 500):
                chunk = list(turn_ids[start:start + 500])
                marks = ", ".join("?" for _ in chunk)
                renewed += [row[0] for row in db.execute(
                    f"UPDATE turns SET lease_until = ? WHERE id IN ({marks}) AND status = 'processing' RETURNING id",
                    (lease, *chunk))]
        return renewed

    def turn_counts(self) -> dict[str, int]:
        with self._lock:
            rows = self._db.execute("SELECT status, COUNT(*) FROM turns GROUP BY status").fetchall()
        return {row[0]: row[1] for row in rows}

    def try_lock(self, name: str, holder: str, until: datetime) -> bool:
        now = format_datetime(datetime.now(UTC))
        with self._write(keeps_records=True) as db:
            db.execute("DELETE FROM locks WHERE name = ? AND expires_at < ?", (name, now))
            taken = db.execute("INSERT OR IGNORE INTO locks (name, holder, expires_at) VALUES (?, ?, ?)",
                               (name, holder, format_datetime(until))).rowcount
        return taken == 1

    def unlock(self, name: str, holder: str) -> None:
        with self._write(keeps_records=True) as db:
            db.execute("DELETE FROM locks WHERE name = ? AND holder = ?", (name, holder))

    def renew_lock(self, name: str, holder: str, until: datetime) -> bool:
        with self._write(keeps_records=True) as db:
            return db.execute("UPDATE locks SET expires_at = ? WHERE name = ? AND holder = ?",
                              (format_datetime(until), name, holder)).rowcount == 1

    def claim_request(self, key: str, now: datetime, keep: timedelta) -> tuple[bool, str | None]:
        with self._write(keeps_records=True) as db:
            db.execute("DELETE FROM requests WHERE created_at < ?", (format_datetime(now - keep),))
            if db.execute("INSERT OR IGNORE INTO requests (key, response, created_at) VALUES (?, NULL, ?)",
                          (key, format_datetime(now))).rowcount == 1:
                return True, None
            row = db.execute("SELECT response FROM requests WHERE key = ?", (key,)).fetchone()
        return False, row[0] if row else None

    def finish_request(self, key: str, response: str | None) -> None:
        with self._write(keeps_records=True) as db:
            if response is None:
                db.execute("DELETE FROM requests WHERE key = ?", (key,))
            else:
                db.execute("UPDATE requests SET response = ? WHERE key = ?", (response, key))

    def get_state(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM state WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_state(self, key: str, value: str) -> None:
        with self._write(keeps_records=True) as db:
            db.execute("INSERT INTO state (key, value) VALUES (?, ?)"
                       " ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))

    def get_vectors(self, memory_ids: Sequence[str]) -> dict[str, np.ndarray]:
        rows = self._live_rows("id, embedding", memory_ids, "embedding IS NOT NULL")
        return {row[0]: np.frombuffer(row[1], dtype=np.float32).copy() for row in rows}

    def user_ids(self) -> list[str]:
        with self._lock:
            rows = self._db.execute(
                "SELECT DISTINCT user_id FROM memories WHERE deleted_at IS NULL AND user_id IS NOT NULL "
                "ORDER BY user_id").fetchall()
        return [row[0] for row in rows]

    def purge(self, deleted_before: datetime, scope: Scope | None = None) -> int:
        params: list[Any] = [format_datetime(deleted_before)]
        where = "deleted_at IS NOT NULL AND deleted_at < ?"
        if scope is not None and not scope.is_empty:
            where += " AND " + _scope_sql(scope, params)
        with self._write() as db:
            ids = [row[0] for row in db.execute(f"SELECT id FROM memories WHERE {where}", params)]
            for start in range(0, len(ids), 500):
                chunk = ids[start:start + 500]
                marks = ", ".join("?" for _ in chunk)
                # The audit trail stays (event, time, reason); what was remembered goes.
                db.execute(f"UPDATE history SET old_memory = NULL, new_memory = NULL WHERE memory_id IN ({marks})",
                           chunk)
                db.execute(f"DELETE FROM memories WHERE id IN ({marks})", chunk)
            if ids:
                vocabulary.stamp(db)  # max(rowid) may have gone down
        return len(ids)

    def count(self, scope: Scope | None = None) -> dict[str, int]:
        params: list[Any] = []
        where = "1" if scope is None or scope.is_empty else _scope_sql(scope, params)
        # Every memory: counted in the vitals index (m016), not read row by row from a narrower index.
        source = _VITALS_INDEX if where == "1" else "memories"
        with self._lock:
            rows = self._db.execute(
                f"SELECT layer, COUNT(*) FROM {source} WHERE {where} AND deleted_at IS NULL GROUP BY layer", params
            ).fetchall()
        return {row[0]: row[1] for row in rows}

    # --- API keys -------------------------------------------------------------------------------------------

    def add_api_key(self, key: ApiKey) -> None:
        with self._write(keeps_records=True) as db:
            db.execute("INSERT INTO api_keys VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (key.id, key.key_hash, key.scope.value, key.user_id, key.agent_id, key.name,
                        format_datetime(key.created_at), format_datetime(key.last_used_at),
                        format_datetime(key.revoked_at)))

    def api_key_by_hash(self, key_hash: str) -> ApiKey | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM api_keys WHERE key_hash = ?", (key_hash,)).fetchone()
        return _row_to_key(row) if row else None

    def list_api_keys(self) -> list[ApiKey]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM api_keys ORDER BY created_at DESC, id").fetchall()
        return [_row_to_key(row) for row in rows]

    def revoke_api_key(self, key_id: str, when: datetime) -> bool:
        with self._write(keeps_records=True) as db:
            changed = db.execute("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                                 (format_datetime(when), key_id)).rowcount
        return bool(changed)

    def touch_api_key(self, key_id: str, when: datetime) -> None:
        with self._write(keeps_records=True) as db:
            db.execute("UPDATE api_keys SET last_used_at = ? WHERE id = ?", (format_datetime(when), key_id))

    def keys_issued(self) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM api_keys LIMIT 1").fetchone() is not None

    # --- console sign-ins (stores/base.py SessionStore) -----------------------------------------------------

    def add_console_session(self, session: ConsoleSession) -> None:
        with self._write(keeps_records=True) as db:
            db.execute("INSERT INTO console_sessions VALUES (?, ?, ?, ?)",
                       (session.id_hash, session.sealed_key, format_datetime(session.opened_at),
                        format_datetime(session.seen_at)))

    def console_session_by_hash(self, id_hash: str) -> ConsoleSession | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM console_sessions WHERE id_hash = ?", (id_hash,)).fetchone()
        return ConsoleSession(row["id_hash"], row["sealed_key"], datetime.fromisoformat(row["opened_at"]),
                              datetime.fromisoformat(row["seen_at"])) if row else None

    def touch_console_session(self, id_hash: str, when: datetime) -> None:
        with self._write(keeps_records=True) as db:
            db.execute("UPDATE console_sessions SET seen_at = ? WHERE id_hash = ?", (format_datetime(when), id_hash))

    def delete_console_session(self, id_hash: str) -> bool:
        with self._write(keeps_records=True) as db:
            return db.execute("DELETE FROM console_sessions WHERE id_hash = ?", (id_hash,)).rowcount > 0

    def prune_console_sessions(self, seen_before: datetime, opened_before: datetime) -> int:
        with self._write(keeps_records=True) as db:
            return db.execute("DELETE FROM console_sessions WHERE seen_at < ? OR opened_at < ?",
                              (format_datetime(seen_before), format_datetime(opened_before))).rowcount

    # --- webhooks and their delivery queue ------------------------------------------------------------------

    def add_webhook(self, webhook: Webhook) -> None:
        with self._write(keeps_records=True) as db:
            webhook.after_change = int(db.execute("SELECT coalesce(max(rowid), 0) FROM history").fetchone()[0])
            db.execute(f"INSERT INTO webhooks ({', '.join(_WEBHOOK_COLUMNS)}) "
                       f"VALUES ({', '.join('?' for _ in _WEBHOOK_COLUMNS)})", _webhook_to_row(webhook))

    def get_webhook(self, webhook_id: str) -> Webhook | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM webhooks WHERE id = ?", (webhook_id,)).fetchone()
        return _row_to_webhook(row) if row else None

    def list_webhooks(self, project_id: str | None = None) -> list[Webhook]:
        sql, params = "SELECT * FROM webhooks", []
        if project_id is not None:
            sql, params = sql + " WHERE project_id = ?", [project_id]
        with self._lock:
            rows = self._db.execute(sql + " ORDER BY created_at, id", params).fetchall()
        return [_row_to_webhook(row) for row in rows]

    def save_webhook(self, webhook: Webhook) -> None:
        with self._write(keeps_records=True) as db:
            db.execute("UPDATE webhooks SET name = ?, url = ?, event_types = ?, is_active = ?, updated_at = ? "
                       "WHERE id = ?", (webhook.name, webhook.url, json.dumps(webhook.event_types),
                                        int(webhook.is_active), format_datetime(webhook.updated_at), webhook.id))

    def delete_webhook(self, webhook_id: str) -> bool:
        with self._write(keeps_records=True) as db:  # its deliveries go with it (ON DELETE CASCADE)
            return db.execute("DELETE FROM webhooks WHERE id = ?", (webhook_id,)).rowcount == 1

    def changes_after(self, position: int, limit: int) -> list[Change]:
        with self._lock:
            rows = self._db.execute(
                "SELECT h.rowid AS position, h.*, r.reason, m.id AS memory_row, m.user_id, m.agent_id, m.run_id, "
                "m.category, m.categories, m.content AS memory_content FROM history h "
                "LEFT JOIN history_reason r ON r.history_id = h.id "
                "LEFT JOIN memories m ON m.id = h.memory_id WHERE h.rowid > ? ORDER BY h.rowid LIMIT ?",
                (int(position), int(limit)),
            ).fetchall()
        return [Change(row["position"], row_to_history(row),
                       Scope(row["user_id"], row["agent_id"], row["run_id"]) if row["memory_row"] else None,
                       row["category"], tuple(parse_json(row["categories"]) if row["categories"] else ()),
                       row["memory_content"])
                for row in rows]

    def webhook_cursor(self) -> int:
        return int(self.get_state(WEBHOOK_CURSOR) or 0)

    def enqueue_deliveries(self, deliveries: Sequence[WebhookDelivery], cursor: int, new_cursor: int) -> bool:
        with self._write(keeps_records=True) as db:
            row = db.execute("SELECT value FROM state WHERE key = ?", (WEBHOOK_CURSOR,)).fetchone()
            if int(row[0] if row else 0) != cursor:
                return False
            db.executemany(_ENQUEUE_DELIVERY, [(*_delivery_to_row(d), d.webhook_id) for d in deliveries])
            db.execute("INSERT INTO state (key, value) VALUES (?, ?)"
                       " ON CONFLICT(key) DO UPDATE SET value = excluded.value", (WEBHOOK_CURSOR, str(new_cursor)))
        return True

    def claim_deliveries(self, now: datetime, lease_until: datetime, limit: int,
                         exclude_webhooks: Sequence[str] = ()) -> list[WebhookDelivery]:
        stamp = format_datetime(now)
        due, params = _DUE_DELIVERIES, [stamp, stamp]
        if exclude_webhooks:
            due += f" AND d.webhook_id NOT IN ({', '.join('?' for _ in exclude_webhooks)})"
            params += list(exclude_webhooks)
        with self._lock:  # a read first: an idle sender polls without taking the write lock
            if self._db.execute(f"SELECT 1 {due} LIMIT 1", params).fetchone() is None:
                return []
        with self._write(keeps_records=True) as db:  # BEGIN IMMEDIATE: two processes never claim the same delivery
            rows = db.execute(f"SELECT * FROM webhook_deliveries WHERE rowid IN (SELECT min(d.rowid) {due} "
                              "GROUP BY d.webhook_id) ORDER BY rowid LIMIT ?", [*params, int(limit)]).fetchall()
            deliveries = [_row_to_delivery(row) for row in rows]
            for delivery in deliveries:
                delivery.lease_until = lease_until
            db.executemany("UPDATE webhook_deliveries SET lease_until = ? WHERE id = ?",
                           [(format_datetime(lease_until), d.id) for d in deliveries])
        return deliveries

    def record_attempt(self, delivery: WebhookDelivery, when: datetime) -> None:
        delivery.lease_until, delivery.updated_at = None, when
        with self._write(keeps_records=True) as db:
            db.execute("UPDATE webhook_deliveries SET status = ?, attempts = ?, next_attempt_at = ?, "
                       "lease_until = NULL, last_status_code = ?, last_error = ?, updated_at = ? WHERE id = ?",
                       (delivery.status.value, delivery.attempts, format_datetime(delivery.next_attempt_at),
                        delivery.last_status_code, delivery.last_error, format_datetime(when), delivery.id))
            db.execute("UPDATE webhooks SET last_status = ?, last_status_code = ?, last_error = ?, last_attempt_at = ?"
                       " WHERE id = ?", (delivery.status.value, delivery.last_status_code, delivery.last_error,
                                         format_datetime(when), delivery.webhook_id))

    def release_deliveries(self, delivery_ids: Sequence[str]) -> None:
        if not delivery_ids:
            return
        with self._write(keeps_records=True) as db:
            db.executemany("UPDATE webhook_deliveries SET lease_until = NULL WHERE id = ? AND status = 'pending'",
                           [(delivery_id,) for delivery_id in delivery_ids])

    def list_deliveries(self, webhook_id: str, limit: int = 50) -> list[WebhookDelivery]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM webhook_deliveries WHERE webhook_id = ? ORDER BY rowid DESC LIMIT ?",
                                    (webhook_id, int(limit))).fetchall()
        return [_row_to_delivery(row) for row in rows]

    def delivery_counts(self, webhook_id: str) -> dict[str, int]:
        with self._lock:
            rows = self._db.execute("SELECT status, COUNT(*) FROM webhook_deliveries WHERE webhook_id = ? "
                                    "GROUP BY status", (webhook_id,)).fetchall()
        return {row[0]: row[1] for row in rows}

    def prune_deliveries(self, finished_before: datetime) -> int:
        with self._write(keeps_records=True) as db:
            return db.execute("DELETE FROM webhook_deliveries WHERE status != 'pending' AND updated_at < ?",
                              (format_datetime(finished_before),)).rowcount


    # --- un-deleting, and the console's reads (stores/base.py ConsoleStore) ------------------------------------

    def restore(self, memory_id: str, history: HistoryEvent, when: datetime, *,
                expected_version: int | None = None) -> MemoryRecord:
        with self._write() as db:
            self._check_foreign_writes()
            row = db.execute(f"SELECT rowid, {', '.join(MEMORY_COLUMNS)} FROM memories WHERE id = ? "
                             "AND deleted_at IS NOT NULL", (memory_id,)).fetchone()
            if row is None:
                raise InvalidInput(f"memory {memory_id} is not deleted, or was purged")
            _check_version(memory_id, row["version"], expected_version)
            db.execute("UPDATE memories SET deleted_at = NULL, delete_reason = NULL, updated_at = ?, "
                       "version = version + 1 WHERE id = ?", (format_datetime(when), memory_id))
            record = replace(row_to_memory(row), deleted_at=None, delete_reason=None, updated_at=when,
                             version=row["version"] + 1)
            indexed = self._index_text(db, row["rowid"], record)
            self._keywords_add(IndexedRow(row["rowid"], record.id, _expiry_seconds(record), *indexed), record.scope)
            _insert_history(db, [history])
            self._forget_cached(record.scope)  # its vector is searched again: the scope's matrix is rebuilt
        return record

    def tallies(self, kind: str, user_id: str | None = None) -> list[Tally]:
        column = _OWNER_COLUMNS.get(kind)
        if column is None:
            raise InvalidInput(f"kind must be one of {sorted(_OWNER_COLUMNS)}, got {kind!r}")
        params: list[Any] = []
        sql = (f"SELECT {column}, layer, category, COUNT(*) FROM {_VITALS_INDEX} "
               f"WHERE deleted_at IS NULL AND {column} IS NOT NULL")
        if user_id is not None:
            sql += " AND user_id = ?"
            params.append(user_id)
        with self._lock:
            rows = self._db.execute(f"{sql} GROUP BY {column}, layer, category ORDER BY {column}", params).fetchall()
        return [Tally(owner, layer, category, count) for owner, layer, category, count in rows]

    def browse_records(self, scope: Scope, where: Node | None = None, *, order_by: str = "created_at",
                       descending: bool = True, limit: int = 50, offset: int = 0, contains: str | None = None,
                       deleted: bool = False) -> RecordPage:
        if order_by not in BROWSE_ORDERS:
            raise InvalidInput(f"order_by must be one of {list(BROWSE_ORDERS)}, got {order_by!r}")
        params: list[Any] = []
        clauses = [_scope_sql(scope.require(), params),
                   "deleted_at IS NOT NULL" if deleted else "deleted_at IS NULL",
                   to_sql(where, params)]
        if contains:
            clauses.append("instr(content, ?) > 0")
            params.append(contains)
        condition = " AND ".join(clauses)
        direction = "DESC" if descending else "ASC"
        # created_at is never empty and the newest-first order is the scope index's own: a page is read from the
        # index, not sorted from every row. Other columns may be empty (never accessed): those go last.
        order = ("created_at DESC, rowid DESC" if order_by == "created_at" and descending else
                 f"{order_by} IS NULL, {order_by} {direction}, created_at DESC, rowid DESC")
        with self._lock:
            (total,) = self._db.execute(f"SELECT COUNT(*) FROM memories WHERE {condition}", params).fetchone()
            rows = self._db.execute(f"SELECT {', '.join(MEMORY_COLUMNS)} FROM memories WHERE {condition} "
                                    f"ORDER BY {order} LIMIT ? OFFSET ?",
                                    [*params, max(int(limit), 0), max(int(offset), 0)]).fetchall()
        return RecordPage(int(total), [row_to_memory(row) for row in rows])

    def list_turns(self, scope: Scope, statuses: Sequence[TurnStatus], limit: int = 50) -> list[TurnRecord]:
        if not statuses:
            return []
        params: list[Any] = []
        condition = _scope_sql(scope.require(), params)
        params += [TurnStatus(status).value for status in statuses]
        with self._lock:
            rows = self._db.execute(f"SELECT * FROM turns WHERE {condition} AND status IN "
                                    f"({', '.join('?' for _ in statuses)}) ORDER BY rowid DESC LIMIT ?",
                                    [*params, int(limit)]).fetchall()
        return [row_to_turn(row) for row in rows]

    def scope_turn_counts(self, scope: Scope) -> dict[str, int]:
        params: list[Any] = []
        condition = _scope_sql(scope.require(), params)
        with self._lock:
            rows = self._db.execute(f"SELECT status, COUNT(*) FROM turns WHERE {condition} GROUP BY status",
                                    params).fetchall()
        return {row[0]: row[1] for row in rows}

    def turns_with_messages(self, scope: Scope, message_ids: Sequence[str]) -> list[TurnRecord]:
        ids = list(dict.fromkeys(message_ids))[:500]  # a memory's provenance: a handful of messages
        if not ids:
            return []
        params: list[Any] = []
        condition = _scope_sql(scope.require(), params)
        with self._lock:
            rows = self._db.execute(
                f"SELECT * FROM turns WHERE {condition} AND EXISTS (SELECT 1 FROM json_each(turns.message_ids) "
                f"WHERE value IN ({', '.join('?' for _ in ids)})) ORDER BY rowid", [*params, *ids]).fetchall()
        return [row_to_turn(row) for row in rows]

    def scope_tallies(self, scope: Scope) -> list[ScopeTally]:
        params: list[Any] = []
        condition = _scope_sql(scope.require(), params)
        with self._lock:
            rows = self._db.execute(f"SELECT agent_id, run_id, layer, category, COUNT(*) FROM {_VITALS_INDEX} "
                                    f"WHERE {condition} AND deleted_at IS NULL GROUP BY agent_id, run_id, layer, "
                                    "category", params).fetchall()
        return [ScopeTally(agent, run, layer, category, count) for agent, run, layer, category, count in rows]

    def vitals(self, scope: Scope, where: Node | None = None) -> Vitals:
        params: list[Any] = []
        condition = f"{_scope_sql(scope.require(), params)} AND deleted_at IS NULL AND {to_sql(where, params)}"
        # The latest of the three times, compared as text (one fixed ISO format), cut to what numpy parses.
        last = ("substr(max(created_at, coalesce(updated_at, created_at), coalesce(last_accessed_at, created_at)), "
                "1, 26)")
        with self._lock:
            cursor = self._db.cursor()
            cursor.row_factory = None  # plain tuples: half the time of sqlite3.Row for 100k rows
            rows = cursor.execute(f"SELECT category, memory_type, importance, access_count, {last} "
                                  f"FROM {_VITALS_INDEX} WHERE {condition}", params).fetchall()
        if not rows:
            return Vitals(*(np.array([], dtype=kind) for kind in (object, object, np.float64, np.float64, np.float64)))
        categories, kinds, importance, recalls, times = zip(*rows, strict=True)
        return Vitals(np.array(categories, dtype=object), np.array(kinds, dtype=object),
                      np.array(importance, dtype=np.float64), np.array(recalls, dtype=np.float64),
                      np.array(times, dtype="datetime64[us]").astype(np.int64) / 1e6)


def _row_to_key(row: sqlite3.Row) -> ApiKey:
    return ApiKey(id=row["id"], key_hash=row["key_hash"], scope=KeyScope(row["scope"]), user_id=row["user_id"],
                  agent_id=row["agent_id"], name=row["name"], created_at=datetime.fromisoformat(row["created_at"]),
                  last_used_at=parse_datetime(row["last_used_at"]), revoked_at=parse_datetime(row["revoked_at"]))
