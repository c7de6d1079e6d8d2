"""A real jiyi server on 127.0.0.1: a request's W3C traceparent makes jiyi's spans part of the caller's trace, and
so do the calls of mem0's own Python SDK (add, search), of its npm client and of the MCP SDK's client (add, search,
get_context with its stages), as a team running jiyi beside its LLM app sees them in its tracing system."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from jiyi import AsyncMemory, build_embedder, build_store
from jiyi.server.limits import RequestLimits
from tests.conftest import RunningServer
from tests.mcp.helpers import ok, over_http
from tests.server.test_mem0_sdk_js import ADMIN_KEY, JS, USER_KEYS, check_installed
from tests.tracing.conftest import ancestors, everything_said, finished, one, parent_of

os.environ["MEM0_TELEMETRY"] = "False"  # read when mem0 is imported: the SDK must not call PostHog from tests

from mem0 import MemoryClient

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
ALICE = "key-of-alice-7c1d"
KEYS = {ALICE: "alice"}


def test_a_traceparent_makes_the_requests_spans_part_of_the_callers_trace(
        make_server: Callable[..., RunningServer], exporter: InMemorySpanExporter) -> None:
    server = make_server()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        client.post("/v1/memories/", json={"messages": [{"role": "user", "content": "我养了一只叫年糕的猫"}],
                                           "user_id": "alice", "infer": False}).raise_for_status()
        exporter.clear()
        found = client.post("/v1/memories/search/", json={"query": "我的猫叫什么", "user_id": "alice"},
                            headers={"traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01"})
        found.raise_for_status()
        missing = client.post("/v1/memories/search/", json={"user_id": "alice"},
                              headers={"traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01"})
        answered = client.post("/context", json={"messages": [{"role": "user", "content": "年糕最近怎么样"}],
                                                    "user_id": "alice"})
    assert answered.status_code == 200 and missing.status_code == 422
    spans = finished(exporter, "POST /context")
    in_trace = [s for s in spans if f"{s.context.trace_id:032x}" == TRACE_ID]
    servers = [s for s in in_trace if s.kind is SpanKind.SERVER]
    assert [s.name for s in servers] == ["POST /v1/memories/search/", "POST /v1/memories/search/"]
    assert all(s.parent is not None and f"{s.parent.span_id:016x}" == PARENT_ID for s in servers)
    assert [(s.attributes or {})["http.response.status_code"] for s in servers] == [200, 422]
    search = one(in_trace, "jiyi.search")
    assert ancestors(in_trace, search) == ["POST /v1/memories/search/"]
    assert {"vector_search memories", "keyword_search memories"} <= {s.name for s in in_trace}
    # A request without a traceparent starts a trace of its own, its /context stages beneath it.
    context = one(spans, "jiyi.context")
    assert f"{context.context.trace_id:032x}" != TRACE_ID
    assert (parent_of(spans, context) or context).name == "POST /context"
    stages = {s.name: (s.attributes or {})["jiyi.stage.outcome"] for s in spans if parent_of(spans, s) is context}
    assert stages == {f"jiyi.context.{stage['stage']}": stage["outcome"] for stage in answered.json()["stages"]}
    assert "年糕" not in everything_said(spans) and "alice" not in everything_said(spans)


def test_a_server_error_marks_the_request_span(make_server: Callable[..., RunningServer], tmp_path: Path,
                                               exporter: InMemorySpanExporter) -> None:
    memory = AsyncMemory(build_store(f"sqlite:///{tmp_path / 'm.db'}"), build_embedder("hashing"))
    server = make_server(memory)
    memory.store.close()  # the database is gone: the search cannot be done
    with httpx.Client(base_url=server.url, timeout=30) as client:
        answer = client.post("/v1/memories/search/", json={"query": "猫", "user_id": "alice"})
    assert answer.status_code >= 500
    request = one(finished(exporter, "POST /v1/memories/search/"), "POST /v1/memories/search/")
    assert request.status.status_code is StatusCode.ERROR
    assert (request.attributes or {})["http.response.status_code"] == answer.status_code


def test_mem0s_python_sdk_add_and_search_make_jiyi_spans(make_server: Callable[..., RunningServer],
                                                         exporter: InMemorySpanExporter) -> None:
    server = make_server(user_api_keys=KEYS)
    client = MemoryClient(api_key=ALICE, host=server.url)
    client.add("I am allergic to peanuts", user_id="alice", infer=False)
    added = finished(exporter, "POST /v3/memories/add/")
    add = one(added, "jiyi.add")
    assert ancestors(added, add) == ["POST /v3/memories/add/"]  # the SDK's add route
    assert {"embeddings v1-256", "insert memories"} <= {s.name for s in added if parent_of(added, s) is add}
    exporter.clear()
    results = client.search("what am I allergic to", filters={"user_id": "alice"})
    assert [r["memory"] for r in results["results"]] == ["I am allergic to peanuts"]
    spans = finished(exporter, "POST /v2/memories/search/")
    search = one(spans, "jiyi.search")
    request = parent_of(spans, search)
    assert request is not None and request.kind is SpanKind.SERVER and request.name.startswith("POST /v")
    assert (search.attributes or {})["jiyi.search.results"] == 1
    said = everything_said([*added, *spans])
    assert "peanuts" not in said and ALICE not in said


def test_the_mcp_clients_add_and_context_tools_make_jiyi_spans_with_the_context_stages(
        make_server: Callable[..., RunningServer], exporter: InMemorySpanExporter) -> None:
    server = make_server(user_api_keys=KEYS)

    async def scenario() -> dict[str, Any]:
        async with over_http(server.url, ALICE) as client:
            await ok(client, "add_memory", {"text": "我对花生过敏"})
            return dict(await ok(client, "memory_get_context", {
                "messages": [{"role": "user", "content": "晚饭吃什么？我对什么过敏来着"}]}))

    context = asyncio.run(scenario())
    assert "- 用户对花生过敏" in context["context"].splitlines()
    spans = finished(exporter, "jiyi.context")
    add, recall = one(spans, "jiyi.add"), one(spans, "jiyi.context")
    assert "POST /mcp" in ancestors(spans, add) and "POST /mcp" in ancestors(spans, recall)
    stages = {s.name: (s.attributes or {}).get("jiyi.stage.outcome") for s in spans
              if parent_of(spans, s) is recall and s.name.startswith("jiyi.context.")}
    assert stages["jiyi.context.question"] == "hit", stages  # the question alone found the allergy
    assert set(stages) <= {"jiyi.context.question", "jiyi.context.context", "jiyi.context.rewrite"}
    said = everything_said(spans)
    assert "花生" not in said and ALICE not in said


def test_the_mcp_clients_search_tool_makes_a_jiyi_search_span(make_server: Callable[..., RunningServer],
                                                              provider: TracerProvider,
                                                              exporter: InMemorySpanExporter) -> None:
    server = make_server(user_api_keys=KEYS)

    async def scenario() -> None:
        async with over_http(server.url, ALICE) as client:
            await ok(client, "memory_add", {"content": "用户周末常去爬山"})
            exporter.clear()
            found = await ok(client, "memory_search", {"query": "爬山"})
            assert [r["memory"] for r in found["results"]] == ["用户周末常去爬山"]

    asyncio.run(scenario())
    spans = finished(exporter, "POST /mcp")
    search = one(spans, "jiyi.search")
    assert {"embeddings v1-256", "vector_search memories"} <= {s.name for s in spans if parent_of(spans, s) is search}
    assert "POST /mcp" in ancestors(spans, search)
    assert "爬山" not in everything_said(spans)


def test_mem0s_npm_client_makes_jiyi_spans(make_server: Callable[..., RunningServer],
                                           exporter: InMemorySpanExporter, tmp_path: Path) -> None:
    check_installed()  # fails, never skips, with what to run when the client is missing
    options = {"admin_api_key": ADMIN_KEY, "user_api_keys": USER_KEYS, "worker_poll_interval": 0.05}
    server = make_server(**options)
    limited = make_server(limits=RequestLimits(rate_per_minute=2), **options)
    run = subprocess.run(
        ["node", str(JS / "drive.mjs"), "--url", server.url, "--admin-key", ADMIN_KEY, "--alice-key", "key-alice",
         "--bob-key", "key-bob", "--limited-url", limited.url, "--limited-key", "key-alice"],
        capture_output=True, text=True, timeout=60, cwd=JS,
        env={**os.environ, "MEM0_TELEMETRY": "false", "MEM0_DIR": str(tmp_path / "mem0-home")})
    assert run.returncode == 0, run.stderr[-4000:]
    driven = json.loads(run.stdout.strip().splitlines()[-1])
    assert driven["search"]["results"] and driven["blockedRequests"] == []
    spans = finished(exporter, "jiyi.search")
    searches = [s for s in spans if s.name == "jiyi.search"]
    assert {(parent_of(spans, s) or s).name for s in searches} == {"POST /v3/memories/search/"}  # the client's route
    assert all((s.attributes or {})["jiyi.scope.kind"] for s in searches)
    assert any(s.name == "jiyi.add" for s in spans)
    said = everything_said(spans)
    for private in ("bonsai", "oolong", "stamps", "key-alice", ADMIN_KEY):
        assert private not in said
