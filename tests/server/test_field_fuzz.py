"""Every field of every route, sent with a wrong type, a huge value or odd Unicode: the answer is never a 500, a
refusal names what is wrong, and what was stored before is untouched. The fields come from the OpenAPI document,
so a route or field added later is covered without editing this test."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from rest_helpers import add, detail_text, history, list_memories

SEEDED = {"alice": ["I am allergic to peanuts", "My daughter is called Ines"], "bob": ["I collect vinyl records"]}

# Sent as raw JSON text, so that a lone surrogate travels as the escape "\ud800", as a hostile client would send it.
BAD_VALUES: dict[str, Any] = {
    "number": 12345,
    "negative": -1,
    "huge number": 1e308,
    "big integer": 2**80,
    "boolean": True,
    "null": None,
    "list": ["a", 1],
    "object": {"a": {"b": 1}},
    "empty string": "",
    "long string": "x" * 70_000,
    "lone surrogate": "bad \ud800 text",
    "NUL": "a\u0000b",
    "astral and combining": "𝒳\u0301\u202e" * 200,
}

BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/memories"): {"messages": [{"role": "user", "content": "fuzz text"}], "user_id": "mallory",
                            "infer": False},
    ("POST", "/search"): {"query": "fuzz", "user_id": "mallory"},
    ("POST", "/context"): {"messages": [{"role": "user", "content": "fuzz"}], "user_id": "mallory"},
    ("PUT", "/memories/{memory_id}"): {"text": "new fuzz text"},
}
MESSAGE_FIELDS = ("role", "content", "name", "id", "created_at")


def snapshot(client: httpx.Client) -> dict[str, Any]:
    seen = {}
    for user_id in SEEDED:
        for item in list_memories(client, user_id=user_id):
            item.pop("access_count")
            seen[item["id"]] = (item, history(client, item["id"]))
    return seen


def raw(body: Any) -> bytes:
    return json.dumps(body, ensure_ascii=True).encode()


def field_cases(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(method, path, body) for every top-level body field and message field, with every bad value."""
    cases = []
    for (method, path), base in BODIES.items():
        ref = spec["paths"][path][method.lower()]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        fields = spec["components"]["schemas"][ref.rsplit("/", 1)[1]]["properties"]
        for name in fields:
            cases += [(method, path, {**base, name: value}) for value in BAD_VALUES.values()]
        if "messages" in base:
            for name in MESSAGE_FIELDS:
                cases += [(method, path, {**base, "messages": [{**base["messages"][0], name: value}]})
                          for value in BAD_VALUES.values()]
    return cases


def test_every_field_with_bad_values_gets_no_500_and_leaves_the_store_intact(client: httpx.Client) -> None:
    for user_id, texts in SEEDED.items():
        for text in texts:
            add(client, text, user_id=user_id)
    target = add(client, "mallory's own memory", user_id="mallory")["id"]
    before = snapshot(client)
    spec = client.get("/openapi.json").json()
    cases = field_cases(spec)
    assert len(cases) > 300  # every field of four routes, not a sample
    failures = []
    for method, path, body in cases:
        response = client.request(method, path.replace("{memory_id}", target), content=raw(body),
                                  headers={"content-type": "application/json"})
        if response.status_code >= 500 or (response.status_code >= 400 and not detail_text(response)):
            failures.append((method, path, json.dumps(body, ensure_ascii=True)[:160], response.status_code,
                             response.text[:200]))
    assert not failures, failures[:10]
    assert snapshot(client) == before


@pytest.mark.parametrize("value", [v for v in BAD_VALUES.values() if isinstance(v, str) and v], ids=[
    k for k, v in BAD_VALUES.items() if isinstance(v, str) and v])
def test_path_and_query_parameters_with_odd_text_get_no_500(client: httpx.Client, value: str) -> None:
    add(client, SEEDED["alice"][0], user_id="alice")
    before = snapshot(client)
    encoded = quote(value[:2000].encode("utf-8", "surrogatepass"), safe="")  # URLs stay under httpx's length limit
    for method, url in [("GET", f"/memories/{encoded}"), ("PUT", f"/memories/{encoded}"),
                        ("DELETE", f"/memories/{encoded}"), ("GET", f"/memories/{encoded}/history"),
                        ("GET", f"/events/{encoded}"), ("GET", f"/memories?user_id={encoded}"),
                        ("GET", f"/memories?user_id=alice&top_k={encoded}"),
                        ("DELETE", f"/memories?user_id={encoded}")]:
        body = raw({"text": "x"}) if method == "PUT" else None
        response = client.request(method, url, content=body, headers={"content-type": "application/json"})
        assert response.status_code < 500, (method, url[:80], response.text[:200])
    assert snapshot(client) == before
