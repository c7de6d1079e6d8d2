"""The tool definitions and the access rules, in process: the SDK's client connected straight to the server object."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client, MCPError

from jiyi import AsyncMemory, build_embedder, build_store
from jiyi.mcp import Caller, ToolNames, build_mcp_server, caller_for_principal
from jiyi.mcp.caller import READ_ONLY
from jiyi.mcp.handlers import HANDLERS
from jiyi.mcp.tools import MEM0_TOOL_NAMES, all_tools
from jiyi.server.auth import Principal
from tests.conftest import RunningServer
from tests.mcp.helpers import ok, over_http, refused

# mem0's MCP server (mem0-mcp-server 0.2.1 on PyPI, github.com/mem0ai/mem0-mcp): its tools and their arguments.
MEM0_ARGUMENTS = {
    "add_memory": ({"text", "messages", "user_id", "agent_id", "app_id", "run_id", "metadata", "enable_graph"},
                   ["text"]),
    "search_memories": ({"query", "filters", "limit", "enable_graph"}, ["query"]),
    "get_memories": ({"filters", "page", "page_size", "enable_graph"}, []),
    "get_memory": ({"memory_id"}, ["memory_id"]),
    "update_memory": ({"memory_id", "text"}, ["memory_id", "text"]),
    "delete_memory": ({"memory_id"}, ["memory_id"]),
    "delete_all_memories": ({"user_id", "agent_id", "app_id", "run_id"}, []),
    "list_entities": (set(), []),
    "delete_entities": ({"user_id", "agent_id", "app_id", "run_id"}, []),
}
WRITES = {"memory.add", "memory.update", "memory.forget", "memory.merge_entities", "memory.rename_entity",
          "memory.close_relation", "add_memory", "update_memory", "delete_memory",
          "delete_all_memories", "delete_entities"}


def memory_at(tmp_path: Path) -> AsyncMemory:
    return AsyncMemory(build_store(f"sqlite:///{tmp_path / 'm.db'}"), build_embedder("hashing"))


def test_every_tool_has_a_valid_schema_a_handler_and_a_name_every_client_takes() -> None:
    specs = all_tools()
    assert {spec.name for spec in specs} == set(HANDLERS)
    assert {spec.name for spec in specs if spec.writes} == WRITES
    for spec in specs:
        Draft202012Validator.check_schema(spec.input_schema)
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", spec.listed_name(ToolNames.UNDERSCORE))
        assert re.fullmatch(r"[A-Za-z0-9._-]{1,128}", spec.listed_name(ToolNames.DOTTED))  # the 2025-11-25 rule
    schemas = {spec.name: spec.input_schema for spec in specs}
    assert tuple(MEM0_ARGUMENTS) == MEM0_TOOL_NAMES
    for name, (arguments, required) in MEM0_ARGUMENTS.items():
        assert set(schemas[name]["properties"]) == arguments, name
        assert schemas[name].get("required", []) == required, name


def test_a_read_only_caller_reads_but_never_writes(tmp_path: Path) -> None:
    memory = memory_at(tmp_path)
    reader = caller_for_principal(Principal("user", "alice", scope="read"))
    assert reader == Caller("alice", None, may_write=False, project_id="user-alice")

    async def scenario() -> None:
        async with Client(build_mcp_server(memory, lambda ctx: Caller("alice"))) as writer:
            kept = await ok(writer, "memory_add", {"content": "用户喜欢喝乌龙茶"})
        async with Client(build_mcp_server(memory, lambda ctx: reader)) as client:
            attempts: list[tuple[str, dict[str, Any]]] = [
                ("memory_add", {"content": "x"}), ("memory_update", {"memory_id": kept["memory_id"], "content": "x"}),
                ("memory_forget", {"memory_id": kept["memory_id"]}), ("add_memory", {"text": "x"}),
                ("update_memory", {"memory_id": kept["memory_id"], "text": "x"}),
                ("delete_memory", {"memory_id": kept["memory_id"]}), ("delete_all_memories", {}),
                ("delete_entities", {"user_id": "alice"})]
            for tool, arguments in attempts:
                assert await refused(client, tool, arguments) == READ_ONLY, tool
            assert (await ok(client, "memory_search", {"query": "乌龙茶"}))["results"][0]["id"] == kept["memory_id"]
            assert (await ok(client, "get_memory", {"memory_id": kept["memory_id"]}))["memory"] == "用户喜欢喝乌龙茶"
            history = (await ok(client, "memory_history", {"memory_id": kept["memory_id"]}))["history"]
            assert history[0]["event"] == "ADD"

    asyncio.run(scenario())


def test_an_agent_key_is_held_to_its_agent(tmp_path: Path) -> None:
    memory = memory_at(tmp_path)
    coach = caller_for_principal(Principal("user", "alice", agent_id="coach"))
    assert coach == Caller("alice", "coach", project_id="user-alice")

    async def scenario() -> None:
        async with Client(build_mcp_server(memory, lambda ctx: Caller("alice"))) as owner:
            other = await ok(owner, "memory_add", {"content": "用户在学日语", "agent_id": "tutor"})
        async with Client(build_mcp_server(memory, lambda ctx: coach)) as client:
            mine = await ok(client, "memory_add", {"content": "用户每周跑步三次"})
            assert (await ok(client, "get_memory", {"memory_id": mine["memory_id"]}))["agent_id"] == "coach"
            assert "own agent" in await refused(client, "memory_search", {"query": "日语", "agent_id": "tutor"})
            assert "own agent" in await refused(client, "search_memories", {
                "query": "日语", "filters": {"agent_id": "tutor"}})
            assert "not found" in await refused(client, "get_memory", {"memory_id": other["memory_id"]})
            assert [hit["id"] for hit in (await ok(client, "memory_search", {"query": "日语 跑步"}))["results"]] == \
                [mine["memory_id"]]
            assert {(e["type"], e["name"]) for e in (await ok(client, "list_entities"))["results"]} == \
                {("user", "alice"), ("agent", "coach")}

    asyncio.run(scenario())


def test_arguments_are_checked_against_the_schema_without_echoing_them(tmp_path: Path) -> None:
    memory = memory_at(tmp_path)
    secret = "我的身份证号是 110101199001011234" * 5

    async def scenario() -> None:
        server = build_mcp_server(memory, lambda ctx: Caller("alice"), max_text_chars=100, max_query_chars=50)
        async with Client(server) as client:
            problem = await refused(client, "memory_add", {"content": secret, "importance": "high",
                                                           "memory_type": secret[:10]})
            assert secret[:10] not in problem
            assert "content must be at most 100 characters" in problem
            assert "importance must be of type number" in problem and "memory_type must be one of" in problem
            assert "query is a required property" in await refused(client, "memory_search", {})
            assert "must be at least 50" in await refused(client, "memory_get_context", {"max_tokens": 10})
            assert "as messages or as conversation" in await refused(client, "memory_get_context", {
                "conversation": "hi", "messages": [{"role": "user", "content": "hi"}]})
            with pytest.raises(MCPError, match="unknown tool"):
                await client.call_tool("memory_teleport", {})

    asyncio.run(scenario())


def test_a_managed_read_key_over_http(make_server: Callable[..., RunningServer], tmp_path: Path) -> None:
    """The same rules for keys issued with `jiyi keys create` (kept hashed in the store, with a scope)."""
    keys = pytest.importorskip("jiyi.keys")
    memory = memory_at(tmp_path)
    if not hasattr(memory.store, "add_api_key"):
        pytest.skip("this store keeps no API keys")
    reader, secret = keys.new_key("read", "alice")
    memory.store.add_api_key(reader)
    writer, writer_secret = keys.new_key("write", "alice")
    memory.store.add_api_key(writer)
    server = make_server(memory)

    async def scenario() -> None:
        async with over_http(server.url, writer_secret) as client:
            await ok(client, "memory_add", {"content": "用户喜欢喝乌龙茶"})
        async with over_http(server.url, secret) as client:
            assert await refused(client, "memory_add", {"content": "x"}) == READ_ONLY
            found = await ok(client, "memory_search", {"query": "乌龙茶"})
            assert found["results"][0]["memory"] == "用户喜欢喝乌龙茶"
            assert "own user" in await refused(client, "memory_list", {"user_id": "bob"})

    asyncio.run(scenario())
