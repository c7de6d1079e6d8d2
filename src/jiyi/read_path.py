"""The read path: search (hybrid recall, optional rerank, access refresh) and recall for a chat turn.

`recall` finds the memories that matter for the next reply with a chain of queries, cheapest first
(sillytavern-memory-write-and-retrieval.md §4):
  1. "question" — the last user message, and together with it
     "context"  — the recent conversation plus "User question: …" (≤ 1200 characters), for weak questions whose
                  subject was said earlier ("你今天有什么不一样？" after "我昨晚失眠了");
  2. "rewrite"  — when the caller turned it on and neither found anything: an LLM rewrites the question into one
                  self-contained query.
A stage "hits" when a memory is relevant enough (SearchHit.relevance ≥ min_relevance), not merely when something comes
back: a weak question always finds *something* vaguely similar. A question that asks to be reminded ("…叫啥来着",
"do you remember my…") takes its best memory from a lower bar (reminder_min_relevance). Relevance is read in the
query's own language's range (embedders/base.py Calibration.for_query). One deadline covers the whole chain.

The question and the context are searched together, and what either finds relevant is injected, best first. The seed
tries the context only after the question missed; but a weak question that finds some vaguely similar memory
relevant enough then stops the chain with the wrong memory, while the conversation would have named the right one.
Measured on bench/zh_retrieval.py (e5, the context strategy): all-but-none hit 0.758 → 0.818 on the users the gate
was calibrated on, 0.793 → 0.810 on the others, chit-chat false injections unchanged. Both queries go to the
embedder at once, which embeds them in one call (embedders/scheduler.py).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar, TypeVarTuple

import numpy as np

from jiyi import tracing
from jiyi.capability import CapabilityCheck
from jiyi.core import answer_kinds
from jiyi.core.entities import find_mentions
from jiyi.core.injection import DEFAULT_BUDGET_CHARS, MEMORY_HEADER, inject, memory_block
from jiyi.core.intent import (
    asks_about_now,
    asks_about_the_assistant,
    asks_about_the_user,
    asks_how_things_stand,
    asks_something,
    asks_to_be_reminded,
    describes_the_assistant,
    greets,
)
from jiyi.core.lexicon import Lexicon, lexicon
from jiyi.core.messages import ChatMessage, evidence_id
from jiyi.core.prompts import REWRITE
from jiyi.core.query_enhancement import (
    CONTEXT_QUERY_MAX_CHARS,
    clean_rewrite,
    context_query,
    last_user_message,
    recent_conversation,
    rewrite_input,
)
from jiyi.core.ranking import RankingWeights
from jiyi.core.relevance_bar import clears, fitted_bar, out_of_reach
from jiyi.core.retrieval import (
    Retrieval,
    RetrievalSettings,
    SearchRequest,
    _indexed_words,
    candidate_pool,
    hybrid_search,
    in_scope,
    replied_to,
    without_covered_messages,
)
from jiyi.core.slots import newer_values
from jiyi.core.speakers import named_in, names_someone, written_as_names
from jiyi.core.supersession import (
    asks_about_before,
    changed_by,
    common_words,
    may_say_a_change,
    put_in_place,
    said_at,
    superseded_by,
)
from jiyi.core.temporal import EventTime, resolve_event_time
from jiyi.core.vocative import without_the_name
from jiyi.core.who_is_who import who_is_who
from jiyi.daemon_pool import DaemonThreadPool
from jiyi.embedders.base import AsyncQueries, Embedder
from jiyi.errors import BackendUnavailable, ConfigError
from jiyi.filters import Node, matches
from jiyi.in_flight import SEARCHES
from jiyi.llms.base import LLM, LLMError, LLMTimeout
from jiyi.records import Category, Clock, MemoryRecord, Scope, SearchHit, utcnow
from jiyi.stores.base import MemoryStore
from jiyi.stores.entities import EntityStore, GraphRelation
from jiyi.text import has_cjk, normalize, query_terms

if TYPE_CHECKING:
    from jiyi.rerankers.base import Reranker

log = logging.getLogger("jiyi.read")
_awaits_queries = CapabilityCheck[AsyncQueries](AsyncQueries)  # asked on every search
_T = TypeVar("_T")
_Args = TypeVarTuple("_Args")


class DeadlineExceeded(BackendUnavailable):
    """The recall did not finish within its deadline."""


@dataclass(frozen=True, slots=True)
class ReadSettings:
    retrieval: RetrievalSettings = field(default_factory=RetrievalSettings)
    min_relevance: float = 0.5  # what counts as "relevant" for the recall chain and for injection
    # A question that asks to be reminded ("…叫啥来着", "do you remember…") brings its best memory from this
    # relevance up: see `recall`. At min_relevance or above, off.
    reminder_min_relevance: float = 0.4
    # A message that neither asks about the user nor asks for advice ("tell me a joke", "good night Tara", "how many
    # weeks in a year") gets a memory from its own words only from this relevance up (intent.asks_about_the_user);
    # at 1, never (the conversation before it is still searched). Small talk matched the user's own small talk ("yo"
    # → "yo nova"). On bench/context.py's development half, with the usual bar for every message: something was
    # injected for 29 % of the Chinese and 73 % of the English small talk and unanswerable questions, answers 42 % and
    # 66 %; never: 13 % and 38 %, answers 39 % and 56 % (questions about someone by name alone lose theirs).
    unaddressed_min_relevance: float = 1.0
    # Once the question's best memory clears the bar, the other top candidates from this relevance up come with it:
    # the bar says *whether* memory speaks to the question, but which candidate answers it is much less certain than
    # that. With e5, the answer to a question about the user is the top candidate for 42 % (zh) and 49 % (en) of
    # bench/context.py's development half, among the top 5 for 78 % and 84 %: a topical neighbour
    # ("周末好爽，睡到十一点才起") outranks the answer ("现在周末在家附近报了个陶艺课"), which the chat model can still
    # pick out. Measured there with the bar unchanged (so small talk gets nothing more often): the answer injected
    # 43.0 → 54.8 % (zh), 64.5 → 71.0 % (en), stale values as before (10 of 31, 9 of 27); on the held-out half
    # 45.7 → 57.4 % (zh), stale 9 → 10 of 31. 0.25 and 0.35 were within two points of 0.3 in a replay of the
    # development half's candidates. At min_relevance or above, off; off when the caller sets min_relevance.
    companion_min_relevance: float = 0.3
    # A question that speaks to the user's life, in a language core/relevance_bar.py has a model for (Chinese),
    # clears the bar when that model, fitted on bench/context.py's development half, says its candidates answer it
    # (best relevance and best cosine together); False, or another language: when one reaches min_relevance.
    fitted_bar: bool = True
    context_messages: int = 6  # messages before the question that make the context query
    context_max_chars: int = CONTEXT_QUERY_MAX_CHARS
    rewrite_timeout: float = 2.5  # seconds
    deadline: float = 3.0  # seconds, for a whole recall
    rerank_candidates: int = 30  # how many fused candidates a reranker re-scores
    rerank_timeout: float = 2.0
    refresh_access: bool = True  # returned memories count as reviewed (access_count + 1, last_accessed_at)
    # /context puts a line before the memories saying who the people a question names are to the user, from the
    # entity graph (core/who_is_who.py): "Who is who: Arjun is the user's brother; Arjun lives in Chicago."
    who_is_who: bool = True

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> ReadSettings:
        """From config["retrieval"]: any field above, plus ranking weights (retention, importance, recency),
        rule_relevance, attribute_relevance, rule_limit, core_limit, episode_weight, question_weight,
        neighbour_weight (0 turns the neighbours' support off), other_speaker_weight (1 turns it off) and graph_limit (0
        turns the entity graph's recall path off)."""
        section = dict(config.get("retrieval") or {})
        # Shares of a score (0 to 1), checked here: a wrong one would otherwise fail only when a search weighs with it.
        for name in ("min_relevance", "reminder_min_relevance", "unaddressed_min_relevance",
                     "companion_min_relevance", "episode_weight", "question_weight",
                     "other_speaker_weight"):
            value = section.get(name, 0.0)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
                raise ConfigError(f"retrieval setting {name} must be a number from 0 to 1, got {value!r}")
        for name in ("who_is_who", "fitted_bar"):
            if not isinstance(section.get(name, True), bool):
                raise ConfigError(f"retrieval setting {name} must be true or false, got {section[name]!r}")
        ranking_fields = {k: section.pop(k) for k in ("retention", "importance", "recency") if k in section}
        retrieval_keys = ("rule_relevance", "attribute_relevance", "rule_limit", "core_limit", "episode_weight",
                          "question_weight", "neighbour_weight", "other_speaker_weight", "graph_limit")
        retrieval_fields = {k: section.pop(k) for k in retrieval_keys if k in section}
        unknown = set(section) - set(cls.__dataclass_fields__) - {"retrieval"}
        if unknown:
            raise ConfigError(f"unknown retrieval settings: {sorted(unknown)}")
        try:
            retrieval = RetrievalSettings(ranking=RankingWeights(**ranking_fields), **retrieval_fields)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"retrieval settings: {exc}") from exc
        return cls(retrieval=retrieval, **section)


