"""Webhooks end to end: mem0's webhook routes on a real server, and a real HTTP receiver on 127.0.0.1 that checks
every delivery's signature. Receivers go down and come back, servers are killed and restarted, two servers share one
file; the retry backoff is shortened so that all of it takes seconds."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.conftest import RunningServer, free_port
from tests.reliability.conftest import ServerProcess, server_env, wait_until

from jiyi import AsyncMemory, Memory, build_embedder, build_store
from jiyi.records import Event, utcnow
from jiyi.stores.base import MemoryStore, WebhookStore
from jiyi.webhooks import SIGNATURE_HEADER, DeliveryStatus, Webhook, verify_signature
from jiyi.webhooks.dispatcher import WebhookOptions, fan_out
from jiyi.webhooks.events import event_types_of
from jiyi.webhooks.model import EventType

FAST = WebhookOptions(poll_interval=0.05, timeout=1.0, retry_base=0.2, retry_max=0.5)
ALL_TYPES = ["memory_add", "memory_update", "memory_delete", "memory_forget", "memory_merge", "memory_promote"]


class Receiver:
    """An HTTP server on 127.0.0.1 that keeps every POST it gets. `answer` is the status it replies with, `delay` the
    seconds it waits first (a receiver that hangs). stop() and start() again: the same port, down and back."""

    def __init__(self, port: int | None = None, answer: int = 200, delay: float = 0.0) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.answer = answer
        self.delay = delay
        self.received: list[tuple[dict[str, str], bytes]] = []
        self._server: ThreadingHTTPServer | None = None

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                time.sleep(receiver.delay)
                receiver.received.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(receiver.answer)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(body) for _, body in self.received]

    def wait_for(self, count: int, timeout: float = 15.0) -> list[dict[str, Any]]:
        wait_until(lambda: len(self.received) >= count, timeout, f"{count} deliveries (got {len(self.received)})",
                   interval=0.02)
        return self.bodies()


@pytest.fixture
def receivers() -> Iterator[Callable[..., Receiver]]:
    made: list[Receiver] = []

    def make(**options: Any) -> Receiver:
        made.append(Receiver(**options))
        return made[-1]

    yield make
    for receiver in made:
        receiver.stop()


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., ServerProcess]]:
    """`jiyi serve` as a subprocess on `db`, with the JIYI_* variables given; killed at the end of the test."""
    started: list[ServerProcess] = []

    def start(db: Path, **variables: str) -> ServerProcess:
        server = ServerProcess(db, tmp_path / f"server-{len(started)}.log", server_env(tmp_path, None, **variables))
        started.append(server)
        return server.start()

    yield start
    for server in started:
        server.kill()


def created(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 201, f"{response.status_code} {response.text}"
    return response.json()


def ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, f"{response.request.method} {response.request.url.path}: " \
                                        f"{response.status_code} {response.text}"
    return response.json()


def add(client: httpx.Client, text: str, user_id: str = "alice", infer: bool = False) -> list[dict[str, Any]]:
    body = {"messages": [{"role": "user", "content": text}], "user_id": user_id, "infer": infer}
    return ok(client.post("/memories", json=body))["results"]


def register(client: httpx.Client, url: str, project: str = "default", **fields: Any) -> dict[str, Any]:
    return created(client.post(f"/api/v1/webhooks/projects/{project}/", json={"url": url, "name": "test", **fields}))


def by_type(bodies: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for body in bodies:
        grouped.setdefault(body["event_type"], []).append(body)
    return grouped


def test_webhooks_are_created_listed_changed_and_deleted_at_mem0s_paths(client: httpx.Client) -> None:
    hook = register(client, "https://example.com/hook", event_types=["memory_add", "memory:delete"])
    assert hook["secret"].startswith("whsec_") and len(hook["secret"]) > 30
    assert hook["event_types"] == ["memory_add", "memory_delete"]  # mem0's older "memory:delete" spelling too
    assert hook["project"] == "default" and hook["is_active"] is True and hook["last_delivery"] is None
    hook_id = hook["webhook_id"]

    listed = ok(client.get("/api/v1/webhooks/projects/default/"))
    assert [h["webhook_id"] for h in listed] == [hook_id]
    assert "secret" not in listed[0]  # shown once, at creation

    changed = ok(client.put(f"/api/v1/webhooks/{hook_id}/", json={"name": "renamed", "event_types": ["memory_forget"]}))
    assert changed["message"] == "Webhook updated successfully"
    assert (changed["name"], changed["event_types"], changed["url"]) == ("renamed", ["memory_forget"],
                                                                          "https://example.com/hook")
    assert ok(client.get(f"/api/v1/webhooks/{hook_id}/"))["name"] == "renamed"
    assert register(client, "http://example.com/all")["event_types"] == ALL_TYPES  # none asked: every type

    bad = client.post("/api/v1/webhooks/projects/default/", json={"url": "ftp://example.com/x"})
    assert bad.status_code == 400 and bad.json()["detail"].startswith("url:")
    bad = client.post("/api/v1/webhooks/projects/default/", json={"url": "http://example.com", "event_types": ["x"]})
    assert bad.status_code == 400 and "event_types" in bad.json()["detail"] and "memory_forget" in bad.json()["detail"]
    bad = client.put(f"/api/v1/webhooks/{hook_id}/", json={"url": "not a url"})
    assert bad.status_code == 400 and bad.json()["detail"].startswith("url:")
    assert client.get("/api/v1/webhooks/projects/someone-else/").status_code == 404

    assert ok(client.delete(f"/api/v1/webhooks/{hook_id}/")) == {"message": "Webhook deleted successfully"}
    assert client.put(f"/api/v1/webhooks/{hook_id}/", json={"name": "x"}).status_code == 404
    assert client.delete(f"/api/v1/webhooks/{hook_id}/").status_code == 404
    assert hook_id not in {h["webhook_id"] for h in ok(client.get("/api/v1/webhooks/projects/default/"))}


def test_memory_categorize_follows_an_add_and_a_new_text_with_mem0s_categories(
        make_server: Callable[..., RunningServer], receivers: Callable[..., Receiver]) -> None:
    receiver = receivers().start()
    server = make_server(webhooks=FAST)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        hook = register(client, receiver.url, event_types=["memory_add", "memory:categorize"])
        assert hook["event_types"] == ["memory_add", "memory_categorize"]
        added = add(client, "用户对花生过敏")[0]
        receiver.wait_for(2)
        ok(client.put(f"/memories/{added['id']}", json={"text": "用户每周踢两次足球"}))
        ok(client.put(f"/memories/{added['id']}", json={"metadata": {"checked": True}}))  # the text stays: no event
        receiver.wait_for(3)
        time.sleep(0.3)  # an unexpected event would arrive now
        bodies = receiver.bodies()
        assert "memory_categorize" not in register(client, "http://example.com/all")["event_types"]  # when asked
    assert [b["event_type"] for b in bodies] == ["memory_add", "memory_categorize", "memory_categorize"]
    add_body, first, second = bodies
    assert first["event_details"]["id"] == second["event_details"]["id"] == added["id"]
    assert first["event_details"]["event"] == "CATEGORIZE"
    assert first["event_details"]["data"]["memory"] == "用户对花生过敏"
    assert first["event_details"]["data"]["categories"][0] == "health"
    assert second["event_details"]["data"]["categories"][0] == "sports"
    assert first["id"] == add_body["id"] + ":categorize"  # the change it follows, told apart from its memory_add


def test_an_adds_categories_are_not_told_once_its_text_has_changed(store: MemoryStore) -> None:
    """Categories are kept per memory, not per version: read after a new text, they are that text's. The add's
    memory_categorize is then left to the new text's (it once said 'sports' for 用户对花生过敏)."""
    memory = AsyncMemory(store, build_embedder("hashing"))

    async def scenario() -> None:
        [added] = (await memory.add("用户对花生过敏", user_id="alice", infer=False))["results"]
        before = [event_types_of(change) for change in store.changes_after(0, 10)]
        await memory.update(added["id"], text="用户每周踢两次足球")
        after = [(change.event.event, event_types_of(change)) for change in store.changes_after(0, 10)]
        assert before == [[EventType.ADD, EventType.CATEGORIZE]]
        assert after == [(Event.ADD, [EventType.ADD]), (Event.UPDATE, [EventType.UPDATE, EventType.CATEGORIZE])]

    asyncio.run(scenario())


