"""mem0's own Python SDK (mem0ai 2.2.1, unchanged) against a jiyi server: mem0's categories on every memory,
filtered as on the platform, custom lists on an add and for the project, and the memory_categorize webhook."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import pytest

os.environ["MEM0_TELEMETRY"] = "False"  # read when mem0 is imported: the SDK must not call PostHog from tests

from mem0 import MemoryClient
from mem0.exceptions import ValidationError
from tests.conftest import RunningServer
from tests.server.test_webhooks import FAST, Receiver


def seed(client: MemoryClient, user_id: str, *texts: str) -> list[str]:
    return [client.add(text, user_id=user_id, infer=False)["results"][0]["id"] for text in texts]


def test_memories_carry_mem0s_categories_and_are_filtered_by_them(server: RunningServer) -> None:
    client = MemoryClient(api_key="k", host=server.url)
    food, trip, asthma = seed(client, "alice", "User loves spicy Sichuan food", "用户春节要去三亚度假",
                              "用户有哮喘，一直在吃药")
    listed = {item["id"]: item for item in client.get_all(filters={"user_id": "alice"})["results"]}
    assert listed[food]["categories"] == ["food", "user_preferences"]
    assert listed[trip]["categories"] == ["travel"] and listed[asthma]["categories"][0] == "health"
    assert {item["category"] for item in listed.values()} == {"fact"}  # jiyi's own kind of record, beside them

    in_food = client.get_all(filters={"AND": [{"user_id": "alice"}, {"categories": {"in": ["food"]}}]})
    assert [item["id"] for item in in_food["results"]] == [food]
    either = client.get_all(filters={"user_id": "alice", "categories": {"in": ["travel", "health"]}})
    assert {item["id"] for item in either["results"]} == {trip, asthma}
    assert [item["id"] for item in client.get_all(filters={"user_id": "alice"}, categories=["travel"])["results"]] \
        == [trip]
    found = client.search("what should I remember", filters={"user_id": "alice"}, categories=["health"])
    assert [hit["id"] for hit in found["results"]] == [asthma]
    assert client.get(food)["categories"] == ["food", "user_preferences"]
    assert client.history(food)[0]["categories"] == ["food", "user_preferences"]

    client.update(trip, text="用户对花生过敏")  # a new text, categorised anew
    assert client.get(trip)["categories"][0] == "health"


def test_custom_categories_on_an_add_and_for_the_project(server: RunningServer) -> None:
    client = MemoryClient(api_key="k", host=server.url)
    pets = [{"pets": "the user's pets"}, {"work": "job, employer and colleagues"}]
    added = client.add("User has a golden retriever named Max", user_id="bob", infer=False, custom_categories=pets)
    assert client.get(added["results"][0]["id"])["categories"] == ["pets"]

    client.project.update(custom_categories=[{"money": "savings, spending and bills"}, {"misc": "anything else"}])
    assert client.project.get()["custom_categories"][0] == {"money": "savings, spending and bills"}
    by_project = client.add("用户在攒钱买房", user_id="bob", infer=False)
    assert client.get(by_project["results"][0]["id"])["categories"] == ["money"]
    own_wins = client.add("我在银行上班", user_id="bob", infer=False, custom_categories=pets)
    assert client.get(own_wins["results"][0]["id"])["categories"] == ["work"]  # the add's own list wins

    with pytest.raises(ValidationError, match="custom_categories"):
        client.add("hello", user_id="bob", infer=False, custom_categories=[{"a": "x", "b": "y"}])
    with pytest.raises(ValidationError, match="custom_categories"):
        client.project.update(custom_categories=[{"": "nameless"}])


def test_a_webhook_made_with_the_sdk_hears_memory_categorize(make_server: Callable[..., RunningServer]) -> None:
    receiver = Receiver().start()
    try:
        server = make_server(webhooks=FAST)
        client = MemoryClient(api_key="k", host=server.url)
        hook = client.create_webhook(url=receiver.url, name="categories", project_id=client.project_id,
                                     event_types=["memory_categorize"])
        assert hook["event_types"] == ["memory_categorize"]
        [added] = client.add("用户对花生过敏", user_id="carol", infer=False)["results"]
        receiver.wait_for(1)  # sent before the text changes (after it, the add's categories would be unknown)
        client.update(added["id"], text="User plays tennis every weekend")  # a new text: categorised anew
        client.update(added["id"], metadata={"checked": True})  # the text stays: no event
        receiver.wait_for(2)
        time.sleep(0.3)  # an unexpected third event would arrive now
    finally:
        receiver.stop()
    told = [(body["event_type"], body["event_details"]["id"], body["event_details"]["data"]["categories"][0])
            for body in receiver.bodies()]  # the main category: the memory's first
    assert told == [("memory_categorize", added["id"], "health"), ("memory_categorize", added["id"], "sports")]
    assert client.get(added["id"])["categories"] == receiver.bodies()[1]["event_details"]["data"]["categories"]
