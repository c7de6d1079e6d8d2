"""mem0's classic (v1.x) REST request shapes, sent unchanged to jiyi's server."""

from __future__ import annotations

from pathlib import Path

import httpx
from rest_helpers import (
    HISTORY_COLUMNS,
    add,
    add_all,
    assert_memory_item,
    get_memory,
    history,
    list_memories,
    md5,
    ok,
    search,
    texts_found,
)

FOODS = ["I love spicy hot pot", "I drink green tea every morning", "My cat is called Mochi", "I work as a nurse"]


def test_add_returns_mem0_results_with_actor_and_role(client: httpx.Client) -> None:
    body = {
        "messages": [
            {"role": "user", "content": "My name is Alice", "name": "alice_w"},
            {"role": "assistant", "content": "Nice to meet you, Alice"},
        ],
        "user_id": "alice", "agent_id": "helper", "run_id": "run-1", "metadata": {"channel": "web"}, "infer": False,
    }
    results = ok(client.post("/memories", json=body))["results"]
    assert [r["memory"] for r in results] == ["My name is Alice", "Nice to meet you, Alice"]
    for item in results:
        assert {"id", "memory", "event", "actor_id", "role"} <= item.keys()
        assert item["event"] == "ADD"
        assert isinstance(item["id"], str) and item["id"]
    assert [(r["actor_id"], r["role"]) for r in results] == [("alice_w", "user"), (None, "assistant")]


def test_add_skips_system_messages(client: httpx.Client) -> None:
    body = {"messages": [{"role": "system", "content": "You are helpful"}, {"role": "user", "content": "I am 30"}],
            "user_id": "alice", "infer": False}
    results = ok(client.post("/memories", json=body))["results"]
    assert [r["memory"] for r in results] == ["I am 30"]


def test_add_with_default_infer_extracts_facts_and_ignores_chit_chat(client: httpx.Client) -> None:
    """No LLM is configured in tests: mem0's default infer=true runs jiyi's offline extraction."""
    chat = ok(client.post("/memories", json={"messages": [{"role": "user", "content": "hi"}], "user_id": "alice"}))
    assert chat["results"] == []
    fact = ok(client.post("/memories", json={"messages": [{"role": "user", "content": "I'm allergic to peanuts"}],
                                             "user_id": "alice"}))
    assert [(r["event"], r["memory"]) for r in fact["results"]] == [("ADD", "User is allergic to peanuts")]
    assert [m["memory"] for m in list_memories(client, user_id="alice")] == ["User is allergic to peanuts"]


def test_list_by_user_id_returns_memory_items(client: httpx.Client) -> None:
    add_all(client, FOODS, metadata={"source_app": "test"})
    add(client, "Bob plays chess", user_id="bob")
    items = list_memories(client, user_id="alice")
    assert sorted(i["memory"] for i in items) == sorted(FOODS)
    for item in items:
        assert_memory_item(item)
        assert item["user_id"] == "alice"
        assert item["metadata"] == {"source_app": "test"}
        assert item["updated_at"] is None


def test_get_one_memory_carries_its_ids(client: httpx.Client) -> None:
    memory_id = add(client, "I live in Lisbon", agent_id="travel-bot", run_id="trip-7")["id"]
    item = get_memory(client, memory_id)
    assert_memory_item(item, "I live in Lisbon")
    ids = (item["id"], item["user_id"], item["agent_id"], item["run_id"])
    assert ids == (memory_id, "alice", "travel-bot", "trip-7")
    assert item["role"] == "user"


def test_search_with_top_level_user_id_and_limit(client: httpx.Client) -> None:
    add_all(client, FOODS)
    add(client, "I drink green tea too", user_id="bob")
    results = search(client, "green tea", user_id="alice", limit=2)
    assert len(results) == 2
    assert results[0]["memory"] == "I drink green tea every morning"
    assert all(r["user_id"] == "alice" for r in results)
    for item in results:
        assert_memory_item(item)
        assert isinstance(item["score"], float)
    assert results[0]["score"] >= results[1]["score"]


