"""A large user's own HNSW index (stores/postgres/scope_indexes.py) on a real PostgreSQL: built in the background
once a search finds the scope past the exact-scan limit, used by the searches that follow, exact on a small scope,
without deleted memories, built once however many processes ask, and rebuilt after a build that died."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import psycopg
import pytest
from psycopg.rows import dict_row

from jiyi.embedders.base import Embedder
from jiyi.records import Event, HistoryEvent, MemoryRecord, Scope, history_row
from jiyi.stores.postgres import PostgresStore
from jiyi.stores.postgres.scope_indexes import SCOPE_INDEX_LOCK, index_name
from tests.pg import TestPostgres

U = Scope("u")
LIMIT = 40  # the exact-scan limit of these stores: a scope of 120 memories is large
TEXTS = [f"note {i} about topic {i % 9} and colour {i % 5}" for i in range(120)]


@pytest.fixture
def url(postgres: TestPostgres) -> Iterator[str]:
    database = postgres.create_database()
    yield database
    postgres.drop_database(database)


def open_store(url: str, embedder: Embedder, **options: Any) -> PostgresStore:
    store = PostgresStore(url + "?pool_max_size=1", exact_scan_limit=LIMIT, **options)
    store.bind_embedding(embedder.model_id, embedder.dims)
    return store


def put(store: PostgresStore, embedder: Embedder, texts: list[str], scope: Scope = U) -> list[str]:
    records = [MemoryRecord(content=t, scope=scope) for t in texts]
    store.insert(records, embedder.embed_documents(texts), [HistoryEvent(r.id, Event.ADD, None, r.content)
                                                           for r in records])
    return [r.id for r in records]


def record(url: str, user_id: str) -> dict[str, Any] | None:
    with psycopg.connect(url, row_factory=dict_row) as db:
        return db.execute("SELECT s.status, s.attempts, s.rows, i.indisvalid AS valid, pg_get_indexdef(i.indexrelid) "
                          "AS definition FROM scope_vector_indexes s LEFT JOIN pg_index i "
                          "ON i.indexrelid = to_regclass(s.index_name) WHERE s.user_id = %s", (user_id,)).fetchone()


def scans(store: PostgresStore, index: str) -> int:
    with store._connection() as conn:  # a pool of one: the connection the searches ran on
        conn.execute("SELECT pg_stat_force_next_flush()")
        row = conn.execute("SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = %s", (index,)).fetchone()
    return int(row["idx_scan"]) if row else 0


def assert_exact(hits: list[Any], embedder: Embedder, texts: list[str], ids: list[str], query: np.ndarray) -> None:
    """The hits are the k nearest (in order, each with its own score): equal scores may come in either order, the
    database and numpy summing in their own order."""
    scores = dict(zip(ids, (embedder.embed_documents(texts) @ query).tolist(), strict=True))
    assert [h.score for h in hits] == pytest.approx(sorted(scores.values(), reverse=True)[:len(hits)], abs=1e-5)
    assert all(h.score == pytest.approx(scores[h.memory_id], abs=1e-5) for h in hits)


def test_a_scope_searched_past_the_limit_gets_its_own_index_and_searches_use_it(url: str, embedder: Embedder) -> None:
    store = open_store(url, embedder)
    try:
        ids = put(store, embedder, TEXTS)
        put(store, embedder, TEXTS[:20], scope=Scope("small"))
        put(store, embedder, TEXTS, scope=Scope("other"))  # the global graph holds twice the scope
        query = embedder.embed_query("note 42 about topic 6 and colour 2")
        store.vector_search(Scope("small"), query, 10)
        assert record(url, "small") is None  # under the limit: scored whole, no index asked for

        store.vector_search(U, query, 10)  # past it: searched with the global graph, the user's index asked for
        store.wait_for_scope_indexes(60)
        built = record(url, "u")
        assert built is not None and built["status"] == "ready" and built["valid"] and built["rows"] == 120
        assert "USING hnsw" in built["definition"] and "WHERE ((user_id = 'u'::text) AND (deleted_at IS NULL))" in \
            built["definition"]

        own, shared = scans(store, index_name("u")), scans(store, "memories_embedding_hnsw")
        hits = store.vector_search(U, query, 10)
        assert scans(store, index_name("u")) == own + 1 and scans(store, "memories_embedding_hnsw") == shared
        assert len(hits) == 10
        assert_exact(hits, embedder, TEXTS, ids, query)  # a graph of 120 searched at ef_search 1000: exact

        # A deleted memory leaves the user's index: not found, and the next nearest takes its place.
        now = datetime.now(UTC)
        first = store.get(hits[0].memory_id)
        assert first is not None
        store.soft_delete(first.id, "test", history_row(Event.DELETE, first, now), now)
        live = [(t, i) for t, i in zip(TEXTS, ids, strict=True) if i != first.id]
        after = store.vector_search(U, query, 10)
        assert first.id not in {h.memory_id for h in after}
        assert_exact(after, embedder, [t for t, _ in live], [i for _, i in live], query)

        # A scope without an index of its own keeps the global graph, until its own is built.
        shared = scans(store, "memories_embedding_hnsw")
        store.vector_search(Scope("other"), query, 10)
        assert scans(store, "memories_embedding_hnsw") == shared + 1
        store.wait_for_scope_indexes(60)
        assert (record(url, "other") or {}).get("status") == "ready"
    finally:
        store.close()


def test_processes_racing_for_one_users_index_build_it_once(url: str, embedder: Embedder) -> None:
    stores = [open_store(url, embedder, scope_indexes=False) for _ in range(4)]
    try:
        put(stores[0], embedder, TEXTS)
        start = threading.Barrier(len(stores))
        answers: list[str] = []

        def build(store: PostgresStore) -> None:
            start.wait()
            answers.append(store.index_scope("u"))

        threads = [threading.Thread(target=build, args=(s,)) for s in stores]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert answers.count("built") == 1 and set(answers) <= {"built", "busy", "ready"}
        built = record(url, "u")
        assert built is not None and built["status"] == "ready" and built["attempts"] == 1
        assert stores[1].index_scope("u") == "ready"
    finally:
        for store in stores:
            store.close()


def test_a_user_being_indexed_elsewhere_is_left_to_that_process(url: str, embedder: Embedder) -> None:
    store = open_store(url, embedder, scope_indexes=False)
    try:
        put(store, embedder, TEXTS)
        with psycopg.connect(url, autocommit=True) as builder:  # another process, building it
            builder.execute("SELECT pg_advisory_lock(%s, hashtext('u'))", (SCOPE_INDEX_LOCK,))
            assert store.index_scope("u") == "busy"
            assert len(store.vector_search(U, embedder.embed_query("note 3"), 5)) == 5  # the global graph meanwhile
        assert store.index_scope("u") == "built"
    finally:
        store.close()


def test_a_build_that_died_is_cleaned_up_and_done_again(url: str, embedder: Embedder) -> None:
    """What a process killed mid-build leaves: its record at 'building' and an invalid index of that name (here a
    concurrent unique build that failed). The next search past the limit builds it afresh."""
    store = open_store(url, embedder)
    try:
        put(store, embedder, TEXTS)
        name = index_name("u")
        with psycopg.connect(url, autocommit=True) as db:
            db.execute("INSERT INTO scope_vector_indexes (user_id, index_name, status, attempts, started_at) "
                       "VALUES ('u', %s, 'building', 1, now())", (name,))
            with pytest.raises(psycopg.errors.UniqueViolation):
                db.execute(f"CREATE UNIQUE INDEX CONCURRENTLY {name} ON memories (user_id) WHERE user_id = 'u'")
        assert record(url, "u") == {"status": "building", "attempts": 1, "rows": None, "valid": False,
                                    "definition": f"CREATE UNIQUE INDEX {name} ON public.memories USING btree "
                                                  "(user_id) WHERE (user_id = 'u'::text)"}
        store.vector_search(U, embedder.embed_query("note 3"), 5)
        store.wait_for_scope_indexes(60)
        rebuilt = record(url, "u")
        assert rebuilt is not None and rebuilt["status"] == "ready" and rebuilt["valid"]
        assert rebuilt["attempts"] == 2 and "USING hnsw" in rebuilt["definition"]
    finally:
        store.close()


def test_a_failed_build_is_asked_for_again_only_after_a_while(url: str, embedder: Embedder) -> None:
    store = open_store(url, embedder)
    try:
        put(store, embedder, TEXTS)
        with psycopg.connect(url, autocommit=True) as db:
            db.execute("INSERT INTO scope_vector_indexes (user_id, index_name, status, attempts, started_at, error) "
                       "VALUES ('u', %s, 'failed', 1, now(), 'out of memory')", (index_name("u"),))
        store.vector_search(U, embedder.embed_query("note 3"), 5)
        store.wait_for_scope_indexes(60)
        assert record(url, "u") == {"status": "failed", "attempts": 1, "rows": None, "valid": None,
                                    "definition": None}
        with psycopg.connect(url, autocommit=True) as db:
            db.execute("UPDATE scope_vector_indexes SET started_at = %s", (datetime.now(UTC) - timedelta(hours=2),))
        store.vector_search(U, embedder.embed_query("note 3"), 5)
        store.wait_for_scope_indexes(60)
        again = record(url, "u")
        assert again is not None and again["status"] == "ready" and again["attempts"] == 2
    finally:
        store.close()


def test_a_reset_drops_the_users_indexes(url: str, embedder: Embedder) -> None:
    store = open_store(url, embedder, scope_indexes=False)
    try:
        put(store, embedder, TEXTS)
        store.vector_search(U, embedder.embed_query("note 3"), 5)
        store.wait_for_scope_indexes(60)
        assert record(url, "u") is None  # scope_indexes=False: none built unasked
        assert store.index_scope("u") == "built"
        store.reset()
        with psycopg.connect(url) as db:
            assert db.execute("SELECT to_regclass(%s)", (index_name("u"),)).fetchone() == (None,)
            assert db.execute("SELECT count(*) FROM scope_vector_indexes").fetchone() == (0,)
    finally:
        store.close()


def test_closing_the_store_cancels_a_build_under_way_and_leaves_no_record(url: str, embedder: Embedder) -> None:
    """A build waits for writers that were mid-transaction when it began (CREATE INDEX CONCURRENTLY): one held open
    keeps it waiting. close() cancels it without waiting for them; the next build cleans up."""
    store = open_store(url, embedder)
    try:
        put(store, embedder, TEXTS)
        with psycopg.connect(url) as writer:  # a transaction left open, after a write to the table
            writer.execute("UPDATE memories SET importance = importance WHERE id = (SELECT min(id) FROM memories)")
            store.vector_search(U, embedder.embed_query("note 3"), 5)
            with psycopg.connect(url, autocommit=True) as watch:
                for _ in range(300):
                    waiting = watch.execute("SELECT count(*) FROM pg_stat_activity WHERE query LIKE "
                                            "'CREATE INDEX CONCURRENTLY%%' AND wait_event_type = 'Lock'").fetchone()
                    if waiting and waiting[0]:
                        break
                    time.sleep(0.02)
                else:
                    pytest.fail("the build never started")
            started = time.perf_counter()
            store.close()
            assert time.perf_counter() - started < 5
            writer.rollback()
        assert record(url, "u") is None
    finally:
        store.close()
    store = open_store(url, embedder, scope_indexes=False)
    try:
        assert store.index_scope("u") == "built"  # over what the cancelled build left
    finally:
        store.close()


def test_wide_vectors_get_a_halfvec_index_of_their_own(url: str) -> None:
    from jiyi import build_embedder

    wide = build_embedder("hashing", dims=2500)
    store = PostgresStore(url + "?pool_max_size=1", exact_scan_limit=5, scope_indexes=False)
    store.bind_embedding(wide.model_id, wide.dims)
    try:
        ids = put(store, wide, [f"wide vector {i}" for i in range(30)])
        assert store.index_scope("u") == "built"
        built = record(url, "u")
        assert built is not None and "halfvec_ip_ops" in built["definition"]
        with psycopg.connect(url, autocommit=True) as db:  # statistics: the user's index is the cheaper of the two
            db.execute("ANALYZE memories")
        own = scans(store, index_name("u"))
        assert store.vector_search(U, wide.embed_query("wide vector 7"), 3)[0].memory_id == ids[7]
        assert scans(store, index_name("u")) == own + 1
    finally:
        store.close()
