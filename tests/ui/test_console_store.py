"""The store operations the console and the restore route need (stores/base.py: MemoryStore.restore, ConsoleStore),
run against every store (the `store` fixture), and the Memory methods on top of them."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from jiyi import AsyncMemory
from jiyi.embedders.base import Embedder
from jiyi.errors import Conflict, InvalidInput, NotFound
from jiyi.filters import parse_filters
from jiyi.records import (
    Category,
    Event,
    HistoryEvent,
    Layer,
    MemoryRecord,
    MemoryType,
    Scope,
    StoredMessage,
    TurnRecord,
    TurnStatus,
)
from jiyi.server.ui.data import passes
from jiyi.stores.base import ConsoleStore, MemoryStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _insert(store: MemoryStore, records: list[MemoryRecord]) -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(len(records), 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    store.bind_embedding("test", 8)
    store.insert(records, vectors, [HistoryEvent(r.id, Event.ADD, None, r.content) for r in records])


def _records() -> list[MemoryRecord]:
    alice, bob = Scope("alice"), Scope("bob")
    return [
        MemoryRecord("用户对海鲜过敏", alice, category=Category.CORE, layer=Layer.LONG_TERM, importance=2.0,
                     created_at=T0),
        MemoryRecord("用户住在上海", Scope("alice", "xiaolin"), importance=0.9, access_count=5,
                     created_at=T0 + timedelta(days=1), last_accessed_at=T0 + timedelta(days=3)),
        MemoryRecord("用户喜欢打篮球", Scope("alice", "xiaolin", "chat-1"), importance=0.4,
                     created_at=T0 + timedelta(days=2)),
        MemoryRecord("我喜欢打篮球，每周六都去", alice, category=Category.MESSAGE, created_at=T0 + timedelta(days=2)),
        MemoryRecord("User lives in Vancouver", bob, created_at=T0 + timedelta(days=4)),
    ]


def test_every_store_answers_the_console(store: MemoryStore) -> None:
    assert isinstance(store, ConsoleStore)


def test_tallies_count_live_memories_per_owner_layer_and_category(store: Any) -> None:
    records = _records()
    _insert(store, records)
    users = {(t.owner, t.layer, t.category): t.memories for t in store.tallies("user")}
    assert users == {("alice", "long_term", "core"): 1, ("alice", "short_term", "fact"): 2,
                     ("alice", "short_term", "message"): 1, ("bob", "short_term", "fact"): 1}
    agents = store.tallies("agent", "alice")
    assert [(t.owner, t.memories) for t in agents] == [("xiaolin", 2)]
    assert [(t.owner, t.memories) for t in store.tallies("run", "alice")] == [("chat-1", 1)]
    assert store.tallies("agent", "bob") == []
    store.soft_delete(records[4].id, "gone", HistoryEvent(records[4].id, Event.DELETE, "x", None), T0)
    assert [t.owner for t in store.tallies("user")] == ["alice"] * 3
    with pytest.raises(InvalidInput):
        store.tallies("everyone")


def test_browse_records_sorts_filters_and_pages(store: Any) -> None:
    records = _records()
    _insert(store, records)
    alice = Scope("alice")
    newest = store.browse_records(alice)
    assert newest.total == 4
    assert [r.content for r in newest.records][:2] == ["我喜欢打篮球，每周六都去", "用户喜欢打篮球"]
    by_importance = store.browse_records(alice, order_by="importance", descending=False)
    assert [r.importance for r in by_importance.records] == sorted(r.importance for r in by_importance.records)
    accessed = store.browse_records(alice, order_by="last_accessed_at")
    assert accessed.records[0].content == "用户住在上海"  # the only one ever recalled; never-recalled ones last
    page = store.browse_records(alice, limit=2, offset=2)
    assert page.total == 4 and [r.id for r in page.records] == [r.id for r in newest.records[2:4]]
    assert store.browse_records(alice, contains="篮球").total == 2
    facts = store.browse_records(alice, parse_filters({"jiyi.category": "fact"}))
    assert {r.content for r in facts.records} == {"用户住在上海", "用户喜欢打篮球"}
    assert store.browse_records(Scope("alice", "xiaolin")).total == 2
    with pytest.raises(InvalidInput):
        store.browse_records(alice, order_by="content; DROP TABLE memories")
    assert store.browse_records(alice, deleted=True).total == 0
    store.soft_delete(records[1].id, "user asked", HistoryEvent(records[1].id, Event.DELETE, "x", None), T0)
    deleted = store.browse_records(alice, deleted=True)
    assert [r.id for r in deleted.records] == [records[1].id] and deleted.records[0].delete_reason == "user asked"
    assert store.browse_records(alice).total == 3


def test_scope_tallies_count_live_memories_per_agent_run_layer_and_category(store: Any) -> None:
    records = _records()
    _insert(store, records)
    store.soft_delete(records[0].id, "gone", HistoryEvent(records[0].id, Event.DELETE, "x", None), T0)
    counts = {(t.agent_id, t.run_id, t.layer, t.category): t.memories for t in store.scope_tallies(Scope("alice"))}
    assert counts == {("xiaolin", None, "short_term", "fact"): 1, ("xiaolin", "chat-1", "short_term", "fact"): 1,
                      (None, None, "short_term", "message"): 1}
    assert [(t.run_id, t.memories) for t in store.scope_tallies(Scope("alice", run_id="chat-1"))] == [("chat-1", 1)]
    assert store.scope_tallies(Scope("carol")) == []


def test_vitals_are_every_live_memorys_numbers_without_its_text(store: Any) -> None:
    records = _records()
    _insert(store, records)
    store.soft_delete(records[0].id, "gone", HistoryEvent(records[0].id, Event.DELETE, "x", None), T0)
    store.update(replace(records[2], updated_at=T0 + timedelta(days=5, microseconds=7),
                         memory_type=MemoryType.PREFERENCE), None, None)
    found = store.vitals(Scope("alice"))
    rows = sorted(zip(found.last_reinforced.tolist(), found.categories.tolist(), found.memory_types.tolist(),
                      found.importance.tolist(), found.access_counts.tolist(), strict=True))
    assert rows == [
        ((T0 + timedelta(days=2)).timestamp(), "message", "episodic", 0.5, 0.0),  # its latest time, in seconds
        ((T0 + timedelta(days=3)).timestamp(), "fact", "episodic", 0.9, 5.0),  # last recalled
        ((T0 + timedelta(days=5, microseconds=7)).timestamp(), "fact", "preference", 0.4, 0.0)]  # updated, to the µs
    not_messages = parse_filters({"NOT": [{"jiyi.category": "message"}]})
    assert sorted(store.vitals(Scope("alice"), not_messages).categories.tolist()) == ["fact", "fact"]
    assert len(store.vitals(Scope("alice", "xiaolin"))) == 2 and len(store.vitals(Scope("bob"))) == 1
    empty = store.vitals(Scope("carol"))
    assert len(empty) == 0 and empty.last_reinforced.dtype == np.float64


def test_restore_makes_a_deleted_memory_live_and_searchable_again(store: MemoryStore) -> None:
    records = _records()
    _insert(store, records)
    target = records[1]
    vector = store.get_vectors([target.id])[target.id]
    assert store.vector_search(Scope("alice"), vector, 1)[0].memory_id == target.id
    store.soft_delete(target.id, "user asked", HistoryEvent(target.id, Event.DELETE, target.content, None), T0)
    assert store.get(target.id) is None
    assert target.id not in {h.memory_id for h in store.vector_search(Scope("alice"), vector, 10)}
    assert not store.keyword_search(Scope("alice"), ["上海"], 10)
    deleted = store.get(target.id, include_deleted=True)
    assert deleted is not None
    with pytest.raises(Conflict):
        store.restore(target.id, HistoryEvent(target.id, Event.RESTORE, None, target.content), T0,
                      expected_version=deleted.version - 1)
    when = T0 + timedelta(days=9)
    restored = store.restore(target.id, HistoryEvent(target.id, Event.RESTORE, None, target.content, reason="oops"),
                             when, expected_version=deleted.version)
    assert restored.deleted_at is None and restored.version == deleted.version + 1 and restored.updated_at == when
    live = store.get(target.id)
    assert live is not None and live.version == restored.version and live.delete_reason is None
    assert store.vector_search(Scope("alice"), vector, 1)[0].memory_id == target.id
    assert [h.memory_id for h in store.keyword_search(Scope("alice"), ["上海"], 10)] == [target.id]
    assert [(e.event, e.reason) for e in store.history(target.id)][-1] == (Event.RESTORE, "oops")
    with pytest.raises(InvalidInput):  # live: nothing to restore
        store.restore(target.id, HistoryEvent(target.id, Event.RESTORE, None, target.content), when)
    store.soft_delete(target.id, "again", HistoryEvent(target.id, Event.DELETE, target.content, None), T0)
    store.purge(T0 + timedelta(days=1))
    with pytest.raises(InvalidInput):  # purged: gone for good
        store.restore(target.id, HistoryEvent(target.id, Event.RESTORE, None, target.content), when)


def test_a_scopes_turns_by_status_and_by_message(store: Any) -> None:
    messages = [StoredMessage(f"m{i}", "user", Scope("alice", "xiaolin")) for i in range(3)]
    first = TurnRecord(Scope("alice", "xiaolin"), [messages[0].id, messages[1].id], status=TurnStatus.DONE)
    second = TurnRecord(Scope("alice", "xiaolin"), [messages[2].id], status=TurnStatus.FAILED, attempts=6)
    other = TurnRecord(Scope("bob"), [], status=TurnStatus.FAILED)
    store.add_turn(first, messages[:2])
    store.add_turn(second, messages[2:])
    store.add_turn(other, [])
    assert store.scope_turn_counts(Scope("alice")) == {"done": 1, "failed": 1}
    assert [t.id for t in store.list_turns(Scope("alice"), [TurnStatus.FAILED, TurnStatus.DONE])] == [second.id,
                                                                                                     first.id]
    assert [t.id for t in store.list_turns(Scope("alice"), [TurnStatus.RETRY])] == []
    assert [t.id for t in store.turns_with_messages(Scope("alice", "xiaolin"), [messages[1].id])] == [first.id]
    assert store.turns_with_messages(Scope("bob"), [messages[1].id]) == []
    assert store.turns_with_messages(Scope("alice"), []) == []


def test_memory_restore_promote_and_retry(store: MemoryStore, embedder: Embedder) -> None:
    async def scenario() -> None:
        memory = AsyncMemory(store, embedder)
        added = await memory.add("我喜欢打篮球", user_id="alice", infer=False)
        memory_id = added["results"][0]["id"]
        with pytest.raises(Conflict):
            await memory.restore(memory_id)  # not deleted
        await memory.delete(memory_id, reason="user asked")
        with pytest.raises(NotFound):
            await memory.restore(memory_id, user_id="bob")  # another user's: not found
        restored = await memory.restore(memory_id, reason="a mistake", user_id="alice")
        assert restored["id"] == memory_id and restored["memory"] == "我喜欢打篮球"
        assert (await memory.search("篮球", user_id="alice"))["results"][0]["id"] == memory_id
        events = [(row["event"], row.get("reason")) for row in await memory.history(memory_id)]
        assert events == [("ADD", None), ("DELETE", "user asked"), ("RESTORE", "a mistake")]
        assert await memory.promote(memory_id) == {"message": "Memory promoted to core"}
        promoted = await memory.get(memory_id)
        assert promoted["category"] == "core" and promoted["layer"] == "long_term"
        assert await memory.promote(memory_id) == {"message": "Memory is core already"}
        assert [row["event"] for row in await memory.history(memory_id)].count("PROMOTE") == 1
        turn = TurnRecord(Scope("alice"), [], status=TurnStatus.FAILED, attempts=6, last_error="LLM down")
        store.add_turn(turn, [])
        retried = await memory.retry_event(turn.id)
        assert retried["status"] == "RETRYING"
        with pytest.raises(Conflict):
            await memory.retry_event(turn.id)  # the worker's now
        with pytest.raises(NotFound):
            await memory.retry_event("no-such-event")
        await memory.maintain(user_id="alice")
        await memory.maintain()
        mine, everyone = passes(memory, "alice"), passes(memory, None)  # what the console draws
        assert len(mine) == 2 and len(everyone) == 2
        assert mine[0]["layers"] == {"long_term": 1} and "forgotten" in mine[0] and mine[0]["at"]
        assert everyone[0]["users"] == 1 and everyone[1]["user_id"] == "alice"
        await memory.close()

    asyncio.run(scenario())
