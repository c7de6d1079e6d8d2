"""The entity graph's MCP tools (memory_entities, memory_relations, memory_merge_entities, memory_rename_entity,
memory_close_relation), driven by the SDK's own client against each store: the graph the write path built from
memory_add, corrected the way a user would ask for it, one user never reaching another's."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from mcp import Client

from jiyi import AsyncMemory, build_embedder, build_store
from jiyi.mcp import Caller, build_mcp_server
from jiyi.mcp.caller import READ_ONLY
from jiyi.stores.entities import EntityStore
from tests.conftest import RunningServer
from tests.mcp.helpers import ok, over_http, refused

SAID = ["My older brother Arjun started law school in Chicago", "我哥哥叫阿俊，在芝加哥读法学院", "I work at Initech",
        "我有个妹妹，叫小雨"]


def connect(memory: AsyncMemory, caller: Caller) -> Client:
    return Client(build_mcp_server(memory, lambda ctx: caller))


def by_name(listed: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entity["name"]: entity for entity in listed["results"]}


async def said_by(client: Client, texts: list[str]) -> list[str]:
    return [(await ok(client, "memory_add", {"content": text}))["memory_id"] for text in texts]


def test_a_user_lists_and_corrects_their_graph(amemory: AsyncMemory) -> None:
    async def scenario() -> None:
        async with connect(amemory, Caller("alice")) as alice:
            arjun_said, ajun_said, _, _ = await said_by(alice, SAID)
            found = by_name(await ok(alice, "memory_entities"))
            assert set(found) == {"Arjun", "阿俊", "Chicago", "芝加哥", "Initech", "小雨"}
            arjun, ajun = found["Arjun"], found["阿俊"]
            assert (arjun["kind"], arjun["aliases"], arjun["memories"]) == ("person", ["my older brother",
                                                                                       "my brother"], 1)
            assert sorted((r["source"], r["relation"], r["target"]) for r in ajun["relations"]) == [
                ("阿俊", "brother_of", "alice"), ("阿俊", "lives_in", "芝加哥")]
            pets = await ok(alice, "memory_entities", {"kind": "place"})
            assert sorted(e["name"] for e in pets["results"]) == ["Chicago", "芝加哥"]

            # 阿俊 is Arjun: one brother, two names
            merged = await ok(alice, "memory_merge_entities", {"keep_id": arjun["id"], "merge_id": ajun["id"]})
            assert merged["entity"]["name"] == "Arjun" and merged["entity"]["memories"] == 2
            assert merged["entity"]["aliases"] == ["my older brother", "my brother", "阿俊", "哥哥", "我哥哥"]
            assert len(merged["joined_relations"]) == 1 and len(merged["moved_relations"]) == 1
            found = by_name(await ok(alice, "memory_entities"))
            assert "阿俊" not in found
            assert sorted((r["relation"], r["target"]) for r in found["Arjun"]["relations"]) == [
                ("brother_of", "alice"), ("lives_in", "芝加哥")]
            brother = next(r for r in found["Arjun"]["relations"] if r["relation"] == "brother_of")
            his = await ok(alice, "memory_relations", {"entity_id": arjun["id"], "include_closed": True})
            [relation] = [r for r in his["results"] if r["relation"] == "brother_of"]
            assert his["count"] == 2 and relation["id"] == brother["id"]
            assert sorted(relation["memory_ids"]) == sorted([arjun_said, ajun_said])

            renamed = await ok(alice, "memory_rename_entity", {"entity_id": found["小雨"]["id"], "name": "林小雨"})
            assert (renamed["name"], renamed["aliases"]) == ("林小雨", ["小雨", "妹妹", "我妹妹"])

            [job] = [r for r in found["Initech"]["relations"]]
            problem = await refused(alice, "memory_close_relation", {"relation_id": job["id"],
                                                                     "ended_at": "2001-01-01"})
            assert "cannot end before" in problem and "user works_at Initech" in problem
            closed = (await ok(alice, "memory_close_relation", {"relation_id": job["id"]}))["relation"]
            assert not closed["current"] and closed["invalid_at"] is not None
            assert closed["source"] == "alice" and closed["target"] == "Initech"
            current = await ok(alice, "memory_relations")
            assert job["id"] not in {r["id"] for r in current["results"]} and current["count"] == 3
            everything = await ok(alice, "memory_relations", {"include_closed": True})
            [ended] = [r for r in everything["results"] if r["id"] == job["id"]]
            assert ended["invalid_at"] == closed["invalid_at"] and ended["valid_at"] is not None
            assert "already closed" in await refused(alice, "memory_close_relation", {"relation_id": job["id"]})

            assert "entity nope not found" in await refused(alice, "memory_rename_entity", {
                "entity_id": "nope", "name": "x"})
            assert "into itself" in await refused(alice, "memory_merge_entities", {
                "keep_id": arjun["id"], "merge_id": arjun["id"]})
            assert "entity" in await refused(alice, "memory_merge_entities", {
                "keep_id": arjun["id"], "merge_id": ajun["id"]})  # gone since the merge
            assert "ISO 8601" in await refused(alice, "memory_close_relation", {
                "relation_id": brother["id"], "ended_at": "last spring"})
            assert "relation nope not found" in await refused(alice, "memory_close_relation", {"relation_id": "nope"})

    asyncio.run(scenario())


def test_one_user_never_reaches_anothers_entities(amemory: AsyncMemory) -> None:
    store = amemory.store
    assert isinstance(store, EntityStore)

    async def scenario() -> None:
        async with connect(amemory, Caller("alice")) as alice:
            await said_by(alice, SAID)
            mine = by_name(await ok(alice, "memory_entities"))
        before = store.graph("alice")
        async with connect(amemory, Caller("bob")) as bob:
            await said_by(bob, ["My cat Mochi is sick"])
            assert set(by_name(await ok(bob, "memory_entities"))) == {"Mochi"}
            assert all(r["source"] != "alice" for r in (await ok(bob, "memory_relations"))["results"])
            theirs = by_name(await ok(bob, "memory_entities"))["Mochi"]["id"]
            attempts: list[tuple[str, dict[str, Any]]] = [
                ("memory_relations", {"entity_id": mine["Arjun"]["id"]}),
                ("memory_rename_entity", {"entity_id": mine["Arjun"]["id"], "name": "Stolen"}),
                ("memory_merge_entities", {"keep_id": theirs, "merge_id": mine["Arjun"]["id"]}),
                ("memory_merge_entities", {"keep_id": mine["Arjun"]["id"], "merge_id": mine["阿俊"]["id"]}),
                ("memory_close_relation", {"relation_id": mine["Initech"]["relations"][0]["id"]})]
            for tool, arguments in attempts:
                problem = await refused(bob, tool, arguments)
                assert "not found among user bob's" in problem and "another user's" in problem, (tool, problem)
                assert "Arjun" not in problem and "Initech" not in problem  # nothing of alice's is told
            assert "own user" in await refused(bob, "memory_entities", {"user_id": "alice"})
            assert "own user" in await refused(bob, "memory_rename_entity", {
                "entity_id": mine["Arjun"]["id"], "name": "x", "user_id": "alice"})
        assert store.graph("alice") == before

    asyncio.run(scenario())


def test_who_may_use_the_graph_tools(tmp_path: Path) -> None:
    memory = AsyncMemory(build_store(f"sqlite:///{tmp_path / 'm.db'}"), build_embedder("hashing"))

    async def scenario() -> None:
        async with connect(memory, Caller("alice")) as alice:
            await said_by(alice, SAID)
        async with connect(memory, Caller("alice", may_write=False)) as reader:
            arjun = by_name(await ok(reader, "memory_entities"))["Arjun"]
            assert await refused(reader, "memory_rename_entity", {"entity_id": arjun["id"], "name": "x"}) == READ_ONLY
        async with connect(memory, Caller("alice", "coach")) as coach:
            for tool, arguments in (("memory_entities", {}), ("memory_relations", {}),
                                    ("memory_rename_entity", {"entity_id": arjun["id"], "name": "x"})):
                assert "held to agent coach" in await refused(coach, tool, arguments), tool
        async with connect(memory, Caller()) as admin:
            assert "user_id is required" in await refused(admin, "memory_entities")
            listed = await ok(admin, "memory_entities", {"user_id": "alice", "limit": 2})
            assert listed["count"] == 6 and len(listed["results"]) == 2  # Arjun, 阿俊, Chicago, 芝加哥, Initech, 小雨
            assert (await ok(admin, "memory_entities", {"user_id": "bob"}))["results"] == []

    asyncio.run(scenario())


def test_over_http_the_key_decides_whose_graph(make_server: Callable[..., RunningServer], tmp_path: Path) -> None:
    memory = AsyncMemory(build_store(f"sqlite:///{tmp_path / 'm.db'}"), build_embedder("hashing"))
    server = make_server(memory, user_api_keys={"alice-graph-key-0123": "alice", "bob-graph-key-0123": "bob"})

    async def scenario() -> None:
        async with over_http(server.url, "alice-graph-key-0123") as alice:
            await said_by(alice, SAID[:2])
            found = by_name(await ok(alice, "memory_entities"))
            merged = await ok(alice, "memory_merge_entities", {"keep_id": found["Arjun"]["id"],
                                                              "merge_id": found["阿俊"]["id"]})
            assert "阿俊" in merged["entity"]["aliases"]
        async with over_http(server.url, "bob-graph-key-0123") as bob:
            assert (await ok(bob, "memory_entities"))["results"] == []
            assert "not found" in await refused(bob, "memory_rename_entity", {"entity_id": found["Arjun"]["id"],
                                                                              "name": "x"})

    asyncio.run(scenario())


# --- a property: over random callers, graph tools and ids (anyone's), no caller sees or changes another's graph ---

PEOPLE = {"alice": ("Arjun", "Denver"), "bob": ("Bashir", "Lagos"), "carol": ("Chidi", "Oslo")}


class GraphWorld:
    def __init__(self, path: Path) -> None:
        self.memory = AsyncMemory(build_store(f"sqlite:///{path}"), build_embedder("hashing"))
        for user, (brother, city) in PEOPLE.items():
            for text in (f"My older brother {brother} started law school", f"I live in {city}"):
                asyncio.run(self.memory.add([{"role": "user", "content": text}], user_id=user, infer=False))
        store = self.memory.store
        assert isinstance(store, EntityStore)
        self.store = store
        self.ids = {user: ([*store.graph(user).entities], [r.id for r in store.graph(user).relations])
                    for user in PEOPLE}
        assert all(len(entities) == 2 and len(relations) == 2 for entities, relations in self.ids.values())


@pytest.fixture(scope="module")
def graph_world(tmp_path_factory: pytest.TempPathFactory) -> GraphWorld:
    return GraphWorld(tmp_path_factory.mktemp("graph-isolation") / "m.db")


# An id is drawn as (owner, index) and looked up in the world when the call is made.
ANYONES = st.tuples(st.sampled_from(list(PEOPLE)), st.integers(0, 1))


@st.composite
def graph_calls(draw: st.DrawFn) -> tuple[str, str, dict[str, Any]]:
    named = st.sampled_from(list(PEOPLE))
    tool, arguments = draw(st.one_of(
        st.tuples(st.just("memory_entities"), st.fixed_dictionaries({}, optional={"user_id": named})),
        st.tuples(st.just("memory_relations"), st.fixed_dictionaries(
            {}, optional={"entity_id": ANYONES, "include_closed": st.booleans(), "user_id": named})),
        st.tuples(st.just("memory_merge_entities"), st.fixed_dictionaries(
            {"keep_id": ANYONES, "merge_id": ANYONES}, optional={"user_id": named})),
        st.tuples(st.just("memory_rename_entity"), st.fixed_dictionaries(
            {"entity_id": ANYONES, "name": st.just("Renamed")}, optional={"user_id": named})),
        st.tuples(st.just("memory_close_relation"), st.fixed_dictionaries(
            {"relation_id": ANYONES}, optional={"user_id": named})),
    ))
    return draw(st.sampled_from(list(PEOPLE))), tool, arguments


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph_calls())
def test_no_caller_reaches_another_users_graph(graph_world: GraphWorld, call: tuple[str, str, dict[str, Any]]) -> None:
    caller, tool, arguments = call
    for key in ("entity_id", "keep_id", "merge_id"):
        if key in arguments:
            owner, index = arguments[key]
            arguments[key] = graph_world.ids[owner][0][index]
    if "relation_id" in arguments:
        owner, index = arguments["relation_id"]
        arguments["relation_id"] = graph_world.ids[owner][1][index]
    others = [user for user in PEOPLE if user != caller]
    before = {user: graph_world.store.graph(user) for user in others}

    async def run() -> Any:
        async with connect(graph_world.memory, Caller(caller)) as client:
            return await client.call_tool(tool, arguments)

    result = asyncio.run(run())
    event(f"{tool} {'error' if result.is_error else 'ok'}")
    said = json.dumps(result.structured_content, ensure_ascii=False) + "".join(
        getattr(block, "text", "") for block in result.content)
    assert "failed inside jiyi" not in said, (tool, arguments, said)
    for other in others:
        assert graph_world.store.graph(other) == before[other], (caller, tool, arguments)
        assert not any(name in said for name in PEOPLE[other]), (caller, tool, arguments, said)
