"""mem0's own Python SDK (mem0ai 2.2.1 from PyPI, unchanged) against a jiyi server on 127.0.0.1: every client
method whose route jiyi serves, with the answers checked, and the SDK's exception types for jiyi's errors."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

os.environ["MEM0_TELEMETRY"] = "False"  # read when mem0 is imported: the SDK must not call PostHog from tests

from mem0 import AsyncMemoryClient, MemoryClient
from mem0.exceptions import (
    AuthenticationError,
    MemoryNotFoundError,
    MemoryQuotaExceededError,
    RateLimitError,
    ValidationError,
)
from tests.conftest import RunningServer

from jiyi.server.limits import RequestLimits

KEYS = {"key-alice": "alice", "key-bob": "bob"}
ADMIN = "admin-secret"


def wait_for_event(client: MemoryClient, event_id: str, timeout: float = 30.0) -> dict[str, Any]:
    """Poll the platform's event route, as an SDK user does after an async add."""
    deadline = time.monotonic() + timeout
    while True:
        event: dict[str, Any] = client.client.get(f"/v1/event/{event_id}/").json()
        if event["status"] in ("SUCCEEDED", "FAILED") or time.monotonic() > deadline:
            return event
        time.sleep(0.05)


@pytest.fixture
def keyed(make_server: Callable[..., RunningServer]) -> RunningServer:
    return make_server(user_api_keys=KEYS, admin_api_key=ADMIN)


def test_the_sync_client_does_everything_against_jiyi(server: RunningServer) -> None:
    client = MemoryClient(api_key="any key: this server has none", host=server.url)
    assert (client.org_id, client.project_id) == ("jiyi", "default")  # from /v1/ping/

    stored = client.add("我对花生过敏", user_id="alice", infer=False)["results"]
    assert [(r["event"], r["memory"], r["data"]["memory"]) for r in stored] == [("ADD", "我对花生过敏", "我对花生过敏")]
    peanut = stored[0]["id"]

    queued = client.add([{"role": "user", "content": "I live in Shanghai and I love hot pot"}],
                        filters={"user_id": "alice"})["results"]
    assert queued[0]["status"] == "PENDING"
    event = wait_for_event(client, queued[0]["event_id"])
    assert event["status"] == "SUCCEEDED"
    assert {r["memory"] for r in event["results"]} == {"User lives in Shanghai", "User loves hot pot"}

    listed = client.get_all(filters={"user_id": "alice"})
    assert listed["count"] == 3 and listed["next"] is None and listed["previous"] is None
    assert {item["memory"] for item in listed["results"]} == {"我对花生过敏", "User lives in Shanghai",
                                                             "User loves hot pot"}
    assert all(item["user_id"] == "alice" and item["categories"] for item in listed["results"])

    found = client.search("花生", filters={"AND": [{"user_id": "alice"}]})["results"]  # the platform's nested form
    assert found[0]["id"] == peanut and found[0]["score"] > 0
    assert client.search("Shanghai", filters={"user_id": "alice"}, top_k=1)["results"][0]["memory"] == \
        "User lives in Shanghai"

    assert client.get(peanut)["memory"] == "我对花生过敏"
    updated = client.update(peanut, text="我对花生和芒果过敏", metadata={"source": "sdk"})
    assert (updated["memory"], updated["metadata"]) == ("我对花生和芒果过敏", {"source": "sdk"})
    client.batch_update([{"memory_id": peanut, "text": "我对花生过敏（已确认）"}])
    history = client.history(peanut)
    assert [h["event"] for h in history] == ["ADD", "UPDATE", "UPDATE"]
    assert [h["old_memory"] for h in history[1:]] == [h["new_memory"] for h in history[:-1]]  # a chain

    entities = client.users()
    assert [(e["type"], e["name"], e["total_memories"]) for e in entities["results"]] == [("user", "alice", 3)]

    export_id = client.create_memory_export(schema='{"type": "object"}', filters={"user_id": "alice"})["id"]
    export = client.get_memory_export(memory_export_id=export_id)
    assert export["count"] == 3 and {m["id"] for m in export["memories"]} >= {peanut}
    assert client.get_memory_export(filters={"user_id": "alice"})["id"] == export_id  # the newest for that scope

    summary = client.get_summary(filters={"user_id": "alice"})
    assert summary["count"] == 3 and "我对花生过敏（已确认）" in summary["summary"]

    feedback = client.feedback(peanut, "positive", "that is right")
    assert (feedback["feedback"], feedback["memory_id"]) == ("POSITIVE", peanut)
    assert httpx.get(f"{server.url}/v1/feedback/{peanut}/").json()[0]["feedback_reason"] == "that is right"

    assert client.delete(peanut)["message"]
    with pytest.raises(MemoryNotFoundError):
        client.get(peanut)
    rest = [item["id"] for item in client.get_all(filters={"user_id": "alice"})["results"]]
    assert client.batch_delete([{"memory_id": memory_id} for memory_id in rest])["message"] == \
        "Successfully deleted 2 memories"
    assert client.get_all(filters={"user_id": "alice"})["count"] == 0

    client.add("bob likes tea", user_id="bob", infer=False)
    client.add("carol likes coffee", user_id="carol", infer=False)
    client.delete_all(user_id="bob")
    assert client.get_all(filters={"user_id": "bob"})["count"] == 0
    client.delete_users(user_id="carol")
    assert client.users()["results"] == []


