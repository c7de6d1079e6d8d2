"""The embedding scheduler: every embedding a Memory makes goes through one, which decides what the model does next.

An embedding model is one slow, shared resource (e5 on 2 cores: 7-10 ms a query, ~25 ms a short passage, 0.25 s a
long one). Served first come first served, a search waited behind whatever was queued: 232 s behind one 50 KB add.
Here:

* every text is first cut to what the model reads (`base.fit_input`, on the caller's thread);
* queries go first: a query waits for at most the one passage chunk already running, never for queued passages;
* passages run in chunks of at most `chunk_texts` texts and `chunk_chars` characters (one text at least), and a
  local model's in chunks of one text while queries are coming in;
* passage chunks take turns between lanes (`embedding_lane`, one per user), so one user's thousand texts do not hold
  up another user's add;
* queries that are waiting together run as one model call when the embedder can batch them (`QUERY_BATCH`); a search
  awaits its query without holding a thread (`aembed_query`), so every search in flight waits in that batch;
* a local model with a second engine for queries (`QueriesAside`) gets a second thread that takes the queries
  waiting while the first is busy, so two calls run at once; a query that finds the first engine free runs there,
  as it did without the second (a lone query is not moved to the slower single-threaded engine);
* `use` counts the model's calls, texts and busy seconds (metrics: memory_embedding_*);
* a job that cannot start within its timeout fails with `Overloaded` (HTTP 503 + Retry-After) instead of waiting
  without bound; once started, it runs to the end.

A local model runs on exactly one scheduler thread; a remote service (`max_concurrency` on the embedder, or the
`concurrency` argument) on that many. Threads start on demand, are daemons, and stop after a minute idle or on close().
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from jiyi import tracing
from jiyi.embedders.base import DEFAULT_MAX_INPUT_CHARS, Embedder, QueriesAside, QueryBatching, fit_input
from jiyi.errors import BackendUnavailable, Overloaded

# Queries waiting together are embedded in one call. e5 on 2 cores, k queries one by one vs one batch (median ms):
# idle k=2 14.7 vs 13.5, k=4 29.0 vs 25.6, k=8 61.2 vs 52.4; with the cores busy elsewhere k=2 141 vs 88,
# k=4 296 vs 128 (fewer wake-ups of the engine's thread team). A batch is never slower, so batch what is waiting.
QUERY_BATCH = 16
# A query waits for at most one passage chunk. e5 on 2 cores, short memories (26 characters median): 1 text 15 ms,
# 2 texts 28, 4 texts 54, 8 texts 106 - batching passages saves only ~10 %, so a local model's chunks are small. A
# remote service pays a round trip per call, so its chunks are large (it also runs several at once).
LOCAL_CHUNK = (2, 200)  # texts, characters
# While searches are coming in (a query within the last QUERIES_RECENT_SECONDS), a local model's passage chunks are
# one text: a query waits for a shorter chunk. e5, 10k memories, a search client beside 2 writers (bench/scale.py,
# 3 interleaved rounds each): chunks of 2 - search p50/p99 under load 44-58 / 68-85 ms, adds 75-91/s; always 1 -
# 36-37 / 65-67 ms, adds 64-83/s. Adapting keeps the larger chunks for bulk writes when nobody searches.
QUERIES_RECENT_SECONDS = 2.0
REMOTE_CHUNK = (32, 16_000)
IDLE_SECONDS = 60.0  # a worker thread with nothing to do for this long stops; the next job starts another
CLOSE_WAIT_SECONDS = 2.0  # close() waits this long for a running model call (e5's longest is ~1 s) before returning

_lane: contextvars.ContextVar[str] = contextvars.ContextVar("jiyi_embedding_lane", default="")


@contextmanager
def embedding_lane(name: str) -> Iterator[None]:
    """Passages embedded inside this block share the lane `name`; lanes take turns, one chunk each. The lane follows
    the context: asyncio tasks and asyncio.to_thread carry it, loop.run_in_executor does not (copy the context)."""
    token = _lane.set(name)
    try:
        yield
    finally:
        _lane.reset(token)


@dataclass
class ModelUse:
    """What the model was asked to do so far: calls, texts and seconds (wall time of the calls), by kind. Queries per
    query call is the batch the searches got (metrics: memory_embedding_*; bench/throughput.py)."""

    query_calls: int = 0
    queries: int = 0
    query_seconds: float = 0.0
    passage_calls: int = 0
    passages: int = 0
    passage_seconds: float = 0.0
    # Of the query calls, texts and seconds, those the second engine ran (QueriesAside): how often searches found the
    # first engine busy, and what the second one cost.
    aside_calls: int = 0
    aside_queries: int = 0
    aside_seconds: float = 0.0


@dataclass(eq=False)
class _Job:
    texts: list[str]
    lane: str
    future: Future[np.ndarray] = field(default_factory=Future)
    taken: int = 0  # texts handed to a worker so far
    submitted: float = field(default_factory=time.perf_counter)
    started: float | None = None  # when a worker took its first text (the span's wait in line)
    batch: int = 1  # queries embedded in the same model call (query jobs)
    done: int = 0  # texts embedded so far
    parts: dict[int, np.ndarray] = field(default_factory=dict)  # first text's index -> vectors; chunks may finish
    # out of order when several workers run
    refused: Overloaded | None = None  # an awaited query that could not start in time (aembed_query)


class EmbeddingScheduler:
    """An Embedder in front of another one (`inner`); see the module docstring for the rules.

    `chunk_texts` / `chunk_chars`: a passage chunk's size (default: LOCAL_CHUNK, or REMOTE_CHUNK when the embedder
    runs several calls at once). `query_timeout` / `passage_timeout`: seconds a query / a passage job may wait to start
    before it fails with Overloaded. A search waits seconds at most, not minutes; a write (an add, the extraction
    worker's facts) may wait longer, and the extraction worker retries the turn later anyway."""

    def __init__(self, embedder: Embedder, *, query_timeout: float = 5.0, passage_timeout: float = 60.0,
                 chunk_texts: int | None = None, chunk_chars: int | None = None, query_batch: int = QUERY_BATCH,
                 concurrency: int | None = None) -> None:
        if isinstance(embedder, EmbeddingScheduler):
            raise TypeError("the embedder is already scheduled; use it as it is (see scheduled())")
        self.inner = embedder
        self.model_id = embedder.model_id
        self.calibration = embedder.calibration
        self.max_input_chars = getattr(embedder, "max_input_chars", DEFAULT_MAX_INPUT_CHARS)
        self.query_timeout = query_timeout
        self.passage_timeout = passage_timeout
        self.query_batch = query_batch
        self.concurrency = concurrency or int(getattr(embedder, "max_concurrency", 1))
        default_texts, default_chars = LOCAL_CHUNK if self.concurrency == 1 else REMOTE_CHUNK
        self.chunk_texts = chunk_texts or default_texts
        self.chunk_chars = chunk_chars or default_chars
        self._cond = threading.Condition()
        self._queries: deque[_Job] = deque()
        self._lanes: OrderedDict[str, deque[_Job]] = OrderedDict()  # the lane at the front goes next
        self._running: dict[str, int] = {}  # lane -> its chunks being embedded now
        self._threads: list[threading.Thread] = []
        self._busy = 0  # workers running a job now (the aside thread is not one)
        self._aside = embedder if (isinstance(embedder, QueriesAside) and embedder.query_engines > 1
                                   and self.concurrency == 1) else None
        self._aside_thread: threading.Thread | None = None
        self._closed = False
        self._seconds_per_char = 0.0  # of passage embedding, a running average: estimates Retry-After
        self._last_query = -float("inf")  # time.monotonic() of the last query submitted
        self.use = ModelUse()

    def __repr__(self) -> str:
        return f"EmbeddingScheduler({self.inner!r})"

    @property
    def dims(self) -> int:  # a remote embedder learns its dimension from its first answer
        return self.inner.dims

    @dims.setter
    def dims(self, value: int) -> None:
        self.inner.dims = value

    # --- the Embedder contract ------------------------------------------------------------------------------

    # Each job's span ("embeddings {model}", GenAI conventions) is the caller's: from submitting to the vectors, the
    # wait in line included (jiyi.embedding.wait_ms), since that is what a slow search spent there.

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        with tracing.model_span("embeddings", self.model_id) as span:
            job = self._submit([fit_input(self.inner, t) for t in texts], query=False)
            vectors = self._wait(job, self.passage_timeout, "passage embedding")
            _describe(span, job, "passage")
            return vectors

    def embed_query(self, text: str) -> np.ndarray:
        with tracing.model_span("embeddings", self.model_id) as span:
            job = self._submit([fit_input(self.inner, text, query=True)], query=True)
            vector = self._wait(job, self.query_timeout, "query embedding")
            _describe(span, job, "query")
            return vector

    async def aembed_query(self, text: str) -> np.ndarray:
        """embed_query for a coroutine: it waits without holding a thread, so every search in flight has its query
        queued and the model takes them as one batch (a thread pool in front of the model let only as many queries
        wait as it had threads)."""
        with tracing.model_span("embeddings", self.model_id) as span:
            job = self._submit([fit_input(self.inner, text, query=True)], query=True)
            waited = asyncio.wrap_future(job.future)
            # A timer on the loop, not wait_for(shield(waited)): that pair cost every search ~26 us of the event
            # loop (Python 3.11: a waiter future, a shield future and their callbacks, measured in isolation).
            timer = asyncio.get_running_loop().call_later(self.query_timeout, self._refuse_if_waiting, job)
            try:
                vector = await waited
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if job.refused is not None and not (task is not None and task.cancelling()):
                    raise job.refused from None  # the timer cancelled it: it could not start in time
                job.future.cancel()  # a query its caller no longer waits for is not embedded, if it has not started
                raise
            finally:
                timer.cancel()
            _describe(span, job, "query")
            return vector

    def queued(self) -> dict[str, object]:
        """What waits to start: {"queries": count, "passages": {lane: texts}} (for metrics and tests)."""
        with self._cond:
            lanes = {lane: sum(len(job.texts) - job.taken for job in jobs) for lane, jobs in self._lanes.items()}
            return {"queries": len(self._queries), "passages": lanes}

    def close(self) -> None:
        """Stop the threads; jobs that have not finished fail with BackendUnavailable. The inner embedder is the
        caller's and stays open."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            pending = [*self._queries, *(job for jobs in self._lanes.values() for job in jobs)]
            self._queries.clear()
            self._lanes.clear()
            for job in pending:
                job.future.set_exception(BackendUnavailable("the embedder was closed before this embedding ran"))
            threads = [*self._threads, *([self._aside_thread] if self._aside_thread is not None else [])]
            self._cond.notify_all()
        for thread in threads:
            if thread is not threading.current_thread():
                thread.join(timeout=CLOSE_WAIT_SECONDS)

    # --- callers' side --------------------------------------------------------------------------------------

    def _submit(self, texts: list[str], *, query: bool) -> _Job:
        job = _Job(texts, "" if query else _lane.get())
        with self._cond:
            if self._closed:
                raise BackendUnavailable("the embedder is closed")
            if query:
                self._queries.append(job)
                self._last_query = time.monotonic()
            elif job.lane in self._lanes:
                self._lanes[job.lane].append(job)
            else:
                self._lanes[job.lane] = deque([job])
                # A lane that arrives while another's chunk runs goes before that lane's next chunk (round-robin as if
                # the running lane rejoined the line when its chunk ended; lanes with a running chunk are at the back).
                for lane in [name for name in self._lanes if self._running.get(name)]:
                    self._lanes.move_to_end(lane)
            if len(self._threads) < self.concurrency:
                thread = threading.Thread(target=self._work, name=f"jiyi-embed-{len(self._threads)}", daemon=True)
                self._threads.append(thread)
                thread.start()
            if query and self._aside is not None and self._aside_thread is None:
                self._aside_thread = threading.Thread(target=self._work_aside, name="jiyi-embed-aside", daemon=True)
                self._aside_thread.start()
            if self._aside_thread is not None:
                self._cond.notify_all()  # the worker, or the aside thread if the worker is busy
            else:
                self._cond.notify()
        return job

    def _wait(self, job: _Job, timeout: float, what: str) -> np.ndarray:
        wait([job.future], timeout=timeout)
        if not job.future.done():
            self._give_up(job, timeout, what)
        return job.future.result()

    def _refuse_if_waiting(self, job: _Job) -> None:
        """aembed_query's timeout, on the event loop: a query that has not started is taken out of the line and its
        caller gets Overloaded (its future is cancelled, which wakes the caller); one that has started runs on."""
        with self._cond:  # a worker takes a job under this lock: it cannot start between these lines
            if job.future.done() or job.future.running():
                return
            # Said before the cancel, which is what wakes the caller.
            job.refused = Overloaded(f"the embedding model is busy: the query embedding could not start within "
                                     f"{self.query_timeout:g} s", retry_after=self._backlog_seconds())
            job.future.cancel()
            self._discard(job)

    def _give_up(self, job: _Job, timeout: float, what: str) -> None:
        """Raise Overloaded for a job that has not started within its timeout; one that has started runs on."""
        with self._cond:
            gave_up = job.future.cancel()  # only possible while the job has not started
            if gave_up:
                self._discard(job)
            retry_after = self._backlog_seconds()
        if gave_up:
            raise Overloaded(f"the embedding model is busy: the {what} could not start within {timeout:g} s",
                             retry_after=retry_after)

    def _discard(self, job: _Job) -> None:
        queue = self._queries if job in self._queries else self._lanes.get(job.lane)
        if queue is not None and job in queue:
            queue.remove(job)
            if not queue and queue is not self._queries:
                del self._lanes[job.lane]

    def _backlog_seconds(self) -> float:
        chars = sum(len(text) for jobs in self._lanes.values() for job in jobs for text in job.texts[job.taken:])
        return min(max(1.0, chars * self._seconds_per_char / self.concurrency), 60.0)

    # --- workers' side --------------------------------------------------------------------------------------

    def _work(self) -> None:
        while (task := self._next_task()) is not None:
            try:
                task()
            finally:
                with self._cond:
                    self._busy -= 1

    def _work_aside(self) -> None:
        """The aside thread: queries that wait while every worker is busy, on the embedder's second engine."""
        assert self._aside is not None
        while True:
            with self._cond:
                batch: list[_Job] = []
                while not self._closed:
                    if self._queries and self._busy >= self.concurrency:
                        batch = self._take_queries()
                        if batch:
                            break
                    elif not self._cond.wait(timeout=IDLE_SECONDS) and not self._queries:
                        break
                if not batch:
                    self._aside_thread = None
                    return
            self._run_queries(batch, self._aside.embed_queries_aside)

    def _take_queries(self) -> list[_Job]:
        """The queries waiting, up to a batch, marked started (under the lock)."""
        batch: list[_Job] = []
        while self._queries and len(batch) < self.query_batch:
            job = self._queries.popleft()
            if job.future.set_running_or_notify_cancel():
                batch.append(job)
        began = time.perf_counter()
        for job in batch:
            job.started, job.batch = began, len(batch)
        return batch

    def _next_task(self) -> Callable[[], None] | None:
        with self._cond:
            while not self._closed:
                if self._queries:
                    batch = self._take_queries()
                    if batch:
                        self._busy += 1
                        if self._queries and self._aside_thread is not None:
                            self._cond.notify_all()  # more than a batch waits: the aside thread may take it
                        return lambda: self._run_queries(batch)
                elif self._lanes:
                    task = self._next_chunk()
                    if task is not None:
                        self._busy += 1
                        if self._queries and self._aside_thread is not None:
                            self._cond.notify_all()
                        return task
                elif not self._cond.wait(timeout=IDLE_SECONDS) and not (self._queries or self._lanes):
                    break
            self._threads.remove(threading.current_thread())
            return None

    def _next_chunk(self) -> Callable[[], None] | None:
        lane, jobs = next(iter(self._lanes.items()))
        job = jobs[0]
        start = end = job.taken
        chars = 0
        if start == 0 and not job.future.set_running_or_notify_cancel():
            end = len(job.texts)  # its caller gave up on it
        if job.started is None:
            job.started = time.perf_counter()
        most = self.chunk_texts
        if self.concurrency == 1 and time.monotonic() - self._last_query < QUERIES_RECENT_SECONDS:
            most = 1  # searches are coming in: the next query waits for one text at most
        while end < len(job.texts) and end - start < most and (
                end == start or chars + len(job.texts[end]) <= self.chunk_chars):
            chars += len(job.texts[end])
            end += 1
        job.taken = end
        if end == len(job.texts):
            jobs.popleft()  # handed out whole; the worker that finishes its last chunk completes it
        if jobs:
            self._lanes.move_to_end(lane)  # the next lane's turn
        else:
            del self._lanes[lane]
        if job.future.done():
            return None
        self._running[lane] = self._running.get(lane, 0) + 1
        return lambda: self._run_chunk(job, start, end, chars)

    def _run_queries(self, batch: list[_Job],
                     aside: Callable[[Sequence[str]], np.ndarray] | None = None) -> None:
        """`aside`: the second engine's embed_queries_aside (any batch size), instead of the first engine."""
        began = time.perf_counter()
        batcher = aside or (self.inner.embed_queries if len(batch) > 1 and isinstance(self.inner, QueryBatching)
                            else None)
        try:
            if batcher is not None:
                try:
                    matrix = batcher([job.texts[0] for job in batch])
                except Exception as exc:
                    for job in batch:
                        job.future.set_exception(exc)
                    return
                for job, row in zip(batch, matrix, strict=True):
                    job.future.set_result(row)
                return
            for job in batch:
                try:
                    job.future.set_result(self.inner.embed_query(job.texts[0]))
                except Exception as exc:
                    job.future.set_exception(exc)
        finally:
            with self._cond:
                spent = time.perf_counter() - began
                self.use.query_calls += 1 if batcher is not None else len(batch)
                self.use.queries += len(batch)
                self.use.query_seconds += spent
                if aside is not None:
                    self.use.aside_calls += 1
                    self.use.aside_queries += len(batch)
                    self.use.aside_seconds += spent

    def _run_chunk(self, job: _Job, start: int, end: int, chars: int) -> None:
        began = time.perf_counter()
        try:
            vectors = self.inner.embed_documents(job.texts[start:end])
        except Exception as exc:
            with self._cond:
                self._chunk_ended(job.lane)
                if not job.future.done():
                    job.future.set_exception(exc)
                    self._discard(job)
            return
        with self._cond:
            self._chunk_ended(job.lane)
            self.use.passage_calls += 1
            self.use.passages += end - start
            self.use.passage_seconds += time.perf_counter() - began
            took = (time.perf_counter() - began) / max(chars, 1)
            self._seconds_per_char = took if not self._seconds_per_char else 0.8 * self._seconds_per_char + 0.2 * took
            job.parts[start] = vectors
            job.done += end - start
            if job.done < len(job.texts) or job.future.done():
                return
            job.future.set_result(np.concatenate([job.parts[i] for i in sorted(job.parts)]))


    def _chunk_ended(self, lane: str) -> None:
        self._running[lane] -= 1
        if not self._running[lane]:
            del self._running[lane]


def _describe(span: tracing.SpanLike, job: _Job, kind: str) -> None:
    if span.is_recording():
        span.set_attributes({"jiyi.embedding.kind": kind, "jiyi.embedding.texts": len(job.texts),
                             "jiyi.embedding.batch": job.batch,
                             "jiyi.embedding.wait_ms": round(((job.started or job.submitted) - job.submitted) * 1000,
                                                             3)})


def scheduled(embedder: Embedder, **options: Any) -> EmbeddingScheduler:
    """`embedder` behind a scheduler of its own (`options`: EmbeddingScheduler's); one already behind a scheduler is
    returned as it is."""
    if isinstance(embedder, EmbeddingScheduler):
        return embedder
    return EmbeddingScheduler(embedder, **options)
