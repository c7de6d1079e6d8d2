"""What only the PostgreSQL store promises: migrations that several processes can start at once, no stale reads
across processes, a change log in commit order, the HNSW path for large scopes, BM25 statistics that stay exact,
filters that agree with `matches`, and clear errors when the driver or the server is missing.

The ports' contracts (tests/stores/test_<port>.py, see test_ports.py) run on this store through the `store` fixture."""

from __future__ import annotations

import subprocess
import sys
import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg.rows import dict_row

from jiyi import BackendUnavailable, ConfigError, InvalidInput, build_embedder, build_store
from jiyi.embedders.base import Embedder
from jiyi.filters import matches, parse_filters
from jiyi.records import Category, Event, HistoryEvent, Layer, MemoryRecord, Scope, StoredMessage, TurnRecord
from jiyi.stores.postgres import HnswSearch, PostgresStore
from jiyi.stores.postgres.codec import CHAR_PREFIX
from jiyi.stores.postgres.migrations import MIGRATIONS
from jiyi.text import analyze_for_index, query_terms
from tests.conftest import free_port
from tests.pg import TestPostgres

U = Scope("u")


@pytest.fixture
def url(postgres: TestPostgres) -> Iterator[str]:
    """A fresh, migrated database."""
    database = postgres.create_database()
    yield database
    postgres.drop_database(database)


@pytest.fixture
def pg(url: str) -> Iterator[PostgresStore]:
    store = PostgresStore(url)
    yield store
    store.close()


def bound(store: PostgresStore, embedder: Embedder) -> PostgresStore:
    store.bind_embedding(embedder.model_id, embedder.dims)
    return store


def put(store: PostgresStore, embedder: Embedder, *texts: str, scope: Scope = U, **fields: Any) -> list[str]:
    records = [MemoryRecord(content=t, scope=scope, **fields) for t in texts]
    store.insert(records, embedder.embed_documents(list(texts)), [HistoryEvent(r.id, Event.ADD, None, r.content)
                                                                  for r in records])
    return [r.id for r in records]


# --- schema and migrations ---------------------------------------------------------------------------------------


def test_migrations_are_recorded_and_history_keeps_mem0s_columns(url: str) -> None:
    PostgresStore(url).close()
    with psycopg.connect(url) as db:
        applied = [row[0] for row in db.execute("SELECT name FROM _migrations ORDER BY applied_at, name")]
        columns = [row[0] for row in db.execute("SELECT column_name FROM information_schema.columns "
                                                "WHERE table_name = 'history' ORDER BY ordinal_position")]
    assert sorted(applied) == sorted(name for name, _ in MIGRATIONS)
    assert columns == ["id", "memory_id", "old_memory", "new_memory", "event", "created_at", "updated_at",
                       "is_deleted", "actor_id", "role"]


_OPEN = """
import sys
from jiyi.stores.postgres import HnswSearch, PostgresStore
PostgresStore(sys.argv[1]).close()
"""


def test_processes_starting_at_once_on_a_new_database_migrate_it_once(postgres: TestPostgres) -> None:
    name = f"fresh_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres.url("postgres"), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")  # empty: not a copy of the migrated template
    url = postgres.url(name)
    try:
        starts = [subprocess.Popen([sys.executable, "-c", _OPEN, url], stderr=subprocess.PIPE, text=True)
                  for _ in range(3)]
        errors = [p.communicate(timeout=60)[1] for p in starts]
        assert [p.returncode for p in starts] == [0, 0, 0], errors
        with psycopg.connect(url) as db:
            (count,) = db.execute("SELECT count(*) FROM _migrations").fetchone()  # type: ignore[misc]
        assert count == len(MIGRATIONS)
    finally:
        postgres.drop_database(url)


def test_reopening_applies_no_migration_and_keeps_data(url: str, embedder: Embedder) -> None:
    store = bound(PostgresStore(url), embedder)
    record = MemoryRecord(content="persist me", scope=U, access_count=2)
    store.insert([record], embedder.embed_documents([record.content]), [])
    store.close()
    again = PostgresStore(url)
    try:
        assert again.get(record.id) == record
        assert again.embedding_binding() == (embedder.model_id, embedder.dims)
    finally:
        again.close()


def test_pool_options_in_the_url_are_read_and_checked(url: str) -> None:
    store = build_store(url + "?pool_max_size=2&pool_min_size=0&application_name=jiyi-test")
    try:
        assert store.count() == {}
    finally:
        store.close()
    with pytest.raises(ConfigError, match="pool_max_size"):
        build_store(url + "?pool_max_size=lots")


# --- clear errors -----------------------------------------------------------------------------------------------


