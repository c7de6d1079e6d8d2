"""The write path: a stored chat turn becomes memories, consistently, with every change in history.

extract facts (LLM, or jiyi's rules) → embed each fact once → find the most similar memories of the same owner →
decide ADD / UPDATE / DELETE / NONE (and BOOST for memories that shaped the reply) → apply, one transaction per change.
Then every message of the turn is kept word for word as evidence (Category.MESSAGE): searchable beneath the facts,
so what extraction missed is still found.

The turn and its messages are already stored when this runs (see AsyncMemory.add). When the LLM fails, the offline
extractor runs at once and the turn is retried with the LLM later; nothing the user said is lost.

A caller waiting for the turn (a synchronous add) gets its answer once the facts are applied: keeping the messages as
evidence costs an embedding per message and is done after the answer (`defer_evidence`, then `keep_evidence`). The
turn stays leased until then, so if the process dies in between a worker takes it again and does only what is left.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import os
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar, TypeVarTuple, cast

import numpy as np

from jiyi import tracing
from jiyi.categorizing import Categorizer
from jiyi.core import llm_entities, llm_memory, offline
from jiyi.core.categories import Taxonomy, default_taxonomy
from jiyi.core.entity_claims import Claim
from jiyi.core.episodes import stamp_summary, summarize_offline
from jiyi.core.facts import Candidate, Decision, Fact, slot_filter, slot_tag
from jiyi.core.forget_request import ForgetRequest, forget_request
from jiyi.core.importance import importance_score, on_seed_scale
from jiyi.core.lexicon import lexicon
from jiyi.core.lifecycle import LifecyclePolicy, entry_layer
from jiyi.core.messages import ChatMessage, evidence_id, in_conversation
from jiyi.core.provenance import cited_messages, translation_candidates
from jiyi.core.retrieval import REPLY_TAG, SearchRequest, hybrid_search
from jiyi.core.supersession import mark_changed, says_it_changed
from jiyi.core.temporal import resolve_event_time
from jiyi.daemon_pool import DaemonThreadPool
from jiyi.embedders.base import Embedder
from jiyi.entity_path import RECENT_MESSAGES, named_speakers, remember_entities
from jiyi.errors import BackendUnavailable
from jiyi.filters import parse_filters
from jiyi.leases import let_go, renewed
from jiyi.lifecycle import spill_working_memory
from jiyi.llms.base import LLM, LLMError
from jiyi.records import (
    Category,
    Clock,
    Event,
    Layer,
    MemoryRecord,
    MemoryType,
    Scope,
    Source,
    SourceRef,
    StoredMessage,
    TurnRecord,
    TurnStatus,
    history_row,
    revise,
    utcnow,
)
from jiyi.stores.base import MemoryStore, ScoredId
from jiyi.stores.entities import EntityStore
from jiyi.text import query_terms

if TYPE_CHECKING:  # the tracing decorator's annotation only: the write path does not build requests
    from jiyi.requests import AddRequest

log = logging.getLogger(__name__)
_T = TypeVar("_T")
_Args = TypeVarTuple("_Args")

MAX_IMPORTANCE = 5.0
# How definite an extracted statement is before hedges are counted (core/importance.py): offline rules only fire on
# plain statements, and an LLM is asked for facts, not guesses.
EXTRACTION_CERTAINTY = 0.9
# "Forget <topic>": the memories this close to the topic (fused relevance, as the read path gates on), at most so many.
FORGET_RELEVANCE = 0.5
FORGET_AT_MOST = 3
# Decisions compare a fact with facts: evidence messages and episode summaries are not memories to update or delete.
DECIDABLE = parse_filters({"jiyi.category": {"in": [Category.FACT.value, Category.CORE.value, Category.SYSTEM.value]}})
# The store's lock is polled (another process holds it): first after 5 ms, doubling up to 100 ms.
LOCK_POLL_FIRST = 0.005
LOCK_POLL_MAX = 0.1
# A message kept as evidence starts at the bottom of the importance scale: a fact saying the same ranks above it.
MESSAGE_IMPORTANCE = 0.5
_SOURCES = {"user": Source.USER, "assistant": Source.ASSISTANT, "system": Source.SYSTEM}


# In a turn's options while its facts are applied and its messages not yet kept as evidence: the roles whose messages
# a fact of the turn came from.
EVIDENCE_PENDING = "evidence_pending"
# In an async add's turn options: the add's span, which the worker's jiyi.extract span links to (docs/tracing.md).
TRACEPARENT = "traceparent"


def _reply_tag(message: StoredMessage, before: StoredMessage | None, text: str) -> list[str]:
    """An assistant's reply embedded with the user's message it answers ("恭喜！" after "我弟弟下周结婚") is tagged with
    that message (retrieval.REPLY_TAG): where a fact stands for the message, the reply alone says nothing more."""
    if before is None or message.role != "assistant" or before.role != "user" or text == message.content.strip():
        return []
    return [f"{REPLY_TAG}{before.id}"]


@dataclass(frozen=True, slots=True)
class WriteSettings:
    custom_fact_extraction_prompt: str | None = None  # mem0 v1: replaces the extraction prompt
    custom_instructions: str | None = None  # mem0 v2: the application's guidance on what to extract
    custom_update_memory_prompt: str | None = None  # mem0 v1: replaces the decision prompt
    llm_timeout: float | None = None  # per LLM call; None: the LLM client's own timeout
    candidates_per_fact: int = 5
    # A chat turn holds a handful of facts; a pasted document can yield thousands (60k characters of statements: 1,800),
    # each embedded and decided against the user's memories. The first ones are kept; the message itself is stored.
    max_facts_per_turn: int = 32
    max_attempts: int = 6  # LLM attempts per turn before it is marked failed
    retry_delay: float = 30.0  # seconds before the first retry; doubled each time, at most an hour
    # A claimed turn is leased this long, and its worker renews the lease while it works on the turn (leases.py):
    # a turn whose worker died is taken again this long after the worker's last renewal, a slow one never.
    lease_seconds: float = 15.0
    episode_every: int = 30  # messages per episode summary
    keep_messages: bool = True  # keep every message of an infer=True turn as searchable evidence
    # The scope's decision lock across processes (see WritePath._deciding), leased and renewed as a turn is: a holder
    # that died lets go after the lease; a turn waits at most decision_lock_wait.
    decision_lock_lease: float = 10.0
    decision_lock_wait: float = 60.0
    decision_attempts: int = 3  # an LLM decision made again when the memories it saw changed meanwhile
    boost: float = 0.3  # importance a memory gains when it shaped a reply
    repeat_boost: float = 0.15  # importance a memory gains when it is said again on another day
    # Who is who (entity_path.py): the rules read each user message; with this, a configured LLM does (one more call
    # a user message; core/llm_entities.py), the rules standing in where it fails.
    llm_entities: bool = False

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> WriteSettings:
        fields = {name: config[name] for name in cls.__dataclass_fields__ if config.get(name) is not None}
        write = config.get("write") or {}
        fields.update({k: v for k, v in write.items() if k in cls.__dataclass_fields__})
        return cls(**fields)

    def retry_at(self, attempts: int, now: datetime) -> datetime:
        return now + timedelta(seconds=min(self.retry_delay * 2 ** max(attempts - 1, 0), 3600.0))


@dataclass(slots=True)
class _Applied:
    event: Event
    memory_id: str
    text: str
    previous: str | None = None
    actor_id: str | None = None
    role: str | None = None
    memory_type: MemoryType | None = None  # what an ADD stored (it may differ from what the request asked)

    def as_result(self) -> dict[str, Any]:
        result: dict[str, Any] = {"id": self.memory_id, "memory": self.text, "event": self.event.value}
        if self.memory_type is not None:
            result["memory_type"] = self.memory_type.value
        if self.previous is not None:
            result["previous_memory"] = self.previous
        if self.actor_id:
            result["actor_id"] = self.actor_id
        if self.role:
            result["role"] = self.role
        return result


def describe_turn(span: tracing.SpanLike, turn: TurnRecord) -> None:
    """A processed turn on its span: its id (the add's event_id), status, extractor and what it changed."""
    if span.is_recording():
        span.set_attributes({"jiyi.event.id": turn.id, "jiyi.turn.status": turn.status.value,
                             "jiyi.turn.attempts": turn.attempts, "jiyi.turn.extractor": turn.extractor or "",
                             "jiyi.turn.results": len(turn.results), **tracing.scope_attributes(turn.scope)})


AddMethod = TypeVar("AddMethod", bound=Callable[..., Coroutine[Any, Any, dict[str, Any]]])


def traced_add(add: AddMethod) -> AddMethod:
    """AsyncMemory.run_add inside a span, jiyi.add: the scope's kind, how many messages, infer and async_mode, and
    what came of it (event id, the memories' ids; their texts and the messages only when content is recorded)."""
    if not tracing.available:
        return add

    @functools.wraps(add)
    async def traced(self: Any, request: AddRequest) -> dict[str, Any]:
        with tracing.span("jiyi.add") as span:
            result = await add(self, request)
            if span.is_recording():
                messages = request.messages  # as the caller gave them
                said = [messages] if isinstance(messages, str) else [
                    m.get("content") for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []
                results = [r for r in result.get("results") or () if isinstance(r, dict)]
                span.set_attributes({
                    **tracing.scope_attributes(request.scope), "jiyi.add.messages": len(said),
                    "jiyi.add.infer": bool(request.infer), "jiyi.add.async_mode": bool(request.async_mode),
                    "jiyi.add.results": len(results), "jiyi.memory.ids": [str(r.get("id")) for r in results],
                    **({"jiyi.event.id": result["event_id"]} if result.get("event_id") else {}),
                    **tracing.texts("jiyi.add.input", [str(text) for text in said]),
                    **tracing.texts("jiyi.memory.texts", [str(r.get("memory")) for r in results])})
            return result

    return cast(AddMethod, traced)


def _chat(messages: Sequence[StoredMessage]) -> list[ChatMessage]:
    return [ChatMessage(m.role, m.content, m.name, m.created_at, m.external_id) for m in messages]


def _search_scope(scope: Scope) -> Scope:
    # Facts are compared with what the same user (and character) said in any session: a fact repeated in a new chat
    # is a NONE that moves the memory to the new run, as in mem0, not a duplicate.
    if scope.run_id and (scope.user_id or scope.agent_id):
        return Scope(scope.user_id, scope.agent_id, None)
    return scope


class WritePath:
    def __init__(self, store: MemoryStore, embedder: Embedder, llm: LLM | None, settings: WriteSettings,
                 clock: Clock = utcnow, lifecycle: LifecyclePolicy | None = None,
                 categorizer: Categorizer | None = None) -> None:
        """`categorizer`: assigns mem0's categories to the facts written (one for `embedder`'s model if None)."""
        self.store = store
        self.categorizer = categorizer or Categorizer(embedder, store)
        self.lifecycle = lifecycle or LifecyclePolicy()
        self.clock = clock
        self.embedder = embedder
        self.llm = llm
        self.settings = settings
        # Daemon threads: a never-closed sync Memory's last adds are still finished at exit (daemon_pool.py).
        self._executor: DaemonThreadPool | None = DaemonThreadPool(max_workers=4, thread_name_prefix="jiyi-write")
        # mem0's taxonomy is built on first use (its ~10k words analysed; seconds where the lexicon's are not yet):
        # build it now, beside start-up, as the read path builds the lexicon.
        self._executor.submit(default_taxonomy)
        self._bound = False
        self._deciding_here: dict[str, tuple[asyncio.Lock, int]] = {}  # scope key -> (its lock, tasks using it)
        self._holder = f"{os.getpid()}:{uuid.uuid4()}"  # this WritePath, as the store's lock table names it
        # The entity graph, where the store keeps one (stores/entities.py): a store without it still takes turns.
        self._entities: EntityStore | None = store if isinstance(store, EntityStore) else None

    async def _io(self, fn: Callable[[*_Args], _T], *args: *_Args) -> _T:
        # Extraction's blocking work (embedding, store) runs on a pool of its own: on the shared default pool a
        # busy worker's turns would hold every thread while they wait for the embedder, and an async add's
        # one-row write would queue behind them (measured: 100–200 ms stalls; bench/write_path.py).
        # In the caller's context, as asyncio.to_thread does: the embedding lane (the turn's user) travels with it.
        call = functools.partial(contextvars.copy_context().run, fn, *args)
        return await asyncio.get_running_loop().run_in_executor(self._pool(), call)

    def _pool(self) -> DaemonThreadPool:
        if self._executor is None:
            self._executor = DaemonThreadPool(max_workers=4, thread_name_prefix="jiyi-write")
        return self._executor

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False)
            self._executor = None

    # --- one decision at a time per scope ---------------------------------------------------------------------

    @asynccontextmanager
    async def _deciding(self, scope: Scope) -> AsyncIterator[None]:
        """Hold the scope's decision lock: reading the candidates, deciding and writing happen for one turn of the
        scope at a time, across tasks (an asyncio lock: waiting costs no thread) and processes (the store's lock
        table), so two turns saying the same thing cannot both find nothing and both ADD. Other scopes never wait."""
        key = "decide:" + "|".join(f"{k}={v}" for k, v in sorted(_search_scope(scope).as_dict().items()))
        lock, users = self._deciding_here.get(key, (asyncio.Lock(), 0))
        self._deciding_here[key] = (lock, users + 1)
        try:
            async with lock:
                await self._take_store_lock(key)
                try:
                    async with renewed(functools.partial(self._renew_store_lock, key),
                                       self.settings.decision_lock_lease, key):
                        yield
                finally:
                    await let_go(self.store.unlock, key, self._holder, executor=self._pool())
        finally:
            lock, users = self._deciding_here[key]
            if users == 1:
                del self._deciding_here[key]
            else:
                self._deciding_here[key] = (lock, users - 1)

    async def _renew_store_lock(self, key: str) -> None:
        until = utcnow() + timedelta(seconds=self.settings.decision_lock_lease)
        if not await asyncio.to_thread(self.store.renew_lock, key, self._holder, until):
            log.warning("the decision lock %s ran out while held: another process may decide for the scope too", key)

    def leased(self, turns: Sequence[TurnRecord]) -> AbstractAsyncContextManager[None]:
        """Keep the claimed `turns` leased while the block works on them, each until it is finished or handed back:
        another worker takes none of them while this one lives, however long they take, and takes them within
        lease_seconds if it dies."""
        ids = [turn.id for turn in turns]

        async def renew() -> None:
            # All of them: the store leaves the finished ones alone (a turn's status here may say DONE while its
            # messages are still being kept as evidence, the stored one still PROCESSING). Not on the write pool: its
            # threads may all be busy with these very turns' slow embeddings.
            until = self.clock() + timedelta(seconds=self.settings.lease_seconds)
            await asyncio.to_thread(self.store.renew_turns, ids, until)

        return renewed(renew, self.settings.lease_seconds, f"{len(turns)} turns")

    async def _take_store_lock(self, key: str) -> None:
        wait = LOCK_POLL_FIRST
        deadline = time.monotonic() + self.settings.decision_lock_wait
        while not await self._try_store_lock(key):
            if time.monotonic() > deadline:
                raise BackendUnavailable(f"another process has held the decision lock of {key} for over "
                                         f"{self.settings.decision_lock_wait:g} s")
            await asyncio.sleep(wait)
            wait = min(wait * 2, LOCK_POLL_MAX)

    async def _try_store_lock(self, key: str) -> bool:
        """One attempt at the scope's lock in the store. Cancelled while the attempt runs on its thread (the caller's
        event loop ending, say: asyncio.run per call), a lock it took is let go at once: nobody is left to release
        it, and every later turn of the scope, in any process, would wait out its lease (30 s)."""
        guard = threading.Lock()
        state = {"abandoned": False, "taken": False}

        def attempt() -> bool:
            taken = self.store.try_lock(key, self._holder,
                                        utcnow() + timedelta(seconds=self.settings.decision_lock_lease))
            with guard:
                if taken and state["abandoned"]:
                    self.store.unlock(key, self._holder)
                    return False
                state["taken"] = taken
            return taken

        try:
            return bool(await self._io(attempt))
        except asyncio.CancelledError:
            with guard:
                state["abandoned"] = True
                taken = state["taken"]
            if taken:  # the attempt had finished: release it here (one short write; this is rare)
                self.store.unlock(key, self._holder)
            raise

    # --- one turn --------------------------------------------------------------------------------------------

    async def process(self, turn: TurnRecord, messages: Sequence[StoredMessage] | None = None, *,
                      defer_evidence: bool = False) -> TurnRecord:
        """Extract and apply one turn; never raises for an LLM or embedding failure — the turn records it.
        `defer_evidence`: once the facts are in, return the turn still leased (PROCESSING, `EVIDENCE_PENDING` in its
        options) for the caller to finish with keep_evidence()."""
        with tracing.span("jiyi.extract", linked=turn.options.get(TRACEPARENT)) as span:
            processed = await self._process(turn, messages, defer_evidence)
            describe_turn(span, processed)
            return processed

    async def _process(self, turn: TurnRecord, messages: Sequence[StoredMessage] | None,
                       defer_evidence: bool) -> TurnRecord:
        if messages is None:
            messages = await self._io(self.store.get_messages, turn.message_ids)
        if EVIDENCE_PENDING in turn.options:  # the facts were applied by a run that did not get to the evidence
            return await self.keep_evidence(turn, messages)
        turn.attempts += 1
        now = self.clock()
        applied: list[_Applied] = []  # filled as changes are made, so a turn failing midway reports what it wrote
        await self._prepare_categories(turn)
        requests = [(m, r) for m in messages if m.role == "user" and (r := forget_request(m.content))]
        if requests:
            # "忘掉我刚才说的": an instruction, carried out at once; nothing is extracted from it.
            for message, request in requests:
                applied += await self._io(self._forget_requested, turn, message, request)
            asked = {m.id for m, _ in requests}
            messages = [m for m in messages if m.id not in asked]
        try:
            if self.llm is not None:
                await self._with_llm(turn, messages, applied)
                turn.extractor = "llm"
            else:
                applied += await self._offline(turn, messages)
                turn.extractor = "offline"
            turn.status, turn.last_error = TurnStatus.DONE, None
        except LLMError as exc:
            log.warning("turn %s: LLM failed (%s); %s", turn.id, exc,
                        "kept for retry" if turn.attempts < self.settings.max_attempts else "giving up")
            if turn.extractor is None:  # the LLM is down: the offline extractor stands in until it is back
                try:
                    applied += await self._offline(turn, messages)
                    turn.extractor = "offline-fallback"
                except Exception as offline_exc:
                    log.exception("turn %s: offline fallback failed too", turn.id)
                    exc = LLMError(f"{exc}; offline fallback: {offline_exc}")
            self._schedule_retry(turn, str(exc), now)
        except Exception as exc:
            log.exception("turn %s: extraction failed", turn.id)
            self._schedule_retry(turn, f"{type(exc).__name__}: {exc}", now)
        turn.results.extend(a.as_result() for a in applied)
        if turn.status is TurnStatus.DONE or turn.extractor == "offline-fallback":
            await self._remember_entities(turn, messages, applied)
        # Every message of a party a fact of this turn is about is "covered" (it fades sooner as evidence), not only
        # the ones the facts cite: the lifecycle's figures were measured so.
        covering = sorted({a.role or "user" for a in applied if a.event in (Event.ADD, Event.UPDATE, Event.NONE)})
        if self.settings.keep_messages and defer_evidence and turn.status is TurnStatus.DONE:
            turn.options[EVIDENCE_PENDING] = covering
            turn.status = TurnStatus.PROCESSING
            turn.lease_until = self.clock() + timedelta(seconds=self.settings.lease_seconds)
            turn.updated_at = self.clock()
            await self._io(self.store.save_turn, turn)
            return turn
        if self.settings.keep_messages:
            try:
                await self._keep_messages(turn, messages, covering)
            except Exception as exc:  # e.g. the embedder is down: the turn is retried, and this with it
                log.exception("turn %s: could not keep its messages as evidence", turn.id)
                if turn.status is TurnStatus.DONE:
                    turn.attempts = max(turn.attempts, 1)
                    self._schedule_retry(turn, f"evidence: {type(exc).__name__}: {exc}", now)
        return await self._finish(turn)

    async def _remember_entities(self, turn: TurnRecord, messages: Sequence[StoredMessage],
                                 applied: Sequence[_Applied]) -> None:
        """The people, pets, places ... the user's messages name, into the user's graph (entity_path.py); an error
        is logged and the turn goes on: the graph is an index beside the memories, not part of the turn's result."""
        if self._entities is None or not turn.scope.user_id:
            return
        facts = [a.memory_id for a in applied if a.event in (Event.ADD, Event.UPDATE, Event.NONE)]
        try:
            before = await self._io(self._messages_before, turn)
            # Pronouns are read in the user's own messages; who speaks, from everyone's, as edits.py does for
            # messages kept as said: a turn of one speaker's messages alone still has the other's before it, and
            # without them "Take care, Maria." made Maria (a speaker) a mention — the graph path then brought her
            # greetings to questions that named her (LoCoMo infer=true, 3 questions lost).
            earlier = [m.content for m in before if m.role == "user"][-RECENT_MESSAGES:]
            speakers = named_speakers(messages, [m.content for m in before])
            claims = await self._entity_claims(turn, messages, earlier)
            await self._io(functools.partial(remember_entities, speakers=speakers), self._entities, turn.scope,
                           messages, earlier, facts, claims)
        except Exception:
            log.exception("turn %s: the entity graph was not updated", turn.id)

    async def _entity_claims(self, turn: TurnRecord, messages: Sequence[StoredMessage],
                             earlier: list[str]) -> dict[str, list[Claim]]:
        """With an LLM, its reading of each user message (by message id); a message it fails on is left to the
        rules, as facts are."""
        if not self.settings.llm_entities or self.llm is None or turn.extractor != "llm" or \
                self._entities is None or not turn.scope.user_id:
            return {}
        graph = await self._io(self._entities.current_graph, turn.scope.user_id)
        claims: dict[str, list[Claim]] = {}
        recent = list(earlier)
        for message in messages:
            if message.role != "user" or not message.content.strip():
                continue
            try:
                claims[message.id] = await llm_entities.extract_entity_claims(
                    self.llm, message.content, graph, recent, timeout=self.settings.llm_timeout)
            except LLMError as exc:
                log.warning("turn %s: entity extraction by the LLM failed (%s); the rules read the message",
                            turn.id, exc)
            recent.append(message.content)
        return claims

    def _messages_before(self, turn: TurnRecord) -> list[StoredMessage]:
        """The scope's messages said before this turn's, of every role, oldest first (at most the last 40)."""
        recent = self.store.list_messages(turn.scope, 40)
        own = set(turn.message_ids)
        first_own = next((i for i, m in enumerate(recent) if m.id in own), len(recent))
        return recent[:first_own]

    async def keep_evidence(self, turn: TurnRecord, messages: Sequence[StoredMessage] | None = None) -> TurnRecord:
        """The rest of a turn whose facts are applied: keep its messages as evidence, then mark it done. Never raises
        for an embedding failure: the turn is retried (this part only) like any other."""
        with tracing.span("jiyi.evidence") as span:
            kept = await self._keep_evidence(turn, messages)
            describe_turn(span, kept)
            return kept

    async def _keep_evidence(self, turn: TurnRecord, messages: Sequence[StoredMessage] | None) -> TurnRecord:
        if messages is None:
            messages = await self._io(self.store.get_messages, turn.message_ids)
        covering = turn.options.get(EVIDENCE_PENDING) or []
        try:
            await self._keep_messages(turn, messages, covering)
        except Exception as exc:
            log.exception("turn %s: could not keep its messages as evidence", turn.id)
            turn.attempts = max(turn.attempts, 1)
            self._schedule_retry(turn, f"evidence: {type(exc).__name__}: {exc}", self.clock())
        else:
            # pop: a run cut off after this point (the loop ending while the turn was saved) is run again, whole.
            turn.options.pop(EVIDENCE_PENDING, None)
            turn.status, turn.last_error = TurnStatus.DONE, None
        return await self._finish(turn)

    async def _finish(self, turn: TurnRecord) -> TurnRecord:
        turn.lease_until, turn.updated_at = None, self.clock()
        await self._io(self.store.save_turn, turn)
        if turn.status is TurnStatus.DONE or turn.extractor == "offline-fallback":
            try:
                await self._write_episode_if_due(turn.scope)
            except Exception:
                log.exception("episode summary for %s failed", turn.scope.as_dict())
        return turn

    def _schedule_retry(self, turn: TurnRecord, error: str, now: datetime) -> None:
        turn.last_error = error[:500]
        if turn.attempts >= self.settings.max_attempts:
            turn.status = TurnStatus.FAILED
        else:
            turn.status = TurnStatus.RETRY
            turn.next_attempt_at = self.settings.retry_at(turn.attempts, now)

    async def _with_llm(self, turn: TurnRecord, messages: Sequence[StoredMessage], applied: list[_Applied]) -> None:
        assert self.llm is not None
        chat = _chat(messages)
        options = turn.options
        when = max((m.created_at for m in messages), default=None)
        timeout = self.settings.llm_timeout
        custom = options.get("prompt") or self.settings.custom_fact_extraction_prompt
        asked = self._asked_categories(turn)
        jobs = [llm_memory.extract_facts(self.llm, chat, about="user", when=when, custom_prompt=custom,
                                         custom_instructions=self.settings.custom_instructions, timeout=timeout,
                                         categories=asked)]
        if self._agent_mode(turn, messages):
            jobs.append(llm_memory.extract_facts(self.llm, chat, about="assistant", when=when, timeout=timeout,
                                                 categories=asked))
        groups = [facts[:self.settings.max_facts_per_turn] for facts in await asyncio.gather(*jobs)]
        groups[0] = groups[0] or self._as_stated(turn, messages)
        shown, reply = await self._shown_memories(turn, messages)
        for i, facts in enumerate(groups):
            boost_here = i == 0 and bool(shown and reply)
            if not facts and not boost_here:
                continue
            vectors = await self._embed([f.text for f in facts])
            await self._cite(facts, messages, vectors)
            for attempt in range(1, self.settings.decision_attempts + 1):
                # The model decides outside the lock (it may take seconds); what it decided is applied only if the
                # memories it was shown are still as they were, else it decides again (the last time, it stands).
                async with self._deciding(turn.scope):
                    candidates, nearest = await self._candidates(turn.scope, facts, vectors)
                flat = _unique_candidates(candidates)
                if not flat and not boost_here:
                    decisions = [Decision(Event.ADD, f.text, fact=f) for f in facts]  # nothing to compare with
                else:
                    decisions = await llm_memory.decide(
                        self.llm, facts, flat, shown=shown if boost_here else (), reply=reply,
                        custom_prompt=self.settings.custom_update_memory_prompt, timeout=timeout)
                async with self._deciding(turn.scope):
                    now_seen, nearest = await self._candidates(turn.scope, facts, vectors)
                    if _seen(now_seen) == _seen(candidates) or attempt == self.settings.decision_attempts:
                        applied += await self._apply(turn, messages, decisions, facts, vectors, nearest)
                        break
                log.info("turn %s: memories changed while the LLM decided; deciding again", turn.id)

    async def _offline(self, turn: TurnRecord, messages: Sequence[StoredMessage]) -> list[_Applied]:
        chat = _chat(messages)
        recent = await self._io(self.store.list_messages, turn.scope, 40)
        own = set(turn.message_ids)
        first_own = next((i for i, m in enumerate(recent) if m.id in own), len(recent))
        # Only what was said before this turn: turns queued after it must not decide who "her" is.
        context = [m.content for m in recent[:first_own] if m.role == "user"][-4:]
        facts = offline.extract_user_facts(chat, context) or self._as_stated(turn, messages)
        if self._agent_mode(turn, messages):
            facts += offline.extract_agent_facts(chat, turn.options.get("agent_name"))
        facts = facts[:self.settings.max_facts_per_turn]
        vectors = np.zeros((0, 0), dtype=np.float32)
        if facts:
            vectors = await self._embed([f.text for f in facts])  # before the lock: it holds no other turn up
        async with self._deciding(turn.scope):
            decisions: list[Decision] = []
            nearest: dict[str, float] = {}
            if facts:
                candidates, nearest = await self._candidates(turn.scope, facts, vectors)
                decisions = offline.decide_offline(facts, candidates)
            shown, reply = await self._shown_memories(turn, messages)
            if shown and reply:
                reply_terms = set(query_terms(reply))
                for candidate in shown:
                    terms = set(query_terms(candidate.text))
                    if terms and len(terms & reply_terms) >= max(1, len(terms) // 2):
                        decisions.append(Decision(Event.BOOST, candidate.text, candidate.memory_id, reason="echoed"))
            return await self._apply(turn, messages, decisions, facts, vectors, nearest)

    @staticmethod
    def _as_stated(turn: TurnRecord, messages: Sequence[StoredMessage]) -> list[Fact]:
        """For a statement given to be remembered that extraction made nothing of: the statement itself, as a fact."""
        if not turn.options.get("explicit"):
            return []
        stated = [(i, offline.stated_fact(m.content)) for i, m in enumerate(messages) if m.role == "user"]
        return [replace(fact, sources=(i,)) for i, fact in stated if fact is not None]

    async def _cite(self, facts: Sequence[Fact], messages: Sequence[StoredMessage], vectors: np.ndarray) -> None:
        """Set the sources of the facts whose extractor did not say which messages they came from (an LLM's): the
        messages of their party that hold their words (core/provenance.py), else the one nearest in meaning."""
        unplaced: list[tuple[int, list[int]]] = []
        for i, fact in enumerate(facts):
            if fact.sources:
                continue
            party = [j for j, m in enumerate(messages) if m.role == fact.about and m.content.strip()]
            if len(party) <= 1:
                fact.sources = tuple(party)
                continue
            cited = cited_messages(fact.text, [messages[j].content for j in party])
            if cited:
                fact.sources = tuple(party[k] for k in cited)
            else:
                unplaced.append((i, party))
        if not unplaced:
            return
        # Said in one language, written in another ("我对海鲜过敏" → "User is allergic to seafood"): the nearest in
        # meaning among the messages it may have been translated from.
        choices = {i: [party[k] for k in translation_candidates(facts[i].text, [messages[j].content for j in party])]
                   for i, party in unplaced}
        for i, party in choices.items():
            facts[i].sources = (party[0],)
        wanted = sorted({j for party in choices.values() if len(party) > 1 for j in party})
        if not wanted:
            return
        said = dict(zip(wanted, _unit(await self._embed([messages[j].content for j in wanted])), strict=True))
        for i, party in choices.items():
            if len(party) > 1:
                fact_vector = _unit(vectors[i][None, :])[0]
                facts[i].sources = (max(party, key=lambda j: float(said[j] @ fact_vector)),)

    def _forget_requested(self, turn: TurnRecord, message: StoredMessage, request: ForgetRequest) -> list[_Applied]:
        """Delete what the user asked to forget, only ever among their own memories: the memories made from their
        message just before this one, or those that match the named topic closely."""
        scope = Scope(turn.scope.user_id, turn.scope.agent_id, turn.scope.run_id)
        targets: list[MemoryRecord] = []
        if request.topic is None:
            earlier = [m for m in self.store.list_messages(turn.scope, 20)
                       if m.role == "user" and m.created_at <= message.created_at and m.id != message.id]
            if earlier:
                last = max(earlier, key=lambda m: m.created_at)
                targets = [r for r in self.store.iter_records(_search_scope(scope))
                           if any(ref.message_id == last.id for ref in r.provenance)]
        else:
            found = hybrid_search(self.store, self.embedder, SearchRequest(
                request.topic, _search_scope(scope), top_k=FORGET_AT_MOST, rules=False, now=self.clock()))
            targets = [hit.record for hit in found.hits if hit.relevance >= FORGET_RELEVANCE]
        now = self.clock()
        applied = []
        for record in targets:
            if record.scope.user_id != turn.scope.user_id or record.category is Category.SYSTEM:
                continue
            history = history_row(Event.DELETE, record, now, actor_id=None, role="user",
                                  reason="the user asked to forget it")
            self.store.soft_delete(record.id, "the user asked to forget it", history, now)
            applied.append(_Applied(Event.DELETE, record.id, record.content, role="user"))
        return applied

    def _agent_mode(self, turn: TurnRecord, messages: Sequence[StoredMessage]) -> bool:
        return turn.scope.agent_id is not None and any(m.role == "assistant" for m in messages)

    async def _shown_memories(self, turn: TurnRecord,
                              messages: Sequence[StoredMessage]) -> tuple[list[Candidate], str | None]:
        ids = turn.options.get("injected_memory_ids") or []
        reply = "\n".join(m.content for m in messages if m.role == "assistant") or None
        if not ids or not reply:
            return [], reply
        records = await self._io(self.store.get_many, ids)
        return [Candidate(r.id, r.content, 1.0) for r in records.values() if _owned_by(r.scope, turn.scope)], reply

    async def _embed(self, texts: list[str]) -> np.ndarray:
        vectors = await self._io(self.embedder.embed_documents, texts)
        if not self._bound:  # a remote embedder learns its dimension from its first answer; bind the store once
            if self.store.embedding_binding() is None:
                await self._io(self.store.bind_embedding, self.embedder.model_id, self.embedder.dims)
            self._bound = True
        return np.asarray(vectors, dtype=np.float32)

    async def _candidates(self, scope: Scope, facts: Sequence[Fact],
                          vectors: np.ndarray) -> tuple[list[list[Candidate]], dict[str, float]]:
        return await self._io(self._candidates_sync, scope, facts, vectors)

    def _candidates_sync(self, scope: Scope, facts: Sequence[Fact],
                         vectors: np.ndarray) -> tuple[list[list[Candidate]], dict[str, float]]:
        """Per fact, the existing memories to decide against; and per fact text, the calibrated similarity of the
        nearest memory in scope (its scarcity, for importance)."""
        search_scope = _search_scope(scope)
        limit = self.settings.candidates_per_fact
        found: list[dict[str, float]] = []
        tops: list[ScoredId | None] = []
        for fact, vector in zip(facts, vectors, strict=True):
            hits = self.store.vector_search(search_scope, vector, limit, DECIDABLE)
            scores = {hit.memory_id: hit.score for hit in hits}
            tops.append(max(hits, key=lambda hit: hit.score, default=None))
            # Keyword hits catch what a small embedding model misses (names, places); their cosine is computed.
            for hit in self.store.keyword_search(search_scope, query_terms(fact.text), 3, DECIDABLE):
                scores.setdefault(hit.memory_id, 0.0)
            if fact.slot:
                # The memory holding the slot's old value ("用户住在无锡" for "用户搬到了深圳") may not be among the
                # most similar ones in a store full of other facts; without it the old value would stay beside the new.
                for hit in self.store.vector_search(search_scope, vector, 2, slot_filter(fact.slot)):
                    scores.setdefault(hit.memory_id, hit.score)
            found.append(scores)
        records = self.store.get_many(sorted({i for scores in found for i in scores}))
        # Scarcity compares two stored texts, on the embedder's range for such pairs (Calibration.for_pair).
        nearest = {fact.text: self.embedder.calibration.for_pair(fact.text, records[top.memory_id].content)
                   .relevance(top.score) if top is not None and top.memory_id in records else 0.0
                   for fact, top in zip(facts, tops, strict=True)}
        out = []
        for scores in found:
            # Search ANDs the given ids, so a turn without a user_id would also see users' memories: keep only
            # the memories of this turn's user (or of no user, when the turn has none).
            candidates = [Candidate(i, records[i].content, s,
                                    about="assistant" if records[i].role == "assistant" else "user")
                          for i, s in scores.items()
                          if i in records and records[i].category not in (Category.EPISODE, Category.MESSAGE)
                          and records[i].scope.user_id == scope.user_id]
            candidates.sort(key=lambda c: -c.similarity)
            out.append(candidates)
        return out, nearest

    # --- applying decisions ----------------------------------------------------------------------------------

    async def _apply(self, turn: TurnRecord, messages: Sequence[StoredMessage], decisions: Sequence[Decision],
                     facts: Sequence[Fact], vectors: np.ndarray, nearest: dict[str, float]) -> list[_Applied]:
        if not decisions:
            return []
        known = {fact.text: vector for fact, vector in zip(facts, vectors, strict=False)}
        missing = [d.text for d in decisions if d.event in (Event.ADD, Event.UPDATE) and d.text and d.text not in known]
        if missing:
            for text, vector in zip(missing, await self._embed(missing), strict=True):
                known[text] = vector
        categories = await self._io(self._categories, turn, decisions, known)
        return await self._io(self._apply_sync, turn, list(messages), list(decisions), known, nearest, categories)

    # --- mem0's categories ---------------------------------------------------------------------------------------

    def _taxonomy(self, turn: TurnRecord) -> Taxonomy:
        return self.categorizer.taxonomy(turn.options.get("custom_categories"))

    def _asked_categories(self, turn: TurnRecord) -> list[tuple[str, str]]:
        """The categories the LLM is asked for: mem0's by name (the model knows what "food" is; fifteen descriptions
        would cost ~500 tokens a turn), a project's own with their descriptions."""
        custom = turn.options.get("custom_categories")
        if not custom:
            return [(name, "") for name in self._taxonomy(turn).names]
        return [(name, text) for item in custom for name, text in item.items()]

    async def _prepare_categories(self, turn: TurnRecord) -> None:
        """The taxonomy and its prototype vectors, made (once) before any lock is taken: seconds the first time."""
        try:
            await self._io(self.categorizer.prepare, turn.options.get("custom_categories"))
        except Exception:  # categories then come from words alone (see _categories)
            log.warning("turn %s: category prototypes could not be made", turn.id, exc_info=True)

    def _categories(self, turn: TurnRecord, decisions: Sequence[Decision],
                    vectors: dict[str, np.ndarray]) -> dict[str, list[str]]:
        """mem0's categories of each text an ADD or UPDATE writes: what the LLM said, where it named categories of
        the taxonomy; else the categoriser's choice from the text's words and vector (~0.2 ms a fact)."""
        taxonomy = self._taxonomy(turn)
        texts = list(dict.fromkeys(d.text for d in decisions if d.event in (Event.ADD, Event.UPDATE) and d.text))
        out: dict[str, list[str]] = {}
        for decision in decisions:
            named = [c for c in (decision.fact.categories if decision.fact else ()) if c in taxonomy.names]
            if decision.text in texts and named:
                out[decision.text] = list(dict.fromkeys(named))
        rest = [text for text in texts if text not in out]
        if rest:
            try:
                chosen = self.categorizer.categorize(taxonomy, rest, np.stack([vectors[t] for t in rest]))
            except Exception:
                log.warning("turn %s: categorising by similarity failed; by words only", turn.id, exc_info=True)
                chosen = self.categorizer.categorize(taxonomy, rest, None)
            out.update(zip(rest, chosen, strict=True))
        return out

    def _apply_sync(self, turn: TurnRecord, messages: list[StoredMessage], decisions: list[Decision],
                    vectors: dict[str, np.ndarray], nearest: dict[str, float],
                    categories: dict[str, list[str]]) -> list[_Applied]:
        now = self.clock()
        when = max((m.created_at for m in messages), default=now)
        applied: list[_Applied] = []
        boosted: set[str | None] = set()
        for decision in decisions:
            if decision.event is Event.BOOST:
                if decision.target_id in boosted:
                    continue
                boosted.add(decision.target_id)
            about = decision.fact.about if decision.fact else "user"
            if decision.fact is not None and decision.fact.sources:
                sources = [messages[j] for j in decision.fact.sources]
            else:  # no fact (the model's NONE, DELETE, BOOST): the turn's messages of its party...
                sources = [m for m in messages if m.role == about] or messages
                if decision.event is Event.NONE and decision.text:  # ...that say again what the memory says
                    sources = [sources[k] for k in cited_messages(decision.text, [m.content for m in sources])] \
                        or sources
            try:
                outcome = self._apply_one(turn, decision, sources, vectors, nearest, now, when, categories)
            except Exception:
                # One bad decision (a memory deleted meanwhile) must not undo the others already applied.
                log.exception("turn %s: could not apply %s on %s", turn.id, decision.event, decision.target_id)
                continue
            if outcome is not None:
                applied.append(outcome)
        if any(a.event is Event.ADD for a in applied):
            spill_working_memory(self.store, turn.scope, self.lifecycle, now)
        return applied

    def _apply_one(self, turn: TurnRecord, decision: Decision, sources: list[StoredMessage],
                   vectors: dict[str, np.ndarray], nearest: dict[str, float], now: datetime,
                   when: datetime, categories: dict[str, list[str]]) -> _Applied | None:
        fact = decision.fact
        about = fact.about if fact else "user"
        refs = [SourceRef(m.id, m.role, m.created_at, m.external_id) for m in sources]
        actor = next((m.name for m in sources if m.name), None)
        if decision.event is Event.ADD:
            if not decision.text:
                return None
            record = self._new_record(turn, decision.text, fact, refs, actor, about, now, when)
            record.categories = categories.get(decision.text, [])
            if fact is not None:
                record.importance = _importance(fact, decision.text, nearest.get(fact.text, 0.0))
            self.store.insert([record], vectors[decision.text][None, :], [history_row(Event.ADD, record, now)])
            return _Applied(Event.ADD, record.id, record.content, actor_id=actor, role=about,
                            memory_type=record.memory_type)
        current = self.store.get(decision.target_id) if decision.target_id else None
        if current is None:
            return None
        if decision.event is Event.UPDATE and decision.text:
            changes: dict[str, Any] = {"content": decision.text, "updated_at": now,
                                       "provenance": [*current.provenance, *refs],
                                       "event_time": event_time(decision.text, when),
                                       "categories": categories.get(decision.text, current.categories)}
            if fact is not None:
                changes.update(importance=max(current.importance, fact.stored_importance), tags=_tags(fact),
                               memory_type=fact.memory_type)
            updated, history = revise(current, Event.UPDATE, now, actor_id=actor, role=about, **changes)
            self.store.update(updated, vectors[decision.text], history, expected_version=current.version)
            return _Applied(Event.UPDATE, current.id, updated.content, current.content, actor, about)
        if decision.event is Event.DELETE:
            history = history_row(Event.DELETE, current, now, actor_id=actor, role=about)
            self.store.soft_delete(current.id, "contradicted by a later turn", history, now,
                                   expected_version=current.version)
            return _Applied(Event.DELETE, current.id, current.content, actor_id=actor, role=about)
        if decision.event is Event.NONE:
            # Said again: the memory gains this source, and moves to the session it was last said in.
            scope = Scope(current.scope.user_id, turn.scope.agent_id or current.scope.agent_id,
                          turn.scope.run_id or current.scope.run_id)
            said = replace(current, scope=scope, provenance=[*current.provenance, *refs][-50:])
            last_said = max((r.created_at for r in current.provenance if r.created_at), default=current.created_at)
            if when.date() != last_said.date():
                # Said again on another day: a stable fact gains importance (and may reach promotion to core), and
                # the repetition counts as a recall, restarting its decay.
                said.importance = min(current.importance + self.settings.repeat_boost, MAX_IMPORTANCE)
                said.last_accessed_at = now
            self.store.update(said, None, None, expected_version=current.version)
            return _Applied(Event.NONE, current.id, current.content)
        if decision.event is Event.BOOST:
            raised, history = revise(current, Event.BOOST, now, actor_id=actor, role=about, updated_at=now,
                                     importance=min(current.importance + self.settings.boost, MAX_IMPORTANCE))
            self.store.update(raised, None, history, expected_version=current.version)
            return _Applied(Event.BOOST, current.id, current.content)
        return None

    def _new_record(self, turn: TurnRecord, text: str, fact: Fact | None, refs: list[SourceRef], actor: str | None,
                    about: str, now: datetime, when: datetime) -> MemoryRecord:
        options = turn.options
        kind = MemoryType(options["memory_type"]) if options.get("memory_type") else (
            fact.memory_type if fact else MemoryType.FACT)
        category = fact.category if fact else Category.FACT
        expires = options.get("expiration_date")
        return MemoryRecord(
            content=text,
            scope=turn.scope,
            actor_id=actor,
            role=about,
            memory_type=kind,
            layer=entry_layer(turn.scope, category),
            category=category,
            importance=fact.stored_importance if fact else 1.5,
            source=Source.BACKGROUND,
            tags=_tags(fact) if fact else [],
            metadata=dict(options.get("metadata") or {}),
            provenance=refs,
            created_at=now,
            event_time=event_time(text, when),
            expiration_date=datetime.fromisoformat(expires) if expires else None,
        )

    # --- evidence ------------------------------------------------------------------------------------------------

    async def _keep_messages(self, turn: TurnRecord, messages: Sequence[StoredMessage],
                             covering_roles: Sequence[str]) -> None:
        """Store each message of the turn as it was said (Category.MESSAGE), embedded with the other party's message
        just before it (core.messages.in_conversation), as infer=False stores them. A message of a party a fact of
        this turn is about is tagged "covered": the lifecycle lets it fade first. Idempotent: ids derive from the
        messages."""
        said = [m for m in messages if m.role != "system" and m.content.strip()]
        if not said:
            return
        present = await self._io(self.store.get_many, [evidence_id(m.id) for m in said])
        said = [m for m in said if evidence_id(m.id) not in present]
        if not said:
            return
        earlier = await self._io(self._message_before, turn.scope, said[0])
        conversation = [*earlier, *said]
        texts = in_conversation(conversation)[len(earlier):]
        vectors = await self._embed(texts)
        now = self.clock()
        records = [MemoryRecord(
            content=m.content.strip(), scope=turn.scope, id=evidence_id(m.id), actor_id=m.name, role=m.role,
            memory_type=MemoryType.EPISODIC, layer=Layer.SHORT_TERM, category=Category.MESSAGE,
            importance=MESSAGE_IMPORTANCE, source=_SOURCES.get(m.role, Source.USER),
            tags=["message", *(["covered"] if m.role in covering_roles else []),
                  *_reply_tag(m, conversation[len(earlier) + i - 1] if earlier or i else None, text)],
            metadata=dict(turn.options.get("metadata") or {}),
            provenance=[SourceRef(m.id, m.role, m.created_at, m.external_id)],
            created_at=now, event_time=event_time(m.content, m.created_at),
        ) for i, (m, text) in enumerate(zip(said, texts, strict=True))]
        await self._io(self.store.insert, records, vectors, [history_row(Event.ADD, r, now) for r in records])
        if any(says_it_changed(r.content) for r in records if r.role == "user"):
            # A change the user told ("kabir and I are done") marks what it changed (core/supersession.py). No lock:
            # each mark is written only on the version it read (a memory changed meanwhile is left as it is).
            try:
                await self._io(mark_changed, self.store, _search_scope(turn.scope), records, vectors, now,
                               lexicon().joins)
            except Exception:  # the messages are kept; only the marks are missing, and the read path still compares
                log.exception("turn %s: could not mark what its messages changed", turn.id)

    def _message_before(self, scope: Scope, first: StoredMessage) -> list[StoredMessage]:
        """The message stored just before `first` in its scope, if among the scope's last 40 (for its context)."""
        recent = self.store.list_messages(scope, 40)
        index = next((i for i, m in enumerate(recent) if m.id == first.id), 0)
        return recent[index - 1:index] if index else []

    # --- episodes --------------------------------------------------------------------------------------------

    async def _write_episode_if_due(self, scope: Scope) -> None:
        every = self.settings.episode_every
        if every <= 0:
            return
        key = "episode:" + "|".join(f"{k}={v}" for k, v in sorted(scope.as_dict().items()))
        async with self._deciding(scope):
            # The stretch is claimed (the cursor moved past it) under the scope's lock, so two turns finishing
            # together write one summary, not two; the summary itself (maybe an LLM call) is written after.
            cursor = await self._io(self.store.get_state, key)
            # Every turn asks; reading `every` rows answers "is one due?", the larger read happens only when it is.
            if len(await self._io(self.store.list_messages, scope, every, cursor)) < every:
                return
            pending = await self._io(self.store.list_messages, scope, every * 4, cursor)
            await self._io(self.store.set_state, key, pending[-1].id)
        chat = _chat(pending)
        started = min(m.created_at for m in pending)
        summary = None
        if self.llm is not None:
            try:
                summary = stamp_summary(await llm_memory.summarize_episode(
                    self.llm, chat, timeout=self.settings.llm_timeout), started)
            except LLMError as exc:
                log.info("episode summary by LLM failed (%s); summarizing offline", exc)
        if summary is None:
            summary = summarize_offline(chat, started)
        now = self.clock()
        record = MemoryRecord(
            content=summary, scope=scope, memory_type=MemoryType.EPISODIC, layer=Layer.SHORT_TERM,
            category=Category.EPISODE, importance=1.0, source=Source.BACKGROUND,
            provenance=[SourceRef(m.id, m.role, m.created_at, m.external_id) for m in pending],
            created_at=now, event_time=started, tags=["episode"],
        )
        vector = await self._embed([summary])
        await self._io(self.store.insert, [record], vector, [history_row(Event.ADD, record, now, role="system")])


def _unit(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (a zero row stays zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.asarray(vectors / np.where(norms == 0, 1.0, norms), dtype=np.float32)


def event_time(text: str, said_at: datetime) -> datetime:
    """When what the text tells happened: a time it names (昨天, last Friday, 3月5号; core/temporal.py) resolved
    against when it was said, else when it was said."""
    named = resolve_event_time(text, said_at)
    return named.start if named is not None else said_at


def _tags(fact: Fact) -> list[str]:
    return [fact.kind.value] + ([slot_tag(fact.slot)] if fact.slot else [])


def _owned_by(owner: Scope, scope: Scope) -> bool:
    """A memory this turn may act on: the same user, and every id the turn's search scope names."""
    wanted = _search_scope(scope)
    return owner.user_id == scope.user_id and all(getattr(owner, k) == v for k, v in wanted.as_dict().items())


def _importance(fact: Fact, text: str, nearest_similarity: float) -> float:
    """The design's four measures (core/importance.py) averaged with the extractor's own judgement."""
    score = importance_score(kinds=[fact.kind.value], text=text, confidence=EXTRACTION_CERTAINTY,
                             max_similarity=nearest_similarity)
    return on_seed_scale((score + min(max(fact.importance, 0.0), 1.0)) / 2)


def _seen(groups: Sequence[Sequence[Candidate]]) -> frozenset[tuple[str, str]]:
    """What a decision was made on: each candidate memory and its text."""
    return frozenset((c.memory_id, c.text) for group in groups for c in group)


def _unique_candidates(groups: Sequence[Sequence[Candidate]]) -> list[Candidate]:
    seen: dict[str, Candidate] = {}
    for group in groups:
        for candidate in group:
            seen.setdefault(candidate.memory_id, candidate)
    return list(seen.values())