def test_pages_follow_the_platform_shape(server: RunningServer) -> None:
    client = MemoryClient(api_key="k", host=server.url)
    for number in range(25):
        client.add(f"note number {number}", user_id="dana", infer=False)
    first = client.get_all(filters={"user_id": "dana"}, page=1, page_size=10)
    third = client.get_all(filters={"user_id": "dana"}, page=3, page_size=10)
    assert (first["count"], len(first["results"]), first["previous"]) == (25, 10, None)
    assert "page=2" in first["next"] and "page_size=10" in first["next"]
    assert (len(third["results"]), third["next"]) == (5, None) and "page=2" in third["previous"]
    assert first["results"][0]["memory"] == "note number 24"  # newest first
    seen = [item["id"] for page in (1, 2, 3)
            for item in client.get_all(filters={"user_id": "dana"}, page=page, page_size=10)["results"]]
    assert len(seen) == len(set(seen)) == 25
    dated = client.get_all(filters={"user_id": "dana"}, start_date="2000-01-01", end_date="2000-12-31")
    assert dated["count"] == 0


def test_the_async_client_too(server: RunningServer) -> None:
    async def scenario() -> None:
        client = AsyncMemoryClient(api_key="k", host=server.url)
        added = await client.add("I am learning the guitar", user_id="erin", infer=False)
        memory_id = added["results"][0]["id"]
        found = await client.search("guitar", filters={"user_id": "erin"})
        assert [item["id"] for item in found["results"]] == [memory_id]
        await client.update(memory_id, text="I am learning the piano")
        assert (await client.get(memory_id))["memory"] == "I am learning the piano"
        assert [h["event"] for h in await client.history(memory_id)] == ["ADD", "UPDATE"]
        assert (await client.get_all(filters={"user_id": "erin"}))["count"] == 1
        assert [e["name"] for e in (await client.users())["results"]] == ["erin"]
        await client.delete(memory_id)
        with pytest.raises(MemoryNotFoundError):
            await client.get(memory_id)

    asyncio.run(scenario())