def test_without_the_driver_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    for module in [m for m in sys.modules if m == "psycopg" or m.startswith(("psycopg.", "jiyi.stores.postgres"))]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, "psycopg", None)  # what an import sees when the package is not installed
    with pytest.raises(ConfigError, match=r"pip install 'jiyi\[postgres\]'"):
        build_store("postgresql://jiyi@127.0.0.1:5432/jiyi")


def test_an_unreachable_server_is_a_clear_error() -> None:
    port = free_port()
    with pytest.raises(BackendUnavailable, match=f"127.0.0.1:{port}/jiyi") as refused:
        build_store(f"postgresql://jiyi:secret@127.0.0.1:{port}/jiyi")
    assert "secret" not in str(refused.value)


def test_connections_a_server_restart_broke_are_replaced_not_used(
        url: str, pg: PostgresStore, postgres: TestPostgres, monkeypatch: pytest.MonkeyPatch) -> None:
    import jiyi.stores.postgres.store as module

    monkeypatch.setattr(module, "_TRUSTED_FOR", 0.0)  # every connection idle long enough to be tried first
    assert pg.count() == {}
    with psycopg.connect(postgres.url("postgres"), autocommit=True) as admin:  # what a restart does to them
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                      (url.rsplit("/", 1)[1],))
    assert pg.count() == {} and pg.get("nope") is None


def test_text_postgresql_cannot_hold_is_refused_as_bad_input(pg: PostgresStore, embedder: Embedder) -> None:
    bound(pg, embedder)
    with pytest.raises(InvalidInput, match="NUL"):
        put(pg, embedder, "nul \x00 inside")
    assert pg.count() == {}


# --- several processes on one database ---------------------------------------------------------------------------

_WRITER = """
import sys
from jiyi import build_embedder
from jiyi.records import MemoryRecord, Scope
from jiyi.stores.postgres import HnswSearch, PostgresStore
e = build_embedder("hashing")
s = PostgresStore(sys.argv[1])
r = MemoryRecord(content="written by another process about penguins", scope=Scope("u"))
s.insert([r], e.embed_documents([r.content]), [])
s.close()
print(r.id)
"""


def test_every_read_sees_what_another_process_just_wrote(url: str, pg: PostgresStore, embedder: Embedder) -> None:
    bound(pg, embedder)
    [mine] = put(pg, embedder, "my own memory about cats")
    query = embedder.embed_query("penguins")
    assert [h.memory_id for h in pg.vector_search(U, query, 5)] == [mine]  # any cache would be warm now
    other = subprocess.run([sys.executable, "-c", _WRITER, url], capture_output=True, text=True, check=True)
    theirs = other.stdout.strip()
    assert pg.vector_search(U, query, 1)[0].memory_id == theirs
    assert [h.memory_id for h in pg.keyword_search(U, query_terms("penguins"), 5)] == [theirs]

    second = PostgresStore(url)  # another worker: its changes too are seen at once
    try:
        record = second.get(theirs)
        assert record is not None
        second.soft_delete(theirs, "test", HistoryEvent(theirs, Event.DELETE, record.content, None),
                           datetime.now(UTC))
        assert [h.memory_id for h in pg.vector_search(U, query, 5)] == [mine]
        assert pg.keyword_search(U, query_terms("penguins"), 5) == []
    finally:
        second.close()


