"""The /rerank client against jiyi's fake OpenAI server, over real HTTP on 127.0.0.1; and the fake's rerank route."""

from __future__ import annotations

import asyncio
import gc
import logging
import math
import re
import time
import warnings
from collections.abc import Sequence
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jiyi.errors import BackendUnavailable, ConfigError
from jiyi.rerankers.base import Reranker, RerankError
from jiyi.rerankers.http import HttpReranker, normalize_scores
from jiyi.testing.fake_openai import FakeOpenAI, Reply
from tests.conftest import free_port

KEY = "sk-rerank-8e1f2a9c4d"
DOCS = ["She likes green tea", "She used to live in a city called Hangzhou", "Her cat is called Mochi"]
QUERY = "which city does she live in"  # the fake's overlap scores: 1/6, 4/6, 0


def make_reranker(fake: FakeOpenAI, **options: Any) -> HttpReranker:
    return HttpReranker("fake-rerank", fake.base_url, **{"api_key": KEY, "timeout": 5.0, **options})


def rerank(reranker: HttpReranker, query: str = QUERY, documents: Sequence[str] = DOCS, **options: Any) -> list[float]:
    async def call() -> list[float]:
        try:
            return await reranker.rerank(query, documents, **options)
        finally:
            await reranker.aclose()

    return asyncio.run(call())


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


# ---- what the client sends ---------------------------------------------------------------------------------------


def test_sends_model_query_documents_top_n_and_the_key(fake: FakeOpenAI) -> None:
    rerank(make_reranker(fake))
    [request] = fake.requests
    assert request.path == "/v1/rerank"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body == {"model": "fake-rerank", "query": QUERY, "documents": DOCS, "top_n": 3}


def test_no_key_no_authorization_header_and_no_model_no_model_field(fake: FakeOpenAI) -> None:
    rerank(HttpReranker("", fake.base_url))
    [request] = fake.requests
    assert "authorization" not in request.headers
    assert "model" not in request.body


def test_extra_headers_and_body_are_sent(fake: FakeOpenAI) -> None:
    rerank(make_reranker(fake, extra_headers={"X-Title": "jiyi"}, extra_body={"return_documents": True}))
    [request] = fake.requests
    assert request.headers["x-title"] == "jiyi"
    assert request.body["return_documents"] is True


def test_an_empty_document_list_sends_nothing(fake: FakeOpenAI) -> None:
    assert rerank(make_reranker(fake), documents=[]) == []
    assert fake.requests == []


def test_tei_request_format_posts_texts_to_the_root(fake: FakeOpenAI) -> None:
    reranker = HttpReranker("", f"http://127.0.0.1:{fake.port}/", request_format="tei")
    scores = rerank(reranker)
    [request] = fake.requests
    assert request.path == "/rerank"
    assert request.body == {"query": QUERY, "texts": DOCS}
    assert scores.index(max(scores)) == 1


def test_model_id_names_model_and_endpoint(fake: FakeOpenAI) -> None:
    assert make_reranker(fake).model_id == f"http:fake-rerank@{fake.base_url}"
    assert HttpReranker("", "http://127.0.0.1:1/").model_id == "http:http://127.0.0.1:1"


def test_it_is_a_reranker() -> None:
    assert isinstance(HttpReranker("m", "http://127.0.0.1:1"), Reranker)


