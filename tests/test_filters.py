"""mem0's filter grammar: parsing errors are clear, and the SQLite translation agrees with the reference semantics
(`matches`) on generated records and filters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jiyi import InvalidInput, build_embedder
from jiyi.filters import matches, merge_scope, parse_filters
from jiyi.records import MemoryRecord, Scope
from jiyi.stores.sqlite import SqliteStore

KEYS = ["topic", "n", "flag", "tags_meta", "role", "categories"]
scalars = st.one_of(st.sampled_from(["food", "work", "Food", "spicy food", "x"]), st.integers(-3, 12), st.booleans())
metadata_values = st.one_of(scalars, st.lists(st.sampled_from(["a", "b", "food"]), max_size=3))


def condition() -> st.SearchStrategy[dict[str, Any]]:
    key = st.sampled_from(KEYS)
    simple = st.builds(lambda k, v: {k: v}, key, scalars)
    wildcard = st.builds(lambda k: {k: "*"}, key)
    compare = st.builds(lambda k, op, v: {k: {op: v}}, key, st.sampled_from(["gt", "gte", "lt", "lte"]),
                        st.one_of(st.integers(-3, 12), st.sampled_from(["food", "m"])))
    equality = st.builds(lambda k, op, v: {k: {op: v}}, key, st.sampled_from(["eq", "ne"]), scalars)
    member = st.builds(lambda k, op, v: {k: {op: v}}, key, st.sampled_from(["in", "nin"]),
                       st.lists(scalars, min_size=1, max_size=3))
    contains = st.builds(lambda k, op, v: {k: {op: v}}, key, st.sampled_from(["contains", "icontains"]),
                         st.sampled_from(["food", "FOOD", "a", "pic"]))
    plain = st.one_of(simple, wildcard, compare, equality, member, contains)
    # mem0's nested form names metadata keys only: {"metadata": {"role": …}} is a metadata key, {"role": …} the column.
    nested = st.builds(lambda inner: {"metadata": inner}, plain)
    return st.one_of(plain, nested)


filters = st.recursive(
    condition(),
    lambda inner: st.builds(lambda op, items: {op: items}, st.sampled_from(["AND", "OR", "NOT"]),
                            st.lists(inner, min_size=1, max_size=3)),
    max_leaves=6,
)
records = st.lists(
    st.builds(
        lambda meta, role, categories: MemoryRecord(content="some memory", scope=Scope("u"), metadata=meta, role=role,
                                                    categories=categories),
        st.dictionaries(st.sampled_from(KEYS[:4]), metadata_values, max_size=4),
        st.sampled_from([None, "user", "assistant"]),
        st.lists(st.sampled_from(["food", "work", "Food", "x"]), max_size=3, unique=True),
    ),
    min_size=1, max_size=6,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=records, raw_filter=filters)
def test_sqlite_translation_agrees_with_reference(tmp_path: Path, batch: list[MemoryRecord], raw_filter: dict) -> None:
    embedder = build_embedder("hashing", dims=16)
    store = SqliteStore(":memory:")
    store.bind_embedding(embedder.model_id, embedder.dims)
    store.insert(batch, embedder.embed_documents([r.content for r in batch]), [])
    node = parse_filters(raw_filter)
    expected = {r.id for r in batch if matches(node, r)}
    assert {r.id for r in store.list_records(Scope("u"), node)} == expected
    store.close()


@pytest.mark.parametrize("bad, message", [
    ({"topic": {"like": "x"}}, "unknown operator 'like'"),
    ({"topic": {"in": "food"}}, "needs a list"),
    ({"n": {"gt": [1]}}, "needs a number or a date"),
    ({"AND": []}, "non-empty list"),
    ({"OR": "x"}, "non-empty list"),
    ({"topic": {}}, "has no operator"),
    ({"created_at": {"gte": "yesterday"}}, "not an ISO date"),
    ({"topic": {"icontains": 3}}, "needs a string"),
    ({"metadata": {"topic": "work", "eq": 1}}, "mixes operators"),
    ({"metadata": {"topic": {"like": "w"}}}, "unknown operator 'like'"),
])
def test_bad_filters_say_what_is_wrong(bad: dict, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        parse_filters(bad)


def test_ids_in_filters_become_the_scope() -> None:
    scope, rest = merge_scope(Scope(), {"user_id": "alice", "AND": [{"topic": "food"}]})
    assert scope == Scope("alice") and rest == {"AND": [{"topic": "food"}]}
    scope, _ = merge_scope(Scope(agent_id="bot"), {"user_id": "alice"})
    assert scope == Scope("alice", "bot")
    with pytest.raises(InvalidInput, match="given twice"):
        merge_scope(Scope("bob"), {"user_id": "alice"})


def test_dates_compare_as_times() -> None:
    from datetime import UTC, datetime

    record = MemoryRecord(content="x", scope=Scope("u"), created_at=datetime(2024, 7, 2, tzinfo=UTC))
    assert matches(parse_filters({"created_at": {"gte": "2024-07-01"}}), record)
    assert not matches(parse_filters({"created_at": {"lt": "2024-07-01T00:00:00Z"}}), record)


def test_the_nested_metadata_form_is_the_dotted_form() -> None:
    """mem0's platform writes metadata conditions inside "metadata"; each key inside is a metadata key, with or
    without an operator, and a key named like a record field (role) is still the caller's metadata."""
    work = MemoryRecord(content="x", scope=Scope("u"), metadata={"topic": "work", "role": "lead", "n": 3})
    food = MemoryRecord(content="y", scope=Scope("u"), metadata={"topic": "food"}, role="lead")
    pairs = [
        ({"metadata": {"topic": "work"}}, {"metadata.topic": "work"}),
        ({"metadata": {"topic": {"in": ["work", "travel"]}}}, {"metadata.topic": {"in": ["work", "travel"]}}),
        ({"metadata": {"topic": "work", "n": {"gte": 3}}},
         {"AND": [{"metadata.topic": "work"}, {"metadata.n": {"gte": 3}}]}),
        ({"metadata": {"role": "lead"}}, {"metadata.role": "lead"}),
        ({"OR": [{"metadata": {"topic": "food"}}, {"metadata": {"n": "*"}}]},
         {"OR": [{"metadata.topic": "food"}, {"metadata.n": "*"}]}),
    ]
    for nested_form, dotted in pairs:
        assert parse_filters(nested_form) == parse_filters(dotted), nested_form
    assert [matches(parse_filters({"metadata": {"role": "lead"}}), r) for r in (work, food)] == [True, False]
    assert [matches(parse_filters({"role": "lead"}), r) for r in (work, food)] == [False, True]
    # Operators alone still filter a metadata key that is itself called "metadata".
    holder = MemoryRecord(content="z", scope=Scope("u"), metadata={"metadata": "a"})
    assert matches(parse_filters({"metadata": {"in": ["a", "b"]}}), holder)


def test_categories_filter_on_their_elements_as_mem0s_do() -> None:
    food = MemoryRecord(content="likes hot pot", scope=Scope("u"), categories=["food", "user_preferences"])
    trip = MemoryRecord(content="went to Japan", scope=Scope("u"), categories=["travel"])
    none = MemoryRecord(content="old memory", scope=Scope("u"))

    def kept(raw: dict[str, Any]) -> list[str]:
        node = parse_filters(raw)
        return [r.content for r in (food, trip, none) if matches(node, r)]

    assert kept({"categories": {"in": ["food", "health"]}}) == ["likes hot pot"]
    assert kept({"categories": {"in": ["food", "travel"]}}) == ["likes hot pot", "went to Japan"]
    assert kept({"categories": "travel"}) == kept({"categories": {"contains": "travel"}}) == ["went to Japan"]
    assert kept({"categories": {"nin": ["food"]}}) == ["went to Japan", "old memory"]
    assert kept({"categories": "*"}) == ["likes hot pot", "went to Japan"]
    assert kept({"metadata.categories": "*"}) == []  # the caller's own metadata key stays reachable by name