def test_workers_on_one_database_claim_each_turn_once(url: str) -> None:
    workers = [PostgresStore(url) for _ in range(3)]
    try:
        turns = []
        for i in range(45):
            message = StoredMessage(content=f"turn {i}", role="user", scope=Scope(f"user{i % 5}"))
            turn = TurnRecord(scope=message.scope, message_ids=[message.id])
            workers[0].add_turn(turn, [message])
            turns.append(turn.id)
        now = datetime.now(UTC)
        claimed: list[list[str]] = [[] for _ in workers]
        start = threading.Barrier(len(workers))

        def claim(slot: int) -> None:
            start.wait()
            while batch := workers[slot].claim_turns(now, now + timedelta(minutes=5), 2):
                claimed[slot].extend(t.id for t in batch)

        threads = [threading.Thread(target=claim, args=(i,)) for i in range(len(workers))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        every = [turn_id for ids in claimed for turn_id in ids]
        assert sorted(every) == sorted(turns)  # each exactly once
    finally:
        for worker in workers:
            worker.close()


def test_a_named_lock_holds_across_workers(url: str) -> None:
    one, two = PostgresStore(url), PostgresStore(url)
    try:
        later = datetime.now(UTC) + timedelta(minutes=1)
        assert one.try_lock("decide:user_id=u", "one", later)
        assert not two.try_lock("decide:user_id=u", "two", later)
        one.unlock("decide:user_id=u", "one")
        assert two.try_lock("decide:user_id=u", "two", later)
    finally:
        one.close()
        two.close()


def test_the_change_log_is_read_in_commit_order_so_a_reader_misses_nothing(
        url: str, pg: PostgresStore, embedder: Embedder) -> None:
    """Writers commit in any order; a reader that moves its cursor past what it read must still get every row."""
    bound(pg, embedder)
    writers = [PostgresStore(url) for _ in range(4)]
    written: list[str] = []
    done = threading.Event()

    def write(store: PostgresStore, n: int) -> None:
        for i in range(n):
            written.extend(put(store, embedder, f"writer fact {i}", scope=Scope(f"w{id(store)}")))

    seen: list[str] = []
    cursor = 0

    def read() -> None:
        nonlocal cursor
        while True:
            finished = done.is_set()
            changes = pg.changes_after(cursor, 50)
            seen.extend(c.event.memory_id for c in changes)
            cursor = changes[-1].position if changes else cursor
            if finished and not changes:
                return

    reader = threading.Thread(target=read)
    reader.start()
    threads = [threading.Thread(target=write, args=(store, 25)) for store in writers]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    finally:
        done.set()
        reader.join(timeout=60)
        for store in writers:
            store.close()
    assert Counter(seen) == Counter(written)


# --- vector search: exact within small scopes, HNSW beyond -------------------------------------------------------


def _hnsw_scans(store: PostgresStore) -> int:
    with store._connection() as conn:  # a pool of one: the connection the searches ran on
        conn.execute("SELECT pg_stat_force_next_flush()")
        row = conn.execute("SELECT idx_scan FROM pg_stat_user_indexes "
                           "WHERE indexrelname = 'memories_embedding_hnsw'").fetchone()
    return int(row["idx_scan"]) if row else 0


def test_a_scope_larger_than_the_exact_limit_is_searched_with_the_hnsw_index(url: str, embedder: Embedder) -> None:
    store = bound(PostgresStore(url + "?pool_max_size=1", exact_scan_limit=40, scope_indexes=False), embedder)
    try:
        texts = [f"note {i} about topic {i % 9} and colour {i % 5}" for i in range(200)]
        ids = put(store, embedder, *texts, metadata={"kind": "note"})
        [rare] = put(store, embedder, "the only memory of its kind", metadata={"kind": "rare"})
        small = put(store, embedder, *texts[:10], scope=Scope("small"))
        query = embedder.embed_query("note 42 about topic 6 and colour 2")
        exact = np.argsort(-(embedder.embed_documents(texts) @ query), kind="stable")

        before = _hnsw_scans(store)
        hits = store.vector_search(U, query, 10)
        assert _hnsw_scans(store) > before
        assert hits[0].memory_id == ids[int(exact[0])]
        assert len({h.memory_id for h in hits} & {ids[int(i)] for i in exact[:10]}) >= 9  # recall of the graph
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)

        before = _hnsw_scans(store)  # a scope under the limit is scored whole, without the index
        assert {h.memory_id for h in store.vector_search(Scope("small"), query, 20)} == set(small)
        assert _hnsw_scans(store) == before

        # A filter too narrow for the graph's neighbourhood: the scope is scored whole after all.
        narrow = parse_filters({"kind": "rare"})
        assert [h.memory_id for h in store.vector_search(U, query, 5, narrow)] == [rare]
    finally:
        store.close()


def _index_use(store: PostgresStore, index: str) -> tuple[int, int]:
    """(scans, table rows fetched) of an index; a scan that fetched no row read the index alone."""
    with store._connection() as conn:  # a pool of one: the connection the searches ran on
        conn.execute("SELECT pg_stat_force_next_flush()")
        row = conn.execute("SELECT idx_scan, idx_tup_fetch FROM pg_stat_user_indexes WHERE indexrelname = %s",
                           (index,)).fetchone()
    return (int(row["idx_scan"]), int(row["idx_tup_fetch"])) if row else (0, 0)


