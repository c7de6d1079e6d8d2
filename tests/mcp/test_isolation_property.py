"""Over random callers, tools and arguments (other users' memory ids; user ids named as arguments and in filters with
eq, in, ne, nin, "*", AND, OR, NOT), an MCP caller never reads, changes or deletes another user's memory, and no call
ends in an internal error."""

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

USERS = ["alice", "bob", "carol"]


def secret(user: str, i: int) -> str:
    return f"{user} 的秘密 {i}"


def live(memory: AsyncMemory, user: str) -> set[str]:
    return {item["memory"] for item in asyncio.run(memory.get_all(user_id=user, limit=1000))["results"]}


def filters_naming(users: list[str]) -> st.SearchStrategy[Any]:
    one = st.sampled_from(users)
    return st.one_of(
        st.none(),
        st.builds(lambda u: {"user_id": u}, one),
        st.builds(lambda u: {"user_id": {"eq": u}}, one),
        st.builds(lambda u, v: {"user_id": {"in": [u, v]}}, one, one),
        st.builds(lambda u: {"user_id": {"ne": u}}, one),
        st.builds(lambda u: {"user_id": {"nin": [u]}}, one),
        st.just({"user_id": "*"}),
        st.builds(lambda u: {"AND": [{"user_id": u}]}, one),
        st.builds(lambda u, v: {"OR": [{"user_id": u}, {"user_id": v}]}, one, one),
        st.builds(lambda u: {"NOT": {"user_id": u}}, one),
    )


def bound_to(user: str) -> Callable[[Any], Caller]:
    return lambda ctx: Caller(user)


class World:
    def __init__(self, store: Path) -> None:
        self.memory = AsyncMemory(build_store(f"sqlite:///{store}"), build_embedder("hashing"))
        self.ids: dict[str, list[str]] = {}
        for user in USERS:
            added = asyncio.run(self.memory.add([{"role": "user", "content": secret(user, i)} for i in range(3)],
                                               user_id=user, infer=False))
            self.ids[user] = [item["id"] for item in added["results"]]
        self.servers = {user: build_mcp_server(self.memory, bound_to(user)) for user in USERS}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return World(tmp_path_factory.mktemp("isolation") / "m.db")


# A memory id is drawn as (owner, index) and looked up in the world when the call is made.
MEMORY_ID = st.tuples(st.sampled_from(USERS), st.integers(0, 2))


@st.composite
def calls(draw: st.DrawFn) -> tuple[str, str, dict[str, Any]]:
    caller = draw(st.sampled_from(USERS))
    named = st.one_of(st.none(), st.sampled_from(USERS))
    filters = filters_naming(USERS)
    tool, arguments = draw(st.one_of(
        st.tuples(st.sampled_from(["memory_search", "search_memories"]), st.fixed_dictionaries(
            {"query": st.sampled_from(["秘密", "alice", "bob 的秘密"])},
            optional={"user_id": named, "filters": filters})),
        st.tuples(st.sampled_from(["memory_list", "get_memories", "list_entities", "delete_all_memories"]),
                  st.fixed_dictionaries({}, optional={"user_id": named, "filters": filters})),
        st.tuples(st.sampled_from(["memory_get_context"]), st.fixed_dictionaries(
            {"conversation": st.just("我的秘密是什么？")}, optional={"user_id": named})),
        st.tuples(st.sampled_from(["get_memory", "memory_history", "delete_memory", "memory_forget"]),
                  st.fixed_dictionaries({"memory_id": MEMORY_ID})),
        st.tuples(st.just("memory_update"), st.fixed_dictionaries({"memory_id": MEMORY_ID,
                                                                   "content": st.just("改了")})),
        st.tuples(st.just("update_memory"), st.fixed_dictionaries({"memory_id": MEMORY_ID, "text": st.just("改了")})),
        st.tuples(st.sampled_from(["memory_add", "add_memory"]), st.fixed_dictionaries(
            {"content": st.just("新的记忆"), "text": st.just("我喜欢新的东西")}, optional={"user_id": named})),
        st.tuples(st.sampled_from(["delete_entities"]), st.fixed_dictionaries({"user_id": st.sampled_from(USERS)})),
    ))
    return caller, tool, {k: v for k, v in arguments.items() if v is not None}  # None: the argument left out


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls())
def test_no_caller_reaches_another_users_memory(world: World, call: tuple[str, str, dict[str, Any]]) -> None:
    caller, tool, arguments = call
    if isinstance(arguments.get("memory_id"), tuple):
        owner, index = arguments["memory_id"]
        arguments["memory_id"] = world.ids[owner][index]
    others = [u for u in USERS if u != caller]
    before = {u: live(world.memory, u) for u in others}

    async def run() -> Any:
        async with Client(world.servers[caller]) as client:
            return await client.call_tool(tool, arguments)

    result = asyncio.run(run())
    event(f"{tool} {'error' if result.is_error else 'ok'}")
    said = json.dumps(result.structured_content, ensure_ascii=False) + "".join(
        getattr(block, "text", "") for block in result.content)
    assert "failed inside jiyi" not in said, (tool, arguments, said)
    for other in others:
        assert f"{other} 的秘密" not in said, (caller, tool, arguments)
        assert live(world.memory, other) == before[other], (caller, tool, arguments)
        if not result.is_error:
            assert not any(i in said for i in world.ids[other]), (caller, tool, arguments)
