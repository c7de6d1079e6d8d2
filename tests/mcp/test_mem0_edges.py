"""mem0's MCP tools, driven by the official MCP client over HTTP against a real server on each store, for what
issue 31 changed: deleting entities (mem0's reset done through the tools), the nested metadata filter, a text update
that keeps the memory's app, agent, run and metadata, mem0's categories (the project's own list, the
memory_categorize webhook) and image messages.

mem0's MCP server (mem0-mcp-server 0.2.1) has no tool for profiles or projects, and its update_memory takes a text
only: those items have no MCP counterpart (docs/rest-and-sdks.md, "Tested with mem0's clients")."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import httpx
import pytest

from jiyi import AsyncMemory, build_embedder
from jiyi.stores.base import MemoryStore
from tests.conftest import RunningServer
from tests.mcp.helpers import ok, over_http, refused
from tests.server.test_webhooks import FAST, Receiver

KEYS = {"mcp-key-of-alice-77d1": "alice", "mcp-key-of-bob-3e0a": "bob"}
ALICE, BOB = list(KEYS)
ADMIN = "mcp-admin-key-5b2c"


@pytest.fixture
def server(store: MemoryStore, make_server: Callable[..., RunningServer]) -> RunningServer:
    # private_urls: a user key's webhook may call the receiver on 127.0.0.1 (JIYI_WEBHOOK_ALLOW_PRIVATE_URLS)
    return make_server(AsyncMemory(store, build_embedder("hashing")), user_api_keys=KEYS, admin_api_key=ADMIN,
                       webhooks=replace(FAST, private_urls=True))


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    started = Receiver().start()
    yield started
    started.stop()


def entities(listed: dict[str, Any]) -> set[tuple[str, str]]:
    return {(e["type"], e["name"]) for e in listed["results"]}


# --- 1. deleting entities -----------------------------------------------------------------------------------------


def test_mem0s_reset_through_the_tools_deletes_every_listed_entity_and_says_what_went(server: RunningServer) -> None:
    """What mem0's reset() does, done by an agent with the tools: list the entities, delete each in turn. Deleting a
    user takes its agents and runs that had nothing else; deleting those next is no error, and says so."""
    async def scenario() -> None:
        async with over_http(server.url, ADMIN) as admin:
            await ok(admin, "add_memory", {"text": "I plan my week on Sundays", "user_id": "alice",
                                           "agent_id": "planner", "run_id": "r1"})
            await ok(admin, "add_memory", {"text": "I like jasmine tea", "user_id": "alice"})
            await ok(admin, "add_memory", {"text": "I plan trips in spring", "user_id": "bob", "agent_id": "planner"})
            listed = (await ok(admin, "list_entities"))["results"]
            assert {(e["type"], e["name"]) for e in listed} == {
                ("user", "alice"), ("user", "bob"), ("agent", "planner"), ("run", "r1")}
            answers = {}
            for entity in listed:  # in the order listed: users first, as mem0's reset() goes
                answers[entity["type"], entity["name"]] = await ok(admin, "delete_entities",
                                                                   {f"{entity['type']}_id": entity["name"]})
            assert answers["user", "alice"] == {
                "message": "Deleted user alice: 2 memories; run r1 had no other memories and went with it.",
                "deleted": {"memories": 2, "entities": [{"type": "user", "name": "alice"},
                                                        {"type": "run", "name": "r1"}]}}
            assert answers["user", "bob"]["deleted"] == {"memories": 1, "entities": [
                {"type": "user", "name": "bob"}, {"type": "agent", "name": "planner"}]}
            for emptied in (("agent", "planner"), ("run", "r1")):
                assert answers[emptied]["deleted"] == {"memories": 0, "entities": []}, emptied
                assert "nothing more to delete" in answers[emptied]["message"]
            assert (await ok(admin, "list_entities"))["results"] == []
            assert "agent never-was not found" in await refused(admin, "delete_entities", {"agent_id": "never-was"})

    asyncio.run(scenario())


def test_delete_entities_without_arguments_deletes_the_connections_user(server: RunningServer) -> None:
    async def scenario() -> None:
        async with over_http(server.url, BOB) as bob:
            await ok(bob, "add_memory", {"text": "I collect stamps", "agent_id": "helper"})
        async with over_http(server.url, ALICE) as alice:
            await ok(alice, "add_memory", {"text": "I work at a bank in Lyon", "agent_id": "helper", "run_id": "s1"})
            await ok(alice, "add_memory", {"text": "I cook on the river bank"})
            deleted = await ok(alice, "delete_entities", {})  # user_id: "default: the connection's user"
            # What alice's key sees went: her helper too (bob's helper memories are not hers to see, and stay).
            assert deleted["deleted"] == {"memories": 2, "entities": [
                {"type": "user", "name": "alice"}, {"type": "agent", "name": "helper"}, {"type": "run", "name": "s1"}]}
            assert (await ok(alice, "get_memories", {}))["count"] == 0
            assert (await ok(alice, "list_entities"))["results"] == []  # her agent and run went with her
        async with over_http(server.url, ADMIN) as admin:
            assert "not tied to one user" in await refused(admin, "delete_entities", {})
            listed = (await ok(admin, "list_entities"))["results"]
            assert [(e["type"], e["name"], e["total_memories"]) for e in listed] == [
                ("user", "bob", 1), ("agent", "helper", 1)]

    asyncio.run(scenario())


# --- 2. mem0's nested metadata filter -----------------------------------------------------------------------------


def test_search_and_get_memories_take_the_nested_metadata_filter(server: RunningServer) -> None:
    async def scenario() -> None:
        async with over_http(server.url, ALICE) as alice:
            ids = {}
            for text, topic in (("I work at a bank in Lyon", "work"), ("I cook on the river bank", "food")):
                added = await ok(alice, "add_memory", {"text": text, "messages": [{"role": "user", "content": text}],
                                                       "metadata": {"topic": topic}})
                [ids[topic]] = [item["id"] for item in added["results"]]
            found = await ok(alice, "search_memories", {"query": "bank", "filters": {"metadata": {"topic": "work"}}})
            assert [item["id"] for item in found["results"]] == [ids["work"]]
            listed = await ok(alice, "get_memories", {"filters": {"metadata": {"topic": {"in": ["food", "x"]}}}})
            assert [item["id"] for item in listed["results"]] == [ids["food"]]
            mixed = await refused(alice, "get_memories", {"filters": {"metadata": {"topic": "work", "eq": 1}}})
            assert "mixes operators" in mixed

    asyncio.run(scenario())


# --- 3. an update changes what it names, nothing else ---------------------------------------------------------------


def test_a_text_update_keeps_the_app_agent_run_and_metadata(server: RunningServer) -> None:
    """mem0's update_memory (and jiyi's memory_update) change a text only: the memory's app_id, agent, run and
    metadata stay as they were."""
    kept = {"user_id": "alice", "agent_id": "planner", "run_id": "r1", "metadata": {"topic": "work",
                                                                                     "app_id": "myapp"}}

    async def scenario() -> None:
        async with over_http(server.url, ALICE) as alice:
            [added] = (await ok(alice, "add_memory", {"text": "I work at a bank", "agent_id": "planner",
                                                      "run_id": "r1", "app_id": "myapp",
                                                      "metadata": {"topic": "work"}}))["results"]
            memory_id = added["id"]
            await ok(alice, "update_memory", {"memory_id": memory_id, "text": "I work at an insurer"})
            got = await ok(alice, "get_memory", {"memory_id": memory_id})
            assert got["memory"] == "I work at an insurer"
            assert {key: got[key] for key in kept} == kept
            await ok(alice, "memory_update", {"memory_id": memory_id, "content": "I work at a museum"})
            got = await ok(alice, "get_memory", {"memory_id": memory_id})
            assert got["memory"] == "I work at a museum" and {key: got[key] for key in kept} == kept
            in_app = await ok(alice, "get_memories", {"filters": {"app_id": "myapp"}})
            assert [item["id"] for item in in_app["results"]] == [memory_id]

    asyncio.run(scenario())


# --- 5. mem0's categories -----------------------------------------------------------------------------------------


def test_memories_carry_mem0s_categories_the_projects_own_list_and_a_categorize_webhook(
        server: RunningServer, receiver: Receiver) -> None:
    project = "/api/v1/orgs/organizations/jiyi/projects/user-alice/"  # alice's key is a project of one user
    own_list = [{"pets": "the user's pets"}, {"work": "job, employer and colleagues"}]
    ids: dict[str, str] = {}

    async def scenario() -> None:
        async with over_http(server.url, ALICE) as alice:
            [food] = (await ok(alice, "add_memory", {"text": "User loves spicy Sichuan food"}))["results"]
            assert (await ok(alice, "get_memory", {"memory_id": food["id"]}))["categories"] == \
                ["food", "user_preferences"]  # mem0's default list

            with httpx.Client(base_url=server.url, headers={"Authorization": f"Token {ALICE}"}, timeout=30) as http:
                http.patch(project, json={"custom_categories": own_list}).raise_for_status()
                hook = http.post("/api/v1/webhooks/projects/user-alice/", json={
                    "url": receiver.url, "name": "categories", "event_types": ["memory_categorize"]})
                assert hook.status_code == 201, hook.text

            [dog] = (await ok(alice, "add_memory", {"text": "User has a golden retriever named Max"}))["results"]
            ids.update(food=food["id"], dog=dog["id"])
            assert (await ok(alice, "get_memory", {"memory_id": dog["id"]}))["categories"] == ["pets"]
            await ok(alice, "update_memory", {"memory_id": food["id"], "text": "用户在银行上班"})
            assert (await ok(alice, "get_memory", {"memory_id": food["id"]}))["categories"] == ["work"]

            found = await ok(alice, "search_memories", {"query": "what do I know", "filters": {
                "categories": {"in": ["pets"]}}})
            assert [(hit["id"], hit["categories"]) for hit in found["results"]] == [(dog["id"], ["pets"])]
            listed = await ok(alice, "get_memories", {"filters": {"AND": [{"categories": {"in": ["work"]}}]}})
            assert [item["id"] for item in listed["results"]] == [food["id"]]

    asyncio.run(scenario())
    receiver.wait_for(2)
    time.sleep(0.3)  # an event for the food memory's add (made before the webhook) would arrive now
    assert [(body["event_type"], body["event_details"]["id"], body["event_details"]["data"]["categories"])
            for body in receiver.bodies()] == [("memory_categorize", ids["dog"], ["pets"]),
                                               ("memory_categorize", ids["food"], ["work"])]


# --- 6. image messages --------------------------------------------------------------------------------------------


def test_an_image_message_is_refused_in_one_sentence_naming_the_field(server: RunningServer) -> None:
    """mem0's MCP server types a message's content as a string (list[dict[str, str]]), so an image part is not an
    argument the tool takes: refused in one sentence that names the field and quotes nothing of it."""
    image = {"type": "image_url", "image_url": {"url": "https://example.com/mochi.png"}, "caption": "my cat Mochi"}

    async def scenario() -> None:
        async with over_http(server.url, ALICE) as alice:
            said = await refused(alice, "add_memory", {"text": "my cat", "messages": [
                {"role": "user", "content": "look"}, {"role": "user", "content": image}]})
            assert said == "add_memory: messages[1].content must be of type string"
            assert (await ok(alice, "get_memories", {}))["count"] == 0  # nothing of the turn was kept

    asyncio.run(scenario())
