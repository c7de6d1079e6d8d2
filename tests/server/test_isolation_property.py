"""A property, over random keys and requests: no key ever reads, changes or deletes another user's memory, by any
route (mem0's self-hosted and platform routes, /context, events), any id, or any filter (AND / OR / NOT, operators on
user_id and agent_id) — and every such attempt is answered with a 4xx, never a 5xx.

Each user's memories carry a marker no other user's do; an answer to a key that contains another user's marker is a
leak. Requests only ever try to change *other* users' memories, and those are checked after every example."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.conftest import RunningServer

from jiyi import AsyncMemory, build_embedder, build_store
from jiyi.keys import new_key
from jiyi.server import create_app

USERS = ("alice", "bob", "carol")
ADMIN = "admin-key-for-the-property"
ENV_KEYS = {"env-key-alice": "alice", "env-key-bob": "bob"}


@dataclass
class World:
    server: RunningServer
    keys: dict[str, str]  # key -> user
    memories: dict[str, dict[str, str]]  # user -> {memory id: text}
    events: dict[str, str]  # user -> an event id of theirs

    def marker(self, user: str) -> str:
        return f"marker-{user}-7f3a"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    db = Path(tmp_path_factory.mktemp("property")) / "property.db"
    store = build_store(f"sqlite:///{db}")
    issued, carol_key = new_key("write", "carol")
    store.add_api_key(issued)  # type: ignore[attr-defined]
    reader, alice_reader = new_key("read", "alice")
    store.add_api_key(reader)  # type: ignore[attr-defined]
    memory = AsyncMemory(store, build_embedder("hashing"))
    with RunningServer(create_app(memory, admin_api_key=ADMIN, user_api_keys=ENV_KEYS)) as server:
        keys = {**ENV_KEYS, carol_key: "carol", alice_reader: "alice"}
        memories: dict[str, dict[str, str]] = {}
        events: dict[str, str] = {}
        for user in USERS:
            for n, topic in enumerate(("diary", "allergy", "city")):
                text = f"{user}'s {topic} note marker-{user}-7f3a number {n}"
                body = {"messages": [{"role": "user", "content": text}], "user_id": user, "infer": False,
                        "agent_id": "helper" if n == 2 else None}
                answer = httpx.post(f"{server.url}/memories", json=body, headers={"X-API-Key": ADMIN}, timeout=30)
                memories.setdefault(user, {})[answer.json()["results"][0]["id"]] = text
            turn = httpx.post(f"{server.url}/memories", headers={"X-API-Key": ADMIN}, timeout=30, json={
                "messages": [{"role": "user", "content": f"I live in Lyon marker-{user}-7f3a"}], "user_id": user,
                "async_mode": True})
            events[user] = turn.json()["event_id"]
        yield World(server, keys, memories, events)


def user_conditions() -> st.SearchStrategy[Any]:
    name = st.sampled_from([*USERS, "nobody", "*"])
    field = st.sampled_from(["user_id", "agent_id"])
    op = st.sampled_from(["eq", "ne", "in", "nin", "contains", "icontains", "gt", "lte"])

    def condition(field_name: str, operator: str | None, value: str) -> dict[str, Any]:
        if operator is None:
            return {field_name: value}
        return {field_name: {operator: [value] if operator in ("in", "nin") else value}}

    leaf = st.builds(condition, field, st.none() | op, name)
    return st.recursive(leaf, lambda inner: st.one_of(
        st.builds(lambda items: {"AND": items}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda items: {"OR": items}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda items: {"NOT": items}, st.lists(inner, min_size=1, max_size=2)),
    ), max_leaves=5)


@st.composite
def attempts(draw: st.DrawFn, world: World) -> tuple[str, str, str, dict[str, Any] | None, str]:
    """(key, method, path, json body, the caller's user): a request a key could send about someone's memories."""
    key = draw(st.sampled_from(sorted(world.keys)))
    me = world.keys[key]
    other = draw(st.sampled_from([u for u in USERS if u != me]))
    foreign_id = draw(st.sampled_from(sorted(world.memories[other])))
    asked_user = draw(st.sampled_from([None, me, other]))
    filters = draw(st.none() | user_conditions())
    query = draw(st.sampled_from(["diary", "note marker", "allergy", "Lyon", "number 1"]))
    ids = {k: v for k, v in {"user_id": asked_user, "filters": filters}.items() if v is not None}
    chat = [{"role": "user", "content": f"tell me about the {query}"}]
    choice = draw(st.sampled_from([
        ("POST", "/search", {"query": query, **ids}),
        ("POST", "/context", {"messages": chat, **ids}),
        ("GET", "/memories" + (f"?user_id={asked_user}" if asked_user else ""), None),
        ("GET", f"/memories/{foreign_id}", None),
        ("GET", f"/memories/{foreign_id}/history", None),
        ("PUT", f"/memories/{foreign_id}", {"text": f"overwritten by {me}"}),
        ("DELETE", f"/memories/{foreign_id}", None),
        ("GET", f"/events/{world.events[other]}", None),
        ("POST", "/memories", {"messages": chat, "infer": False, "user_id": other}),
        ("POST", "/v3/memories/search/", {"query": query, **ids}),
        ("POST", "/v3/memories/", ids),
        ("GET", f"/v1/memories/{foreign_id}/", None),
        ("PUT", f"/v1/memories/{foreign_id}/", {"text": f"overwritten by {me}"}),
        ("DELETE", f"/v1/memories/{foreign_id}/", None),
        ("GET", f"/v1/memories/{foreign_id}/history/", None),
        ("PUT", "/v1/batch/", {"memories": [{"memory_id": foreign_id, "text": "batch overwrite"}]}),
        ("DELETE", "/v1/batch/", {"memories": [{"memory_id": foreign_id}]}),
        ("DELETE", f"/v1/memories/?user_id={other}", None),
        ("DELETE", f"/v2/entities/user/{other}/", None),
        ("GET", "/v1/entities/", None),
        ("POST", "/v1/exports/", {"schema": {}, **ids}),
        ("POST", "/v1/summary/", {"filters": filters or {"user_id": asked_user or other}}),
        ("POST", "/v1/feedback/", {"memory_id": foreign_id, "feedback": "NEGATIVE"}),
    ]))
    return key, choice[0], choice[1], choice[2], me


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(data=st.data())
def test_no_key_reaches_another_users_memories(world: World, data: st.DataObject) -> None:
    key, method, path, body, me = data.draw(attempts(world))
    answer = httpx.request(method, world.server.url + path, json=body, headers={"Authorization": f"Token {key}"},
                           timeout=30)
    assert answer.status_code < 500, (method, path, body, answer.status_code, answer.text)
    for other in USERS:
        if other != me:
            assert world.marker(other) not in answer.text, (method, path, body, answer.text[:500])
    # Whatever the answer was, every other user's memories are as they were.
    for other, stored in world.memories.items():
        if other != me:
            listed = httpx.get(f"{world.server.url}/memories", params={"user_id": other},
                               headers={"X-API-Key": ADMIN}, timeout=30).json()["results"]
            now = {m["id"]: m["memory"] for m in listed}
            assert all(now.get(memory_id) == text for memory_id, text in stored.items()), (method, path, body)


def test_the_property_sees_every_users_memories_through_the_admin_key(world: World) -> None:
    # The check above means something only if a leak would show: the admin key does see every marker.
    found = httpx.post(f"{world.server.url}/v3/memories/", json={}, headers={"X-API-Key": ADMIN}, timeout=30)
    text = json.dumps(found.json())
    assert all(world.marker(user) in text for user in USERS)
