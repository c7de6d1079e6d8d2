"""Keys issued with `jiyi keys create` (the real CLI, in a subprocess) used against a real server on the same store:
bound to their user (and agent), scoped, revocable, never stored or shown again, never in logs, errors or metrics."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.conftest import RunningServer

from jiyi import AsyncMemory, build_embedder, build_store
from jiyi.server.auth import KEYS_FRESH
from jiyi.server.limits import RequestLimits


class Keys:
    """`jiyi keys …` on one store file, as an operator runs it."""

    def __init__(self, db: Path) -> None:
        self.db = db

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "JIYI_HOME": str(self.db.parent), "JIYI_EMBEDDER": "hashing"}
        return subprocess.run([sys.executable, "-m", "jiyi", "keys", *args, "--store", f"sqlite:///{self.db}"],
                              capture_output=True, text=True, env=env, check=check, timeout=60)

    def create(self, *args: str) -> dict[str, Any]:
        return json.loads(self.run("create", *args).stdout)  # type: ignore[no-any-return]

    def list(self, *args: str) -> list[dict[str, Any]]:
        return json.loads(self.run("list", *args).stdout)  # type: ignore[no-any-return]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "keys.db"


@pytest.fixture
def keys(db: Path) -> Keys:
    return Keys(db)


@pytest.fixture
def serve(make_server: Callable[..., RunningServer], db: Path) -> Callable[..., RunningServer]:
    def start(**options: Any) -> RunningServer:
        return make_server(AsyncMemory(build_store(f"sqlite:///{db}"), build_embedder("hashing")), **options)
    return start


def call(server: RunningServer, key: str | None, method: str, path: str, **kwargs: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.request(method, server.url + path, headers=headers, timeout=30, **kwargs)


def add(server: RunningServer, key: str | None, text: str, **ids: str) -> httpx.Response:
    return call(server, key, "POST", "/memories", json={"messages": [{"role": "user", "content": text}],
                                                         "infer": False, **ids})


def test_an_issued_key_reaches_its_user_only_until_it_is_revoked(keys: Keys, serve: Callable[..., RunningServer],
                                                                 db: Path) -> None:
    server = serve()
    assert add(server, None, "before any key", user_id="bob").status_code == 200  # open until a key exists
    alice = keys.create("--user", "alice", "--name", "alice's phone")
    assert alice["key"].startswith("jiyi_") and alice["scope"] == "write" and alice["id"].startswith("key_")
    time.sleep(KEYS_FRESH)  # servers learn of the first key within this

    assert add(server, None, "no key now", user_id="bob").status_code == 401
    assert call(server, "jiyi_made-up", "GET", "/memories?user_id=alice").status_code == 401
    mine = add(server, alice["key"], "I keep bees")  # no user_id: the key's own
    assert mine.status_code == 200, mine.text
    memory_id = mine.json()["results"][0]["id"]
    assert call(server, alice["key"], "GET", f"/memories/{memory_id}").json()["user_id"] == "alice"
    assert add(server, alice["key"], "x", user_id="bob").status_code == 403
    bobs = call(server, alice["key"], "POST", "/search", json={"query": "before", "filters": {"user_id": "bob"}})
    assert bobs.status_code == 403

    listed = keys.list()
    assert [k["id"] for k in listed] == [alice["id"]] and listed[0]["last_used_at"] is not None
    assert all("key" not in k and "key_hash" not in k for k in listed)
    assert alice["key"].encode() not in db.read_bytes()  # only the hash is kept

    assert keys.run("revoke", alice["id"]).returncode == 0
    assert keys.run("revoke", alice["id"], check=False).returncode == 2  # already revoked: said, not ignored
    time.sleep(KEYS_FRESH)
    assert call(server, alice["key"], "GET", f"/memories/{memory_id}").status_code == 401
    closed = add(server, None, "the last key is gone", user_id="bob")
    assert closed.status_code == 401  # still closed, not open, and the answer says the way back
    assert "every key issued for it was revoked: run `jiyi keys reopen`" in closed.json()["detail"]
    assert alice["key"] not in closed.text and alice["id"] not in closed.text
    assert keys.list() == [] and keys.list("--all")[0]["revoked_at"] is not None


def test_a_read_key_looks_but_does_not_change(keys: Keys, serve: Callable[..., RunningServer]) -> None:
    writer, reader = keys.create("--user", "alice"), keys.create("--user", "alice", "--scope", "read")
    server = serve()
    memory_id = add(server, writer["key"], "I am allergic to shellfish").json()["results"][0]["id"]
    assert call(server, reader["key"], "POST", "/search", json={"query": "shellfish"}).json()["results"]
    assert call(server, reader["key"], "POST", "/context",
                json={"messages": [{"role": "user", "content": "shellfish for dinner?"}]}).status_code == 200
    assert call(server, reader["key"], "GET", f"/memories/{memory_id}/history").status_code == 200
    refusals = [add(server, reader["key"], "sneaky"),
                call(server, reader["key"], "PUT", f"/memories/{memory_id}", json={"text": "changed"}),
                call(server, reader["key"], "DELETE", f"/memories/{memory_id}"),
                call(server, reader["key"], "POST", "/v3/memories/add/", json={"messages": "sneaky"})]
    assert [r.status_code for r in refusals] == [403] * 4
    assert all('scope \\"read\\"' in r.text or "read but not change" in r.text for r in refusals)
    assert call(server, writer["key"], "GET", f"/memories/{memory_id}").json()["memory"] == \
        "I am allergic to shellfish"


def test_an_agent_key_stays_with_its_agent(keys: Keys, serve: Callable[..., RunningServer]) -> None:
    helper = keys.create("--user", "alice", "--agent", "helper")
    whole = keys.create("--user", "alice")
    server = serve()
    other = add(server, whole["key"], "told the coach", agent_id="coach").json()["results"][0]["id"]
    mine = add(server, helper["key"], "told the helper").json()["results"][0]
    assert call(server, whole["key"], "GET", f"/memories/{mine['id']}").json()["agent_id"] == "helper"
    assert call(server, helper["key"], "GET", f"/memories/{other}").status_code == 404
    assert call(server, helper["key"], "GET", "/memories?agent_id=coach").status_code == 403
    listed = call(server, helper["key"], "GET", "/memories").json()["results"]
    assert [m["memory"] for m in listed] == ["told the helper"]
    # Deleting its user (as mem0's reset() does) deletes only what the agent's key reaches.
    deleted = call(server, helper["key"], "DELETE", "/v2/entities/user/alice/").json()["deleted"]
    assert deleted == {"memories": 1, "entities": [{"type": "agent", "name": "helper"}]}
    assert call(server, helper["key"], "DELETE", "/v2/entities/agent/coach/").status_code == 404
    assert call(server, whole["key"], "GET", f"/memories/{other}").json()["memory"] == "told the coach"


def test_an_admin_key_and_the_environments_keys_work_beside_issued_ones(
        keys: Keys, serve: Callable[..., RunningServer]) -> None:
    admin = keys.create("--scope", "admin")
    assert keys.run("create", "--scope", "admin", "--user", "alice", check=False).returncode == 2
    server = serve(user_api_keys={"env-key-carol": "carol"})
    assert add(server, "env-key-carol", "carol's note").status_code == 200
    assert call(server, admin["key"], "POST", "/maintain").status_code == 200
    everything = call(server, admin["key"], "GET", "/memories").json()["results"]
    assert [m["memory"] for m in everything] == ["carol's note"]
    assert call(server, "env-key-carol", "POST", "/maintain").status_code == 403


def test_a_key_never_reaches_logs_errors_or_metrics(keys: Keys, serve: Callable[..., RunningServer],
                                                     caplog: pytest.LogCaptureFixture) -> None:
    issued = keys.create("--user", "alice")
    server = serve(admin_api_key="admin-secret-value", limits=RequestLimits(rate_per_minute=5))
    caplog.set_level(logging.DEBUG)
    answers = [add(server, issued["key"], "hello"),
               call(server, "wrong-secret-value", "GET", "/memories"),
               call(server, issued["key"], "POST", "/search", json={"query": "x", "user_id": "bob"}),
               call(server, issued["key"], "POST", "/reset")]
    answers += [call(server, issued["key"], "GET", "/memories") for _ in range(6)]
    assert answers[-1].status_code == 429 and int(answers[-1].headers["Retry-After"]) >= 1
    metrics = call(server, "admin-secret-value", "GET", "/metrics").text
    seen = "\n".join([caplog.text, metrics, *(r.text for r in answers), *(str(r.headers) for r in answers)])
    for secret in (issued["key"], "wrong-secret-value", "admin-secret-value"):
        assert secret not in seen
