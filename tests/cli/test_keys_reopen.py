"""After `jiyi keys create` and `jiyi keys revoke`, the local quick-start server is not stuck answering 401: the
revoke says how to go back to open mode, every 401 says it too, and `jiyi keys reopen` does it. Keys never appear
in what the server answers or logs."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx

from jiyi.server.auth import KEYS_FRESH
from tests.cli.process import jiyi, serving


def keys(home: Path, *args: str) -> tuple[Any, list[str]]:
    result = jiyi(home, "keys", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout), result.stderr.splitlines()


def add(url: str, text: str, key: str | None = None) -> httpx.Response:
    headers = {"X-API-Key": key} if key else {}
    return httpx.post(f"{url}/memories", headers=headers, timeout=30,
                      json={"messages": [{"role": "user", "content": text}], "user_id": "alice", "infer": False})


def settle() -> None:
    time.sleep(KEYS_FRESH + 0.5)  # servers learn of key changes within KEYS_FRESH


def test_revoking_the_last_key_says_the_way_back_and_reopen_takes_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with serving(home) as server:
        assert add(server.url, "open at first").status_code == 200
        created, _ = keys(home, "create", "--user", "alice")
        secret = created["key"]
        settle()
        closed = add(server.url, "no key")
        assert closed.status_code == 401 and "reopen" not in closed.text  # a key is active: nothing to reopen
        assert add(server.url, "with the key", secret).status_code == 200

        refused = jiyi(home, "keys", "reopen")
        assert refused.returncode == 2
        assert refused.stderr.splitlines() == [f"jiyi: 1 key(s) still active ({created['id']}): revoke them first "
                                               "(jiyi keys revoke KEY_ID), or keep the server closed"]

        revoked, said = keys(home, "revoke", created["id"])
        assert revoked == {"revoked": created["id"]}
        assert len(said) == 1 and "that was the last active key" in said[0]
        assert "jiyi keys reopen" in said[0] and "still refuse requests without a key" in said[0]
        settle()
        for answer in (add(server.url, "no key, all revoked"), add(server.url, "the revoked key", secret)):
            assert answer.status_code == 401
            detail = answer.json()["detail"]
            assert "every key issued for it was revoked: run `jiyi keys reopen`" in detail, detail
            assert secret not in answer.text and created["id"] not in answer.text

        reopened, said = keys(home, "reopen")
        assert reopened == {"reopened": True}
        assert len(said) == 1 and "take requests without a key again" in said[0]
        settle()
        assert add(server.url, "open again").status_code == 200
        # An open server takes any key, as mem0's does (mem0's clients always send one): the revoked one is no more.
        assert add(server.url, "open to the revoked key as to anyone", secret).status_code == 200
        assert keys(home, "reopen")[0] == {"reopened": False}  # nothing left to reopen: said, not an error

        again, _ = keys(home, "create", "--user", "alice")  # the next key closes the server again
        settle()
        assert add(server.url, "closed again").status_code == 401
        assert add(server.url, "with the new key", again["key"]).status_code == 200
        keys(home, "revoke", again["id"])
        settle()
        assert "jiyi keys reopen" in add(server.url, "revoked after the reopening").json()["detail"]
    log = server.output()
    assert secret not in log and again["key"] not in log
    assert "with the key" not in log  # nor what was said


def test_a_server_on_another_address_stays_closed_and_says_why(tmp_path: Path) -> None:
    home = tmp_path / "home"
    created, _ = keys(home, "create", "--user", "alice")
    with serving(home, "--host", "0.0.0.0") as server:  # started because a key closes it
        keys(home, "revoke", created["id"])
        keys(home, "reopen")
        settle()
        answer = add(server.url, "no key")
        assert answer.status_code == 401
        detail = answer.json()["detail"]
        assert "listens on an address other than loopback" in detail and "--insecure" in detail, detail
    refused = jiyi(home, "serve", "--host", "0.0.0.0")  # nor would it start there without keys now
    assert refused.returncode == 2 and "refusing to serve on 0.0.0.0 with no keys" in refused.stderr
