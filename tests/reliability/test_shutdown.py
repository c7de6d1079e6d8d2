"""SIGTERM stops `jiyi serve` within JIYI_SHUTDOWN_GRACE (plus a small margin) whatever is running, and the turns
it had not finished are still queued: the next start processes them."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
from pydantic import ValidationError

from jiyi.settings import Settings
from jiyi.testing.fake_openai import FakeOpenAI, Reply
from tests.reliability.conftest import (
    SHUTDOWN_MARGIN,
    StartServer,
    echo_model,
    llm_config,
    turn_statuses,
    wait_for_events,
    wait_until,
)


def test_shutdown_grace_is_a_bounded_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().shutdown_grace == 10
    monkeypatch.setenv("JIYI_SHUTDOWN_GRACE", "3")
    assert Settings().shutdown_grace == 3
    monkeypatch.setenv("JIYI_SHUTDOWN_GRACE", "60")
    with pytest.raises(ValidationError, match="shutdown_grace"):
        Settings()


def test_sigterm_while_extractions_wait_for_a_slow_llm_keeps_the_turns(serve: StartServer, fake: FakeOpenAI) -> None:
    grace = 2
    fake.responder = lambda body: Reply(content=echo_model(body), delay=120.0)  # an LLM that does not answer in time
    config = {"llm": llm_config(fake.base_url, timeout=120.0)}
    server = serve(config=config, JIYI_SHUTDOWN_GRACE=str(grace))
    with server.client() as client:
        event_ids = []
        for i in range(8):  # four users, two turns each
            response = client.post("/memories", json={"messages": [{"role": "user", "content": f"I keep stamp {i}"}],
                                                      "user_id": f"user{i % 4}", "async_mode": True})
            assert response.status_code == 202, response.text
            event_ids.append(response.json()["event_id"])

    outcome: list[object] = []

    def sync_add() -> None:  # an in-flight request: the caller waits for the slow LLM
        try:
            outcome.append(httpx.post(server.url + "/memories", timeout=60, json={
                "messages": [{"role": "user", "content": "I keep stamp 99"}], "user_id": "user9"}).status_code)
        except httpx.HTTPError as exc:
            outcome.append(exc)

    caller = threading.Thread(target=sync_add)
    caller.start()
    # The worker's first batch (the first turn; the others were queued behind it) and the caller wait for the LLM.
    wait_until(lambda: len(fake.chat_requests) >= 2, 30, "the worker and the caller to be waiting for the LLM")

    status, took = server.terminate()
    caller.join(10)
    assert status == 0, server.log_tail()
    assert took <= grace + SHUTDOWN_MARGIN, f"SIGTERM took {took:.1f} s with a grace of {grace:g} s"
    assert outcome and outcome[0] != 200  # the stuck request was cut short, not answered as if it had worked
    # Nothing left leased to the dead process: every unfinished turn is back in the queue, due now.
    assert turn_statuses(server.db) == {"queued": 9}

    fake.responder = echo_model  # the LLM answers again
    restarted = serve(config=config, JIYI_SHUTDOWN_GRACE=str(grace))
    with restarted.client() as client:
        done = wait_for_events(client, event_ids, "SUCCEEDED", timeout=30)
        assert {e["extractor"] for e in done.values()} == {"llm"}
        stored = {m["memory"] for u in range(4)
                  for m in client.get("/memories", params={"user_id": f"user{u}"}).json()["results"]}
        assert stored == {f"User said: I keep stamp {i}" for i in range(8)}
        wait_until(lambda: turn_statuses(server.db) == {"done": 9}, 30, "the cut-short sync turn to be processed")
    status, took = restarted.terminate()
    assert status == 0 and took <= grace + SHUTDOWN_MARGIN


@pytest.fixture
def silent_endpoint() -> Iterator[tuple[str, list[socket.socket]]]:
    """A port that accepts connections and never answers: whoever calls it waits in a blocking read."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1", accepted
    stop.set()
    thread.join(5)
    for connection in accepted:
        connection.close()
    listener.close()


def test_sigterm_while_a_request_is_stuck_in_a_worker_thread(serve: StartServer,
                                                             silent_endpoint: tuple[str, list[socket.socket]]) -> None:
    """The query embedding of a search blocks a worker thread (a remote embedder that never answers; its client
    times out after 10 s). Python cannot interrupt that thread, and the interpreter would join it on exit."""
    grace = 1
    base_url, accepted = silent_endpoint
    server = serve(JIYI_EMBEDDER="openai:stuck", JIYI_EMBEDDER_BASE_URL=base_url, JIYI_EMBEDDER_DIMS="8",
                   JIYI_SHUTDOWN_GRACE=str(grace))
    outcome: list[object] = []

    def search() -> None:
        try:
            outcome.append(httpx.post(server.url + "/search", json={"query": "tea", "user_id": "alice"},
                                      timeout=60).status_code)
        except httpx.HTTPError as exc:
            outcome.append(exc)

    caller = threading.Thread(target=search)
    caller.start()
    wait_until(lambda: accepted, 30, "the embedding call to be in flight")
    started = time.monotonic()
    status, took = server.terminate()
    caller.join(10)
    assert status == 0, server.log_tail()
    assert took <= grace + SHUTDOWN_MARGIN, f"SIGTERM took {took:.1f} s with a grace of {grace:g} s"
    assert time.monotonic() - started < 10  # gone before the stuck embedding call could have timed out
    assert outcome and outcome[0] != 200