def test_a_user_key_is_a_project_of_one_user(keyed: RunningServer) -> None:
    alice = MemoryClient(api_key="key-alice", host=keyed.url)
    bob = MemoryClient(api_key="key-bob", host=keyed.url)
    assert alice.project_id == "user-alice"
    secret = bob.add("bob's secret: the safe code is 4711", user_id="bob", infer=False)["results"][0]["id"]
    mine = alice.add("alice likes jasmine tea", infer=False)["results"][0]  # no user_id: the key's own user
    assert alice.get(mine["id"])["user_id"] == "alice"

    for attempt in (lambda: alice.get(secret), lambda: alice.update(secret, text="x"), lambda: alice.delete(secret),
                    lambda: alice.history(secret), lambda: alice.batch_delete([{"memory_id": secret}])):
        with pytest.raises(MemoryNotFoundError):
            attempt()
    for asks_for_bob in ({"user_id": "bob"}, {"AND": [{"user_id": "bob"}]}, {"user_id": {"in": ["bob"]}}):
        with pytest.raises(AuthenticationError):
            alice.search("safe code", filters=asks_for_bob)
    # Conditions that name bob without asking for him only narrow alice's own memories.
    assert alice.search("safe code", filters={"OR": [{"user_id": "bob"}, {"agent_id": "x"}]})["results"] == []
    assert [item["memory"] for item in alice.get_all(filters={})["results"]] == ["alice likes jasmine tea"]
    assert [e["name"] for e in alice.users()["results"]] == ["alice"]
    with pytest.raises(MemoryNotFoundError):
        alice.delete_users(user_id="bob")
    assert bob.get(secret)["memory"].startswith("bob's secret")  # nothing of bob's changed

    admin = MemoryClient(api_key=ADMIN, host=keyed.url)
    assert {e["name"] for e in admin.users()["results"]} == {"alice", "bob"}
    assert admin.get_all()["count"] == 2  # no ids: everyone's, for the admin key only

    with pytest.raises(ValueError, match="unknown API key"):
        MemoryClient(api_key="not a key", host=keyed.url)


def test_jiyi_errors_arrive_as_the_sdks_exception_types(make_server: Callable[..., RunningServer]) -> None:
    server = make_server(limits=RequestLimits(max_message_chars=100, rate_per_minute=12))
    client = MemoryClient(api_key="k", host=server.url)  # ping: 1 request of the 12
    with pytest.raises(MemoryNotFoundError):
        client.get("00000000-0000-0000-0000-000000000000")
    with pytest.raises(MemoryQuotaExceededError, match="limit is 100"):
        client.add("x" * 101, user_id="f", infer=False)
    with pytest.raises(ValidationError, match="user_id, agent_id or run_id"):
        client.search("anything", filters={"app_id": "only an app"})
    with pytest.raises(ValidationError, match="entity type"):
        client.delete_users(app_id="some-app")
    with pytest.raises(RateLimitError) as refused:
        for _ in range(20):
            client.get_all(filters={"user_id": "f"})
    assert refused.value.debug_info["retry_after"] >= 1
    other = httpx.get(f"{server.url}/v1/ping/", headers={"Authorization": "Token another-key"})
    assert other.status_code == 200  # the limit is per key: another key is not held up


def test_self_hosted_differences_are_closed(make_server: Callable[..., RunningServer]) -> None:
    server = make_server(admin_api_key=ADMIN)
    admin = {"X-API-Key": ADMIN}
    with httpx.Client(base_url=server.url, timeout=30) as http:
        for user in ("u1", "u2"):
            http.post("/memories", json={"messages": [{"role": "user", "content": f"{user} note"}],
                                         "user_id": user, "infer": False}).raise_for_status()
        everything = http.get("/memories", headers=admin)
        assert sorted(item["memory"] for item in everything.json()["results"]) == ["u1 note", "u2 note"]
        assert http.get("/memories").status_code == 401  # everyone's memories are for the admin key
        assert [e["name"] for e in http.get("/entities").json()["results"]] == ["u1", "u2"]
        refused = http.post("/configure", headers=admin, json={"vector_store": {"provider": "qdrant", "config": {}}})
        assert refused.status_code == 400 and "'qdrant' is not supported" in refused.json()["detail"]
        nested = http.post("/search", json={"query": "note", "filters": {"AND": [{"user_id": "u1"}]}})
        assert [item["memory"] for item in nested.json()["results"]] == ["u1 note"]
