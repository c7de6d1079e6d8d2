"""POST /memories/{memory_id}/restore against a real server: a deletion taken back, with its own history row; only
one's own memories under a user key; a memory that is not deleted, or moved on, is a 409."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import RunningServer
from tests.ui.helpers import ALICE_KEY, BOB_KEY, KEYS, api, managed_server, ok


def test_a_deleted_memory_comes_back_with_a_restore_row(make_server: Callable[..., RunningServer]) -> None:
    server = make_server(**KEYS)
    with api(server.url, ALICE_KEY) as alice, api(server.url, BOB_KEY) as bob:
        added = ok(alice.post("/memories", json={"messages": [{"role": "user", "content": "我喜欢打篮球"}],
                                                 "infer": False}))["results"][0]["id"]
        version = ok(alice.get(f"/memories/{added}"))["version"]
        assert alice.post(f"/memories/{added}/restore").status_code == 409  # not deleted
        ok(alice.delete(f"/memories/{added}"))
        assert alice.get(f"/memories/{added}").status_code == 404
        assert ok(alice.post("/search", json={"query": "篮球"}))["results"] == []
        assert bob.post(f"/memories/{added}/restore").status_code == 404  # another user's: not found
        assert alice.post(f"/memories/{added}/restore", headers={"If-Match": f'"{version}"'}).status_code == 409
        restored = ok(alice.post(f"/memories/{added}/restore", json={"reason": "deleted by mistake"}))
        assert restored["id"] == added and restored["memory"] == "我喜欢打篮球" and restored["version"] == version + 2
        assert [hit["id"] for hit in ok(alice.post("/search", json={"query": "篮球"}))["results"]] == [added]
        rows = ok(alice.get(f"/memories/{added}/history"))
        assert [(row["event"], row.get("reason")) for row in rows] == [
            ("ADD", None), ("DELETE", None), ("RESTORE", "deleted by mistake")]
        assert alice.post(f"/memories/{added}/restore").status_code == 409  # live again: nothing to restore
        assert alice.post("/memories/no-such-memory/restore").status_code == 404


def test_a_read_key_cannot_restore_and_no_key_is_refused(make_server: Callable[..., RunningServer],
                                                         tmp_path: Path) -> None:
    server, keys, _ = managed_server(make_server, tmp_path, {"alice": ("alice", "write"),
                                                             "reader": ("alice", "read")})
    with api(server.url, keys["alice"]) as alice, api(server.url, keys["reader"]) as reader, \
            api(server.url, None) as nobody:
        added = ok(alice.post("/memories", json={"messages": [{"role": "user", "content": "x"}], "infer": False}))
        memory_id = added["results"][0]["id"]
        ok(alice.delete(f"/memories/{memory_id}"))
        assert nobody.post(f"/memories/{memory_id}/restore").status_code == 401
        assert reader.post(f"/memories/{memory_id}/restore").status_code == 403
        assert alice.post(f"/memories/{memory_id}/restore", json={"version": "two"}).status_code == 422
        assert alice.post(f"/memories/{memory_id}/restore", json={"reason": "x" * 5000}).status_code == 413
        assert alice.post(f"/memories/{memory_id}/restore", content=b"reason", headers={
            "content-type": "text/plain"}).status_code == 415


def test_the_restore_route_is_documented(make_server: Callable[..., RunningServer]) -> None:
    server = make_server(**KEYS)
    with api(server.url) as admin:
        spec = ok(admin.get("/openapi.json"))
    operation = spec["paths"]["/memories/{memory_id}/restore"]["post"]
    assert operation["operationId"] == "restore_memory"
    assert {"200", "404", "409", "401", "403", "422"} <= set(operation["responses"])
    assert operation["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/MemoryItem"}
    assert not any(path.startswith("/ui") for path in spec["paths"])  # the console's pages are not API
