"""One request type per operation the library, the REST API and the MCP tools share (jiyi/requests.py): the same
input through each surface builds an equal request, and the same bad input is refused with the same sentence.

The REST routes and the MCP tools (over /mcp) run on one real server around a memory that keeps each request it is
asked to run; the library is the sync Memory around another such memory."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from jiyi import (
    AddRequest,
    AsyncMemory,
    ContextRequest,
    InvalidInput,
    ListRequest,
    Memory,
    SearchQuery,
    build_embedder,
    build_store,
)
from tests.conftest import RunningServer
from tests.mcp.helpers import ok, over_http, refused

KEY = "requests-key-of-alice-3b9e1c"  # alice's key: REST and MCP act for her without naming her
CHAT = [{"role": "system", "content": "你是小林的朋友"}, {"role": "user", "content": "晚饭推荐点什么？我对海鲜过敏"}]
BAD_FILTER = {"created_at": {"gte": "next spring"}}
R = TypeVar("R")


class Recording(AsyncMemory):
    """An AsyncMemory that keeps every request it is asked to run, then runs it as usual."""

    def __init__(self, path: Path) -> None:
        super().__init__(build_store(f"sqlite:///{path}"), build_embedder("hashing"))
        self.ran: list[object] = []

    async def run_add(self, request: AddRequest) -> dict[str, Any]:
        self.ran.append(request)
        return await super().run_add(request)

    async def run_search(self, query: SearchQuery) -> dict[str, Any]:
        self.ran.append(query)
        return await super().run_search(query)

    async def run_context(self, request: ContextRequest) -> dict[str, Any]:
        self.ran.append(request)
        return await super().run_context(request)

    async def run_list(self, request: ListRequest) -> dict[str, Any]:
        self.ran.append(request)
        return await super().run_list(request)

    def last(self, kind: type[R]) -> R:
        return [request for request in self.ran if isinstance(request, kind)][-1]


class Surfaces:
    def __init__(self, tmp_path: Path, make_server: Callable[..., RunningServer]) -> None:
        self.served = Recording(tmp_path / "served.db")  # behind REST and /mcp
        self.server = make_server(self.served, user_api_keys={KEY: "alice"})
        self.http = httpx.Client(base_url=self.server.url, headers={"X-API-Key": KEY}, timeout=60)
        self.local = Recording(tmp_path / "local.db")
        self.library = Memory(_async=self.local)

    def rest(self, method: str, path: str, **options: Any) -> httpx.Response:
        return self.http.request(method, path, **options)

    def tool(self, name: str, arguments: dict[str, Any]) -> Any:
        async def call() -> Any:
            async with over_http(self.server.url, KEY) as client:
                return await ok(client, name, arguments)

        return asyncio.run(call())

    def tool_refusal(self, name: str, arguments: dict[str, Any]) -> str:
        async def call() -> str:
            async with over_http(self.server.url, KEY) as client:
                return await refused(client, name, arguments)

        return asyncio.run(call())

    def library_refusal(self, call: Callable[[Memory], object]) -> str:
        with pytest.raises(InvalidInput) as refusal:
            call(self.library)
        return str(refusal.value)

    def rest_refusal(self, method: str, path: str, body: dict[str, Any]) -> str:
        response = self.rest(method, path, json=body)
        assert response.status_code == 400, response.text
        return str(response.json()["detail"])


@pytest.fixture
def surfaces(tmp_path: Path, make_server: Callable[..., RunningServer]) -> Iterator[Surfaces]:
    made = Surfaces(tmp_path, make_server)
    yield made
    made.http.close()
    made.library.close()


def test_a_search_is_one_query_through_the_library_rest_and_mcp(surfaces: Surfaces) -> None:
    expected = SearchQuery.build("海鲜 过敏", user_id="alice", top_k=3)
    surfaces.library.search("海鲜 过敏", user_id="alice", top_k=3)
    assert surfaces.local.last(SearchQuery) == expected
    ways: list[Callable[[], object]] = [
        lambda: surfaces.rest("POST", "/search", json={"query": "海鲜 过敏", "top_k": 3}),
        lambda: surfaces.rest("POST", "/v3/memories/search/", json={"query": "海鲜 过敏", "top_k": 3,
                                                                      "filters": {"user_id": "alice"}}),
        lambda: surfaces.tool("memory_search", {"query": "海鲜 过敏", "top_k": 3}),
        lambda: surfaces.tool("search_memories", {"query": "海鲜 过敏", "limit": 3}),
    ]
    for way in ways:
        surfaces.served.ran.clear()
        way()
        assert surfaces.served.ran == [expected]
    assert expected.retrieval.scope.user_id == "alice" and expected.retrieval.top_k == 3


def test_an_add_is_one_request_through_the_library_rest_and_mcp(surfaces: Surfaces) -> None:
    said = [{"role": "user", "content": "我下个月去成都出差"}]
    surfaces.library.add(said, user_id="alice")
    expected = surfaces.local.last(AddRequest)
    assert expected == AddRequest.build(said, user_id="alice")
    for way in [lambda: surfaces.rest("POST", "/memories", json={"messages": said}),
                lambda: surfaces.rest("POST", "/v1/memories/", json={"messages": said}),
                lambda: surfaces.tool("add_memory", {"text": "出差", "messages": said})]:
        surfaces.served.ran.clear()
        way()
        assert surfaces.served.ran == [expected]

    # jiyi's own tool stores a sentence as given: the library's and REST's infer=False add of it
    stated = [{"role": "user", "content": "用户周末常去爬山"}]
    surfaces.library.add(stated, user_id="alice", infer=False, memory_type="preference")
    as_given = surfaces.local.last(AddRequest)
    surfaces.tool("memory_add", {"content": "用户周末常去爬山", "memory_type": "preference"})
    assert surfaces.served.last(AddRequest) == as_given
    surfaces.rest("POST", "/memories", json={"messages": stated, "infer": False, "memory_type": "preference"})
    assert surfaces.served.last(AddRequest) == as_given

    # an idempotency key: the header and the library's argument give the same request, fingerprint and all
    surfaces.library.add(said, user_id="alice", idempotency_key="trip-1")
    keyed = surfaces.local.last(AddRequest)
    surfaces.rest("POST", "/memories", json={"messages": said}, headers={"Idempotency-Key": "trip-1"})
    assert surfaces.served.last(AddRequest) == keyed and keyed.fingerprint is not None


def test_a_context_is_one_request_through_the_library_rest_and_mcp(surfaces: Surfaces) -> None:
    surfaces.library.context(CHAT, user_id="alice", top_k=8, budget_chars=1200)
    expected = surfaces.local.last(ContextRequest)
    assert expected == ContextRequest.build(CHAT, user_id="alice", top_k=8, budget_chars=1200)
    surfaces.rest("POST", "/context", json={"messages": CHAT, "top_k": 8, "budget_chars": 1200})
    assert surfaces.served.last(ContextRequest) == expected
    surfaces.tool("memory_get_context", {"messages": CHAT, "max_tokens": 300})  # 300 tokens: 1,200 characters
    assert surfaces.served.last(ContextRequest) == expected


def test_a_listing_is_one_request_through_the_library_rest_and_mcp(surfaces: Surfaces) -> None:
    surfaces.library.get_page(user_id="alice", page=2, page_size=10)
    page = surfaces.local.last(ListRequest)
    assert page == ListRequest.build_page(user_id="alice", page=2, page_size=10) and page.with_count
    for way in [lambda: surfaces.rest("POST", "/v3/memories/", params={"page": 2, "page_size": 10}, json={}),
                lambda: surfaces.tool("memory_list", {"page": 2, "limit": 10}),
                lambda: surfaces.tool("get_memories", {"page": 2, "page_size": 10})]:
        surfaces.served.ran.clear()
        way()
        assert surfaces.served.ran == [page]

    surfaces.library.get_all(user_id="alice", limit=5)
    first = surfaces.local.last(ListRequest)
    assert first == ListRequest.build_all(user_id="alice", limit=5) and not first.with_count
    surfaces.rest("GET", "/memories", params={"limit": 5})
    assert surfaces.served.last(ListRequest) == first
    surfaces.library.get_page(user_id="alice", page=1, page_size=5)
    surfaces.rest("GET", "/v1/memories/", params={"limit": 5})  # the older SDKs' get_all: a first page
    assert surfaces.served.last(ListRequest) == surfaces.local.last(ListRequest)


def test_bad_input_gets_the_same_sentence_on_every_surface(surfaces: Surfaces) -> None:
    search = {
        surfaces.library_refusal(lambda m: m.search("trip", user_id="alice", filters=BAD_FILTER)),
        surfaces.rest_refusal("POST", "/search", {"query": "trip", "filters": BAD_FILTER}),
        surfaces.rest_refusal("POST", "/v3/memories/search/", {"query": "trip", "filters": BAD_FILTER}),
        surfaces.tool_refusal("search_memories", {"query": "trip", "filters": BAD_FILTER}),
    }
    assert search == {"filter on created_at: 'next spring' is not an ISO date or datetime"}
    blank = {
        surfaces.library_refusal(lambda m: m.search("   ", user_id="alice")),
        surfaces.rest_refusal("POST", "/search", {"query": "   "}),
        surfaces.tool_refusal("memory_search", {"query": "   "}),
    }
    assert blank == {"query must be a non-empty string"}
    listing = {
        surfaces.library_refusal(lambda m: m.get_page(user_id="alice", filters=BAD_FILTER)),
        surfaces.rest_refusal("POST", "/v3/memories/", {"filters": BAD_FILTER}),
        surfaces.tool_refusal("get_memories", {"filters": BAD_FILTER}),
    }
    assert listing == search
    said = [{"role": "user", "content": "我下个月去成都出差"}]
    add = {
        surfaces.library_refusal(lambda m: m.add(said, user_id="alice", run_id="  ")),
        surfaces.rest_refusal("POST", "/memories", {"messages": said, "run_id": "  "}),
        surfaces.rest_refusal("POST", "/v1/memories/", {"messages": said, "run_id": "  "}),
        surfaces.tool_refusal("add_memory", {"text": "出差", "messages": said, "run_id": "  "}),
    }
    assert add == {"run_id must be a non-empty string"}
    context = {
        surfaces.library_refusal(lambda m: m.context(CHAT, user_id="alice", agent_id="  ")),
        surfaces.rest_refusal("POST", "/context", {"messages": CHAT, "agent_id": "  "}),
        surfaces.tool_refusal("memory_get_context", {"messages": CHAT, "agent_id": "  "}),
    }
    assert context == {"agent_id must be a non-empty string"}
    assert surfaces.served.ran == [] and surfaces.local.ran == []  # refused before anything ran
