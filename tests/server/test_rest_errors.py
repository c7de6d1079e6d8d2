"""Bad input over HTTP: a 4xx whose `detail` names the problem, never a 500, and the stored memories untouched."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from rest_helpers import add, detail_text, history, list_memories, ok, search

USER_MSG = [{"role": "user", "content": "hello there"}]
SEEDED = {
    "alice": ["I am allergic to peanuts", "My daughter is called Ines"],
    "bob": ["I collect vinyl records"],
}


@dataclass(frozen=True)
class Bad:
    """One bad request: `{id}` in the path stands for a stored memory; `words` must all appear in the detail.
    `status` is the expected status, or a tuple of acceptable ones where 400 and 422 are equally right."""

    method: str
    path: str
    status: int | tuple[int, ...]
    words: tuple[str, ...]
    json: Any = None
    raw: bytes | None = None
    params: dict[str, Any] = field(default_factory=dict)
    content_type: str = "application/json"

    def send(self, client: httpx.Client, memory_id: str) -> httpx.Response:
        path = self.path.replace("{id}", memory_id)
        if self.raw is not None:
            return client.request(self.method, path, content=self.raw, params=self.params,
                                  headers={"content-type": self.content_type})
        return client.request(self.method, path, json=self.json, params=self.params)


def nested(levels: int) -> Any:
    value: Any = "bottom"
    for _ in range(levels):
        value = {"in": value}
    return value


def post_memory(status: int, words: tuple[str, ...], **body: Any) -> Bad:
    return Bad("POST", "/memories", status, words, json={"messages": USER_MSG, "user_id": "alice", "infer": False,
                                                         **body})


def post_search(status: int, words: tuple[str, ...], **body: Any) -> Bad:
    return Bad("POST", "/search", status, words, json={"query": "peanuts", "user_id": "alice", **body})


def put_memory(status: int, words: tuple[str, ...], body: Any, memory_id: str = "{id}") -> Bad:
    return Bad("PUT", f"/memories/{memory_id}", status, words, json=body)


IDS = ("user_id", "agent_id", "run_id")
UNKNOWN = "00000000-0000-0000-0000-000000000000"

BAD_REQUESTS: dict[str, Bad] = {
    # missing or empty ids
    "add without ids": Bad("POST", "/memories", 400, IDS, json={"messages": USER_MSG, "infer": False}),
    "add with empty user_id": post_memory(400, ("user_id",), user_id=""),
    "search without ids": Bad("POST", "/search", 400, IDS, json={"query": "peanuts"}),
    "delete all without ids": Bad("DELETE", "/memories", 400, IDS),
    # messages
    "empty messages": post_memory(422, ("messages",), messages=[]),
    "messages as a number": post_memory(422, ("messages",), messages=42),
    "messages as a string of nothing": post_memory(422, ("messages",), messages=""),
    "role robot": post_memory(400, ("role", "robot"), messages=[{"role": "robot", "content": "beep"}]),
    "content null": post_memory(422, ("content",), messages=[{"role": "user", "content": None}]),
    "content a number": post_memory(422, ("content",), messages=[{"role": "user", "content": 7}]),
    "message without role": post_memory(422, ("role",), messages=[{"content": "hi"}]),
    # other add fields
    "metadata a list": post_memory(422, ("metadata",), metadata=["a", "b"]),
    "metadata a string": post_memory(422, ("metadata",), metadata="vip"),
    "user_id a number": post_memory(422, ("user_id",), user_id=5),
    "infer not a boolean": post_memory(422, ("infer",), infer="sometimes"),
    "unknown memory_type": post_memory(400, ("memory_type",), memory_type="dream"),
    "expiration_date not a date": post_memory(400, ("expiration_date",), expiration_date="next tuesday"),
    "expiration_date month 13": post_memory(400, ("expiration_date",), expiration_date="2030-13-01"),
    "expiration_date a number": post_memory(422, ("expiration_date",), expiration_date=20300101),
    "expiration_date beyond year 9999 in UTC": post_memory(400, ("expiration_date",),
                                                           expiration_date="9999-12-31T23:59:59-05:00"),
    "timestamp before year 1 in UTC": post_memory(400, ("timestamp",), timestamp="0001-01-01T00:00:00+05:00"),
    # bodies that are not the expected JSON object
    "malformed json": Bad("POST", "/memories", 400, ("json", "line 1"), raw=b'{"messages": [{"role": "user", '),
    "body a json list": Bad("POST", "/memories", 422, ("body",), json=[1, 2]),
    "search malformed json": Bad("POST", "/search", 400, ("json", "column 2"), raw=b"{query: peanuts}"),
    "body not utf-8": Bad("POST", "/memories", 400, ("utf-8", "byte 46"),
                          raw=b'{"messages": [{"role": "user", "content": "caf\xe9"}], "user_id": "alice"}'),
    "body nested 5000 deep": Bad("POST", "/search", 400, ("deep", "32"),
                                 raw=b'{"query": "x", "user_id": "alice", "filters": {"k": ' + b"[" * 5000
                                 + b"]" * 5000 + b"}}"),
    "body nested 40 deep": Bad("POST", "/memories", 400, ("40 levels", "limit is 32", "jiyi_max_json_depth"),
                               json={"messages": USER_MSG, "user_id": "alice", "metadata": nested(39)}),
    "body over 1 MiB": Bad("POST", "/memories", 413, ("1,048,576", "jiyi_max_body_bytes"),
                           json={"messages": [{"role": "user", "content": "x" * (1 << 20)}], "user_id": "alice"}),
    "form body from curl -d": Bad("POST", "/search", 415, ("content-type: application/json", "curl"),
                                  raw=b"query=peanuts&user_id=alice", content_type="application/x-www-form-urlencoded"),
    "text body": Bad("POST", "/memories", 415, ("text/plain",), raw=b"remember this", content_type="text/plain"),
    # field limits: 413 naming the field and the limit
    "message over the limit": post_memory(413, ("messages[1].content", "65,537", "65,536", "jiyi_max_message_chars"),
                                          messages=[*USER_MSG, {"role": "user", "content": "y" * 65_537}]),
    "content parts over the limit": post_memory(413, ("messages[0].content", "65,536"), messages=[
        {"role": "user", "content": [{"type": "text", "text": "z" * 40_000}, {"type": "text", "text": "z" * 40_000}]}]),
    "query over the limit": post_search(413, ("query", "4,001", "4,000", "jiyi_max_query_chars"), query="q" * 4001),
    "metadata over the limit": post_memory(413, ("metadata", "16,384", "jiyi_max_metadata_bytes"),
                                           metadata={"notes": "n" * 20_000}),
    "update text over the limit": put_memory(413, ("text", "65,536"), {"text": "t" * 70_000}),
    "update metadata over the limit": put_memory(413, ("metadata",), {"metadata": {"k": "v" * 17_000}}),
    "context message over the limit": Bad("POST", "/context", 413, ("messages[0].content", "65,536"), json={
        "user_id": "alice", "messages": [{"role": "user", "content": "c" * 65_537}]}),
    "context rewritten_query over the limit": Bad("POST", "/context", 413, ("rewritten_query", "4,000"), json={
        "user_id": "alice", "messages": USER_MSG, "rewritten_query": "r" * 4001}),
    "lone surrogate in content": Bad("POST", "/memories", (400, 422), ("messages",), raw=(
        b'{"messages": [{"role": "user", "content": "bad \\ud800 text"}], "user_id": "alice", "infer": false}')),
    "lone surrogate in query": Bad("POST", "/search", (400, 422), ("query",),
                                   raw=b'{"query": "peanuts \\udfff", "user_id": "alice"}'),
    # list parameters
    "list top_k 0": Bad("GET", "/memories", 422, ("top_k",), params={"user_id": "alice", "top_k": 0}),
    "list top_k 10001": Bad("GET", "/memories", 422, ("top_k",), params={"user_id": "alice", "top_k": 10001}),
    "list top_k abc": Bad("GET", "/memories", 422, ("top_k",), params={"user_id": "alice", "top_k": "abc"}),
    "list show_expired maybe": Bad("GET", "/memories", 422, ("show_expired",),
                                   params={"user_id": "alice", "show_expired": "maybe"}),
    # search parameters
    "empty query": post_search(422, ("query",), query=""),
    "blank query": post_search(400, ("query",), query="   "),
    "query a number": post_search(422, ("query",), query=12),
    "top_k 0": post_search(422, ("top_k",), top_k=0),
    "top_k 10001": post_search(422, ("top_k",), top_k=10001),
    "top_k abc": post_search(422, ("top_k",), top_k="abc"),
    "limit 0": post_search(422, ("limit",), limit=0),
    "limit and top_k disagree": post_search(400, ("limit", "top_k"), limit=3, top_k=5),
    "threshold 2": post_search(422, ("threshold",), threshold=2),
    "threshold negative": post_search(422, ("threshold",), threshold=-0.5),
    "user_id twice, different": post_search(400, ("user_id", "alice", "bob"), filters={"user_id": "bob"}),
    # filters
    "filters a string": post_search(422, ("filters",), filters="category=food"),
    "unknown operator": post_search(400, ("operator", "like"), filters={"kind": {"like": "food"}}),
    "in with a non-list": post_search(400, ("in", "list"), filters={"kind": {"in": "food"}}),
    "nin with a non-list": post_search(400, ("nin", "list"), filters={"kind": {"nin": 3}}),
    "gt with a list": post_search(400, ("gt",), filters={"price": {"gt": [1]}}),
    "icontains with a number": post_search(400, ("icontains",), filters={"note": {"icontains": 3}}),
    "operator object empty": post_search(400, ("kind", "operator"), filters={"kind": {}}),
    "AND empty": post_search(400, ("and",), filters={"AND": []}),
    "OR of non-objects": post_search(400, ("or",), filters={"OR": [1, 2]}),
    "date filter not a date": post_search(400, ("created_at",), filters={"created_at": {"gt": "last week"}}),
    "date filter out of range": post_search(400, ("created_at",), filters={"created_at": {"gt": 1e20}}),
    # updates
    "update with empty text": put_memory(400, ("text",), {"text": ""}),
    "update with blank text": put_memory(400, ("text",), {"text": "   "}),
    "update with text a number": put_memory(422, ("text",), {"text": 5}),
    "update with nothing": put_memory(400, ("nothing to update",), {}),
    "update text and data disagree": put_memory(400, ("text", "data"), {"text": "a", "data": "b"}),
    "update metadata a list": put_memory(422, ("metadata",), {"metadata": [1]}),
    "update bad expiration_date": put_memory(400, ("expiration_date",), {"expiration_date": "soon"}),
    # unknown memory ids
    "get unknown id": Bad("GET", f"/memories/{UNKNOWN}", 404, (UNKNOWN,)),
    "update unknown id": put_memory(404, (UNKNOWN,), {"text": "new text"}, memory_id=UNKNOWN),
    "delete unknown id": Bad("DELETE", f"/memories/{UNKNOWN}", 404, (UNKNOWN,)),
    "history of unknown id": Bad("GET", f"/memories/{UNKNOWN}/history", 404, (UNKNOWN,)),
    # configuration
    "configure unknown embedder": Bad("POST", "/configure", 400, ("provider", "nope"),
                                      json={"embedder": {"provider": "nope"}}),
    "configure with a list": Bad("POST", "/configure", 422, ("body",), json=["embedder"]),
}


def fresh(client: httpx.Client) -> httpx.Client:
    """A client on a new connection: after a 500 uvicorn drops the old one (see test_rest_ops)."""
    return httpx.Client(base_url=client.base_url, timeout=30)


def snapshot(client: httpx.Client) -> dict[str, Any]:
    """Everything a caller can see of the seeded memories: content, hash, metadata, times, history. Not the review
    count: a search that succeeds counts as a review of what it returned (access_count + 1), by design."""
    seen: dict[str, Any] = {}
    with fresh(client) as reader:
        for user_id in SEEDED:
            for item in list_memories(reader, user_id=user_id):
                item.pop("access_count")
                seen[item["id"]] = (item, history(reader, item["id"]))
    return seen


@pytest.fixture
def seeded(client: httpx.Client) -> tuple[httpx.Client, str, dict[str, Any]]:
    for user_id, texts in SEEDED.items():
        for text in texts:
            add(client, text, user_id=user_id, metadata={"kind": "seed"})
    before = snapshot(client)
    first_id = next(iter(before))
    return client, first_id, before


@pytest.mark.parametrize("bad", BAD_REQUESTS.values(), ids=BAD_REQUESTS.keys())
def test_bad_request_gets_a_4xx_naming_the_problem(seeded: tuple[httpx.Client, str, dict[str, Any]], bad: Bad) -> None:
    client, memory_id, before = seeded
    response = bad.send(client, memory_id)
    expected = bad.status if isinstance(bad.status, tuple) else (bad.status,)
    assert response.status_code in expected, response.text
    detail = detail_text(response)
    missing = [word for word in bad.words if word.lower() not in detail]
    assert not missing, f"detail does not name {missing}: {detail}"
    assert snapshot(client) == before


def test_all_bad_requests_in_a_row_leave_the_store_intact(seeded: tuple[httpx.Client, str, dict[str, Any]]) -> None:
    client, memory_id, before = seeded
    statuses = {}
    for name, bad in BAD_REQUESTS.items():
        with fresh(client) as sender:
            statuses[name] = bad.send(sender, memory_id).status_code
    after = snapshot(client)
    assert after == before
    assert {item["memory"] for item, _ in after.values()} == {t for texts in SEEDED.values() for t in texts}
    with fresh(client) as reader:
        assert search(reader, "peanuts", user_id="alice")[0]["memory"] == "I am allergic to peanuts"
    assert not {name: status for name, status in statuses.items() if status >= 500}


# Unusual but well-formed values: jiyi may answer 200 (nothing matches) or a 4xx, but never a 500.
ODD_FILTERS: dict[str, dict[str, Any]] = {
    "integer beyond 64 bits": {"kind": 2**70},
    "in with an integer beyond 64 bits": {"kind": {"in": [2**70]}},
    "gt with an integer beyond 64 bits": {"price": {"gt": 2**70}},
    "eq with a list": {"kind": {"eq": [1, 2]}},
    "ne with an object": {"kind": {"ne": {"a": 1}}},
    "in with nested lists": {"kind": {"in": [[1]]}},
    "key with quotes and backslash": {'we"ird\\key': 1},
    "negative huge timestamp": {"created_at": {"lt": -1e20}},
}


@pytest.mark.parametrize("filters", ODD_FILTERS.values(), ids=ODD_FILTERS.keys())
def test_odd_filter_values_never_give_500(seeded: tuple[httpx.Client, str, dict[str, Any]],
                                          filters: dict[str, Any]) -> None:
    client, _, before = seeded
    response = client.post("/search", json={"query": "peanuts", "user_id": "alice", "filters": filters})
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        assert detail_text(response)
    assert snapshot(client) == before


@pytest.mark.parametrize("number", [b"1e400", b"-Infinity", b"NaN"])
def test_non_finite_metadata_number_does_not_poison_the_scope(seeded: tuple[httpx.Client, str, dict[str, Any]],
                                                              number: bytes) -> None:
    client, _, before = seeded
    body = (b'{"messages": [{"role": "user", "content": "odd number"}], "user_id": "alice", "infer": false, '
            b'"metadata": {"kind": "odd", "x": ' + number + b"}}")
    response = client.post("/memories", content=body, headers={"content-type": "application/json"})
    assert response.status_code < 500, response.text
    filtered = client.post("/search", json={"query": "peanuts", "user_id": "alice", "filters": {"kind": "seed"}})
    assert filtered.status_code == 200, filtered.text
    assert {r["memory"] for r in filtered.json()["results"]} == set(SEEDED["alice"])
    assert ok(client.get("/memories", params={"user_id": "alice"}))["results"]
    assert {k: v for k, v in snapshot(client).items() if k in before} == before
