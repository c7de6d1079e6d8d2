"""The Memory facade: mem0's methods and arguments (both generations), written once as async.

`AsyncMemory` is the implementation; blocking work (SQLite, embedding) runs in worker threads in one hop per call.
`Memory` is the synchronous face: each method forwards to the async one on a private event-loop thread, so it also
works inside programs that already run an event loop.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures.thread  # noqa: F401  # its exit hook registered before ours: ours runs first (_settle_at_exit)
import contextlib
import hashlib
import json
import logging
import threading
import time
import weakref
from collections.abc import Callable, Coroutine, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from jiyi import tracing
from jiyi.categorizing import Categorizer
from jiyi.core.categories import DEFAULT_NAMES, parse_custom_categories
from jiyi.core.injection import MEMORY_HEADER
from jiyi.core.lifecycle import LifecyclePolicy, entry_layer
from jiyi.core.messages import (
    ChatMessage,
    check_json_value,
    check_text,
    in_conversation,
    normalize_messages,
    parse_chat,
    parse_time,
)
from jiyi.core.offline import asks_to_be_remembered
from jiyi.core.retrieval import SearchRequest
from jiyi.embedders.base import Embedder
from jiyi.embedders.scheduler import EmbeddingScheduler, embedding_lane, scheduled
from jiyi.errors import Conflict, InvalidInput, NotFound
from jiyi.filters import Logic, Node, merge_scope, parse_filters
from jiyi.lifecycle import MaintenancePass, PassStats, spill_working_memory
from jiyi.llms.base import LLM
from jiyi.read_path import STAGE_NAMES, ReadPath, ReadSettings, RecallRequest
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
from jiyi.stores.base import MemoryStore
from jiyi.views import history_item, memory_item, search_item, turn_item
from jiyi.write_path import EVIDENCE_PENDING, TRACEPARENT, WritePath, WriteSettings, traced_add

if TYPE_CHECKING:
    from jiyi.rerankers.base import Reranker

log = logging.getLogger(__name__)
T = TypeVar("T")
P = ParamSpec("P")
DEFAULT_TOP_K = 20
RESUME_BATCH = 16  # abandoned turns taken up per claim
EXIT_SETTLE_SECONDS = 30.0  # at exit (of the interpreter or an event loop), how long the last adds' evidence may take
DEFAULT_CONTEXT_TOP_K = 5
BUDGET_RANGE = (100, 20_000)  # characters of injected memory
DEFAULT_LIST_LIMIT = 100
MAX_LIMIT = 1000
_UNSET: Any = object()

# The store's state rows where maintenance passes are logged (AsyncMemory.maintenance_log), and how many are kept.
MAINTENANCE_LOG = "maintenance.passes"
MAINTENANCE_LOG_KEPT = 20

_REPORTED_EVENTS = {Event.ADD.value, Event.UPDATE.value, Event.DELETE.value}  # what mem0's add() returns
_SOURCES = {"user": Source.USER, "assistant": Source.ASSISTANT, "system": Source.SYSTEM}


NOT_MESSAGES: Node = Logic("NOT", (parse_filters({"jiyi.category": Category.MESSAGE.value}),))  # type: ignore[arg-type]


def _mentions_category(filters: Any) -> bool:
    """Whether a filter tree names the category anywhere (then it decides which categories are listed)."""
    if isinstance(filters, dict):
        return any(key == "jiyi.category" or _mentions_category(value) for key, value in filters.items())
    if isinstance(filters, list):
        return any(_mentions_category(item) for item in filters)
    return False


# Read, change, write-if-unchanged: how often a writer tries before it answers Conflict. Each lost race means another
# writer's change landed, so the writers as a whole always progress; 64 concurrent updates of one memory needed at most
# a few dozen attempts each.
CAS_ATTEMPTS = 200


# An idempotency key is remembered this long (a client's retries come within minutes; a day is generous), and a retry
# waits this long for the first request with its key to finish.
IDEMPOTENCY_KEPT = timedelta(days=1)
IDEMPOTENT_WAIT_SECONDS = 120.0


def _request_key(scope: Scope, key: str) -> str:
    """The stored key: the owner's ids and the caller's key, hashed, so owners never share or probe each other's."""
    owner = json.dumps([scope.user_id, scope.agent_id, scope.run_id, key], ensure_ascii=False)
    return hashlib.sha256(owner.encode("utf-8", "surrogatepass")).hexdigest()


def _limit(value: Any, default: int, name: str) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{name} must be an integer")
    if not 1 <= value <= MAX_LIMIT:
        raise InvalidInput(f"{name} must be between 1 and {MAX_LIMIT}, got {value}")
    return value


def _memory_type(value: str | None) -> MemoryType:
    if value is None:
        return MemoryType.EPISODIC
    if value in ("procedural_memory", "procedural"):
        return MemoryType.PROCEDURAL
    try:
        return MemoryType(value)
    except ValueError:
        allowed = ["procedural_memory", *(t.value for t in MemoryType)]
        raise InvalidInput(f"memory_type must be one of {allowed}, got {value!r}") from None


def _check_fraction(value: Any, name: str) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1):
        raise InvalidInput(f"{name} must be a number between 0 and 1")


def _custom_categories(value: Any) -> list[dict[str, str]] | None:
    """mem0's custom_categories, checked, as [{"name": "description"}]; None for none (an empty list too)."""
    if value is None or value == []:
        return None
    return [{name: text} for name, text in parse_custom_categories(value)]


def _expiration(value: Any) -> datetime | None:
    return parse_time(value, "expiration_date")


# mem0's app_id names an entity, as user_id does; jiyi scopes nothing by it and keeps it in the metadata (where filters
# find it). A metadata update replaces the caller's keys, not whose memory it is: these stay unless named anew.
ENTITY_METADATA_KEYS = ("app_id",)


