"""The decoded memories SqliteStore keeps for get_many (stores/sqlite/record_cache.py): never older than the file.

Each check compares what the store answers with what a second store on the same file reads from the database
(`max_cached_records=0`: it keeps nothing), after a read that filled the cache and then one kind of write."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from jiyi import build_embedder
from jiyi.errors import Conflict, InvalidInput
from jiyi.records import (
    Category,
    Event,
    HistoryEvent,
    Layer,
    MemoryRecord,
    MemoryType,
    Scope,
    Source,
    SourceRef,
    StoredMessage,
    TurnRecord,
)
from jiyi.stores.sqlite import SqliteStore
from jiyi.stores.sqlite.record_cache import RecordCache, freeze, thaw

EMBEDDER = build_embedder("hashing")
WHEN = datetime(2026, 11, 28, 9, 30, 0, 123456, tzinfo=UTC)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "m.db"


@pytest.fixture
def store(path: Path) -> Iterator[SqliteStore]:
    store = SqliteStore(path)
    store.bind_embedding(EMBEDDER.model_id, EMBEDDER.dims)
    yield store
    store.close()


@pytest.fixture
def database(path: Path, store: SqliteStore) -> Iterator[SqliteStore]:
    """What the file holds: a store on it that keeps no record."""
    reader = SqliteStore(path, max_cached_records=0)
    yield reader
    reader.close()


def add(store: SqliteStore, *contents: str) -> list[MemoryRecord]:
    records = [MemoryRecord(content=c, scope=Scope("u"), metadata={"topic": c.split()[0]}) for c in contents]
    store.insert(records, EMBEDDER.embed_documents(list(contents)), [])
    return records


def event(record: MemoryRecord, kind: Event = Event.UPDATE) -> HistoryEvent:
    return HistoryEvent(record.id, kind, record.content, record.content)


def writes(path: Path) -> dict[str, Callable[[SqliteStore, list[MemoryRecord]], object]]:
    """Every kind of write that can change a memory a search read, each done to the first of three memories."""
    def other_store(store: SqliteStore, records: list[MemoryRecord]) -> None:
        other = SqliteStore(path)  # another connection: seen through PRAGMA data_version
        current = other.get(records[0].id)
        assert current is not None
        other.update(replace(current, importance=0.91), None, None)
        other.close()

    def purge(store: SqliteStore, records: list[MemoryRecord]) -> int:
        store.soft_delete(records[0].id, "test", event(records[0], Event.DELETE), WHEN)
        store.get_many([r.id for r in records])  # warm again, with the deleted one left out
        return store.purge(WHEN + timedelta(seconds=1))

    return {
        "update content": lambda s, r: s.update(replace(r[0], content="rewritten about otters"),
                                                EMBEDDER.embed_documents(["rewritten about otters"])[0], event(r[0])),
        "update importance and metadata": lambda s, r: s.update(
            replace(r[0], importance=0.77, metadata={"topic": "changed", "nested": {"a": [1]}}), None, None),
        "promote": lambda s, r: s.update(replace(r[0], category=Category.CORE, layer=Layer.LONG_TERM), None,
                                         event(r[0], Event.PROMOTE)),
        "soft delete": lambda s, r: s.soft_delete(r[0].id, "test", event(r[0], Event.DELETE), WHEN),
        "record access": lambda s, r: s.record_access([r[0].id, r[0].id, r[1].id], WHEN),
        "purge": purge,
        "reset": lambda s, r: s.reset(),
        "another store on the file": other_store,
    }


@pytest.mark.parametrize("kind", list(writes(Path())))
def test_no_write_leaves_a_record_older_than_the_file(kind: str, path: Path, store: SqliteStore,
                                                      database: SqliteStore) -> None:
    records = add(store, "penguins waddle", "seals bark", "otters float")
    ids = [r.id for r in records]
    assert store.get_many(ids) == database.get_many(ids)
    assert len(store._records) == 3  # the next read is served from the cache unless the write drops it

    writes(path)[kind](store, records)

    assert store.get_many(ids) == database.get_many(ids)
    assert store.get(ids[0]) == database.get(ids[0])
    assert store.get_many(ids) == database.get_many(ids)  # read again, now from the cache


def test_access_counts_are_kept_right_without_dropping_the_cache(store: SqliteStore, database: SqliteStore) -> None:
    records = add(store, "penguins waddle", "seals bark")
    ids = [r.id for r in records]
    store.get_many(ids)
    for _ in range(3):
        store.record_access([ids[0], ids[0], ids[1]], datetime.now(UTC))
        assert len(store._records) == 2  # counted, not dropped
        assert store.get_many(ids) == database.get_many(ids)
    assert store.get_many(ids)[ids[0]].access_count == 6
    store.record_access([ids[1]], datetime(2026, 11, 28, 10, 0))  # naive: stored as UTC, read back as the file has it
    assert store.get_many(ids) == database.get_many(ids)


def test_a_rolled_back_write_leaves_nothing_in_the_cache(store: SqliteStore, database: SqliteStore) -> None:
    records = add(store, "penguins waddle", "seals bark")
    ids = [r.id for r in records]
    store.get_many(ids)
    with pytest.raises(Conflict):
        store.update(replace(records[0], importance=0.2), None, None, expected_version=7)
    assert len(store._records) == 0
    duplicate = MemoryRecord(content="seals bark again", scope=Scope("u"), id=ids[1])
    with pytest.raises(InvalidInput):  # the first insert of the batch is rolled back with it
        store.insert([MemoryRecord(content="new", scope=Scope("u")), duplicate],
                     EMBEDDER.embed_documents(["new", "seals bark again"]), [])
    assert store.get_many(ids) == database.get_many(ids)


def test_a_new_memory_keeps_the_cache(store: SqliteStore, database: SqliteStore) -> None:
    records = add(store, "penguins waddle")
    store.get_many([records[0].id])
    added = add(store, "seals bark")
    assert len(store._records) == 1
    ids = [records[0].id, added[0].id]
    assert store.get_many(ids) == database.get_many(ids)


def test_the_write_path_s_queue_and_log_writes_keep_the_cache(store: SqliteStore, database: SqliteStore) -> None:
    """A turn queued, claimed and saved, its messages, a lock, a state value, a history row: none changes a memory,
    and under a load of adds they come between every two searches."""
    records = add(store, "penguins waddle", "seals bark")
    ids = [r.id for r in records]
    store.get_many(ids)
    message = StoredMessage(content="hello", role="user", scope=Scope("u"))
    store.add_turn(TurnRecord(scope=Scope("u"), message_ids=[message.id]), [message])
    (turn,) = store.claim_turns(datetime.now(UTC), datetime.now(UTC) + timedelta(minutes=1), 5)
    store.save_turn(turn)
    store.add_messages([StoredMessage(content="more", role="user", scope=Scope("u"))])
    assert store.try_lock("maintenance", "me", datetime.now(UTC) + timedelta(minutes=1))
    store.set_state("k", "v")
    store.add_history([event(records[0])])
    assert len(store._records) == 2
    assert store.get_many(ids) == database.get_many(ids)


def test_what_a_caller_changes_in_its_records_no_other_caller_reads(store: SqliteStore,
                                                                     database: SqliteStore) -> None:
    (record,) = add(store, "penguins waddle")
    store.update(replace(record, metadata={"nested": {"seen": ["zoo"]}}, tags=["birds"]), None, None)
    for _ in range(2):  # once read from the file, once from the cache
        got = store.get_many([record.id])[record.id]
        got.importance, got.version = 0.01, 99
        got.tags.append("changed")
        got.metadata["nested"]["seen"].append("changed")
        got.metadata["new"] = 1
        got.categories.append("changed")
        got.provenance.append(SourceRef("m1", "user"))
    assert store.get_many([record.id]) == database.get_many([record.id])
    assert store.get(record.id) == database.get(record.id)


def test_the_cache_is_bounded_and_answers_stay_right(path: Path, database: SqliteStore) -> None:
    store = SqliteStore(path, max_cached_records=5)
    records = add(store, *(f"note number {i}" for i in range(20)))
    ids = [r.id for r in records]
    assert store.get_many(ids) == database.get_many(ids)
    assert len(store._records) == 5
    for i in range(0, 20, 3):
        assert store.get_many(ids[i:i + 4]) == database.get_many(ids[i:i + 4])
        assert len(store._records) <= 5
    store.close()


def test_a_read_that_raced_a_change_is_not_kept() -> None:
    """get_many decodes outside the store's lock: a record read before a write (or an access count) committed must
    not be kept after it."""
    cache = RecordCache(10)
    old = freeze(MemoryRecord(content="penguins", scope=Scope("u"), id="a"))
    for change in (cache.clear, lambda: cache.count_access(["b"], WHEN)):
        generation = cache.generation
        change()
        cache.put([old], generation)
        assert cache.take(["a"]) == ({}, ["a"])
    cache.put([old], cache.generation)
    assert cache.take(["a"]) == ({"a": old}, [])


def test_freezing_and_thawing_keeps_every_field() -> None:
    """thaw() passes the fields by position: a field added to MemoryRecord must be added there as well."""
    record = MemoryRecord(
        content="penguins", scope=Scope("u", "a", "r"), id="i", hash="h", actor_id="Tom", role="assistant",
        memory_type=MemoryType.SEMANTIC, layer=Layer.LONG_TERM, category=Category.CORE, importance=0.3, strength=0.4,
        access_count=5, confidence=0.6, source=Source.ASSISTANT, verified=True, tags=["t"], metadata={"k": [1]},
        categories=["food"], provenance=[SourceRef("m", "user", WHEN)], related_ids=["r1"],
        compression_source_ids=["c1"], created_at=WHEN, updated_at=WHEN + timedelta(1),
        last_accessed_at=WHEN + timedelta(2), event_time=WHEN + timedelta(3), expiration_date=WHEN + timedelta(4),
        deleted_at=WHEN + timedelta(5), delete_reason="why", version=8,
    )
    thawed = thaw(freeze(record))
    assert thawed == record
    assert thawed.metadata["k"] is not record.metadata["k"]



@pytest.mark.parametrize("write", ["update", "record access"])
def test_a_write_between_a_read_and_its_decoding_is_not_hidden(write: str, store: SqliteStore,
                                                               database: SqliteStore,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """get_many decodes the rows it read outside the store's lock, where another thread's write may commit: what it
    decoded is then older than the file and must not be kept. The write is made from inside the decoding here (the
    lock is free there, as it is for another thread), so the interleaving is the one every time."""
    import jiyi.stores.sqlite.store as store_module

    (record,) = add(store, "penguins waddle")
    decode = store_module.values_to_memory
    writes = {"update": lambda: store.update(replace(record, importance=0.9), None, None),
              "record access": lambda: store.record_access([record.id], WHEN)}

    def decode_while_a_write_commits(values: tuple[object, ...]) -> MemoryRecord:
        monkeypatch.setattr(store_module, "values_to_memory", decode)
        writes[write]()
        return decode(values)

    monkeypatch.setattr(store_module, "values_to_memory", decode_while_a_write_commits)
    store.get_many([record.id])  # read before the write, decoded after it
    assert store.get_many([record.id]) == database.get_many([record.id])