@pytest.mark.parametrize("options, match", [
    ({"base_url": ""}, "base_url"),
    ({"base_url": "http://127.0.0.1:1", "request_format": "jina"}, "request_format"),
])
def test_bad_construction_is_a_config_error(options: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        HttpReranker("m", **options)


# ---- what the client reads back ----------------------------------------------------------------------------------


def test_scores_follow_relevance_and_stay_aligned_with_the_documents(fake: FakeOpenAI) -> None:
    scores = rerank(make_reranker(fake))
    assert len(scores) == 3
    assert scores[1] == max(scores) and scores[1] > 0  # the server sorted its answer; we did not
    assert all(0.0 <= s <= 1.0 for s in scores)


def test_chinese_relevance(fake: FakeOpenAI) -> None:
    scores = rerank(make_reranker(fake), "她住在哪里", ["她喜欢喝龙井茶", "她住在杭州", "猫叫麻薯"])
    assert scores[1] == max(scores) and scores[1] > scores[0] >= scores[2]


def test_scripted_scores_come_back_in_document_order(fake: FakeOpenAI) -> None:
    fake.script_rerank([0.2, 0.9, 0.5])
    assert rerank(make_reranker(fake)) == [0.2, 0.9, 0.5]


def test_logits_are_mapped_into_0_1_keeping_their_order(fake: FakeOpenAI) -> None:
    fake.script_rerank([4.0, -2.5, 0.5])
    scores = rerank(make_reranker(fake))
    assert scores == pytest.approx([sigmoid(4.0), sigmoid(-2.5), sigmoid(0.5)])
    assert scores[0] > scores[2] > scores[1] and all(0 < s < 1 for s in scores)


def test_logits_true_maps_even_in_range_scores_and_false_clamps(fake: FakeOpenAI) -> None:
    fake.script_rerank([0.5, 0.0, 1.0], [3.0, -3.0, 0.5])
    assert rerank(make_reranker(fake, logits=True)) == pytest.approx([sigmoid(0.5), 0.5, sigmoid(1.0)])
    assert rerank(make_reranker(fake, logits=False)) == [1.0, 0.0, 0.5]


def test_documents_missing_from_the_answer_score_zero(fake: FakeOpenAI) -> None:
    fake.script_rerank(Reply(raw_body='{"results": [{"index": 1, "relevance_score": 0.7}]}'))
    assert rerank(make_reranker(fake)) == [0.0, 0.7, 0.0]


def test_the_tei_answer_shape_is_read(fake: FakeOpenAI) -> None:
    fake.script_rerank(Reply(raw_body='[{"index": 2, "score": 0.8}, {"index": 0, "score": 0.1}]'))
    assert rerank(make_reranker(fake)) == [0.1, 0.0, 0.8]


def test_results_carrying_their_documents_are_read(fake: FakeOpenAI) -> None:
    fake.script_rerank([0.3, 0.6, 0.1])
    assert rerank(make_reranker(fake, extra_body={"return_documents": True})) == [0.3, 0.6, 0.1]


def test_a_nan_score_counts_as_missing(fake: FakeOpenAI) -> None:
    fake.script_rerank(Reply(raw_body='{"results": [{"index": 0, "relevance_score": NaN}, '
                                      '{"index": 1, "relevance_score": 0.4}]}'))
    assert rerank(make_reranker(fake)) == [0.0, 0.4, 0.0]


@pytest.mark.parametrize("raw_body, match", [
    ("<html>502 Bad Gateway</html>", "not JSON"),
    ('{"data": [{"index": 0, "relevance_score": 0.5}]}', "neither"),
    ('{"results": [{"relevance_score": 0.5}]}', "valid index"),
    ('{"results": [{"index": 3, "relevance_score": 0.5}]}', "valid index"),
    ('{"results": [{"index": true, "relevance_score": 0.5}]}', "valid index"),
    ('{"results": [{"index": 0, "relevance_score": "high"}]}', "numeric relevance_score"),
    ('{"results": [{"index": 0}]}', "numeric relevance_score"),
    ('{"results": ["0.5"]}', "valid index"),
], ids=["html", "wrong-key", "no-index", "index-out-of-range", "bool-index", "text-score", "no-score", "bare-value"])
def test_an_unreadable_answer_is_a_rerank_error(fake: FakeOpenAI, raw_body: str, match: str) -> None:
    fake.script_rerank(Reply(raw_body=raw_body))
    with pytest.raises(RerankError, match=match):
        rerank(make_reranker(fake))


# ---- failures and timeouts ---------------------------------------------------------------------------------------


def test_a_500_is_a_rerank_error_with_status_and_message(fake: FakeOpenAI) -> None:
    fake.script_rerank(Reply(status=500, error="CUDA out of memory"))
    with pytest.raises(RerankError, match="HTTP 500: CUDA out of memory") as caught:
        rerank(make_reranker(fake))
    assert isinstance(caught.value, BackendUnavailable)
    assert len(fake.requests) == 1  # no retry on the search path


@pytest.mark.parametrize("raw_body, message", [
    ('{"message": "invalid api token"}', "invalid api token"),  # Cohere, SiliconFlow
    ('{"detail": "model not found"}', "model not found"),  # Jina, FastAPI servers
    ('{"error": "Input validation error: `texts` cannot be empty", "error_type": "Validation"}',
     "Input validation error: `texts` cannot be empty"),  # TEI
    ("upstream overloaded", "upstream overloaded"),
], ids=["message", "detail", "error-string", "text"])
def test_the_server_message_is_quoted_whatever_its_shape(fake: FakeOpenAI, raw_body: str, message: str) -> None:
    fake.script_rerank(Reply(status=503, raw_body=raw_body))
    with pytest.raises(RerankError, match=re.escape(f"HTTP 503: {message}")):
        rerank(make_reranker(fake))


def test_a_slow_server_is_a_rerank_error_within_the_timeout(fake: FakeOpenAI) -> None:
    fake.script_rerank(Reply(delay=3.0))
    started = time.monotonic()
    with pytest.raises(RerankError, match=r"within 0\.3 s"):
        rerank(make_reranker(fake, timeout=0.3))
    assert time.monotonic() - started < 1.0


def test_the_per_call_timeout_wins(fake: FakeOpenAI) -> None:
    fake.script_rerank(Reply(delay=3.0))
    started = time.monotonic()
    with pytest.raises(RerankError, match=r"within 0\.2 s"):
        rerank(make_reranker(fake, timeout=30.0), timeout=0.2)
    assert time.monotonic() - started < 1.0


def test_a_slow_answer_within_the_timeout_is_fine(fake: FakeOpenAI) -> None:
    fake.script_rerank(Reply(delay=0.2))
    scores = rerank(make_reranker(fake, timeout=2.0))
    assert scores.index(max(scores)) == 1


def test_connection_refused_is_a_rerank_error() -> None:
    with pytest.raises(RerankError, match="unreachable") as caught:
        rerank(HttpReranker("m", f"http://127.0.0.1:{free_port()}/v1", api_key=KEY))
    assert isinstance(caught.value, BackendUnavailable)


def test_the_key_never_reaches_errors_or_logs(fake: FakeOpenAI, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    fake.script_rerank(Reply(status=401, error=f"Incorrect API key provided: {KEY}"),
                       Reply(status=500, raw_body=f"bad token {KEY}"), Reply(raw_body="garbage"),
                       Reply(delay=1.0))
    reranker = make_reranker(fake)
    errors: list[BaseException] = []
    for timeout in (None, None, None, 0.2):
        with pytest.raises(RerankError) as caught:
            rerank(reranker, timeout=timeout)
        errors.append(caught.value)
    rerank(reranker)  # a success logs its timing
    with pytest.raises(RerankError) as caught:
        rerank(HttpReranker("m", f"http://127.0.0.1:{free_port()}/v1", api_key=KEY))
    errors.append(caught.value)
    texts = [caplog.text, repr(reranker)]
    for error in errors:
        texts += [str(error), repr(error), str(error.__cause__), repr(error.__cause__)]
    assert [t for t in texts if KEY in t] == []
    assert "HTTP 401: Incorrect API key provided: ***" in str(errors[0])
    assert "scored 3 documents" in caplog.text  # the logs were captured, they just hold no key


def test_concurrent_calls_are_served_concurrently(fake: FakeOpenAI) -> None:
    fake.rerank_responder = lambda body: Reply(delay=0.3)
    reranker = make_reranker(fake)

    async def many() -> list[list[float]]:
        try:
            return await asyncio.gather(*(reranker.rerank(QUERY, DOCS) for _ in range(6)))
        finally:
            await reranker.aclose()

    started = time.monotonic()
    answers = asyncio.run(many())
    assert time.monotonic() - started < 1.2  # six 0.3 s answers, not one after the other
    assert len({tuple(a) for a in answers}) == 1 and len(fake.requests) == 6


def test_one_reranker_serves_several_event_loops_and_leaks_no_connection(fake: FakeOpenAI) -> None:
    reranker = make_reranker(fake)
    gc.collect()  # leftovers of earlier tests must not be blamed on this client
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        for i in range(3):
            fake.script_rerank([i / 10, 0.5, 0.9])
            assert asyncio.run(reranker.rerank(QUERY, DOCS)) == [i / 10, 0.5, 0.9]
        asyncio.run(reranker.aclose())
        del reranker
        gc.collect()
    leaks = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert leaks == []
    assert len(fake.requests) == 3


# ---- score normalization -----------------------------------------------------------------------------------------

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)


@given(st.lists(st.one_of(st.none(), finite), min_size=1, max_size=20), st.sampled_from([None, True, False]))
def test_normalized_scores_are_in_0_1_and_keep_the_order(scores: list[float | None], logits: bool | None) -> None:
    mapped = normalize_scores(scores, logits)
    assert len(mapped) == len(scores)
    assert all(0.0 <= m <= 1.0 for m in mapped)
    assert all(m == 0.0 for s, m in zip(scores, mapped, strict=True) if s is None)
    present = [(s, m) for s, m in zip(scores, mapped, strict=True) if s is not None]
    for s1, m1 in present:
        for s2, m2 in present:
            if s1 < s2:
                assert m1 <= m2


def test_in_range_scores_are_kept_as_they_are() -> None:
    assert normalize_scores([0.0, 0.25, None, 1.0]) == [0.0, 0.25, 0.0, 1.0]


def test_extreme_logits_do_not_overflow() -> None:
    assert normalize_scores([-1e4, 1e4, float("inf"), float("-inf")]) == [0.0, 1.0, 1.0, 0.0]


# ---- the fake server's rerank route ------------------------------------------------------------------------------


def test_fake_answers_in_the_cohere_jina_shape_sorted_by_score(fake: FakeOpenAI) -> None:
    body = httpx.post(f"{fake.base_url}/rerank", json={"model": "m", "query": QUERY, "documents": DOCS}).json()
    assert body["model"] == "m" and body["id"].startswith("rerank-") and body["usage"]["total_tokens"] > 0
    assert [r["index"] for r in body["results"]] == [1, 0, 2]
    scores = [r["relevance_score"] for r in body["results"]]
    assert scores == sorted(scores, reverse=True) and len(scores) == 3
    assert all("document" not in r for r in body["results"])


def test_fake_honours_top_n_return_documents_and_document_objects(fake: FakeOpenAI) -> None:
    body = httpx.post(f"{fake.base_url}/rerank", json={
        "query": QUERY, "documents": [{"text": d} for d in DOCS], "top_n": 1, "return_documents": True}).json()
    assert body["results"] == [{"index": 1, "relevance_score": pytest.approx(4 / 6), "document": {"text": DOCS[1]}}]


def test_fake_answers_tei_requests_in_tei_shape_at_the_root(fake: FakeOpenAI) -> None:
    response = httpx.post(f"http://127.0.0.1:{fake.port}/rerank",
                          json={"query": "猫叫什么", "texts": ["她住在杭州", "猫叫麻薯"], "return_text": True})
    assert response.json() == [{"index": 1, "score": pytest.approx(1 / 3), "text": "猫叫麻薯"},
                               {"index": 0, "score": 0.0, "text": "她住在杭州"}]
    assert [r.path for r in fake.rerank_requests] == ["/rerank"]


def test_fake_rejects_a_rerank_request_without_documents(fake: FakeOpenAI) -> None:
    response = httpx.post(f"{fake.base_url}/rerank", json={"query": "x"})
    assert response.status_code == 422 and "documents" in response.json()["error"]["message"]


def test_fake_scripted_rerank_answers_come_before_the_responder_and_reset_restores_it(fake: FakeOpenAI) -> None:
    fake.rerank_responder = lambda body: [0.0] * len(body["documents"])
    fake.script_rerank([0.9, 0.1], Reply(status=429, headers={"Retry-After": "3"}))

    def post() -> httpx.Response:
        return httpx.post(f"{fake.base_url}/rerank", json={"query": "tea", "documents": ["tea", "cat"]})

    assert [r["index"] for r in post().json()["results"]] == [0, 1]
    limited = post()
    assert limited.status_code == 429 and limited.headers["retry-after"] == "3"
    assert [r["relevance_score"] for r in post().json()["results"]] == [0.0, 0.0]
    fake.reset()
    assert post().json()["results"][0] == {"index": 0, "relevance_score": 1.0}
    assert len(fake.rerank_requests) == 1


def test_fake_rerank_responder_from_the_constructor() -> None:
    with FakeOpenAI(rerank_responder=lambda body: [float(len(d)) for d in body["documents"]]) as fake:
        scores = rerank(HttpReranker("m", fake.base_url), documents=["a", "abc", "ab"])
        fake.reset()
        restored = rerank(HttpReranker("m", fake.base_url), documents=["a", "abc", "ab"])
    assert scores == pytest.approx([sigmoid(1), sigmoid(3), sigmoid(2)])  # 1, 3, 2 look like logits
    assert restored == scores


def test_fake_a_plain_reply_delays_the_usual_scores(fake: FakeOpenAI) -> None:
    fake.script_rerank(Reply(delay=0.3, headers={"X-Served-By": "fake"}))
    started = time.monotonic()
    response = httpx.post(f"{fake.base_url}/rerank", json={"query": "tea", "documents": ["cat", "tea"]})
    assert time.monotonic() - started >= 0.29
    assert response.headers["x-served-by"] == "fake"
    assert response.json()["results"][0] == {"index": 1, "relevance_score": 1.0}


def test_fake_rerank_requests_are_logged_apart_from_chat(fake: FakeOpenAI) -> None:
    httpx.post(f"{fake.base_url}/chat/completions", json={"messages": []})
    httpx.post(f"{fake.base_url}/rerank", json={"query": "q", "documents": ["d"]})
    assert [r.path for r in fake.requests] == ["/v1/chat/completions", "/v1/rerank"]
    assert [r.path for r in fake.chat_requests] == ["/v1/chat/completions"]
    assert [r.body for r in fake.rerank_requests] == [{"query": "q", "documents": ["d"]}]
