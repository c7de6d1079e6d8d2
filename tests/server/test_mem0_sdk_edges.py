"""mem0's Python SDK (mem0ai 2.2.1, unchanged) against a real jiyi server, where a new user of it used to trip
(issue 31): reset() with agents and runs, the nested metadata filter, a metadata update, project administration,
image messages and 422 answers."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import Any

import httpx
import pytest

os.environ["MEM0_TELEMETRY"] = "False"  # read when mem0 is imported: the SDK must not call PostHog from tests

from mem0 import AsyncMemoryClient, MemoryClient
from mem0.exceptions import MemoryError, MemoryNotFoundError, ValidationError
from tests.conftest import RunningServer

from jiyi import AsyncMemory, build_embedder
from jiyi.server.platform import NO_PROJECTS
from jiyi.stores.base import MemoryStore

KEYS = {"key-alice": "alice", "key-bob": "bob"}
ADMIN = "admin-secret"
CAT = "https://example.com/mochi.png"


def texts(page: dict[str, Any]) -> set[str]:
    return {item["memory"] for item in page["results"]}


def entity_names(client: MemoryClient) -> set[tuple[str, str]]:
    return {(e["type"], e["name"]) for e in client.users()["results"]}


# --- 1. reset() and delete_users() ------------------------------------------------------------------------------


def test_reset_deletes_everything_whatever_agents_and_runs_users_have(server: RunningServer) -> None:
    client = MemoryClient(api_key="k", host=server.url)
    client.add("I plan my week on Sundays", user_id="alice", agent_id="planner", run_id="r1", infer=False)
    client.add("I like jasmine tea", user_id="alice", infer=False)
    client.add("I plan trips in spring", user_id="bob", agent_id="planner", infer=False)  # the agent is shared
    client.add("a note of the run only", run_id="r2", infer=False)
    assert entity_names(client) == {("user", "alice"), ("user", "bob"), ("agent", "planner"), ("run", "r1"),
                                    ("run", "r2")}

    assert client.reset() == {"message": "Client reset successful. All users and memories deleted."}
    assert client.users()["results"] == []
    assert client.get_all()["count"] == 0  # an open server: everyone's memories, none left


def test_deleting_a_user_says_what_went_with_it_and_its_emptied_agents_are_no_error(server: RunningServer) -> None:
    client = MemoryClient(api_key="k", host=server.url)
    client.add("I plan my week on Sundays", user_id="alice", agent_id="planner", run_id="r1", infer=False)
    client.add("I like jasmine tea", user_id="alice", infer=False)
    client.add("I plan trips in spring", user_id="bob", agent_id="planner", infer=False)
    with httpx.Client(base_url=server.url, timeout=30) as http:
        alice = http.delete("/v2/entities/user/alice/").json()
        assert alice == {"message": "Deleted user alice: 2 memories; run r1 had no other memories and went with it.",
                         "deleted": {"memories": 2, "entities": [{"type": "user", "name": "alice"},
                                                                 {"type": "run", "name": "r1"}]}}
        again = http.delete("/v2/entities/run/r1/")  # what the SDK does next: r1 was listed before the delete
        assert again.status_code == 200
        assert again.json()["deleted"] == {"memories": 0, "entities": []}
        assert "nothing more to delete" in again.json()["message"]
    assert entity_names(client) == {("user", "bob"), ("agent", "planner")}  # bob's planner stays
    client.delete_users(agent_id="planner")
    assert client.users()["results"] == []
    with pytest.raises(MemoryNotFoundError, match="agent never-was not found"):
        client.delete_users(agent_id="never-was")  # a name that never had memories is still not found


def test_a_user_keys_reset_deletes_only_its_own_user(make_server: Callable[..., RunningServer]) -> None:
    server = make_server(user_api_keys=KEYS, admin_api_key=ADMIN)
    alice = MemoryClient(api_key="key-alice", host=server.url)
    bob = MemoryClient(api_key="key-bob", host=server.url)
    alice.add("I keep a bonsai", agent_id="gardener", run_id="g1", infer=False)
    alice.add("I water it on Mondays", run_id="g1", infer=False)
    bob.add("I collect stamps", agent_id="gardener", infer=False)

    alice.reset()
    assert alice.users()["results"] == [] and alice.get_all()["count"] == 0
    assert texts(bob.get_all()) == {"I collect stamps"}
    assert entity_names(bob) == {("user", "bob"), ("agent", "gardener")}

    async def the_async_client() -> None:
        client = AsyncMemoryClient(api_key="key-bob", host=server.url)
        await client.reset()
        assert (await client.users())["results"] == []

    asyncio.run(the_async_client())


# --- 2. mem0's nested metadata filter, on both stores ------------------------------------------------------------


def test_the_nested_metadata_filter_works_on_every_route_that_takes_filters(
        store: MemoryStore, make_server: Callable[..., RunningServer]) -> None:
    server = make_server(AsyncMemory(store, build_embedder("hashing")))
    client = MemoryClient(api_key="k", host=server.url)
    client.add("I work at a bank in Lyon", user_id="alice", metadata={"topic": "work", "hours": 40}, infer=False)
    client.add("I like the bank of the river Saone", user_id="alice", metadata={"topic": "travel"}, infer=False)
    client.add("I cook on the river bank", user_id="alice", metadata={"topic": "food"}, infer=False)
    work, travel, food = "I work at a bank in Lyon", "I like the bank of the river Saone", "I cook on the river bank"

    def searched(filters: dict[str, Any]) -> set[str]:
        return texts(client.search("bank", filters={"user_id": "alice", **filters}))

    assert searched({"metadata": {"topic": "work"}}) == {work}
    assert searched({"metadata": {"topic": {"in": ["work", "travel"]}}}) == {work, travel}
    assert searched({"metadata": {"topic": {"ne": "work"}, "hours": "*"}}) == set()
    assert searched({"metadata": {"hours": {"gte": 40}}}) == {work}
    assert texts(client.search("bank", filters={"AND": [{"user_id": "alice"}, {"metadata": {"topic": "food"}}]})) \
        == {food}
    assert texts(client.get_all(filters={"user_id": "alice", "metadata": {"topic": {"nin": ["work"]}}})) == \
        {travel, food}

    nested = {"metadata": {"topic": {"in": ["travel"]}}}
    with httpx.Client(base_url=server.url, timeout=30) as http:
        answers = {
            "/search (v1 body)": http.post("/search", json={"query": "bank", "user_id": "alice", "filters": nested}),
            "/search (v2 body)": http.post("/search", json={"query": "bank",
                                                            "filters": {"user_id": "alice", **nested}}),
            "/v1/memories/search/": http.post("/v1/memories/search/", json={"query": "bank", "user_id": "alice",
                                                                            "filters": nested}),
            "/v2/memories/search/": http.post("/v2/memories/search/", json={"query": "bank",
                                                                            "filters": {"user_id": "alice",
                                                                                        **nested}}),
            "/v2/memories/": http.post("/v2/memories/", json={"filters": {"user_id": "alice", **nested}}),
        }
        for route, answer in answers.items():
            assert answer.status_code == 200, (route, answer.text)
            assert texts(answer.json()) == {travel}, route
        context = http.post("/context", json={"messages": [{"role": "user", "content": "tell me about the bank"}],
                                              "user_id": "alice", "filters": nested, "min_relevance": 0})
        assert {item["memory"] for item in context.json()["memories"]} == {travel}


# --- 3. a metadata update changes metadata only -------------------------------------------------------------------


def test_a_metadata_update_keeps_app_agent_and_run(server: RunningServer) -> None:
    client = MemoryClient(api_key="k", host=server.url)
    [added] = client.add("I work at a bank", user_id="alice", agent_id="planner", run_id="r1", app_id="myapp",
                         metadata={"topic": "work"}, infer=False)["results"]
    ids = {"user_id": "alice", "agent_id": "planner", "run_id": "r1", "app_id": "myapp"}

    updated = client.update(added["id"], metadata={"topic": "job", "since": 2021})
    assert {key: updated[key] for key in ids} == ids
    assert updated["metadata"] == {"topic": "job", "since": 2021, "app_id": "myapp"}
    client.batch_update([{"memory_id": added["id"], "metadata": {"topic": "career"}}])
    got = client.get(added["id"])
    assert {key: got[key] for key in ids} == ids
    assert got["metadata"] == {"topic": "career", "app_id": "myapp"}
    assert got["memory"] == "I work at a bank"  # the text was not touched either
    in_app = client.get_all(filters={"AND": [{"user_id": "alice"}, {"app_id": "myapp"}]})
    assert [item["id"] for item in in_app["results"]] == [added["id"]]


# --- 4. project administration: a 501 that says why ---------------------------------------------------------------


def test_project_administration_is_a_501_whose_sentence_the_sdk_shows(server: RunningServer) -> None:
    client = MemoryClient(api_key="k", host=server.url)
    calls = {
        "project.create": lambda: client.project.create("second project", description="x"),
        "project.delete": lambda: client.project.delete(),
        "project.get_members": lambda: client.project.get_members(),
        "project.add_member": lambda: client.project.add_member("lin@example.com", role="READER"),
        "project.update_member": lambda: client.project.update_member("lin@example.com", role="OWNER"),
        "project.remove_member": lambda: client.project.remove_member("lin@example.com"),
    }
    for name, call in calls.items():
        with pytest.raises(MemoryError) as refused:
            call()
        error = refused.value
        assert type(error) is MemoryError, name  # not MemoryNotFoundError: nothing is missing
        assert (str(error), error.error_code) == (NO_PROJECTS, "HTTP_501"), name
    assert NO_PROJECTS.startswith("a single-tenant jiyi server has no projects")
    assert client.project.get()["id"] == "default"  # the project the key is stays readable

    async def the_async_client() -> None:
        async_client = AsyncMemoryClient(api_key="k", host=server.url)
        with pytest.raises(MemoryError, match="single-tenant"):
            await async_client.project.create("another")

    asyncio.run(the_async_client())


# --- 6. image messages, strings, and every 422 a plain sentence ----------------------------------------------------


def test_an_image_is_kept_by_its_caption_or_text_and_refused_plainly_without(server: RunningServer) -> None:
    client = MemoryClient(api_key="k", host=server.url)
    image = {"type": "image_url", "image_url": {"url": CAT}}
    with pytest.raises(ValidationError) as refused:
        client.add({"role": "user", "content": image}, user_id="alice", infer=False)
    message = str(refused.value)
    assert message.startswith("messages[0].content is an image (image_url) with no text"), message
    assert '"caption"' in message and "{'loc'" not in message

    captioned = client.add({"role": "user", "content": {**image, "caption": "my cat Mochi asleep on the sofa"}},
                           user_id="alice", infer=False)
    beside_text = client.add([{"role": "user", "content": [{"type": "text", "text": "This is my cat Mochi"}, image]}],
                             user_id="alice", infer=False)
    assert [r["memory"] for r in captioned["results"] + beside_text["results"]] == [
        "my cat Mochi asleep on the sofa", "This is my cat Mochi"]
    with pytest.raises(ValidationError, match=r"a PDF \(pdf_url\) with no text"):
        client.add([{"role": "user", "content": {"type": "pdf_url", "pdf_url": {"url": "https://example.com/a.pdf"}}}],
                   user_id="alice", infer=False)
    inferred = client.add({"role": "user", "content": {**image, "caption": "I adopted a cat called Mochi"}},
                          user_id="alice", async_mode=False)
    assert [r["event"] for r in inferred["results"]] == ["ADD"]


def test_every_422_is_one_sentence_naming_the_field(server: RunningServer) -> None:
    client = MemoryClient(api_key="k", host=server.url)
    refusals = {
        "messages[0].content is required": lambda: client.add([{"role": "user"}], user_id="alice"),
        "messages[0].content must be a string, an object or a list":
            lambda: client.add([{"role": "user", "content": 7}], user_id="alice"),
        "top_k must be greater than or equal to 1": lambda: client.search("tea", filters={"user_id": "a"}, top_k=0),
        "threshold must be less than or equal to 1":
            lambda: client.search("tea", filters={"user_id": "a"}, threshold=3),
        "filters must be an object": lambda: client.get_all(filters=["user_id", "a"]),
        "memories must not be empty": lambda: client.batch_update([]),
    }
    for sentence, call in refusals.items():
        with pytest.raises(ValidationError) as refused:
            call()
        assert (str(refused.value), refused.value.error_code) == (sentence, "HTTP_422")

    with httpx.Client(base_url=server.url, timeout=30) as http:
        said = http.post("/memories", json={"messages": "I live in Lyon", "user_id": "alice", "infer": False})
        assert [r["memory"] for r in said.json()["results"]] == ["I live in Lyon"]  # a string: one user message
        empty = http.post("/memories", json={"messages": "", "user_id": "alice"})
        listed = http.get("/memories", params={"user_id": "alice", "top_k": "many"})
        body = http.post("/search", json=["query", "tea"])
    assert (empty.status_code, empty.json()) == (422, {"detail": "messages must not be empty"})
    assert (listed.status_code, listed.json()) == (422, {"detail": "query parameter top_k must be an integer"})
    assert (body.status_code, body.json()) == (422, {"detail": "the request body must be an object"})