def _replaced_metadata(current: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    kept = {key: current[key] for key in ENTITY_METADATA_KEYS if key in current and key not in new}
    return {**new, **kept}


ENTITY_FIELDS = {"user": "user_id", "agent": "agent_id", "run": "run_id"}


def _embedding_lane(scope: Scope) -> str:
    """Passages of one user (else agent, else run) share a lane; lanes take turns at the embedding model."""
    if scope.user_id:
        return f"user:{scope.user_id}"
    return f"agent:{scope.agent_id}" if scope.agent_id else f"run:{scope.run_id}"


class ReplayedAnswer(dict[str, Any]):
    """The answer of an add sent again with its idempotency key: what the first one answered, nothing done now (so a
    server does not count its memories again, and can say it is a replay)."""


class AsyncMemory:
    def __init__(self, store: MemoryStore, embedder: Embedder, *, llm: LLM | None = None,
                 reranker: Reranker | None = None, config: dict[str, Any] | None = None,
                 write_settings: WriteSettings | None = None, read_settings: ReadSettings | None = None,
                 clock: Clock = utcnow, lifecycle: LifecyclePolicy | None = None) -> None:
        """`llm`: the chat model that extracts facts, decides and rewrites weak questions; without one jiyi's offline
        rules extract and decide. `reranker`: re-scores search candidates (optional). `clock`: where jiyi reads the
        present (an aware UTC datetime); a simulation or a test sets it."""
        self.store = store
        self.clock = clock
        self.embedder = embedder
        # Every embedding goes through one scheduler: queries before passages, users' passages in turn, bounded input
        # (embedders/scheduler.py). `embedder` stays what the caller gave.
        self.embedding = scheduled(embedder)
        self._owns_scheduler = not isinstance(embedder, EmbeddingScheduler)
        self.llm = llm
        self.reranker = reranker
        self.config = config or {}
        self.lifecycle = lifecycle or LifecyclePolicy.from_config(self.config)
        # mem0's categories for what is written; its prototypes are embedded by the model itself, in one batch.
        self.categorizer = Categorizer(embedder, store)
        self.write_path = WritePath(store, self.embedding, llm,
                                    write_settings or WriteSettings.from_config(self.config), clock, self.lifecycle,
                                    self.categorizer)
        self.read_path = ReadPath(store, self.embedding, llm=llm, reranker=reranker,
                                  settings=read_settings or ReadSettings.from_config(self.config), clock=clock)
        self._turns_queued: asyncio.Event | None = None  # set by async adds; a worker waits on it
        # Evidence of synchronous adds being kept after their answer, per embedding lane (user): a read in the same
        # lane waits for it, so what this process was told is searchable by the next search, as before.
        self._evidence: dict[str, set[asyncio.Task[TurnRecord]]] = {}
        self._orphaned: dict[str, list[tuple[TurnRecord, list[StoredMessage]]]] = {}
        self._resuming: asyncio.Task[int] | None = None  # the turns a dead process left, taken up at the first call
        if embedder.dims:  # a remote embedder may learn its dimension only from its first answer
            store.bind_embedding(embedder.model_id, embedder.dims)

    @classmethod
    def from_config(cls, config: dict[str, Any] | None = None) -> AsyncMemory:
        """Build from a jiyi config dict or a mem0 config dict (see wiring.py)."""
        from jiyi.wiring import build_components

        components = build_components(config or {})
        return cls(components.store, components.embedder, llm=components.llm, reranker=components.reranker,
                   config=components.config)

    async def _run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        return await asyncio.to_thread(fn, *args, **kwargs)

    def _bind_learnt_dims(self) -> None:
        if self.store.embedding_binding() is None:
            self.store.bind_embedding(self.embedder.model_id, self.embedder.dims)

    # --- writes ---------------------------------------------------------------------------------------------

    @traced_add
    async def add(
        self,
        messages: Any,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        infer: bool = True,
        memory_type: str | None = None,
        prompt: str | None = None,
        timestamp: Any = None,
        expiration_date: Any = None,
        filters: dict[str, Any] | None = None,
        async_mode: bool = False,
        injected_memory_ids: list[str] | None = None,
        idempotency_key: str | None = None,
        importance: float | None = None,
        remember: bool = False,
        custom_categories: list[Any] | None = None,
    ) -> dict[str, Any]:
        """Store a chat turn and remember what is worth remembering in it.

        infer=True (mem0's default): facts are extracted and reconciled with existing memories (ADD / UPDATE / DELETE /
        NONE, every change in history). `async_mode=True` answers as soon as the turn is stored, with an `event_id` to
        poll (`get_event`); a worker (the server runs one) does the rest. `injected_memory_ids`: the memories the
        assistant was given for this reply; those that shaped it gain importance (BOOST).
        infer=False: every non-system message becomes a memory as it is, as in mem0; a reply's vector is made with
        the other party's message before it (see core.messages.in_conversation). `importance` (0-1) is where such a
        memory starts on the forgetting curve (default 0.5); with infer=True each fact's own is assessed.
        `remember=True`: the messages are a statement given to be remembered (MCP's add tools, `jiyi add`): what
        extraction makes nothing of is kept as a fact in the user's words. One user message alone that says something
        about its author ("I prefer aisle seats", as mem0's SDK sends add("…")) is taken as such a statement too.

        `custom_categories`: mem0's, [{"name": "description"}, ...]: the categories the turn's memories are sorted
        into instead of mem0's default fifteen (each memory's `categories`).

        `idempotency_key`: the caller's key for this add (HTTP: the Idempotency-Key header). An add sent again with
        the same key by the same owner within a day stores nothing and answers what the first one answered (a retry
        overlapping the original waits for it)."""
        scope, _ = merge_scope(Scope(user_id, agent_id, run_id), filters)
        scope.require()
        self._resume_abandoned_once()
        if idempotency_key is not None:
            if not isinstance(idempotency_key, str) or not idempotency_key.strip() or len(idempotency_key) > 256:
                raise InvalidInput("idempotency_key must be a non-empty string of at most 256 characters")
            request = dict(messages=messages, user_id=user_id, agent_id=agent_id, run_id=run_id, metadata=metadata,
                           infer=infer, memory_type=memory_type, prompt=prompt, timestamp=timestamp,
                           expiration_date=expiration_date, filters=filters, async_mode=async_mode,
                           injected_memory_ids=injected_memory_ids, importance=importance,
                           custom_categories=custom_categories)
            return await self._add_once(_request_key(scope, idempotency_key), request)
        if metadata is not None and not isinstance(metadata, dict):
            raise InvalidInput("metadata must be an object")
        check_json_value(metadata, "metadata")
        if prompt is not None and (not isinstance(prompt, str) or not prompt.strip()):
            raise InvalidInput("prompt must be a non-empty string")
        if injected_memory_ids is not None and (not isinstance(injected_memory_ids, list)
                                                or not all(isinstance(i, str) for i in injected_memory_ids)):
            raise InvalidInput("injected_memory_ids must be a list of memory ids")
        _check_fraction(importance, "importance")
        custom = _custom_categories(custom_categories)
        if importance is not None and infer:
            raise InvalidInput("importance is for infer=False adds, which store the text as given; with infer=True "
                               "each extracted fact's importance is assessed")
        parsed = normalize_messages(messages)
        turn_time = parse_time(timestamp)
        expires = _expiration(expiration_date)
        kind = _memory_type(memory_type)
        if not infer:
            return await self._run(self._add_raw, parsed, scope, metadata or {}, turn_time, expires, kind,
                                   0.5 if importance is None else float(importance), custom)
        stored = self._stored_messages(parsed, scope, metadata or {}, turn_time, self.clock())
        options: dict[str, Any] = {
            "explicit": asks_to_be_remembered(parsed, remember) or None,
            "metadata": metadata or {},
            "memory_type": kind.value if memory_type is not None else None,
            "prompt": prompt,
            "expiration_date": expires.isoformat() if expires else None,
            "injected_memory_ids": (injected_memory_ids or [])[:50],
            "custom_categories": custom,
            TRACEPARENT: tracing.traceparent() if async_mode else None,
        }
        turn = TurnRecord(scope=scope, message_ids=[m.id for m in stored],
                          options={k: v for k, v in options.items() if v not in (None, [], {})})
        if async_mode:
            await self._run(self.store.add_turn, turn, stored)
            if self._turns_queued is not None:
                self._turns_queued.set()
            return {"results": [], "event_id": turn.id, "status": "PENDING",
                    "message": "Turn stored; memory extraction queued"}
        # The caller waits for this turn: it is leased to us, so a worker leaves it alone unless we die.
        turn.status = TurnStatus.PROCESSING
        turn.lease_until = self.clock() + timedelta(seconds=self.write_path.settings.lease_seconds)
        await self._run(self.store.add_turn, turn, stored)
        try:
            async with self.write_path.leased([turn]):
                turn = await self._process_in_lane(turn, stored, defer_evidence=True)
        except asyncio.CancelledError:
            self._release_unfinished([turn], {turn.id: 0})
            raise
        if EVIDENCE_PENDING in turn.options:
            self._keep_evidence_later(turn, stored)
        return {"results": [r for r in turn.results if r["event"] in _REPORTED_EVENTS], "event_id": turn.id}

    def _keep_evidence_later(self, turn: TurnRecord, stored: list[StoredMessage]) -> None:
        """Embed and keep the turn's messages as evidence after the add has answered (write_path.keep_evidence)."""
        lane = _embedding_lane(turn.scope)

        async def keep() -> TurnRecord:
            with embedding_lane(lane):
                try:
                    async with self.write_path.leased([turn]):
                        return await self.write_path.keep_evidence(turn, stored)
                except asyncio.CancelledError:
                    # Only the end of the event loop cancels this (asyncio.run returning while an add's evidence
                    # is being kept, as when an AsyncMemory is never closed): the loop waits for cancelled tasks to
                    # finish, so finish, from the start (keeping evidence is idempotent), or the messages would stay
                    # unsearchable until a worker took the turn up. A second cancellation ends it.
                    task = asyncio.current_task()
                    if task is None or task.uncancel() > 0:
                        raise
                    try:
                        async with self.write_path.leased([turn]):
                            return await asyncio.wait_for(self.write_path.keep_evidence(turn, stored),
                                                          EXIT_SETTLE_SECONDS)
                    except TimeoutError:  # still leased: a worker takes the turn up when the lease runs out
                        log.warning("turn %s: its evidence was not kept before the event loop ended", turn.id)
                        return turn

        task = asyncio.get_running_loop().create_task(keep())
        pending = self._evidence.setdefault(lane, set())
        pending.add(task)

        def forget(done: asyncio.Task[TurnRecord]) -> None:
            pending.discard(done)
            if not pending and self._evidence.get(lane) is pending:
                del self._evidence[lane]
            if done.cancelled():  # its event loop ended first (asyncio.run per call): the next read here redoes it
                self._orphaned.setdefault(lane, []).append((turn, stored))

        task.add_done_callback(forget)

    async def _evidence_kept(self, scope: Scope | None = None) -> None:
        """Wait for the evidence of this process's earlier synchronous adds: of the scope's lane, or all of it."""
        lanes = [_embedding_lane(scope)] if scope is not None and not scope.is_empty else \
            [*self._evidence, *self._orphaned]
        for lane in lanes:
            for turn, stored in self._orphaned.pop(lane, []):
                self._keep_evidence_later(turn, stored)
        tasks = [task for lane in lanes for task in self._evidence.get(lane, ())]
        if tasks:
            await asyncio.gather(*(asyncio.shield(task) for task in tasks), return_exceptions=True)

    async def settle(self) -> None:
        """Wait until the work earlier calls left running is done: access counts of searches, evidence of adds, the
        turns of a dead process this one took up."""
        await self._evidence_kept()
        resuming = self._resuming  # started on this loop (an earlier asyncio.run's ended with its loop)
        if resuming is not None and not resuming.done() and resuming.get_loop() is asyncio.get_running_loop():
            await asyncio.gather(asyncio.shield(resuming), return_exceptions=True)
        await self.read_path.settle()

    def _resume_abandoned_once(self) -> None:
        """At the first add, search or context call, take up in the background the turns a process that died left
        unfinished (answered, but its messages not yet kept as evidence; or cut off mid-extraction), once their lease
        has run out, as a worker would: a script has none. Queued and retried turns are left to whoever processes
        them (a worker, process_pending)."""
        if self._resuming is None:
            self._resuming = asyncio.get_running_loop().create_task(self._resume_abandoned())

    async def _resume_abandoned(self) -> int:
        resumed = 0
        try:
            while turns := await self._run(self.store.claim_turns, self.clock(), self.clock() + timedelta(
                    seconds=self.write_path.settings.lease_seconds), RESUME_BATCH, abandoned_only=True):
                async with self.write_path.leased(turns):
                    for turn in turns:  # cut off in turn (the loop ends): taken up again once its lease runs out
                        await self._process_in_lane(turn)
                resumed += len(turns)
        except Exception:  # the store or the model is failing: the turns stay leased, a later process retries
            log.exception("could not take up the turns a process left unfinished")
        if resumed:
            log.info("took up %d turns a process left unfinished", resumed)
        return resumed

    async def _add_once(self, key: str, request: dict[str, Any]) -> dict[str, Any]:
        deadline = time.monotonic() + IDEMPOTENT_WAIT_SECONDS
        asked = hashlib.sha256(json.dumps(request, ensure_ascii=False, sort_keys=True, default=str)
                               .encode("utf-8", "surrogatepass")).hexdigest()
        while True:
            claimed, answer = await self._run(self.store.claim_request, key, self.clock(), IDEMPOTENCY_KEPT)
            if claimed:
                break
            if answer is not None:
                stored = json.loads(answer)
                if stored["request"] != asked:
                    raise Conflict("this idempotency key was used for another request; use a new key per add")
                return ReplayedAnswer(stored["answer"])
            if time.monotonic() > deadline:
                raise Conflict("a request with this idempotency key is still being processed; retry later")
            await asyncio.sleep(0.05)  # the first request with this key is running: answer what it answers
        try:
            result = await self.add(**request)
        except BaseException:
            await asyncio.shield(self._run(self.store.finish_request, key, None))  # a retry may run it again
            raise
        await self._run(self.store.finish_request, key,
                        json.dumps({"request": asked, "answer": result}, ensure_ascii=False))
        return result

    async def get_event(self, event_id: str) -> dict[str, Any]:
        """The state of a turn's extraction: status, attempts, results (every event, NONE and BOOST included)."""
        turn = await self._run(self.store.get_turn, event_id)
        if turn is None:
            raise NotFound(f"event {event_id} not found")
        lane = _embedding_lane(turn.scope)
        if EVIDENCE_PENDING in turn.options and (lane in self._evidence or lane in self._orphaned):
            await self._evidence_kept(turn.scope)  # answered, its evidence being kept here: a moment more
            turn = await self._run(self.store.get_turn, event_id) or turn
        return turn_item(turn)

    def notify_queued_turns(self, event: asyncio.Event) -> None:
        """Set `event` whenever an async add queues a turn (a worker on this event loop waits on it)."""
        self._turns_queued = event

    async def process_pending(self, limit: int = 16) -> int:
        """Extract the turns that are due (queued by async adds, or waiting for an LLM retry); returns how many.
        Turns of one owner are processed in order; different owners concurrently."""
        now = self.clock()
        lease = now + timedelta(seconds=self.write_path.settings.lease_seconds)
        turns = await self._run(self.store.claim_turns, now, lease, limit)
        if not turns:
            return 0
        by_owner: dict[Scope, list[TurnRecord]] = {}
        for turn in turns:
            by_owner.setdefault(turn.scope, []).append(turn)

        async def run_in_order(owner_turns: list[TurnRecord]) -> None:
            for turn in owner_turns:
                await self._process_in_lane(turn)

        attempts = {turn.id: turn.attempts for turn in turns}
        try:
            async with self.write_path.leased(turns):
                await asyncio.gather(*(run_in_order(group) for group in by_owner.values()))
        except asyncio.CancelledError:
            self._release_unfinished(turns, attempts)
            raise
        return len(turns)

    async def _process_in_lane(self, turn: TurnRecord, stored: list[StoredMessage] | None = None, *,
                               defer_evidence: bool = False) -> TurnRecord:
        with embedding_lane(_embedding_lane(turn.scope)):
            return await self.write_path.process(turn, stored, defer_evidence=defer_evidence)

    def _release_unfinished(self, turns: Sequence[TurnRecord], attempts: dict[str, int]) -> None:
        """Processing was cancelled (the server is stopping): the claimed turns not finished go back to the queue,
        due now, instead of waiting for their lease to run out. A turn whose outcome is being saved is left alone."""
        now = self.clock()
        for turn in turns:
            if turn.status is TurnStatus.PROCESSING:
                turn.attempts = attempts.get(turn.id, turn.attempts)
                turn.status = TurnStatus.RETRY if turn.attempts else TurnStatus.QUEUED
                turn.lease_until, turn.next_attempt_at, turn.updated_at = None, now, now
                self.store.save_turn(turn)

    def _stored_messages(self, parsed: list[ChatMessage], scope: Scope, metadata: dict[str, Any],
                         turn_time: datetime | None, now: datetime) -> list[StoredMessage]:
        return [
            StoredMessage(content=m.content, role=m.role, scope=scope, name=m.name,
                          created_at=m.created_at or turn_time or now, external_id=m.external_id, metadata=metadata)
            for m in parsed
        ]

    def _add_raw(self, parsed: list[ChatMessage], scope: Scope, metadata: dict[str, Any], turn_time: datetime | None,
                 expires: datetime | None, kind: MemoryType, importance: float,
                 custom_categories: list[Any] | None = None) -> dict[str, Any]:
        now = self.clock()
        stored = self._stored_messages(parsed, scope, metadata, turn_time, now)
        earlier = self.store.list_messages(scope, limit=1)  # before this turn's messages are stored
        self.store.add_messages(stored)
        records = []
        embed_texts = []
        for message, raw, text in zip(parsed, stored, in_conversation(earlier + stored)[len(earlier):], strict=True):
            if message.role == "system" or not message.content.strip():
                continue
            embed_texts.append(text)
            records.append(MemoryRecord(
                content=message.content.strip(),
                scope=scope,
                actor_id=message.name,
                role=message.role,
                memory_type=kind,
                importance=importance,
                layer=entry_layer(scope, Category.FACT),
                category=Category.FACT,
                source=_SOURCES.get(message.role, Source.USER),
                metadata=dict(metadata),
                provenance=[SourceRef(raw.id, raw.role, raw.created_at, raw.external_id)],
                created_at=now,
                event_time=message.created_at or turn_time,
                expiration_date=expires,
            ))
        if not records:
            return {"results": []}
        with embedding_lane(_embedding_lane(scope)):
            vectors = self.embedding.embed_documents(embed_texts)
        self._bind_learnt_dims()
        for record, categories in zip(records, self._categorize(custom_categories, [r.content for r in records],
                                                                 vectors), strict=True):
            record.categories = categories
        self.store.insert(records, vectors, [history_row(Event.ADD, r, now) for r in records])
        spill_working_memory(self.store, scope, self.lifecycle, now)
        return {"results": [
            {"id": r.id, "memory": r.content, "event": Event.ADD.value, "actor_id": r.actor_id, "role": r.role,
             "memory_type": r.memory_type.value}
            for r in records
        ]}

    def _categorize(self, custom: list[Any] | None, texts: list[str], vectors: Any) -> list[list[str]]:
        """mem0's categories of texts about to be stored with `vectors` (see jiyi/categorizing.py); by their words
        alone when the prototypes cannot be made (the embedder is down: the memory is stored all the same)."""
        taxonomy = self.categorizer.taxonomy(custom)
        try:
            return self.categorizer.categorize(taxonomy, texts, vectors)
        except Exception:
            log.warning("categorising by similarity failed; by words only", exc_info=True)
            return self.categorizer.categorize(taxonomy, texts, None)

    async def update(
        self,
        memory_id: str,
        data: str | None = None,
        *,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        expiration_date: Any = _UNSET,
        version: int | None = None,
        custom_categories: list[Any] | None = None,
    ) -> dict[str, str]:
        """v1: update(id, data); v2: update(id, text=..., metadata=..., expiration_date=...).

        A new text is categorised anew (mem0's categories, or `custom_categories`'); a memory whose categories
        came from a list not given here keeps them.

        Concurrent updates of one memory apply one after another, each to the text the one before it wrote (history's
        old_memory chains). `version`: apply only if the memory is still at this version (see get()), else Conflict
        (HTTP 409) instead of the last writer winning."""
        if version is not None and (isinstance(version, bool) or not isinstance(version, int) or version < 1):
            raise InvalidInput("version must be a positive integer (a memory's version, as get() returns it)")
        if data is not None and text is not None and data != text:
            raise InvalidInput("give the new text once, as data or as text")
        new_text = text if text is not None else data
        if new_text is not None and (not isinstance(new_text, str) or not new_text.strip()):
            raise InvalidInput("text must be a non-empty string")
        if metadata is not None and not isinstance(metadata, dict):
            raise InvalidInput("metadata must be an object")
        check_json_value(metadata, "metadata")
        if new_text is not None:
            check_text(new_text, "text")
        if new_text is None and metadata is None and expiration_date is _UNSET:
            raise InvalidInput("nothing to update: give text, metadata or expiration_date")
        expires = _UNSET if expiration_date is _UNSET else _expiration(expiration_date)
        custom = _custom_categories(custom_categories)
        await self._run(self._update, memory_id, new_text, metadata, expires, version, custom)
        return {"message": "Memory updated successfully!"}

    def _update(self, memory_id: str, new_text: str | None, metadata: dict[str, Any] | None, expires: Any,
                version: int | None, custom_categories: list[dict[str, str]] | None = None) -> None:
        vector = None
        for _ in range(CAS_ATTEMPTS):
            current = self.store.get(memory_id)
            if current is None:
                raise NotFound(f"memory {memory_id} not found")
            now = self.clock()
            changes: dict[str, Any] = {"updated_at": now}
            if new_text is not None:
                changes["content"] = new_text.strip()
            if metadata is not None:
                changes["metadata"] = _replaced_metadata(current.metadata, metadata)
            if expires is not _UNSET:
                changes["expiration_date"] = expires
            updated, event = revise(current, Event.UPDATE, now, **changes)
            if new_text is not None and vector is None:  # the new text's vector does not depend on the old text
                with embedding_lane(_embedding_lane(current.scope)):
                    vector = self.embedding.embed_documents([updated.content])[0]
            if new_text is not None and vector is not None and (
                    custom_categories is not None or set(current.categories) <= set(DEFAULT_NAMES)):
                updated.categories = self._categorize(custom_categories, [updated.content], vector[None, :])[0]
            try:
                self.store.update(updated, vector, event, expected_version=version or current.version)
                return
            except Conflict:
                if version is not None:
                    raise  # the caller asked for this version and no other
        raise Conflict(f"memory {memory_id} kept changing: {CAS_ATTEMPTS} attempts to update it lost the race")

    async def delete(self, memory_id: str, *, reason: str | None = None) -> dict[str, str]:
        """Soft delete. `reason`: why it is forgotten (say, the user asked), kept in the history row; a delete with a
        reason is a forgetting (webhooks: memory_forget), one without a plain delete (memory_delete)."""
        if reason is not None:
            if not isinstance(reason, str) or not reason.strip():
                raise InvalidInput("reason must be a non-empty string")
            check_text(reason, "reason")
        await self._run(self._delete, memory_id, reason)
        return {"message": "Memory deleted successfully"}

    def _delete(self, memory_id: str, reason: str | None, kept_reason: str = "deleted by request") -> None:
        for _ in range(CAS_ATTEMPTS):
            current = self.store.get(memory_id)
            if current is None:
                raise NotFound(f"memory {memory_id} not found")
            now = self.clock()
            event = history_row(Event.DELETE, current, now, reason=reason)
            try:  # history's old_memory is the text deleted, even when an update lands in between
                self.store.soft_delete(memory_id, reason or kept_reason, event, now,
                                       expected_version=current.version)
                return
            except Conflict:
                continue
        raise Conflict(f"memory {memory_id} kept changing: {CAS_ATTEMPTS} attempts to delete it lost the race")

    async def delete_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: dict[str, Any] | None = None,
    ) -> dict[str, str]:
        scope, rest = merge_scope(Scope(user_id, agent_id, run_id), filters)
        scope.require()
        await self._run(self._delete_scope, scope, parse_filters(rest))
        return {"message": "All relevant memories deleted"}

    def _delete_scope(self, scope: Scope, where: Node | None) -> int:
        records = self.store.list_records(scope, where, include_expired=True)
        for record in records:
            self._delete(record.id, None, "deleted with delete_all")
        return len(records)

    async def delete_entity(self, kind: str, name: str, *, user_id: str | None = None,
                            agent_id: str | None = None) -> dict[str, Any]:
        """Delete every memory of one user, agent or run (only among one user's, or one agent's, memories with
        `user_id` / `agent_id`: what a key bound to them may reach).

        Answers what went: {"memories": how many, "entities": each user, agent or run left with none, the one named
        among them}; an agent whose memories were all its user's goes with the user. An entity that an earlier delete
        already emptied (mem0's SDKs delete every listed entity in turn, the user before its agents) answers with
        nothing deleted; one that never had memories here is NotFound."""
        field = ENTITY_FIELDS.get(kind)
        if field is None:
            raise InvalidInput(f"entity type must be user, agent or run (jiyi has no {kind!r} scope)")
        within = {"user_id": user_id, "agent_id": agent_id}
        if within.get(field) not in (None, name):
            raise NotFound(f"{kind} {name} not found")  # among one user's memories there is no other user
        scope = Scope(**{**within, field: name})

        def work() -> dict[str, Any]:
            before = self.store.entities(user_id)
            listed = any(e.kind == kind and e.name == name for e in before)
            if not listed and next(iter(self.store.iter_records(scope, include_deleted=True)), None) is None:
                raise NotFound(f"{kind} {name} not found")
            deleted = self._delete_scope(scope, None)
            left = {(e.kind, e.name) for e in self.store.entities(user_id)}
            return {"memories": deleted, "entities": [{"type": e.kind, "name": e.name} for e in before
                                                      if (e.kind, e.name) not in left]}

        return dict(await self._run(work))

    async def reset(self) -> dict[str, str]:
        await self._run(self.store.reset)
        if self.embedder.dims:
            await self._run(self.store.bind_embedding, self.embedder.model_id, self.embedder.dims)
        return {"message": "All memories reset"}

    # --- reads ----------------------------------------------------------------------------------------------

    async def search(
        self,
        query: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: dict[str, Any] | None = None,
        limit: int | None = None,
        top_k: int | None = None,
        threshold: float | None = None,
        explain: bool = False,
        show_expired: bool = False,
        rerank: bool | None = None,
    ) -> dict[str, Any]:
        """Hybrid search in one scope. v1 passes ids and `limit`; v2 passes ids inside `filters` and `top_k`.
        `explain`: each path's rank and relevance, the ranking weights and timings. `rerank=False` skips a configured
        reranker. The memories returned count as reviewed (access_count + 1)."""
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("query must be a non-empty string")
        check_text(query, "query")
        if limit is not None and top_k is not None and limit != top_k:
            raise InvalidInput("give the result count once, as limit or as top_k")
        _check_fraction(threshold, "threshold")
        scope, rest = merge_scope(Scope(user_id, agent_id, run_id), filters)
        request = SearchRequest(
            query=query.strip(),
            scope=scope.require(),
            top_k=_limit(top_k if top_k is not None else limit, DEFAULT_TOP_K, "top_k"),
            where=parse_filters(rest),
            threshold=threshold,
            include_expired=show_expired,
            explain=explain,
        )
        self._resume_abandoned_once()
        await self._evidence_kept(request.scope)
        retrieval = await self.read_path.search(request, rerank=rerank)
        results = [search_item(hit, explain) for hit in retrieval.hits]
        if explain:
            for item in results:
                item["score_details"]["timings_ms"] = retrieval.timings_ms
                item["score_details"]["candidates"] = retrieval.paths
        return {"results": results}

    async def context(
        self,
        messages: Any,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: dict[str, Any] | None = None,
        top_k: int = DEFAULT_CONTEXT_TOP_K,
        budget_chars: int = 1200,
        rewrite: bool = False,
        rewrite_prompt: str | None = None,
        rewritten_query: str | None = None,
        user_name: str | None = None,
        char_name: str | None = None,
        context_messages: int | None = None,
        min_relevance: float | None = None,
        deadline: float | None = None,
        header: str = MEMORY_HEADER,
        only_stages: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """One call before each reply: find the memories that matter for the conversation in OpenAI format and
        return `messages` with them appended to the first system message ("Relevant long-term memory:\n- …").

        Query enhancement: the last user message, then the recent conversation (`context_messages` of them), then — if
        `rewrite` — an LLM rewrite (`rewrite_prompt`, or jiyi's; `rewritten_query` if the caller rewrote it itself).
        `deadline` (seconds) covers it all; `only_stages` runs a subset ("rewrite" alone, when the caller already
        searched the question and the context). If anything fails the messages come back unchanged, `degraded: true`."""
        parsed = parse_chat(messages)
        scope, rest = merge_scope(Scope(user_id, agent_id, run_id), filters)
        top_k = _limit(top_k, DEFAULT_CONTEXT_TOP_K, "top_k")
        if isinstance(budget_chars, bool) or not isinstance(budget_chars, int) or not (
                BUDGET_RANGE[0] <= budget_chars <= BUDGET_RANGE[1]):
            raise InvalidInput(f"budget_chars must be an integer between {BUDGET_RANGE[0]} and {BUDGET_RANGE[1]}")
        for name, value in (("rewrite_prompt", rewrite_prompt), ("rewritten_query", rewritten_query),
                            ("user_name", user_name), ("char_name", char_name), ("header", header)):
            if value is not None:
                if not isinstance(value, str):
                    raise InvalidInput(f"{name} must be a string")
                check_text(value, name)
        _check_fraction(min_relevance, "min_relevance")
        if deadline is not None and (isinstance(deadline, bool) or not isinstance(deadline, int | float)
                                     or not 0.05 <= deadline <= 60):
            raise InvalidInput("deadline must be a number of seconds between 0.05 and 60")
        if context_messages is not None and (isinstance(context_messages, bool) or not isinstance(context_messages, int)
                                             or not 0 <= context_messages <= 100):
            raise InvalidInput("context_messages must be an integer between 0 and 100")
        if only_stages is not None and (isinstance(only_stages, str) or not only_stages
                                        or not set(only_stages) <= set(STAGE_NAMES)):
            raise InvalidInput(f"only_stages must be a non-empty list of {list(STAGE_NAMES)}")
        request = RecallRequest(
            messages=parsed, scope=scope.require(), where=parse_filters(rest), top_k=top_k, rewrite=bool(rewrite),
            rewrite_prompt=rewrite_prompt, rewritten_query=rewritten_query, user_name=user_name,
            char_name=char_name, context_messages=context_messages, min_relevance=min_relevance, deadline=deadline,
            only_stages=tuple(only_stages) if only_stages is not None else None)
        self._resume_abandoned_once()
        await self._evidence_kept(request.scope)
        return await self.read_path.context(request, messages, budget_chars=budget_chars, header=header)

    async def get(self, memory_id: str) -> dict[str, Any]:
        await self.read_path.settle()  # access counts include every search that has answered
        record = await self._run(self.store.get, memory_id)
        if record is None:
            raise NotFound(f"memory {memory_id} not found")
        return memory_item(record)

    async def get_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: dict[str, Any] | None = None,
        limit: int | None = None,
        top_k: int | None = None,
        show_expired: bool = False,
        include_messages: bool = False,
    ) -> dict[str, Any]:
        """The scope's memories, newest first, mem0-shaped. The messages an infer=True add keeps as searchable
        evidence (category "message") are listed only with `include_messages` or a filter on the category."""
        scope, rest = merge_scope(Scope(user_id, agent_id, run_id), filters)
        count = _limit(top_k if top_k is not None else limit, DEFAULT_LIST_LIMIT, "limit")
        where = parse_filters(rest)
        if not include_messages and not _mentions_category(rest):
            where = Logic("AND", (where, NOT_MESSAGES)) if where is not None else NOT_MESSAGES
        await self._evidence_kept(scope.require())
        await self.read_path.settle()
        records = await self._run(self.store.list_records, scope, where, count, show_expired)
        return {"results": [memory_item(r) for r in records]}

    async def get_page(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: dict[str, Any] | None = None,
        page: int = 1,
        page_size: int = DEFAULT_LIST_LIMIT,
        show_expired: bool = False,
        include_messages: bool = False,
        every_scope: bool = False,
    ) -> dict[str, Any]:
        """One page of get_all (pages count from 1) and how many memories there are in all: {count, results}.
        `every_scope`: with no user, agent or run given, list everyone's memories (for an admin)."""
        if isinstance(page, bool) or not isinstance(page, int) or page < 1:
            raise InvalidInput(f"page must be a positive integer, got {page!r}")
        page_size = _limit(page_size, DEFAULT_LIST_LIMIT, "page_size")
        scope, rest = merge_scope(Scope(user_id, agent_id, run_id), filters)
        where = parse_filters(rest)
        if not include_messages and not _mentions_category(rest):
            where = Logic("AND", (where, NOT_MESSAGES)) if where is not None else NOT_MESSAGES
        await self._evidence_kept(None if every_scope else scope.require())
        await self.read_path.settle()
        if not every_scope:
            scope = scope.require()
        total = await self._run(self.store.count_records, scope, where, show_expired, every_scope)
        records = await self._run(self.store.list_records, scope, where, page_size, show_expired,
                                  (page - 1) * page_size, every_scope)
        return {"count": total, "results": [memory_item(r) for r in records]}

    async def entities(self, *, user_id: str | None = None) -> list[dict[str, Any]]:
        """The users, agents and runs that have memories (one user's, with `user_id`), with counts, mem0-shaped."""
        found = await self._run(self.store.entities, user_id)
        return [{"id": f"{e.kind}:{e.name}", "name": e.name, "type": e.kind, "total_memories": e.memories,
                 "created_at": e.first_created.isoformat(), "updated_at": e.last_updated.isoformat()}
                for e in found]

    async def history(self, memory_id: str) -> list[dict[str, Any]]:
        events = await self._run(self.store.history, memory_id)
        if not events and await self._run(self.store.get, memory_id, True) is None:
            raise NotFound(f"memory {memory_id} not found")
        return [history_item(e) for e in events]

    # --- lifecycle ----------------------------------------------------------------------------------------------

    async def maintain(self, *, user_id: str | None = None) -> dict[str, Any]:
        """One maintenance pass (decay, forgetting, review, consolidation, purge) over one user or every user;
        returns what it did: {processed, decayed, forgotten, reviewed, kept, promoted, moved, merged, summarized,
        purged, saved_bytes, compression_ratio, retention_rate, users, seconds}."""
        if user_id is not None and (not isinstance(user_id, str) or not user_id):
            raise InvalidInput("user_id must be a non-empty string")
        await self.read_path.settle()  # retention counts every review
        maintenance = MaintenancePass(self.store, self.embedding, self.clock, self.lifecycle, llm=self.llm)
        users = [user_id] if user_id is not None else await self._run(self.store.user_ids)
        total = PassStats()
        for user in users:
            with embedding_lane(f"user:{user}"):
                stats = await maintenance.run(user)
            total.add(stats)
            await self._run(self._log_pass, Scope(user), stats.as_dict())
        result = {**total.as_dict(), "users": len(users)}
        await self._run(self._log_pass, None, {**result, **({"user_id": user_id} if user_id is not None else {})})
        return result

    async def close(self) -> None:
        await self.settle()
        self.write_path.close()
        self.read_path.close()
        if self._owns_scheduler:
            await self._run(self.embedding.close)
        if self.llm is not None:
            await self.llm.aclose()
        if self.reranker is not None:
            await self.reranker.aclose()
        await self._run(self.store.close)

    # --- what the console needs: the pass log, restore, promote, retry ------------------------------------------

    def _log_pass(self, scope: Scope | None, result: dict[str, Any]) -> None:
        """Keep what a maintenance pass did (with the layer sizes after it) in the store's state, the last
        MAINTENANCE_LOG_KEPT per user and for the whole store: the console draws them."""
        key = MAINTENANCE_LOG if scope is None else f"{MAINTENANCE_LOG}:user:{scope.user_id}"
        entry = {"at": self.clock().isoformat(), **result, "layers": self.store.count(scope)}
        kept = json.loads(self.store.get_state(key) or "[]")
        self.store.set_state(key, json.dumps([entry, *kept][:MAINTENANCE_LOG_KEPT], ensure_ascii=False))

    async def maintenance_log(self, *, user_id: str | None = None) -> list[dict[str, Any]]:
        """The last maintenance passes, newest first: over one user's memories, or (without `user_id`) the whole
        store's. Each is maintain()'s result plus `at` and `layers` (live memories per layer after it)."""
        key = MAINTENANCE_LOG if user_id is None else f"{MAINTENANCE_LOG}:user:{user_id}"
        logged = await self._run(self.store.get_state, key)
        return list(json.loads(logged or "[]"))

    async def restore(self, memory_id: str, *, reason: str | None = None, version: int | None = None,
                      user_id: str | None = None, agent_id: str | None = None) -> dict[str, Any]:
        """Take back a soft delete (a forgetting, or a delete) before the purge removes its text: the memory is
        live and searchable again, with a RESTORE history row (`reason`, or "restored by request"); returns it.
        `user_id` / `agent_id`: only a memory of theirs (another's is not found). `version`: only if it is still at
        that version, else Conflict; a memory that is not deleted is a Conflict too."""
        if version is not None and (isinstance(version, bool) or not isinstance(version, int) or version < 1):
            raise InvalidInput("version must be a positive integer (a memory's version, as get() returns it)")
        if reason is not None:
            if not isinstance(reason, str) or not reason.strip():
                raise InvalidInput("reason must be a non-empty string")
            check_text(reason, "reason")
        record = await self._run(self._restore, memory_id, reason, version, user_id, agent_id)
        return memory_item(record)

    def _restore(self, memory_id: str, reason: str | None, version: int | None, user_id: str | None,
                 agent_id: str | None) -> MemoryRecord:
        for _ in range(CAS_ATTEMPTS):
            current = self.store.get(memory_id, include_deleted=True)
            if current is None or (user_id is not None and current.scope.user_id != user_id) or (
                    agent_id is not None and current.scope.agent_id != agent_id):
                raise NotFound(f"memory {memory_id} not found")
            if current.deleted_at is None:
                raise Conflict(f"memory {memory_id} is not deleted: there is nothing to restore")
            now = self.clock()
            event = history_row(Event.RESTORE, current, now,
                                reason=reason.strip() if reason else "restored by request")
            try:
                return self.store.restore(memory_id, event, now, expected_version=version or current.version)
            except Conflict:
                if version is not None:
                    raise
            except InvalidInput:
                continue  # restored or purged meanwhile: read it again and say which
        raise Conflict(f"memory {memory_id} kept changing: {CAS_ATTEMPTS} attempts to restore it lost the race")

    async def promote(self, memory_id: str, *, reason: str | None = None,
                      version: int | None = None) -> dict[str, str]:
        """Make a memory core, as the lifecycle does with a fact that proved lasting: the long-term layer, never
        fading, always eligible in recall; a PROMOTE history row (`reason`, or "promoted by request"). A core or
        system memory stays as it is. `version` as in update()."""
        if version is not None and (isinstance(version, bool) or not isinstance(version, int) or version < 1):
            raise InvalidInput("version must be a positive integer (a memory's version, as get() returns it)")
        if reason is not None:
            if not isinstance(reason, str) or not reason.strip():
                raise InvalidInput("reason must be a non-empty string")
            check_text(reason, "reason")
        changed = await self._run(self._promote, memory_id, reason, version)
        return {"message": "Memory promoted to core" if changed else "Memory is core already"}

    def _promote(self, memory_id: str, reason: str | None, version: int | None) -> bool:
        for _ in range(CAS_ATTEMPTS):
            current = self.store.get(memory_id)
            if current is None:
                raise NotFound(f"memory {memory_id} not found")
            if current.category in (Category.CORE, Category.SYSTEM):
                return False
            now = self.clock()
            # Not a new version of the text: updated_at stays, as with the lifecycle's own promotions.
            promoted, event = revise(current, Event.PROMOTE, now, category=Category.CORE, layer=Layer.LONG_TERM,
                                     reason=reason.strip() if reason else "promoted by request")
            try:
                self.store.update(promoted, None, event, expected_version=version or current.version)
                return True
            except Conflict:
                if version is not None:
                    raise
        raise Conflict(f"memory {memory_id} kept changing: {CAS_ATTEMPTS} attempts to promote it lost the race")

    async def retry_event(self, event_id: str) -> dict[str, Any]:
        """Extract a FAILED turn again (its LLM attempts were used up): it is due now, for the server's worker (or
        process_pending); one more attempt, then the offline rules stand in as before. Returns the event."""
        turn = await self._run(self.store.get_turn, event_id)
        if turn is None:
            raise NotFound(f"event {event_id} not found")
        if turn.status is not TurnStatus.FAILED:
            # A queued or retrying turn is the worker's: writing it here could hand one turn to two claimers.
            raise Conflict(f"event {event_id} is {turn_item(turn)['status']}: only a FAILED turn is retried")
        now = self.clock()
        turn.status, turn.next_attempt_at, turn.lease_until, turn.updated_at = TurnStatus.RETRY, now, None, now
        await self._run(self.store.save_turn, turn)
        if self._turns_queued is not None:
            self._turns_queued.set()
        return turn_item(turn)


