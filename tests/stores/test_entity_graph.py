"""The entity store contract (stores/entities.py): every store (conftest.STORE_KINDS) must pass every test here."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from jiyi import InvalidInput, NotFound, build_store
from jiyi.embedders.base import Embedder
from jiyi.records import Category, Event, HistoryEvent, MemoryRecord, Scope
from jiyi.stores.base import MemoryStore
from jiyi.stores.entities import USER, EntityStore, Graph, GraphChange, GraphEntity, GraphRelation

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


def test_entity_memories_follow_every_write_after_them(store: MemoryStore, embedder: Embedder) -> None:
    # The SQLite store keeps the answers between searches (they cost ~2 ms for an entity of many memories): a write
    # after an answer must show in the next one, whatever it wrote.
    graph = graph_store(store)
    said = put(store, embedder, "My older brother Arjun started law school", at=T0)
    arjun = GraphEntity("person", "Arjun")
    graph.save_graph("alice", GraphChange([arjun], [], [(arjun.id, said)]), T0)
    assert graph.entity_memories("alice", [arjun.id], 10) == [said]
    store.record_access([said], T0 + timedelta(days=1))
    assert graph.entity_memories("alice", [arjun.id], 10) == [said]
    newer = put(store, embedder, "Arjun passed the bar", at=T0 + timedelta(days=2))
    graph.save_graph("alice", GraphChange(mentions=[(arjun.id, newer)]), T0 + timedelta(days=2))
    assert graph.entity_memories("alice", [arjun.id], 10) == [newer, said]
    delete(store, newer)
    assert graph.entity_memories("alice", [arjun.id], 10) == [said]


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


# --- corrections by hand: merge, rename, close (the console and the MCP tools) -----------------------------------


def test_merging_two_entities_moves_everything_to_the_kept_one(store: MemoryStore, embedder: Embedder) -> None:
    graph = graph_store(store)
    said = put(store, embedder, "我表姐叫小雅，在北京做产品经理")
    later = put(store, embedder, "表姐下个月结婚", at=T0 + timedelta(days=20))
    again = put(store, embedder, "Xiaoya is my cousin", at=T0 + timedelta(days=30))
    xiaoya = GraphEntity("person", "小雅", ["小雅", "我表姐"])
    cousin = GraphEntity("person", "表姐", ["表姐", "Xiaoya"])  # the extraction took her for someone else
    beijing = GraphEntity("place", "北京")
    kept_cousin = GraphRelation(xiaoya.id, "cousin_of", USER, [said], valid_at=T0 + timedelta(days=5))
    other_cousin = GraphRelation(cousin.id, "cousin_of", USER, [again], valid_at=T0)
    engaged = GraphRelation(cousin.id, "lives_in", beijing.id, [later], valid_at=T0 + timedelta(days=20))
    same_person = GraphRelation(xiaoya.id, "cousin_of", cousin.id, [later])
    graph.save_graph("alice", GraphChange([xiaoya, cousin, beijing], [kept_cousin, other_cousin, engaged, same_person],
                                          [(xiaoya.id, said), (cousin.id, later)]), T0)
    when = T0 + timedelta(days=40)

    merged = graph.merge_entities("alice", xiaoya.id, cousin.id, when)

    assert merged.entity.id == xiaoya.id and merged.entity.aliases == ["小雅", "我表姐", "表姐", "Xiaoya"]
    assert (merged.moved, merged.joined, merged.dropped) == ([engaged.id], [other_cousin.id], [same_person.id])
    got = graph.graph("alice")
    assert set(got.entities) == {xiaoya.id, beijing.id}
    assert got.entities[xiaoya.id].aliases == ["小雅", "我表姐", "表姐", "Xiaoya"]
    relations = {r.id: r for r in got.relations}
    assert set(relations) == {kept_cousin.id, engaged.id}
    # one cousin_of, backed by both's memories, holding since the earlier of the two
    assert sorted(relations[kept_cousin.id].memory_ids) == sorted([said, again])
    assert relations[kept_cousin.id].valid_at == T0
    assert (relations[engaged.id].source, relations[engaged.id].target) == (xiaoya.id, beijing.id)
    assert graph.entity_memories("alice", [xiaoya.id], 10) == [again, later, said]
    assert graph.current_graph("alice").entities.keys() == {xiaoya.id, beijing.id}

    assert [(e.event, e.old, e.new) for e in graph.graph_history("alice", engaged.id)] == [
        ("ADD", None, "表姐 lives_in 北京"), ("UPDATE", "表姐 lives_in 北京", "小雅 lives_in 北京")]
    assert [e.event for e in graph.graph_history("alice", other_cousin.id)] == ["ADD", "MERGE"]
    assert kept_cousin.id in (graph.graph_history("alice", other_cousin.id)[-1].new or "")
    assert [e.event for e in graph.graph_history("alice", same_person.id)] == ["ADD", "DELETE"]
    assert [e.event for e in graph.graph_history("alice", kept_cousin.id)] == ["ADD", "UPDATE"]
    gone = graph.graph_history("alice", cousin.id)
    assert [e.event for e in gone] == ["ADD", "MERGE"] and gone[-1].created_at == when
    assert xiaoya.id in (gone[-1].new or "") and "表姐" in (gone[-1].old or "")
    assert [e.event for e in graph.graph_history("alice", xiaoya.id)] == ["ADD", "MERGE"]


def test_merging_refuses_one_entity_twice_and_unknown_ids(store: MemoryStore, embedder: Embedder) -> None:
    graph = graph_store(store)
    mochi = GraphEntity("pet", "Mochi")
    graph.save_graph("alice", GraphChange([mochi]), T0)
    with pytest.raises(InvalidInput, match="into itself"):
        graph.merge_entities("alice", mochi.id, mochi.id, T0)
    with pytest.raises(NotFound, match="entity nope not found"):
        graph.merge_entities("alice", mochi.id, "nope", T0)
    assert list(graph.graph("alice").entities) == [mochi.id]


def test_renaming_keeps_the_old_name_as_an_alias(store: MemoryStore, embedder: Embedder) -> None:
    graph = graph_store(store)
    m1 = put(store, embedder, "我妈在医院上班")
    mom, dad = GraphEntity("person", "我妈", ["我妈", "妈妈"]), GraphEntity("person", "王强", ["王强", "我爸"])
    graph.save_graph("alice", GraphChange([mom, dad], [GraphRelation(mom.id, "mother_of", USER, [m1])],
                                          [(mom.id, m1)]), T0)
    when = T0 + timedelta(days=1)

    renamed = graph.rename_entity("alice", mom.id, "  王丽 ", when)

    assert (renamed.name, renamed.aliases) == ("王丽", ["我妈", "妈妈", "王丽"])
    assert graph.graph("alice").entities[mom.id].name == "王丽"
    assert graph.current_graph("alice").entities[mom.id].surface_forms() == ["王丽", "我妈", "妈妈"]
    [added, update] = graph.graph_history("alice", mom.id)
    assert added.event == "ADD"
    assert update.event == "UPDATE" and '"我妈"' in (update.old or "") and '"王丽"' in (update.new or "")
    assert update.created_at == when
    assert graph.rename_entity("alice", mom.id, "王丽", when).aliases == ["我妈", "妈妈", "王丽"]  # no change
    assert len(graph.graph_history("alice", mom.id)) == 2
    with pytest.raises(InvalidInput, match="already has an entity named 王强"):
        graph.rename_entity("alice", mom.id, "王强", when)
    with pytest.raises(InvalidInput, match="1 to 200 characters"):
        graph.rename_entity("alice", mom.id, "   ", when)


def test_closing_a_relation_keeps_it_in_history_no_longer_current(store: MemoryStore, embedder: Embedder) -> None:
    graph = graph_store(store)
    m1 = put(store, embedder, "I work at Initech")
    initech = GraphEntity("organisation", "Initech")
    works = GraphRelation(USER, "works_at", initech.id, [m1], valid_at=T0)
    graph.save_graph("alice", GraphChange([initech], [works]), T0)
    assert [r.id for r in graph.current_graph("alice").relations] == [works.id]
    left = T0 + timedelta(days=100)

    closed = graph.close_relation("alice", works.id, T0 + timedelta(days=120), invalid_at=left)

    assert closed.invalid_at == left and not closed.is_current
    [kept] = graph.graph("alice").relations
    assert (kept.id, kept.valid_at, kept.invalid_at, kept.memory_ids) == (works.id, T0, left, [m1])
    assert graph.current_graph("alice").relations == []
    assert graph.entity_memories("alice", [initech.id], 10) == []  # what supports an ended relation is not recalled
    assert [(e.event, e.new, e.created_at) for e in graph.graph_history("alice", works.id)] == [
        ("ADD", "user works_at Initech", T0), ("CLOSE", "user works_at Initech", T0 + timedelta(days=120))]
    with pytest.raises(InvalidInput, match="already closed"):
        graph.close_relation("alice", works.id, left)
    again = GraphRelation(USER, "works_at", initech.id, [m1], valid_at=T0 + timedelta(days=200))
    graph.save_graph("alice", GraphChange(relations=[again]), T0 + timedelta(days=200))
    with pytest.raises(InvalidInput, match="cannot end before"):
        graph.close_relation("alice", again.id, T0 + timedelta(days=201), invalid_at=T0)
    with pytest.raises(NotFound, match="relation nope not found"):
        graph.close_relation("alice", "nope", T0)


def test_no_user_corrects_or_counts_anothers_graph(store: MemoryStore, embedder: Embedder) -> None:
    graph = graph_store(store)
    m1 = put(store, embedder, "my cat Mochi")
    mochi, coco = GraphEntity("pet", "Mochi"), GraphEntity("pet", "Coco")
    owns = GraphRelation(mochi.id, "pet_of", USER, [m1])
    graph.save_graph("alice", GraphChange([mochi, coco], [owns], [(mochi.id, m1)]), T0)
    bobs = GraphEntity("pet", "Rex")
    graph.save_graph("bob", GraphChange([bobs]), T0)
    before = graph.graph("alice")

    for attempt in (lambda: graph.merge_entities("bob", bobs.id, mochi.id, T0),
                    lambda: graph.merge_entities("bob", mochi.id, coco.id, T0),
                    lambda: graph.merge_entities("alice", mochi.id, bobs.id, T0),  # one of each: nothing moves
                    lambda: graph.rename_entity("bob", mochi.id, "Stolen", T0),
                    lambda: graph.close_relation("bob", owns.id, T0)):
        with pytest.raises(NotFound, match="unknown id, or another user's"):
            attempt()
    assert graph.graph("alice") == before
    assert list(graph.graph("bob").entities) == [bobs.id] and graph.graph_history("bob", mochi.id) == []
    assert graph.entity_memory_counts("bob") == {}


def test_entity_memory_counts_are_live_memories_not_evidence(store: MemoryStore, embedder: Embedder) -> None:
    graph = graph_store(store)
    m1, m2, m3 = (put(store, embedder, text) for text in ("my cat Mochi", "Mochi is sick", "Mochi bit Coco"))
    evidence = MemoryRecord(content="Mochi is sick, poor thing", scope=Scope(user_id="alice"),
                            category=Category.MESSAGE)
    store.insert([evidence], embedder.embed_documents([evidence.content]), [])
    mochi, coco, vet = GraphEntity("pet", "Mochi"), GraphEntity("pet", "Coco"), GraphEntity("person", "Dr. Li")
    seen = GraphRelation(mochi.id, "patient_of", vet.id, [m2], invalid_at=T0)  # ended: not counted for the vet
    graph.save_graph("alice", GraphChange(
        [mochi, coco, vet], [GraphRelation(mochi.id, "pet_of", USER, [m1, evidence.id]), seen],
        [(mochi.id, m2), (mochi.id, m3), (coco.id, m3), (mochi.id, evidence.id)]), T0)
    assert graph.entity_memory_counts("alice") == {mochi.id: 3, coco.id: 1}
    delete(store, m3)
    assert graph.entity_memory_counts("alice") == {mochi.id: 2}


def test_an_update_reads_the_graph_saves_what_its_edit_makes_and_nothing_if_the_edit_fails(
        store: MemoryStore, embedder: Embedder) -> None:
    graph = graph_store(store)
    m1 = put(store, embedder, "my friend Tom came over")

    def add_tom(current: Graph) -> GraphChange:
        assert current.entities == {}
        tom = GraphEntity("person", "Tom", ["Tom", "my friend"])
        return GraphChange([tom], [GraphRelation(tom.id, "friend_of", USER, [m1])], [(tom.id, m1)])

    saved = graph.update_graph("alice", add_tom, T0)
    [tom] = saved.entities

    def fail(current: Graph) -> GraphChange:
        assert list(current.entities) == [tom.id]  # the update before it, as committed
        current.entities[tom.id].name = "Thomas"
        raise RuntimeError("the extraction broke")

    with pytest.raises(RuntimeError):
        graph.update_graph("alice", fail, T0 + timedelta(days=1))
    got = graph.graph("alice")
    assert [e.name for e in got.entities.values()] == ["Tom"]
    assert graph.update_graph("alice", lambda current: GraphChange(), T0) == GraphChange()
    assert [e.event for e in graph.graph_history("alice", tom.id)] == ["ADD"]