def test_an_exact_search_reads_the_scopes_vectors_from_their_index_alone(url: str, embedder: Embedder) -> None:
    """Everything the exact search reads of a memory is in memories_user_vectors: an index-only scan answers it.
    (The planner is left no other index on user_id, and no table scan: on a table this small it would read all.)"""
    store = bound(PostgresStore(url + "?pool_max_size=1"), embedder)
    try:
        texts = [f"note {i} about topic {i % 9}" for i in range(60)]
        ids = put(store, embedder, *texts)
        put(store, embedder, *texts, scope=Scope("other"))
        with psycopg.connect(url, autocommit=True) as db:
            for index in ("memories_user_id", "memories_user_category", "memories_user_vitals",
                          "memories_user_memory_type"):
                db.execute(f"DROP INDEX {index}")
            db.execute("VACUUM ANALYZE memories")  # what autovacuum does: the index alone answers then
        with store._connection() as conn:
            conn.execute("SET enable_seqscan = off; SET enable_bitmapscan = off")
        query = embedder.embed_query("note 7 about topic 7")
        scans, fetched = _index_use(store, "memories_user_vectors")
        hits = store.vector_search(U, query, 5, parse_filters({"jiyi.category": {"ne": "message"}}))
        assert _index_use(store, "memories_user_vectors") == (scans + 2, fetched)  # the size, then the search
        exact = np.argsort(-(embedder.embed_documents(texts) @ query), kind="stable")[:5]
        assert [h.memory_id for h in hits] == [ids[int(i)] for i in exact]
    finally:
        store.close()


def test_a_store_bound_before_the_scopes_vectors_were_indexed_gets_the_index(url: str, embedder: Embedder) -> None:
    from jiyi.stores.postgres.migrations import m019_memories_user_vectors

    bound(PostgresStore(url), embedder).close()
    with psycopg.connect(url, autocommit=True, row_factory=dict_row) as db:
        db.execute("DROP INDEX memories_user_vectors")
        with db.transaction():
            m019_memories_user_vectors(db)
        assert db.execute("SELECT to_regclass('memories_user_vectors') AS i").fetchone() == {
            "i": "memories_user_vectors"}


def test_vectors_wider_than_hnsw_takes_are_indexed_as_halfvec(url: str) -> None:
    wide = build_embedder("hashing", dims=2500)
    store = bound(PostgresStore(url + "?pool_max_size=1", exact_scan_limit=5, scope_indexes=False), wide)
    try:
        ids = put(store, wide, *[f"wide vector {i}" for i in range(30)])
        hits = store.vector_search(U, wide.embed_query("wide vector 7"), 3)
        assert hits[0].memory_id == ids[7] and _hnsw_scans(store) > 0
        with store._connection() as conn:  # too wide for a btree entry: exact searches read the table
            assert conn.execute("SELECT to_regclass('memories_user_vectors') AS i").fetchone() == {"i": None}
        assert np.allclose(store.get_vectors([ids[7]])[ids[7]], wide.embed_documents(["wide vector 7"])[0])
    finally:
        store.close()


def _hnsw_rows_read(store: PostgresStore) -> int:
    with store._connection() as conn:
        conn.execute("SELECT pg_stat_force_next_flush()")
        row = conn.execute("SELECT idx_tup_read FROM pg_stat_user_indexes "
                           "WHERE indexrelname = 'memories_embedding_hnsw'").fetchone()
    return int(row["idx_tup_read"]) if row else 0


def test_the_hnsw_settings_hold_for_the_one_search_and_the_best_of_the_candidates_are_kept(
        url: str, embedder: Embedder) -> None:
    """Each search sets pgvector's settings for itself alone (its own transaction): they are seen in the rows the
    index hands out, and never leak into the pooled connection."""
    texts = [f"note {i} about topic {i % 9} and colour {i % 5}" for i in range(300)]
    vectors = embedder.embed_documents(texts)
    query = embedder.embed_query("note 42 about topic 6 and colour 2")
    exact = np.argsort(-(vectors @ query), kind="stable")

    def store_with(settings: HnswSearch) -> PostgresStore:
        return PostgresStore(url + "?pool_max_size=1", exact_scan_limit=40, hnsw_search=settings,
                             scope_indexes=False)

    store = bound(store_with(HnswSearch(candidates=120)), embedder)
    try:
        ids = put(store, embedder, *texts)
        before = _hnsw_rows_read(store)
        hits = store.vector_search(U, query, 10)
        assert _hnsw_rows_read(store) - before >= 120  # asked for 120 candidates, kept the best 10
        assert [h.memory_id for h in hits] == [ids[int(i)] for i in exact[:10]]
        with store._connection() as conn:
            shown = conn.execute("SELECT current_setting('hnsw.ef_search') AS ef, "
                                 "current_setting('hnsw.iterative_scan') AS mode, "
                                 "current_setting('enable_seqscan') AS seqscan").fetchone()
        assert shown == {"ef": "40", "mode": "off", "seqscan": "on"}  # the server's defaults again
    finally:
        store.close()
    # The rows the index hands out grow with ef_search, and max_scan_tuples ends an iterative scan early. Here they
    # are all the nearest scope's, none of the scope searched: that is then scored whole after all.
    far_texts = [f"完全无关的第{i}条记录" for i in range(50)]
    store = bound(PostgresStore(url), embedder)
    try:
        far = put(store, embedder, *far_texts, scope=Scope("far"))
    finally:
        store.close()
    read = {}
    for ef, most in ((10, 1), (60, 1), (10, 20_000)):
        store = store_with(HnswSearch(ef_search=ef, max_scan_tuples=most))
        try:
            before = _hnsw_rows_read(store)
            found = store.vector_search(Scope("far"), query, 5)
            read[ef, most] = _hnsw_rows_read(store) - before
        finally:
            store.close()
        assert {h.memory_id for h in found} <= set(far) and len(found) == 5
    assert 0 < read[10, 1] < read[60, 1] and read[10, 1] < read[10, 20_000]


