"""The MemoryIndex port's contract (stores/base.py: memories, vectors, text index, history), with the whole store's
lifecycle (reset): every store (conftest.STORE_KINDS) must pass every test here. The other ports' contracts are in
their own modules: test_message_log, test_coordination, test_keys_and_sessions, test_turn_queue, test_entity_graph
(tests/stores/test_ports.py checks which ports each store declares)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from jiyi import EmbeddingMismatch, InvalidInput
from jiyi.embedders.base import Embedder
from jiyi.filters import parse_filters
from jiyi.records import Event, HistoryEvent, Layer, MemoryRecord, Scope, SourceRef, StoredMessage
from jiyi.stores.base import MemoryStore
from jiyi.text import query_terms

ALICE = Scope(user_id="alice")


def words(*texts: str) -> list[str]:
    """Keyword search takes words as jiyi.text analyses them (segmented, stemmed)."""
    return [term for text in texts for term in query_terms(text)]
BOB = Scope(user_id="bob")


def put(store: MemoryStore, embedder: Embedder, *texts: str, scope: Scope = ALICE, **fields: object) -> list[str]:
    if store.embedding_binding() is None:
        store.bind_embedding(embedder.model_id, embedder.dims)
    records = [MemoryRecord(content=t, scope=scope, **fields) for t in texts]  # type: ignore[arg-type]
    history = [HistoryEvent(r.id, Event.ADD, None, r.content) for r in records]
    store.insert(records, embedder.embed_documents(list(texts)), history)
    return [r.id for r in records]


def test_insert_then_get_round_trips_every_field(store: MemoryStore, embedder: Embedder) -> None:
    store.bind_embedding(embedder.model_id, embedder.dims)
    when = datetime(2026, 1, 3, 18, 0, tzinfo=UTC)
    record = MemoryRecord(
        content="用户对海鲜过敏", scope=Scope("alice", "xiaoxiang", "chat-1"), actor_id="Alice", role="user",
        importance=0.9, strength=2.5, access_count=3, confidence=0.8, verified=True, tags=["health", "饮食"],
        metadata={"topic": "allergy", "n": 2, "nested": {"a": [1, 2]}},
        provenance=[SourceRef("m1", "user", when, "D1:3")], related_ids=["x"], compression_source_ids=["y", "z"],
        created_at=when, updated_at=when, last_accessed_at=when, event_time=when,
        expiration_date=when + timedelta(days=365), layer=Layer.LONG_TERM,
    )
    store.insert([record], embedder.embed_documents([record.content]), [])
    assert store.get(record.id) == record


def test_get_unknown_is_none_and_get_many_skips_unknown(store: MemoryStore, embedder: Embedder) -> None:
    [a] = put(store, embedder, "one")
    assert store.get("nope") is None
    assert set(store.get_many([a, "nope"])) == {a}


def test_duplicate_id_is_rejected_and_nothing_changes(store: MemoryStore, embedder: Embedder) -> None:
    [a] = put(store, embedder, "original")
    clash = MemoryRecord(content="impostor", scope=ALICE, id=a)
    with pytest.raises(InvalidInput):
        store.insert([clash], embedder.embed_documents(["impostor"]), [])
    stored = store.get(a)
    assert stored is not None and stored.content == "original"


def test_embedding_binding_mismatch_is_a_clear_error(store: MemoryStore, embedder: Embedder) -> None:
    store.bind_embedding(embedder.model_id, embedder.dims)
    store.bind_embedding(embedder.model_id, embedder.dims)  # the same binding again is fine
    with pytest.raises(EmbeddingMismatch, match="holds vectors of"):
        store.bind_embedding("other-model", embedder.dims)
    with pytest.raises(EmbeddingMismatch):
        store.bind_embedding(embedder.model_id, embedder.dims + 1)
    with pytest.raises(EmbeddingMismatch):
        store.insert([MemoryRecord(content="x", scope=ALICE)], np.ones((1, embedder.dims + 3), np.float32), [])


def test_vector_search_is_exact_and_scoped(store: MemoryStore, embedder: Embedder) -> None:
    texts = [f"memory number {i} about topic {i % 7}" for i in range(60)]
    ids = put(store, embedder, *texts)
    put(store, embedder, *texts, scope=BOB)
    query = embedder.embed_query("memory number 42 about topic 0")
    hits = store.vector_search(ALICE, query, 5)
    assert len(hits) == 5
    expected = np.argsort(-(embedder.embed_documents(texts) @ query), kind="stable")[:5]
    assert next(h.memory_id for h in hits) == ids[int(expected[0])]
    assert {h.memory_id for h in hits} <= set(ids)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_scope_combinations_and_together(store: MemoryStore, embedder: Embedder) -> None:
    [both] = put(store, embedder, "coffee with friends", scope=Scope("alice", "bot"))
    [user_only] = put(store, embedder, "coffee alone", scope=Scope("alice"))
    [other_agent] = put(store, embedder, "coffee at work", scope=Scope("alice", "other"))
    q = embedder.embed_query("coffee")
    assert {h.memory_id for h in store.vector_search(Scope("alice"), q, 10)} == {both, user_only, other_agent}
    assert {h.memory_id for h in store.vector_search(Scope("alice", "bot"), q, 10)} == {both}
    assert {h.memory_id for h in store.vector_search(Scope(agent_id="bot"), q, 10)} == {both}
    assert {h.memory_id for h in store.keyword_search(Scope("alice", "bot"), words("coffee"), 10)} == {both}
    assert {r.id for r in store.list_records(Scope("alice", "other"))} == {other_agent}


def test_empty_scope_is_refused(store: MemoryStore, embedder: Embedder) -> None:
    put(store, embedder, "x")
    with pytest.raises(InvalidInput):
        store.list_records(Scope())
    with pytest.raises(InvalidInput):
        store.vector_search(Scope(), embedder.embed_query("x"), 3)


@pytest.mark.parametrize("term, expected", [("失眠", "我昨晚又失眠了"), ("上海", "我住在上海浦东"),
                                             ("虾", "我最喜欢吃油焖大虾"), ("海鲜", "我对海鲜过敏")])
def test_keyword_search_finds_short_chinese_terms(
    store: MemoryStore, embedder: Embedder, term: str, expected: str
) -> None:
    texts = ["我昨晚又失眠了", "我住在上海浦东", "我最喜欢吃油焖大虾", "我对海鲜过敏", "今天天气不错", "我在北京工作"]
    put(store, embedder, *texts)
    hits = store.keyword_search(ALICE, words(term), 10)
    contents = [store.get(h.memory_id).content for h in hits]  # type: ignore[union-attr]
    assert contents[0] == expected


def test_keyword_search_english_stems_and_ranks(store: MemoryStore, embedder: Embedder) -> None:
    put(store, embedder, "My sister Jesica has two dogs", "I like cats", "The dog park is near my flat")
    hits = store.keyword_search(ALICE, words("dog"), 10)
    contents = {store.get(h.memory_id).content for h in hits}  # type: ignore[union-attr]
    assert contents == {"My sister Jesica has two dogs", "The dog park is near my flat"}
    assert all(h.score > 0 for h in hits)


def test_keyword_search_survives_fts_syntax_in_terms(store: MemoryStore, embedder: Embedder) -> None:
    put(store, embedder, 'he said "hello" AND left (quickly)')
    for term in ['"hello"', "AND", "(quickly)", "NEAR", "*", "a:b"]:
        store.keyword_search(ALICE, [term], 5)  # raw, unanalysed: must still not raise an FTS syntax error


def test_update_replaces_content_vector_and_index(store: MemoryStore, embedder: Embedder) -> None:
    [a] = put(store, embedder, "lives in Beijing")
    record = store.get(a)
    assert record is not None
    moved = record.with_content("lives in Shanghai")
    event = HistoryEvent(a, Event.UPDATE, "lives in Beijing", "lives in Shanghai")
    store.update(moved, embedder.embed_documents([moved.content])[0], event)
    assert store.get(a).content == "lives in Shanghai"  # type: ignore[union-attr]
    assert [h.memory_id for h in store.keyword_search(ALICE, words("shanghai"), 5)] == [a]
    assert store.keyword_search(ALICE, words("beijing"), 5) == []
    assert store.vector_search(ALICE, embedder.embed_query("lives in Shanghai"), 1)[0].score == pytest.approx(1.0)
    assert [e.event for e in store.history(a)] == [Event.ADD, Event.UPDATE]


def test_soft_delete_hides_everywhere_but_keeps_audit(store: MemoryStore, embedder: Embedder) -> None:
    a, b = put(store, embedder, "secret diary entry", "public fact")
    store.vector_search(ALICE, embedder.embed_query("diary"), 5)  # warm any cache first
    now = datetime.now(UTC)
    store.soft_delete(a, "user asked", HistoryEvent(a, Event.DELETE, "secret diary entry", None, is_deleted=True), now)
    assert store.get(a) is None
    deleted = store.get(a, include_deleted=True)
    assert deleted is not None and deleted.deleted_at is not None and deleted.delete_reason == "user asked"
    assert a not in {h.memory_id for h in store.vector_search(ALICE, embedder.embed_query("secret diary"), 5)}
    assert store.keyword_search(ALICE, words("diary"), 5) == []
    assert [r.id for r in store.list_records(ALICE)] == [b]
    assert store.history(a)[-1].is_deleted
    with pytest.raises(InvalidInput):
        store.soft_delete(a, "again", HistoryEvent(a, Event.DELETE, None, None), now)


def test_a_purged_memory_leaves_its_audit_trail(store: MemoryStore, embedder: Embedder) -> None:
    gone, kept = put(store, embedder, "secret diary entry", "public fact")
    before = datetime.now(UTC)
    store.soft_delete(gone, "user asked", HistoryEvent(gone, Event.DELETE, "secret diary entry", None,
                                                       is_deleted=True, reason="user asked"), before)
    assert list(store.purged_history()) == []  # deleted, not yet purged: its rows go with it
    assert store.purge(before + timedelta(seconds=1)) == 1
    trail = list(store.purged_history())
    assert [(h.memory_id, h.event, h.old_memory, h.new_memory, h.reason) for h in trail] == [
        (gone, Event.ADD, None, None, None), (gone, Event.DELETE, None, None, "user asked")]
    assert trail == store.history(gone) and kept not in {h.memory_id for h in trail}


def test_expired_memories_hidden_unless_asked(store: MemoryStore, embedder: Embedder) -> None:
    past = datetime.now(UTC) - timedelta(days=1)
    future = datetime.now(UTC) + timedelta(days=1)
    [old] = put(store, embedder, "expired coupon", expiration_date=past)
    [fresh] = put(store, embedder, "valid coupon", expiration_date=future)
    q = embedder.embed_query("coupon")
    assert {h.memory_id for h in store.vector_search(ALICE, q, 5)} == {fresh}
    assert {h.memory_id for h in store.vector_search(ALICE, q, 5, include_expired=True)} == {old, fresh}
    assert {h.memory_id for h in store.keyword_search(ALICE, words("coupon"), 5)} == {fresh}
    assert {r.id for r in store.list_records(ALICE)} == {fresh}
    assert {r.id for r in store.list_records(ALICE, include_expired=True)} == {old, fresh}


def test_filters_apply_in_every_read_path(store: MemoryStore, embedder: Embedder) -> None:
    [food] = put(store, embedder, "likes spicy noodles", metadata={"topic": "food", "score": 5})
    [work] = put(store, embedder, "works on noodles factory", metadata={"topic": "work", "score": 9})
    where = parse_filters({"topic": "food"})
    assert [h.memory_id for h in store.vector_search(ALICE, embedder.embed_query("noodles"), 5, where)] == [food]
    assert [h.memory_id for h in store.keyword_search(ALICE, words("noodles"), 5, where)] == [food]
    assert [r.id for r in store.list_records(ALICE, parse_filters({"score": {"gt": 6}}))] == [work]


def test_mem0s_nested_metadata_filters_select_in_every_read_path(store: MemoryStore, embedder: Embedder) -> None:
    """{"metadata": {...}} as mem0's platform writes it, compiled to this store's SQL."""
    [food] = put(store, embedder, "likes spicy noodles", metadata={"topic": "food", "score": 5, "role": "cook"})
    [work] = put(store, embedder, "works on noodles factory", metadata={"topic": "work", "score": 9}, role="user")
    [none] = put(store, embedder, "noodles again", metadata={})
    query = embedder.embed_query("noodles")
    cases = [
        ({food}, {"metadata": {"topic": "food"}}),
        ({work}, {"metadata": {"topic": {"in": ["work", "travel"]}}}),
        ({food, none}, {"metadata": {"topic": {"ne": "work"}}}),
        ({food, work}, {"metadata": {"score": "*"}}),
        ({work}, {"metadata": {"topic": {"icontains": "WO"}, "score": {"gt": 6}}}),
        ({food}, {"metadata": {"role": "cook"}}),  # the caller's metadata key, not the record's role
        ({work}, {"role": "user"}),  # the record's role
        ({none}, {"NOT": [{"metadata": {"score": "*"}}]}),
    ]
    for expected, raw in cases:
        where = parse_filters(raw)
        assert {r.id for r in store.list_records(ALICE, where)} == expected, raw
        assert {h.memory_id for h in store.vector_search(ALICE, query, 5, where)} == expected, raw
        assert {h.memory_id for h in store.keyword_search(ALICE, words("noodles"), 5, where)} == expected, raw
        assert store.count_records(ALICE, where) == len(expected), raw


def test_list_is_newest_first_and_limited(store: MemoryStore, embedder: Embedder) -> None:
    base = datetime(2026, 1, 1, tzinfo=UTC)
    for day in range(5):
        put(store, embedder, f"day {day}", created_at=base + timedelta(days=day))
    assert [r.content for r in store.list_records(ALICE, limit=3)] == ["day 4", "day 3", "day 2"]


def test_pages_and_counts_agree_and_everyone_is_listed_only_when_asked(store: MemoryStore, embedder: Embedder) -> None:
    base = datetime(2026, 1, 1, tzinfo=UTC)
    for day in range(7):
        put(store, embedder, f"day {day}", created_at=base + timedelta(days=day), metadata={"even": day % 2 == 0})
    put(store, embedder, "bob's", scope=BOB, created_at=base)
    pages = [[r.content for r in store.list_records(ALICE, limit=3, offset=start)] for start in (0, 3, 6)]
    assert pages == [["day 6", "day 5", "day 4"], ["day 3", "day 2", "day 1"], ["day 0"]]
    assert [r.content for r in store.list_records(ALICE, offset=5)] == ["day 1", "day 0"]  # no limit: the rest
    even = parse_filters({"even": True})
    assert store.count_records(ALICE) == 7 and store.count_records(ALICE, even) == 4
    assert store.count_records(Scope(), every_scope=True) == 8
    assert {r.content for r in store.list_records(Scope(), every_scope=True)} >= {"bob's", "day 0"}
    with pytest.raises(InvalidInput):
        store.count_records(Scope())


def test_entities_count_users_agents_and_runs(store: MemoryStore, embedder: Embedder) -> None:
    put(store, embedder, "a", "b")
    put(store, embedder, "c", scope=Scope(user_id="alice", agent_id="helper", run_id="r1"))
    put(store, embedder, "d", scope=BOB)
    [gone] = put(store, embedder, "e", scope=Scope(user_id="carol"))
    store.soft_delete(gone, "test", HistoryEvent(gone, Event.DELETE, "e", None), datetime.now(UTC))
    everyone = {(e.kind, e.name): e.memories for e in store.entities()}
    assert everyone == {("user", "alice"): 3, ("user", "bob"): 1, ("agent", "helper"): 1, ("run", "r1"): 1}
    assert {(e.kind, e.name) for e in store.entities("bob")} == {("user", "bob")}
    assert all(e.first_created <= e.last_updated for e in store.entities())


def test_record_access_counts(store: MemoryStore, embedder: Embedder) -> None:
    [a] = put(store, embedder, "x")
    when = datetime(2026, 2, 1, tzinfo=UTC)
    store.record_access([a], when)
    store.record_access([a], when)
    record = store.get(a)
    assert record is not None and record.access_count == 2 and record.last_accessed_at == when
    [b] = put(store, embedder, "y")
    store.record_access([a, b, a], when + timedelta(days=1))  # the read path writes several searches at once
    counts = {i: r.access_count for i, r in store.get_many([a, b]).items()}
    assert counts == {a: 4, b: 1}


def test_count_by_layer_and_iter_records(store: MemoryStore, embedder: Embedder) -> None:
    put(store, embedder, "a", "b")
    put(store, embedder, "c", layer=Layer.LONG_TERM, scope=BOB)
    assert store.count() == {"short_term": 2, "long_term": 1}
    assert store.count(BOB) == {"long_term": 1}
    assert sorted(r.content for r in store.iter_records()) == ["a", "b", "c"]
    assert [r.content for r in store.iter_records(BOB)] == ["c"]
    assert store.known_ids([*(r.id for r in store.iter_records()), "zzz"]) == {r.id for r in store.iter_records()}


def test_reset_empties_everything(store: MemoryStore, embedder: Embedder) -> None:
    [a] = put(store, embedder, "x")
    store.add_messages([StoredMessage(content="hi", role="user", scope=ALICE)])
    store.reset()
    assert store.get(a, include_deleted=True) is None
    assert store.history(a) == [] and store.list_messages(ALICE) == [] and store.count() == {}
    assert store.embedding_binding() is None


def test_writes_are_atomic(store: MemoryStore, embedder: Embedder) -> None:
    [a] = put(store, embedder, "first")
    good = MemoryRecord(content="second", scope=ALICE)
    clash = MemoryRecord(content="clash", scope=ALICE, id=a)
    with pytest.raises(InvalidInput):
        store.insert([good, clash], embedder.embed_documents(["second", "clash"]),
                     [HistoryEvent(good.id, Event.ADD, None, "second")])
    assert store.get(good.id) is None and store.history(good.id) == []
    assert [h.memory_id for h in store.vector_search(ALICE, embedder.embed_query("second"), 5)] == [a]


def test_document_frequencies_tell_common_from_rare_words(store: MemoryStore, embedder: Embedder) -> None:
    put(store, embedder, "I like tea", "I like coffee", "I like my sister Jesica")
    put(store, embedder, "bob likes tea too", scope=BOB)
    frequencies, total = store.document_frequencies(words("like", "Jesica", "tea", "unseen"))
    assert frequencies == {"like": 4, "jesica": 1, "tea": 2}
    assert total >= 4
    assert store.document_frequencies([]) == ({}, 0)



def test_a_summary_s_time_stamp_is_not_searched_as_words(store: MemoryStore, embedder: Embedder) -> None:
    summary, eleven = put(store, embedder, "[2023-11-06 11:41] Talked about pottery and dogs", "We met 11 friends")
    assert [h.memory_id for h in store.keyword_search(ALICE, words("August 11"), 10)] == [eleven]
    assert [h.memory_id for h in store.keyword_search(ALICE, words("pottery"), 10)] == [summary]
    frequencies, _ = store.document_frequencies(words("11", "41", "pottery"))
    assert frequencies == {"11": 1, "potteri": 1}  # stemmed
    assert store.get(summary).content.startswith("[2023-11-06 11:41]")  # type: ignore[union-attr]

# --- versions: compare-and-swap -------------------------------------------------------------------------------------


def test_every_change_moves_the_version_on_and_a_stale_writer_is_refused(store: MemoryStore,
                                                                          embedder: Embedder) -> None:
    from jiyi.errors import Conflict

    [a] = put(store, embedder, "I live in Lyon")
    read = store.get(a)
    assert read is not None and read.version == 1
    first = read.with_content("I live in Nantes")
    store.update(first, embedder.embed_documents([first.content])[0],
                 HistoryEvent(a, Event.UPDATE, read.content, first.content), expected_version=1)
    assert first.version == 2 and store.get(a).version == 2  # type: ignore[union-attr]
    stale = read.with_content("I live in Lille")  # made from what was read before the first update
    with pytest.raises(Conflict):
        store.update(stale, None, HistoryEvent(a, Event.UPDATE, read.content, stale.content), expected_version=1)
    with pytest.raises(Conflict):
        store.soft_delete(a, "stale", HistoryEvent(a, Event.DELETE, read.content, None), datetime.now(UTC),
                          expected_version=1)
    now = store.get(a)
    assert now is not None and now.content == "I live in Nantes" and now.version == 2
    assert [(h.old_memory, h.new_memory) for h in store.history(a) if h.event is Event.UPDATE] == [
        ("I live in Lyon", "I live in Nantes")]  # the refused writes left no row
    store.record_access([a], datetime.now(UTC))  # a review is not a change of the memory
    assert store.get(a).version == 2  # type: ignore[union-attr]
    store.update(replace(now, importance=2.0), None, None)  # without expected_version: applied, version + 1
    store.soft_delete(a, "gone", HistoryEvent(a, Event.DELETE, now.content, None), datetime.now(UTC),
                      expected_version=3)
    assert store.get(a) is None


def test_a_restored_memory_is_live_and_searchable_again(store: MemoryStore, embedder: Embedder) -> None:
    [a] = put(store, embedder, "我养了一只柯基叫旺财")
    record = store.get(a)
    assert record is not None
    when = datetime.now(UTC)
    store.soft_delete(a, "oops", HistoryEvent(a, Event.DELETE, record.content, None), when)
    with pytest.raises(InvalidInput):  # only a deleted memory is restored
        store.restore("unknown", HistoryEvent("unknown", Event.RESTORE, None, "x"), when)
    back = store.restore(a, HistoryEvent(a, Event.RESTORE, None, record.content), when)
    assert (back.deleted_at, back.version, store.get(a)) == (None, record.version + 2, back)
    assert [h.memory_id for h in store.keyword_search(ALICE, words("柯基"), 5)] == [a]
    assert [h.memory_id for h in store.vector_search(ALICE, embedder.embed_query(record.content), 1)] == [a]
    assert [e.event for e in store.history(a)] == [Event.ADD, Event.DELETE, Event.RESTORE]
    with pytest.raises(InvalidInput):
        store.restore(a, HistoryEvent(a, Event.RESTORE, None, record.content), when)  # live already


def test_stored_vectors_and_users_are_the_live_memories(store: MemoryStore, embedder: Embedder) -> None:
    a, b = put(store, embedder, "tea", "coffee")
    [c] = put(store, embedder, "bob's", scope=BOB)
    store.soft_delete(b, "x", HistoryEvent(b, Event.DELETE, "coffee", None), datetime.now(UTC))
    vectors = store.get_vectors([a, b, c, "unknown"])
    assert set(vectors) == {a, c}
    assert np.allclose(vectors[a], embedder.embed_documents(["tea"])[0], atol=1e-6)
    assert store.user_ids() == ["alice", "bob"]
    store.soft_delete(c, "x", HistoryEvent(c, Event.DELETE, "bob's", None), datetime.now(UTC))
    assert store.user_ids() == ["alice"]


def test_history_rows_are_appended_as_they_are(store: MemoryStore, embedder: Embedder) -> None:
    [a] = put(store, embedder, "tea")
    imported = HistoryEvent(a, Event.UPDATE, "tea", "green tea", created_at=datetime.now(UTC) + timedelta(days=1),
                            reason="imported")
    store.add_history([imported])
    store.add_history([imported])  # an import run twice adds it once
    rows = store.history(a)
    assert [(r.event, r.new_memory) for r in rows] == [(Event.ADD, "tea"), (Event.UPDATE, "green tea")]
    assert (rows[1].created_at, rows[1].reason) == (imported.created_at, "imported")
