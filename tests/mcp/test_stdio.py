"""`jiyi mcp --user-id alice` as a desktop client runs it: a subprocess spoken to over stdio by the SDK's client."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from mcp import Client

from tests.mcp.helpers import JIYI_TOOLS, MEM0_TOOLS, jiyi_mcp, ok, refused


def test_lists_both_tool_sets_with_schemas_and_bilingual_descriptions(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Client(jiyi_mcp(tmp_path / "m.db", "--user-id", "alice")) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(tools) == JIYI_TOOLS | MEM0_TOOLS
            for tool in tools.values():
                assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", tool.name)  # what Claude Desktop and OpenAI accept
                assert tool.input_schema["type"] == "object" and tool.description
            for name in JIYI_TOOLS:
                description = tools[name].description or ""
                assert re.search(r"[\u4e00-\u9fff]", description), name  # Chinese usage
                assert re.search(r"[A-Za-z]{4} ", description) and "{\"" in description  # English, JSON examples
            add = tools["memory_add"].input_schema["properties"]
            assert add["importance"] == {**add["importance"], "type": "number", "minimum": 0, "maximum": 1}
            assert add["memory_type"]["enum"] == ["fact", "preference", "episodic", "semantic", "procedural"]
            assert "memory_search" in (tools["memory_update"].description or "")  # names the listed tools
            forget, search = tools["memory_forget"].annotations, tools["memory_search"].annotations
            assert forget is not None and forget.destructive_hint and search is not None and search.read_only_hint
        async with Client(jiyi_mcp(tmp_path / "m.db", "--user-id", "alice", "--tool-names", "dotted")) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert names == {name.replace("memory_", "memory.") for name in JIYI_TOOLS} | MEM0_TOOLS
            # Either spelling is answered (Cursor calls memory_add for a listed memory.add).
            assert (await ok(client, "memory_add", {"content": "用户喜欢爬山"}))["memory"] == "用户喜欢爬山"
            assert (await ok(client, "memory.search", {"query": "爬山"}))["results"][0]["memory"] == "用户喜欢爬山"

    asyncio.run(scenario())


def test_jiyi_tools_add_search_context_update_forget_list_history(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Client(jiyi_mcp(tmp_path / "m.db", "--user-id", "alice")) as client:
            allergy = await ok(client, "memory_add", {"content": "用户对海鲜过敏", "memory_type": "fact",
                                                      "importance": 0.9})
            city = await ok(client, "memory_add", {"content": "User lives in Shanghai"})
            assert allergy["memory_type"] == "fact" and city["memory_type"] == "episodic"

            found = await ok(client, "memory_search", {"query": "海鲜", "top_k": 3})
            assert found["results"][0]["id"] == allergy["memory_id"]
            assert {"id", "memory", "score", "memory_type"} <= set(found["results"][0])
            only_facts = await ok(client, "memory_search", {"query": "Shanghai", "memory_types": ["fact"]})
            assert city["memory_id"] not in [hit["id"] for hit in only_facts["results"]]

            context = await ok(client, "memory_get_context", {
                "messages": [{"role": "user", "content": "晚饭推荐点什么？我想吃海鲜"}], "max_tokens": 200})
            assert "- 用户对海鲜过敏" in context["context"].splitlines()
            assert context["estimated_tokens"] <= 200 and not context["degraded"]
            as_text = await ok(client, "memory_get_context", {"conversation": "晚饭推荐点什么？"})
            assert allergy["memory_id"] in [item["id"] for item in as_text["relevant"]]
            fresh = await ok(client, "memory_get_context", {})  # no conversation yet: the latest memories
            assert {item["id"] for item in fresh["recent"]} == {allergy["memory_id"], city["memory_id"]}

            await ok(client, "memory_update", {"memory_id": city["memory_id"], "content": "User lives in Shenzhen"})
            assert (await ok(client, "memory_search", {"query": "Shenzhen"}))["results"][0]["memory"] == \
                "User lives in Shenzhen"

            forgotten = await ok(client, "memory_forget", {"memory_id": city["memory_id"],
                                                           "reason": "用户不想让我记住住址"})
            assert forgotten["forgotten"] and forgotten["reason"] == "用户不想让我记住住址"
            assert city["memory_id"] not in [h["id"] for h in
                                             (await ok(client, "memory_search", {"query": "Shenzhen"}))["results"]]
            history = (await ok(client, "memory_history", {"memory_id": city["memory_id"]}))["history"]
            assert [row["event"] for row in history] == ["ADD", "UPDATE", "DELETE"]
            assert history[-1]["reason"] == "用户不想让我记住住址"
            assert history[1]["old_memory"] == "User lives in Shanghai"

            listed = await ok(client, "memory_list", {"limit": 10})
            assert listed["count"] == 1 and [m["id"] for m in listed["results"]] == [allergy["memory_id"]]
            default_reason = await ok(client, "memory_forget", {"memory_id": allergy["memory_id"]})
            assert default_reason["reason"] == "the user asked to forget it"

    asyncio.run(scenario())


def test_the_configured_user_is_the_only_user(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Client(jiyi_mcp(tmp_path / "m.db", "--user-id", "bob")) as bob:
            bobs = await ok(bob, "memory_add", {"content": "用户养了一只猫"})
        async with Client(jiyi_mcp(tmp_path / "m.db", "--user-id", "alice")) as client:
            assert "own user" in await refused(client, "memory_add", {"content": "x", "user_id": "bob"})
            assert "own user" in await refused(client, "memory_search", {"query": "猫", "user_id": "bob"})
            assert "own user" in await refused(client, "search_memories", {"query": "猫",
                                                                           "filters": {"user_id": "bob"}})
            assert (await ok(client, "memory_search", {"query": "猫"}))["results"] == []
            for tool, arguments in (("memory_update", {"content": "改掉"}), ("memory_forget", {}),
                                    ("memory_history", {}), ("get_memory", {}), ("delete_memory", {})):
                assert "not found" in await refused(client, tool, {"memory_id": bobs["memory_id"], **arguments})
            problem = await refused(client, "memory_search", {"query": "猫", "top_k": 0, "memory_types": ["mood"]})
            assert "top_k must be at least 1" in problem and "memory_types[0] must be one of" in problem
        async with Client(jiyi_mcp(tmp_path / "m.db", "--user-id", "bob")) as bob:
            history = (await ok(bob, "memory_history", {"memory_id": bobs["memory_id"]}))["history"]
            assert [row["event"] for row in history] == ["ADD"]  # untouched

    asyncio.run(scenario())


def test_mem0_tools_with_their_own_arguments(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Client(jiyi_mcp(tmp_path / "m.db", "--user-id", "alice")) as client:
            added = await ok(client, "add_memory", {"text": "我对花生过敏，别给我推荐花生", "enable_graph": False,
                                                    "metadata": {"source": "chat"}, "app_id": "companion"})
            [fact] = [item for item in added["results"] if item["event"] == "ADD"]
            assert fact["memory"] == "用户对花生过敏"
            from_messages = await ok(client, "add_memory", {"text": "出差", "messages": [
                {"role": "user", "content": "我下个月去成都出差"}, {"role": "assistant", "content": "好的，记住了"}]})
            assert [item["memory"] for item in from_messages["results"]] == ["用户下个月去成都出差"]

            found = await ok(client, "search_memories", {"query": "花生", "limit": 2,
                                                         "filters": {"AND": [{"user_id": "alice"}]}})
            assert found["results"][0]["id"] == fact["id"]
            assert found["results"][0]["metadata"] == {"source": "chat", "app_id": "companion"}

            page = await ok(client, "get_memories", {"page": 1, "page_size": 1})
            assert page["count"] == 2 and len(page["results"]) == 1 and page["page_size"] == 1
            in_app = await ok(client, "get_memories", {"filters": {"app_id": "companion"}})
            assert [m["id"] for m in in_app["results"]] == [fact["id"]]
            assert (await ok(client, "get_memory", {"memory_id": fact["id"]}))["memory"] == "用户对花生过敏"

            await ok(client, "update_memory", {"memory_id": fact["id"], "text": "用户对花生和腰果过敏"})
            assert (await ok(client, "get_memory", {"memory_id": fact["id"]}))["memory"] == "用户对花生和腰果过敏"
            entities = (await ok(client, "list_entities"))["results"]
            assert [(e["type"], e["name"], e["total_memories"]) for e in entities] == [("user", "alice", 2)]

            await ok(client, "delete_memory", {"memory_id": fact["id"]})
            assert "not found" in await refused(client, "get_memory", {"memory_id": fact["id"]})
            history = (await ok(client, "memory_history", {"memory_id": fact["id"]}))["history"]
            assert history[-1]["event"] == "DELETE" and "reason" not in history[-1]  # a plain delete, not a forget

            await ok(client, "add_memory", {"text": "今天心情不错", "run_id": "s1"})
            await ok(client, "delete_entities", {"run_id": "s1"})
            assert (await ok(client, "get_memories", {"filters": {"run_id": "s1"}}))["count"] == 0
            assert (await ok(client, "get_memories"))["count"] == 1
            await ok(client, "add_memory", {"text": "我周末去爬山", "agent_id": "coach"})
            await ok(client, "delete_entities", {})  # the connection's user, as user_id's description says
            assert (await ok(client, "get_memories"))["count"] == 0
            assert (await ok(client, "list_entities"))["results"] == []

    asyncio.run(scenario())


REMEMBER_THIS = [
    "Prefers window seats on flights", "Allergic to penicillin", "Her mother's birthday is on 12 March",
    "The wifi password at the cabin is on the fridge", "I take the 7:40 train to work", "My locker number is 214",
    "我周三要交房租", "下周五部门聚餐，在望京", "车停在B2层C区", "我的工位在五楼靠窗", "不喜欢别人叫我全名",
    "药要饭后吃，一天两次",
]


def test_any_single_statement_given_to_add_memory_is_stored_as_a_fact_and_listed(tmp_path: Path) -> None:
    """An agent asked to remember something finds it saved: a statement the offline rules make nothing of is kept
    in the user's words (first person turned into the third), answered and listed by get_memories."""
    async def scenario() -> None:
        async with Client(jiyi_mcp(tmp_path / "m.db", "--user-id", "alice")) as client:
            stored = []
            for text in REMEMBER_THIS:
                added = await ok(client, "add_memory", {"text": text})
                assert [item["event"] for item in added["results"]] == ["ADD"], text
                stored.append(added["results"][0]["memory"])
            listed = {m["memory"] for m in (await ok(client, "get_memories", {"page_size": 50}))["results"]}
            assert listed == set(stored)
            assert "User takes the 7:40 train to work" in listed and "用户周三要交房租" in listed
            assert "Prefers window seats on flights" in listed  # a note without a subject stays as written

    asyncio.run(scenario())
