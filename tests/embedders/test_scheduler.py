"""The embedding scheduler: queries first, passages in chunks taken in turn by users, batched queries, deadlines,
close, and the bound on what reaches the model. Timing is controlled by a gated embedder registered the real way."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jiyi import AsyncMemory, BackendUnavailable, Memory, build_embedder, build_store, register_embedder
from jiyi.embedders.base import fit_input
from jiyi.embedders.hashing import HashingEmbedder
from jiyi.embedders.scheduler import EmbeddingScheduler, embedding_lane
from jiyi.errors import Overloaded


class GatedEmbedder(HashingEmbedder):
    """Hashing vectors; every model call is logged, and calls wait while the gate is closed."""

    def __init__(self) -> None:
        super().__init__(dims=64)
        self.calls: list[tuple[str, list[str]]] = []
        self.threads: set[threading.Thread] = set()
        self.gate = threading.Event()
        self.entered = threading.Event()

    def _call(self, kind: str, texts: list[str]) -> None:
        self.calls.append((kind, texts))
        self.threads.add(threading.current_thread())
        self.entered.set()
        assert self.gate.wait(timeout=10), "the test never opened the gate"

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self._call("documents", list(texts))
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        self._call("query", [text])
        return super().embed_query(text)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        self._call("queries", list(texts))
        return super().embed_queries(texts)


register_embedder("gated", lambda arg, options: GatedEmbedder())


@pytest.fixture
def gated() -> GatedEmbedder:
    embedder = build_embedder("gated")
    assert isinstance(embedder, GatedEmbedder)
    return embedder


@pytest.fixture
def pool(gated: GatedEmbedder) -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(max_workers=8) as executor:
        try:
            yield executor
        finally:
            gated.gate.set()  # a failed test must not leave calls waiting for the gate


def wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.002)


def in_lane(lane: str, fn: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    def call() -> Any:
        with embedding_lane(lane):
            return fn(*args)
    return call


def texts_queued(scheduler: EmbeddingScheduler) -> int:
    queued = scheduler.queued()
    passages = queued["passages"]
    assert isinstance(passages, dict)
    return int(queued["queries"]) + sum(passages.values())  # type: ignore[call-overload]


def test_a_query_goes_before_queued_passages(gated: GatedEmbedder, pool: ThreadPoolExecutor) -> None:
    scheduler = EmbeddingScheduler(gated, chunk_texts=2)
    passages = pool.submit(scheduler.embed_documents, [f"passage {i}" for i in range(6)])
    gated.entered.wait(5)
    query = pool.submit(scheduler.embed_query, "what did I say")
    wait_until(lambda: scheduler.queued()["queries"] == 1)
    gated.gate.set()
    assert passages.result(5).shape == (6, 64) and query.result(5).shape == (64,)
    # The query waited for the one chunk under way, then ran before the rest of the passage job, which went on in
    # chunks of one text: a query had just come.
    assert [(kind, len(batch)) for kind, batch in gated.calls] == [
        ("documents", 2), ("query", 1), ("documents", 1), ("documents", 1), ("documents", 1), ("documents", 1)]
    scheduler.close()


def test_passage_chunks_are_one_text_while_queries_come_in(gated: GatedEmbedder,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("jiyi.embedders.scheduler.QUERIES_RECENT_SECONDS", 0.3)
    gated.gate.set()
    scheduler = EmbeddingScheduler(gated, chunk_texts=3)
    texts = [f"passage {i}" for i in range(6)]
    scheduler.embed_documents(texts)
    scheduler.embed_query("what did I say")
    scheduler.embed_documents(texts)
    time.sleep(0.4)  # no query since: full chunks again
    scheduler.embed_documents(texts)
    assert [len(batch) for kind, batch in gated.calls if kind == "documents"] == [3, 3, 1, 1, 1, 1, 1, 1, 3, 3]
    scheduler.close()


def test_passages_are_cut_into_chunks_by_count_and_characters(gated: GatedEmbedder) -> None:
    gated.gate.set()
    scheduler = EmbeddingScheduler(gated, chunk_texts=3, chunk_chars=100)
    texts = ["a" * 10, "b" * 10, "c" * 10, "d" * 10, "e" * 95, "f" * 500, "g" * 10]
    scheduler.embed_documents(texts)
    assert [batch for _, batch in gated.calls] == [texts[0:3], texts[3:4], texts[4:5], texts[5:6], texts[6:7]]
    scheduler.close()


def test_queries_waiting_together_run_as_one_batch(gated: GatedEmbedder, pool: ThreadPoolExecutor) -> None:
    scheduler = EmbeddingScheduler(gated)
    passage = pool.submit(scheduler.embed_documents, ["a long passage"])
    gated.entered.wait(5)
    questions = ["where do I live", "我对什么过敏", "who is Jesica"]
    answers = [pool.submit(scheduler.embed_query, q) for q in questions]
    wait_until(lambda: scheduler.queued()["queries"] == 3)
    gated.gate.set()
    reference = build_embedder("hashing:64")
    for question, answer in zip(questions, answers, strict=True):
        assert np.allclose(answer.result(5), reference.embed_query(question), atol=1e-6)
    passage.result(5)
    assert gated.calls[1] == ("queries", questions)
    scheduler.close()


def test_searches_in_flight_queue_their_queries_at_once_beyond_the_search_threads(gated: GatedEmbedder,
                                                                                  tmp_path: Path) -> None:
    """Sixteen searches at once, four search threads: every query waits for the model without a thread, so they
    reach it as one batch (before, only as many as there were threads could wait)."""
    async def scenario() -> None:
        memory = AsyncMemory(build_store(f"sqlite:///{tmp_path}/m.db"), gated)
        try:
            gated.gate.set()
            await memory.add("I live in Lisbon", user_id="u", infer=False)
            # The first add also embedded mem0's category prototypes (as queries, in batches): not the searches'.
            gated.calls.clear()
            queries_before, calls_before = memory.embedding.use.queries, memory.embedding.use.query_calls
            gated.gate.clear()
            gated.entered.clear()
            holding = asyncio.create_task(memory.add("a passage that holds the model", user_id="u", infer=False))
            await asyncio.to_thread(gated.entered.wait, 5)
            searches = [asyncio.create_task(memory.search(f"where do I live {i}", user_id="u")) for i in range(16)]
            await asyncio.to_thread(wait_until, lambda: memory.embedding.queued()["queries"] == 16)
            gated.gate.set()
            results = await asyncio.gather(*searches)
            await holding
        finally:
            gated.gate.set()
            await memory.close()
        assert all(result["results"][0]["memory"] == "I live in Lisbon" for result in results)
        batches = [texts for kind, texts in gated.calls if kind == "queries"]
        assert [len(texts) for texts in batches] == [16]
        assert memory.embedding.use.queries - queries_before == 16
        assert memory.embedding.use.query_calls - calls_before == 1

    asyncio.run(scenario())


def test_an_awaited_query_that_cannot_start_is_refused_and_a_cancelled_one_never_runs(
        gated: GatedEmbedder, pool: ThreadPoolExecutor) -> None:
    scheduler = EmbeddingScheduler(gated, query_timeout=0.2)
    running = pool.submit(scheduler.embed_documents, ["holds the model"])
    gated.entered.wait(5)

    async def scenario() -> None:
        with pytest.raises(Overloaded):
            await scheduler.aembed_query("too late")
        waiting = asyncio.create_task(scheduler.aembed_query("given up"))
        await asyncio.sleep(0.05)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting

    asyncio.run(scenario())
    gated.gate.set()
    running.result(5)
    assert scheduler.embed_query("after").shape == (64,)
    assert [texts for _, texts in gated.calls] == [["holds the model"], ["after"]]  # neither refused one ran
    assert (scheduler.use.passages, scheduler.use.queries, scheduler.use.query_calls) == (1, 1, 1)
    scheduler.close()


def test_users_take_turns_one_chunk_each(gated: GatedEmbedder, pool: ThreadPoolExecutor) -> None:
    scheduler = EmbeddingScheduler(gated, chunk_texts=1)
    big = pool.submit(in_lane("user:a", scheduler.embed_documents, ["a1", "a2", "a3", "a4"]))
    gated.entered.wait(5)
    more = pool.submit(in_lane("user:a", scheduler.embed_documents, ["a5"]))
    wait_until(lambda: texts_queued(scheduler) == 4)
    small = [pool.submit(in_lane(f"user:{name}", scheduler.embed_documents, [f"{name}1"])) for name in "bc"]
    wait_until(lambda: texts_queued(scheduler) == 6)
    gated.gate.set()
    for future in [big, more, *small]:
        future.result(5)
    assert [texts[0] for _, texts in gated.calls] == ["a1", "b1", "c1", "a2", "a3", "a4", "a5"]
    scheduler.close()


def test_work_that_cannot_start_in_time_is_refused_with_retry_after(gated: GatedEmbedder,
                                                                    pool: ThreadPoolExecutor) -> None:
    scheduler = EmbeddingScheduler(gated, query_timeout=0.2, passage_timeout=0.3)
    running = pool.submit(scheduler.embed_documents, ["holds the model"])
    gated.entered.wait(5)
    began = time.monotonic()
    with pytest.raises(Overloaded) as refused:
        scheduler.embed_query("too late")
    assert 0.2 <= time.monotonic() - began < 1.0 and refused.value.retry_after >= 1
    with embedding_lane("user:b"), pytest.raises(Overloaded):
        scheduler.embed_documents(["also too late"])
    assert scheduler.queued() == {"queries": 0, "passages": {}}  # given up work is gone, never run
    gated.gate.set()
    running.result(5)
    assert [texts for _, texts in gated.calls] == [["holds the model"]]
    scheduler.close()


def test_close_fails_waiting_work_and_stops_the_threads(gated: GatedEmbedder, pool: ThreadPoolExecutor) -> None:
    scheduler = EmbeddingScheduler(gated)
    running = pool.submit(scheduler.embed_documents, ["running"])
    gated.entered.wait(5)
    waiting = [pool.submit(scheduler.embed_query, "q"), pool.submit(scheduler.embed_documents, ["p"])]
    wait_until(lambda: texts_queued(scheduler) == 2)
    threading.Timer(0.1, gated.gate.set).start()
    scheduler.close()
    for future in waiting:
        with pytest.raises(BackendUnavailable):
            future.result(5)
    assert running.result(5).shape == (1, 64)  # a model call under way finishes
    assert gated.threads and not any(thread.is_alive() for thread in gated.threads)
    with pytest.raises(BackendUnavailable):
        scheduler.embed_query("after close")


def test_memory_wraps_once_and_closes_its_own_scheduler(tmp_path: Path) -> None:
    memory = AsyncMemory(build_store(f"sqlite:///{tmp_path / 'a.db'}"), build_embedder("hashing"))
    assert isinstance(memory.embedding, EmbeddingScheduler)
    asyncio.run(memory.close())
    with pytest.raises(BackendUnavailable):
        memory.embedding.embed_query("closed with the memory")

    shared = EmbeddingScheduler(build_embedder("hashing"))
    other = AsyncMemory(build_store(f"sqlite:///{tmp_path / 'b.db'}"), shared)
    assert other.embedding is shared
    asyncio.run(other.close())
    assert shared.embed_query("still open: the caller owns it").shape == (256,)
    shared.close()


def test_adds_and_extraction_embed_in_their_users_lane(gated: GatedEmbedder, tmp_path: Path,
                                                       pool: ThreadPoolExecutor) -> None:
    scheduler = EmbeddingScheduler(gated, chunk_texts=1)
    memory = Memory(_async=AsyncMemory(build_store(f"sqlite:///{tmp_path / 'm.db'}"), scheduler))
    big = pool.submit(memory.add, [{"role": "user", "content": f"message {i}"} for i in range(4)],
                      user_id="alice", infer=False)
    gated.entered.wait(5)
    extracted = pool.submit(memory.add, "I live in Shanghai and I am allergic to seafood", user_id="bob")
    wait_until(lambda: "user:bob" in scheduler.queued()["passages"])  # type: ignore[operator]
    assert "user:alice" in scheduler.queued()["passages"]  # type: ignore[operator]
    gated.gate.set()
    assert len(big.result(10)["results"]) == 4 and extracted.result(10)["results"]
    bob_first = next(i for i, (kind, texts) in enumerate(gated.calls) if kind == "documents"
                     and "message" not in texts[0])
    assert bob_first == 1  # bob's facts went right after alice's first chunk, not after all of hers
    memory.close()
    scheduler.close()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=300), min_size=1, max_size=20), st.text(min_size=1, max_size=300))
def test_results_equal_the_unscheduled_embedder(texts: list[str], query: str) -> None:
    assert np.array_equal(SCHEDULED_HASHING.embed_documents(texts), PLAIN_HASHING.embed_documents(texts))
    assert np.array_equal(SCHEDULED_HASHING.embed_query(query), PLAIN_HASHING.embed_query(query))


PLAIN_HASHING = build_embedder("hashing")
SCHEDULED_HASHING = EmbeddingScheduler(build_embedder("hashing"), chunk_texts=3, chunk_chars=200)


def test_a_long_text_is_cut_to_the_embedders_bound() -> None:
    hashing = EmbeddingScheduler(build_embedder("hashing"))
    long_text = "用户喜欢在周末去公园散步，也喜欢看电影。" * 5000
    bound = hashing.max_input_chars
    assert np.array_equal(hashing.embed_documents([long_text]), PLAIN_HASHING.embed_documents([long_text[:bound]]))
    assert np.array_equal(hashing.embed_query(long_text), PLAIN_HASHING.embed_query(long_text[:bound]))
    hashing.close()


@pytest.fixture(scope="module")
def e5() -> Any:
    return build_embedder("e5")


@pytest.mark.parametrize("unit", ["I moved to Shanghai last spring and my sister cooks noodles. ",
                                  "我去年春天搬到了上海，姐姐每次都给我做面条。"])
def test_a_5mb_text_costs_what_its_kept_prefix_costs(e5: Any, unit: str) -> None:
    """A 5 MB text is cut to what the model reads before anything else is done with it: embedding it costs what
    embedding the kept prefix costs (in turns, best of three each: the machine is shared, with the suite's other
    pytest-xdist worker too), where tokenizing all of it would take many times that."""
    scheduler = EmbeddingScheduler(e5)
    huge = unit * (5_000_000 // len(unit.encode()))
    kept = fit_input(e5, huge)
    assert huge.startswith(kept) and e5.count_tokens(kept) <= e5.max_input_tokens < e5.count_tokens(kept + unit)
    scheduler.embed_query("warm up")
    timings: dict[str, list[float]] = {"huge": [], "kept": []}
    vectors = {}
    for _ in range(3):
        for name, text in (("huge", huge), ("kept", kept)):
            began = time.perf_counter()
            vectors[name] = scheduler.embed_documents([text])[0]
            timings[name].append(time.perf_counter() - began)
    assert min(timings["huge"]) < 2 * min(timings["kept"]) + 0.1, timings
    assert np.allclose(vectors["huge"], vectors["kept"], atol=1e-6)
    assert np.allclose(vectors["huge"], e5.embed_documents([kept])[0], atol=1e-6)
    short = "用户对海鲜过敏"
    assert fit_input(e5, short) == short and np.allclose(scheduler.embed_query(short), e5.embed_query(short))
    scheduler.close()


def test_e5_batched_queries_match_single_ones(e5: Any) -> None:
    questions = ["where do I live", "我对什么过敏", "what does my sister cook"]
    batch = e5.embed_queries(questions)
    for row, question in zip(batch, questions, strict=True):
        assert np.allclose(row, e5.embed_query(question), atol=1e-4)


def test_failures_reach_the_caller(pool: ThreadPoolExecutor) -> None:
    class Failing(HashingEmbedder):
        def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
            raise BackendUnavailable("embedding service unreachable")

    register_embedder("failing", lambda arg, options: Failing())
    scheduler = EmbeddingScheduler(build_embedder("failing"), chunk_texts=1)
    with pytest.raises(BackendUnavailable, match="unreachable"):
        scheduler.embed_documents(["a", "b", "c"])
    assert scheduler.embed_query("queries still work").shape == (256,)
    assert scheduler.queued() == {"queries": 0, "passages": {}}
    scheduler.close()



class TwoEngineEmbedder(GatedEmbedder):
    """GatedEmbedder with a second engine for queries (QueriesAside), which is never gated: what runs there finishes
    while the first engine waits at the gate."""

    query_engines = 2

    def embed_queries_aside(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(("aside", list(texts)))
        return HASHING_64.embed_queries(texts)


register_embedder("two-engines", lambda arg, options: TwoEngineEmbedder())
HASHING_64 = HashingEmbedder(dims=64)  # what GatedEmbedder's vectors are


def test_a_lone_query_runs_on_the_first_engine_not_aside() -> None:
    embedder = build_embedder("two-engines")
    assert isinstance(embedder, TwoEngineEmbedder)
    embedder.gate.set()
    scheduler = EmbeddingScheduler(embedder)
    for question in ("where do I live", "我对什么过敏"):
        assert np.array_equal(scheduler.embed_query(question), HASHING_64.embed_query(question))
    assert [kind for kind, _ in embedder.calls] == ["query", "query"]
    scheduler.close()
    assert scheduler.use.aside_calls == 0 and scheduler.use.queries == 2


@pytest.mark.parametrize("first", ["query", "documents"])
def test_queries_arriving_while_the_first_engine_is_busy_run_aside_at_once(first: str) -> None:
    embedder = build_embedder("two-engines")
    assert isinstance(embedder, TwoEngineEmbedder)
    scheduler = EmbeddingScheduler(embedder)
    with ThreadPoolExecutor(max_workers=4) as pool:
        try:
            busy: Future[np.ndarray] = (pool.submit(scheduler.embed_query, "held at the gate") if first == "query"
                                        else pool.submit(scheduler.embed_documents, ["held at the gate"]))
            assert embedder.entered.wait(5)
            later = [pool.submit(scheduler.embed_query, f"question {i}") for i in range(3)]
            for i, future in enumerate(later):  # answered while the first engine still waits at the gate
                assert np.array_equal(future.result(5), HASHING_64.embed_query(f"question {i}"))
            assert not busy.done()
        finally:
            embedder.gate.set()
        busy.result(5)
    assert embedder.calls[0][0] == first and {kind for kind, _ in embedder.calls[1:]} == {"aside"}
    assert sorted(text for _, texts in embedder.calls[1:] for text in texts) == [f"question {i}" for i in range(3)]
    scheduler.close()  # its threads joined: every call counted
    # Counted apart (the metrics' memory_embedding_second_engine_*) and within the query totals.
    use = scheduler.use
    assert use.aside_calls == len(embedder.calls) - 1 and use.aside_queries == 3 and use.aside_seconds > 0
    assert use.queries == 3 + (first == "query") and use.query_calls == use.aside_calls + (first == "query")


def test_an_embedder_with_one_engine_gets_no_aside_thread(gated: GatedEmbedder, pool: ThreadPoolExecutor) -> None:
    gated.query_engines = 1  # type: ignore[attr-defined]
    scheduler = EmbeddingScheduler(gated)
    busy = pool.submit(scheduler.embed_query, "held at the gate")
    gated.entered.wait(5)
    later = pool.submit(scheduler.embed_query, "waits for the first")
    wait_until(lambda: scheduler.queued()["queries"] == 1)
    assert not later.done()
    gated.gate.set()
    assert busy.result(5).shape == later.result(5).shape == (64,)
    scheduler.close()


def test_e5_second_engine_gives_the_first_engines_vectors(e5: Any) -> None:
    """Bit for bit: a search's results must not depend on which engine embedded its query."""
    questions = ["where do I live", "我对什么过敏", "what does my sister cook", "咖啡 hiking"]
    assert e5.query_engines in (1, 2)
    assert np.array_equal(e5.embed_queries_aside(questions), e5.embed_queries(questions))
    assert np.array_equal(e5.embed_queries_aside(questions[:1])[0], e5.embed_query(questions[0]))