@dataclass(slots=True)
class Stage:
    name: str  # question | context | rewrite
    outcome: str  # hit | miss | skipped | error | timeout
    query: str = ""
    best_relevance: float = 0.0
    found: int = 0  # memories at or above min_relevance
    elapsed_ms: float = 0.0
    detail: str | None = None

    def as_dict(self) -> dict[str, Any]:
        item = {"stage": self.name, "outcome": self.outcome, "query": self.query,
                "best_relevance": round(self.best_relevance, 4), "found": self.found,
                "elapsed_ms": round(self.elapsed_ms, 2)}
        if self.detail:
            item["detail"] = self.detail
        return item


@dataclass(frozen=True, slots=True)
class RecallRequest:
    messages: Sequence[ChatMessage]
    scope: Scope
    where: Node | None = None
    top_k: int = 5
    rewrite: bool = False
    rewrite_prompt: str | None = None
    rewritten_query: str | None = None  # a rewrite the caller made with its own model: used instead of the LLM
    user_name: str | None = None
    char_name: str | None = None
    context_messages: int | None = None
    min_relevance: float | None = None
    deadline: float | None = None  # seconds
    # Only these stages (question, context, rewrite); e.g. a caller that already searched the question and the
    # context and now has its own rewrite asks for ("rewrite",) alone.
    only_stages: tuple[str, ...] | None = None


STAGE_NAMES = ("question", "context", "rewrite")
MAX_ECHOES = 20  # extra candidates asked for, so that echoes of the prompt's own messages do not crowd out memories
# A word in at most this many memories (or this share of the store) is rare enough to name something of the user's
# life (see _speaks_of_what_it_knows).
RARE_WORD_MEMORIES = 3
RARE_WORD_SHARE = 0.02
_ENGLISH_WORDS = re.compile(r"[A-Za-z][\w'-]*")
# The kinds of the user's entities that a message naming them asks about someone of the user's life.
_SOMEONE = frozenset({"person", "pet"})



def injected_text(record: MemoryRecord) -> str:
    """A memory as the model reads it: a message kept word for word carries the day it was said, since it may say
    "yesterday" or "this morning"; a fact reads as it is."""
    if record.category is Category.MESSAGE and record.event_time is not None:
        return f"[{record.event_time:%Y-%m-%d}] {record.content}"
    return record.content


@dataclass(slots=True)
class Recall:
    hits: list[SearchHit]
    stages: list[Stage]
    timings_ms: dict[str, float] = field(default_factory=dict)


