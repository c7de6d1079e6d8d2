"""Spans of add, search and /context made through the library (Memory), with a real SQLite file, the offline test
embedder, jiyi's fake OpenAI-compatible server for the LLM and the reranker over real HTTP: names, parents, the
attributes an operator reads, and no user text, user id or key in any of them unless JIYI_TRACE_CONTENT=1."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from jiyi import AsyncMemory, BackendUnavailable, Memory, build_embedder, build_store, tracing
from jiyi.embedders.openai import OpenAICompatibleEmbedder
from jiyi.llms.openai import OpenAICompatibleLLM
from jiyi.llms.scripted import ScriptedLLM
from jiyi.rerankers.http import HttpReranker
from jiyi.stores.base import MemoryStore
from jiyi.testing.fake_openai import FakeOpenAI
from tests.conftest import free_port
from tests.tracing.conftest import ancestors, everything_said, named, one, parent_of

KEY = "sk-test-4f9a1c0d7e2b-never-in-a-span"
USER = "alice@example.com"
SAID = "我对花生过敏，上周去医院做了检查"
SAID_EN = "My sister Marguerite lives in Lisbon"
QUESTION = "我对什么过敏？"


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    m = Memory(build_store(f"sqlite:///{tmp_path / 'memory.db'}"), build_embedder("hashing"),
               llm=ScriptedLLM(responder=lambda messages: "花生过敏"))
    yield m
    m.close()


def test_add_search_and_context_make_their_spans_with_the_stages_beneath(
        memory: Memory, exporter: InMemorySpanExporter) -> None:
    added = memory.add(SAID, user_id=USER, agent_id="nurse", infer=False)
    memory.search(QUESTION, user_id=USER, agent_id="nurse")
    answer = memory.context([{"role": "user", "content": "你好"}, {"role": "assistant", "content": "你好！"},
                             {"role": "user", "content": "今天吃什么好？"}], user_id=USER, rewrite=True,
                            min_relevance=0.99)
    spans = exporter.get_finished_spans()

    add = one(spans, "jiyi.add")
    assert add.attributes is not None
    assert add.attributes["jiyi.scope.kind"] == "user+agent"
    assert add.attributes["jiyi.add.infer"] is False and add.attributes["jiyi.add.messages"] == 1
    assert list(add.attributes["jiyi.memory.ids"]) == [r["id"] for r in added["results"]]  # type: ignore[arg-type]
    insert = one(spans, "insert memories")
    assert "jiyi.add" in ancestors(spans, insert)
    assert insert.attributes == {"db.system.name": "sqlite", "db.operation.name": "insert",
                                 "db.collection.name": "memories"}
    embedding = [s for s in named(spans, "embeddings v1-256") if "jiyi.add" in ancestors(spans, s)]
    assert embedding and embedding[0].attributes is not None
    assert embedding[0].attributes["gen_ai.operation.name"] == "embeddings"
    assert embedding[0].attributes["gen_ai.provider.name"] == "hashing"
    assert embedding[0].attributes["jiyi.embedding.kind"] == "passage"

    search = [s for s in named(spans, "jiyi.search") if parent_of(spans, s) is None]
    assert len(search) == 1 and search[0].attributes is not None
    assert search[0].attributes["jiyi.search.results"] == 1
    assert list(search[0].attributes["jiyi.memory.ids"]) == [added["results"][0]["id"]]  # type: ignore[arg-type]
    beneath = {s.name for s in spans if search[0].name in ancestors(spans, s) and s.context.trace_id ==
               search[0].context.trace_id}
    assert {"embeddings v1-256", "vector_search memories", "keyword_search memories"} <= beneath
    vector = next(s for s in named(spans, "vector_search memories") if s.context.trace_id == search[0].context.trace_id)
    assert vector.kind is trace.SpanKind.CLIENT and vector.attributes is not None
    assert vector.attributes["db.system.name"] == "sqlite" and "db.response.returned_rows" in vector.attributes

    context = one(spans, "jiyi.context")
    assert context.attributes is not None and context.attributes["jiyi.context.degraded"] is False
    assert context.attributes["jiyi.context.messages"] == 3
    stages = {name: one(spans, f"jiyi.context.{name}") for name in ("question", "context", "rewrite")}
    assert all(parent_of(spans, s) is context for s in stages.values())
    outcomes = {name: (s.attributes or {})["jiyi.stage.outcome"] for name, s in stages.items()}
    assert outcomes == {stage["stage"]: stage["outcome"] for stage in answer["stages"]}
    assert all("jiyi.stage.best_relevance" in (s.attributes or {}) and "jiyi.stage.found" in (s.attributes or {})
               for s in stages.values())
    # Each searched stage has its search beneath it; the rewrite has the LLM's chat call (GenAI conventions).
    assert all("jiyi.search" in {c.name for c in spans if parent_of(spans, c) is s} for s in stages.values())
    chat = one(spans, "chat scripted")
    assert parent_of(spans, chat) is stages["rewrite"]
    assert chat.attributes is not None and chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["gen_ai.request.max_tokens"] == 120 and chat.kind is trace.SpanKind.CLIENT

    said = everything_said(spans)
    for private in (SAID, QUESTION, "今天吃什么好", "花生", USER, "nurse"):
        assert private not in said


def test_a_span_of_the_callers_is_the_parent_of_jiyis(memory: Memory, provider: TracerProvider,
                                                      exporter: InMemorySpanExporter) -> None:
    with provider.get_tracer("an app").start_as_current_span("answer the user") as app_span:
        memory.search(QUESTION, user_id=USER)  # the sync facade runs it on a loop thread of its own
    search = one(exporter.get_finished_spans(), "jiyi.search")
    assert search.parent is not None and search.parent.span_id == app_span.get_span_context().span_id


def test_with_openai_compatible_models_no_text_or_key_reaches_a_span_unless_content_is_recorded(
        tmp_path: Path, fake: FakeOpenAI, exporter: InMemorySpanExporter) -> None:
    llm = OpenAICompatibleLLM("chat-model", base_url=fake.base_url, api_key=KEY)
    reranker = HttpReranker("rerank-model", fake.base_url, api_key=KEY)
    memory = Memory(build_store(f"sqlite:///{tmp_path / 'm.db'}"), build_embedder("hashing"), llm=llm,
                    reranker=reranker)
    try:
        fake.script('{"facts": ["Has a sister, Marguerite, in Lisbon"]}', '{"memory": []}')
        memory.add([{"role": "user", "content": SAID_EN}], user_id=USER)
        memory.search("where does Marguerite live", user_id=USER)
        memory.context([{"role": "user", "content": "tell me about Marguerite"}], user_id=USER, rewrite=True)
        spans = exporter.get_finished_spans()
        chats = named(spans, "chat chat-model")
        assert chats and all((s.attributes or {})["server.address"] == "127.0.0.1" for s in chats)
        assert all(isinstance((s.attributes or {}).get("gen_ai.usage.input_tokens"), int) for s in chats)
        reranks = named(spans, "rerank rerank-model")  # the search's, and each stage's of the context
        assert len(reranks) >= 2 and all((s.attributes or {})["jiyi.rerank.documents"] >= 1 for s in reranks)
        said = everything_said(spans)
        for private in (KEY, "Marguerite", "Lisbon", USER):
            assert private not in said

        exporter.clear()
        tracing.record_content(True)  # what JIYI_TRACE_CONTENT=1 turns on at import
        memory.search("where does Marguerite live", user_id=USER)
        memory.context([{"role": "user", "content": "tell me about Marguerite"}], user_id=USER, rewrite=True)
        spans = exporter.get_finished_spans()
        search = named(spans, "jiyi.search")[0].attributes or {}
        assert list(search["jiyi.query"]) == ["where does Marguerite live"]  # type: ignore[arg-type]
        assert any("Lisbon" in text for text in search["jiyi.memory.texts"])  # type: ignore[union-attr]
        assert search["jiyi.user_id"] == USER
        chat = named(spans, "chat chat-model")[0].attributes or {}
        assert "tell me about Marguerite" in str(chat["gen_ai.input.messages"])
        assert KEY not in everything_said(spans)  # a key never, content or not
    finally:
        memory.close()


def test_a_failing_call_marks_its_spans_without_quoting_what_it_was_given(
        tmp_path: Path, exporter: InMemorySpanExporter) -> None:
    closed_port = free_port()  # nothing listens there: the embedding service is down
    embedder = OpenAICompatibleEmbedder("embed-model", base_url=f"http://127.0.0.1:{closed_port}/v1", api_key=KEY,
                                        dims=8)
    memory = Memory(build_store(f"sqlite:///{tmp_path / 'm.db'}"), embedder)
    try:
        with pytest.raises(BackendUnavailable):
            memory.search(QUESTION, user_id=USER)
    finally:
        memory.close()
    spans = exporter.get_finished_spans()
    for name in ("jiyi.search", "embeddings embed-model"):
        failed = one(spans, name)
        assert failed.status.status_code is StatusCode.ERROR
        event = next(e for e in failed.events if e.name == "exception")
        assert (event.attributes or {})["exception.type"].endswith("BackendUnavailable")  # type: ignore[union-attr]
        assert "unreachable" in str((event.attributes or {})["exception.message"])
    assert QUESTION not in everything_said(spans) and KEY not in everything_said(spans)


def test_every_store_names_its_database_on_its_spans(store: MemoryStore, exporter: InMemorySpanExporter) -> None:
    memory = Memory(store, build_embedder("hashing"))
    try:
        added = memory.add(SAID, user_id=USER, infer=False)
        memory.update(added["results"][0]["id"], "我对花生和芒果过敏")
        memory.search(QUESTION, user_id=USER)
        memory.history(added["results"][0]["id"])
    finally:
        memory.close()
    system = {"SqliteStore": "sqlite", "PostgresStore": "postgresql"}[type(store).__name__]
    spans = exporter.get_finished_spans()
    for name in ("insert memories", "update memories", "vector_search memories", "keyword_search memories",
                 "select history"):
        found = named(spans, name)
        assert found, (name, sorted({s.name for s in spans}))
        assert all((s.attributes or {})["db.system.name"] == system for s in found)
    history = named(spans, "select history")[0]
    assert (history.attributes or {})["db.response.returned_rows"] == 2  # ADD, then UPDATE


def test_an_async_adds_extraction_links_to_the_add(tmp_path: Path, exporter: InMemorySpanExporter) -> None:
    async def scenario() -> None:
        memory = AsyncMemory(build_store(f"sqlite:///{tmp_path / 'm.db'}"), build_embedder("hashing"))
        try:
            queued = await memory.add([{"role": "user", "content": SAID_EN}], user_id=USER, async_mode=True)
            assert queued["status"] == "PENDING"
            assert await memory.process_pending() == 1  # what the server's worker does, later, in a trace of its own
        finally:
            await memory.close()

    asyncio.run(scenario())
    spans = exporter.get_finished_spans()
    add, extract = one(spans, "jiyi.add"), one(spans, "jiyi.extract")
    assert extract.parent is None and extract.context.trace_id != add.context.trace_id
    assert [link.context.span_id for link in extract.links] == [add.context.span_id]
    assert (extract.attributes or {})["jiyi.event.id"] == (add.attributes or {})["jiyi.event.id"]
