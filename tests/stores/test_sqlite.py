"""What only the SQLite store promises: one file, WAL, migrations, other processes' writes seen."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from jiyi import build_embedder
from jiyi.records import Event, HistoryEvent, MemoryRecord, Scope
from jiyi.stores.sqlite import SqliteStore
from jiyi.stores.sqlite.migrations import MIGRATIONS


def test_one_file_in_wal_mode_with_mem0_history_columns(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "m.db")
    store.close()
    db = sqlite3.connect(tmp_path / "m.db")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    columns = [row[1] for row in db.execute("PRAGMA table_info(history)")]
    assert columns == ["id", "memory_id", "old_memory", "new_memory", "event", "created_at", "updated_at",
                       "is_deleted", "actor_id", "role"]
    applied = [row[0] for row in db.execute("SELECT name FROM _migrations ORDER BY rowid")]
    assert applied == [name for name, _ in MIGRATIONS]


def closed_store_holding(path: Path, content: str) -> MemoryRecord:
    """A store file holding one memory (hashing embedder), closed; the memory."""
    embedder = build_embedder("hashing")
    store = SqliteStore(path)
    store.bind_embedding(embedder.model_id, embedder.dims)
    record = MemoryRecord(content=content, scope=Scope("u"))
    store.insert([record], embedder.embed_documents([record.content]), [])
    store.close()
    return record


def test_reopening_applies_no_migration_twice_and_keeps_data(tmp_path: Path) -> None:
    record = closed_store_holding(tmp_path / "m.db", "persist me")
    again = SqliteStore(tmp_path / "m.db")
    embedder = build_embedder("hashing")
    assert again.get(record.id) == record
    assert again.embedding_binding() == (embedder.model_id, embedder.dims)


def test_a_store_indexed_with_summary_stamps_is_indexed_again_without_them(tmp_path: Path) -> None:
    summary = closed_store_holding(tmp_path / "m.db", "[2023-11-06 11:41] Talked about pottery")
    db = sqlite3.connect(tmp_path / "m.db")  # as the index was before m017: the stamp's numbers as words
    with db:
        db.execute("UPDATE memory_fts SET terms = '11 41 talk potteri'")
        db.execute("DELETE FROM _migrations WHERE name = 'm017_keywords_without_stamps'")
    assert [row[0] for row in db.execute("SELECT term FROM memory_vocab WHERE col = 'terms' ORDER BY term")] == [
        "11", "41", "potteri", "talk"]
    db.close()
    again = SqliteStore(tmp_path / "m.db")
    assert again.keyword_search(Scope("u"), ["11"], 10) == []
    assert [h.memory_id for h in again.keyword_search(Scope("u"), ["potteri"], 10)] == [summary.id]
    assert again.document_frequencies(["11", "potteri"]) == ({"potteri": 1}, 1)

_WRITER = """
import sys
from jiyi import build_embedder
from jiyi.records import MemoryRecord, Scope
from jiyi.stores.sqlite import SqliteStore
e = build_embedder("hashing")
s = SqliteStore(sys.argv[1])
r = MemoryRecord(content="written by another process about penguins", scope=Scope("u"))
s.insert([r], e.embed_documents([r.content]), [])
print(r.id)
"""


def test_sees_writes_of_another_process(tmp_path: Path) -> None:
    embedder = build_embedder("hashing")
    path = tmp_path / "shared.db"
    store = SqliteStore(path)
    store.bind_embedding(embedder.model_id, embedder.dims)
    first = MemoryRecord(content="my own memory about cats", scope=Scope("u"))
    store.insert([first], embedder.embed_documents([first.content]), [HistoryEvent(first.id, Event.ADD, None, "x")])
    query = embedder.embed_query("penguins")
    assert [h.memory_id for h in store.vector_search(Scope("u"), query, 5)] == [first.id]  # cache is warm now
    other = subprocess.run([sys.executable, "-c", _WRITER, str(path)], capture_output=True, text=True, check=True)
    new_id = other.stdout.strip()
    assert store.vector_search(Scope("u"), query, 1)[0].memory_id == new_id



_RELOGGER = """
import sys
from jiyi.records import Scope, StoredMessage
from jiyi.stores.sqlite import SqliteStore
store = SqliteStore(sys.argv[1])
store.reset()
store.add_messages([StoredMessage(content=f"again {i}", role="user", scope=Scope("u"), id=i) for i in sys.argv[2:]])
"""


def test_previous_messages_follow_another_process_s_writes(tmp_path: Path) -> None:
    """previous_messages keeps its answers while the log only grows; another process may have reset it and stored
    the same ids in another order."""
    from jiyi.records import StoredMessage

    path = tmp_path / "log.db"
    store = SqliteStore(path)
    store.add_messages([StoredMessage(content=i, role="user", scope=Scope("u"), id=i) for i in ("a", "b", "c")])
    assert store.previous_messages(["a", "b", "c"]) == {"b": "a", "c": "b"}
    subprocess.run([sys.executable, "-c", _RELOGGER, str(path), "c", "b", "a"], check=True)
    assert store.previous_messages(["a", "b", "c"]) == {"b": "c", "a": "b"}
    store.reset()
    store.add_messages([StoredMessage(content=i, role="user", scope=Scope("u"), id=i) for i in ("b", "a")])
    assert store.previous_messages(["a", "b"]) == {"a": "b"}
    store.close()


def test_word_counts_follow_every_write_that_changes_the_index_and_only_those(tmp_path: Path) -> None:
    """document_frequencies and keyword search read the vocabulary through a cache (stores/sqlite/vocabulary.py):
    each write that changes what the index holds must show at the next read, and a write that does not (access
    counts) must not empty the cache."""
    embedder = build_embedder("hashing")
    store = SqliteStore(tmp_path / "m.db")
    store.bind_embedding(embedder.model_id, embedder.dims)

    def add(content: str) -> MemoryRecord:
        record = MemoryRecord(content=content, scope=Scope("u"))
        store.insert([record], embedder.embed_documents([content]), [])
        return record

    def penguins() -> int:
        return store.document_frequencies(["penguin", "企鹅"])[0].get("penguin", 0)

    def stamp() -> str:
        return store._db.execute("SELECT value FROM meta WHERE key = 'vocabulary_stamp'").fetchone()[0]

    first = add("penguins waddle")
    assert penguins() == 1
    second = add("more penguins at the zoo")
    assert penguins() == 2
    assert store.document_frequencies(["企鹅"]) == ({}, 2)
    assert [h.memory_id for h in store.keyword_search(Scope("u"), ["企鹅"], 5)] == []
    third = add("动物园的企鹅")
    assert store.document_frequencies(["企鹅"]) == ({"企鹅": 1}, 3)
    assert [h.memory_id for h in store.keyword_search(Scope("u"), ["企鹅"], 5)] == [third.id]

    before = stamp()
    store.record_access([first.id, second.id], datetime.now(UTC))
    assert stamp() == before  # the counts stay cached

    store.update(replace(second, content="more seals at the zoo"), None, None)
    assert penguins() == 1
    when = datetime.now(UTC)
    store.soft_delete(first.id, "test", HistoryEvent(first.id, Event.DELETE, "penguins waddle", None), when)
    assert penguins() == 0
    assert store.keyword_search(Scope("u"), ["penguin"], 5) == []
    store.restore(first.id, HistoryEvent(first.id, Event.ADD, None, "penguins waddle"), when)
    assert penguins() == 1
    assert [h.memory_id for h in store.keyword_search(Scope("u"), ["penguin"], 5)] == [first.id]
    store.reset()
    assert store.document_frequencies(["penguin", "企鹅"]) == ({}, 0)


def test_word_counts_follow_another_process_s_writes(tmp_path: Path) -> None:
    embedder = build_embedder("hashing")
    path = tmp_path / "shared.db"
    store = SqliteStore(path)
    store.bind_embedding(embedder.model_id, embedder.dims)
    assert store.document_frequencies(["penguin"]) == ({}, 0)  # cached: no memory holds it
    assert store.keyword_search(Scope("u"), ["penguin"], 5) == []
    other = subprocess.run([sys.executable, "-c", _WRITER, str(path)], capture_output=True, text=True, check=True)
    assert store.document_frequencies(["penguin"]) == ({"penguin": 1}, 1)
    assert [h.memory_id for h in store.keyword_search(Scope("u"), ["penguin"], 5)] == [other.stdout.strip()]

def test_vector_cache_is_bounded_and_still_correct(tmp_path: Path) -> None:
    embedder = build_embedder("hashing")
    store = SqliteStore(tmp_path / "m.db", max_cached_vectors=10)
    store.bind_embedding(embedder.model_id, embedder.dims)
    for user in ("a", "b", "c"):
        records = [MemoryRecord(content=f"{user} note {i}", scope=Scope(user)) for i in range(6)]
        store.insert(records, embedder.embed_documents([r.content for r in records]), [])
    for user in ("a", "b", "c", "a"):
        hits = store.vector_search(Scope(user), embedder.embed_query(f"{user} note 3"), 1)
        assert store.get(hits[0].memory_id).content == f"{user} note 3"  # type: ignore[union-attr]
        assert store._cached_rows <= 10


def test_recall_filters_read_an_index_not_every_row_of_the_user(tmp_path: Path) -> None:
    """Every search restricts a second vector search to core/system memories, and the rules path to a slot's tag or
    to preferences and constraints. Their SQL must be answered from memories_user_facets alone (a scan of the rows,
    embeddings included, took 13-16 ms at 10k memories), while NOT keeps its NULL-safe form."""
    from jiyi.core.facts import slot_filter
    from jiyi.core.intent import CONSTRAINT_FILTER
    from jiyi.core.retrieval import CORE_FILTER
    from jiyi.filters import parse_filters
    from jiyi.stores.sqlite.sql_filters import to_sql

    store = SqliteStore(tmp_path / "plan.db")
    for name, node in (("core", CORE_FILTER), ("slot", slot_filter("hometown")), ("constraint", CONSTRAINT_FILTER)):
        params: list[object] = []
        where = to_sql(node, params)
        plan = " ".join(str(tuple(row)) for row in store._db.execute(
            f"EXPLAIN QUERY PLAN SELECT rowid FROM memories WHERE user_id = ? AND deleted_at IS NULL AND {where}",
            ["u", *params]))
        assert "COVERING INDEX memories_user_facets" in plan, (name, plan)
    negated: list[object] = []
    assert to_sql(parse_filters({"NOT": [{"role": "user"}]}), negated).startswith("(NOT (coalesce(")
    store.close()


@pytest.mark.parametrize("tag", ["slot:home", 'say "hi"', "back\\slash", "老家", "tab\there", "emoji 🙂"])
def test_a_tag_filter_finds_exactly_the_tagged_memories_whatever_the_tag_holds(tmp_path: Path, tag: str) -> None:
    """The tags filter tests the JSON text for the tag before parsing it: escapes and non-ASCII must not hide a tag,
    and a tag that is only part of another must not match."""
    from jiyi.filters import parse_filters

    store = SqliteStore(tmp_path / "tags.db")
    store.bind_embedding("test", 2)
    scope = Scope("u")
    tagged = MemoryRecord("tagged", scope, tags=["fact", tag])
    longer = MemoryRecord("longer tag", scope, tags=[tag + "x"])
    plain = MemoryRecord("untagged", scope, tags=["fact"])
    store.insert([tagged, longer, plain], np.eye(3, 2, dtype=np.float32) + 0.1, [])
    where = parse_filters({"jiyi.tags": {"contains": tag}})
    assert [r.id for r in store.list_records(scope, where)] == [tagged.id]
    assert [h.memory_id for h in store.vector_search(scope, np.array([1, 0], np.float32), 5, where)] == [tagged.id]
    store.close()


@pytest.mark.parametrize("condition", [
    {"eq": "message"}, {"ne": "message"}, {"in": ["core", "system"]}, {"nin": ["core", "fact"]}, {"in": []},
    {"in": ["no-such-category", "episode"]}, {"eq": "no-such-category"}, {"ne": "no-such-category"}, "fact",
])
def test_a_category_filter_on_vectors_finds_what_the_sql_filter_finds(tmp_path: Path, condition: object) -> None:
    """Vector search reads a category filter from its cached codes (category_mask), not from SQL: the same
    memories either way, for every operator and for a category no memory has."""
    from jiyi.filters import parse_filters
    from jiyi.records import Category

    store = SqliteStore(tmp_path / "categories.db")
    store.bind_embedding("test", 2)
    scope = Scope("u")
    records = [MemoryRecord(f"memory {i}", scope, category=category)
               for i, category in enumerate([*Category, Category.FACT, Category.MESSAGE])]
    store.insert(records, np.ones((len(records), 2), dtype=np.float32), [])
    for where in (parse_filters({"jiyi.category": condition}), parse_filters({"NOT": {"jiyi.category": condition}})):
        expected = {r.id for r in store.list_records(scope, where)}
        found = {h.memory_id for h in store.vector_search(scope, np.array([1, 0], np.float32), 50, where)}
        assert found == expected
    store.close()


def test_vector_search_leaves_out_an_expiry_mask_only_while_no_memory_has_expired(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While the scope's earliest expiry is still to come, vector search ranks a category filter's kept rows
    (category_rows) without an expiry mask: the very answers the masks give (the same rows partitioned, so the same
    pick among ties), before a memory's expiry passes and after, with every filter, with and without the expired."""
    from jiyi.filters import parse_filters
    from jiyi.records import Category
    from jiyi.stores.sqlite import store as sqlite_store

    store = SqliteStore(tmp_path / "expiring.db")
    store.bind_embedding("test", 2)
    scope = Scope("u")
    start = datetime.now(UTC)
    rng = np.random.default_rng(7)
    kinds = [Category.FACT, Category.MESSAGE, Category.CORE, Category.EPISODE]
    records = [MemoryRecord(f"memory {i}", scope, category=kinds[i % 4],
                            expiration_date=start + timedelta(hours=1) if i % 5 == 0 else None) for i in range(60)]
    store.insert(records, np.round(rng.random((60, 2)), 1).astype(np.float32), [])  # rounded: many ties
    query = np.array([0.6, 0.8], dtype=np.float32)
    filters = [None, *(parse_filters(f) for f in ({"jiyi.category": "message"}, {"jiyi.category": {"ne": "message"}},
                                                    {"jiyi.category": {"in": ["core", "system"]}}))]

    class Later(datetime):
        moment = start

        @classmethod
        def now(cls, tz: object = None) -> datetime:  # type: ignore[override]
            return cls.moment

    def searches() -> list[list[tuple[str, float]]]:
        return [[(h.memory_id, h.score) for h in store.vector_search(scope, query, 7, where, include_expired)]
                for where in filters for include_expired in (False, True)]

    monkeypatch.setattr(sqlite_store, "datetime", Later)
    for moment, expired in ((start, 0), (start + timedelta(hours=2), 12)):  # before the expiry, then after it
        Later.moment = moment
        found = searches()
        with monkeypatch.context() as masks:  # the masks' way, every time
            masks.setattr(sqlite_store._ScopeVectors, "earliest_expiry", lambda self: float("-inf"))
            masks.setattr(sqlite_store._ScopeVectors, "category_rows", lambda self, where: None)
            assert searches() == found
        assert len(store.vector_search(scope, query, 60)) == 60 - expired
    Later.moment = start
    late = MemoryRecord("memory late", scope, category=Category.MESSAGE, expiration_date=start - timedelta(days=1))
    store.insert([late], np.array([[0.6, 0.8]], dtype=np.float32), [])  # the best match, expired: never found
    assert late.id not in {h.memory_id for h in store.vector_search(scope, query, 7, filters[1])}
    assert late.id in {h.memory_id for h in store.vector_search(scope, query, 7, filters[1], include_expired=True)}
    store.close()


