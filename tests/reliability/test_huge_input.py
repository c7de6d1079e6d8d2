"""Huge inputs are refused fast (413, within a second, naming the limit) and do not slow down other users: while
5 MB bodies arrive, another user's searches still answer quickly. Depends on the request limits (JIYI_MAX_*)."""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable, Iterator

import httpx

from tests.reliability.conftest import StartServer

HUGE = 5 * 1024 * 1024


def timed(send: Callable[[], httpx.Response]) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = send()
    return response, time.monotonic() - started


def chunks(text: str, size: int = 64 * 1024) -> Iterator[bytes]:
    data = text.encode("utf-8")
    for i in range(0, len(data), size):
        yield data[i:i + size]


def test_huge_inputs_are_refused_fast_and_do_not_slow_other_users(serve: StartServer) -> None:
    server = serve()
    with server.client(timeout=30) as bob:
        facts = [{"role": "user", "content": f"bob's fact {i}: I like {['tea', 'chess', '猫'][i % 3]}"}
                 for i in range(50)]
        assert bob.post("/memories", json={"messages": facts, "user_id": "bob", "infer": False}).status_code == 200
        search = {"query": "what does bob like to drink", "filters": {"user_id": "bob"}, "top_k": 5}
        idle = []
        for _ in range(30):
            response, seconds = timed(lambda: bob.post("/search", json=search))
            assert response.status_code == 200
            idle.append(seconds)

        busy: list[float] = []
        stop = threading.Event()

        def bob_searches() -> None:
            with server.client(timeout=30) as own:
                while not stop.is_set():
                    response, seconds = timed(lambda: own.post("/search", json=search))
                    assert response.status_code == 200
                    busy.append(seconds)

        searcher = threading.Thread(target=bob_searches)
        searcher.start()
        try:
            with server.client(timeout=30) as alice:
                huge = "我" * (HUGE // 3)  # 5 MB of UTF-8
                refusals = {
                    "add": lambda: alice.post("/memories", json={
                        "messages": [{"role": "user", "content": huge}], "user_id": "alice", "infer": False}),
                    "search": lambda: alice.post("/search", json={"query": huge, "filters": {"user_id": "alice"}}),
                    "chunked add": lambda: alice.post(  # no Content-Length: refused once 1 MiB has arrived
                        "/memories", headers={"content-type": "application/json"},
                        content=chunks('{"user_id": "alice", "infer": false, "messages": [{"role": "user", '
                                       f'"content": "{huge}"}}]}}')),
                    "message over 64k characters": lambda: alice.post("/memories", json={
                        "messages": [{"role": "user", "content": "x" * 70_000}], "user_id": "alice", "infer": False}),
                    "query over 4000 characters": lambda: alice.post("/search", json={
                        "query": "tea " * 1001, "filters": {"user_id": "alice"}}),
                }
                for name, send in refusals.items():
                    for _ in range(3):
                        response, seconds = timed(send)
                        assert response.status_code == 413, f"{name}: {response.status_code} {response.text[:200]}"
                        assert seconds < 1.0, f"{name}: refused after {seconds:.2f} s"
                        assert "limit" in response.json()["detail"], response.text
                detail = alice.post("/search", json={"query": "tea " * 1001, "user_id": "alice"}).json()["detail"]
                assert "query" in detail and "4,000" in detail
                assert alice.get("/memories", params={"user_id": "alice"}).json()["results"] == []
        finally:
            stop.set()
            searcher.join(30)
    assert len(busy) >= 5
    idle_p99, busy_worst = statistics.quantiles(idle, n=100)[98], max(busy)
    assert busy_worst < max(0.5, 5 * idle_p99), f"bob's search took {busy_worst:.3f} s (idle p99 {idle_p99:.3f} s)"