def test_a_receiver_gets_signed_deliveries_for_add_update_delete_and_forget(
        make_server: Callable[..., RunningServer], receivers: Callable[..., Receiver]) -> None:
    receiver = receivers().start()
    server = make_server(webhooks=FAST)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        hook = register(client, receiver.url)
        added = add(client, "I live in Wuxi")[0]
        ok(client.put(f"/memories/{added['id']}", json={"text": "I live in Suzhou"}))
        ok(client.delete(f"/memories/{added['id']}"))
        hiking = add(client, "I love hiking.", infer=True)
        forgotten = add(client, "forget that", infer=True)
        expected = 3 + 2 * len(hiking)  # add, update, delete; each hiking memory added, then forgotten
        receiver.wait_for(expected)
        time.sleep(0.3)  # an unexpected event (the evidence message kept beneath a memory) would arrive now
        bodies = receiver.bodies()
    assert len(bodies) == expected, [b["event_type"] for b in bodies]

    events = by_type(bodies)
    assert [e["event_details"]["data"]["memory"] for e in events["memory_add"]] == \
           ["I live in Wuxi", *(r["memory"] for r in hiking)]
    [update] = events["memory_update"]
    assert update["event_details"]["data"] == {"memory": "I live in Suzhou", "old_memory": "I live in Wuxi"}
    [delete] = events["memory_delete"]
    assert (delete["event_details"]["id"], delete["event_details"]["event"]) == (added["id"], "DELETE")
    assert delete["event_details"]["data"]["memory"] == "I live in Suzhou"  # what was deleted
    hiking_ids = {r["id"] for r in hiking}
    assert hiking_ids and hiking_ids <= {r["id"] for r in forgotten if r["event"] == "DELETE"}
    forget = events["memory_forget"]
    assert {e["event_details"]["id"] for e in forget} == hiking_ids
    assert all(e["event_details"]["reason"] == "the user asked to forget it" for e in forget)
    for body in bodies:
        assert body["webhook_id"] == hook["webhook_id"] and body["project_id"] == "default"
        assert body["event_details"]["user_id"] == "alice"

    assert len({headers["x-jiyi-delivery"] for headers, _ in receiver.received}) == len(receiver.received)
    for headers, raw in receiver.received:
        assert headers["content-type"] == "application/json"
        assert headers["x-jiyi-event"] == json.loads(raw)["event_type"]
        assert verify_signature(hook["secret"], headers[SIGNATURE_HEADER.lower()], raw)
        assert not verify_signature(hook["secret"], headers[SIGNATURE_HEADER.lower()], raw + b" ")
        assert not verify_signature("whsec_another", headers[SIGNATURE_HEADER.lower()], raw)
    stamp = int(receiver.received[0][0][SIGNATURE_HEADER.lower()].split(",")[0].removeprefix("t="))
    assert not verify_signature(hook["secret"], receiver.received[0][0][SIGNATURE_HEADER.lower()],
                                receiver.received[0][1], now=stamp + 600)  # a replay, ten minutes later