class ReadPath:
    def __init__(self, store: MemoryStore, embedder: Embedder, *, llm: LLM | None = None,
                 reranker: Reranker | None = None, settings: ReadSettings | None = None,
                 clock: Clock = utcnow) -> None:
        self.store = store
        self.clock = clock
        self.embedder = embedder
        self.llm = llm
        self.reranker = reranker
        self.settings = settings or ReadSettings()
        # Searches get threads of their own: a reply must never wait behind the write path's batch of embeddings.
        # Daemon threads: a never-closed sync Memory's last reviews are still written at exit (daemon_pool.py).
        self._pool = DaemonThreadPool(max_workers=4, thread_name_prefix="jiyi-read")
        # The lexicon is built on first use (~1 s): build it now, beside start-up, not inside the first search's
        # deadline.
        self._pool.submit(lexicon)
        # Reviews (access counts) waiting to be written, and the task writing them; see refresh().
        self._reviews: list[tuple[list[str], datetime]] = []
        self._review_writer: asyncio.Task[None] | None = None

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    async def _io(self, fn: Callable[[*_Args], _T], *args: *_Args) -> _T:
        # In the caller's context, as asyncio.to_thread does: the store's spans are children of the search's.
        call = functools.partial(contextvars.copy_context().run, fn, *args)
        return await asyncio.get_running_loop().run_in_executor(self._pool, call)

    # --- search -----------------------------------------------------------------------------------------------

    async def search(self, request: SearchRequest, *, rerank: bool | None = None, refresh: bool = True,
                     timeout: float | None = None) -> Retrieval:
        """Hybrid search, reranked when a reranker is configured (and `rerank` is not False). With `refresh` the
        memories returned count as reviewed. `timeout` bounds the whole call (DeadlineExceeded)."""
        started = time.perf_counter()
        with tracing.span("jiyi.search") as span, SEARCHES.one():
            try:
                retrieval = await asyncio.wait_for(self._search(request, rerank, refresh, started), timeout)
            except TimeoutError:
                raise DeadlineExceeded(f"search did not finish within {timeout:.2f} s") from None
            if span.is_recording():
                span.set_attributes({
                    **tracing.scope_attributes(request.scope), "jiyi.search.top_k": request.top_k,
                    "jiyi.search.reranked": "rerank_ms" in retrieval.timings_ms,
                    "jiyi.search.results": len(retrieval.hits),
                    "jiyi.memory.ids": [h.record.id for h in retrieval.hits],
                    **tracing.texts("jiyi.query", [request.query]),
                    **tracing.texts("jiyi.memory.texts", [h.record.content for h in retrieval.hits])})
            return retrieval

    async def refresh(self, memory_ids: Sequence[str]) -> None:
        """Count these memories as reviewed: returned to a caller (the forgetting curve's review effect).

        The write starts at once but the caller does not wait for it: a search that waited for its own write paid
        for every WAL checkpoint in its latency (HTTP search p99 at 10k memories: 35-43 ms with, 27 ms without).
        Reviews that arrive while one is being written go together in the next write. Readers that show access
        counts call settle() first, so nobody reads a count older than their own search."""
        if not (self.settings.refresh_access and memory_ids):
            return
        self._reviews.append((list(memory_ids), self.clock()))
        if self._review_writer is None or self._review_writer.done():
            self._review_writer = asyncio.get_running_loop().create_task(self._write_reviews())

    async def settle(self) -> None:
        """Wait until every review recorded so far is in the store."""
        while self._review_writer is not None and not self._review_writer.done():
            await asyncio.shield(self._review_writer)

    async def _write_reviews(self) -> None:
        while self._reviews:
            batch, self._reviews = self._reviews, []
            try:
                await self._io(self._record_reviews, batch)
            except Exception:  # a lost access count costs a little retention, never a search
                log.exception("could not record %d reviews", sum(len(ids) for ids, _ in batch))

    def _record_reviews(self, batch: list[tuple[list[str], datetime]]) -> None:
        # One write for the batch: a memory returned by two searches counts twice (the store adds one per id
        # listed), its last access being the latest search of the batch (they are milliseconds apart).
        self.store.record_access([i for ids, _ in batch for i in ids], max(when for _, when in batch))

    async def _search(self, request: SearchRequest, rerank: bool | None, refresh: bool,
                      started: float) -> Retrieval:
        request = replace(request, now=request.now or self.clock())
        query_vector, embed_ms = await self._embed_query(request.query)
        use_reranker = self.reranker is not None and rerank is not False
        if use_reranker:
            wide = replace(request, top_k=max(self.settings.rerank_candidates, request.top_k), threshold=None)
            retrieval = await self._io(self._hybrid, wide, candidate_pool(wide.top_k), query_vector)
            retrieval = await self._rerank(request, retrieval)
        else:
            retrieval = await self._io(self._hybrid, request, None, query_vector)
        if query_vector is not None:
            retrieval.timings_ms["embed_ms"] = embed_ms
        if refresh:
            await self.refresh([h.record.id for h in retrieval.hits])
        retrieval.timings_ms["total_ms"] = round((time.perf_counter() - started) * 1000, 3)
        return retrieval

    async def _embed_query(self, query: str) -> tuple[np.ndarray | None, float]:
        """The query's vector and the ms it took, awaited outside the search threads when the embedder lets a
        coroutine wait (the scheduler): then every search in flight has its query queued at once, and the model embeds
        them in one call. (None, 0) for an embedder that only blocks: the search thread embeds the query itself."""
        if not _awaits_queries(self.embedder):
            return None, 0.0
        started = time.perf_counter()
        vector = await self.embedder.aembed_query(query)
        return vector, round((time.perf_counter() - started) * 1000, 3)

    def _hybrid(self, request: SearchRequest, pool: int | None, query_vector: np.ndarray | None) -> Retrieval:
        return hybrid_search(self.store, self.embedder, request, self.settings.retrieval, pool=pool,
                             query_vector=query_vector)

    async def _rerank(self, request: SearchRequest, retrieval: Retrieval) -> Retrieval:
        """Re-score the fused candidates with the reranker; if it fails, the fused order stands (cut to top_k)."""
        assert self.reranker is not None
        started = time.perf_counter()
        hits = retrieval.hits
        try:
            with tracing.model_span("rerank", self.reranker.model_id) as span:
                span.set_attribute("jiyi.rerank.documents", len(hits))
                scores = await self.reranker.rerank(request.query, [h.record.content for h in hits],
                                                    timeout=self.settings.rerank_timeout)
        except (BackendUnavailable, TimeoutError) as exc:
            log.warning("rerank failed (%s); keeping the fused order", type(exc).__name__)
            retrieval.timings_ms["rerank_failed"] = 1.0
            kept = [h for h in hits if request.threshold is None or h.score >= request.threshold]
            return Retrieval(kept[: request.top_k], retrieval.timings_ms, retrieval.paths)
        now = request.now or self.clock()
        reranked = []
        for hit, score in zip(hits, scores, strict=True):
            weighed, _ = self.settings.retrieval.ranking.weigh(score, hit.record, now)
            if request.threshold is not None and weighed < request.threshold:
                continue
            details = {**hit.details, "rerank": round(score, 6), "fused_score": hit.score} if request.explain else {}
            reranked.append(SearchHit(hit.record, round(weighed, 6), details, round(score, 6)))
        reranked.sort(key=lambda h: (-h.score, h.record.id))
        reranked = without_covered_messages(reranked, request.top_k, request.query)
        retrieval.timings_ms["rerank_ms"] = round((time.perf_counter() - started) * 1000, 3)
        return Retrieval(reranked[: request.top_k], retrieval.timings_ms, retrieval.paths)

    # --- recall for a chat turn -------------------------------------------------------------------------------

    async def recall(self, request: RecallRequest, stages: list[Stage] | None = None) -> Recall:
        """The relevant memories for the next reply (empty when nothing is relevant) and what each stage did (also
        appended to `stages` as they finish). Raises DeadlineExceeded, or the store's / embedder's error, when the
        search itself cannot be done."""
        settings = self.settings
        deadline = time.monotonic() + (request.deadline or settings.deadline)
        min_relevance = settings.min_relevance if request.min_relevance is None else request.min_relevance
        stages = [] if stages is None else stages
        index = last_user_message(request.messages)
        if index is None:
            stages.append(Stage("question", "skipped", detail="no user message"))
            return Recall([], stages)
        question = " ".join(request.messages[index].content.split())
        count = settings.context_messages if request.context_messages is None else request.context_messages
        recent = recent_conversation(request.messages, index, count)

        # A message of this very conversation, kept as evidence when the client saved the chat, is already in the
        # prompt: finding it again is an echo, not a memory (it would match the question or the context word for word).
        in_prompt = {_said(m.content) for m in request.messages}
        echoes = min(len(in_prompt), MAX_ECHOES)

        # A question that asks to be reminded of something the user said vouches that a memory answers it, in
        # other words than the memory's (paraphrases fall below the usual bar: "What was the name of my dog
        # again?" vs "I adopted a greyhound named Biscuit" is 0.44 with e5). Its best memory is brought from a lower
        # bar, alone: a person asked "do you remember…?" offers their best guess, and the reply can still say it is
        # not that. The price, bench/zh_retrieval.py: of reminders no memory answers, 84 % get a memory (56 % at
        # the usual bar), one of another topic 66 % (41 %).
        reminder = asks_to_be_reminded(question)
        about_the_user = reminder or asks_about_the_user(question)
        reminder_floor = min(settings.reminder_min_relevance, min_relevance)

        about_now = asks_about_now(question)
        # A question about the user that names a time gone by ("三月那次我去看病，是哪儿不舒服来着", "what did I have
        # fitted back in February?") vouches, as a reminder does, for a memory said then: when the best candidate was
        # said within that time, the time confirms the guess whatever its relevance (the words of such a question
        # match their answer weakly: "had fitted back in February" / "fitted with hearing aids" is relevance 0.25).
        named_time = said_then(question, self.clock()) if about_the_user else None

        def companion(hit: SearchHit, relevant: list[SearchHit]) -> bool:
            # Asked how things are now ("我现在还抽烟吗", "am I still vegan?"), an older memory below the bar adds only
            # an older state: only one said after the relevant ones may come along (bench/context.py's development
            # half, replayed on its candidates: stale values injected 9 → 8 (zh), answers 54.8 → 53.8 %; en 10 → 10,
            # 68.8 → 66.7 %).
            if hit.relevance < min(settings.companion_min_relevance, settings.min_relevance):
                return False
            return not about_now or said_at(hit.record) > max(said_at(h.record) for h in relevant)

        async def question_bar(hits: list[SearchHit], found: list[SearchHit]) -> tuple[list[SearchHit], bool]:
            """The question's own candidates that go in: for a question that speaks to the user's life, all the top
            ones (companions: see `companion`) once its best clears min_relevance or, below it, the fitted bar
            (core/relevance_bar.py); for small talk and the like, those from unaddressed_min_relevance (never, by
            default). The fitted bar only opens the gate: fitted to close it too (in place of min_relevance and the
            reminder's lower bar), it took small talk on bench/context.py's development half 16.7 -> 12.5 % but
            cost bench/zh_retrieval.py's paraphrases (question stage hit 0.826 -> 0.739) and gained no answer on
            the blind third half (zh 45.3 % either way); opening only, the third half's answers 45.3 -> 53.1 %."""
            addressed = await self.addressed(question, hits, request.char_name, request.scope.user_id, found)
            if addressed is None:
                floor = max(min_relevance, settings.unaddressed_min_relevance)
                return ([h for h in hits if h.relevance >= floor] if floor < 1.0 else []), True
            # Fitted on questions about the user: not on questions to the assistant about its persona, nor on
            # messages that only name something of the user's memories ("今天好热哦 感觉夏天要来了" got four
            # memories at relevance 0.49 on bench/context.py's development half), nor on an exclamation in the first
            # person ("哈哈哈哈哈哈笑死我了" got five there; bench/reminders.py's Chinese chit-chat 0.067 -> 0.033,
            # no answer lost on the three development halves).
            bar = (fitted_bar(question) if settings.fitted_bar and addressed == "user" and asks_something(question)
                   else None)
            # Candidates out of the question's reach (core/relevance_bar.py MIN_COSINE) go in by no bar, nor the
            # best of them by the reminder's lower one (the second value: False).
            if bar is not None and out_of_reach(question, hits, self.embedder.calibration, self.embedder.model_id):
                return [], False
            anchors = [h for h in hits if h.relevance >= min_relevance]
            if not anchors and bar is not None and clears(question, hits, self.embedder.calibration, bar):
                anchors = [max(hits, key=lambda h: h.relevance)]
            anchor_ids = {h.record.id for h in anchors}
            return ([h for h in hits if h.record.id in anchor_ids or companion(h, anchors)] if anchors else []), True

        async def attempt(name: str, query: str, spent_ms: float = 0.0,
                          detail: str | None = None) -> tuple[list[SearchHit], Stage]:
            started = time.perf_counter()
            # explain: each hit's paths carry its plain cosine, which the bar reads (core/relevance_bar.py).
            search = SearchRequest(query, request.scope, top_k=request.top_k + echoes, where=request.where,
                                   explain=True)
            retrieval = await self.search(search, refresh=False, timeout=max(deadline - time.monotonic(), 0.001))
            hits = [h for h in retrieval.hits
                    if h.record.category is not Category.MESSAGE or _said(h.record.content) not in in_prompt]
            found = hits
            hits = self._in_the_users_words(hits, request.top_k + echoes, question)
            hits = (await self._io(self._still_standing, hits, question, request.char_name))[:request.top_k]
            within_reach = True
            if name == "question" and request.min_relevance is None:
                relevant, within_reach = await question_bar(hits, found)
            else:
                relevant = [h for h in hits if h.relevance >= min_relevance]
                if relevant and name != "context" and request.min_relevance is None:
                    # The context query is the conversation: its neighbours are the conversation's, not the question's.
                    relevant = [h for h in hits if h.relevance >= min_relevance or companion(h, relevant)]
            if relevant and name != "context" and request.min_relevance is None and len(hits) < request.top_k:
                # The places the assistant's replies left: the messages they answered, as companions only (they
                # never open the gate: a reply's match says the exchange is on the subject, not the user's words).
                answered = await self._io(self._answered_by_replies, found, hits, question, request, in_prompt)
                relevant += [h for h in answered if companion(h, relevant)][:request.top_k - len(hits)]
            best = max((h.relevance for h in hits), default=0.0)
            if not relevant and reminder and within_reach and hits and hits[0].relevance >= reminder_floor:
                relevant, detail = hits[:1], "asks to be reminded: the best memory, below the usual bar"
            if (named_time is not None and request.min_relevance is None and hits and hits[0] not in relevant
                    and named_time.start <= said_at(hits[0].record) < named_time.end):
                relevant = [hits[0], *relevant][:request.top_k]
                detail = f"names a time gone by ({named_time.phrase}): the best memory, said then"
            return relevant, Stage(name, "hit" if relevant else "miss", query, best, len(relevant),
                                   spent_ms + (time.perf_counter() - started) * 1000, detail)

        async def traced_attempt(name: str, query: str) -> tuple[list[SearchHit], Stage]:
            with tracing.span(f"jiyi.context.{name}") as span:
                relevant, stage = await attempt(name, query)
                describe_stage(span, stage)
                return relevant, stage

        def skip(stage: Stage) -> None:
            stages.append(stage)
            with tracing.span(f"jiyi.context.{stage.name}") as span:
                describe_stage(span, stage)

        def wanted(name: str) -> bool:
            if request.only_stages is None or name in request.only_stages:
                return True
            skip(Stage(name, "skipped", detail="not asked for"))
            return False

        first: list[tuple[str, str]] = []
        if wanted("question"):
            # Searched without the assistant's name where the message addresses it ("小暖在不在"): the user's own
            # messages open with it too, and would all match a greeting (core/vocative.py).
            first.append(("question", without_the_name(question, request.char_name)))
        if not wanted("context"):
            pass
        elif not recent:
            skip(Stage("context", "skipped", detail="no earlier messages"))
        else:
            first.append(("context", context_query(recent, question, settings.context_max_chars)))
        if first:
            outcomes = await asyncio.gather(*(traced_attempt(name, query) for name, query in first),
                                            return_exceptions=True)
            attempts = [outcome for outcome in outcomes if not isinstance(outcome, BaseException)]
            stages.extend(stage for _, stage in attempts)
            stages.sort(key=lambda s: STAGE_NAMES.index(s.name))
            for outcome in outcomes:
                if isinstance(outcome, BaseException):
                    raise outcome
            if found := merged([relevant for relevant, _ in attempts], request.top_k, question):
                return Recall(found, stages)
        if not wanted("rewrite"):
            return Recall([], stages)
        found = []
        with tracing.span("jiyi.context.rewrite") as span:
            rewritten = await self._rewrite(request, question, recent, deadline, stages)
            if rewritten is not None:
                found, stage = await attempt("rewrite", *rewritten)
                stages.append(stage)
            describe_stage(span, stages[-1])
        return Recall(found, stages)

    async def addressed(self, question: str, hits: list[SearchHit], char_name: str | None = None,
                        user_id: str | None = None, seen: list[SearchHit] | None = None) -> str | None:
        """How a message speaks to the user's life, or None (small talk, general knowledge): "user" when it asks about
        the user (or to be reminded, or for advice), "persona" when it asks the assistant about the persona the user
        gave it, "named" when it names something of the user's memories."""
        if asks_to_be_reminded(question) or asks_about_the_user(question):
            return "user"
        if asks_about_the_assistant(question) and any(describes_the_assistant(h.record.content, char_name)
                                                      for h in hits):
            return "persona"
        return "named" if await self._io(self._speaks_of_what_it_knows, question, hits, user_id, char_name,
                                         seen) else None

    def _speaks_of_what_it_knows(self, question: str, hits: list[SearchHit], user_id: str | None = None,
                                 char_name: str | None = None, seen: list[SearchHit] | None = None) -> bool:
        """Whether a message that is not in the first person still speaks of the user's life: it names someone of
        their memories (a speaker, a capitalised name: "What did Caroline research?", "How's Biscuit?"; a person or
        a pet of the user's entity graph, however written: "how's tash's health going?", "汤圆现在是哪个在带哦"),
        or says a word that few of the memories hold and one of these does ("what was the sunset over the lake
        like?", "年糕最近老是掉毛") — not as the one it greets or addresses ("早上好小满", "Good evening, Rosie."),
        nor a word of greeting ("heyyy kit"): those are everywhere in small talk."""
        if names_someone(question, (h.record for h in hits)):
            return True
        if user_id and self._names_someone_of_theirs(question, user_id, char_name):
            return True
        # A name a lowercase writer leaves lowercase ("darren what job ah?"), which the candidates — the
        # assistant's replies among them — write as a name ("What does Darren think?").
        written = written_as_names(question, (h.record for h in seen or hits))
        if char_name:
            written.discard(char_name.casefold())
        if written and named_in(question, written):
            return True
        words = [w for w in query_terms(question) if not greets(w) and not (has_cjk(w) and len(w) == 1)]
        if not words or not hits:
            return False
        frequencies, total = self.store.document_frequencies(words)
        rare = {w for w in words if 0 < frequencies.get(w, 0) <= max(RARE_WORD_MEMORIES, RARE_WORD_SHARE * total)}
        held = {w for w in rare for h in hits
                if Lexicon.holds(w, _indexed_words(h.record.content), normalize(h.record.content))}
        # As the question writes them (English terms are stems), to tell a word named from a name addressed.
        said = {w for w in held if has_cjk(w)}
        said |= {token for token in _ENGLISH_WORDS.findall(question) if any(w in held for w in query_terms(token))}
        return bool(named_in(question, said))

    def _names_someone_of_theirs(self, question: str, user_id: str, char_name: str | None) -> bool:
        """Whether the message names a person or a pet of the user's entity graph (core/graph_recall.py's reading),
        other than the assistant it may address by name. On bench/context.py's development halves, 17 answerable
        questions about the user's people were read as small talk: lowercase and Chinese names ("darren what job
        ah?", "阿峰想帮个女改咩名？") are no capitalised name."""
        if not isinstance(self.store, EntityStore):
            return False
        graph = self.store.current_graph(user_id)
        addressee = char_name.casefold() if char_name else None
        for entity_id, start, end in find_mentions(question, graph):
            entity = graph.entities.get(entity_id)
            if entity is not None and entity.kind in _SOMEONE and question[start:end].casefold() != addressee:
                return True
        return False

    @staticmethod
    def _in_the_users_words(hits: list[SearchHit], top_k: int, question: str) -> list[SearchHit]:
        """The hits without the assistant's earlier replies kept as evidence ("That sounds tough! How are you
        feeling?"): they say nothing about the user, and match only through the user's message they answered (their
        vector holds it), which is a candidate of its own. On bench/context.py's development half, 37 % of the English
        small talk got the assistant's own words; putting the message it answered in a reply's place did worse than
        leaving it out (answers 55.9 % vs 57.0 % in English, 38.7 % vs 39.8 % in Chinese); where that message is
        not a candidate of its own, it may still come along as a companion (_answered_by_replies)."""
        kept = [h for h in hits if not (h.record.category is Category.MESSAGE and h.record.role == "assistant")]
        return without_covered_messages(kept, top_k, question)

    def _answered_by_replies(self, found: list[SearchHit], kept: list[SearchHit], question: str,
                             request: RecallRequest, in_prompt: set[str]) -> list[SearchHit]:
        """The user's messages that the assistant's replies among `found` answered, where neither the message nor a
        fact that stands for it is among the `kept` hits: a reply is embedded with the message it answers, and the
        pair can match a question that neither matches alone ("我家那条狗最近有啥新情况没" finds "五只！！大黄辛苦
        了" for "然后大黄上周生了 五只！"). Each takes its reply's place and score; never a message marked as changed
        by a later one (core/supersession.py) or that a newer candidate says changed, an echo of the prompt, an
        expired one, or one outside the request's scope or filter.

        bench/context.py's development half, with the answered messages as companions: the answer injected 59.1 →
        60.2 % (zh), 74.2 → 75.3 % (en), at rank 1, stale values and small talk unchanged. In a reply's place as a
        candidate like any other (so able to clear the bar alone), 60.2 % and 76.3 %, but small talk got something
        39.7 % of the time in English instead of 32.9 % ("bit of a weird week sunny", by its reply "Weird how? You
        okay?", for "what's my middle name?")."""
        replies = [h for h in found if h.record.category is Category.MESSAGE and h.record.role == "assistant"]
        answered = {h.record.id: evidence_id(a) for h in replies if (a := replied_to(h.record)) is not None}
        have = {h.record.id for h in kept}
        messages = self.store.get_many(sorted(set(answered.values()) - have)) if answered else {}
        now = self.clock()
        added = []
        for reply in replies:
            message = messages.get(answered.get(reply.record.id, ""))
            if (message is None or message.role != "user" or message.category is not Category.MESSAGE
                    or changed_by(message) or _said(message.content) in in_prompt
                    or (message.expiration_date is not None and message.expiration_date <= now)
                    or not in_scope(message.scope, request.scope) or not matches(request.where, message)):
                continue
            added.append(replace(reply, record=message, details={**reply.details, "reply": reply.record.id}
                                 if reply.details else {}))
        selected = without_covered_messages([*kept, *added], len(kept) + len(added))
        added = [h for h in selected if h.record.id not in have]
        if not added:
            return []
        # What a newer candidate says has changed is left out, as among the other hits (whose places stay as they are).
        standing = {h.record.id for h in self._still_standing([*kept, *added], question, request.char_name)}
        return [h for h in added if h.record.id in standing]

    def _still_standing(self, hits: list[SearchHit], question: str, char_name: str | None = None) -> list[SearchHit]:
        """The hits less those that were said to have changed (core/supersession.py): an older memory marked as
        changed by a newer one that still stands gives its place to the newer one (once), and among the hits, an
        older one of the same subject as a newer one that says it changed is left out. A question about the past
        ("我以前…", "what did I use to…") keeps them all."""
        if asks_about_before(question):
            return hits
        later = {i for h in hits for i in changed_by(h.record)}
        found = {h.record.id: h.record for h in hits}
        if later - set(found):
            found.update(self.store.get_many(sorted(later - set(found))))  # live ones only: a deleted change undoes
        replaced: list[SearchHit] = []
        seen: set[str] = set()
        for hit in hits:
            standing = [found[i] for i in changed_by(hit.record) if i in found]
            record = max(standing, key=said_at) if standing else hit.record
            if record.id not in seen:
                seen.add(record.id)
                replaced.append(hit if record is hit.record else replace(hit, record=record))
        says_a_change = any(may_say_a_change(h.record.content) for h in replaced)
        if not says_a_change and not asks_how_things_stand(question):
            return replaced
        common = common_words(self.store, [question, *(h.record.content for h in replaced)], char_name)
        vectors = self.store.get_vectors([h.record.id for h in replaced])
        ids = [h.record.id for h in replaced if h.record.id in vectors]
        matrix = np.stack([vectors[i] for i in ids]) if ids else np.zeros((0, 0), dtype=np.float32)
        position = {memory_id: index for index, memory_id in enumerate(ids)}

        def near(new: MemoryRecord, old: MemoryRecord) -> bool:
            """Closer in meaning to the change than the typical candidate is: e5 puts a change and what it changed
            only a little above two unrelated messages of one user (cosine medians 0.90 / 0.88 in Chinese, 0.86 / 0.83
            in English, on bench/context.py's development half), so the bar is relative to the other candidates."""
            if new.id not in position or old.id not in position:
                return False
            cosines = matrix @ matrix[position[new.id]]
            return bool(cosines[position[old.id]] >= np.median(np.delete(cosines, position[new.id])))

        def cosines_of(record: MemoryRecord) -> dict[str, float] | None:
            if record.id not in position:
                return None
            return dict(zip(ids, (matrix @ matrix[position[record.id]]).tolist(), strict=True))

        if says_a_change:
            replaced = put_in_place(replaced, superseded_by(replaced, question, common, lexicon().joins, near))
        # Then, asked about now, a newer value said without a word of change (core/slots.py).
        words = lexicon()
        return put_in_place(replaced, newer_values(replaced, question, common, words.same_concept, words.joins,
                                                   cosines_of))

    async def _rewrite(self, request: RecallRequest, question: str, recent: list[ChatMessage], deadline: float,
                       stages: list[Stage]) -> tuple[str, float, str] | None:
        """(the rewritten query, the time it took in ms, who wrote it), or None with the reason in a skipped / error /
        timeout stage."""
        def give_up(outcome: str, detail: str, started: float | None = None) -> None:
            elapsed = (time.perf_counter() - started) * 1000 if started else 0.0
            stages.append(Stage("rewrite", outcome, elapsed_ms=elapsed, detail=detail))

        if not request.rewrite:
            give_up("skipped", "rewrite is off")
            return None
        if request.rewritten_query and request.rewritten_query.strip():
            return " ".join(request.rewritten_query.split()), 0.0, "rewritten by the caller"
        if self.llm is None:
            give_up("skipped", "no LLM is configured")
            return None
        # Leave the rewritten query time to be searched: a rewrite that eats the whole deadline is wasted.
        budget = min(self.settings.rewrite_timeout, deadline - time.monotonic() - 0.25)
        if budget <= 0.1:
            give_up("skipped", "no time left before the deadline")
            return None
        prompt = request.rewrite_prompt or REWRITE
        payload = rewrite_input(question, recent, request.user_name, request.char_name, self.settings.context_max_chars)
        started = time.perf_counter()
        try:
            answer = await asyncio.wait_for(
                self.llm.complete([{"role": "system", "content": prompt}, {"role": "user", "content": payload}],
                                  json_mode=False, max_tokens=120, temperature=0.0, timeout=budget),
                budget + 0.05)
        except Exception as exc:  # a rewrite is optional: whatever the LLM raises, the earlier stages' answer stands
            timed_out = isinstance(exc, TimeoutError | LLMTimeout)
            if not isinstance(exc, TimeoutError | LLMError):
                log.warning("the LLM's rewrite failed", exc_info=True)
            give_up("timeout" if timed_out else "error", f"{type(exc).__name__}: {exc}"[:200], started)
            return None
        rewritten = clean_rewrite(answer)
        if rewritten is None:
            give_up("error", "the LLM's rewrite was empty", started)
            return None
        return rewritten, (time.perf_counter() - started) * 1000, f"rewritten by {self.llm.model_id}"

    async def context(self, request: RecallRequest, messages: Sequence[dict[str, Any]], *,
                      budget_chars: int = DEFAULT_BUDGET_CHARS, header: str = MEMORY_HEADER) -> dict[str, Any]:
        """Recall for the next reply and inject the memories into `messages` (see core/injection.py). Never raises for
        a failing backend or a missed deadline: the messages then come back unchanged with `degraded: true`."""
        with tracing.span("jiyi.context") as span:
            answer = await self._context(request, messages, budget_chars, header, span)
            if span.is_recording():
                span.set_attributes({
                    **tracing.scope_attributes(request.scope), "jiyi.context.messages": len(request.messages),
                    "jiyi.context.top_k": request.top_k, "jiyi.context.degraded": answer["degraded"],
                    "jiyi.context.memories": len(answer["memories"]),
                    "jiyi.memory.ids": [m["id"] for m in answer["memories"]],
                    **tracing.texts("jiyi.memory.texts", [m["memory"] for m in answer["memories"]])})
            return answer

    async def _context(self, request: RecallRequest, messages: Sequence[dict[str, Any]], budget_chars: int,
                       header: str, span: tracing.SpanLike) -> dict[str, Any]:
        started = time.perf_counter()
        stages: list[Stage] = []
        try:
            recall = await self.recall(request, stages)
        except Exception as exc:  # silent degradation: the reply goes ahead without long-term memory
            tracing.record_error(span, exc)
            if isinstance(exc, BackendUnavailable):
                log.warning("recall failed, answering without memories: %s", exc)
            else:
                log.exception("recall failed, answering without memories")
            return {"messages": inject(messages, ""), "memory_block": "", "memories": [], "who_is_who": None,
                    "stages": [s.as_dict() for s in stages], "degraded": True,
                    "error": f"{type(exc).__name__}: {exc}"[:300], "elapsed_ms": _elapsed_ms(started)}
        people = await self._who_is_who(request)
        lines = [*([people] if people else []), *(injected_text(h.record) for h in recall.hits)]
        block, used = memory_block(lines, budget_chars, header)
        if people:
            people = people if 0 in used else None
            used = [i - 1 for i in used if i > 0]
        injected = [recall.hits[i] for i in used]
        try:
            await self.refresh([h.record.id for h in injected])
        except Exception:  # a missed review is not worth a reply without memories
            log.warning("could not record access to injected memories", exc_info=True)
        return {
            "messages": inject(messages, block),
            "memory_block": block,
            "memories": [{"id": h.record.id, "memory": h.record.content, "score": h.score, "relevance": h.relevance,
                          "category": h.record.category.value} for h in injected],
            "who_is_who": people,
            "stages": [s.as_dict() for s in recall.stages],
            "degraded": False,
            "error": None,
            "elapsed_ms": _elapsed_ms(started),
        }


    async def _who_is_who(self, request: RecallRequest) -> str | None:
        """The "who is who" line for the question's people (core/who_is_who.py), or None. A graph that cannot be
        read costs the line, never the reply."""
        user_id = request.scope.user_id
        index = last_user_message(request.messages)
        if not (self.settings.who_is_who and user_id and index is not None and isinstance(self.store, EntityStore)):
            return None
        store, question, scope, where = self.store, request.messages[index].content, request.scope, request.where
        # The graph is the user's. A request for one agent's or run's memories, or a filtered one, is told only the
        # relations one of whose memories it could see (the full graph has them; a search's cached one does not).
        narrow = bool(scope.agent_id or scope.run_id or where is not None)

        def fits(relation: GraphRelation) -> bool:
            return any(in_scope(r.scope, scope) and matches(where, r)
                       for r in store.get_many(relation.memory_ids).values())

        def line() -> str | None:
            if narrow:
                return who_is_who(question, store.graph(user_id), fits)
            return who_is_who(question, store.current_graph(user_id))

        try:
            return await self._io(line)
        except Exception:
            log.warning("could not read the entity graph for /context's who is who", exc_info=True)
            return None


