"""The write path over REST, on a real jiyi server whose LLM is the real OpenAI-compatible client talking to jiyi's
fake OpenAI server (both on 127.0.0.1): async adds answer at once and are finished by the server's worker, and an LLM
that fails never turns into a 5xx or a lost turn."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from rest_helpers import HISTORY_COLUMNS, detail_text, ok
from tests.conftest import RunningServer

from jiyi import AsyncMemory, Scope, build_embedder, build_store
from jiyi.core import prompts
from jiyi.llms import build_llm
from jiyi.testing.fake_openai import FakeOpenAI, Reply

StartServer = Callable[..., RunningServer]
KEYS = {"key-alice": "alice", "key-bob": "bob"}


@pytest.fixture
def llm_memory(fake: FakeOpenAI, tmp_path: Path) -> Callable[..., AsyncMemory]:
    """`make(timeout=5.0, **config)`: a Memory whose LLM is the real client pointed at the fake server (no client
    retries: a failure reaches the write path at once)."""

    def make(timeout: float = 5.0, **config: Any) -> AsyncMemory:
        llm = build_llm("openai:fake", base_url=fake.base_url, timeout=timeout, max_retries=0)
        return AsyncMemory(build_store(f"sqlite:///{tmp_path / 'llm.db'}"), build_embedder("hashing"), llm=llm,
                           config=config)

    return make


def chat(body: dict[str, Any]) -> tuple[str, str]:
    """(system prompt, data block) of a chat-completions request."""
    messages = body["messages"]
    return messages[0]["content"], messages[1]["content"]


def is_extraction(body: dict[str, Any]) -> bool:
    return chat(body)[0] in (prompts.USER_FACTS_EN, prompts.USER_FACTS_ZH)


def facts_json(*texts: str) -> str:
    return json.dumps({"facts": [{"text": t, "type": "personal", "importance": 0.7} for t in texts]},
                      ensure_ascii=False)


def post_turn(server: RunningServer, content: str, key: str | None = None, **fields: Any) -> httpx.Response:
    body = {"messages": [{"role": "user", "content": content}], "user_id": "alice", **fields}
    headers = {"X-API-Key": key} if key else {}
    return httpx.post(server.url + "/memories", json=body, headers=headers, timeout=30)


def get_event(server: RunningServer, event_id: str, key: str | None = None, path: str = "/events/{}") -> httpx.Response:
    headers = {"X-API-Key": key} if key else {}
    return httpx.get(server.url + path.format(event_id), headers=headers, timeout=10)


def wait_for(server: RunningServer, event_id: str, status: str, timeout: float = 10.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        event: dict[str, Any] = ok(get_event(server, event_id))
        if event["status"] == status:
            return event
        assert time.monotonic() < deadline, f"event still {event['status']}, expected {status}: {event}"
        time.sleep(0.05)


# --- async mode -----------------------------------------------------------------------------------------------

def test_async_add_answers_202_at_once_and_the_worker_finishes(fake: FakeOpenAI,
                                                               llm_memory: Callable[..., AsyncMemory],
                                                               make_server: StartServer) -> None:
    fake.responder = lambda body: Reply(content=facts_json("用户住在杭州"), delay=2.0)  # a slow model
    server = make_server(llm_memory(timeout=10.0), worker_poll_interval=0.1)
    started = time.monotonic()
    response = post_turn(server, "我住在杭州", async_mode=True)
    assert time.monotonic() - started < 1.0, "async_mode must not wait for the LLM"
    assert response.status_code == 202, response.text
    body = response.json()
    assert body["status"] == "PENDING" and body["results"] == [] and body["event_id"]

    assert ok(get_event(server, body["event_id"]))["status"] in ("PENDING", "RUNNING")
    event = wait_for(server, body["event_id"], "SUCCEEDED")
    assert time.monotonic() - started >= 1.9  # it really waited for the model
    assert event["extractor"] == "llm" and event["attempts"] == 1 and event["error"] is None
    assert [(r["event"], r["memory"]) for r in event["results"]] == [("ADD", "用户住在杭州")]
    assert ok(get_event(server, body["event_id"], path="/v1/event/{}/")) == event  # mem0 platform's path
    [item] = ok(httpx.get(server.url + "/memories", params={"user_id": "alice"}))["results"]
    assert item["memory"] == "用户住在杭州" and item["id"] == event["results"][0]["id"]
    assert len(fake.chat_requests) == 1


def test_async_add_with_the_llm_down_is_retrying(fake: FakeOpenAI, llm_memory: Callable[..., AsyncMemory],
                                                 make_server: StartServer) -> None:
    fake.responder = lambda body: Reply(status=500, error="upstream exploded")
    server = make_server(llm_memory(), worker_poll_interval=0.1)
    response = post_turn(server, "我住在杭州", async_mode=True)
    assert response.status_code == 202
    event = wait_for(server, response.json()["event_id"], "RETRYING")
    assert event["extractor"] == "offline-fallback" and "500" in event["error"]
    assert [(r["event"], r["memory"]) for r in event["results"]] == [("ADD", "用户住在杭州")]


# --- sync mode ------------------------------------------------------------------------------------------------

def test_sync_add_answers_mem0s_shape(fake: FakeOpenAI, llm_memory: Callable[..., AsyncMemory],
                                      make_server: StartServer) -> None:
    extracted = {"I live in Paris": "Lives in Paris", "I moved to Berlin last month": "Lives in Berlin"}

    def model(body: dict[str, Any]) -> str:
        data = chat(body)[1]
        if is_extraction(body):
            return facts_json(extracted[data.rsplit("user: ", 1)[1].splitlines()[0]])
        shown = re.search(r"^Existing memories: (.*)$", data, re.MULTILINE)
        assert shown is not None, data
        existing = json.loads(shown.group(1))
        [paris] = [e for e in existing if e["text"] == "Lives in Paris"]
        return json.dumps({"memory": [{"id": paris["id"], "text": "Lives in Berlin", "event": "UPDATE",
                                       "old_memory": "Lives in Paris"}]})

    fake.responder = model
    server = make_server(llm_memory())
    first = ok(post_turn(server, "I live in Paris"))
    [added] = first["results"]
    assert added.keys() >= {"id", "memory", "event"}
    assert (added["event"], added["memory"]) == ("ADD", "Lives in Paris")
    [updated] = ok(post_turn(server, "I moved to Berlin last month"))["results"]
    assert updated["id"] == added["id"]
    assert (updated["event"], updated["memory"], updated["previous_memory"]) == (
        "UPDATE", "Lives in Berlin", "Lives in Paris")
    assert ok(get_event(server, first["event_id"]))["status"] == "SUCCEEDED"

    requests = fake.chat_requests
    assert len(requests) == 3  # extraction; extraction + decision
    assert all(r.body["response_format"] == {"type": "json_object"} for r in requests)
    decision = chat(requests[2].body)[1]
    assert not re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-", decision)  # the model sees small ids, never real ones


# --- the LLM is down ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("reply, timeout, says", [
    (Reply(status=500, error="upstream exploded"), 5.0, "500"),
    (Reply(status=429, error="slow down", headers={"Retry-After": "0"}), 5.0, "429"),
    (Reply(content="Sorry, I cannot help with that."), 5.0, "json"),
    (Reply(raw_body="<html>502 Bad Gateway</html>", headers={"content-type": "text/html"}), 5.0, "chat completion"),
    (Reply(content=facts_json("用户住在杭州"), delay=1.0), 0.2, "0.2"),
], ids=["http-500", "http-429", "not-json", "not-a-completion", "too-slow"])
def test_llm_failure_is_not_a_5xx_and_the_turn_is_kept(fake: FakeOpenAI, llm_memory: Callable[..., AsyncMemory],
                                                       make_server: StartServer, reply: Reply, timeout: float,
                                                       says: str) -> None:
    fake.responder = lambda body: reply
    memory = llm_memory(timeout=timeout, llm_timeout=timeout)  # see the next test for why both
    server = make_server(memory)
    response = post_turn(server, "我住在杭州")
    assert response.status_code == 200, response.text
    body = response.json()
    assert [(r["event"], r["memory"]) for r in body["results"]] == [("ADD", "用户住在杭州")]  # offline stood in
    event = ok(get_event(server, body["event_id"]))
    assert event["status"] == "RETRYING" and event["extractor"] == "offline-fallback" and event["attempts"] == 1
    assert says in event["error"].lower() and event["next_attempt_at"]
    assert [m.content for m in memory.store.list_messages(Scope("alice"))] == ["我住在杭州"]
    assert len(fake.chat_requests) == 1  # the client did not retry; the write path will, later


def test_the_configured_llm_timeout_bounds_a_sync_add(fake: FakeOpenAI, make_server: StartServer,
                                                     tmp_path: Path) -> None:
    """JIYI_LLM_TIMEOUT / mem0's llm.config.timeout: configured the way `jiyi serve` builds it, it must bound how long
    a sync add waits for a stuck model."""
    fake.responder = lambda body: Reply(content=facts_json("用户住在杭州"), delay=1.0)
    memory = AsyncMemory.from_config({
        "store": f"sqlite:///{tmp_path / 'configured.db'}", "embedder": "hashing",
        "llm": {"provider": "openai", "model": "fake", "base_url": fake.base_url, "timeout": 0.2, "max_retries": 0},
    })
    server = make_server(memory)
    started = time.monotonic()
    response = post_turn(server, "我住在杭州")
    waited = time.monotonic() - started
    assert response.status_code == 200, response.text
    event = ok(get_event(server, response.json()["event_id"]))
    assert (event["status"], waited < 0.9) == ("RETRYING", True), f"waited {waited:.2f} s for a 0.2 s timeout"


# --- validation and access ------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["m-1", [1, 2], {"id": "m-1"}, [None], ["ok", 3]])
def test_injected_memory_ids_must_be_a_list_of_strings(client: httpx.Client, value: Any) -> None:
    response = client.post("/memories", json={"messages": [{"role": "user", "content": "hi"}], "user_id": "alice",
                                              "injected_memory_ids": value})
    assert response.status_code in (400, 422), response.text
    assert "injected_memory_ids" in detail_text(response)


def test_a_user_key_cannot_read_another_users_event(make_server: StartServer) -> None:
    server = make_server(user_api_keys=KEYS)
    response = post_turn(server, "我住在杭州", key="key-alice")
    assert response.status_code == 200, response.text
    event_id = response.json()["event_id"]
    for path in ("/events/{}", "/v1/event/{}/"):
        assert ok(get_event(server, event_id, "key-alice", path))["user_id"] == "alice"
        stranger = get_event(server, event_id, "key-bob", path)
        assert stranger.status_code == 404 and "用户" not in stranger.text
        assert get_event(server, event_id, None, path).status_code == 401
        assert get_event(server, "no-such-event", "key-alice", path).status_code == 404


def test_history_after_an_offline_update(client: httpx.Client) -> None:
    def said(text: str) -> list[dict[str, Any]]:
        body = {"messages": [{"role": "user", "content": text}], "user_id": "alice"}
        results: list[dict[str, Any]] = ok(client.post("/memories", json=body))["results"]
        return results

    [added] = said("我住在杭州")
    [updated] = said("我搬到上海了")
    assert updated["id"] == added["id"] and updated["event"] == "UPDATE"
    history = ok(client.get(f"/memories/{added['id']}/history"))
    assert [list(row) for row in history] == [HISTORY_COLUMNS, HISTORY_COLUMNS]
    assert [(r["event"], r["old_memory"], r["new_memory"], r["role"]) for r in history] == [
        ("ADD", None, "用户住在杭州", "user"),
        ("UPDATE", "用户住在杭州", updated["memory"], "user"),
    ]
    assert "上海" in updated["memory"]