def test_hnsw_settings_out_of_pgvectors_bounds_are_refused() -> None:
    with pytest.raises(ConfigError, match="ef_search"):
        HnswSearch(ef_search=5000)
    with pytest.raises(ConfigError, match="iterative_scan"):
        HnswSearch(iterative_scan="off")
    with pytest.raises(ConfigError, match="candidates"):
        HnswSearch(candidates=0)


# --- keyword search: BM25 over jiyi.text's terms ------------------------------------------------------------------


def test_a_rare_word_outranks_a_common_one(pg: PostgresStore, embedder: Embedder) -> None:
    bound(pg, embedder)
    put(pg, embedder, *[f"I like thing number {i}" for i in range(20)], scope=Scope("others"))
    [common] = put(pg, embedder, "I like tea")
    [rare] = put(pg, embedder, "Jesica came over")
    hits = pg.keyword_search(U, query_terms("does Jesica like it"), 5)
    assert [h.memory_id for h in hits][:1] == [rare] and common in {h.memory_id for h in hits}


def test_a_word_in_very_many_memories_scores_only_its_newest_ones_and_rare_words_all_of_theirs(
        pg: PostgresStore, embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound on keyword work (KEYWORD_SCAN_ROWS): the rarest words, while the memories they can match add up to
    the bound, find all of theirs however old; the others are looked for among the scope's newest memories only.
    The scores of what is found are the full BM25 over every word."""
    monkeypatch.setattr("jiyi.stores.postgres.store.KEYWORD_SCAN_ROWS", 5)
    bound(pg, embedder)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    [old_rare] = put(pg, embedder, "I like tea with Jesica", created_at=start)
    common = [put(pg, embedder, f"I like tea, cup {i}", created_at=start + timedelta(days=1 + i))[0]
              for i in range(12)]
    hits = pg.keyword_search(U, query_terms("tea Jesica"), 20)
    found = [h.memory_id for h in hits]
    assert found[0] == old_rare  # matches both words, and the rare one however old it is
    assert set(found[1:]) == set(common[-5:])  # of the word in 13 memories, those among the newest 5
    unbounded = {h.memory_id: h.score for h in pg.keyword_search(U, query_terms("Jesica"), 20)}
    assert set(unbounded) == {old_rare}
    monkeypatch.setattr("jiyi.stores.postgres.store.KEYWORD_SCAN_ROWS", 1000)
    everything = {h.memory_id: h.score for h in pg.keyword_search(U, query_terms("tea Jesica"), 20)}
    assert len(everything) == 13
    assert all(everything[h.memory_id] == pytest.approx(h.score) for h in hits)  # the same BM25 for what is found


def test_a_word_common_in_the_store_is_looked_for_among_the_scopes_newest_memories_however_few_it_has(
        pg: PostgresStore, embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """Common among other users, rare in this scope: the word no longer walks the whole scope for its matches."""
    monkeypatch.setattr("jiyi.stores.postgres.store.KEYWORD_SCAN_ROWS", 6)
    bound(pg, embedder)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    put(pg, embedder, *[f"tea number {i}" for i in range(10)], scope=Scope("others"))
    put(pg, embedder, "I drank tea", created_at=start)
    put(pg, embedder, *[f"a walk on day {i}" for i in range(6)], created_at=start + timedelta(days=1))
    assert pg.keyword_search(U, query_terms("tea"), 10) == []  # its one match is older than the newest 6
    [new] = put(pg, embedder, "more tea today", created_at=start + timedelta(days=2))
    assert [h.memory_id for h in pg.keyword_search(U, query_terms("tea"), 10)] == [new]


def test_a_chinese_word_counts_as_common_when_its_characters_are(
        pg: PostgresStore, embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """虾 is found in 大虾 and 龙虾 by its character whatever jieba cut: it can match as many memories as hold 虾,
    and is bounded like a common word when those are many (keyword_stats counts each CJK character)."""
    monkeypatch.setattr("jiyi.stores.postgres.store.KEYWORD_SCAN_ROWS", 5)
    bound(pg, embedder)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    [old] = put(pg, embedder, "我以前养过一只小龙虾", created_at=start)
    newer = [put(pg, embedder, f"第{i}次去吃大虾", created_at=start + timedelta(days=1 + i))[0] for i in range(8)]
    assert pg.document_frequencies(["#虾"])[0] == {"#虾": 9}
    found = {h.memory_id for h in pg.keyword_search(U, ["虾"], 20)}
    assert found == set(newer[-5:])
    monkeypatch.setattr("jiyi.stores.postgres.store.KEYWORD_SCAN_ROWS", 1000)
    assert {h.memory_id for h in pg.keyword_search(U, ["虾"], 20)} == {old, *newer}


def test_a_filter_matching_nothing_in_a_large_scope_answers_nothing_without_the_index(
        url: str, embedder: Embedder) -> None:
    store = bound(PostgresStore(url + "?pool_max_size=1", exact_scan_limit=40, scope_indexes=False), embedder)
    try:
        put(store, embedder, *[f"note {i} about topic {i % 9}" for i in range(100)], metadata={"kind": "note"})
        before = _hnsw_scans(store)
        query = embedder.embed_query("note 7")
        assert store.vector_search(U, query, 5, parse_filters({"kind": "missing"})) == []
        assert _hnsw_scans(store) == before  # the one pass over the scope found nothing: no index, no second pass
        assert len(store.vector_search(U, query, 5, parse_filters({"kind": "note"}))) == 5
        assert _hnsw_scans(store) > before
    finally:
        store.close()


def _recount(store: PostgresStore) -> tuple[dict[str, int], int]:
    """Document frequencies of the terms and of the CJK characters ('#' + character), counted afresh."""
    frequencies: Counter[str] = Counter()
    live = list(store.iter_records())
    for record in live:
        analyzed = analyze_for_index(record.content)
        frequencies.update(set(analyzed.terms.split()) | {CHAR_PREFIX + c for c in analyzed.chars.split()})
    return dict(frequencies), len(live)


def test_document_frequencies_stay_exact_through_updates_deletes_and_restores(
        pg: PostgresStore, embedder: Embedder) -> None:
    bound(pg, embedder)
    ids = put(pg, embedder, "I like tea", "I like coffee", "我住在上海", "my sister likes tea too")
    record = pg.get(ids[1])
    assert record is not None
    pg.update(record.with_content("I love green tea now"), None, None)
    pg.update(record.with_content("I love green tea now"), None, None)  # the same text again: nothing to move
    gone = pg.get(ids[0])
    assert gone is not None
    pg.soft_delete(ids[0], "test", HistoryEvent(ids[0], Event.DELETE, gone.content, None), datetime.now(UTC))
    pg.soft_delete(ids[2], "test", HistoryEvent(ids[2], Event.DELETE, "我住在上海", None), datetime.now(UTC))
    pg.restore(ids[2], HistoryEvent(ids[2], Event.RESTORE, None, "我住在上海"), datetime.now(UTC))
    expected, total = _recount(pg)
    assert pg.document_frequencies([*sorted(expected), "unseen"]) == (expected, total)
    pg.purge(datetime.now(UTC) + timedelta(seconds=1))
    assert pg.document_frequencies(sorted(expected)) == (expected, total)
    pg.reset()
    assert pg.document_frequencies(["tea"]) == ({}, 0)



def test_a_database_indexed_with_summary_stamps_is_indexed_again_without_them(url: str, embedder: Embedder) -> None:
    from jiyi.stores.postgres.migrations import m015_keywords_without_stamps

    store = bound(PostgresStore(url), embedder)
    ids = put(store, embedder, "[2023-11-06 11:41] Talked about pottery", "[2023-11-07] 聊了陶艺", "We met 11 friends")
    expected = store.document_frequencies(["11", "41", "potteri", "talk"])
    with psycopg.connect(url, autocommit=True) as db:  # as the index was before m015: the stamp's numbers as words
        db.execute("UPDATE memories SET keywords = array_prepend('41', array_prepend('11', keywords)) "
                   "WHERE content LIKE '[2023-11-06%'")
        db.execute("INSERT INTO keyword_stats (term, shard, docs, length) VALUES ('11', 3, 1, 0), ('41', 3, 1, 0), "
                   "('', 3, 0, 2) ON CONFLICT (term, shard) DO UPDATE SET docs = keyword_stats.docs + excluded.docs, "
                   "length = keyword_stats.length + excluded.length")  # shard 3 may be the store's own
        assert store.document_frequencies(["11", "41"])[0] == {"11": 2, "41": 1}
        with db.transaction():
            m015_keywords_without_stamps(db)
    try:
        assert store.document_frequencies(["11", "41", "potteri", "talk"]) == expected
        assert [h.memory_id for h in store.keyword_search(U, ["11"], 10)] == [ids[2]]
        assert _recount(store) == store.document_frequencies(sorted(_recount(store)[0]))
    finally:
        store.close()

def test_a_database_without_counts_of_its_chinese_characters_gets_them(url: str, embedder: Embedder) -> None:
    from jiyi.stores.postgres.migrations import m016_keyword_stats_of_cjk_characters

    store = bound(PostgresStore(url), embedder)
    try:
        put(store, embedder, "我住在上海", "上海的小笼包很好吃", "I like tea")
        expected = _recount(store)
        with psycopg.connect(url, autocommit=True) as db:  # as keyword_stats was before m016: terms only
            db.execute("DELETE FROM keyword_stats WHERE term LIKE '#%'")
            assert store.document_frequencies(["#上", "#海"])[0] == {}
            with db.transaction():
                m016_keyword_stats_of_cjk_characters(db)
        assert store.document_frequencies(sorted(expected[0])) == expected
        assert store.document_frequencies(["#上"])[0] == {"#上": 2}
    finally:
        store.close()


def _hnsw_index(url: str) -> tuple[list[str], int]:
    with psycopg.connect(url) as db:
        row = db.execute("SELECT reloptions, relfilenode FROM pg_class "
                         "WHERE oid = 'memories_embedding_hnsw'::regclass").fetchone()
    assert row is not None
    return sorted(row[0] or []), int(row[1])


def test_an_hnsw_index_built_with_pgvectors_defaults_gets_the_measured_graph(
        url: str, embedder: Embedder, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from jiyi.stores.postgres import migrations

    store = bound(PostgresStore(url), embedder)
    try:
        put(store, embedder, *[f"note {i}" for i in range(50)])
    finally:
        store.close()
    assert _hnsw_index(url)[0] == ["ef_construction=128", "m=16"]  # a new index is built with them

    def as_before() -> int:  # as the index was before m017: pgvector's defaults
        with psycopg.connect(url, autocommit=True) as db:
            db.execute("ALTER INDEX memories_embedding_hnsw RESET (m, ef_construction)")
            db.execute("REINDEX INDEX memories_embedding_hnsw")
            db.execute("ANALYZE memories")
        return _hnsw_index(url)[1]

    before = as_before()
    with psycopg.connect(url, row_factory=dict_row) as db, db.transaction():  # as the store runs migrations
        migrations.m017_hnsw_graph_ef_construction_128(db)
    options, file = _hnsw_index(url)
    assert options == ["ef_construction=128", "m=16"] and file != before  # a small index: rebuilt at once

    before = as_before()
    monkeypatch.setattr(migrations, "REBUILD_IN_MIGRATION", 10)
    with psycopg.connect(url) as db, db.transaction():
        migrations.m017_hnsw_graph_ef_construction_128(db)
    options, file = _hnsw_index(url)
    assert options == ["ef_construction=128", "m=16"] and file == before  # a large one: left to the operator
    assert "REINDEX INDEX CONCURRENTLY memories_embedding_hnsw" in caplog.text


# --- filters: the SQL agrees with `matches` ---------------------------------------------------------------------

KEYS = ["topic", "n", "flag", "tags_meta", "role", "jiyi.importance", "jiyi.verified", "jiyi.tags",
        "jiyi.access_count", "jiyi.category", "jiyi.layer", "categories"]
DATES = ["2026-01-01", "2026-01-02T12:00:00Z", "2026-01-03"]
scalars = st.one_of(st.sampled_from(["food", "work", "Food", "spicy food", "x", "fact", "core", "tea"]),
                    st.integers(-3, 12), st.booleans(), st.sampled_from([0.5, 1.0, 2.5]))
metadata_values = st.one_of(scalars, st.none(), st.lists(st.sampled_from(["a", "b", "food", 1, True]), max_size=3))


def condition() -> st.SearchStrategy[dict[str, Any]]:
    key = st.sampled_from(KEYS)
    simple = st.builds(lambda k, v: {k: v}, key, scalars)
    wildcard = st.builds(lambda k: {k: "*"}, key)
    compare = st.builds(lambda k, op, v: {k: {op: v}}, key, st.sampled_from(["gt", "gte", "lt", "lte"]),
                        st.one_of(st.integers(-3, 12), st.sampled_from(["food", "m", 0.7])))
    date_key = st.sampled_from(["created_at", "jiyi.last_accessed_at"])
    dates = st.one_of(
        st.builds(lambda k, op, v: {k: {op: v}}, date_key, st.sampled_from(["gt", "gte", "lt", "lte", "eq", "ne"]),
                  st.sampled_from(DATES)),
        st.builds(lambda k, v: {k: v}, date_key, st.sampled_from(["*", *DATES])),
        st.builds(lambda k, op, v: {k: {op: v}}, date_key, st.sampled_from(["in", "nin"]),
                  st.lists(st.sampled_from(DATES), min_size=1, max_size=2)),
        st.builds(lambda k: {k: {"contains": "2026"}}, date_key))
    equality = st.builds(lambda k, op, v: {k: {op: v}}, key, st.sampled_from(["eq", "ne"]), scalars)
    member = st.builds(lambda k, op, v: {k: {op: v}}, key, st.sampled_from(["in", "nin"]),
                       st.lists(scalars, min_size=1, max_size=3))
    contains = st.builds(lambda k, op, v: {k: {op: v}}, key, st.sampled_from(["contains", "icontains"]),
                         st.sampled_from(["food", "FOOD", "a", "pic", "fac", "ea"]))
    return st.one_of(simple, wildcard, compare, dates, equality, member, contains)


filters = st.recursive(
    condition(),
    lambda inner: st.builds(lambda op, items: {op: items}, st.sampled_from(["AND", "OR", "NOT"]),
                            st.lists(inner, min_size=1, max_size=3)),
    max_leaves=6,
)
times = st.sampled_from([datetime(2026, 1, d, 6 * d, tzinfo=UTC) for d in (1, 2, 3)])
records = st.lists(
    st.builds(
        lambda meta, role, importance, verified, tags, count, category, created, accessed, categories: MemoryRecord(
            content="some memory", scope=U, metadata=meta, role=role, importance=importance, verified=verified,
            tags=tags, access_count=count, category=category, created_at=created, last_accessed_at=accessed,
            layer=Layer.LONG_TERM if verified else Layer.SHORT_TERM, categories=categories),
        st.dictionaries(st.sampled_from(KEYS[:4]), metadata_values, max_size=4),
        st.sampled_from([None, "user", "assistant"]),
        st.sampled_from([0.0, 0.5, 1.0, 3.0]),
        st.booleans(),
        st.lists(st.sampled_from(["food", "tea", "Food", "slot:home"]), max_size=2),
        st.integers(0, 3),
        st.sampled_from([Category.FACT, Category.CORE]),
        times,
        st.one_of(st.none(), times),
        st.lists(st.sampled_from(["food", "tea", "Food", "work"]), max_size=3, unique=True),
    ),
    min_size=1, max_size=6,
)


@pytest.fixture
def filter_store(pg: PostgresStore) -> PostgresStore:
    pg.bind_embedding("test", 4)
    return pg


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=records, raw_filter=filters)
def test_sql_translation_agrees_with_reference(filter_store: PostgresStore, batch: list[MemoryRecord],
                                               raw_filter: dict) -> None:
    scope = Scope(f"u-{uuid.uuid4().hex}")  # one database for every example: each its own user
    for record in batch:
        record.scope = scope
    filter_store.insert(batch, np.ones((len(batch), 4), np.float32) / 2, [])
    node = parse_filters(raw_filter)
    expected = {r.id for r in batch if matches(node, r)}
    assert {r.id for r in filter_store.list_records(scope, node)} == expected
    assert {h.memory_id for h in filter_store.vector_search(scope, np.ones(4, np.float32) / 2, 10, node)} == expected


@pytest.mark.parametrize("tag", ["slot:home", 'say "hi"', "back\\slash", "老家", "tab\there", "emoji 🙂", "50%"])
def test_a_tag_filter_finds_exactly_the_tagged_memories_whatever_the_tag_holds(pg: PostgresStore, tag: str) -> None:
    pg.bind_embedding("test", 2)
    tagged = MemoryRecord("tagged", U, tags=["fact", tag])
    longer = MemoryRecord("longer tag", U, tags=[tag + "x"])
    plain = MemoryRecord("untagged", U, tags=["fact"])
    pg.insert([tagged, longer, plain], np.eye(3, 2, dtype=np.float32) + 0.1, [])
    where = parse_filters({"jiyi.tags": {"contains": tag}})
    assert [r.id for r in pg.list_records(U, where)] == [tagged.id]
    assert [h.memory_id for h in pg.vector_search(U, np.array([1, 0], np.float32), 5, where)] == [tagged.id]
