"""Small helpers shared by the REST tests: every call is real HTTP against a running jiyi server."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

import httpx

MEMORY_ITEM_KEYS = {"id", "memory", "hash", "created_at", "updated_at"}
HISTORY_COLUMNS = [
    "id", "memory_id", "old_memory", "new_memory", "event",
    "created_at", "updated_at", "is_deleted", "actor_id", "role",
]


def ok(response: httpx.Response) -> Any:
    """The JSON body of a 200 answer; on anything else fail with the body, which says why."""
    where = f"{response.request.method} {response.request.url.path}"
    assert response.status_code == 200, f"{where}: {response.status_code} {response.text}"
    return response.json()


def add(client: httpx.Client, content: str, *, user_id: str | None = "alice", **fields: Any) -> dict[str, Any]:
    """Store one user message as a memory (infer=false); return its add-result item."""
    body: dict[str, Any] = {"messages": [{"role": "user", "content": content}], "infer": False, **fields}
    if user_id is not None:
        body["user_id"] = user_id
    results = ok(client.post("/memories", json=body))["results"]
    assert len(results) == 1, results
    return results[0]  # type: ignore[no-any-return]


def add_all(client: httpx.Client, contents: list[str], **fields: Any) -> list[str]:
    """Store several memories in one scope; return their ids in the same order."""
    return [add(client, content, **fields)["id"] for content in contents]


def search(client: httpx.Client, query: str, **body: Any) -> list[dict[str, Any]]:
    return ok(client.post("/search", json={"query": query, **body}))["results"]  # type: ignore[no-any-return]


def texts_found(client: httpx.Client, query: str, **body: Any) -> set[str]:
    return {item["memory"] for item in search(client, query, **body)}


def list_memories(client: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    return ok(client.get("/memories", params=params))["results"]  # type: ignore[no-any-return]


def get_memory(client: httpx.Client, memory_id: str) -> dict[str, Any]:
    return ok(client.get(f"/memories/{memory_id}"))  # type: ignore[no-any-return]


def history(client: httpx.Client, memory_id: str) -> list[dict[str, Any]]:
    return ok(client.get(f"/memories/{memory_id}/history"))  # type: ignore[no-any-return]


def md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()


def is_iso_datetime(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def assert_memory_item(item: dict[str, Any], memory: str | None = None) -> None:
    """mem0's MemoryItem: id, memory, hash (md5 of the text), created_at, updated_at (null until updated)."""
    assert item.keys() >= MEMORY_ITEM_KEYS, sorted(item)
    assert isinstance(item["id"], str) and item["id"]
    assert isinstance(item["memory"], str) and item["memory"]
    assert item["hash"] == md5(item["memory"])
    assert is_iso_datetime(item["created_at"]), item["created_at"]
    assert item["updated_at"] is None or is_iso_datetime(item["updated_at"]), item["updated_at"]
    if memory is not None:
        assert item["memory"] == memory


def detail_text(response: httpx.Response) -> str:
    """The error's `detail` in lower case; it is always one sentence, a 422's too (never pydantic's list)."""
    body = response.json()
    assert "detail" in body, body
    detail = body["detail"]
    assert isinstance(detail, str) and detail, body
    return detail.lower()
