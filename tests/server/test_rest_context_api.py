"""POST /context as an API: bad input, tenancy, metrics, and CORS for browser clients (real HTTP on 127.0.0.1)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from rest_helpers import add, detail_text, ok
from tests.conftest import RunningServer

StartServer = Callable[..., RunningServer]
MESSAGES = [{"role": "system", "content": "You are Lin."}, {"role": "user", "content": "Who is Jesica?"}]
ORIGIN = "http://127.0.0.1:8000"


@pytest.mark.parametrize("body, field", [
    ({"messages": []}, "messages"),
    ({"messages": [{"role": "wizard", "content": "x"}]}, "role"),
    ({"messages": MESSAGES, "top_k": 0}, "top_k"),
    ({"messages": MESSAGES, "budget_chars": 10}, "budget_chars"),
    ({"messages": MESSAGES, "deadline_ms": 5}, "deadline_ms"),
    ({"messages": MESSAGES, "min_relevance": 3}, "min_relevance"),
    ({"messages": MESSAGES, "filters": {"kind": {"between": 1}}}, "between"),
    ({"messages": MESSAGES, "only_stages": ["guess"]}, "only_stages"),
    ({"messages": MESSAGES, "only_stages": []}, "only_stages"),
])
def test_bad_input_is_a_4xx_naming_the_field(client: httpx.Client, body: dict[str, Any], field: str) -> None:
    response = client.post("/context", json={"user_id": "alice", **body})
    assert 400 <= response.status_code < 500, response.text
    assert field in detail_text(response)


def test_a_scope_is_required(client: httpx.Client) -> None:
    response = client.post("/context", json={"messages": MESSAGES})
    assert response.status_code == 400 and "user_id" in detail_text(response)


def test_a_user_key_only_ever_recalls_its_own_memories(make_server: StartServer) -> None:
    server = make_server(admin_api_key="admin", user_api_keys={"key-alice": "alice", "key-bob": "bob"})
    with httpx.Client(base_url=server.url, timeout=30) as admin:
        admin.headers["X-API-Key"] = "admin"
        add(admin, "Jesica is my sister", user_id="alice")
        add(admin, "Jesica is my boss", user_id="bob")
    with httpx.Client(base_url=server.url, timeout=30, headers={"X-API-Key": "key-bob"}) as bob:
        refused = bob.post("/context", json={"messages": MESSAGES, "user_id": "alice"})
        assert refused.status_code == 403
        own = ok(bob.post("/context", json={"messages": MESSAGES, "min_relevance": 0}))  # user_id from the key
        assert [m["memory"] for m in own["memories"]] == ["Jesica is my boss"]


def test_only_the_stages_asked_for_run(client: httpx.Client) -> None:
    add(client, "Jesica is my sister", user_id="alice")
    # The caller searched the question and the context itself; now it has its own rewrite.
    body = {"messages": [*MESSAGES[:1], {"role": "user", "content": "remember her?"}], "user_id": "alice",
            "rewrite": True, "rewritten_query": "Who is Jesica, the user's sister?", "only_stages": ["rewrite"]}
    result = ok(client.post("/context", json=body))
    assert [(s["stage"], s["outcome"]) for s in result["stages"]] == [
        ("question", "skipped"), ("context", "skipped"), ("rewrite", "hit")]
    assert [m["memory"] for m in result["memories"]] == ["Jesica is my sister"]
    question_only = ok(client.post("/context", json={**body, "only_stages": ["question"]}))
    assert [(s["stage"], s["outcome"]) for s in question_only["stages"]] == [
        ("question", "miss"), ("context", "skipped"), ("rewrite", "skipped")]


def test_context_is_measured(client: httpx.Client) -> None:
    add(client, "Jesica is my sister", user_id="alice")
    ok(client.post("/context", json={"messages": MESSAGES, "user_id": "alice"}))
    metrics = client.get("/metrics").text
    assert "memory_context_latency_seconds_count 1.0" in metrics
    assert 'memory_context_stage_total{outcome="hit",stage="question"} 1.0' in metrics
    assert "memory_context_degraded_total 0.0" in metrics


def test_cors_preflight_and_responses_for_an_allowed_origin(make_server: StartServer) -> None:
    server = make_server(cors_origins=[ORIGIN])
    with httpx.Client(base_url=server.url, timeout=30) as client:
        preflight = client.options("/context", headers={
            "Origin": ORIGIN, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type,x-api-key"})
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == ORIGIN
        assert "POST" in preflight.headers["access-control-allow-methods"]
        assert "x-api-key" in preflight.headers["access-control-allow-headers"].lower()
        answer = client.post("/context", json={"messages": MESSAGES, "user_id": "alice"}, headers={"Origin": ORIGIN})
        assert answer.status_code == 200 and answer.headers["access-control-allow-origin"] == ORIGIN
        assert "x-request-id" in answer.headers["access-control-expose-headers"].lower()
        error = client.post("/context", json={"messages": []}, headers={"Origin": ORIGIN})
        assert error.status_code == 422 and error.headers["access-control-allow-origin"] == ORIGIN


def test_other_origins_get_no_cors_headers(make_server: StartServer) -> None:
    server = make_server(cors_origins=[ORIGIN])
    with httpx.Client(base_url=server.url, timeout=30) as client:
        preflight = client.options("/context", headers={"Origin": "https://evil.example",
                                                         "Access-Control-Request-Method": "POST"})
        assert preflight.status_code == 400 and "access-control-allow-origin" not in preflight.headers
        answer = client.post("/search", json={"query": "x", "user_id": "a"}, headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in answer.headers


def test_cors_is_off_by_default(client: httpx.Client) -> None:
    preflight = client.options("/context", headers={"Origin": ORIGIN, "Access-Control-Request-Method": "POST"})
    assert "access-control-allow-origin" not in preflight.headers