def describe_stage(span: tracing.SpanLike, stage: Stage) -> None:
    """A recall stage's outcome on its span (jiyi.context.question, .context, .rewrite)."""
    if span.is_recording():
        span.set_attributes({"jiyi.stage.outcome": stage.outcome, "jiyi.stage.best_relevance": stage.best_relevance,
                             "jiyi.stage.found": stage.found, **tracing.texts("jiyi.query", [stage.query])})
        if stage.detail:
            span.set_attribute("jiyi.stage.detail", stage.detail)


def said_then(question: str, now: datetime) -> EventTime | None:
    """The time gone by a question names (上个月, 三月份, "back in February", "a couple of weeks ago"): a window that
    ended by `now`. None for none, for the present or the future (今晚, "this weekend", "next month"), and for a
    moment (刚才): a moment holds no memory to look for."""
    window = resolve_event_time(question, now)
    if window is None or window.granularity == "moment" or window.end > now:
        return None
    return window


def merged(found: Sequence[Sequence[SearchHit]], top_k: int, question: str | None = None) -> list[SearchHit]:
    """The relevant hits of several searches, best first, each memory once (its best score) and no message that a
    fact among them stands for (nor a reply to one that shares no word with the `question`)."""
    best: dict[str, SearchHit] = {}
    for hits in found:
        for hit in hits:
            if hit.record.id not in best or hit.score > best[hit.record.id].score:
                best[hit.record.id] = hit
    kind = answer_kinds.asked_kind(question) if question else None

    # A memory that holds nothing of the kind of answer asked for (a time, a number; in English a place or a name
    # too) comes after one that does, unless it matches much better (core/answer_kinds.py).
    ranked = sorted(best.values(), key=lambda h: (-h.score * answer_kinds.weight(kind, h.record.content), h.record.id))
    return without_covered_messages(ranked, top_k, question)


def _said(text: str) -> str:
    """A message's words, spacing aside, to tell the same message sent again."""
    return " ".join(text.split())


def _elapsed_ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 2)
