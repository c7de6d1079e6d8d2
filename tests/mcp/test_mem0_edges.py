"""mem0's MCP tools, driven by the official MCP client over HTTP, where mem0's own server would have behaved
otherwise (issue 31): the nested metadata filter, and delete_entities defaulting to the connection's user."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from jiyi import AsyncMemory, build_embedder, build_store
from tests.conftest import RunningServer
from tests.mcp.helpers import ok, over_http, refused

KEYS = {"mcp-key-of-alice-77d1": "alice", "mcp-key-of-bob-3e0a": "bob"}
ALICE, BOB = list(KEYS)
ADMIN = "mcp-admin-key-5b2c"


def server_at(make_server: Callable[..., RunningServer], tmp_path: Path) -> RunningServer:
    memory = AsyncMemory(build_store(f"sqlite:///{tmp_path / 'm.db'}"), build_embedder("hashing"))
    return make_server(memory, user_api_keys=KEYS, admin_api_key=ADMIN)


def test_search_and_get_memories_take_the_nested_metadata_filter(make_server: Callable[..., RunningServer],
                                                                  tmp_path: Path) -> None:
    server = server_at(make_server, tmp_path)

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


def test_delete_entities_without_arguments_deletes_the_connections_user(make_server: Callable[..., RunningServer],
                                                                         tmp_path: Path) -> None:
    server = server_at(make_server, tmp_path)

    async def scenario() -> None:
        async with over_http(server.url, BOB) as bob:
            await ok(bob, "add_memory", {"text": "I collect stamps", "agent_id": "helper"})
        async with over_http(server.url, ALICE) as alice:
            await ok(alice, "add_memory", {"text": "I work at a bank in Lyon", "agent_id": "helper", "run_id": "s1"})
            await ok(alice, "add_memory", {"text": "I cook on the river bank"})
            await ok(alice, "delete_entities", {})  # user_id: "default: the connection's user"
            assert (await ok(alice, "get_memories", {}))["count"] == 0
            assert (await ok(alice, "list_entities"))["results"] == []  # her agent and run went with her
        async with over_http(server.url, ADMIN) as admin:
            assert "not tied to one user" in await refused(admin, "delete_entities", {})
            entities = (await ok(admin, "list_entities"))["results"]
            assert [(e["type"], e["name"], e["total_memories"]) for e in entities] == [
                ("user", "bob", 1), ("agent", "helper", 1)]

    asyncio.run(scenario())
