"""The entity store contract (stores/entities.py): every store (conftest.STORE_KINDS) must pass every test here."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from jiyi import InvalidInput, build_store
from jiyi.embedders.base import Embedder
from jiyi.records import Event, HistoryEvent, MemoryRecord, Scope
from jiyi.stores.base import MemoryStore
from jiyi.stores.entities import USER, EntityStore, GraphChange, GraphEntity, GraphRelation

T0 = datetime(2024, 3, 4, 9, 0, tzinfo=UTC)


def put(store: MemoryStore, embedder: Embedder, text: str, user: str = "alice", at: datetime = T0) -> str:
    if store.embedding_binding() is None:
        store.bind_embedding(embedder.model_id, embedder.dims)
    record = MemoryRecord(content=text, scope=Scope(user_id=user), created_at=at)
    store.insert([record], embedder.embed_documents([text]), [HistoryEvent(record.id, Event.ADD, None, text)])
    return record.id


def delete(store: MemoryStore, memory_id: str) -> None:
    store.soft_delete(memory_id, "test", HistoryEvent(memory_id, Event.DELETE, None, None), T0 + timedelta(days=9))


def graph_store(store: MemoryStore) -> EntityStore:
    assert isinstance(store, EntityStore)
    return store


def test_a_saved_graph_reads_back_with_its_history(store: MemoryStore, embedder: Embedder) -> None:
    graph = graph_store(store)
    m1 = put(store, embedder, "用户的表姐叫小雅，在北京做产品经理")
    xiaoya = GraphEntity("person", "小雅", ["小雅", "表姐", "我表姐"])
    beijing = GraphEntity("place", "北京", ["北京"])
    cousin = GraphRelation(xiaoya.id, "cousin_of", USER, [m1], valid_at=T0)
    lives = GraphRelation(xiaoya.id, "lives_in", beijing.id, [m1], valid_at=T0)
    graph.save_graph("alice", GraphChange([xiaoya, beijing], [cousin, lives], [(xiaoya.id, m1)]), T0)

    got = graph.graph("alice")
    assert {e.name: e.aliases for e in got.entities.values()} == {"小雅": ["小雅", "表姐", "我表姐"], "北京": ["北京"]}
    assert {(r.source, r.relation, r.target, tuple(r.memory_ids)) for r in got.relations} == {
        (xiaoya.id, "cousin_of", USER, (m1,)), (xiaoya.id, "lives_in", beijing.id, (m1,))}
    assert all(r.valid_at == T0 and r.invalid_at is None for r in got.relations)
    assert [(e.event, e.new) for e in graph.graph_history("alice", lives.id)] == [("ADD", "小雅 lives_in 北京")]
    assert [e.event for e in graph.graph_history("alice", xiaoya.id)] == ["ADD"]


def test_an_ended_relation_is_closed_not_deleted(store: MemoryStore, embedder: Embedder) -> None:
    graph = graph_store(store)
    m1 = put(store, embedder, "User lives in Denver")
    m2 = put(store, embedder, "User moved to Seattle", at=T0 + timedelta(days=50))
    denver, seattle = GraphEntity("place", "Denver"), GraphEntity("place", "Seattle")
    lives = GraphRelation(USER, "lives_in", denver.id, [m1], valid_at=T0)
    graph.save_graph("alice", GraphChange([denver], [lives]), T0)
    moved = T0 + timedelta(days=50)
    lives.invalid_at, lives.memory_ids = moved, [m2]
    graph.save_graph("alice", GraphChange([seattle], [lives, GraphRelation(USER, "lives_in", seattle.id, [m2],
                                                                           valid_at=moved)]), moved)

    got = {r.target: r for r in graph.graph("alice").relations}
    assert got[denver.id].invalid_at == moved and sorted(got[denver.id].memory_ids) == sorted([m1, m2])
    assert got[seattle.id].is_current
    assert [e.event for e in graph.graph_history("alice", lives.id)] == ["ADD", "CLOSE"]


def test_one_user_never_sees_or_touches_anothers_graph(store: MemoryStore, embedder: Embedder) -> None:
    graph = graph_store(store)
    m1 = put(store, embedder, "my cat Mochi")
    mochi = GraphEntity("pet", "Mochi")
    graph.save_graph("alice", GraphChange([mochi], [GraphRelation(mochi.id, "pet_of", USER, [m1])], [(mochi.id, m1)]),
                     T0)
    assert graph.graph("bob").entities == {} and graph.graph("bob").relations == []
    assert graph.entity_memories("bob", [mochi.id], 10) == []
    with pytest.raises(InvalidInput):
        graph.save_graph("bob", GraphChange([GraphEntity("pet", "Stolen", id=mochi.id)]), T0)
    with pytest.raises(InvalidInput):
        graph.save_graph("bob", GraphChange(relations=[GraphRelation(mochi.id, "pet_of", USER)]), T0)
    assert graph.graph("alice").entities[mochi.id].name == "Mochi"


def test_entity_memories_are_the_live_ones_mentioning_or_supporting_newest_first(
        store: MemoryStore, embedder: Embedder) -> None:
    graph = graph_store(store)
    said = put(store, embedder, "My older brother Arjun started law school", at=T0)
    pronoun = put(store, embedder, "he bombed his first contracts exam", at=T0 + timedelta(days=30))
    gone = put(store, embedder, "Arjun called me", at=T0 + timedelta(days=40))
    unrelated = put(store, embedder, "my beagle ate a sock", at=T0 + timedelta(days=3))
    arjun, biscuit = GraphEntity("person", "Arjun"), GraphEntity("pet", "Biscuit")
    graph.save_graph("alice", GraphChange(
        [arjun, biscuit], [GraphRelation(arjun.id, "brother_of", USER, [said]),
                           GraphRelation(biscuit.id, "pet_of", USER, [unrelated])],
        [(arjun.id, pronoun), (arjun.id, gone), (biscuit.id, unrelated)]), T0)
    delete(store, gone)
    assert graph.entity_memories("alice", [arjun.id], 10) == [pronoun, said]
    assert graph.entity_memories("alice", [arjun.id], 1) == [pronoun]
    assert graph.entity_memories("alice", [], 10) == []


def test_deleting_a_memory_removes_what_only_it_supported(store: MemoryStore, embedder: Embedder) -> None:
    graph = graph_store(store)
    m1 = put(store, embedder, "my cousin Sneha is getting married in Jaipur")
    m2 = put(store, embedder, "Sneha is my cousin")
    sneha, jaipur = GraphEntity("person", "Sneha"), GraphEntity("place", "Jaipur")
    cousin = GraphRelation(sneha.id, "cousin_of", USER, [m1, m2])
    held = GraphRelation(sneha.id, "lives_in", jaipur.id, [m1])
    graph.save_graph("alice", GraphChange([sneha, jaipur], [cousin, held], [(sneha.id, m1), (jaipur.id, m1)]), T0)

    delete(store, m1)
    got = graph.graph("alice")
    assert [(r.id, r.memory_ids) for r in got.relations] == [(cousin.id, [m2])]
    assert set(got.entities) == {sneha.id}  # Jaipur had nothing left to stand on
    assert [e.event for e in graph.graph_history("alice", held.id)] == ["ADD", "DELETE"]
    delete(store, m2)
    assert graph.graph("alice").relations == [] and graph.graph("alice").entities == {}


def test_forget_graph_and_reset_remove_the_graph(store: MemoryStore, embedder: Embedder) -> None:
    graph = graph_store(store)
    for user in ("alice", "bob"):
        m = put(store, embedder, "my cat Mochi", user=user)
        mochi = GraphEntity("pet", "Mochi")
        graph.save_graph(user, GraphChange([mochi], [GraphRelation(mochi.id, "pet_of", USER, [m])]), T0)
    graph.forget_graph("alice")
    assert graph.graph("alice").entities == {} and len(graph.graph("bob").entities) == 1
    store.reset()
    assert graph.graph("bob").entities == {} and graph.graph("bob").relations == []


def test_the_current_graph_a_search_reads_follows_every_change(store: MemoryStore, embedder: Embedder) -> None:
    graph = graph_store(store)
    m1, m2 = put(store, embedder, "User lives in Denver"), put(store, embedder, "my cat Mochi")
    denver, mochi = GraphEntity("place", "Denver", ["Denver"]), GraphEntity("pet", "Mochi", ["Mochi", "my cat"])
    lives = GraphRelation(USER, "lives_in", denver.id, [m1])
    graph.save_graph("alice", GraphChange([denver, mochi], [lives, GraphRelation(mochi.id, "pet_of", USER, [m2])]),
                     T0)
    assert {r.relation for r in graph.current_graph("alice").relations} == {"lives_in", "pet_of"}
    assert graph.current_graph("alice").entities[mochi.id].aliases == ["Mochi", "my cat"]
    lives.invalid_at = T0 + timedelta(days=1)
    graph.save_graph("alice", GraphChange(relations=[lives]), T0 + timedelta(days=1))
    assert {r.relation for r in graph.current_graph("alice").relations} == {"pet_of"}
    delete(store, m2)
    assert graph.current_graph("alice").relations == [] and mochi.id not in graph.current_graph("alice").entities
    assert graph.current_graph("bob").entities == {}


def test_a_sqlite_file_written_by_another_process_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    reader, writer = build_store(f"sqlite:///{path}"), build_store(f"sqlite:///{path}")
    try:
        assert isinstance(reader, EntityStore) and isinstance(writer, EntityStore)
        assert reader.current_graph("alice").entities == {}
        writer.save_graph("alice", GraphChange([GraphEntity("person", "Lena")]), T0)
        assert [e.name for e in reader.current_graph("alice").entities.values()] == ["Lena"]
    finally:
        reader.close()
        writer.close()