class _LoopThread:
    """A private event loop on a daemon thread: lets sync code call async code from anywhere."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="jiyi-sync", daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)


def _settle_at_exit(memory_ref: weakref.ref[Memory]) -> None:
    """A script written for mem0 never closes its Memory (mem0's has no close()), so the process would end while
    the messages of its last adds were still being embedded as evidence, leaving them unsearchable until a worker
    took the turns up. This runs among threading's exit hooks, which run in reverse order of registration: before
    concurrent.futures' own (registered at its import, above), which refuses new work to every executor."""
    memory = memory_ref()
    if memory is None or memory.closed:
        return
    try:
        memory._loop.run(asyncio.wait_for(memory.aio.settle(), EXIT_SETTLE_SECONDS))
    except Exception as exc:  # the turns stay leased: a worker (or the next process_pending) finishes them
        log.warning("at exit, the last adds' evidence was not finished (%s: %s)", type(exc).__name__, exc)


def _register_exit_hook(memory: Memory) -> None:
    register = getattr(threading, "_register_atexit", atexit.register)
    with contextlib.suppress(RuntimeError):  # the interpreter is already shutting down
        register(_settle_at_exit, weakref.ref(memory))


class Memory:
    """Synchronous jiyi memory with mem0's method names. Each method is the AsyncMemory method of the same name.

    Closing it (or a `with` block) waits for the work its calls left running; one that is never closed does that
    when the interpreter exits."""

    def __init__(self, store: MemoryStore | None = None, embedder: Embedder | None = None, *,
                 llm: LLM | None = None, reranker: Reranker | None = None, config: dict[str, Any] | None = None,
                 _async: AsyncMemory | None = None) -> None:
        if _async is None:
            if store is None or embedder is None:
                _async = AsyncMemory.from_config(config or {})
            else:
                _async = AsyncMemory(store, embedder, llm=llm, reranker=reranker, config=config)
        self.aio = _async
        self._loop = _LoopThread()
        self.closed = False
        _register_exit_hook(self)

    @classmethod
    def from_config(cls, config: dict[str, Any] | None = None) -> Memory:
        return cls(_async=AsyncMemory.from_config(config or {}))

    @property
    def store(self) -> MemoryStore:
        return self.aio.store

    @property
    def embedder(self) -> Embedder:
        return self.aio.embedder

    def add(self, messages: Any, **kwargs: Any) -> dict[str, Any]:
        return self._loop.run(self.aio.add(messages, **kwargs))

    def search(self, query: str, **kwargs: Any) -> dict[str, Any]:
        return self._loop.run(self.aio.search(query, **kwargs))

    def context(self, messages: Any, **kwargs: Any) -> dict[str, Any]:
        return self._loop.run(self.aio.context(messages, **kwargs))

    def get_event(self, event_id: str) -> dict[str, Any]:
        return self._loop.run(self.aio.get_event(event_id))

    def process_pending(self, limit: int = 16) -> int:
        return self._loop.run(self.aio.process_pending(limit))

    def settle(self) -> None:
        self._loop.run(self.aio.settle())

    def maintain(self, **kwargs: Any) -> dict[str, Any]:
        return self._loop.run(self.aio.maintain(**kwargs))

    def get(self, memory_id: str) -> dict[str, Any]:
        return self._loop.run(self.aio.get(memory_id))

    def get_all(self, **kwargs: Any) -> dict[str, Any]:
        return self._loop.run(self.aio.get_all(**kwargs))

    def update(self, memory_id: str, data: str | None = None, **kwargs: Any) -> dict[str, str]:
        return self._loop.run(self.aio.update(memory_id, data, **kwargs))

    def delete(self, memory_id: str, **kwargs: Any) -> dict[str, str]:
        return self._loop.run(self.aio.delete(memory_id, **kwargs))

    def delete_all(self, **kwargs: Any) -> dict[str, str]:
        return self._loop.run(self.aio.delete_all(**kwargs))

    def delete_entity(self, kind: str, name: str, *, user_id: str | None = None,
                      agent_id: str | None = None) -> dict[str, Any]:
        return self._loop.run(self.aio.delete_entity(kind, name, user_id=user_id, agent_id=agent_id))

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        return self._loop.run(self.aio.history(memory_id))

    def reset(self) -> dict[str, str]:
        return self._loop.run(self.aio.reset())

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._loop.run(self.aio.close())
        self._loop.stop()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