@pytest.mark.parametrize("seed", range(4))
def test_the_smallest_values_come_as_a_stable_sort_has_them(seed: int) -> None:
    """keyword search's selection of its best matches (_stable_smallest) is a whole stable sort's first `limit`,
    ties (frequent among bm25 scores) in their order."""
    from jiyi.stores.sqlite.store import _stable_smallest

    rng = np.random.default_rng(seed)
    for _ in range(500):
        n, limit = int(rng.integers(0, 300)), int(rng.integers(0, 40))
        values = [rng.random(n), np.round(rng.random(n), 1) - 0.5, rng.integers(-2, 2, n).astype(float),
                  np.where(rng.random(n) < 0.5, -0.0, 0.0)][int(rng.integers(0, 4))]
        assert np.array_equal(_stable_smallest(values, limit), np.argsort(values, kind="stable")[:limit])


def test_a_word_in_very_many_memories_ranks_only_its_newest_ones_and_rare_words_all_of_theirs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound on BM25's work (KEYWORD_COMMON_ROWS), as the PostgreSQL store has it: a common word reaches only the
    newest memories of the scope it matches, a rare word's memory is found however old, and what is found newer than
    the bound is scored with the whole query."""
    from jiyi.text import query_terms

    monkeypatch.setattr("jiyi.stores.sqlite.store.KEYWORD_COMMON_ROWS", 5)
    embedder = build_embedder("hashing")
    store = SqliteStore(tmp_path / "m.db")
    store.bind_embedding(embedder.model_id, embedder.dims)

    def put(*texts: str, user: str = "u") -> list[str]:
        records = [MemoryRecord(content=text, scope=Scope(user)) for text in texts]
        store.insert(records, embedder.embed_documents(list(texts)), [])
        return [r.id for r in records]

    put(*[f"I like tea, pot {i}" for i in range(8)], user="others")  # the word is common in the store
    [old_rare] = put("I like tea with Jesica")
    common = put(*[f"I like tea, cup {i}" for i in range(12)])
    found = [h.memory_id for h in store.keyword_search(Scope("u"), query_terms("tea Jesica"), 20)]
    assert found[0] == old_rare  # both words, the rare one however old
    assert set(found[1:]) == set(common[-5:])  # of the common word's 13 memories in the scope, the newest 5
    monkeypatch.setattr("jiyi.stores.sqlite.store.KEYWORD_COMMON_ROWS", 1000)
    everything = {h.memory_id: h.score for h in store.keyword_search(Scope("u"), query_terms("tea Jesica"), 20)}
    assert len(everything) == 13
    # a word in 20 memories of the store is not common against a bound of 1,000
    assert len(store.keyword_search(Scope("u"), query_terms("tea"), 20)) == 13
    monkeypatch.setattr("jiyi.stores.sqlite.store.KEYWORD_COMMON_ROWS", 5)
    newest = store.keyword_search(Scope("u"), query_terms("tea Jesica"), 20)
    assert all(everything[h.memory_id] == pytest.approx(h.score) for h in newest if h.memory_id != old_rare)



def test_the_newest_memories_a_common_word_reaches_follow_every_write(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Where a common word's newest memories begin is kept between searches (vocabulary.newest_match): a memory
    added or deleted since moves it, as a store opened afresh finds it."""
    from jiyi.text import query_terms

    monkeypatch.setattr("jiyi.stores.sqlite.store.KEYWORD_COMMON_ROWS", 3)
    embedder = build_embedder("hashing")
    store = SqliteStore(tmp_path / "m.db")
    store.bind_embedding(embedder.model_id, embedder.dims)

    def put(*texts: str) -> list[str]:
        records = [MemoryRecord(content=text, scope=Scope("u")) for text in texts]
        store.insert(records, embedder.embed_documents(list(texts)), [])
        return [r.id for r in records]

    def found(searched: SqliteStore) -> set[str]:
        return {h.memory_id for h in searched.keyword_search(Scope("u"), query_terms("tea"), 20)}

    def as_afresh() -> set[str]:
        fresh = SqliteStore(tmp_path / "m.db")
        try:
            return found(fresh)
        finally:
            fresh.close()

    cups = put(*[f"I like tea, cup {i}" for i in range(6)])
    assert found(store) == set(cups[-3:]) == as_afresh()
    pots = put("tea pot 1", "tea pot 2")
    assert found(store) == {cups[-1], *pots} == as_afresh()
    store.soft_delete(pots[-1], "test", HistoryEvent(pots[-1], Event.DELETE, "tea pot 2", None), datetime.now(UTC))
    assert found(store) == as_afresh()
    assert pots[-1] not in found(store)
    store.close()


