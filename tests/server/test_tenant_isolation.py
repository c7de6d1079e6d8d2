"""User API keys tie a caller to one user_id: the tenant isolation mem0's server does not have."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from tests.conftest import RunningServer

KEYS = {"key-alice": "alice", "key-bob": "bob"}


@pytest.fixture
def closed(make_server: Callable[..., RunningServer]) -> RunningServer:
    return make_server(admin_api_key="admin-key", user_api_keys=KEYS)


def call(server: RunningServer, method: str, path: str, key: str | None = None, **kwargs: object) -> httpx.Response:
    headers = {"X-API-Key": key} if key else {}
    return httpx.request(method, server.url + path, headers=headers, timeout=10, **kwargs)  # type: ignore[arg-type]


def add(server: RunningServer, key: str, text: str, **ids: str) -> str:
    body = {"messages": [{"role": "user", "content": text}], "infer": False, **ids}
    response = call(server, "POST", "/memories", key, json=body)
    assert response.status_code == 200, response.text
    return str(response.json()["results"][0]["id"])


def test_user_key_fills_in_and_is_bound_to_its_user(closed: RunningServer) -> None:
    alice_memory = add(closed, "key-alice", "alice's diary: I love hiking")
    assert call(closed, "GET", f"/memories/{alice_memory}", "key-alice").json()["user_id"] == "alice"
    add(closed, "key-bob", "bob's diary: I love hiking too", user_id="bob")
    found = call(closed, "POST", "/search", "key-alice", json={"query": "hiking diary"}).json()["results"]
    assert [item["user_id"] for item in found] == ["alice"]


@pytest.mark.parametrize("method, path, body", [
    ("POST", "/memories", {"messages": [{"role": "user", "content": "x"}], "user_id": "bob", "infer": False}),
    ("POST", "/search", {"query": "diary", "user_id": "bob"}),
    ("POST", "/search", {"query": "diary", "filters": {"user_id": "bob"}}),
    ("GET", "/memories?user_id=bob", None),
])
def test_asking_for_another_user_is_forbidden(closed: RunningServer, method: str, path: str, body: object) -> None:
    response = call(closed, method, path, "key-alice", json=body)
    assert response.status_code == 403
    assert "own user" in response.json()["detail"]


def test_another_users_memory_is_not_found_by_id(closed: RunningServer) -> None:
    bob_memory = add(closed, "key-bob", "bob's secret")
    for method, path, body in [("GET", f"/memories/{bob_memory}", None),
                               ("PUT", f"/memories/{bob_memory}", {"text": "hacked"}),
                               ("DELETE", f"/memories/{bob_memory}", None),
                               ("GET", f"/memories/{bob_memory}/history", None)]:
        assert call(closed, method, path, "key-alice", json=body).status_code == 404
    assert call(closed, "GET", f"/memories/{bob_memory}", "key-bob").json()["memory"] == "bob's secret"


def test_keys_are_required_and_checked(closed: RunningServer) -> None:
    assert call(closed, "POST", "/search", None, json={"query": "x", "user_id": "alice"}).status_code == 401
    assert call(closed, "POST", "/search", "wrong", json={"query": "x", "user_id": "alice"}).status_code == 401
    assert call(closed, "POST", "/reset", "key-alice").status_code == 403
    assert call(closed, "GET", "/health").status_code == 200
    bearer = httpx.post(closed.url + "/search", json={"query": "x"}, headers={"Authorization": "Bearer key-bob"})
    assert bearer.status_code == 200


def test_admin_key_sees_every_user(closed: RunningServer) -> None:
    add(closed, "key-bob", "bob's note")
    assert len(call(closed, "GET", "/memories?user_id=bob", "admin-key").json()["results"]) == 1
    assert call(closed, "POST", "/reset", "admin-key").status_code == 200


# Every operator on user_id under a user key: either the key's own scope (a condition can only narrow it) or a 403.
# None may answer 500 or return bob's memory.
USER_ID_FILTERS = {
    "in both": ({"in": ["alice", "bob"]}, 403),
    "in bob": ({"in": ["bob"]}, 403),
    "in own": ({"in": ["alice"]}, 200),
    "in a string": ({"in": "bob"}, 403),
    "eq bob": ({"eq": "bob"}, 403),
    "eq own": ({"eq": "alice"}, 200),
    "eq a number": ({"eq": 7}, 403),
    "ne own": ({"ne": "alice"}, 200),
    "ne bob": ({"ne": "bob"}, 200),
    "nin own": ({"nin": ["alice"]}, 200),
    "gt empty": ({"gt": ""}, 200),
    "contains b": ({"contains": "b"}, 200),
    "a list": (["alice", "bob"], 403),
    "a number": (5, 403),
    "null": (None, 200),
    "star": ("*", 200),
    "empty object": ({}, 400),
    "unknown operator": ({"like": "b%"}, 400),
}


@pytest.mark.parametrize("condition, status", USER_ID_FILTERS.values(), ids=USER_ID_FILTERS.keys())
@pytest.mark.parametrize("route", ["/search", "/context"])
def test_user_id_filters_with_operators_stay_in_the_keys_scope(closed: RunningServer, route: str,
                                                               condition: object, status: int) -> None:
    add(closed, "key-bob", "bob's diary: I love hiking too")
    add(closed, "key-alice", "alice's diary: I love hiking")
    body: dict[str, object] = {"filters": {"user_id": condition}}
    body |= {"query": "hiking diary"} if route == "/search" else {
        "messages": [{"role": "user", "content": "hiking diary"}], "min_relevance": 0}
    nested = {**body, "filters": {"OR": [{"user_id": condition}, {"user_id": "bob"}]}}
    for sent in (body, nested):
        response = call(closed, "POST", route, "key-alice", json=sent)
        assert response.status_code < 500, response.text
        if sent is body:
            assert response.status_code == status, response.text
        if response.status_code == 200:
            found = response.json()["memories" if route == "/context" else "results"]
            assert {item.get("user_id", "alice") for item in found} <= {"alice"}
            assert not any("bob" in item["memory"] for item in found)
        else:
            assert response.json()["detail"]
