"""The LLM refuses connections, hangs, or answers garbage: adds still answer (no 5xx), the offline rules stand in at
once, the turns stay RETRYING, and once the LLM is back the worker retries them with it (docs/write-path.md, "Nothing
is lost")."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from jiyi.testing.fake_openai import FakeOpenAI, Reply
from tests.conftest import free_port
from tests.reliability.conftest import StartServer, echo_model, llm_config, wait_for_events

BROKEN: dict[str, Callable[[dict[str, object]], Reply | str]] = {
    "hanging": lambda body: Reply(content=echo_model(body), delay=60.0),
    "garbage": lambda body: "Sure! Here are the facts you asked for: the user, allergies, peanuts, etc.",
}


@pytest.mark.parametrize("failure", ["refused", "hanging", "garbage"])
def test_turns_survive_an_llm_outage_and_are_retried_with_it(serve: StartServer, fake: FakeOpenAI,
                                                             failure: str) -> None:
    if failure == "refused":
        port = free_port()  # nothing listens here until the LLM "comes back" below
        base_url = f"http://127.0.0.1:{port}/v1"
    else:
        fake.responder = BROKEN[failure]
        base_url = fake.base_url
    config = {"llm": llm_config(base_url, timeout=1.0), "write": {"retry_delay": 1.0}}
    server = serve(config=config)
    with server.client() as client:
        turn = {"messages": [{"role": "user", "content": "我对花生过敏"}], "user_id": "alice"}
        sync = client.post("/memories", json=turn)
        assert sync.status_code == 200, sync.text  # the caller gets the offline answer, not an error
        assert [r["memory"] for r in sync.json()["results"]] == ["用户对花生过敏"]
        queued = client.post("/memories", json={**turn, "messages": [{"role": "user", "content": "I moved to Berlin"}],
                                                "async_mode": True})
        assert queued.status_code == 202
        event_ids = [sync.json()["event_id"], queued.json()["event_id"]]
        retrying = wait_for_events(client, event_ids, "RETRYING", timeout=30)
        assert {e["extractor"] for e in retrying.values()} == {"offline-fallback"}
        assert all(e["error"] and e["next_attempt_at"] for e in retrying.values())
        stored = {m["memory"] for m in client.get("/memories", params={"user_id": "alice"}).json()["results"]}
        assert {"用户对花生过敏", "User moved to Berlin"} <= stored, stored  # what the rules found is kept

        if failure == "refused":
            back = FakeOpenAI(echo_model, port=port).start()
        else:
            fake.responder = echo_model
            back = fake
        try:
            done = wait_for_events(client, event_ids, "SUCCEEDED", timeout=45)
            assert {e["extractor"] for e in done.values()} == {"llm"}
            assert all(e["attempts"] >= 2 for e in done.values())
            stored = {m["memory"] for m in client.get("/memories", params={"user_id": "alice"}).json()["results"]}
            assert {"User said: 我对花生过敏", "User said: I moved to Berlin"} <= stored
            assert any("I moved to Berlin" in str(r.body) for r in back.chat_requests)
        finally:
            if back is not fake:
                back.stop()
