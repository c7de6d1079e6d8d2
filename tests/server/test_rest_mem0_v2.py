"""mem0's current (v2.x) REST request shapes: ids inside `filters`, `top_k`, `explain`, expiry, filter operators."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from rest_helpers import add, add_all, list_memories, ok, search, texts_found

# One scope, four memories that share the word "item" so every one of them is a search candidate;
# which of them a filter keeps is decided by the metadata alone.
CATALOGUE: dict[str, dict[str, Any]] = {
    "item hot pot": {"kind": "food", "price": 5, "labels": ["spicy", "cheap"], "note": "Hot Pot night"},
    "item bubble tea": {"kind": "drink", "price": 12, "labels": ["sweet"], "note": "bubble tea"},
    "item roast duck": {"kind": "food", "price": 20, "note": "Roast Duck"},
    "item city park": {"kind": "place", "price": 0},
}
HOT_POT, TEA, DUCK, PARK = CATALOGUE


@pytest.fixture
def catalogue(client: httpx.Client) -> httpx.Client:
    for content, metadata in CATALOGUE.items():
        add(client, content, user_id="carol", metadata=metadata)
    add(client, "item hot pot", user_id="dave", metadata=CATALOGUE[HOT_POT])  # another user: never returned
    return client


def test_search_with_ids_only_inside_filters(client: httpx.Client) -> None:
    add(client, "I like green tea", user_id="alice")
    add(client, "I like green tea", user_id="bob")
    results = search(client, "green tea", filters={"user_id": "alice"})
    assert [(r["memory"], r["user_id"]) for r in results] == [("I like green tea", "alice")]


def test_search_with_id_as_eq_operator_inside_filters(client: httpx.Client) -> None:
    add(client, "I like green tea", user_id="alice")
    add(client, "I like green tea", user_id="bob")
    assert [r["user_id"] for r in search(client, "tea", filters={"user_id": {"eq": "bob"}})] == ["bob"]


def test_top_k_caps_the_number_of_results(client: httpx.Client) -> None:
    add_all(client, [f"note number {n} about tea" for n in range(6)])
    assert len(search(client, "tea", filters={"user_id": "alice"}, top_k=3)) == 3
    assert len(search(client, "tea", filters={"user_id": "alice"}, top_k=20)) == 6


def test_top_k_on_list(client: httpx.Client) -> None:
    add_all(client, [f"note number {n}" for n in range(5)])
    assert len(list_memories(client, user_id="alice", top_k=2)) == 2


def test_explain_adds_score_details(client: httpx.Client) -> None:
    add(client, "I drink green tea every morning")
    plain = search(client, "green tea", filters={"user_id": "alice"})
    explained = search(client, "green tea", filters={"user_id": "alice"}, explain=True)
    assert "score_details" not in plain[0]
    details = explained[0]["score_details"]
    assert isinstance(details, dict) and details
    assert explained[0]["score"] == plain[0]["score"]


def add_expiring(client: httpx.Client) -> tuple[str, str]:
    expired = add(client, "Temporary note: the door code is 1234", expiration_date="2000-01-01")["id"]
    current = add(client, "Lasting note: the door is blue", expiration_date="2999-12-31")["id"]
    return expired, current


def test_expired_memory_is_hidden_from_list_unless_show_expired(client: httpx.Client) -> None:
    expired, current = add_expiring(client)
    assert [i["id"] for i in list_memories(client, user_id="alice")] == [current]
    shown = {i["id"]: i for i in list_memories(client, user_id="alice", show_expired="true")}
    assert set(shown) == {expired, current}
    assert shown[current]["expiration_date"] == "2999-12-31"
    assert shown[expired]["expiration_date"] == "2000-01-01"


def test_expired_memory_is_hidden_from_search_unless_show_expired(client: httpx.Client) -> None:
    expired, current = add_expiring(client)
    assert [r["id"] for r in search(client, "door code note", filters={"user_id": "alice"})] == [current]
    shown = search(client, "door code note", filters={"user_id": "alice"}, show_expired=True)
    assert shown[0]["id"] == expired
    assert {r["id"] for r in shown} == {expired, current}


def test_update_can_set_expiration_date(client: httpx.Client) -> None:
    memory_id = add(client, "I am at the airport")["id"]
    ok(client.put(f"/memories/{memory_id}", json={"text": "I am at the airport gate", "expiration_date": "2001-01-01"}))
    assert list_memories(client, user_id="alice") == []
    assert list_memories(client, user_id="alice", show_expired="true")[0]["expiration_date"] == "2001-01-01"


FILTER_CASES: list[tuple[dict[str, Any], set[str]]] = [
    ({"kind": "food"}, {HOT_POT, DUCK}),
    ({"kind": {"eq": "food"}}, {HOT_POT, DUCK}),
    ({"kind": {"ne": "food"}}, {TEA, PARK}),
    ({"price": {"gt": 5}}, {TEA, DUCK}),
    ({"price": {"gte": 12}}, {TEA, DUCK}),
    ({"price": {"lt": 5}}, {PARK}),
    ({"price": {"lte": 5}}, {HOT_POT, PARK}),
    ({"kind": {"in": ["drink", "place"]}}, {TEA, PARK}),
    ({"kind": {"nin": ["food", "drink"]}}, {PARK}),
    ({"note": {"contains": "tea"}}, {TEA}),
    ({"note": {"contains": "roast"}}, set()),
    ({"note": {"icontains": "roast"}}, {DUCK}),
    ({"labels": {"contains": "spicy"}}, {HOT_POT}),
    ({"note": "*"}, {HOT_POT, TEA, DUCK}),
    ({"AND": [{"kind": "food"}, {"price": {"gt": 10}}]}, {DUCK}),
    ({"OR": [{"kind": "drink"}, {"price": {"lt": 1}}]}, {TEA, PARK}),
    ({"NOT": [{"kind": "food"}]}, {TEA, PARK}),
    ({"AND": [{"OR": [{"kind": "food"}, {"kind": "drink"}]}, {"NOT": [{"price": {"gte": 20}}]}]}, {HOT_POT, TEA}),
    ({"kind": "food", "price": {"lt": 10}}, {HOT_POT}),
]


@pytest.mark.parametrize(("filters", "expected"), FILTER_CASES, ids=[str(f) for f, _ in FILTER_CASES])
def test_metadata_filter_operators(catalogue: httpx.Client, filters: dict[str, Any], expected: set[str]) -> None:
    assert texts_found(catalogue, "item", filters={"user_id": "carol", **filters}) == expected


def test_nin_with_an_empty_list_excludes_nothing(catalogue: httpx.Client) -> None:
    # "not in {}" holds for every value; the reference semantics (jiyi.filters.matches) agree.
    assert texts_found(catalogue, "item", filters={"user_id": "carol", "kind": {"nin": []}}) == set(CATALOGUE)


def test_get_configure_redacts_the_llm_api_key(client: httpx.Client, tmp_path: Path) -> None:
    config = {
        "history_db_path": str(tmp_path / "configured.db"),
        "embedder": {"provider": "hashing"},
        "llm": {"provider": "openai", "config": {"api_key": "sk-secret", "model": "gpt-4o-mini"}},
    }
    ok(client.post("/configure", json=config))
    response = client.get("/configure")
    shown = ok(response)
    assert "sk-secret" not in response.text
    assert shown["llm"]["provider"] == "openai"
    assert shown["llm"]["config"]["model"] == "gpt-4o-mini"
    assert shown["llm"]["config"]["api_key"] != "sk-secret"


def test_get_configure_redacts_embedder_key_and_url_password(client: httpx.Client, tmp_path: Path) -> None:
    config = {
        "history_db_path": str(tmp_path / "configured.db"),
        "embedder": {"provider": "openai", "config": {
            "api_key": "sk-embedder-secret", "model": "text-embedding-3-small",
            "openai_base_url": "http://user:pw-secret@127.0.0.1:9/v1",
        }},
    }
    ok(client.post("/configure", json=config))
    text = client.get("/configure").text
    assert "sk-embedder-secret" not in text and "pw-secret" not in text
    assert "text-embedding-3-small" in text