def test_deliveries_to_a_receiver_that_is_down_are_retried_until_it_is_back(
        make_server: Callable[..., RunningServer], receivers: Callable[..., Receiver],
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="jiyi")
    receiver = receivers()  # not started: connections are refused
    server = make_server(webhooks=FAST)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        hook = register(client, receiver.url, event_types=["memory_add"])
        ids = [add(client, text)[0]["id"] for text in ("I like tea", "I have a cat")]

        def retried() -> Any:
            answer = ok(client.get(f"/api/v1/webhooks/{hook['webhook_id']}/deliveries/"))
            return len(answer) == 2 and all(d["attempts"] >= 2 for d in answer) and answer

        waiting = wait_until(retried, 15, "two failed attempts of each delivery")
        assert all(d["status"] == "pending" and d["last_status_code"] is None and d["last_error"] for d in waiting)
        assert all(d["next_attempt_at"] is not None for d in waiting)
        seen = ok(client.get(f"/api/v1/webhooks/{hook['webhook_id']}/"))
        assert seen["last_delivery"]["status"] == "retrying" and seen["deliveries"] == {"pending": 2}
        assert receiver.url not in seen["last_delivery"]["error"]

        receiver.start()
        bodies = receiver.wait_for(2)
        assert sorted(b["event_details"]["id"] for b in bodies) == sorted(ids)

        def delivered() -> Any:
            answer = ok(client.get(f"/api/v1/webhooks/{hook['webhook_id']}/"))
            return answer["deliveries"] == {"delivered": 2} and answer
        seen = wait_until(delivered, 10, "both deliveries marked delivered")
        assert seen["last_delivery"]["status"] == "delivered" and seen["last_delivery"]["status_code"] == 200
        log = ok(client.get(f"/api/v1/webhooks/{hook['webhook_id']}/deliveries/"))
        assert all(d["status"] == "delivered" and d["attempts"] >= 3 and d["next_attempt_at"] is None for d in log)
    assert hook["secret"] not in caplog.text


