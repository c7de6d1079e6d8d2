"""The reliability suite drives `jiyi serve` as a real subprocess on 127.0.0.1, the way it runs in production: it is
killed, stopped, restarted on the same file, and shares that file with a second server. Helpers live here.

The hashing embedder keeps each server start to a couple of seconds; nothing here measures retrieval quality."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import free_port

START_TIMEOUT = 60.0  # a start is ~2 s idle; two cores shared with other test runs make it slower
SHUTDOWN_MARGIN = 3.0  # seconds past JIYI_SHUTDOWN_GRACE a SIGTERM-ed server may take to be gone


class ServerProcess:
    """One `python -m jiyi serve` subprocess on a free port of 127.0.0.1, its output in `log`."""

    def __init__(self, db: Path, log: Path, env: dict[str, str], port: int | None = None,
                 store: str | None = None) -> None:
        """`store`: a store URL (a PostgreSQL database) instead of the SQLite file `db`."""
        self.db = db
        self.store = store or f"sqlite:///{db}"
        self.log = log
        self.env = env
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, attempts: int = 3) -> ServerProcess:
        command = [sys.executable, "-m", "jiyi", "serve", "--port", str(self.port), "--store", self.store]
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(command, env=self.env, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.process.poll() is not None:
                if "address already in use" in self.log_tail(5) and attempts > 1:
                    # free_port() races with every other process picking ports on this machine; take another.
                    self.port = free_port()
                    self.url = f"http://127.0.0.1:{self.port}"
                    return self.start(attempts - 1)
                raise AssertionError(f"jiyi serve exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                response = httpx.get(self.url + "/health", timeout=2)
                # The store in the answer tells our server from another process that took the port first.
                ours = self.store.rsplit("/", 1)[-1]  # the file, or the database's name (the URL is shown redacted)
                if response.status_code == 200 and response.json().get("store", "").endswith(ours):
                    return self
            except (httpx.HTTPError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"jiyi serve did not answer /health in {START_TIMEOUT:g} s:\n{self.log_tail()}")
            time.sleep(0.05)

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def terminate(self, timeout: float = 30.0) -> tuple[int, float]:
        """SIGTERM; (exit status, seconds until the process was gone). Kills it if it outlives `timeout`."""
        assert self.process is not None
        started = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            status = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"jiyi serve outlived SIGTERM by {timeout:g} s:\n{self.log_tail()}") from None
        return status, time.monotonic() - started

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs, as in a crash or an OOM kill."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def client(self, timeout: float = 30.0) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=timeout)

    def async_client(self, timeout: float = 30.0, connections: int = 100) -> httpx.AsyncClient:
        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
        return httpx.AsyncClient(base_url=self.url, timeout=timeout, limits=limits)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


StartServer = Callable[..., ServerProcess]


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (the workers of `jiyi serve --workers N`)."""
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
        except OSError:
            continue
        if fields.get("PPid", "").strip() == str(pid):
            found.append(int(status.parent.name))
    return found


def server_env(home: Path, config: dict[str, Any] | None = None, **variables: str) -> dict[str, str]:
    """The environment of a test server: hashing embedder, no scheduled maintenance, no JIYI_* of the caller's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("JIYI_")}
    env.update(JIYI_HOME=str(home), JIYI_EMBEDDER="hashing", JIYI_MAINTENANCE_INTERVAL="0", JIYI_LOG_LEVEL="warning",
               JIYI_SHUTDOWN_GRACE="2")
    if config is not None:
        path = home / f"config-{len(list(home.glob('config-*.json')))}.json"
        path.write_text(json.dumps(config), encoding="utf-8")
        env["JIYI_CONFIG_FILE"] = str(path)
    env.update(variables)
    return env


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[StartServer]:
    """`serve(db=None, port=None, config=None, store=None, **JIYI_variables)`: start `jiyi serve` (on the SQLite file
    `db`, or the store URL `store`) and wait for /health. Every
    server still running at the end of the test is killed. `config` is written to a JSON config file."""
    started: list[ServerProcess] = []

    def start(db: Path | None = None, port: int | None = None, config: dict[str, Any] | None = None,
              store: str | None = None, **variables: str) -> ServerProcess:
        server = ServerProcess(db or tmp_path / "memory.db", tmp_path / f"server-{len(started)}.log",
                               server_env(tmp_path, config, **variables), port, store)
        started.append(server)
        return server.start()

    yield start
    for server in started:
        workers = children(server.pid) if server.running() else []
        server.kill()
        for pid in workers:  # a killed master leaves its workers behind
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def wait_until(predicate: Callable[[], Any], timeout: float, what: str, interval: float = 0.1) -> Any:
    """Poll `predicate` until it returns something truthy; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


def events(client: httpx.Client, event_ids: list[str]) -> dict[str, dict[str, Any]]:
    """GET /events/{id} for each id."""
    answers = {}
    for event_id in event_ids:
        response = client.get(f"/events/{event_id}")
        assert response.status_code == 200, f"event {event_id}: {response.status_code} {response.text}"
        answers[event_id] = response.json()
    return answers


def wait_for_events(client: httpx.Client, event_ids: list[str], status: str, timeout: float) -> dict[str, Any]:
    """Wait until every event has `status`; returns the events. Fails listing the ones that did not get there."""
    deadline = time.monotonic() + timeout
    while True:
        current = events(client, event_ids)
        behind = {i: e["status"] for i, e in current.items() if e["status"] != status}
        if not behind:
            return current
        if time.monotonic() > deadline:
            raise AssertionError(f"{len(behind)} of {len(event_ids)} events not {status} after {timeout:g} s: "
                                 f"{sorted(set(behind.values()))}")
        time.sleep(0.2)


def integrity_check(db: Path) -> str:
    with sqlite3.connect(db) as connection:
        return str(connection.execute("PRAGMA integrity_check").fetchone()[0])


def query(db: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """Read the store directly (what the server wrote, not what it answers)."""
    connection = sqlite3.connect(db, timeout=30)
    try:
        return list(connection.execute(sql, params).fetchall())
    finally:
        connection.close()


def turn_statuses(db: Path) -> dict[str, int]:
    return dict(query(db, "SELECT status, COUNT(*) FROM turns GROUP BY status"))


def echo_model(body: dict[str, Any]) -> str:
    """A well-behaved LLM for the fake server: extraction answers one fact per user line ("User said: …"), the
    decision step adds every new fact. Deterministic, so a test can name the memories it expects."""
    data = str(body["messages"][-1]["content"])
    if data.startswith("Conversation:"):
        said = [line.removeprefix("user: ") for line in data.splitlines() if line.startswith("user: ")]
        return json.dumps({"facts": [{"text": f"User said: {text}", "type": "personal", "importance": 0.6}
                                     for text in said]}, ensure_ascii=False)
    new = next((line.removeprefix("New facts: ") for line in data.splitlines() if line.startswith("New facts: ")),
               "[]")
    return json.dumps({"memory": [{"event": "ADD", "text": fact} for fact in json.loads(new)]}, ensure_ascii=False)


def llm_config(base_url: str, timeout: float = 30.0) -> dict[str, Any]:
    """The config-file `llm` section for an OpenAI-compatible endpoint, without client retries (the write path's
    own retries are what the suite checks)."""
    return {"provider": "openai", "model": "fake", "base_url": base_url, "timeout": timeout, "max_retries": 0}
