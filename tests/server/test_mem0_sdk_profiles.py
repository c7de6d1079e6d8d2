"""mem0's own Python SDK (mem0ai 2.2.1, unchanged) against a jiyi server: user profiles (get, generate, sample, jobs,
settings), answered offline."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

os.environ["MEM0_TELEMETRY"] = "False"  # read when mem0 is imported: the SDK must not call PostHog from tests

from mem0 import MemoryClient
from mem0.exceptions import MemoryNotFoundError, ValidationError
from tests.conftest import RunningServer

SCHEMA = {"type": "object", "properties": {
    "diet": {"type": "string", "description": "what the user eats, likes to eat and cannot eat"},
    "health": {"type": "array", "items": {"type": "string"}, "description": "illnesses, allergies, medication"},
    "age": {"type": "integer", "description": "the user's age in years"},
}}


def seed(client: MemoryClient, user_id: str, *texts: str) -> list[str]:
    return [client.add(text, user_id=user_id, infer=False)["results"][0]["id"] for text in texts]


def test_a_profile_is_the_users_stable_facts_by_category(server: RunningServer) -> None:
    client = MemoryClient(api_key="k", host=server.url)
    seed(client, "carol", "User's name is Carol", "User loves spicy Sichuan food", "用户对花生过敏",
         "User works as a nurse at a children's hospital")
    profile = client.get_profile("carol")
    assert (profile["status"], profile["entity_type"], profile["entity_id"]) == ("succeeded", "user", "carol")
    assert profile["generation_count"] == 1 and profile["updated_at"]
    assert profile["profile"]["food"] == ["User loves spicy Sichuan food"]
    assert profile["profile"]["health"] == ["用户对花生过敏"]
    assert "User works as a nurse at a children's hospital" in profile["profile"]["professional_details"]
    assert client.get_profile("carol")["generation_count"] == 1  # nothing changed: the same profile

    seed(client, "carol", "User plays tennis every weekend")
    again = client.get_profile("carol")  # a new fact: rebuilt at the read
    assert again["generation_count"] == 2 and again["profile"]["sports"] == ["User plays tennis every weekend"]

    job = client.generate_profile("carol")
    assert (job["status"], job["operation"], job["entity_type"], job["replayed"]) == ("succeeded", "trigger", "user",
                                                                                      False)
    assert job["status_url"] == f"/v2/profiles/jobs/{job['job_id']}/"
    read = client.get_profile_job(job["status_url"])["job"]
    assert (read["id"], read["status"], read["total"], read["completed"], read["succeeded"]) == \
        (job["job_id"], "succeeded", 1, 1, 1)
    assert client.get_profile_job(job["job_id"])["job"] == read  # by bare id too
    assert client.get_profile("carol")["generation_count"] == 3

    same = client.generate_profile("carol", idempotency_key="carol-refresh-1")
    replay = client.generate_profile("carol", idempotency_key="carol-refresh-1")
    assert replay["job_id"] == same["job_id"] and replay["replayed"] is True and same["replayed"] is False
    assert client.get_profile("carol")["generation_count"] == 4  # the replay generated nothing


def test_profile_settings_round_trip_and_a_schema_shapes_the_profile(server: RunningServer) -> None:
    client = MemoryClient(api_key="k", host=server.url)
    seed(client, "dan", "User is vegetarian and loves spicy food", "用户对花生过敏", "User has asthma")
    settings = client.get_profile_settings()
    assert settings["enabled"] is True and settings["entities"]["user"] == {"schema": None,
                                                                           "custom_instructions": None}
    assert "user" in settings["capabilities"]["entity_types"]

    stored = client.update_profile_settings(schema=SCHEMA, custom_instructions="Keep it short.")
    assert stored["entities"]["user"] == {"schema": SCHEMA, "custom_instructions": "Keep it short."}
    assert client.get_profile_settings() == stored
    profile = client.get_profile("dan")["profile"]
    assert set(profile) == {"diet", "health", "age"}  # the schema's properties, as named
    assert "User is vegetarian and loves spicy food" in profile["diet"]  # a string: the facts joined
    assert "用户对花生过敏" in profile["health"] and "User has asthma" in profile["health"]  # an array of facts
    assert profile["age"] is None  # a number is read out of a sentence by an LLM, not offline

    cleared = client.update_profile_settings(schema=None)  # None clears; the instructions stay
    assert cleared["entities"]["user"] == {"schema": None, "custom_instructions": "Keep it short."}
    assert "food" in client.get_profile("dan")["profile"]

    with pytest.raises(ValidationError, match="needs a description"):
        client.update_profile_settings(schema={"type": "object", "properties": {"diet": {"type": "string"}}})
    flat = client.client.post("/v2/profiles/settings/", json={"schema": SCHEMA})
    assert flat.status_code == 400 and flat.json()["detail"].startswith("Unsupported settings: schema")

    client.update_profile_settings(enabled=False)
    off = client.get_profile("dan")
    assert (off["status"], off["profile"]) == ("not_enabled", {})
    with pytest.raises(ValidationError, match="not enabled"):
        client.generate_profile("dan")
    client.update_profile_settings(enabled=True)
    assert client.get_profile("dan")["status"] == "succeeded"


def test_sampling_unknown_users_and_users_without_facts(server: RunningServer) -> None:
    client = MemoryClient(api_key="k", host=server.url)
    seed(client, "erin", "User lives in Lisbon", "User drinks green tea every afternoon")
    seed(client, "fred", "User plays the cello")
    client.add([{"role": "user", "content": "ok thanks"}], user_id="gina", async_mode=False)  # nothing worth a fact
    sample = client.sample_profiles(limit=2)
    assert (sample["operation"], sample["sampled"], sample["entity_ids"]) == ("sample", 2, ["erin", "fred"])
    job = client.get_profile_job(sample["status_url"])["job"]
    assert (job["total"], job["completed"], job["succeeded"], job["skipped"]) == (2, 2, 2, 0)
    assert client.get_profile("gina")["status"] == "insufficient_data"

    with pytest.raises(MemoryNotFoundError, match="user nobody not found"):
        client.get_profile("nobody")
    with pytest.raises(MemoryNotFoundError, match="user nobody not found"):
        client.generate_profile("nobody")
    with pytest.raises(MemoryNotFoundError):
        client.get_profile_job("00000000-0000-0000-0000-000000000000")
    with pytest.raises(ValidationError, match="limit"):
        client.sample_profiles(limit=11)


def test_a_user_key_sees_its_own_users_profile_and_settings_only(
        make_server: Callable[..., RunningServer]) -> None:
    server = make_server(user_api_keys={"key-alice": "alice", "key-bob": "bob"}, admin_api_key="admin")
    alice = MemoryClient(api_key="key-alice", host=server.url)
    bob = MemoryClient(api_key="key-bob", host=server.url)
    seed(alice, "alice", "User loves jasmine tea")
    seed(bob, "bob", "User collects stamps")
    assert alice.get_profile("alice")["profile"]["food"] == ["User loves jasmine tea"]
    with pytest.raises(MemoryNotFoundError):
        alice.get_profile("bob")
    with pytest.raises(MemoryNotFoundError):
        alice.generate_profile("bob")
    assert alice.sample_profiles(limit=5)["entity_ids"] == ["alice"]
    alice.update_profile_settings(enabled=False)  # alice's project of one
    assert bob.get_profile_settings()["enabled"] is True and bob.get_profile("bob")["status"] == "succeeded"
