"""Request limits are settable, and a refusal is fast: a 5 MB body is answered before it is read or parsed."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

import httpx
import pytest
from tests.conftest import RunningServer

from jiyi.server.limits import RequestLimits, json_depth
from jiyi.settings import Settings


def test_limits_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JIYI_MAX_BODY_BYTES", "2048")
    monkeypatch.setenv("JIYI_MAX_QUERY_CHARS", "50")
    limits = RequestLimits(**Settings().request_limits())
    assert (limits.max_body_bytes, limits.max_query_chars, limits.max_message_chars) == (2048, 50, 65_536)


def test_configured_limits_are_the_ones_enforced(make_server: Callable[..., RunningServer]) -> None:
    server = make_server(limits=RequestLimits(max_body_bytes=2048, max_query_chars=50, max_json_depth=4))
    with httpx.Client(base_url=server.url, timeout=10) as client:
        search = {"user_id": "alice", "query": "q" * 50}
        assert client.post("/search", json=search).status_code == 200
        too_long = client.post("/search", json={**search, "query": "q" * 51})
        assert too_long.status_code == 413 and "50 (JIYI_MAX_QUERY_CHARS)" in too_long.json()["detail"]
        message = {"role": "user", "content": "x" * 3000}
        body = client.post("/memories", json={"user_id": "alice", "messages": [message]})
        assert body.status_code == 413 and "2,048" in body.json()["detail"]
        deep = client.post("/search", json={**search, "query": "q", "filters": {"a": {"in": [[1]]}}})
        assert deep.status_code == 400 and "limit is 4" in deep.json()["detail"]
        assert body.headers["x-request-id"]  # refusals before routing still carry an id


def test_a_5mb_body_is_refused_within_a_second_without_being_read(server: RunningServer) -> None:
    """Content-Length says it all: the answer comes before the client has sent the body."""
    head = (b"POST /memories HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 5242880\r\n\r\n")
    started = time.perf_counter()
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(head + b'{"messages": [{"role": "user", "content": "' + b"x" * 65_536)
        answer = b""
        while not answer.endswith(b"}") and (chunk := sock.recv(4096)):  # headers and body may come apart
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 413")
    assert b"JIYI_MAX_BODY_BYTES" in answer
    assert time.perf_counter() - started < 1.0


def test_a_5mb_chunked_body_is_cut_off_at_the_limit(client: httpx.Client) -> None:
    def chunks():  # no Content-Length: the server counts while it reads
        for _ in range(80):
            yield b"x" * 65_536

    started = time.perf_counter()
    response = client.post("/search", content=chunks(), headers={"content-type": "application/json"})
    assert response.status_code == 413
    assert time.perf_counter() - started < 1.0


def test_json_depth_counts_containers_without_recursion() -> None:
    assert json_depth("x") == 0
    assert json_depth({"a": [1, {"b": []}]}) == 4
    deep: object = []
    for _ in range(100_000):
        deep = [deep]
    assert json_depth(deep) == 100_001