def test_entity_memories_follow_another_connection_s_writes(tmp_path: Path) -> None:
    """entity_memories keeps its answers in process until a write: one made through another connection counts."""
    from datetime import timedelta

    from jiyi.stores.entities import GraphChange, GraphEntity

    embedder = build_embedder("hashing")
    path = tmp_path / "graph.db"
    store, other = SqliteStore(path), SqliteStore(path)
    store.bind_embedding(embedder.model_id, embedder.dims)
    at = datetime(2024, 3, 4, tzinfo=UTC)
    records = [MemoryRecord(content=text, scope=Scope("u"), created_at=at + timedelta(days=i))
               for i, text in enumerate(("Arjun started law school", "Arjun passed the bar"))]
    store.insert(records, embedder.embed_documents([r.content for r in records]),
                 [HistoryEvent(r.id, Event.ADD, None, r.content) for r in records])
    arjun = GraphEntity("person", "Arjun")
    store.save_graph("u", GraphChange([arjun], [], [(arjun.id, r.id) for r in records]), at)
    assert store.entity_memories("u", [arjun.id], 10) == [records[1].id, records[0].id]
    other.soft_delete(records[1].id, "test", HistoryEvent(records[1].id, Event.DELETE, None, None), at)
    assert store.entity_memories("u", [arjun.id], 10) == [records[0].id]
    store.close()
    other.close()