def test_search_filters_on_metadata_as_in_mem0_readme(client: httpx.Client) -> None:
    # mem0's README: m.add(..., metadata={"category": "hobbies"}); m.search(..., filters={"category": "hobbies"})
    add(client, "I like to play tennis on weekends", metadata={"category": "hobbies"})
    add(client, "I play tennis for my job", metadata={"category": "work"})
    assert texts_found(client, "tennis", user_id="alice", filters={"category": "hobbies"}) == {
        "I like to play tennis on weekends"
    }


def test_search_filters_on_plain_metadata_key(client: httpx.Client) -> None:
    add(client, "I like to play tennis on weekends", metadata={"topic": "hobbies"})
    add(client, "I play tennis for my job", metadata={"topic": "work"})
    assert texts_found(client, "tennis", user_id="alice", filters={"topic": "work"}) == {"I play tennis for my job"}


def test_search_threshold_drops_weaker_results(client: httpx.Client) -> None:
    add_all(client, FOODS)
    scores = [r["score"] for r in search(client, "green tea every morning", user_id="alice")]
    assert len(scores) == len(FOODS) and scores[0] > scores[1]
    cut = (scores[0] + scores[1]) / 2
    results = search(client, "green tea every morning", user_id="alice", threshold=cut)
    assert [r["memory"] for r in results] == ["I drink green tea every morning"]
    assert all(r["score"] >= cut for r in results)


def test_update_with_text_rewrites_content_hash_and_index(client: httpx.Client) -> None:
    memory_id = add(client, "I live in Paris")["id"]
    created = get_memory(client, memory_id)["created_at"]
    answer = ok(client.put(f"/memories/{memory_id}", json={"text": "I live in Berlin"}))
    assert answer == {"message": "Memory updated successfully!"}
    item = get_memory(client, memory_id)
    assert_memory_item(item, "I live in Berlin")
    assert item["hash"] == md5("I live in Berlin")
    assert item["created_at"] == created and item["updated_at"] is not None
    assert search(client, "Berlin", user_id="alice")[0]["id"] == memory_id


def test_update_with_v1_data_field(client: httpx.Client) -> None:
    memory_id = add(client, "My favourite colour is blue")["id"]
    answer = ok(client.put(f"/memories/{memory_id}", json={"data": "My favourite colour is green"}))
    assert answer == {"message": "Memory updated successfully!"}
    assert get_memory(client, memory_id)["memory"] == "My favourite colour is green"


def test_history_lists_mem0_rows(client: httpx.Client) -> None:
    memory_id = add(client, "I own a bike")["id"]
    ok(client.put(f"/memories/{memory_id}", json={"text": "I own two bikes"}))
    rows = history(client, memory_id)
    assert [list(row) for row in rows] == [HISTORY_COLUMNS, HISTORY_COLUMNS]
    assert [(r["event"], r["old_memory"], r["new_memory"]) for r in rows] == [
        ("ADD", None, "I own a bike"), ("UPDATE", "I own a bike", "I own two bikes")]
    assert all(r["memory_id"] == memory_id and r["is_deleted"] is False for r in rows)
    assert rows[1]["updated_at"] is not None


def test_delete_one_memory(client: httpx.Client) -> None:
    keep, gone = add_all(client, ["I have a sister", "I hate olives"])
    assert ok(client.delete(f"/memories/{gone}")) == {"message": "Memory deleted successfully"}
    assert client.get(f"/memories/{gone}").status_code == 404
    assert [i["id"] for i in list_memories(client, user_id="alice")] == [keep]
    assert "I hate olives" not in texts_found(client, "olives", user_id="alice")
    last = history(client, gone)[-1]
    assert (last["event"], last["old_memory"], last["is_deleted"]) == ("DELETE", "I hate olives", True)


def test_delete_all_of_one_user_keeps_other_users(client: httpx.Client) -> None:
    add_all(client, FOODS)
    bob_id = add(client, "Bob plays chess", user_id="bob")["id"]
    assert ok(client.delete("/memories", params={"user_id": "alice"})) == {"message": "All relevant memories deleted"}
    assert list_memories(client, user_id="alice") == []
    assert [i["id"] for i in list_memories(client, user_id="bob")] == [bob_id]


