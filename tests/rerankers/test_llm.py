"""Reranking with a chat LLM: with the scripted LLM, and end-to-end through the real OpenAI-compatible client and the
fake server."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from typing import Any

import pytest

from jiyi.errors import BackendUnavailable
from jiyi.llms.base import ChatMessages, LLMBadOutput, LLMRateLimited, LLMTimeout
from jiyi.llms.openai import OpenAICompatibleLLM
from jiyi.llms.scripted import ScriptedLLM
from jiyi.rerankers.base import Reranker, RerankError
from jiyi.rerankers.llm import LLMReranker, read_scores
from jiyi.testing.fake_openai import FakeOpenAI, Reply

DOCS = ["她喜欢喝龙井茶", "She lives in Hangzhou", "猫叫麻薯"]
QUERY = "她住在哪里？"


def rerank(reranker: LLMReranker, query: str = QUERY, documents: Sequence[str] = DOCS, **options: Any) -> list[float]:
    return asyncio.run(reranker.rerank(query, documents, **options))


# ---- with the scripted LLM ---------------------------------------------------------------------------------------


def test_one_json_call_scores_every_numbered_document() -> None:
    llm = ScriptedLLM([{"scores": {"1": 1, "2": 9, "3": 0}}])
    assert rerank(LLMReranker(llm)) == [0.1, 0.9, 0.0]
    [call] = llm.calls
    assert call.json_mode is True
    system, user = call.messages
    assert system["role"] == "system" and '{"scores"' in system["content"]
    assert user["content"] == f"Query: {QUERY}\n\nDocuments:\n[1] {DOCS[0]}\n[2] {DOCS[1]}\n[3] {DOCS[2]}"


def test_documents_are_put_on_one_line_and_cut() -> None:
    llm = ScriptedLLM([{"scores": {"1": 5}}])
    assert rerank(LLMReranker(llm, max_chars=12), "tea?", ["line one\nline two\n\n  and a long tail"]) == [0.5]
    assert llm.calls[0].messages[1]["content"].endswith("[1] line one lin")


def test_no_documents_no_call() -> None:
    llm = ScriptedLLM()
    assert rerank(LLMReranker(llm), documents=[]) == []
    assert llm.calls == []


# (id, what the model answered, the scores read for three documents)
ANSWERS: list[tuple[str, Any, list[float]]] = [
    ("keyed", {"scores": {"1": 7, "2": 3, "3": 10}}, [7, 3, 10]),
    ("missing-entry", {"scores": {"1": 7, "3": 2}}, [7, 0, 2]),
    ("aligned-list", {"scores": [4, 8, 1]}, [4, 8, 1]),
    ("short-list", {"scores": [4, 8]}, [4, 8, 0]),
    ("objects", {"scores": [{"id": 2, "score": 6}, {"id": "3", "score": 9}]}, [0, 6, 9]),
    ("objects-index", {"results": [{"index": 1, "score": 6}]}, [6, 0, 0]),
    ("no-wrapper", {"1": 2, "2": 5, "3": 8}, [2, 5, 8]),
    ("one-unwrapped", {"2": 5}, [0, 5, 0]),
    ("bare-list", [3, 2, 1], [3, 2, 1]),
    ("labelled-keys", {"scores": {"[1]": 6, "doc2": 4, "Document 3": 2}}, [6, 4, 2]),
    ("numeric-strings", {"scores": {"1": "8", "2": "6/10", "3": " 7.5 "}}, [8, 6, 7.5]),
    ("nested-score", {"scores": {"1": {"score": 9, "reason": "exact"}}}, [9, 0, 0]),
    ("clamped", {"scores": {"1": 15, "2": -3, "3": 4}}, [10, 0, 4]),
    ("invalid-values", {"scores": {"1": "high", "2": None, "3": True}}, [0, 0, 0]),
    ("out-of-range-ids", {"scores": {"0": 9, "4": 9, "2": 1}}, [0, 1, 0]),
    ("unknown-shape", {"answer": "the second one"}, [0, 0, 0]),
]


@pytest.mark.parametrize("answer, expected", [c[1:] for c in ANSWERS], ids=[c[0] for c in ANSWERS])
def test_what_models_send_is_read_and_the_rest_scores_zero(answer: Any, expected: list[float]) -> None:
    assert rerank(LLMReranker(ScriptedLLM([answer]))) == pytest.approx([e / 10 for e in expected])


def test_nan_scores_are_invalid() -> None:
    assert read_scores({"scores": {"1": float("nan"), "2": 3}}, 2) == [0.0, 3.0]


def test_a_chatty_fenced_answer_is_read() -> None:
    llm = ScriptedLLM(['<think>第二条最相关</think>\nHere you go:\n```json\n'
                       '{"scores": {"1": 0, "2": 10, "3": 1}}\n```'])
    assert rerank(LLMReranker(llm)) == [0.0, 1.0, 0.1]


@pytest.mark.parametrize("reply", [LLMTimeout("no answer within 5 s"), LLMRateLimited("HTTP 429"),
                                   "I cannot rate these documents."],
                         ids=["timeout", "rate-limited", "no-json"])
def test_llm_failures_are_rerank_errors(reply: Any) -> None:
    with pytest.raises(RerankError, match=r"LLM reranker \(scripted\) failed") as caught:
        rerank(LLMReranker(ScriptedLLM([reply])))
    assert isinstance(caught.value, BackendUnavailable)
    assert isinstance(caught.value.__cause__, LLMTimeout | LLMRateLimited | LLMBadOutput)


def test_a_slow_llm_is_a_rerank_error_within_the_timeout() -> None:
    started = time.monotonic()
    with pytest.raises(RerankError):
        rerank(LLMReranker(ScriptedLLM([{"scores": {}}], delay=5.0)), timeout=0.2)
    assert time.monotonic() - started < 1.0


def test_model_id_and_protocol() -> None:
    reranker = LLMReranker(ScriptedLLM())
    assert reranker.model_id == "llm:scripted"
    assert isinstance(reranker, Reranker)


class ClosableLLM:
    model_id = "closable"

    def __init__(self) -> None:
        self.closed = False

    async def complete(self, messages: ChatMessages, **options: Any) -> str:
        return '{"scores": {"1": 10}}'

    async def aclose(self) -> None:
        self.closed = True


@pytest.mark.parametrize("close_llm", [False, True])
def test_aclose_closes_the_llm_only_when_it_owns_it(close_llm: bool) -> None:
    llm = ClosableLLM()
    reranker = LLMReranker(llm, close_llm=close_llm)
    assert rerank(reranker, documents=["x"]) == [1.0]
    asyncio.run(reranker.aclose())
    assert llm.closed is close_llm


# ---- through the real OpenAI-compatible client -------------------------------------------------------------------


def rerank_over_http(fake: FakeOpenAI, documents: Sequence[str] = DOCS, **options: Any) -> list[float]:
    llm = OpenAICompatibleLLM("fake-chat", base_url=fake.base_url, api_key="sk-x", retry_backoff=0.01, timeout=5.0)

    async def call() -> list[float]:
        try:
            return await LLMReranker(llm).rerank(QUERY, documents, **options)
        finally:
            await llm.aclose()

    return asyncio.run(call())


def test_over_http_json_mode_temperature_zero_and_chinese_intact(fake: FakeOpenAI) -> None:
    fake.script('{"scores": {"1": 2, "2": 9, "3": 0}}')
    assert rerank_over_http(fake) == [0.2, 0.9, 0.0]
    [request] = fake.chat_requests
    assert request.body["response_format"] == {"type": "json_object"}
    assert request.body["temperature"] == 0.0
    assert "[1] 她喜欢喝龙井茶" in request.body["messages"][1]["content"]


def test_over_http_a_responder_that_reads_the_prompt(fake: FakeOpenAI) -> None:
    """The LLM sees the documents numbered in order: a responder scoring by a marker word finds them."""
    def responder(body: dict[str, Any]) -> str:
        lines = [line for line in body["messages"][1]["content"].splitlines() if line.startswith("[")]
        return json.dumps({"scores": {line[1:line.index("]")]: 10 if "Hangzhou" in line else 1 for line in lines}})

    fake.responder = responder
    assert rerank_over_http(fake) == [0.1, 1.0, 0.1]


def test_over_http_a_server_error_is_a_rerank_error(fake: FakeOpenAI) -> None:
    fake.responder = lambda body: Reply(status=500, error="model overloaded")
    with pytest.raises(RerankError, match="HTTP 500: model overloaded"):
        rerank_over_http(fake)


def test_over_http_the_callers_timeout_bounds_the_clients_retries(fake: FakeOpenAI) -> None:
    """Each attempt fits in the timeout, but the client's retries would not: the caller's budget wins."""
    fake.responder = lambda body: Reply(status=503, delay=0.25)
    started = time.monotonic()
    with pytest.raises(RerankError, match=r"within 0\.4 s"):
        rerank_over_http(fake, timeout=0.4)
    assert time.monotonic() - started < 1.0
    # Two attempts fit in 0.4 s (one on a machine busy enough to slow the first down); a third never does.
    assert 1 <= len(fake.chat_requests) <= 2
