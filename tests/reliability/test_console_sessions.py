"""The console's sign-in across real `jiyi serve` processes: a session opened through one worker of `--workers 2` is
known to the other (sessions live in the store), a restart keeps it, and a revoked managed key ends it within a few
seconds on every process."""

from __future__ import annotations

import http.client
import os
import time
from pathlib import Path

from jiyi import build_store
from jiyi.keys import new_key
from jiyi.records import utcnow
from jiyi.server.auth import KEYS_FRESH
from tests.reliability.conftest import ServerProcess, StartServer, children, wait_until

ADMIN_KEY = "admin-key-for-the-console"
PAGES = ["/ui/users/alice", "/ui/users/alice/memories", "/ui/users/alice/memories?sort=importance",
         "/ui/users/alice/search?q=stamp", "/ui/users/alice?agent_id=helper"]


def workers(server: ServerProcess) -> list[int]:
    return [c for c in children(server.pid) if b"spawn_main" in Path(f"/proc/{c}/cmdline").read_bytes()]


def owner_of(connection: http.client.HTTPConnection, server: ServerProcess, pids: list[int]) -> int | None:
    """The worker process holding the server's end of this open connection (from /proc: the socket's inode)."""
    assert connection.sock is not None
    mine = connection.sock.getsockname()[1]
    inode = None
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == server.port and int(fields[2].rsplit(":", 1)[1], 16) == mine:
                inode = fields[9]
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                if os.readlink(fd) == f"socket:[{inode}]":
                    return pid
            except OSError:
                continue
    return None


def get(server: ServerProcess, path: str, cookies: dict[str, str],
        pids: list[int] | None = None) -> tuple[int, str, int | None]:
    """GET over a new connection (so the kernel hands it to either worker): status, location, answering worker."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        connection.request("GET", path, headers={"Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())})
        response = connection.getresponse()
        response.read()
        return response.status, response.getheader("location") or "", owner_of(connection, server, pids or [])
    finally:
        connection.close()


def sign_in(server: ServerProcess, key: str) -> dict[str, str]:
    with server.client() as browser:
        token = browser.get("/ui/login").text.split('"X-CSRF-Token": "')[1].split('"')[0]
        answer = browser.post("/ui/login", json={"key": key, "next": "/ui"},
                              headers={"X-CSRF-Token": token, "HX-Request": "true"})
        assert answer.status_code == 200 and answer.headers["hx-redirect"] == "/ui", answer.text
        return dict(browser.cookies)


def test_a_console_session_is_known_to_every_worker_survives_a_restart_and_ends_with_its_key(
        serve: StartServer, tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    store = build_store(f"sqlite:///{db}")
    record, alice_key = new_key("write", "alice", name="console")
    store.add_api_key(record)
    store.close()
    env = {"JIYI_WORKERS": "2", "JIYI_ADMIN_API_KEY": ADMIN_KEY}
    server = serve(db, **env)
    pids = wait_until(lambda: workers(server) if len(workers(server)) == 2 else None, 30, "two worker processes")
    with server.client() as api:
        for i in range(5):
            added = api.post("/memories", headers={"X-API-Key": ADMIN_KEY}, json={
                "messages": [{"role": "user", "content": f"I collect stamp {i}"}], "user_id": "alice",
                "agent_id": "helper", "infer": False})
            assert added.status_code == 200, added.text

    sessions = {"alice (managed key)": sign_in(server, alice_key),
                "admin (JIYI_ADMIN_API_KEY)": sign_in(server, ADMIN_KEY)}
    answered: dict[int, int] = {}
    for name, cookies in sessions.items():
        for i in range(30):
            status, location, pid = get(server, PAGES[i % len(PAGES)], cookies, pids)
            assert status == 200, (name, PAGES[i % len(PAGES)], status, location)  # never signed out
            assert pid is not None
            answered[pid] = answered.get(pid, 0) + 1
    assert sorted(answered) == sorted(pids), answered  # both processes answered, both knew the sessions

    server.terminate()
    server = serve(db, **env)  # a restart: the sessions are in the store
    for name, cookies in sessions.items():
        assert get(server, "/ui/users/alice", cookies)[0] == 200, name

    store = build_store(f"sqlite:///{db}")
    assert store.revoke_api_key(record.id, utcnow())  # `jiyi keys revoke`, from another process
    store.close()
    revoked = time.monotonic()
    wait_until(lambda: get(server, "/ui/users/alice", sessions["alice (managed key)"])[0] == 303, 10,
               "the revoked key's session to end")
    assert time.monotonic() - revoked < KEYS_FRESH + 3
    for _ in range(20):  # ended for good, whichever process answers; the admin's session goes on
        status, location, _ = get(server, "/ui/users/alice", sessions["alice (managed key)"])
        assert status == 303 and location.startswith("/ui/login"), (status, location)
        assert get(server, "/ui/users/alice", sessions["admin (JIYI_ADMIN_API_KEY)"])[0] == 200
    server.terminate()