def test_reset_removes_everything(client: httpx.Client) -> None:
    add_all(client, FOODS)
    add(client, "Bob plays chess", user_id="bob")
    assert ok(client.post("/reset")) == {"message": "All memories reset"}
    assert list_memories(client, user_id="alice") == [] and list_memories(client, user_id="bob") == []
    assert add(client, "I start again")["event"] == "ADD"


def test_configure_switches_to_the_new_store(client: httpx.Client, tmp_path: Path) -> None:
    add(client, "Stored before configure")
    new_db = tmp_path / "configured.db"
    config = {"history_db_path": str(new_db), "embedder": {"provider": "hashing"}}
    assert ok(client.post("/configure", json=config)) == {"message": "Configuration set successfully"}
    assert str(new_db) in ok(client.get("/health"))["store"]
    assert list_memories(client, user_id="alice") == []
    memory_id = add(client, "Stored after configure")["id"]
    assert search(client, "configure", user_id="alice")[0]["id"] == memory_id
    assert new_db.exists()


def test_root_redirects_to_docs(client: httpx.Client) -> None:
    response = client.get("/")
    assert response.is_redirect
    assert response.headers["location"] == "/docs"
    assert client.get("/", follow_redirects=True).status_code == 200


def test_update_at_a_version_answers_409_once_the_memory_moved_on(client: httpx.Client) -> None:
    """mem0's PUT body stays valid (last writer wins, chained in history); If-Match or `version` asks for a 409
    instead."""
    added = client.post("/memories", json={"messages": [{"role": "user", "content": "I live in Lyon"}],
                                           "user_id": "alice", "infer": False}).json()["results"][0]
    read = client.get(f"/memories/{added['id']}").json()
    assert read["version"] == 1
    assert client.put(f"/memories/{added['id']}", json={"text": "I live in Nantes"},
                      headers={"If-Match": '"1"'}).status_code == 200
    stale = client.put(f"/memories/{added['id']}", json={"text": "I live in Lille"}, headers={"If-Match": '"1"'})
    assert stale.status_code == 409 and "version 2" in stale.json()["detail"]
    assert client.put(f"/memories/{added['id']}", json={"text": "I live in Lille", "version": 1}).status_code == 409
    assert client.put(f"/memories/{added['id']}", json={"text": "x"}, headers={"If-Match": "soon"}).status_code == 400
    assert client.get(f"/memories/{added['id']}").json()["memory"] == "I live in Nantes"
    assert client.put(f"/memories/{added['id']}", json={"text": "I live in Lille", "version": 2}).status_code == 200
    history = client.get(f"/memories/{added['id']}/history").json()
    assert [(h["old_memory"], h["new_memory"]) for h in history if h["event"] == "UPDATE"] == [
        ("I live in Lyon", "I live in Nantes"), ("I live in Nantes", "I live in Lille")]


def test_the_projects_own_categories_sort_adds_and_new_texts_of_the_self_hosted_routes(client: httpx.Client) -> None:
    """mem0's self-hosted routes (POST /memories, PUT /memories/{id}) use the project's custom_categories as the
    platform routes and the MCP tools do (an open server is the project "default")."""
    project = "/api/v1/orgs/organizations/jiyi/projects/default/"
    assert client.patch(project, json={"custom_categories": [{"pets": "the user's pets"},
                                                             {"money": "savings, spending and bills"}]}).is_success
    added = client.post("/memories", json={"messages": [{"role": "user", "content": "I have a golden retriever"}],
                                           "user_id": "alice", "infer": False}).json()["results"][0]
    assert client.get(f"/memories/{added['id']}").json()["categories"] == ["pets"]
    assert client.put(f"/memories/{added['id']}", json={"text": "用户在攒钱买房"}).is_success
    assert client.get(f"/memories/{added['id']}").json()["categories"] == ["money"]
    own = client.post("/memories", json={"messages": [{"role": "user", "content": "I have a golden retriever"}],
                                         "user_id": "alice", "infer": False,
                                         "custom_categories": [{"dogs": "dogs"}]}).json()["results"][0]
    assert client.get(f"/memories/{own['id']}").json()["categories"] == ["dogs"]  # the add's own list wins
