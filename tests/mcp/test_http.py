"""/mcp on a real jiyi server, driven by the SDK's streamable HTTP client: whose memory is the key's, as on every
REST route; a bad key is a 401 before any MCP exchange; keys never reach the logs."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import MCPError
from prometheus_client.parser import text_string_to_metric_families

from jiyi import AsyncMemory, build_embedder, build_store
from jiyi.records import Category, Layer
from tests.conftest import RunningServer
from tests.mcp.helpers import JIYI_TOOLS, MEM0_TOOLS, ok, over_http, refused

KEYS = {"mcp-key-of-alice-5f0c2e": "alice", "mcp-key-of-bob-9a41d7": "bob"}
ALICE, BOB = list(KEYS)
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "curl", "version": "1"}}}
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def memory_at(path: Path) -> AsyncMemory:
    return AsyncMemory(build_store(f"sqlite:///{path}"), build_embedder("hashing"))


def test_the_keys_user_gets_every_tool(make_server: Callable[..., RunningServer], tmp_path: Path) -> None:
    memory = memory_at(tmp_path / "m.db")
    server = make_server(memory, user_api_keys=KEYS)

    async def scenario() -> None:
        async with over_http(server.url, ALICE) as alice:
            tools = (await alice.list_tools()).tools
            assert {tool.name for tool in tools} == JIYI_TOOLS | MEM0_TOOLS
            assert all(tool.input_schema.get("properties") is not None for tool in tools)
            name = await ok(alice, "memory_add", {"content": "用户叫林晓", "importance": 1})
            allergy = await ok(alice, "memory_add", {"content": "用户对海鲜过敏", "memory_type": "fact"})
            walk = await ok(alice, "memory_add", {"content": "用户周末常去爬山", "memory_type": "preference"})
            core = memory.store.get(name["memory_id"])
            assert core is not None and core.scope.user_id == "alice" and core.importance == 1
            core.category, core.layer = Category.CORE, Layer.LONG_TERM  # as the lifecycle promotes a stable fact
            memory.store.update(core, None, None)

            context = await ok(alice, "memory_get_context", {
                "messages": [{"role": "system", "content": "你是小林的朋友"},
                             {"role": "user", "content": "晚饭推荐点什么？"}], "max_tokens": 300})
            lines = context["context"].splitlines()
            assert lines[:2] == ["User profile (core memories):", "- 用户叫林晓"]  # the profile, whatever the topic
            assert "- 用户对海鲜过敏" in lines[lines.index("Relevant to this conversation:"):]
            tight = await ok(alice, "memory_get_context", {"messages": [{"role": "user", "content": "晚饭推荐？"}],
                                                           "max_tokens": 50})
            assert tight["context"].splitlines()[:2] == lines[:2] and tight["estimated_tokens"] <= 50

            assert (await ok(alice, "memory_search", {"query": "爬山"}))["results"][0]["id"] == walk["memory_id"]
            await ok(alice, "memory_update", {"memory_id": walk["memory_id"], "content": "用户周末常去骑车"})
            await ok(alice, "memory_forget", {"memory_id": allergy["memory_id"], "reason": "记错了，用户不过敏"})
            listed = await ok(alice, "memory_list", {})
            assert {m["memory"] for m in listed["results"]} == {"用户叫林晓", "用户周末常去骑车"}
            history = (await ok(alice, "memory_history", {"memory_id": allergy["memory_id"]}))["history"]
            assert (history[-1]["event"], history[-1]["reason"]) == ("DELETE", "记错了，用户不过敏")

            added = await ok(alice, "add_memory", {"text": "我下个月去成都出差"})
            fact_id = added["results"][0]["id"]
            assert (await ok(alice, "search_memories", {"query": "成都"}))["results"][0]["id"] == fact_id
            assert (await ok(alice, "get_memories", {}))["count"] == 3
            assert (await ok(alice, "get_memory", {"memory_id": fact_id}))["user_id"] == "alice"
            await ok(alice, "update_memory", {"memory_id": fact_id, "text": "用户下个月去重庆出差"})
            await ok(alice, "delete_memory", {"memory_id": fact_id})
            assert [e["name"] for e in (await ok(alice, "list_entities"))["results"]] == ["alice"]
        async with over_http(server.url, ALICE, header="X-API-Key") as alice:  # the other way to present a key
            assert (await ok(alice, "memory_list", {}))["count"] == 2

    asyncio.run(scenario())


def test_one_key_never_reaches_another_users_memory(make_server: Callable[..., RunningServer], tmp_path: Path,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    server = make_server(memory_at(tmp_path / "m.db"), user_api_keys=KEYS)

    async def scenario() -> None:
        async with over_http(server.url, ALICE) as alice:
            secret = (await ok(alice, "memory_add", {"content": "用户的银行卡密码是 314159"}))["memory_id"]
        async with over_http(server.url, BOB) as bob:
            by_id: list[tuple[str, dict[str, Any]]] = [
                ("memory_update", {"content": "改了"}), ("memory_forget", {"reason": "x"}), ("memory_history", {}),
                ("get_memory", {}), ("update_memory", {"text": "改了"}), ("delete_memory", {})]
            for tool, arguments in by_id:
                assert "not found" in await refused(bob, tool, {"memory_id": secret, **arguments}), tool
            naming_alice: list[tuple[str, dict[str, Any]]] = [
                ("memory_search", {"query": "密码", "user_id": "alice"}), ("memory_list", {"user_id": "alice"}),
                ("memory_add", {"content": "x", "user_id": "alice"}),
                ("memory_get_context", {"conversation": "密码", "user_id": "alice"}),
                ("add_memory", {"text": "x", "user_id": "alice"}), ("delete_all_memories", {"user_id": "alice"}),
                ("delete_entities", {"user_id": "alice"}),
                ("search_memories", {"query": "密码", "filters": {"user_id": "alice"}}),
                ("search_memories", {"query": "密码", "filters": {"AND": [{"user_id": "alice"}]}}),
                ("search_memories", {"query": "密码", "filters": {"user_id": {"in": ["alice", "bob"]}}}),
                ("get_memories", {"filters": {"user_id": {"eq": "alice"}}})]
            for tool, arguments in naming_alice:
                assert "own user" in await refused(bob, tool, arguments), (tool, arguments)
            for tool, arguments in [("memory_search", {"query": "银行卡密码"}), ("search_memories", {"query": "密码"})]:
                assert (await ok(bob, tool, arguments))["results"] == []
            assert (await ok(bob, "memory_get_context", {"conversation": "银行卡密码是多少"}))["context"] == ""
            assert (await ok(bob, "list_entities"))["results"] == []
            await ok(bob, "delete_all_memories")
        async with over_http(server.url, ALICE) as alice:
            history = (await ok(alice, "memory_history", {"memory_id": secret}))["history"]
            assert [row["event"] for row in history] == ["ADD"]  # nothing bob tried changed it

    asyncio.run(scenario())
    for key in KEYS:
        assert key not in caplog.text
    assert "mcp" in caplog.text.lower()  # the capture did see the server's records


def test_a_bad_or_missing_key_is_a_401_before_any_mcp_exchange(
        make_server: Callable[..., RunningServer], tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    server = make_server(memory_at(tmp_path / "m.db"), user_api_keys=KEYS)
    wrong = "mcp-wrong-key-77e1b0"
    answers = [httpx.post(f"{server.url}/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **headers})
               for headers in ({"authorization": f"Bearer {wrong}"}, {"x-api-key": wrong}, {})]
    assert [a.status_code for a in answers] == [401, 401, 401]
    assert answers[0].json() == {"detail": "unknown API key"}
    assert "mcp-session-id" not in answers[0].headers and "jsonrpc" not in answers[0].text
    assert all(wrong not in a.text + str(a.headers) for a in answers)

    async def scenario() -> None:
        with pytest.raises(Exception) as refused_client:  # the SDK's client gives up at once
            async with over_http(server.url, wrong) as client:
                await client.list_tools()
        assert refused_client.group_contains(MCPError, depth=None) if isinstance(refused_client.value,
                                                                                 BaseExceptionGroup) \
            else isinstance(refused_client.value, MCPError)

    asyncio.run(scenario())
    good = httpx.post(f"{server.url}/mcp", json=INITIALIZE, headers={**MCP_HEADERS, "x-api-key": ALICE})
    assert good.status_code == 200 and good.json()["result"]["serverInfo"]["name"] == "jiyi"
    assert httpx.get(f"{server.url}/mcp", headers={"x-api-key": ALICE}).status_code == 405  # no server stream
    assert wrong not in caplog.text and ALICE not in caplog.text


def test_without_user_keys_the_tools_need_the_user_named(make_server: Callable[..., RunningServer],
                                                         tmp_path: Path) -> None:
    admin = "mcp-admin-key-1c9e"
    server = make_server(memory_at(tmp_path / "m.db"), admin_api_key=admin, mcp_tool_names="dotted")

    async def scenario() -> None:
        async with over_http(server.url, admin) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert "memory.add" in names and "memory_add" not in names  # the server's option
            assert "user_id is required" in await refused(client, "memory.add", {"content": "用户喜欢猫"})
            added = await ok(client, "memory.add", {"content": "用户喜欢猫", "user_id": "carol"})
            assert (await ok(client, "memory.search", {"query": "猫", "user_id": "carol"}))["results"][0]["id"] == \
                added["memory_id"]
            found = await ok(client, "search_memories", {"query": "猫", "filters": {"user_id": "carol"}})
            assert found["results"][0]["user_id"] == "carol"
            assert "at least one of user_id" in await refused(client, "search_memories", {"query": "猫"})
            entities = (await ok(client, "list_entities"))["results"]
            assert [e["name"] for e in entities] == ["carol"]
        async with over_http(server.url) as anonymous:  # no user keys: open, like every memory route
            assert (await ok(anonymous, "memory_list", {"user_id": "carol"}))["count"] == 1

    asyncio.run(scenario())


def test_the_mcp_endpoint_stays_out_of_the_openapi_document(make_server: Callable[..., RunningServer]) -> None:
    spec = httpx.get(make_server().url + "/openapi.json").json()
    assert not any(path.startswith("/mcp") for path in spec["paths"])


def test_changes_made_through_mcp_are_counted_like_the_rest_routes(make_server: Callable[..., RunningServer],
                                                                  tmp_path: Path) -> None:
    server = make_server(memory_at(tmp_path / "m.db"))

    def counters() -> dict[tuple[str, str], float]:
        return {(s.name, s.labels.get("memory_type", "")): s.value
                for family in text_string_to_metric_families(httpx.get(f"{server.url}/metrics").text)
                for s in family.samples
                if s.name in ("memory_add_total", "memory_update_total", "memory_delete_total")}

    before = counters()
    expected: dict[tuple[str, str], float] = {("memory_add_total", "preference"): 1, ("memory_add_total", "fact"): 1,
                                              ("memory_update_total", ""): 2, ("memory_delete_total", ""): 1}

    async def scenario() -> None:
        async with over_http(server.url) as client:
            cat = await ok(client, "memory_add", {"content": "用户喜欢猫", "memory_type": "preference",
                                                 "user_id": "carol"})
            await ok(client, "memory_add", {"content": "用户住在成都", "memory_type": "fact", "user_id": "carol"})
            await ok(client, "memory_update", {"memory_id": cat["memory_id"], "content": "用户喜欢狗"})
            await ok(client, "memory_forget", {"memory_id": cat["memory_id"]})
            added = await ok(client, "add_memory", {"text": "I live in Lyon", "user_id": "dave"})
            assert [r["event"] for r in added["results"]] == ["ADD"]
            key = ("memory_add_total", added["results"][0]["memory_type"])
            expected[key] = expected.get(key, 0) + 1
            await ok(client, "update_memory", {"memory_id": added["results"][0]["id"], "text": "I live in Nice"})
            await ok(client, "memory_search", {"query": "猫", "user_id": "carol"})  # reads change nothing

    asyncio.run(scenario())
    after = counters()
    changed = {key: after[key] - before.get(key, 0) for key in after if after[key] != before.get(key, 0)}
    assert changed == expected
