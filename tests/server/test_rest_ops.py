"""Operations over HTTP: health, docs, request ids, Prometheus metrics, the admin key, internal errors."""

from __future__ import annotations

import http.client
import json
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from rest_helpers import add, add_all, list_memories, ok, search

from jiyi import AsyncMemory, build_embedder, build_store

ADMIN_KEY = "admin-key-for-tests"
MEM0_ROUTES = {
    ("/configure", "get"), ("/configure", "post"), ("/memories", "post"), ("/memories", "get"),
    ("/memories", "delete"), ("/memories/{memory_id}", "get"), ("/memories/{memory_id}", "put"),
    ("/memories/{memory_id}", "delete"), ("/memories/{memory_id}/history", "get"), ("/search", "post"),
    ("/reset", "post"),
}


def metric_samples(client: httpx.Client) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    response = client.get("/metrics")
    assert response.status_code == 200
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def sample(samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str) -> float | None:
    return samples.get((name, frozenset(labels.items())))


# --- health, docs, request ids ------------------------------------------------------------------------------


def test_health_is_ok_and_cheap(client: httpx.Client) -> None:
    assert ok(client.get("/health"))["status"] == "ok"
    add_all(client, ["I like rain", "I like snow"])
    health = ok(client.get("/health"))
    assert health["status"] == "ok" and health["embedder"].startswith("hashing")
    assert "memories" not in health  # no counting on a liveness probe: counts are in /metrics


def test_docs_page_is_served(client: httpx.Client) -> None:
    response = client.get("/docs")
    assert response.status_code == 200
    assert "swagger" in response.text.lower()


def test_openapi_lists_every_mem0_route(client: httpx.Client) -> None:
    paths = ok(client.get("/openapi.json"))["paths"]
    listed = {(path, method) for path, operations in paths.items() for method in operations}
    assert not MEM0_ROUTES - listed, f"missing from /openapi.json: {sorted(MEM0_ROUTES - listed)}"


def test_request_id_is_echoed(client: httpx.Client) -> None:
    assert client.get("/health", headers={"X-Request-ID": "trace-42"}).headers["X-Request-ID"] == "trace-42"


def test_request_id_is_echoed_on_errors(client: httpx.Client) -> None:
    response = client.get("/memories/no-such-id", headers={"X-Request-ID": "trace-404"})
    assert response.status_code == 404
    assert response.headers["X-Request-ID"] == "trace-404"


def test_request_id_is_generated_when_absent(client: httpx.Client) -> None:
    first = client.get("/health").headers.get("X-Request-ID")
    second = client.get("/health").headers.get("X-Request-ID")
    assert first and second and first != second


# --- metrics ------------------------------------------------------------------------------------------------


def test_metrics_count_adds_searches_store_size_and_requests(client: httpx.Client) -> None:
    ok(client.post("/memories", json={"messages": [{"role": "user", "content": "I like rain"},
                                                   {"role": "assistant", "content": "Rain is nice"}],
                                      "user_id": "alice", "infer": False}))
    doomed = add(client, "I like snow")["id"]
    add(client, "I like sun", user_id="bob")
    search(client, "rain", user_id="alice")
    ok(client.delete(f"/memories/{doomed}"))
    # Counted as what was stored (a fact), not as what the request said (nothing, or "episodic").
    extracted = ok(client.post("/memories", json={"messages": [{"role": "user", "content": "我对花生过敏"}],
                                                  "user_id": "carol", "memory_type": None}))["results"]
    assert [r["memory_type"] for r in extracted] == ["fact"]
    ok(client.get("/memories", params={"user_id": "carol"}))  # carol's evidence is kept after her add answered

    samples = metric_samples(client)
    assert sample(samples, "memory_add_total", memory_type="episodic") == 4
    assert sample(samples, "memory_add_total", memory_type="fact") == 1
    # rain + its reply + sun (infer=false), and the message carol's fact came from, kept as evidence (the allergy
    # itself is a core memory, in the long-term layer).
    assert sample(samples, "memory_store_size", layer="short_term") == 4
    assert sample(samples, "memory_search_latency_seconds_count") == 1
    assert sample(samples, "http_requests_total", method="POST", route="/memories", status="200") == 4
    assert sample(samples, "http_requests_total", method="POST", route="/search", status="200") == 1
    # The embedding model's work: one query (the search), the passages of every memory and message stored.
    assert sample(samples, "memory_embedding_texts_total", kind="query") == 1
    assert sample(samples, "memory_embedding_model_calls_total", kind="query") == 1
    assert (sample(samples, "memory_embedding_texts_total", kind="passage") or 0) >= 5
    assert (sample(samples, "memory_embedding_model_seconds_total", kind="passage") or 0) > 0
    # A lone search finds the first engine free: nothing ran on a second one (exported all the same).
    assert sample(samples, "memory_embedding_second_engine_calls_total") == 0
    assert sample(samples, "memory_embedding_second_engine_texts_total") == 0


def test_metrics_use_route_templates_not_raw_paths(client: httpx.Client) -> None:
    memory_id = add(client, "I like rain")["id"]
    ok(client.get(f"/memories/{memory_id}"))
    samples = metric_samples(client)
    assert sample(samples, "http_requests_total", method="GET", route="/memories/{memory_id}", status="200") == 1
    assert not any(memory_id in str(labels) for _, labels in samples)


# --- admin key ----------------------------------------------------------------------------------------------


@pytest.fixture
def admin_client(make_server: Callable[..., Any]) -> Iterator[httpx.Client]:
    server = make_server(admin_api_key=ADMIN_KEY)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        yield client