def test_a_receiver_answering_500_is_retried_and_a_delivery_is_given_up_after_its_attempts(
        make_server: Callable[..., RunningServer], receivers: Callable[..., Receiver]) -> None:
    receiver = receivers(answer=500).start()
    server = make_server(webhooks=WebhookOptions(poll_interval=0.05, timeout=1.0, retry_base=0.05, retry_max=0.1,
                                                 max_attempts=3))
    with httpx.Client(base_url=server.url, timeout=30) as client:
        hook = register(client, receiver.url)
        add(client, "I like tea")
        wait_until(lambda: ok(client.get(f"/api/v1/webhooks/{hook['webhook_id']}/"))["deliveries"] == {"failed": 1},
                   10, "the delivery given up")
        [delivery] = ok(client.get(f"/api/v1/webhooks/{hook['webhook_id']}/deliveries/"))
        assert (delivery["attempts"], delivery["last_status_code"]) == (3, 500)
        assert ok(client.get(f"/api/v1/webhooks/{hook['webhook_id']}/"))["last_delivery"]["status"] == "failed"
    assert len(receiver.received) == 3


def test_nothing_is_lost_when_the_server_is_killed_and_restarted(
        serve: Callable[..., ServerProcess], receivers: Callable[..., Receiver], tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    fast = {"JIYI_WEBHOOK_RETRY_BASE": "0.2", "JIYI_WEBHOOK_RETRY_MAX": "0.5", "JIYI_WEBHOOK_TIMEOUT": "1",
            "JIYI_WEBHOOK_POLL_INTERVAL": "0.05"}
    receiver = receivers()  # down while the first server runs
    first = serve(db, **fast)
    with first.client() as client:
        hook = register(client, receiver.url, event_types=["memory_add", "memory_delete"])
        queued = [add(client, text)[0]["id"] for text in ("I like tea", "I have a cat")]

        def attempted() -> bool:
            log = ok(client.get(f"/api/v1/webhooks/{hook['webhook_id']}/deliveries/"))
            return len(log) == 2 and all(d["attempts"] >= 1 for d in log)
        wait_until(attempted, 15, "a failed attempt of each delivery")
        unsent = add(client, "I play the piano")[0]["id"]  # killed before its change may even be queued
        ok(client.delete(f"/memories/{queued[0]}"))
    first.kill()

    receiver.start()
    second = serve(db, **fast)
    bodies = receiver.wait_for(4, timeout=30)
    assert sorted((b["event_type"], b["event_details"]["id"]) for b in bodies) == sorted(
        [("memory_add", i) for i in [*queued, unsent]] + [("memory_delete", queued[0])])
    with second.client() as client:
        log = ok(client.get(f"/api/v1/webhooks/{hook['webhook_id']}/deliveries/"))
    assert len(log) == 4 and {d["status"] for d in log} == {"delivered"}
    for headers, raw in receiver.received:
        assert verify_signature(hook["secret"], headers[SIGNATURE_HEADER.lower()], raw)


def test_a_user_keys_webhooks_hear_only_that_users_memories(
        make_server: Callable[..., RunningServer], receivers: Callable[..., Receiver]) -> None:
    keys = {"admin_api_key": "admin", "user_api_keys": {"key-alice": "alice", "key-bob": "bob"}}
    server = make_server(webhooks=WebhookOptions(poll_interval=0.05, private_urls=True), **keys)
    alice_hooks, bob_hooks, all_hooks = receivers().start(), receivers().start(), receivers().start()
    as_alice = httpx.Client(base_url=server.url, headers={"X-API-Key": "key-alice"}, timeout=30)
    as_bob = httpx.Client(base_url=server.url, headers={"Authorization": "Token key-bob"}, timeout=30)
    as_admin = httpx.Client(base_url=server.url, headers={"X-API-Key": "admin"}, timeout=30)
    with as_alice, as_bob, as_admin:
        alices = register(as_alice, alice_hooks.url, project="user-alice")
        bobs = register(as_bob, bob_hooks.url, project="user-bob")
        register(as_admin, all_hooks.url)
        assert alices["project"] == "user-alice"
        assert as_alice.get("/api/v1/webhooks/projects/user-bob/").status_code == 404
        assert as_alice.get("/api/v1/webhooks/projects/default/").status_code == 404
        assert as_alice.post("/api/v1/webhooks/projects/user-bob/", json={"url": alice_hooks.url}).status_code == 404
        for call in (as_alice.get, as_alice.delete):
            assert call(f"/api/v1/webhooks/{bobs['webhook_id']}/").status_code == 404
        assert as_alice.put(f"/api/v1/webhooks/{bobs['webhook_id']}/", json={"name": "x"}).status_code == 404
        assert as_alice.get(f"/api/v1/webhooks/{bobs['webhook_id']}/deliveries/").status_code == 404
        assert httpx.get(f"{server.url}/api/v1/webhooks/projects/default/").status_code == 401

        alice_ids = {add(as_alice, "I like tea")[0]["id"], add(as_alice, "I have a cat")[0]["id"]}
        bob_ids = {add(as_bob, "I like coffee", user_id="bob")[0]["id"]}
        every = all_hooks.wait_for(3)
        time.sleep(0.5)  # time for any stray delivery to the users' receivers to arrive
    assert {b["event_details"]["id"] for b in every} == alice_ids | bob_ids
    assert {b["event_details"]["id"] for b in alice_hooks.bodies()} == alice_ids
    assert {b["event_details"]["id"] for b in bob_hooks.bodies()} == bob_ids

    guarded = make_server(**keys)  # private_urls off (the default): a user key may not point the server inside
    with httpx.Client(base_url=guarded.url, headers={"X-API-Key": "key-alice"}, timeout=30) as as_alice:
        refused = as_alice.post("/api/v1/webhooks/projects/user-alice/", json={"url": alice_hooks.url})
        assert refused.status_code == 400 and refused.json()["detail"].startswith("url:")
    with httpx.Client(base_url=guarded.url, headers={"X-API-Key": "admin"}, timeout=30) as as_admin:
        register(as_admin, alice_hooks.url)  # the admin runs the server: its network is its own


def test_a_hanging_receiver_slows_neither_the_request_nor_other_webhooks(
        make_server: Callable[..., RunningServer], receivers: Callable[..., Receiver]) -> None:
    hanging = receivers(delay=8.0).start()
    healthy = receivers().start()
    server = make_server(webhooks=WebhookOptions(poll_interval=0.05, timeout=6.0))
    with httpx.Client(base_url=server.url, timeout=30) as client:
        register(client, hanging.url)
        register(client, healthy.url)
        add(client, "warm up")
        time.sleep(0.3)  # the hanging receiver now holds a delivery
        started = time.monotonic()
        for text in ("I like tea", "I have a cat", "I play the piano"):
            add(client, text)
        took = time.monotonic() - started
        healthy.wait_for(4, timeout=3)
    assert took < 3, f"three adds took {took:.2f} s with a receiver that hangs"
    assert len(hanging.received) == 0  # still hanging on the first


def test_two_servers_on_one_file_send_each_change_once(
        make_server: Callable[..., RunningServer], receivers: Callable[..., Receiver], tmp_path: Path) -> None:
    receiver = receivers().start()
    db = tmp_path / "shared.db"
    servers = [make_server(AsyncMemory(build_store(f"sqlite:///{db}"), build_embedder("hashing")), webhooks=FAST)
               for _ in range(2)]
    clients = [httpx.Client(base_url=s.url, timeout=30) for s in servers]
    try:
        hook = register(clients[0], receiver.url, event_types=["memory_add"])
        ids = [add(clients[i % 2], f"fact number {i}")[0]["id"] for i in range(12)]
        bodies = receiver.wait_for(12)
        time.sleep(0.5)  # a duplicate would arrive now
        assert sorted(b["event_details"]["id"] for b in receiver.bodies()) == sorted(ids)
        assert ok(clients[1].get(f"/api/v1/webhooks/{hook['webhook_id']}/"))["deliveries"] == {"delivered": 12}
        assert len(bodies) == 12
    finally:
        for c in clients:
            c.close()


# --- the store's queue, without a server -----------------------------------------------------------------------

def webhook_store(store: MemoryStore) -> WebhookStore:
    assert isinstance(store, WebhookStore), f"{type(store).__name__} keeps no webhooks"
    return store


def test_a_change_is_queued_once_and_a_delivery_claimed_by_one_process_at_a_time(
        memory: Memory, tmp_path: Path) -> None:
    store = webhook_store(memory.store)
    memory.add("said before the webhook existed", user_id="alice", infer=False)
    hook = Webhook(project_id="default", url="http://127.0.0.1:9/hook", name="t", event_types=ALL_TYPES,
                   secret="whsec_x")
    store.add_webhook(hook)
    assert fan_out(store) == 1 and store.list_deliveries(hook.id) == []  # a webhook hears only later changes
    memory.add("I like tea", user_id="alice", infer=False)
    memory.add("I have a cat", user_id="bob", infer=False)

    cursor = store.webhook_cursor()
    assert store.enqueue_deliveries([], cursor - 1, cursor + 5) is False  # another process moved the cursor first
    assert fan_out(store) == 2 and fan_out(store) == 0
    assert [d.event_type for d in store.list_deliveries(hook.id)] == ["memory_add", "memory_add"]

    second_process = build_store(memory.store.url)  # a second connection to the file, as another process has
    other = webhook_store(second_process)
    try:
        now = utcnow()
        first = store.claim_deliveries(now, now + timedelta(seconds=30), 10)
        assert len(first) == 1  # one per webhook: the oldest
        assert json.loads(first[0].body)["event_details"]["data"]["memory"] == "I like tea"
        assert other.claim_deliveries(now, now + timedelta(seconds=30), 10, [hook.id]) == []
        second = other.claim_deliveries(now, now + timedelta(seconds=30), 10)
        assert [d.id for d in second] != [d.id for d in first] and len(second) == 1
        assert store.claim_deliveries(now, now + timedelta(seconds=30), 10) == []  # both leased
        later = now + timedelta(seconds=31)
        assert {d.id for d in other.claim_deliveries(later, later + timedelta(seconds=30), 10)} == {first[0].id}

        delivery = second[0]
        delivery.status, delivery.attempts, delivery.last_status_code = DeliveryStatus.DELIVERED, 1, 204
        other.record_attempt(delivery, later)
        seen = store.get_webhook(hook.id)
        assert seen is not None and (seen.last_status, seen.last_status_code) == ("delivered", 204)
        assert store.delivery_counts(hook.id) == {"delivered": 1, "pending": 1}
        assert store.prune_deliveries(later + timedelta(seconds=1)) == 1
    finally:
        second_process.close()
    assert store.delete_webhook(hook.id) and store.list_deliveries(hook.id) == []


def test_after_a_reset_the_log_starts_again_and_webhooks_still_hear_it(memory: Memory) -> None:
    store = webhook_store(memory.store)
    for text in ("one", "two", "three"):
        memory.add(text, user_id="alice", infer=False)
    hook = Webhook(project_id="default", url="http://127.0.0.1:9/hook", name="t", event_types=["memory_add"],
                   secret="whsec_x")
    store.add_webhook(hook)
    fan_out(store)
    memory.reset()
    memory.add("after the reset", user_id="alice", infer=False)
    fan_out(store)
    [delivery] = store.list_deliveries(hook.id)
    assert json.loads(delivery.body)["event_details"]["data"]["memory"] == "after the reset"


def test_mem0s_python_sdk_manages_webhooks_and_gets_signed_deliveries(
        make_server: Callable[..., RunningServer], receivers: Callable[..., Receiver],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEM0_TELEMETRY", "False")  # read when mem0 is imported: no PostHog calls from tests
    import mem0  # a dev dependency (pyproject); imported here, after the telemetry switch above
    from mem0.exceptions import MemoryNotFoundError
    receiver = receivers().start()
    server = make_server(user_api_keys={"key-alice": "alice"}, webhooks=WebhookOptions(poll_interval=0.05,
                                                                                       private_urls=True))
    client = mem0.MemoryClient(api_key="key-alice", host=server.url)
    assert client.project_id == "user-alice"  # from /v1/ping/: the key's project

    hook = client.create_webhook(url=receiver.url, name="sdk", project_id=client.project_id,
                                 event_types=["memory_add", "memory_delete"])
    assert [h["webhook_id"] for h in client.get_webhooks(client.project_id)] == [hook["webhook_id"]]
    changed = client.update_webhook(hook["webhook_id"], name="renamed", event_types=["memory_add"])
    assert (changed["name"], changed["event_types"]) == ("renamed", ["memory_add"])

    stored = client.add("I like green tea", user_id="alice", infer=False)["results"]
    [body] = receiver.wait_for(1)
    assert body["event_details"]["id"] == stored[0]["id"] and body["event_details"]["data"]["memory"] == \
        "I like green tea"
    headers, raw = receiver.received[0]
    assert verify_signature(hook["secret"], headers[SIGNATURE_HEADER.lower()], raw)

    assert client.delete_webhook(hook["webhook_id"]) == {"message": "Webhook deleted successfully"}
    assert client.get_webhooks(client.project_id) == []
    with pytest.raises(MemoryNotFoundError):
        client.update_webhook(hook["webhook_id"], name="gone")