def admin_requests(tmp_path: Path) -> dict[str, dict[str, Any]]:
    return {
        "POST /configure": {"method": "POST", "url": "/configure",
                            "json": {"history_db_path": str(tmp_path / "new.db"), "embedder": "hashing"}},
        "GET /configure": {"method": "GET", "url": "/configure"},
        "POST /reset": {"method": "POST", "url": "/reset"},
        "DELETE /memories": {"method": "DELETE", "url": "/memories", "params": {"user_id": "alice"}},
    }


ADMIN_ROUTES = ["POST /configure", "GET /configure", "POST /reset", "DELETE /memories"]
NO_KEY: dict[str, str] = {}
WRONG_KEYS = [{"X-API-Key": "wrong"}, {"Authorization": f"Bearer {ADMIN_KEY}x"}, {"Authorization": ADMIN_KEY}]
GOOD_KEYS = [{"X-API-Key": ADMIN_KEY}, {"Authorization": f"Bearer {ADMIN_KEY}"}]


@pytest.mark.parametrize("route", ADMIN_ROUTES)
def test_admin_route_refuses_missing_or_wrong_key(admin_client: httpx.Client, tmp_path: Path, route: str) -> None:
    memory_id = add(admin_client, "I keep this")["id"]
    for headers in [NO_KEY, *WRONG_KEYS]:
        response = admin_client.request(**admin_requests(tmp_path)[route], headers=headers)
        assert response.status_code == 401, (headers, response.text)
        assert "api key" in response.json()["detail"].lower()
    assert [item["id"] for item in list_memories(admin_client, user_id="alice")] == [memory_id]


@pytest.mark.parametrize("headers", GOOD_KEYS, ids=["x-api-key", "bearer"])
@pytest.mark.parametrize("route", ADMIN_ROUTES)
def test_admin_route_accepts_the_key(admin_client: httpx.Client, tmp_path: Path, route: str,
                                     headers: dict[str, str]) -> None:
    add(admin_client, "I may be deleted")
    response = admin_client.request(**admin_requests(tmp_path)[route], headers=headers)
    assert response.status_code == 200, response.text
    if route in ("POST /reset", "DELETE /memories"):
        assert list_memories(admin_client, user_id="alice") == []


def test_normal_routes_need_no_key_on_an_admin_server(admin_client: httpx.Client) -> None:
    memory_id = add(admin_client, "I like rain")["id"]
    assert list_memories(admin_client, user_id="alice")[0]["id"] == memory_id
    assert ok(admin_client.get(f"/memories/{memory_id}"))["memory"] == "I like rain"
    assert search(admin_client, "rain", user_id="alice")[0]["id"] == memory_id
    ok(admin_client.put(f"/memories/{memory_id}", json={"text": "I love rain"}))
    assert len(ok(admin_client.get(f"/memories/{memory_id}/history"))) == 2
    ok(admin_client.delete(f"/memories/{memory_id}"))
    for path in ("/health", "/metrics", "/docs", "/openapi.json"):
        assert admin_client.get(path).status_code == 200, path


# --- internal errors ----------------------------------------------------------------------------------------


@pytest.fixture
def broken_search(make_server: Callable[..., Any], tmp_path: Path) -> Iterator[httpx.Client]:
    """A server whose keyword index was dropped behind its back: /search fails inside, other routes work."""
    db_path = tmp_path / "broken.db"
    server = make_server(AsyncMemory(build_store(f"sqlite:///{db_path}"), build_embedder("hashing")))
    with httpx.Client(base_url=server.url, timeout=30) as client:
        add(client, "I like rain")
        with sqlite3.connect(db_path) as db:
            db.execute("DROP TABLE memory_fts")
        yield client


def test_internal_error_is_a_generic_500_with_the_request_id(broken_search: httpx.Client) -> None:
    response = broken_search.post("/search", json={"query": "rain", "user_id": "alice"},
                                  headers={"X-Request-ID": "trace-500"})
    assert response.status_code == 500
    assert "memory_fts" not in response.text  # no internals in the body
    assert "X-Request-ID" in response.json()["detail"]
    assert response.headers.get("X-Request-ID") == "trace-500"


def test_the_connection_stays_usable_after_an_internal_error(broken_search: httpx.Client) -> None:
    """Keep-alive clients (httpx, requests sessions) reuse the connection: the server must keep it open after a
    500 or announce `Connection: close`, never drop it silently."""
    url = httpx.URL(str(broken_search.base_url))
    connection = http.client.HTTPConnection(url.host, url.port, timeout=10)
    try:
        connection.request("POST", "/search", body=json.dumps({"query": "rain", "user_id": "alice"}),
                           headers={"Content-Type": "application/json"})
        first = connection.getresponse()
        first.read()
        assert first.status == 500
        time.sleep(0.3)  # let a close from the server arrive, so the outcome does not depend on timing
        try:
            connection.request("GET", "/health")
            second = connection.getresponse().status
        except (ConnectionError, http.client.HTTPException) as exc:
            pytest.fail(f"server dropped the keep-alive connection after a 500 without Connection: close: {exc!r}")
        assert second == 200
    finally:
        connection.close()


def test_internal_errors_are_counted_in_metrics(broken_search: httpx.Client) -> None:
    broken_search.post("/search", json={"query": "rain", "user_id": "alice"})
    with httpx.Client(base_url=broken_search.base_url, timeout=30) as other:
        samples = metric_samples(other)
    assert sample(samples, "http_requests_total", method="POST", route="/search", status="500") == 1
